"""Interrupt rules: an interrupt storm, and interrupts unbalanced across CPUs
(docs/background.md, "Interrupts").

A published MySQL load test on CentOS 7, kernel 3.10): vmstat ``in`` at ~55k/s against ~16k/s for the
same work done by another client, ``mpstat -I SUM -P ALL`` uneven across the 32 CPUs, and
``/proc/interrupts`` showing LOC (local timer) and RES (rescheduling IPIs) growing fastest. Moving IRQ
affinity did not help: RES and LOC are per-CPU and follow where threads run. The cause was kernel bug
124661 (``kernel.timer_migration=1`` moving timers to CPUs wrongly seen as idle); ``sysctl -w
kernel.timer_migration=0`` fixed it on bare metal, not on a cloud VM.

The other pattern: a single core handling a network card's interrupts saturates while the average looks idle.
"""

from __future__ import annotations

import dataclasses
from functools import partial

import pandas as pd

from analyzer.detect import (
    baseline,
    column_evidence,
    concurrent_load,
    held_seconds,
    per_run,
    step_seconds,
    sustained_samples,
    vmstat_rate_evidence,
)
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.irqs import OTHER_IRQ
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import sustained, within

# The local timer ticks at most CONFIG_HZ = 1000 times a second per busy CPU (250 on many distros;
# tickless idle CPUs far less). Device interrupts and IPIs come on top.
TICK_PER_S = 1_000
# Fixed bar (docs/background.md): 5k/s per CPU is five times the fastest tick on every CPU: no ordinary
# tick + device load reaches it.
IN_PER_CPU_MAX = 5_000
# an interrupt every 50 us on every CPU: entry/exit alone eats a large share of each
IN_PER_CPU_CRITICAL = 20_000
# Relative to the capture's quiet level: 3 x (the load test of docs/background.md: 55k/s against 16k/s, 3.4
# x), and at
# least one tick's worth per CPU, below which interrupts are idle-machine noise.
IN_BASELINE_FACTOR = 3.0
IN_PER_CPU_FLOOR = TICK_PER_S
# A rise over the quiet level alone is also what any load start looks like (busy CPUs tick, disks and
# NICs interrupt). It is reported only with the shape of a storm: rescheduling IPIs (RES) at least as
# frequent as the local timer (LOC), the bug 124661 signature, or interrupts unbalanced across CPUs;
# and then as INFO, since heavy MySQL concurrency has that shape too (see interrupt_storm).
RES_TO_LOC_MIN = 1.0
TOP_LINES = 5  # the IRQ lines named in the evidence

# interrupt-imbalance (docs/background.md): the busiest CPU takes 3 x the median CPU's interrupts, or some
# CPUs take almost none (under a tenth of the median) while the median CPU is busy (a full tick's worth).
IMBALANCE_RATIO = 3.0
NEAR_ZERO_SHARE = 0.10
# ratios between small per-CPU rates mean nothing: the busiest must reach one tick's worth
BUSY_CPU_PER_S = TICK_PER_S
# A device IRQ line is pinned when one CPU serves >= 90 % of it, and worth naming when it alone gives
# that CPU a tick's worth of interrupts.
PINNED_SHARE = 0.90
PINNED_MIN_PER_S = TICK_PER_S
# When the busiest CPU's interrupts are >= 80 % local timer ticks, the "imbalance" is only that this
# CPU is busy and the others idle (a busy CPU ticks, a tickless idle one does not): not an interrupt
# problem; single-cpu-saturation or cpu-saturation speaks for it.
TIMER_ONLY_SHARE = 0.80
# Architecture lines that are per-CPU by nature: their imbalance follows where threads run, and IRQ
# affinity cannot move them (in the load test of docs/background.md, changing affinity did not help).
PER_CPU_LINES = frozenset(
    "LOC RES CAL TLB IWI NMI PMI SPU RTR TRM THR MCE MCP HYP HRE HVS PIN NPI PIW DFR ERR MIS".split()
)


def _near(ts: pd.Series, windows: list[Window], slack: pd.Timedelta) -> pd.Series:
    """Samples of another tool whose interval overlaps ``windows``: a rate stamped ``t`` covers the
    ``slack`` (one interval) before ``t``, so ``t`` must fall strictly inside (start - slack, end + slack)."""
    mask = pd.Series(False, index=ts.index)
    for w in windows:
        mask |= (ts > w.start - slack) & (ts < w.end + slack)
    return mask


def _rated(tl: Timeline) -> pd.DataFrame:
    """interrupts rows that carry a rate (not the first snapshot), on real CPUs."""
    it = tl.frame("interrupts")
    if not len(it) or "per_s" not in it:
        return it.iloc[0:0]
    rows = it[it["per_s"].notna() & (it["cpu"] >= 0)]
    return rows.assign(
        irq=rows["irq"].astype(str)
    )  # the parser's category dtype would group unseen lines too


def _in_windows(frame: pd.DataFrame, windows: list[Window], slack_s: float) -> tuple[pd.DataFrame, bool]:
    """Rows of ``frame`` in ``windows`` (+/- slack); all rows when none fall there (``False`` = whole
    capture)."""
    if not len(frame):
        return frame, True
    inside = frame[_near(frame["ts"], windows, pd.Timedelta(seconds=slack_s))]
    return (inside, True) if len(inside) else (frame, False)


def _line_rates(rows: pd.DataFrame) -> pd.Series:
    """Mean interrupts/s of each IRQ line over the snapshots of ``rows`` (all CPUs summed), highest first."""
    per_ts = rows.groupby(["ts", "irq"])["per_s"].sum()
    return per_ts.groupby(level="irq").mean().sort_values(ascending=False)


def _describe(tl: Timeline, irq: str) -> str:
    """``24 (eth0-TxRx-0)`` from interrupts_desc when the bundle has it."""
    desc = tl.frame("interrupts_desc")
    if len(desc) and "devices" in desc:
        found = desc.loc[desc["irq"].astype(str) == irq, "devices"]
        if len(found) and str(found.iloc[-1]).strip():
            return f"{irq} ({str(found.iloc[-1]).strip()})"
    return irq


def _per_cpu_table(tl: Timeline) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Interrupts/s per CPU over time: (ts x cpu table, the raw rows, series name).

    ``mpstat -I SUM -P ALL`` (what the load test of docs/background.md read) when the bundle has it, else
    /proc/interrupts
    deltas summed over the lines of each CPU.
    """
    for run in per_run(tl.frame("mpstat_intr")):
        rows = run[run["cpu"] >= 0]
        if len(rows):
            return (
                rows.pivot_table(index="ts", columns="cpu", values="intr_per_s", aggfunc="mean"),
                rows,
                "mpstat_intr.intr_per_s",
            )
    rows = _rated(tl)
    if not len(rows):
        return pd.DataFrame(), rows, ""
    table = rows.groupby(["ts", "cpu"])["per_s"].sum().unstack("cpu")
    return table, rows, "interrupts.per_s"


def _unbalanced(table: pd.DataFrame) -> pd.Series:
    """Per timestamp: the busiest CPU >= IMBALANCE_RATIO x the median CPU (and >= BUSY_CPU_PER_S), or
    a CPU under NEAR_ZERO_SHARE of the median while the median CPU is >= BUSY_CPU_PER_S."""
    top = table.max(axis=1)
    median = table.median(axis=1)
    ratio = (top >= IMBALANCE_RATIO * median) & (top >= BUSY_CPU_PER_S)
    starved = table.lt(NEAR_ZERO_SHARE * median, axis=0).any(axis=1) & (median >= BUSY_CPU_PER_S)
    return ratio | starved


def _pinned(tl: Timeline, rows: pd.DataFrame) -> list[tuple[str, int, float, float]]:
    """Device IRQ lines served >= PINNED_SHARE by one CPU at >= PINNED_MIN_PER_S: (irq, cpu, share,
    rate/s)."""
    if not len(rows):
        return []
    dev = rows[~rows["irq"].astype(str).isin(PER_CPU_LINES | {OTHER_IRQ})]  # OTHER_IRQ: minor lines summed
    per_cpu = dev.groupby(["irq", "cpu"])["per_s"].mean()
    out = []
    for irq, by_cpu in per_cpu.groupby(level="irq"):
        total = float(by_cpu.sum())
        if total < PINNED_MIN_PER_S:
            continue
        cpu = int(by_cpu.idxmax()[1])
        share = float(by_cpu.max()) / total
        if share >= PINNED_SHARE:
            out.append((str(irq), cpu, share, total))
    return sorted(out, key=lambda p: -p[3])


# ---------------------------------------------------------------------------------------------
# interrupt-storm
# ---------------------------------------------------------------------------------------------

INTERRUPT_STORM = RuleTexts(
    title="Interrupt storm: {in_total:,} interrupts/s ({per_cpu:,} per CPU){mostly}",
    explanation=(
        "For {held:.0f} s the CPUs took {in_total:,} interrupts per second, {why}. Every "
        "interrupt stops the query running on that CPU; at this rate the server spends real time handling "
        "them and throughput drops (a published MySQL load test measured 55k/s against 16k/s for the same "
        "work).{below_bar}"
    ),
    recommendation="{recommendation}",
    caveats=(
        "kernel.timer_migration=0 may not help on a cloud VM: the fix has to be on the physical host.",
        (
            "vmstat `in` includes the timer: a busy CPU ticks up to CONFIG_HZ (250-1000) times a second by "
            "itself."
        ),
        (
            "The quiet level is this capture's own 10th percentile; a capture taken entirely during the "
            "storm "
            "has only the fixed bar."
        ),
    ),
    sources=(
        "mpstat(1) -I SUM -P ALL",
        "kernel bugzilla 124661 (kernel.timer_migration=1 causes too many Rescheduling interrupts)",
        "vmstat(8): in",
    ),
    confidence="{agree}; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If the same load with another client or after a reboot gives the same `in` per query, the "
        "interrupts are the work itself (packets, I/O completions), not a storm."
    ),
)
STORM_BELOW_BAR = (
    " Below the fixed bar this is a storm only if the same work usually causes fewer interrupts: "
    "compare with a capture of the same load on a healthy server or after the fix."
)
STORM_FIX_TIMER = (
    "LOC (local timer) and RES (rescheduling IPIs) dominate, the signature of kernel bug 124661\n"
    "(kernel.timer_migration=1 moves timers to CPUs wrongly seen as idle). Try:\n"
    "  sysctl -w kernel.timer_migration=0\n"
    "  echo 'kernel.timer_migration = 0' >> /etc/sysctl.conf && sysctl -p   # persist\n"
    "and compare vmstat `in` under the same load."
)
STORM_FIX_DEVICE = (
    "The top lines are {names}. For a device IRQ, spread it over CPUs (irqbalance, or\n"
    "echo <cpu-list> > /proc/irq/<N>/smp_affinity_list); for a network card, enable interrupt\n"
    "coalescing (ethtool -c <dev>; ethtool -C <dev> rx-usecs 50) and use several queues (ethtool -l).\n"
    "Compare vmstat `in` under the same load afterwards."
)
STORM_FIX_UNKNOWN = (
    "Name the source: the bundle has no /proc/interrupts deltas. Capture them:\n"
    "  cat /proc/interrupts > /tmp/i1; sleep 10; cat /proc/interrupts > /tmp/i2\n"
    "then compare the lines (or watch -d -n1 cat /proc/interrupts). If LOC and RES grow fastest,\n"
    "try sysctl -w kernel.timer_migration=0 (kernel bug 124661)."
)


@dataclasses.dataclass(slots=True)
class _StormWindows:
    fixed: list[Window]
    relative: list[Window]
    step: float = 1.0
    base_per_cpu: float | None = None


def _storm_windows(tl: Timeline, ncpu: int) -> _StormWindows:
    """vmstat ``in`` per CPU above the fixed bar, and above the capture's quiet level, sustained."""
    out = _StormWindows([], [])
    for run in per_run(tl.frame("vmstat")):
        per_cpu = run["in"] / ncpu
        need = sustained_samples(run["ts"])
        over_bar = per_cpu >= IN_PER_CPU_MAX
        found_fixed = sustained(run["ts"], over_bar, min_samples=need)
        base = baseline(per_cpu)
        found_rel: list[Window] = []
        if base is not None:
            rise = (per_cpu >= IN_BASELINE_FACTOR * base) & (per_cpu >= IN_PER_CPU_FLOOR)
            found_rel = sustained(run["ts"], rise | over_bar, min_samples=need)
            out.base_per_cpu = base if out.base_per_cpu is None else out.base_per_cpu
        out.fixed += found_fixed
        out.relative += found_rel
        if found_fixed or found_rel:
            out.step = step_seconds(run["ts"])
    return out


def _per_cpu_evidence(
    tl: Timeline,
    table_in: pd.DataFrame,
    cpu_rows: pd.DataFrame,
    series: str,
    windows: list[Window],
    slack: float,
) -> list[Evidence]:
    """The busiest, median and quietest CPU's interrupts/s in the windows."""
    member, lines = tl.lines_of(cpu_rows[_near(cpu_rows["ts"], windows, pd.Timedelta(seconds=slack))])
    means = table_in.mean()
    return [
        Evidence(
            f"busiest CPU {int(means.idxmax())}, intr/s (mean)",
            round(float(means.max()), 1),
            "/s",
            series,
            member,
            lines,
        ),
        Evidence("median CPU, intr/s (mean)", round(float(means.median()), 1), "/s", series, member, lines),
        Evidence("quietest CPU, intr/s (mean)", round(float(means.min()), 1), "/s", series, member, lines),
    ]


def _line_evidence(
    tl: Timeline, lines_rows: pd.DataFrame, line_rates: pd.Series, in_window: bool
) -> list[Evidence]:
    """The top IRQ lines by rate and the LOC + RES share of all interrupts."""
    member, lines = tl.lines_of(lines_rows)
    where = "" if in_window else " (whole capture)"
    out = [
        Evidence(
            f"IRQ {_describe(tl, str(irq))}{where}",
            round(float(rate), 1),
            "/s",
            "interrupts.per_s",
            member,
            lines,
        )
        for irq, rate in line_rates.head(TOP_LINES).items()
    ]
    total = float(line_rates.sum())
    if total > 0:
        share = (float(line_rates.get("LOC", 0.0)) + float(line_rates.get("RES", 0.0))) / total * 100
        out.append(
            Evidence(
                "LOC + RES share of all interrupts", round(share, 1), "%", "interrupts.per_s", member, lines
            )
        )
    return out


def _storm_why(
    fixed: bool, per_cpu_med: float, base: float | None, res_dominant: bool, unbalanced: bool
) -> str:
    """Why the interrupt rate is a storm: above the fixed bar, or its rise and shape."""
    if fixed:
        return f"above {IN_PER_CPU_MAX:,} per CPU, five times the fastest timer tick"
    rise = (
        f"{per_cpu_med / base:.1f} x this capture's quiet level"
        if base
        else "far above this capture's quiet level"
    )
    shape = ["with rescheduling interrupts (RES) outnumbering timer ticks (LOC)"] if res_dominant else []
    return " ".join([rise, *shape, *(["and spread unevenly across the CPUs"] if unbalanced else [])])


@rule(
    key="interrupt-storm",
    requires=("vmstat", "ncpu"),
    optional=("mpstat_intr", "interrupts", "interrupts_desc"),
)
def interrupt_storm(tl: Timeline) -> Finding | None:
    """vmstat ``in`` per CPU >= IN_PER_CPU_MAX, or >= IN_BASELINE_FACTOR x the capture's quiet level and
    >= IN_PER_CPU_FLOOR with a storm's shape (RES >= LOC in /proc/interrupts, or unbalanced CPUs),
    sustained. Names the top IRQ lines by rate.

    Input: ``vmstat`` (``in``, ``cs`` per second), ``ncpu``; ``mpstat_intr`` (intr/s per CPU) and
    ``interrupts`` (per-line, per-CPU rates) when present. Source: kernel bugzilla 124661; docs/background.md.
    """
    ncpu = tl.ncpu or 0
    found = _storm_windows(tl, ncpu)
    if not found.fixed and not found.relative:
        return None
    windows, slack, base = found.fixed or found.relative, found.step, found.base_per_cpu
    lines_rows, lines_in_window = _in_windows(_rated(tl), windows, slack)
    line_rates = _line_rates(lines_rows) if len(lines_rows) else pd.Series(dtype=float)
    loc, res = float(line_rates.get("LOC", 0.0)), float(line_rates.get("RES", 0.0))
    table, cpu_rows, cpu_series = _per_cpu_table(tl)
    near = _near(table.index.to_series(), windows, pd.Timedelta(seconds=slack)) if len(table) else None
    table_in = table[near] if len(table) else table
    unbalanced = bool(len(table_in)) and bool(_unbalanced(table_in).any())
    res_dominant = loc > 0 and res >= RES_TO_LOC_MIN * loc
    if not found.fixed and not (res_dominant or unbalanced):
        return None  # a rise without a storm's shape: the load started, interrupts followed
    rows, per_cpu_med, evidence = vmstat_rate_evidence(tl, windows, "in", "interrupts in", ncpu)
    load = concurrent_load(tl, windows, ncpu)
    if load and per_cpu_med < IN_PER_CPU_CRITICAL:
        return None  # the completions and IPIs of that load: its evidence (disk-saturation, cpu-saturation)
    if base and per_cpu_med >= IN_BASELINE_FACTOR * base:  # a quiet part exists
        evidence += [
            Evidence(
                "capture's quiet level, in (10th percentile)", int(round(base * ncpu)), "/s", "vmstat.in"
            ),
            Evidence("rise over the quiet level", round(per_cpu_med / base, 1), "x", "vmstat.in"),
        ]
    evidence += column_evidence(
        tl, rows, "vmstat", (("context switches cs (median)", "cs", "median0", "/s"),)
    )
    agree = ["vmstat"]
    if len(table_in):
        evidence += _per_cpu_evidence(tl, table_in, cpu_rows, cpu_series, windows, slack)
        agree.append(cpu_series.split(".")[0])
    top = line_rates.head(TOP_LINES)
    if len(top):
        evidence += _line_evidence(tl, lines_rows, line_rates, lines_in_window)
        agree.append("/proc/interrupts")
    names = ", ".join(str(i) for i in top.index[:3]) if len(top) else ""
    if len(top) >= 2 and set(map(str, top.index[:2])) == {"LOC", "RES"}:
        recommendation = STORM_FIX_TIMER
    else:
        recommendation = STORM_FIX_DEVICE.format(names=names) if len(top) else STORM_FIX_UNKNOWN
    # Below the fixed bar a rise with a storm's shape is still what heavy MySQL concurrency can look
    # like (a real 64-session sysbench on 2 CPUs here: RES 3 x LOC, 1.3k/s per CPU): only a run of the
    # same work with fewer interrupts proves a storm, as in the load test of docs/background.md. Reported, not
    # alarmed.
    severity = Severity.CRITICAL if per_cpu_med >= IN_PER_CPU_CRITICAL else Severity.INFO
    if found.fixed and severity is Severity.INFO:
        severity = Severity.WARNING
    why = _storm_why(bool(found.fixed), per_cpu_med, base, res_dominant, unbalanced)
    return INTERRUPT_STORM.finding(
        "interrupt-storm",
        severity,
        windows,
        evidence,
        related=("interrupt-imbalance", "context-switch-storm", "single-cpu-saturation"),
        in_total=int(per_cpu_med * ncpu),
        per_cpu=round(per_cpu_med),
        mostly=f", mostly {names}" if names else "",
        held=held_seconds(windows, found.step),
        why=why,
        below_bar=(
            f" {load[0].upper()}{load[1:]} ran in the same window: part of these interrupts are its "
            "own, but "
            f"not {per_cpu_med:,.0f} per CPU."
            if load
            else ""
        )
        + ("" if found.fixed else STORM_BELOW_BAR),
        recommendation=recommendation,
        agree=" + ".join(agree),
    )


# ---------------------------------------------------------------------------------------------
# interrupt-imbalance
# ---------------------------------------------------------------------------------------------

INTERRUPT_IMBALANCE = RuleTexts(
    title="Interrupts unbalanced across CPUs: CPU {busiest} takes {ratio:.1f} x the median CPU{starved}",
    explanation=(
        "For {held:.0f} s CPU {busiest} took {busiest_rate:,.0f} interrupts/s against {median:,.0f}/s on "
        "the median CPU{starved}. {what}"
    ),
    recommendation="{recommendation}",
    caveats=(
        (
            "CPUs left idle take few interrupts by design (tickless idle); a few quiet CPUs under a light "
            "load "
            "are normal."
        ),
        "CPUs isolated on purpose (isolcpus, nohz_full) take almost none.",
    ),
    sources=(
        "Linux Documentation/core-api/irq/irq-affinity.rst",
        'Yoshinori Matsunobu, "Linux performance tuning & stabilization tips" (MySQL Conference & Expo 2010)',
        "mpstat(1) -I SUM",
    ),
    confidence="{agree}; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If the busiest CPU's %irq + %soft stays low (mpstat -P ALL), the extra interrupts cost it "
        "little and the imbalance is harmless."
    ),
)
IMBALANCE_PINNED = (
    "Device interrupt {irq} ({rate:,.0f}/s) is {share:.0f} % handled by CPU {cpu}: one core "
    "does the work of that device, and it saturates long before the others."
)
IMBALANCE_PINNED_FIX = (
    "Spread the device's interrupts over CPUs:\n"
    "  systemctl enable --now irqbalance\n"
    "  cat /proc/irq/{irq}/smp_affinity_list ; echo <cpu-list> > /proc/irq/{irq}/smp_affinity_list\n"
    "For a network card: use several queues (ethtool -l <dev>; ethtool -L <dev> combined <n>), or RPS/RFS\n"
    "for a single-queue card:\n"
    "  echo <hex-cpu-mask> > /sys/class/net/<dev>/queues/rx-0/rps_cpus\n"
    "  sysctl -w net.core.rps_sock_flow_entries=32768"
)
IMBALANCE_PER_CPU = (
    "The busiest CPUs mostly take {lines}: timer ticks and inter-processor "
    "interrupts, which follow where threads run. IRQ affinity cannot move them (changing it did not help "
    "in a "
    "published MySQL load test); look at why threads crowd those CPUs, or at an interrupt storm."
)
IMBALANCE_PER_CPU_FIX = (
    "No device IRQ is pinned; the imbalance is per-CPU interrupts (timer, rescheduling) following the "
    "threads.\n"
    "Check where threads run (ps -eLo pid,tid,psr,pcpu,comm --sort=-pcpu | head) and any CPU pinning\n"
    "(taskset -cp <pid>, cgroup cpuset, numactl). If RES and LOC grow fastest under load, see "
    "interrupt-storm\n"
    "(sysctl -w kernel.timer_migration=0)."
)
IMBALANCE_OTHER = "Some CPUs take far more interrupts than the others."
IMBALANCE_OTHER_FIX = (
    "Compare two readings of /proc/interrupts to see which lines land on the busiest CPUs:\n"
    "  watch -d -n1 cat /proc/interrupts\n"
    "then spread device IRQs with irqbalance or /proc/irq/<N>/smp_affinity_list, and RPS/RFS for network "
    "queues."
)


def _imbalance_story(tl: Timeline, pinned: list, top_busiest: pd.Series) -> tuple[str, str]:
    """(what, recommendation) for a pinned device IRQ, per-CPU lines, or an unnamed imbalance."""
    if pinned:
        irq, cpu, share, rate = pinned[0]
        what = IMBALANCE_PINNED.format(irq=_describe(tl, irq), rate=rate, share=share * 100, cpu=cpu)
        return what, IMBALANCE_PINNED_FIX.format(irq=irq)
    if len(top_busiest) and str(top_busiest.index[0]) in PER_CPU_LINES:
        return IMBALANCE_PER_CPU.format(lines=", ".join(map(str, top_busiest.index))), IMBALANCE_PER_CPU_FIX
    return IMBALANCE_OTHER, IMBALANCE_OTHER_FIX


@rule(
    key="interrupt-imbalance",
    any_of=(("interrupts", "mpstat_intr"),),
    optional=("interrupts_desc", "mpstat_cpu"),
)
def interrupt_imbalance(tl: Timeline) -> Finding | None:
    """Per-CPU interrupts/s: busiest >= IMBALANCE_RATIO x median, or CPUs under NEAR_ZERO_SHARE of a
    busy median, sustained; names device IRQ lines pinned to one CPU.

    Input: ``interrupts`` (per-line, per-CPU rates from /proc/interrupts deltas); ``mpstat_intr``
    (``mpstat -I SUM -P ALL``) preferred for the per-CPU totals when present. Source: docs/background.md
    ("Interrupts").
    """
    table, cpu_rows, cpu_series = _per_cpu_table(tl)
    if table.shape[1] < 2:
        return None
    ts = table.index.to_series()
    windows = sustained(ts, _unbalanced(table), min_samples=sustained_samples(ts))
    if not windows:
        return None
    step = step_seconds(ts)
    means = table[within(ts, windows)].mean()
    busiest, median = int(means.idxmax()), float(means.median())
    starved = sorted(int(c) for c, v in means.items() if v < NEAR_ZERO_SHARE * median)
    ratio = float(means.max()) / median if median > 0 else float("inf")
    member, lines = tl.lines_of(cpu_rows[_near(cpu_rows["ts"], windows, pd.Timedelta(seconds=step))])
    evidence = [
        Evidence("busiest CPU", busiest, "cpu", cpu_series, member, lines),
        Evidence(
            f"CPU {busiest} intr/s (mean)", round(float(means.max()), 1), "/s", cpu_series, member, lines
        ),
        Evidence("median CPU intr/s (mean)", round(median, 1), "/s", cpu_series, member, lines),
        Evidence("busiest / median", round(ratio, 2), "x", cpu_series, member, lines),
        Evidence("CPUs", int(table.shape[1]), "cpus", cpu_series),
    ] + [
        Evidence(
            f"CPU {c} intr/s (mean), near zero", round(float(means[c]), 1), "/s", cpu_series, member, lines
        )
        for c in starved
    ]
    irq_rows, _ = _in_windows(_rated(tl), windows, step)
    pinned = _pinned(tl, irq_rows)
    i_member, i_lines = tl.lines_of(irq_rows)
    irq_evidence = partial(Evidence, unit="/s", series="interrupts.per_s", member=i_member, lines=i_lines)
    evidence += [
        irq_evidence(f"IRQ {_describe(tl, irq)} pinned to CPU {cpu}", round(rate, 1))
        for irq, cpu, _, rate in pinned
    ]
    # Without /proc/interrupts (mpstat -I SUM alone) there are no IRQ lines to name.
    on_busiest = irq_rows[irq_rows["cpu"] == busiest] if "cpu" in irq_rows else irq_rows.iloc[0:0]
    busiest_lines = _line_rates(on_busiest) if len(on_busiest) else pd.Series(dtype=float)
    total = float(busiest_lines.sum()) if len(busiest_lines) else 0.0
    if total > 0 and busiest_lines.get("LOC", 0.0) >= TIMER_ONLY_SHARE * total:
        return None  # the busiest CPU only ticks because it is busy
    top_busiest = busiest_lines.head(3)
    evidence += [
        irq_evidence(f"CPU {busiest}: IRQ {_describe(tl, str(irq))}", round(float(rate), 1))
        for irq, rate in top_busiest.items()
    ]
    what, recommendation = _imbalance_story(tl, pinned, top_busiest)
    agree = cpu_series.split(".")[0] + (" + /proc/interrupts" if len(irq_rows) else "")
    return INTERRUPT_IMBALANCE.finding(
        "interrupt-imbalance",
        Severity.WARNING if pinned else Severity.INFO,
        windows,
        evidence,
        related=("single-cpu-saturation", "interrupt-storm"),
        busiest=busiest,
        ratio=ratio,
        median=median,
        starved=f"; CPUs {', '.join(map(str, starved))} took almost none" if starved else "",
        held=held_seconds(windows, step),
        busiest_rate=float(means.max()),
        what=what,
        recommendation=recommendation,
        agree=agree,
    )
