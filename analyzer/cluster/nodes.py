"""Cross-host rules over peer nodes: Galera flow control, one host's stall that holds the others back,
load imbalance. Called by ``analyzer.cluster.rules.cross_host_findings``; see that module for the list.

Inputs per host (its ``Timeline``): ``mysqladmin`` wsrep counters (wsrep_flow_control_sent, a counter;
wsrep_flow_control_paused_ns, a counter of nanoseconds paused; wsrep_flow_control_paused, a gauge:
the paused fraction since FLUSH STATUS; wsrep_local_recv_queue and _avg, gauges in write-sets) and
Questions; ``iostat`` (w_await ms per device); ``vmstat`` (r, runnable threads) with the host's ncpu.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from analyzer.cluster import topology
from analyzer.cluster.texts import FLOW_TEXTS, IMBALANCE_TEXTS, STALL_TEXTS
from analyzer.detect import cite, growth, span, status
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.timeline.timeline import Timeline

#: Galera: a node paused by flow control this share of the time is held back (0.1 = 10 %).
FC_PAUSED_SHARE = 0.10
#: One host's disk stalled: its worst device's median w_await (ms) at least this, and at least
#: STALL_RATIO times every other host's.
STALL_W_AWAIT_MS = 50.0
STALL_RATIO = 3.0
#: One host's CPU saturated: vmstat r per CPU (median) at least this, every other host under half of it.
STALL_RUNQ_PER_CPU = 2.0
#: Load imbalance among peers: the busiest node's share of all statements at least
#: max(IMBALANCE_SHARE, IMBALANCE_FACTOR / nodes), with at least IMBALANCE_MIN_QPS statements/s in all.
IMBALANCE_SHARE = 0.6
IMBALANCE_FACTOR = 1.5
IMBALANCE_MIN_QPS = 50.0
NS = 1e9


def cross(finding: Finding, hosts: list[str]) -> Finding:
    """``finding`` as a cross-host finding: ``hosts`` the servers it involves (the cause first, each
    once), ``host`` None."""
    return replace(finding, host=None, hosts=tuple(dict.fromkeys(hosts)))


def paused_share(tl: Timeline) -> tuple[float | None, pd.DataFrame]:
    """The share of the capture (0-1) the node was paused by flow control: the mean per-second growth
    of wsrep_flow_control_paused_ns / 1e9 (Galera 4), else the last wsrep_flow_control_paused gauge
    (the fraction since FLUSH STATUS, Galera 3); the rows read. (None, empty) without either."""
    ns = status(tl, "wsrep_flow_control_paused_ns").dropna(subset=["per_s"])
    if len(ns):
        return float(ns["per_s"].clip(lower=0).mean() / NS), ns
    gauge = status(tl, "wsrep_flow_control_paused").dropna(subset=["value"])
    if len(gauge):
        return float(gauge["value"].iloc[-1]), gauge
    return None, pd.DataFrame()


def _node(tl: Timeline) -> dict[str, object]:
    """One Galera node's flow-control figures: ``sent`` (messages in the capture), ``paused`` (share),
    ``queue`` (max wsrep_local_recv_queue), ``queue_avg`` (last wsrep_local_recv_queue_avg) and the rows."""
    sent_rows = status(tl, "wsrep_flow_control_sent")
    paused, paused_rows = paused_share(tl)
    queue_rows = status(tl, "wsrep_local_recv_queue")
    avg_rows = status(tl, "wsrep_local_recv_queue_avg").dropna(subset=["value"])
    return {
        "sent": growth(sent_rows),
        "sent_rows": sent_rows,
        "paused": paused,
        "paused_rows": paused_rows,
        "queue": float(queue_rows["value"].max()) if len(queue_rows) else 0.0,
        "queue_rows": queue_rows,
        "queue_avg": float(avg_rows["value"].iloc[-1]) if len(avg_rows) else None,
    }


def galera_flow_control(timelines: Mapping[str, Timeline]) -> Finding | None:
    """``galera-flow-control``: two or more Galera nodes; one sent flow control
    (wsrep_flow_control_sent grew) and the others were paused FC_PAUSED_SHARE of the time or more.
    The sender is the node that sent most messages (ties: the fuller receive queue); the verdict adds
    what slowed it when its own capture shows it (a disk stall, a saturated CPU)."""
    nodes = {name: _node(tl) for name, tl in timelines.items() if topology.is_galera(tl)}
    if len(nodes) < 2:
        return None
    sender = max(nodes, key=lambda n: (nodes[n]["sent"], nodes[n]["queue"]))
    s = nodes[sender]
    others = [n for n in nodes if n != sender]
    shares = [nodes[n]["paused"] for n in others if nodes[n]["paused"] is not None]
    if not s["sent"] or not shares or max(shares) < FC_PAUSED_SHARE:  # type: ignore[operator]
        return None
    paused = 100.0 * sum(shares) / len(shares)  # type: ignore[arg-type]
    tl = timelines[sender]
    stall = saturation(timelines, sender)
    cause = (
        f"{sender}'s {stall[0]} stalled ({stall[1]})"
        if stall
        else f"{sender} fell behind (receive queue up to {s['queue']:.0f} write-sets)"
    )
    evidence = _flow_evidence(timelines, nodes, sender, others, stall)
    settings = topology.differing_settings(tl, [timelines[n] for n in others])
    evidence += [Evidence(f"variable {n}", mine, "", "variables") for n, mine, _ in settings]
    per_node = ", ".join(
        f"{n} {100 * v['paused']:.0f} % (sent {v['sent']:.0f})"
        if v["paused"] is not None
        else (f"{n} unknown")  # type: ignore[operator]
        for n, v in nodes.items()
    )
    windows = span(s["sent_rows"]) or span(s["queue_rows"])  # type: ignore[arg-type]
    finding = FLOW_TEXTS.finding(
        "galera-flow-control",
        Severity.CRITICAL if paused >= 50 else Severity.WARNING,
        windows,
        evidence,
        related=("host-stall-holds-others",) if stall else (),
        cause=cause,
        sender=sender,
        others=" and ".join(others) if len(others) < 3 else ", ".join(others[:-1]) + " and " + others[-1],
        were="was" if len(others) == 1 else "were",
        paused=paused,
        queue=s["queue"],
        queue_avg=f"average {s['queue_avg']:.2f}" if s["queue_avg"] is not None else "no average",
        sent=s["sent"],
        per_node=per_node,
        n_nodes=len(nodes),
        settings=topology.settings_phrase(sender, settings, "the others'"),
    )
    return cross(finding, [sender, *others])


def _flow_evidence(
    timelines: Mapping[str, Timeline], nodes: dict, sender: str, others: list[str], stall: tuple | None
) -> list:
    """galera-flow-control's evidence: the sender's flow control messages and receive queue, each other
    node's paused share, and the sender's own stall when its capture shows one."""
    tl, s = timelines[sender], nodes[sender]
    evidence = [
        cite(
            tl,
            "wsrep_flow_control_sent (growth)",
            s["sent"],
            "messages",
            "mysqladmin.wsrep_flow_control_sent",
            s["sent_rows"],
        ),  # type: ignore[arg-type]
        cite(
            tl,
            "wsrep_local_recv_queue (max)",
            s["queue"],
            "write-sets",
            "mysqladmin.wsrep_local_recv_queue",
            s["queue_rows"],
        ),  # type: ignore[arg-type]
    ]
    for n in others:
        if nodes[n]["paused"] is not None:
            evidence.append(
                cite(
                    timelines[n],
                    f"{n} paused by flow control",
                    round(100 * nodes[n]["paused"], 1),
                    "%",  # type: ignore[operator]
                    "mysqladmin.wsrep_flow_control_paused_ns",
                    nodes[n]["paused_rows"],
                )
            )  # type: ignore[arg-type]
    if stall:
        evidence.append(stall[2])
    return evidence


def disk_wait(tl: Timeline) -> tuple[float, str, pd.DataFrame] | None:
    """The host's worst device by median w_await (ms) over the capture (since-boot reports left out):
    (median ms, device, its rows); None without iostat w_await."""
    io = tl.frame("iostat")
    if not len(io) or "w_await" not in io or "device" not in io:
        return None
    if "since_boot" in io:
        io = io[~io["since_boot"].to_numpy(dtype=bool, na_value=False)]
    medians = io.groupby(io["device"].astype("string"))["w_await"].median().dropna()
    if not len(medians):
        return None
    device = str(medians.idxmax())
    return float(medians.max()), device, io[(io["device"].astype("string") == device).to_numpy(dtype=bool)]


def run_queue(tl: Timeline) -> tuple[float, pd.DataFrame] | None:
    """vmstat r per CPU (median over the capture) and the rows; None without vmstat or ncpu."""
    vm = tl.frame("vmstat")
    if not len(vm) or "r" not in vm or not tl.ncpu:
        return None
    return float(vm["r"].median()) / tl.ncpu, vm


def saturation(
    timelines: Mapping[str, Timeline], name: str
) -> tuple[str, str, Evidence, pd.DataFrame] | None:
    """Host ``name``'s own saturation when its capture shows one the other hosts do not share:
    ("disk", "w_await 80 ms on vda", evidence, rows) when its worst device's median w_await is
    STALL_W_AWAIT_MS or more and STALL_RATIO times every other host's; ("CPU", "r 5.0 per CPU", ...)
    when its vmstat r per CPU is STALL_RUNQ_PER_CPU or more and every other host's under half of it.
    None otherwise (hosts sharing one machine see the same saturation: it names none of them)."""
    tl = timelines[name]
    others = [t for n, t in timelines.items() if n != name]
    disk = disk_wait(tl)
    other_d = [d[0] for d in map(disk_wait, others) if d]
    if disk and disk[0] >= STALL_W_AWAIT_MS and other_d and all(disk[0] >= STALL_RATIO * o for o in other_d):
        ev = cite(tl, f"{disk[1]} w_await (median)", round(disk[0], 1), "ms", "iostat.w_await", disk[2])
        return "disk", f"w_await {disk[0]:.0f} ms on {disk[1]}", ev, disk[2]
    cpu = run_queue(tl)
    other_c = [c[0] for c in map(run_queue, others) if c]
    if cpu and cpu[0] >= STALL_RUNQ_PER_CPU and other_c and all(o < cpu[0] / 2 for o in other_c):
        ev = cite(tl, "vmstat r per CPU (median)", round(cpu[0], 1), "", "vmstat.r", cpu[1])
        return "CPU", f"r {cpu[0]:.1f} per CPU", ev, cpu[1]
    return None


def _waiting(timelines: Mapping[str, Timeline], stalled: str) -> list[tuple[str, str]]:
    """The hosts that wait for ``stalled``, with how: Galera nodes paused by flow control
    (FC_PAUSED_SHARE or more of the time) that ``stalled`` sent (its wsrep_flow_control_sent grew).
    (Semi-synchronous replication, where a source's commits wait for a replica's acknowledgement, is
    not read: the captures here keep no Rpl_semi_sync_* counters.)"""
    if growth(status(timelines[stalled], "wsrep_flow_control_sent")) <= 0:
        return []
    out = []
    for name, tl in timelines.items():
        share, _ = paused_share(tl)
        if name != stalled and share is not None and share >= FC_PAUSED_SHARE:
            out.append((name, f"{name} paused by flow control {100 * share:.0f} % of the time"))
    return out


def _measure(name: str, tl: Timeline, what: str) -> str:
    """The host's figure of the saturated resource, for the explanation: ``"db-a w_await 3 ms"``."""
    if what == "disk":
        d = disk_wait(tl)
        return f"{name} w_await {d[0]:.0f} ms on {d[1]}" if d else f"{name} no iostat"
    c = run_queue(tl)
    return f"{name} r {c[0]:.1f} per CPU" if c else f"{name} no vmstat"


def host_stall_holds_others(timelines: Mapping[str, Timeline]) -> Finding | None:
    """``host-stall-holds-others``: exactly one host's disk (median w_await >= STALL_W_AWAIT_MS and
    STALL_RATIO times every other host's) or CPU (vmstat r per CPU >= STALL_RUNQ_PER_CPU, the others
    under half: ``saturation``) is saturated, and another host waits for it (``_waiting``)."""
    for name in timelines:
        found = saturation(timelines, name)
        if found is None:
            continue
        waiting = _waiting(timelines, name)
        if not waiting:
            continue
        what, measure, ev, rows = found
        others = [n for n in timelines if n != name]
        theirs = "; ".join(_measure(n, timelines[n], what) for n in others)
        finding = STALL_TEXTS.finding(
            "host-stall-holds-others",
            Severity.WARNING,
            span(rows),
            [ev],
            stalled=name,
            what=what,
            measure=measure,
            measure_long=f"{what} saturated, {measure} (median over the capture)",
            others=" and ".join(n for n, _ in waiting),
            wait="wait" if len(waiting) > 1 else "waits",
            others_measure=theirs,
            wait_long="; ".join(how for _, how in waiting) + ".",
        )
        return cross(finding, [name, *(n for n, _ in waiting)])
    return None


def load_imbalance(timelines: Mapping[str, Timeline]) -> Finding | None:
    """``load-imbalance``: among peer nodes (no replication link between them), over the minutes every
    node's capture holds, the busiest one's mean Questions per second is at least max(IMBALANCE_SHARE,
    IMBALANCE_FACTOR / nodes) of all nodes' sum, which is IMBALANCE_MIN_QPS or more."""
    questions = {n: status(tl, "Questions").dropna(subset=["per_s"]) for n, tl in timelines.items()}
    questions = {n: q for n, q in questions.items() if len(q)}
    if len(questions) < 2:
        return None
    start = max(q["ts"].min() for q in questions.values())  # the minutes every node's capture holds
    end = min(q["ts"].max() for q in questions.values())
    rates: dict[str, tuple[float, pd.DataFrame]] = {}
    for name, q in questions.items():
        q = q[(q["ts"] >= start) & (q["ts"] <= end)]
        if len(q):
            rates[name] = (float(q["per_s"].mean()), q)
    if len(rates) < len(questions):
        return None
    total = sum(v for v, _ in rates.values())
    busiest = max(rates, key=lambda n: rates[n][0])
    share = rates[busiest][0] / total if total else 0.0
    if total < IMBALANCE_MIN_QPS or share < max(IMBALANCE_SHARE, IMBALANCE_FACTOR / len(rates)):
        return None
    evidence = [
        cite(timelines[n], f"{n} Questions", round(v, 1), "/s", "mysqladmin.Questions", rows)
        for n, (v, rows) in rates.items()
    ]
    windows: list[Window] = span(rates[busiest][1])
    finding = IMBALANCE_TEXTS.finding(
        "load-imbalance",
        Severity.INFO,
        windows,
        evidence,
        busiest=busiest,
        share=100 * share,
        total=total,
        per_node=", ".join(f"{n} {v:,.0f}/s" for n, (v, _) in rates.items()),
        n_nodes=len(rates),
    )
    return cross(finding, [busiest, *(n for n in rates if n != busiest)])
