"""Which charts a case page has: their sections, series, units and kinds (``CHARTS``), and which
charts show a finding's evidence series. Definitions only; web/timeline/charts.py reads and draws them.

Every name here is checked when the module is imported (``check_declarations``): a chart's series
against the series ``analyzer.timeline.series`` writes (``SERIES``), an evidence key against the
frames of analyzer/timeline/frames.py; a typo raises ``DeclarationError`` at import."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.timeline.frames import DeclarationError, series_problem, unknown
from analyzer.timeline.series import SERIES, is_series

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
#: The IRQ x CPU heatmap: built at ingest from the interrupts frame (analyzer.timeline.series.irq_cpu_rates)
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


def check_declarations(
    charts: tuple[ChartDef, ...] = CHARTS, evidence: dict[str, tuple[str, ...]] = _EVIDENCE_CHARTS
) -> None:
    """Check ``charts`` and ``evidence`` against the registries, when this module is imported: a
    chart's series names (``analyzer.timeline.series.SERIES``), its ``prefix`` and ``also`` (a
    family of ``SERIES``, or the start of one); an evidence key as an evidence series is
    (``analyzer.timeline.frames.series_problem``: a frame, one of its columns or, on a long frame of
    named rows, any name), and the charts it names (ids of ``charts`` or the IRQ x CPU heatmap). Raises ``DeclarationError``: a
    mistyped name fails here, not as an empty chart."""
    for chart in charts:
        where = f"web/timeline/chartdefs.py, chart {chart.id!r}"
        unknown(
            [n for n, _ in chart.series if not is_series(n)], SERIES, what="a series of SERIES", where=where
        )
        prefixes = [p for p in (chart.prefix, chart.also) if p]
        bad = [
            p
            for p in prefixes
            if not any(s.startswith(p) or (s[-1] == ":" and p.startswith(s)) for s in SERIES)
        ]
        unknown(bad, SERIES, what="the prefix of a series of SERIES", where=where)
    ids = [c.id for c in charts] + [IRQ_CPU_CHART[0]]
    for key, chart_ids in evidence.items():
        where = f"web/timeline/chartdefs.py, evidence chart key {key!r}"
        problem = series_problem(key)
        if problem:
            raise DeclarationError(f"{where}: {problem}")
        unknown(chart_ids, ids, what="the id of a chart", where=where)


check_declarations()
