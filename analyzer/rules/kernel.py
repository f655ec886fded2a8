"""Kernel counter rules: netstat -s (pt-stalk -netstat_s) and /proc/vmstat (-procvmstat).

A listen queue that overflows drops new connections (TcpExt ListenOverflows/ListenDrops);
retransmitted segments point at the network; direct reclaim and compaction stalls make allocating
threads wait on memory. Source: kernel net/ipv4/proc.c, mm/vmstat.c; RFC 6298; docs/background.md.
"""

from __future__ import annotations

from analyzer.detect import cite, field_rows, growth, span, status
from analyzer.findings import Finding, Severity
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import sustained

# --- listen-queue-overflow -------------------------------------------------------------------
LISTEN_OVERFLOWS_MIN = 1  # any overflow is a refused or delayed connection attempt

LISTEN_TEXTS = RuleTexts(
    title="Listen queue overflowed {overflows:,.0f} times ({drops:,.0f} SYNs dropped) during the capture",
    explanation=(
        "The kernel counted {overflows:,.0f} listen-queue overflows and {drops:,.0f} dropped SYNs in "
        "{seconds:.0f} s (up to {peak:,.1f}/s): connections arrived faster than the server accepted them, "
        "and "
        "clients saw connect timeouts or retries. back_log is {back_log}, max_connections {max_conn}."
    ),
    recommendation=(
        "A connection storm: pool connections at the application. Raise back_log together with\n"
        "net.core.somaxconn and net.ipv4.tcp_max_syn_backlog (sysctl) so the queue can absorb bursts."
    ),
    caveats=("netstat -s counts every listening socket of the host, not only mysqld's.",),
    sources=(
        "kernel TcpExt ListenOverflows/ListenDrops (net/ipv4/proc.c)",
        "MySQL 8.4 Reference Manual, back_log",
    ),
    disproof=(
        "If the overflows belong to another service's socket (ss -lnt shows its Recv-Q), MySQL is not "
        "concerned."
    ),
    confidence="{confidence}",
)


@rule(key="listen-queue-overflow", requires=("netstat_s",), optional=("mysqladmin", "variables"))
def listen_queue_overflow(tl: Timeline) -> Finding | None:
    """TcpExt ListenOverflows or ListenDrops grew during the capture (>= LISTEN_OVERFLOWS_MIN)."""
    over = field_rows(tl, "netstat_s", ("ListenOverflows",))
    drops = field_rows(tl, "netstat_s", ("ListenDrops",))
    grown = max(growth(over), growth(drops))
    if grown < LISTEN_OVERFLOWS_MIN:
        return None
    rows = over if growth(over) else drops
    hot = rows[rows["per_s"] > 0]
    numbers = {
        "overflows": growth(over),
        "drops": growth(drops),
        "peak": float(rows["per_s"].max()),
        "seconds": (rows["ts"].max() - rows["ts"].min()).total_seconds(),
        "back_log": tl.variables.get("back_log", "unknown"),
        "max_conn": tl.variables.get("max_connections", "unknown"),
    }
    evidence = [
        cite(
            tl, "listen queue overflows (growth)", numbers["overflows"], "", "netstat_s.ListenOverflows", over
        ),
        cite(
            tl,
            "SYNs to LISTEN sockets dropped (growth)",
            numbers["drops"],
            "",
            "netstat_s.ListenDrops",
            drops,
        ),
        cite(
            tl,
            "overflows per second (peak)",
            round(numbers["peak"], 2),
            "/s",
            "netstat_s.ListenOverflows",
            hot,
        ),
    ]
    for variable, label, column, unit, digits in (
        ("Connections", "Connections per second (peak)", "per_s", "/s", 1),
        ("Threads_connected", "Threads_connected (max)", "value", "", None),
    ):
        rows = status(tl, variable)
        if len(rows):
            peak = float(rows[column].max())
            shown = peak if digits is None else round(peak, digits)
            evidence.append(cite(tl, label, shown, unit, f"mysqladmin.{variable}", rows))
    return LISTEN_TEXTS.finding(
        "listen-queue-overflow",
        Severity.WARNING,
        span(hot),
        evidence,
        confidence="netstat -s counters",
        **numbers,
    )


# --- tcp-retransmits -------------------------------------------------------------------------
RETRANSMIT_RATIO = 0.01  # docs/background.md: above about 1 % of segments sent, sustained
MIN_OUT_SEGS_PER_S = 100.0  # below this a handful of retransmits is a large ratio of nothing
SUSTAINED_SAMPLES = 5  # pt-stalk samples every second: 5 s

RETRANSMIT_TEXTS = RuleTexts(
    title="TCP retransmits at {ratio:.1f} % of segments sent for {seconds:.0f} s",
    explanation=(
        "For {seconds:.0f} s the host retransmitted {retrans:,.0f} segments per second out of {out:,.0f} "
        "sent "
        "({ratio:.1f} %): packets are lost between the server and its clients, and every lost segment waits "
        "at least one retransmission timeout (200 ms or more)."
    ),
    recommendation=(
        "A network problem between clients and the server: check interface errors (ip -s link), the switch\n"
        "ports, and a saturated NIC (see the interrupts of its queues)."
    ),
    caveats=("netstat -s counts every TCP connection of the host, not only MySQL's.",),
    sources=("RFC 6298", "netstat(8)", "Linux Documentation/networking/snmp_counter.rst"),
    disproof="If the retransmits belong to another service's traffic (ss -ti), MySQL is not concerned.",
    confidence="{confidence}",
)


@rule(key="tcp-retransmits", requires=("netstat_s",))
def tcp_retransmits(tl: Timeline) -> Finding | None:
    """RetransSegs/s over OutSegs/s >= RETRANSMIT_RATIO with OutSegs >= MIN_OUT_SEGS_PER_S, sustained."""
    retrans = field_rows(tl, "netstat_s", ("RetransSegs",)).set_index("ts")["per_s"]
    out = field_rows(tl, "netstat_s", ("OutSegs",)).set_index("ts")["per_s"]
    both = (retrans.to_frame("retrans").join(out.to_frame("out"), how="inner")).dropna()
    both = both[~both.index.duplicated()]
    if not len(both):
        return None
    hot = (both["out"] >= MIN_OUT_SEGS_PER_S) & (both["retrans"] / both["out"] >= RETRANSMIT_RATIO)
    windows = sustained(both.index.to_series(), hot, min_samples=SUSTAINED_SAMPLES)
    if not windows:
        return None
    rows = both[hot]
    numbers = {
        "ratio": float(rows["retrans"].sum() / rows["out"].sum() * 100),
        "retrans": float(rows["retrans"].median()),
        "out": float(rows["out"].median()),
        "seconds": sum(w.seconds for w in windows),
    }
    src = field_rows(tl, "netstat_s", ("RetransSegs",))
    evidence = [
        cite(
            tl,
            "segments retransmitted per second (median)",
            round(numbers["retrans"], 1),
            "/s",
            "netstat_s.RetransSegs",
            src,
        ),
        cite(
            tl, "segments sent per second (median)", round(numbers["out"], 1), "/s", "netstat_s.OutSegs", src
        ),
        cite(tl, "RetransSegs / OutSegs", round(numbers["ratio"], 2), "%", "netstat_s.RetransSegs", src),
    ]
    return RETRANSMIT_TEXTS.finding(
        "tcp-retransmits", Severity.WARNING, windows, evidence, confidence="netstat -s counters", **numbers
    )


# --- direct-reclaim-stalls -------------------------------------------------------------------
RECLAIM_FIELDS = (
    "allocstall", "allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable", "allocstall_device",
    "pgscan_direct", "pgscan_direct_dma", "pgscan_direct_dma32", "pgscan_direct_normal", "pgscan_direct_movable",
    "compact_stall",
)  # fmt: skip
RECLAIM_MIN = 1  # docs/background.md: "growing during the capture": each stall is a thread waiting on memory

RECLAIM_TEXTS = RuleTexts(
    title=(
        "Direct reclaim and compaction stalls: {stalls:,.0f} allocation stalls, {scanned:,.0f} pages "
        "scanned directly"
    ),
    explanation=(
        "During the capture the kernel counted {stalls:,.0f} allocation stalls, {scanned:,.0f} pages "
        "scanned by "
        "allocating threads themselves and {compact:,.0f} compaction stalls (free memory at least "
        "{free_mib:,.0f} MiB). Threads that allocate memory had to reclaim or compact it first: latency "
        "spikes."
    ),
    recommendation=(
        "Leave memory headroom beside the buffer pool. Transparent huge pages compaction:\n"
        "  echo never > /sys/kernel/mm/transparent_hugepage/enabled; echo never > "
        "/sys/kernel/mm/transparent_hugepage/defrag\n"
        "and check vm.min_free_kbytes."
    ),
    caveats=("The counters are host-wide: another process may be the one allocating.",),
    sources=("kernel mm/vmstat.c (/proc/vmstat)", "Documentation/admin-guide/mm/transhuge.rst"),
    disproof="If the stalls stop with THP disabled and the latency does not change, they were not the cause.",
    confidence="{confidence}",
)


@rule(key="direct-reclaim-stalls", requires=("procvmstat",))
def direct_reclaim_stalls(tl: Timeline) -> Finding | None:
    """allocstall*, pgscan_direct* or compact_stall grew during the capture (>= RECLAIM_MIN)."""
    rows = field_rows(tl, "procvmstat", RECLAIM_FIELDS)
    if not len(rows):
        return None
    by_field = {f: growth(r) for f, r in rows.groupby("field", observed=True)}
    stalls = sum(v for f, v in by_field.items() if f.startswith("allocstall"))
    scanned = sum(v for f, v in by_field.items() if f.startswith("pgscan_direct"))
    compact = by_field.get("compact_stall", 0.0)
    if stalls + compact < RECLAIM_MIN and scanned < RECLAIM_MIN:
        return None
    grown = rows[rows["per_s"] > 0]
    free = field_rows(tl, "procvmstat", ("nr_free_pages",))
    numbers = {
        "stalls": stalls,
        "scanned": scanned,
        "compact": compact,
        "free_mib": float(free["value"].min()) * 4 / 1024 if len(free) else 0.0,
    }
    evidence = [
        cite(tl, f"{f} (growth)", v, "", f"procvmstat.{f}", rows[rows["field"] == f])
        for f, v in by_field.items()
        if v > 0
    ]
    if len(free):
        evidence.append(
            cite(
                tl,
                "nr_free_pages (min)",
                float(free["value"].min()),
                "pages",
                "procvmstat.nr_free_pages",
                free,
            )
        )
    thp = field_rows(tl, "procvmstat", ("thp_fault_alloc", "thp_collapse_alloc", "compact_fail"))
    for f, r in thp.groupby("field", observed=True):
        evidence.append(cite(tl, f"{f} (growth)", growth(r), "", f"procvmstat.{f}", r))
    return RECLAIM_TEXTS.finding(
        "direct-reclaim-stalls",
        Severity.WARNING,
        span(grown),
        evidence,
        confidence="/proc/vmstat counters",
        **numbers,
    )
