"""The charts of a case page: which series go on which chart, in which section, read back bounded.

``timeline_charts(case)`` answers the page's timeline JSON (contract in static/js/lib/charts.js);
``start``/``end`` narrow it to a zoomed range, re-read in detail, and ``chart_ids`` to the charts the
page has open. Series come from ``Series`` rows (analyzer/series.py names them); each chart is a
``ChartDef`` whose series are exact names or every name under a prefix.

Bounded whatever the capture length: a line chart sends at most ``max_points`` instants (default
``MAX_POINTS``), chosen by MinMaxLTTB (tsdownsample) on each of its series so that every series keeps
its own peaks, and all its series share those instants (one ``t`` array per chart); a heatmap sends at
most ``MAX_COLUMNS`` time columns, each the largest value of its time bucket.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from tsdownsample import MinMaxLTTBDownsampler

from web.models import Case, Finding
from web.timeline import levels, services
from web.timeline.series import series_arrays, stored_names

#: Version of the timeline JSON; an overview stored at ingest in an older shape is rebuilt on read.
VERSION = 2
#: Instants per line chart: the width of a wide chart in pixels, bounded whatever the capture length
#: (a 24-hour capture at 1 s has 86,400 samples per series).
MAX_POINTS = 2000
#: Instants per line chart in the overview stored at ingest (the first paint): the whole page's
#: JSON stays under 1 MB for a 24-hour capture; zooming fetches MAX_POINTS for the range shown.
OVERVIEW_POINTS = 800
#: Time columns per heatmap: one per 4-5 px of a laptop-wide chart.
MAX_COLUMNS = 240
#: Fewest points MinMaxLTTB picks per series of a chart with many series.
MIN_POINTS_PER_SERIES = 100
#: Significant digits sent per value: what a reader can see on a chart, and JSON a third the size.
SIGNIFICANT_DIGITS = 4

#: The page's collapsible sections, in order (DESIGN.md, "Case page"; issue 12).
SECTIONS = (
    ("cpu", "CPU"),
    ("memory", "Memory"),
    ("disk", "Disk"),
    ("interrupts", "Network and interrupts"),
    ("threads", "Threads"),
    ("mysql", "MySQL"),
)


@dataclass(frozen=True, slots=True)
class ChartDef:
    """One chart: ``series`` are exact names with labels, ``prefix`` takes every series under it.

    ``kind`` is ``line`` or ``heatmap`` (one row per series under ``prefix``, time across; with
    ``also``, a second prefix whose series are combined with the first by the element-wise maximum,
    e.g. r_await and w_await into await).
    """

    id: str
    section: str
    title: str
    unit: str
    stacked: bool = False
    series: tuple[tuple[str, str], ...] = ()
    prefix: str = ""
    ncpu_line: bool = False
    scale: float = 1.0  # stored unit -> charted unit (KiB -> GiB, bytes/s -> MB/s)
    kind: str = "line"
    also: str = ""


CHARTS = (
    ChartDef(
        "cpu",
        "cpu",
        "CPU (vmstat)",
        "%",
        True,
        tuple((f"vmstat.{c}", c) for c in ("us", "sy", "wa", "st", "id")),
    ),
    ChartDef(
        "runqueue",
        "cpu",
        "Run queue r and blocked b vs CPUs (vmstat)",
        "threads",
        series=(("vmstat.r", "r"), ("vmstat.b", "b")),
        ncpu_line=True,
    ),
    ChartDef("heat-cpu", "cpu", "Busy % per CPU (mpstat)", "%", prefix="mpstat.cpu_busy:", kind="heatmap"),
    ChartDef(
        "cpus", "cpu", "Per-CPU busy: max, median and the busiest CPUs (mpstat)", "%", prefix="mpstat.busy:"
    ),
    ChartDef(
        "memory",
        "memory",
        "Memory (vmstat)",
        "GiB",
        series=(
            ("vmstat.free_kib", "free"),
            ("vmstat.cache_kib", "cache"),
            ("vmstat.buff_kib", "buff"),
            ("vmstat.swpd_kib", "swpd"),
        ),
        scale=1 / 1024**2,
    ),
    ChartDef(
        "swap",
        "memory",
        "Swap in/out si, so (vmstat)",
        "KiB/s",
        series=(("vmstat.si", "si"), ("vmstat.so", "so")),
    ),
    ChartDef(
        "heat-disk-util", "disk", "%util per device (iostat)", "%", prefix="iostat.util_pct:", kind="heatmap"
    ),
    ChartDef(
        "heat-disk-await",
        "disk",
        "Latency per device: the larger of r_await and w_await (iostat)",
        "ms",
        prefix="iostat.r_await:",
        also="iostat.w_await:",
        kind="heatmap",
    ),
    ChartDef(
        "disk-throughput-r",
        "disk",
        "Disk reads by device (iostat)",
        "MB/s",
        prefix="iostat.r_bytes_per_s:",
        scale=1e-6,
    ),
    ChartDef(
        "disk-throughput-w",
        "disk",
        "Disk writes by device (iostat)",
        "MB/s",
        prefix="iostat.w_bytes_per_s:",
        scale=1e-6,
    ),
    ChartDef(
        "disk-r-await", "disk", "Read latency r_await by device (iostat)", "ms", prefix="iostat.r_await:"
    ),
    ChartDef(
        "disk-w-await", "disk", "Write latency w_await by device (iostat)", "ms", prefix="iostat.w_await:"
    ),
    ChartDef(
        "disk-queue", "disk", "Queue size aqu-sz by device (iostat)", "requests", prefix="iostat.aqu_sz:"
    ),
    ChartDef(
        "system",
        "interrupts",
        "Interrupts and context switches per second (vmstat)",
        "/s",
        series=(("vmstat.in", "in"), ("vmstat.cs", "cs")),
    ),
    ChartDef(
        "heat-intr",
        "interrupts",
        "Interrupts per second per CPU (mpstat -I SUM)",
        "/s",
        prefix="mpstat.cpu_intr:",
        kind="heatmap",
    ),
    ChartDef(
        "intr", "interrupts", "Interrupts per second by CPU (mpstat -I SUM)", "/s", prefix="mpstat.intr:"
    ),
    ChartDef(
        "irq",
        "interrupts",
        "Top interrupt lines, all CPUs (/proc/interrupts)",
        "/s",
        prefix="interrupts.irq:",
    ),
    ChartDef(
        "threads",
        "threads",
        "Threads by state (ps)",
        "threads",
        True,
        prefix="threads.state:",
        ncpu_line=True,
    ),
    ChartDef(
        "wchan",
        "threads",
        "Threads in D state by wait channel (ps wchan)",
        "threads",
        True,
        prefix="threads.wchan:",
    ),
    ChartDef(
        "processlist",
        "mysql",
        "Active sessions by State (processlist)",
        "sessions",
        True,
        prefix="processlist.state:",
        ncpu_line=True,
    ),
    ChartDef(
        "fingerprints",
        "mysql",
        "Active sessions by query fingerprint (processlist)",
        "sessions",
        True,
        prefix="processlist.fingerprint:",
    ),
    ChartDef(
        "threads-running",
        "mysql",
        "Threads_running and Threads_connected (status)",
        "threads",
        prefix="mysqladmin.gauge:",
        ncpu_line=True,
    ),
    ChartDef(
        "status-rates", "mysql", "Status counters per second (mysqladmin)", "/s", prefix="mysqladmin.rate:"
    ),
    ChartDef(
        "innodb-history",
        "mysql",
        "InnoDB history list length (SHOW ENGINE INNODB STATUS)",
        "undo records",
        series=(("innodb.history_list_length", "history list length"),),
    ),
    ChartDef(
        "innodb-rates",
        "mysql",
        "InnoDB rows read and changed per second (between monitor outputs)",
        "rows/s",
        series=(("innodb.rows_read_per_s", "rows read"), ("innodb.rows_changed_per_s", "rows changed")),
    ),
    ChartDef(
        "innodb-log",
        "mysql",
        "Redo written per second (between monitor outputs)",
        "MB/s",
        series=(("innodb.log_bytes_per_s", "log bytes"),),
        scale=1e-6,
    ),
    ChartDef("netstat", "interrupts", "TCP counters per second (netstat -s)", "/s", prefix="netstat_s.rate:"),
    ChartDef(
        "vmstat-reclaim",
        "memory",
        "Reclaim and paging per second (/proc/vmstat)",
        "/s",
        prefix="procvmstat.rate:",
    ),
)
#: The IRQ x CPU heatmap: built at ingest from the interrupts frame (analyzer.series.irq_cpu_rates)
#: and kept in the stored overview; it averages the whole capture, so a zoom does not change it.
IRQ_CPU_CHART = (
    "heat-irq-cpu",
    "interrupts",
    "Interrupts per second by IRQ line and CPU, capture mean (/proc/interrupts)",
)

#: Evidence series (``<frame>.<column>``) -> the charts that show them, for each finding's own charts.
_EVIDENCE_CHARTS = {
    "vmstat.us": ("cpu",),
    "vmstat.sy": ("cpu",),
    "vmstat.id": ("cpu",),
    "vmstat.wa": ("cpu",),
    "vmstat.st": ("cpu",),
    "vmstat.r": ("runqueue",),
    "vmstat.b": ("runqueue",),
    "vmstat.in": ("system",),
    "vmstat.cs": ("system",),
    "vmstat.si": ("swap",),
    "vmstat.so": ("swap",),
    "vmstat.free_kib": ("memory",),
    "vmstat.swpd_kib": ("memory",),
    "vmstat.cache_kib": ("memory",),
    "mpstat_cpu": ("heat-cpu", "cpus"),
    "mpstat_intr": ("heat-intr", "intr"),
    "interrupts": ("irq", "heat-irq-cpu"),
    "iostat": ("heat-disk-util", "heat-disk-await", "disk-queue"),
    "innodb_status.history_list_length": ("innodb-history",),
    "innodb_rates.history_growth_per_s": ("innodb-history",),
    "innodb_rates.log_bytes_per_s": ("innodb-log",),
    "netstat_s": ("netstat",),
    "procvmstat": ("vmstat-reclaim",),
    "ps_threads": ("threads", "wchan"),
    "pfs_threads": ("wchan",),
    "processlist.state": ("processlist",),
    "processlist.active": ("processlist",),
    "processlist.time_s": ("processlist",),
    "processlist.fingerprint": ("fingerprints",),
    "mysqladmin.Threads_running": ("threads-running",),
    "mysqladmin": ("status-rates",),
}
#: Longest series label on a chart legend (query fingerprints can be kilobytes long).
MAX_LABEL = 80
#: Charts drawn inside one finding's card: the first few its evidence points at.
MAX_FINDING_CHARTS = 3


def chart_ids_for_evidence(series_names: list[str]) -> list[str]:
    """The ids of the charts that show a finding's evidence series, in ``CHARTS`` order.

    >>> chart_ids_for_evidence(["vmstat.r", "processlist.state", "mysqladmin.Created_tmp_disk_tables"])
    ['runqueue', 'processlist', 'status-rates']
    """
    wanted: set[str] = set()
    for name in series_names:
        for key in (name, name.split(".")[0]):
            if key in _EVIDENCE_CHARTS:
                wanted.update(_EVIDENCE_CHARTS[key])
                break
    order = [c.id for c in CHARTS] + [IRQ_CPU_CHART[0]]
    return [c for c in order if c in wanted][:MAX_FINDING_CHARTS]


def _slice(
    arrays: dict[str, tuple[np.ndarray, np.ndarray]], lo_us: int | None, hi_us: int | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for name, (ts, values) in arrays.items():
        a = int(np.searchsorted(ts, lo_us, side="left")) if lo_us is not None else 0
        b = int(np.searchsorted(ts, hi_us, side="right")) if hi_us is not None else len(ts)
        if b > a:
            out[name] = (ts[a:b], values[a:b])
    return out


def _read(
    case: Case, prefixes: list[str], exact: list[str], lo: int | None, hi: int | None, max_points: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The series ``exact`` or under ``prefixes`` between ``lo`` and ``hi`` (µs, None = open), from the levels of
    detail (web/timeline/levels.py: the finest with at most twice ``max_points`` points in the range, only
    those bytes read); a case ingested before they existed gets them written first."""
    names = stored_names(case, prefixes, exact)
    if not names and services.series_levels_ensure(case=case):
        names = stored_names(case, prefixes, exact)
    return levels.read_range(case.pk, names, lo, hi, 2 * max_points)


# ------------------------------------------------------------------------------------- downsampling
def round_values(values: np.ndarray) -> list[float | None]:
    """Values to ``SIGNIFICANT_DIGITS`` digits of the series' largest magnitude; NaN -> None."""
    finite = np.isfinite(values)
    magnitudes = np.abs(values[finite])
    top = float(magnitudes.max()) if magnitudes.size else 0.0
    decimals = int(max(0, SIGNIFICANT_DIGITS - 1 - np.floor(np.log10(top)))) if top > 0 else 0
    rounded = np.round(np.where(finite, values, 0.0), min(decimals, 6))
    out = rounded.astype("int64").tolist() if decimals == 0 else rounded.tolist()
    for i in np.flatnonzero(~finite).tolist():
        out[i] = None
    return out


def _aligned(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Series of one chart on the union of their instants (NaN where one has no sample then)."""
    t = (
        parts[0][0]
        if all(len(p[0]) == len(parts[0][0]) and (p[0] == parts[0][0]).all() for p in parts)
        else None
    )
    if t is None:
        t = np.unique(np.concatenate([p[0] for p in parts]))
    columns = []
    for ts, values in parts:
        if len(ts) == len(t) and (ts == t).all():
            columns.append(values)
            continue
        col = np.full(len(t), np.nan)
        col[np.searchsorted(t, ts)] = values
        columns.append(col)
    return t, columns


def pick_points(t: np.ndarray, columns: list[np.ndarray], max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` instants that keep each series' shape and peaks: the union
    of MinMaxLTTB's picks on every series, each given an equal share (at least
    ``MIN_POINTS_PER_SERIES``); a union larger than ``max_points`` is thinned evenly over time, so
    that the chart still reaches both ends of the capture."""
    if len(t) <= max_points:
        return np.arange(len(t))
    share = max(MIN_POINTS_PER_SERIES, max_points // max(1, len(columns)))
    share -= share % 2  # MinMaxLTTB works on pairs
    x = np.ascontiguousarray(t, dtype="float64")
    picked = set()
    for col in columns:
        idx = MinMaxLTTBDownsampler().downsample(x, np.ascontiguousarray(np.nan_to_num(col)), n_out=share)
        picked.update(int(i) for i in idx)
        if len(picked) >= max_points:
            break
    chosen = np.array(sorted(picked), dtype="int64")
    if len(chosen) > max_points:  # steps of more than one: no index is taken twice
        chosen = chosen[np.linspace(0, len(chosen) - 1, max_points).round().astype("int64")]
    return chosen


def _heat_columns(
    t: np.ndarray, columns: list[np.ndarray], lo_ms: float, hi_ms: float
) -> tuple[float, float, np.ndarray]:
    """Rows bucketed into at most ``MAX_COLUMNS`` equal time columns over [lo_ms, hi_ms], each cell
    the largest value of its bucket (a short spike stays visible); NaN where a bucket has no sample.
    Returns (first column's start ms, column width ms, grid rows x columns)."""
    t_ms = t / 1000.0
    span = max(hi_ms - lo_ms, 1.0)
    step = float(np.median(np.diff(t_ms))) if len(t_ms) > 1 else span
    ncol = int(min(MAX_COLUMNS, max(1, round(span / max(step, 1.0)))))
    width = span / ncol
    bucket = np.clip(((t_ms - lo_ms) / width).astype("int64"), 0, ncol - 1)  # ascending: t is sorted
    starts = np.flatnonzero(np.diff(bucket, prepend=-1))
    stacked = np.vstack(columns)
    peaks = np.maximum.reduceat(np.where(np.isnan(stacked), -np.inf, stacked), starts, axis=1)
    grid = np.full((len(columns), ncol), np.nan)
    grid[:, bucket[starts]] = np.where(np.isneginf(peaks), np.nan, peaks)
    return lo_ms, width, grid


def _label(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _natural(name: str) -> tuple:
    """Sort key putting ``cpu2`` before ``cpu10``."""
    tail = name.rsplit(":", 1)[-1]
    return (0, int(tail), "") if tail.isdigit() else (1, 0, tail)


# ----------------------------------------------------------------------------------------- building
def _line_chart(chart: ChartDef, data: dict, hline: list, max_points: int) -> dict[str, object] | None:
    if chart.prefix:
        names = sorted((n for n in data if n.startswith(chart.prefix)), key=lambda n: -np.nansum(data[n][1]))
        pairs = [(n, n[len(chart.prefix) :]) for n in names]
    else:
        pairs = [(n, label) for n, label in chart.series if n in data]
    if not pairs:
        return None
    t, columns = _aligned([data[n] for n, _ in pairs])
    if not any(np.isfinite(col).any() for col in columns):
        return None  # nothing to draw (e.g. a rate between monitor outputs of a capture with one)
    idx = pick_points(t, columns, max_points)
    return {
        **_common(chart),
        "t": (t[idx] // 1000).tolist(),
        "series": [
            {"label": _label(label), "v": round_values(col[idx] * chart.scale)}
            for (_, label), col in zip(pairs, columns, strict=True)
        ],
        "hlines": hline if chart.ncpu_line else [],
    }


def _heatmap(
    chart: ChartDef, data: dict, lo_ms: float | None, hi_ms: float | None
) -> dict[str, object] | None:
    names = sorted((n for n in data if n.startswith(chart.prefix)), key=_natural)
    if not names:
        return None
    t, columns = _aligned([data[n] for n in names])
    if chart.also:
        for i, name in enumerate(names):
            other = data.get(chart.also + name[len(chart.prefix) :])
            if other is not None:
                pos = np.searchsorted(t, other[0])
                ok = (pos < len(t)) & (t[np.minimum(pos, len(t) - 1)] == other[0])
                col = columns[i].copy()
                col[pos[ok]] = np.fmax(col[pos[ok]], other[1][ok])
                columns[i] = col
    lo = lo_ms if lo_ms is not None else t[0] / 1000.0
    hi = hi_ms if hi_ms is not None else t[-1] / 1000.0
    x0, width, grid = _heat_columns(t, columns, lo, hi)
    finite = grid[np.isfinite(grid)]
    return {
        **_common(chart),
        "rows": [_label(n[len(chart.prefix) :]) for n in names],
        "x0": round(x0),
        "dx": round(width, 1),
        "v": [round_values(row) for row in grid],
        "max": float(finite.max()) if finite.size else 0.0,
    }


def _common(chart: ChartDef) -> dict[str, object]:
    return {
        "id": chart.id,
        "section": chart.section,
        "title": chart.title,
        "unit": chart.unit,
        "stacked": chart.stacked,
        "kind": chart.kind,
    }


def irq_cpu_chart(rates: pd.DataFrame) -> dict[str, object] | None:
    """The IRQ x CPU heatmap spec from ``analyzer.series.irq_cpu_rates`` (rows: IRQ lines, columns:
    CPUs, mean interrupts per second); None when empty."""
    if rates is None or rates.empty:
        return None
    chart_id, section, title = IRQ_CPU_CHART
    values = rates.to_numpy(dtype="float64")
    return {
        "id": chart_id,
        "section": section,
        "title": title,
        "unit": "/s",
        "stacked": False,
        "kind": "grid",
        "rows": [_label(str(r)) for r in rates.index],
        "cols": [str(c) for c in rates.columns],
        "v": [round_values(row) for row in values],
        "max": float(values.max()) if values.size else 0.0,
    }


def timeline_charts(
    *,
    case: Case,
    start: datetime | None = None,
    end: datetime | None = None,
    max_points: int = MAX_POINTS,
    chart_ids: list[str] | None = None,
    extra: list[dict[str, object]] | None = None,
) -> dict[str, object]:
    """The timeline JSON of the case page (contract: static/js/lib/charts.js).

    ``start``/``end`` (aware datetimes) narrow it to a range read in detail; ``chart_ids`` to those
    charts (unknown ids are ignored); ``max_points`` bounds each line chart's instants; ``extra``
    are chart specs computed elsewhere (the IRQ x CPU heatmap at ingest), placed in their section.
    """
    wanted = [c for c in CHARTS if chart_ids is None or c.id in chart_ids]
    prefixes = sorted({p for c in wanted for p in (c.prefix, c.also) if p})
    names = sorted({n for c in wanted for n, _ in c.series})
    lo = int(start.timestamp() * 1e6) if start else None
    hi = int(end.timestamp() * 1e6) if end else None
    data = _read(case, prefixes, names, lo, hi, max_points) if wanted else {}
    hline = [{"label": f"ncpu = {case.ncpu}", "value": case.ncpu}] if case.ncpu else []
    lo_ms = lo / 1000.0 if lo is not None else None
    hi_ms = hi / 1000.0 if hi is not None else None
    charts: list[dict[str, object]] = []
    for chart in wanted:
        spec = (
            _heatmap(chart, data, lo_ms, hi_ms)
            if chart.kind == "heatmap"
            else _line_chart(chart, data, hline, max_points)
        )
        if spec:
            charts.append(spec)
    for spec in extra or []:
        after = max(
            (i for i, c in enumerate(charts) if c["section"] == spec["section"]), default=len(charts) - 1
        )
        charts.insert(after + 1, spec)
    windows = [
        {"key": f.key, "severity": f.severity, "title": f.title, "start_ms": _ms(a), "end_ms": _ms(b)}
        for f in Finding.objects.filter(case=case).order_by("position")
        for a, b in f.windows
    ]
    extent = [_ms_dt(case.window_start), _ms_dt(case.window_end)]
    return {
        "version": VERSION,
        "utc_offset_s": case.utc_offset_s,
        "ncpu": case.ncpu,
        "extent": extent if None not in extent else None,
        "range": [lo_ms, hi_ms] if lo is not None or hi is not None else None,
        "sections": [{"id": sid, "title": title} for sid, title in SECTIONS],
        "charts": charts,
        "windows": windows,
    }


def _ms(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000.0


def series_listing(
    *,
    case: Case,
    names: list[str] | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    max_points: int = MAX_POINTS,
) -> list[dict[str, object]]:
    """The case's stored series for the API, by name: ``{"name", "points" (stored, whole capture),
    "first", "last" (ISO UTC or None)}``; with ``names`` each also has ``data``: ``[epoch ms, value]``
    within ``[start, end]``, at most ``max_points`` (MinMaxLTTB, peaks kept), null for no value.
    Unknown names are left out."""
    out = []
    for name, (ts, values) in sorted(series_arrays(case=case, names=names).items()):
        row: dict[str, object] = {
            "name": name,
            "points": len(ts),
            "first": _iso_us(ts[0]) if len(ts) else None,
            "last": _iso_us(ts[-1]) if len(ts) else None,
        }
        if names is not None:
            a = int(np.searchsorted(ts, int(start.timestamp() * 1e6), side="left")) if start else 0
            b = int(np.searchsorted(ts, int(end.timestamp() * 1e6), side="right")) if end else len(ts)
            t, v = ts[a:b] // 1000, values[a:b]
            idx = pick_points(t, [v], max_points)
            row["data"] = [list(p) for p in zip(t[idx].tolist(), round_values(v[idx]), strict=True)]
        out.append(row)
    return out


def _iso_us(ts_us: np.int64) -> str:
    return datetime.fromtimestamp(int(ts_us) / 1e6, tz=UTC).isoformat().replace("+00:00", "Z")


def _ms_dt(value: datetime | None) -> float | None:
    return value.timestamp() * 1000.0 if value else None
