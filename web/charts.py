"""The charts of a case page: which series go on which chart, read back downsampled.

``timeline_charts(case)`` answers the page's timeline JSON (see templates/cases/detail.html and
static/js/lib/charts.js for the contract); ``start``/``end`` narrow it to a zoomed range, re-read in
detail. Series come from ``Series`` rows (analyzer/series.py names them); each chart is a
``ChartDef`` whose series are an exact name or every name under a prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from tsdownsample import MinMaxLTTBDownsampler

from web.models import Case, Finding, Series

#: Points per series sent to a chart: enough for a 2,000 px wide chart, bounded whatever the capture length.
MAX_POINTS = 2000


@dataclass(frozen=True, slots=True)
class ChartDef:
    """One chart: ``series`` are exact names with labels, ``prefix`` takes every series under it."""

    id: str
    title: str
    unit: str
    stacked: bool = False
    series: tuple[tuple[str, str], ...] = ()
    prefix: str = ""
    ncpu_line: bool = False
    scale: float = 1.0  # stored unit -> charted unit (KiB -> GiB, bytes/s -> MB/s)


CHARTS = (
    ChartDef(
        "cpu", "CPU (vmstat)", "%", True, tuple((f"vmstat.{c}", c) for c in ("us", "sy", "wa", "st", "id"))
    ),
    ChartDef(
        "runqueue",
        "Run queue r and blocked b vs CPUs (vmstat)",
        "threads",
        series=(("vmstat.r", "r"), ("vmstat.b", "b")),
        ncpu_line=True,
    ),
    ChartDef("cpus", "Per-CPU busy: max, median and the busiest CPUs (mpstat)", "%", prefix="mpstat.busy:"),
    ChartDef(
        "system",
        "Interrupts and context switches per second (vmstat)",
        "/s",
        series=(("vmstat.in", "in"), ("vmstat.cs", "cs")),
    ),
    ChartDef("intr", "Interrupts per second by CPU (mpstat -I SUM)", "/s", prefix="mpstat.intr:"),
    ChartDef("irq", "Top interrupt lines, all CPUs (/proc/interrupts)", "/s", prefix="interrupts.irq:"),
    ChartDef(
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
        "swap", "Swap in/out si, so (vmstat)", "KiB/s", series=(("vmstat.si", "si"), ("vmstat.so", "so"))
    ),
    ChartDef(
        "disk-throughput-r",
        "Disk reads by device (iostat)",
        "MB/s",
        prefix="iostat.r_bytes_per_s:",
        scale=1e-6,
    ),
    ChartDef(
        "disk-throughput-w",
        "Disk writes by device (iostat)",
        "MB/s",
        prefix="iostat.w_bytes_per_s:",
        scale=1e-6,
    ),
    ChartDef("disk-r-await", "Read latency r_await by device (iostat)", "ms", prefix="iostat.r_await:"),
    ChartDef("disk-w-await", "Write latency w_await by device (iostat)", "ms", prefix="iostat.w_await:"),
    ChartDef("disk-queue", "Queue size aqu-sz by device (iostat)", "requests", prefix="iostat.aqu_sz:"),
    ChartDef("threads", "Threads by state (ps)", "threads", True, prefix="threads.state:", ncpu_line=True),
    ChartDef(
        "wchan", "Threads in D state by wait channel (ps wchan)", "threads", True, prefix="threads.wchan:"
    ),
    ChartDef(
        "processlist",
        "Active sessions by State (processlist)",
        "sessions",
        True,
        prefix="processlist.state:",
        ncpu_line=True,
    ),
    ChartDef(
        "fingerprints",
        "Active sessions by query fingerprint (processlist)",
        "sessions",
        True,
        prefix="processlist.fingerprint:",
    ),
    ChartDef(
        "threads-running",
        "Threads_running and Threads_connected (status)",
        "threads",
        prefix="mysqladmin.gauge:",
        ncpu_line=True,
    ),
    ChartDef("status-rates", "Status counters per second (mysqladmin)", "/s", prefix="mysqladmin.rate:"),
    ChartDef(
        "innodb-history",
        "InnoDB history list length (SHOW ENGINE INNODB STATUS)",
        "undo records",
        series=(("innodb.history_list_length", "history list length"),),
    ),
    ChartDef(
        "innodb-rates",
        "InnoDB rows read and changed per second (between monitor outputs)",
        "rows/s",
        series=(("innodb.rows_read_per_s", "rows read"), ("innodb.rows_changed_per_s", "rows changed")),
    ),
    ChartDef(
        "innodb-log",
        "Redo written per second (between monitor outputs)",
        "MB/s",
        series=(("innodb.log_bytes_per_s", "log bytes"),),
        scale=1e-6,
    ),
    ChartDef("netstat", "TCP counters per second (netstat -s)", "/s", prefix="netstat_s.rate:"),
    ChartDef(
        "vmstat-reclaim", "Reclaim and paging per second (/proc/vmstat)", "/s", prefix="procvmstat.rate:"
    ),
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
    "mpstat_cpu": ("cpus",),
    "mpstat_intr": ("intr",),
    "interrupts": ("irq",),
    "iostat": ("disk-r-await", "disk-w-await", "disk-queue"),
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
    return [c.id for c in CHARTS if c.id in wanted][:MAX_FINDING_CHARTS]


def series_arrays(*, case: Case, names: list[str] | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The stored series of the case (all, or those ``names``): name -> (times in microseconds since
    the epoch, int64, ascending; values, float64)."""
    rows = Series.objects.filter(case=case, **({"name__in": names} if names is not None else {}))
    return {
        name: (np.asarray(ts_us, dtype="int64"), np.asarray(values, dtype="float64"))
        for name, ts_us, values in rows.values_list("name", "ts_us", "values")
    }


def _read(case: Case, start: datetime | None, end: datetime | None) -> dict[str, np.ndarray]:
    """Every series of the case in ``[start, end]`` as ``{name: array of (epoch ms, value)}``."""
    lo = int(start.timestamp() * 1e6) if start else None
    hi = int(end.timestamp() * 1e6) if end else None
    out: dict[str, np.ndarray] = {}
    for name, (ts, values) in series_arrays(case=case).items():
        a = int(np.searchsorted(ts, lo, side="left")) if lo is not None else 0
        b = int(np.searchsorted(ts, hi, side="right")) if hi is not None else len(ts)
        if b > a:
            out[name] = np.column_stack([ts[a:b] / 1000.0, values[a:b]])
    return out


def _downsample(arr: np.ndarray, max_points: int, scale: float = 1.0) -> list[list[float | None]]:
    """At most ``max_points`` points with MinMaxLTTB (keeps the peaks that a plain stride drops),
    values multiplied by ``scale``."""
    if len(arr) > max_points:
        x = np.ascontiguousarray(arr[:, 0])  # tsdownsample reads contiguous arrays only
        idx = MinMaxLTTBDownsampler().downsample(x, np.nan_to_num(arr[:, 1]), n_out=max_points)
        arr = arr[np.sort(idx)]
    out = np.column_stack([arr[:, 0], arr[:, 1] * scale]).tolist()
    if np.isnan(arr[:, 1]).any():  # JSON has no NaN: a missing value is null
        out = [[t, None if v != v else v] for t, v in out]
    return out


def _label(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def timeline_charts(
    *, case: Case, start: datetime | None = None, end: datetime | None = None, max_points: int = MAX_POINTS
) -> dict[str, object]:
    """The chart specs of the case page, each series downsampled to ``max_points``."""
    data = _read(case, start, end)
    charts: list[dict[str, object]] = []
    hline = [{"label": f"ncpu = {case.ncpu}", "value": case.ncpu}] if case.ncpu else []
    for chart in CHARTS:
        if chart.prefix:
            names = sorted(
                (n for n in data if n.startswith(chart.prefix)), key=lambda n: -np.nansum(data[n][:, 1])
            )
            pairs = [(n, n[len(chart.prefix) :]) for n in names]
        else:
            pairs = [(n, label) for n, label in chart.series if n in data]
        if not pairs:
            continue
        charts.append(
            {
                "id": chart.id,
                "title": chart.title,
                "unit": chart.unit,
                "stacked": chart.stacked,
                "kind": "line",
                "series": [
                    {"label": _label(label), "data": _downsample(data[n], max_points, chart.scale)}
                    for n, label in pairs
                ],
                "hlines": hline if chart.ncpu_line else [],
            }
        )
    windows = [
        {"key": f.key, "severity": f.severity, "start_ms": _ms(a), "end_ms": _ms(b)}
        for f in Finding.objects.filter(case=case).order_by("position")
        for a, b in f.windows
    ]
    return {"utc_offset_s": case.utc_offset_s, "ncpu": case.ncpu, "charts": charts, "windows": windows}


def _ms(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000.0
