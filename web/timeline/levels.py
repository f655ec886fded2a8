"""Series at several levels of detail, read by time range in bounded time (``SeriesLevel``).

A 24-hour capture at 1 s holds 86,400 samples per series and a case a few hundred series: reading
them whole for every zoom costs seconds. The ingest writes each series at level 0 (every sample)
and at coarser levels (``min_max_level``: per run of ``LEVEL_FACTOR ** k`` samples, the smallest
and the largest value at their own times) until a level has at most ``COARSEST_POINTS`` points.
``read_range`` picks, per series, the finest level with at most ``max_points_in_range`` points in
the range asked and reads only the bytes of that range.
"""

from __future__ import annotations

import numpy as np
from django.db import connection

from web.models import SeriesLevel

#: Samples per bucket grow by this factor from one level to the next.
LEVEL_FACTOR = 8
#: The coarsest level written has at most this many points (an overview needs about 1,000).
COARSEST_POINTS = 4_000
#: Extra points read on each side of the estimated range, as a fraction of the level's points
#: (sampling is regular in practice; a gap moves the estimate, and a short read is read again whole).
MARGIN_FRACTION = 0.02
MARGIN_POINTS = 16


def min_max_level(ts: np.ndarray, values: np.ndarray, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """Downsample ``(ts, values)`` (int64 µs ascending, float64) to two points per run of ``bucket``
    samples: at the run's first and last time, its smallest and largest value in the order they
    occurred (min/max: the peaks survive). The times depend only on the run, so that the series of
    one source (sampled together) keep shared times at every level. A run of one sample gives one
    point; a run without a value gives NaN.

    >>> t, v = min_max_level(np.arange(10), np.array([3.0, 1, 2, 9, 5, 5, np.nan, 4, 7, 7]), 4)
    >>> t.tolist(), v.tolist()
    ([0, 3, 4, 7, 8, 9], [1.0, 9.0, 5.0, 4.0, 7.0, 7.0])
    """
    n = len(ts)
    runs = -(-n // bucket)
    v = np.concatenate([values, np.full(runs * bucket - n, np.nan)]).reshape(runs, bucket)
    empty = np.isnan(v).all(axis=1)
    lo = np.where(empty, 0, np.argmin(np.where(np.isnan(v), np.inf, v), axis=1))
    hi = np.where(empty, 0, np.argmax(np.where(np.isnan(v), -np.inf, v), axis=1))
    base = np.arange(runs) * bucket
    last = np.minimum(base + bucket - 1, n - 1)
    first_v = np.where(empty, np.nan, v[np.arange(runs), np.minimum(lo, hi)])
    second_v = np.where(empty, np.nan, v[np.arange(runs), np.maximum(lo, hi)])
    t = np.column_stack([ts[base], ts[last]]).ravel()
    out = np.column_stack([first_v, second_v]).ravel()
    keep = np.ones(len(t), dtype=bool)
    keep[1::2] = last > base  # a run of one sample: one point
    return t[keep], out[keep]


def levels_of(ts: np.ndarray, values: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Every level written for one series: ``[(0, ts, values), (1, ...), ...]`` until one has at most
    ``COARSEST_POINTS`` points."""
    out = [(0, ts, values)]
    level, bucket = 0, 1
    while len(out[-1][1]) > COARSEST_POINTS:
        level += 1
        bucket *= LEVEL_FACTOR
        out.append((level, *min_max_level(ts, values, bucket)))
    return out


def finest_within(
    levels: list[tuple[int, np.ndarray, np.ndarray]], max_points: int
) -> tuple[int, np.ndarray, np.ndarray]:
    """Of one series' ``levels`` (``levels_of``), the one ``read_range`` reads for the whole capture:
    the finest with at most ``max_points`` points, else the coarsest.

    >>> ts = np.arange(10_000)
    >>> [level for level, _, _ in levels_of(ts, ts * 1.0)], finest_within(levels_of(ts, ts * 1.0), 5000)[0]
    ([0, 1], 1)
    """
    return next((one for one in levels if len(one[1]) <= max_points), levels[-1])


def read_range(
    case_id: int,
    names: list[str],
    lo_us: int | None,
    hi_us: int | None,
    max_points_in_range: int,
    host: str | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The series ``names`` of the case between ``lo_us`` and ``hi_us`` (µs since the epoch, None =
    open), each at the finest level with at most ``max_points_in_range`` points in the range:
    name -> (ts int64 µs, values float64), ascending. Series without points in the range are left out.

    ``host`` (a ``Host.name``) reads that host's series; None reads the series whatever their host,
    which is right only for a case of one host (two hosts' series of one name would overwrite)."""
    rows = SeriesLevel.objects.filter(case_id=case_id, name__in=names)
    if host is not None:
        rows = rows.filter(host=host)
    meta = rows.values_list("name", "level", "n", "t_first_us", "t_last_us").order_by("name", "level")
    plan: dict[str, tuple[int, int, int, int]] = {}  # name -> (level, first index, count, n)
    for name, level, n, first, last in meta:
        if name in plan and plan[name][0] < level and plan[name][2] <= max_points_in_range:
            continue  # a finer level already fits
        span = max(last - first, 1)
        a = 0 if lo_us is None else int((lo_us - first) / span * (n - 1))
        b = n - 1 if hi_us is None else int(np.ceil((hi_us - first) / span * (n - 1)))
        margin = int(n * MARGIN_FRACTION) + MARGIN_POINTS
        a, b = max(0, a - margin), min(n - 1, b + margin)
        if b < a:
            continue
        plan[name] = (level, a, b - a + 1, n)
    out = _fetch(case_id, plan, host)
    short = {
        name: (level, 0, n, n)
        for name, (level, a, count, n) in plan.items()
        if name in out
        and (
            (lo_us is not None and a > 0 and out[name][0][0] > lo_us)
            or (hi_us is not None and a + count < n and out[name][0][-1] < hi_us)
        )
    }
    if short:  # irregular sampling moved the estimate: read those whole
        out.update(_fetch(case_id, short, host))
    result = {}
    for name, (ts, values) in out.items():
        i = int(np.searchsorted(ts, lo_us, side="left")) if lo_us is not None else 0
        j = int(np.searchsorted(ts, hi_us, side="right")) if hi_us is not None else len(ts)
        if j > i:
            result[name] = (ts[i:j], values[i:j])
    return result


def _fetch(
    case_id: int, plan: dict[str, tuple[int, int, int, int]], host: str | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Bytes ``[first, first + count)`` (in points) of each planned series (of ``host``, or of any
    host when None), in one query."""
    if not plan:
        return {}
    rows = [(name, level, a * 8 + 1, count * 8) for name, (level, a, count, _n) in plan.items()]
    placeholders = ", ".join(["(%s, %s, %s, %s)"] * len(rows))
    params: list[object] = [v for row in rows for v in row]
    table = SeriesLevel._meta.db_table
    sql = (
        f"SELECT s.name, substring(s.ts from w.pos for w.len), substring(s.values from w.pos for w.len) "
        f"FROM {table} s JOIN (VALUES {placeholders}) AS w(name, level, pos, len) "
        "ON s.name = w.name AND s.level = w.level WHERE s.case_id = %s"
        + (" AND s.host = %s" if host is not None else "")
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, case_id, *([host] if host is not None else [])])
        fetched = cursor.fetchall()
    return {
        name: (np.frombuffer(bytes(ts), dtype="<i8"), np.frombuffer(bytes(values), dtype="<f8"))
        for name, ts, values in fetched
    }
