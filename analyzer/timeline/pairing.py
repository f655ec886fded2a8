"""Two sources' snapshots paired at the same moment: each time of one source with the nearest time of
the other, within a tolerance that widens with the sparser source's interval.

Every join of two captures of one host reads its moments through here: OS threads beside sessions
(analyzer/evidence/threads.py), a value read at another source's moment (``analyzer.detect.nearest``),
the status counters around a processlist snapshot (the rules' ``join_tolerance``). Inputs are ``ts``
columns of the timeline's frames (UTC); every function is pure.
"""

from __future__ import annotations

import pandas as pd

from analyzer.timeline.windows import median_step_ns

#: Nearest snapshots at most this far apart describe "the same moment" at the least: pt-stalk and the
#: collector start ps, SHOW PROCESSLIST and vmstat in the same second but not at the same instant,
#: and a ps listing of 2,000 threads itself takes a few hundred milliseconds.
MIN_TOLERANCE = pd.Timedelta(seconds=2)
#: With sparser sampling (OSWatcher every 30 s), two sources can be up to half of the longer interval
#: apart at best; a wider gap is another moment.
TOLERANCE_SHARE_OF_INTERVAL = 0.5


def median_interval(ts: pd.Series) -> pd.Timedelta | None:
    """The median time between distinct snapshots in ``ts`` (None with fewer than two)."""
    step = median_step_ns(pd.to_datetime(ts))
    return None if step is None else pd.Timedelta(int(step), unit="ns")


def join_tolerance(*series: pd.Series) -> pd.Timedelta:
    """How far apart two snapshots may be and still be paired: ``MIN_TOLERANCE``, widened to half of
    the sparsest source's median interval."""
    tol = MIN_TOLERANCE
    for ts in series:
        step = median_interval(ts)
        if step is not None:
            tol = max(tol, step * TOLERANCE_SHARE_OF_INTERVAL)
    return tol


def _distinct(ts: pd.Series) -> pd.Series:
    # One resolution for both sides: merge_asof refuses datetime64[us] against datetime64[ns].
    values = pd.Series(pd.to_datetime(ts, utc=True)).astype("datetime64[ns, UTC]")
    return values.drop_duplicates().sort_values().reset_index(drop=True)


def pair_moments(
    left_ts: pd.Series, right_ts: pd.Series, *, tolerance: pd.Timedelta | None = None
) -> pd.DataFrame:
    """Pair every distinct time of ``left_ts`` with the nearest of ``right_ts`` within ``tolerance``.

    Returns columns ``ts`` (each distinct left time, sorted) and ``other_ts`` (the paired right time,
    NaT when none is close enough). Default tolerance: ``join_tolerance(left_ts, right_ts)``.

    >>> t = pd.to_datetime(pd.Series(["2026-01-01 00:00:00", "2026-01-01 00:00:10"]), utc=True)
    >>> u = pd.to_datetime(pd.Series(["2026-01-01 00:00:00.4", "2026-01-01 00:00:30.0"]), utc=True)
    >>> pair_moments(t, u, tolerance=pd.Timedelta(seconds=2))["other_ts"].dt.strftime("%S.%f").fillna("-").tolist()
    ['00.400000', '-']
    """
    if tolerance is None:
        tolerance = join_tolerance(left_ts, right_ts)
    left = pd.DataFrame({"ts": _distinct(left_ts)})
    right_values = _distinct(right_ts)
    if not len(left):
        return pd.DataFrame({"ts": left["ts"], "other_ts": left["ts"]})
    if not len(right_values):
        return left.assign(other_ts=pd.Series(pd.NaT, index=left.index, dtype=left["ts"].dtype))
    right = pd.DataFrame({"key": right_values, "other_ts": right_values})
    out = pd.merge_asof(left, right, left_on="ts", right_on="key", direction="nearest", tolerance=tolerance)
    return out[["ts", "other_ts"]].reset_index(drop=True)
