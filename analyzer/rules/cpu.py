"""CPU rules: run-queue saturation, one hot core, steal, context-switch storms.

The USE method (Brendan Gregg) reads CPU saturation as runnable work queued beyond the cores:
vmstat ``r`` (running + waiting for a CPU) well above the CPU count while idle is near zero means
threads wait for a core. A short burst is normal scheduling; it must hold for a window.

Averages hide one hot core (docs/background.md, "One hot core, disks, swap": mpstat showed one CPU at 100 %
while
vmstat said 88 % idle): ``single-cpu-saturation`` reads mpstat per CPU. ``cpu-steal`` is time the
hypervisor gave to other guests while ours wanted to run. ``context-switch-storm`` is scheduling
itself becoming the work (too many threads, mutex ping-pong).

Each rule is a detection function and, beside it, its ``RuleTexts`` (analyzer/texts.py).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.detect import (
    baseline,
    column_evidence,
    concurrent_load,
    held_seconds,
    load_rate_evidence,
    per_run,
    step_seconds,
    sustained_samples,
    vmstat_rate_evidence,
)
from analyzer.detect import busy as busy_pct
from analyzer.evidence import consumers
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import sustained, within

# ---------------------------------------------------------------------------------------------
# cpu-saturation
# ---------------------------------------------------------------------------------------------

RUNQUEUE_PER_CPU = (
    2.0  # r >= 2 x ncpu: every core has at least one thread waiting behind it (docs/background.md)
)
IDLE_MAX_PCT = 5.0  # with >5 % idle the cores are not all busy, so the queue is not CPU saturation
SUSTAINED_S = 5.0  # 5 s (5 samples at 1 s): longer than a scheduler burst or a cron job start
RUNQUEUE_SEVERE_PER_CPU = 4.0  # four threads per core: three of every four wait

CPU_SATURATION = RuleTexts(
    title="CPU saturated: run queue {r_median:.0f} on {ncpu} CPUs with no idle time",
    explanation=(
        "For {held:.0f} s the run queue (vmstat r) stayed at or above {per_cpu:g} threads per CPU "
        "while the CPUs were at most {idle_max:g} % idle: threads were waiting for a core. "
        "The server is CPU-bound in this window; latency grows with the queue."
    ),
    recommendation=(
        "Find the top CPU consumers in the window (top -H, or `ps -eLo pid,tid,pcpu,comm --sort=-pcpu | "
        "head`)\n"
        "and compare the run queue with the active MySQL sessions (SHOW FULL PROCESSLIST):\n"
        "if one query dominates, tune or cache it; otherwise cap concurrency at the application's\n"
        "connection pool, or add CPUs."
    ),
    caveats=(
        "vmstat r counts running and runnable threads of every process, not only mysqld.",
        "On a VM, high %st (steal) also shows as a long run queue: check the steal column.",
    ),
    sources=("Brendan Gregg, The USE Method (CPU saturation)", "vmstat(8)"),
    disproof=(
        "If `mpstat -P ALL` shows idle CPUs in the same window, the load is not CPU-bound but pinned "
        "or serialised."
    ),
)


#: The words when top shows another process, not MySQL, taking the CPUs (analyzer/evidence/consumers.py).
CPU_TAKEN_BY_OTHERS = dataclasses.replace(
    CPU_SATURATION,
    title="CPU saturated by {culprit}, not MySQL: run queue {r_median:.0f} on {ncpu} CPUs with no idle time",
    explanation=(
        "For {held:.0f} s the run queue (vmstat r) stayed at or above {per_cpu:g} threads per CPU "
        "while the CPUs were at most {idle_max:g} % idle ({us:.0f} % user, {sy:.0f} % system). {consumers} "
        "MySQL is not what makes the server CPU-bound here: its queries wait for the CPUs behind those "
        "processes."
    ),
    recommendation=(
        "Stop, move or throttle {culprit} (nice/ionice, cgroups, another host), or schedule it away from "
        "the\n"
        "database's busy hours; then look again at MySQL's own load."
    ),
)


#: vmstat's CPU shares quoted by cpu-saturation: (label, column, statistic, unit) as ``column_evidence`` takes
#: them.
CPU_SHARES = (
    ("user CPU us (mean)", "us", "mean1", "%"),
    ("system CPU sy (mean)", "sy", "mean1", "%"),
    ("idle id (mean)", "id", "mean1", "%"),
)


@rule(key="cpu-saturation", requires=("vmstat", "ncpu"), optional=("processlist", "top_procs", "ps_threads"))
def cpu_saturation(tl: Timeline) -> Finding | None:
    """vmstat r >= 2 x ncpu with id <= 5 % for SUSTAINED_S seconds (of each run of the primary capture)."""
    ncpu = tl.ncpu or 0
    windows: list[Window] = []
    step = 1.0
    for run in per_run(tl.frame("vmstat")):
        hot = (run["r"] >= RUNQUEUE_PER_CPU * ncpu) & (run["id"] <= IDLE_MAX_PCT)
        found = sustained(run["ts"], hot, min_samples=sustained_samples(run["ts"], SUSTAINED_S))
        if found:
            windows, step = windows + found, step_seconds(run["ts"])
    if not windows:
        return None
    vm = tl.frame("vmstat")
    rows = vm[within(vm["ts"], windows)]
    r_median = float(rows["r"].median())
    run_queue = (
        ("run queue r (max)", "r", "max", "threads"),
        ("run queue r (median)", "r", "median", "threads"),
    )
    evidence = column_evidence(tl, rows, "vmstat", run_queue)
    member, lines = tl.lines_of(rows)
    evidence += [
        Evidence("CPUs", ncpu, "cpus", "ncpu"),
        Evidence("r per CPU (median)", round(r_median / ncpu, 1), "threads/cpu", "vmstat.r", member, lines),
    ]
    evidence += column_evidence(tl, rows, "vmstat", CPU_SHARES)
    evidence += load_rate_evidence(tl, rows, ncpu)  # the switches and IPIs this load brings (not a storm)
    agree = ["vmstat"]
    active = _active_sessions(tl, windows)
    if len(active):
        evidence.append(
            Evidence("active sessions (max)", int(active.max()), "sessions", "processlist.active")
        )
        if active.max() >= ncpu:
            agree.append("processlist")
    held = held_seconds(windows, step)
    severe = r_median >= RUNQUEUE_SEVERE_PER_CPU * ncpu
    taken = consumers.cpu_consumers(tl, windows)
    if taken is not None and taken.mysql_quiet:
        found = CPU_TAKEN_BY_OTHERS.finding(
            "cpu-saturation",
            Severity.CRITICAL if severe else Severity.WARNING,
            windows,
            list(taken.evidence) + evidence,
            r_median=int(r_median),
            ncpu=ncpu,
            held=held,
            per_cpu=RUNQUEUE_PER_CPU,
            idle_max=IDLE_MAX_PCT,
            agree=" + ".join([*agree, "top"]),
            culprit=taken.names(1),
            consumers=consumers.describe(taken),
            us=float(rows["us"].mean()) if "us" in rows else float("nan"),
            sy=float(rows["sy"].mean()) if "sy" in rows else float("nan"),
        )
        return dataclasses.replace(found, culprit=taken.culprit())
    return CPU_SATURATION.finding(
        "cpu-saturation",
        Severity.CRITICAL if severe else Severity.WARNING,
        windows,
        evidence,
        r_median=int(r_median),
        ncpu=ncpu,
        held=held,
        per_cpu=RUNQUEUE_PER_CPU,
        idle_max=IDLE_MAX_PCT,
        agree=" + ".join(agree),
    )


def _active_sessions(tl: Timeline, windows: list[Window]) -> pd.Series:
    """Active sessions per processlist snapshot inside ``windows`` (empty without a processlist)."""
    pl = tl.frame("processlist")
    if not len(pl) or "active" not in pl:
        return pd.Series(dtype="int64")
    in_win = pl[within(pl["ts"], windows)]
    return in_win[in_win["active"].astype(bool)].groupby("ts").size()


# ---------------------------------------------------------------------------------------------
# single-cpu-saturation
# ---------------------------------------------------------------------------------------------

#: one CPU at >= 90 % busy has no headroom left (docs/background.md: "one core at 100 %"); 90 allows sampling
#: jitter
HOT_CPU_BUSY_PCT = 90.0
#: docs/background.md: with the all-CPU average at most half busy, vmstat/top look healthy and hide the hot
#: core
AVERAGE_BUSY_MAX_PCT = 50.0
# %irq + %soft at least half of the hot core's busy time: interrupts, not a thread, keep it busy
INTERRUPT_SHARE = 0.5

SINGLE_CPU_BY_THREAD = RuleTexts(
    title="CPU {cpu} saturated ({busy:.0f} % busy) while the {ncpu} CPUs average {average:.0f} % busy",
    explanation=(
        "For {held:.0f} s CPU {cpu} was {busy:.0f} % busy while the average over all {ncpu} CPUs, the "
        "figure vmstat and top show, was only {average:.0f} %. Its time is mostly %usr/%sys: a single "
        "thread is doing the work, and it cannot use the other cores. "
        "Work that depends on this core waits although the server looks mostly idle."
    ),
    recommendation=(
        "Find the thread running on CPU {cpu} (psr = the CPU it last ran on):\n"
        "  ps -eLo pid,tid,psr,pcpu,comm --sort=-pcpu | head\n"
        "  pidstat -t -u 1 5   (or top -H -p $(pidof mysqld))\n"
        "In MySQL the usual single-threaded work is the replication applier (replica_parallel_workers /\n"
        "slave_parallel_workers), one long query, purge, or a dump/ALTER: parallelise it or make it\n"
        "cheaper; adding cores will not help."
    ),
    caveats=(
        "Busy here is 100 - %idle - %iowait: %iowait is idle time with I/O outstanding, not CPU work.",
        (
            "A thread that migrates between cores spreads its load and escapes this check; top -H still "
            "shows "
            "it at 100 %."
        ),
        "On a VM, %steal counts as busy: the core was wanted but not available.",
    ),
    sources=(
        'Yoshinori Matsunobu, "Linux performance tuning & stabilization tips" (MySQL Conference & Expo 2010)',
        "mpstat(1), sysstat 12.6",
    ),
    confidence="{agree}; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If pidstat -t shows no thread near 100 % and /proc/interrupts shows no IRQ concentrated on CPU "
        "{cpu}, "
        "the hot core is many short tasks confined there (taskset/cpuset), not one thread."
    ),
)
SINGLE_CPU_BY_INTERRUPTS = dataclasses.replace(
    SINGLE_CPU_BY_THREAD,
    explanation=(
        "For {held:.0f} s CPU {cpu} was {busy:.0f} % busy while the average over all {ncpu} CPUs, the "
        "figure vmstat and top show, was only {average:.0f} %. {share_pct:.0f} % of that time went to "
        "hardware "
        "(%irq) and software (%soft) interrupts: the interrupts of one device, often a network card queue, "
        "are "
        "all handled by this core. Work that depends on this core waits although the server looks mostly "
        "idle."
    ),
    recommendation=(
        "Find the interrupts CPU {cpu} handles (compare two readings):\n"
        "  watch -d -n1 cat /proc/interrupts ; cat /proc/softirqs\n"
        "Spread them: run irqbalance (systemctl enable --now irqbalance), or move a busy device IRQ N:\n"
        "  echo <cpu-list> > /proc/irq/N/smp_affinity_list\n"
        "For a network card with a single receive queue enable RPS/RFS:\n"
        "  echo <hex-cpu-mask> > /sys/class/net/<dev>/queues/rx-0/rps_cpus\n"
        "  sysctl -w net.core.rps_sock_flow_entries=32768"
    ),
)


@dataclasses.dataclass(frozen=True, slots=True)
class _HotCpu:
    held: float
    busy: float
    cpu: int
    windows: list[Window]
    rows: pd.DataFrame
    average: pd.Series


def _hot_cpus(tl: Timeline) -> list[_HotCpu]:
    """Every CPU that was >= HOT_CPU_BUSY_PCT busy while the average was <= AVERAGE_BUSY_MAX_PCT,
    sustained, longest first."""
    hits: list[_HotCpu] = []
    for run in per_run(tl.frame("mpstat_cpu")):
        run = run.assign(busy=busy_pct(run))
        cpus = run[run["cpu"] >= 0]
        wide = cpus.pivot_table(index="ts", columns="cpu", values="busy", aggfunc="mean")
        if wide.shape[1] < 2:
            continue  # a single CPU cannot be hot "while the others idle"
        avg = run[run["cpu"] == -1].groupby("ts")["busy"].mean().reindex(wide.index)
        avg = avg.fillna(wide.mean(axis=1))
        ts = wide.index.to_series()
        need, step = sustained_samples(ts), step_seconds(ts)
        # one comparison for every CPU at once; only a CPU hot often enough can hold it sustained
        hot = (wide.to_numpy() >= HOT_CPU_BUSY_PCT) & (avg.to_numpy() <= AVERAGE_BUSY_MAX_PCT)[:, None]
        for cpu, column in zip(wide.columns, hot.T, strict=True):
            windows = sustained(ts, column, min_samples=need) if column.sum() >= need else []
            if windows:
                rows = cpus[(cpus["cpu"] == cpu) & within(cpus["ts"], windows)]
                held = held_seconds(windows, step)
                hits.append(
                    _HotCpu(
                        held, float(rows["busy"].median()), int(cpu), windows, rows, avg[within(ts, windows)]
                    )
                )
    return sorted(hits, key=lambda h: (-h.held, -h.busy, h.cpu))


@rule(key="single-cpu-saturation", requires=("mpstat_cpu",), optional=("vmstat",))
def single_cpu_saturation(tl: Timeline) -> Finding | None:
    """One CPU's busy >= HOT_CPU_BUSY_PCT while the all-CPU busy <= AVERAGE_BUSY_MAX_PCT, sustained.

    Input: ``mpstat_cpu`` (``mpstat -P ALL``, percent of CPU time per CPU, ``cpu`` -1 = all).
    Source: mpstat(1) (sysstat 12.6); docs/background.md.
    """
    hits = _hot_cpus(tl)
    if not hits:
        return None
    hot = hits[0]
    cpu, rows = hot.cpu, hot.rows
    ncpu = tl.ncpu or len(tl.frame("mpstat_cpu").query("cpu >= 0")["cpu"].unique())
    member, lines = tl.lines_of(rows)

    def med(col: str) -> float:
        return round(float(rows[col].median()), 1) if col in rows else 0.0

    share = (med("irq") + med("soft")) / hot.busy if hot.busy > 0 else 0.0
    evidence = [
        Evidence("hot CPU", cpu, "cpu", "mpstat_cpu.cpu", member, lines),
        Evidence(f"CPU {cpu} busy (median)", round(hot.busy, 1), "%", "mpstat_cpu.idle", member, lines),
    ]
    evidence += [
        Evidence(f"CPU {cpu} %{col} (median)", med(col), "%", f"mpstat_cpu.{col}", member, lines)
        for col in ("usr", "sys", "irq", "soft")
    ]
    evidence += [
        Evidence(
            f"CPU {cpu} %irq + %soft share of busy",
            round(share * 100, 1),
            "%",
            "mpstat_cpu.soft",
            member,
            lines,
        ),
        Evidence("all-CPU busy (mean)", round(float(hot.average.mean()), 1), "%", "mpstat_cpu.idle"),
        Evidence("CPUs", int(ncpu), "cpus", "ncpu"),
    ]
    others = sorted({h.cpu for h in hits[1:]} - {cpu})
    if others:
        evidence.append(
            Evidence("other saturated CPUs", ", ".join(map(str, others)), "cpu", "mpstat_cpu.cpu")
        )
    agree = ["mpstat"]
    vm = tl.frame("vmstat")
    vm_in = vm[within(vm["ts"], hot.windows)] if "id" in vm else vm.iloc[0:0]
    if len(vm_in):
        evidence += column_evidence(tl, vm_in, "vmstat", (("vmstat idle id (mean)", "id", "mean1", "%"),))
        if round(float(vm_in["id"].mean()), 1) >= 100 - AVERAGE_BUSY_MAX_PCT:
            agree.append("vmstat (the average that hides it)")
    texts = SINGLE_CPU_BY_INTERRUPTS if share >= INTERRUPT_SHARE else SINGLE_CPU_BY_THREAD
    return texts.finding(
        "single-cpu-saturation",
        Severity.WARNING,
        hot.windows,
        evidence,
        related=("interrupt-imbalance", "cpu-saturation"),
        cpu=cpu,
        busy=hot.busy,
        ncpu=ncpu,
        average=float(hot.average.mean()),
        held=hot.held,
        share_pct=share * 100,
        agree=" + ".join(agree),
    )


# ---------------------------------------------------------------------------------------------
# cpu-steal
# ---------------------------------------------------------------------------------------------

#: docs/background.md (common practice): a tenth of CPU time taken by the hypervisor is felt as latency
STEAL_PCT = 10.0
# almost a third of every CPU gone to other guests: the VM runs as if it had a third fewer cores
STEAL_CRITICAL_PCT = 30.0

CPU_STEAL = RuleTexts(
    title="CPU steal {peak:.0f} %: the hypervisor gave this VM's CPU time to other guests",
    explanation=(
        "For {held:.0f} s, {peak:.0f} % of CPU time was stolen: the virtual CPUs had work to run but the "
        "hypervisor was running another virtual machine. Queries slow down although the server itself "
        "does not look busier; the cause is outside this VM."
    ),
    recommendation=(
        "This is not fixed inside the VM. Ask the provider or the virtualisation team about contention on\n"
        "the host (VMware: CPU Ready; KVM: host load), move the VM to a less loaded host or a dedicated\n"
        "host, or use a larger / non-burstable instance type. On burstable cloud instances (e.g. AWS T\n"
        "family) steal also appears when CPU credits run out: check the credit balance.\n"
        "Watch it per CPU: mpstat -P ALL 1 (%steal)."
    ),
    caveats=(
        (
            "Only paravirtualised guests report steal; 0 % on some hypervisors does not prove there is no "
            "contention."
        ),
        "Steal accrues only when the guest wants CPU: an idle VM shows little steal even on a crowded host.",
    ),
    sources=(
        "vmstat(8): st, time stolen from a virtual machine",
        "mpstat(1): %steal",
        "Linux Documentation/filesystems/proc.rst (steal)",
    ),
    confidence="{agree} {verb}; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If the host (hypervisor) shows this VM's vCPUs never waiting to run (CPU Ready ~0), the "
        "steal figure is an accounting artefact."
    ),
)


def _steal_windows(tl: Timeline) -> dict[str, tuple[list[Window], float]]:
    """Sustained steal windows and the series' step, by source ("vmstat", "mpstat")."""
    found_by: dict[str, tuple[list[Window], float]] = {}
    for run in per_run(tl.frame("vmstat")):
        if "st" in run:
            found = sustained(run["ts"], run["st"] >= STEAL_PCT, min_samples=sustained_samples(run["ts"]))
            if found:
                found_by["vmstat"] = (found_by.get("vmstat", ([], 1.0))[0] + found, step_seconds(run["ts"]))
    for run in per_run(tl.frame("mpstat_cpu")):
        if "steal" not in run:
            continue
        all_rows = run[run["cpu"] == -1]
        if not len(all_rows):
            all_rows = run[run["cpu"] >= 0].groupby("ts", as_index=False)["steal"].mean()
        ts = all_rows["ts"]
        found = sustained(ts, all_rows["steal"] >= STEAL_PCT, min_samples=sustained_samples(ts))
        if found:
            found_by["mpstat"] = (found_by.get("mpstat", ([], 1.0))[0] + found, step_seconds(ts))
    return found_by


@rule(key="cpu-steal", any_of=(("vmstat", "mpstat_cpu"),))
def cpu_steal(tl: Timeline) -> Finding | None:
    """vmstat ``st`` or mpstat all-CPU ``%steal`` >= STEAL_PCT, sustained.

    Input: ``vmstat`` (``st``, percent), ``mpstat_cpu`` (``steal`` per CPU, percent).
    Source: vmstat(8) ("st: time stolen from a virtual machine"); mpstat(1) %steal.
    """
    found_by = _steal_windows(tl)
    # vmstat is the primary series (every bundle has it); mpstat's windows are used when only it saw steal
    windows, step = found_by.get("vmstat") or found_by.get("mpstat") or ([], 1.0)
    if not windows:
        return None
    windows = sorted(windows, key=lambda w: w.start)
    evidence: list[Evidence] = []
    peak = 0.0
    vm = tl.frame("vmstat")
    vm_in = vm[within(vm["ts"], windows)] if "st" in vm else vm.iloc[0:0]
    if len(vm_in):
        peak = float(vm_in["st"].median())
        evidence += column_evidence(
            tl,
            vm_in,
            "vmstat",
            (
                ("steal st (median)", "st", "median1", "%"),
                ("steal st (max)", "st", "max1", "%"),
                ("user us (mean)", "us", "mean1", "%"),
                ("system sy (mean)", "sy", "mean1", "%"),
                ("idle id (mean)", "id", "mean1", "%"),
            ),
        )
    mp = tl.frame("mpstat_cpu")
    mp_in = mp[within(mp["ts"], windows) & (mp["cpu"] >= 0)] if "steal" in mp else mp.iloc[0:0]
    if len(mp_in):
        member, lines = tl.lines_of(mp_in)
        per_cpu = mp_in.groupby("cpu")["steal"].median().sort_values(ascending=False)
        peak = max(peak, float(per_cpu.mean()))
        label = "mpstat %steal, all CPUs (mean of medians)"
        evidence.append(
            Evidence(label, round(float(per_cpu.mean()), 1), "%", "mpstat_cpu.steal", member, lines)
        )
        evidence += [
            Evidence(
                f"CPU {int(c)} %steal (median)", round(float(v), 1), "%", "mpstat_cpu.steal", member, lines
            )
            for c, v in per_cpu.head(3).items()
        ]
    agree = list(found_by)
    return CPU_STEAL.finding(
        "cpu-steal",
        Severity.CRITICAL if peak >= STEAL_CRITICAL_PCT else Severity.WARNING,
        windows,
        evidence,
        related=("cpu-saturation",),
        peak=peak,
        held=held_seconds(windows, step),
        agree=" + ".join(agree),
        verb="agree" if len(agree) > 1 else "shows it",
    )


# ---------------------------------------------------------------------------------------------
# context-switch-storm
# ---------------------------------------------------------------------------------------------

# A context switch costs a few microseconds of direct work plus cache refills (Tsuna, "How long
# does it take to make a context switch?", 2010: about 2-5 us). At 50k switches/s on one CPU that
# is 10-25 % of the CPU spent switching, before any useful work: a storm whatever the baseline.
CS_PER_CPU_MAX = (
    50_000  # docs/background.md's "50,000/s", taken per CPU (a 64-core box does 50k in total at ease)
)
CS_PER_CPU_CRITICAL = 100_000  # 25-50 % of every CPU spent switching
CS_BASELINE_FACTOR = 5.0  # five times the capture's own quiet level: a change of regime, not load noise
# ...and at least 20k/s per CPU (~5-10 % of a CPU switching): below it a rise is ordinary load
CS_PER_CPU_FLOOR = 20_000

CONTEXT_SWITCH_STORM = RuleTexts(
    title="Context-switch storm: {cs:,} switches/s ({per_cpu:,} per CPU)",
    explanation=(
        "For {held:.0f} s the CPUs switched between threads about {per_cpu:,} times per second each. "
        "Each switch costs a few microseconds plus cold caches, so a large share of the CPU goes to "
        "scheduling instead of queries. It usually means more runnable threads than cores, or threads "
        "waking each other on a contended lock.{with_load}"
    ),
    recommendation=(
        "See which threads switch and why:\n"
        "  pidstat -wt 1 5   (cswch/s voluntary = blocking on locks or I/O; nvcswch/s involuntary = too "
        "many runnable threads)\n"
        "In MySQL compare Threads_running with the CPU count and look for mutex waits\n"
        "(SHOW ENGINE INNODB STATUS\\G, SEMAPHORES). Cap concurrency: the application's connection pool,\n"
        "thread_handling=pool-of-threads (MariaDB / Percona Server), or\n"
        "  SET GLOBAL innodb_thread_concurrency = <about the number of CPUs>;"
    ),
    caveats=(
        "vmstat cs counts every process's switches, not only mysqld's.",
        (
            "The baseline is this capture's own quiet part; a capture taken entirely during the problem has "
            "only the fixed bar."
        ),
    ),
    sources=(
        "vmstat(8): cs",
        "Tsuna, How long does it take to make a context switch? (2010)",
        "MySQL 8.4 Reference Manual, innodb_thread_concurrency",
    ),
    confidence="vmstat; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If pidstat -w shows the switches come from a process other than mysqld (a monitoring agent, "
        "a busy-polling daemon), the database is not the cause."
    ),
)


@rule(key="context-switch-storm", requires=("vmstat", "ncpu"))
def context_switch_storm(tl: Timeline) -> Finding | None:
    """vmstat cs per CPU >= CS_PER_CPU_MAX, or >= CS_BASELINE_FACTOR x the capture's quiet level and
    >= CS_PER_CPU_FLOOR, sustained.

    Input: ``vmstat`` (``cs``, ``in`` per second; ``r``), ``ncpu``. Source: vmstat(8); docs/background.md.
    """
    ncpu = tl.ncpu or 0
    windows: list[Window] = []
    step = 1.0
    base_per_cpu: float | None = None
    for run in per_run(tl.frame("vmstat")):
        per_cpu = run["cs"] / ncpu
        base = baseline(per_cpu)
        hot = per_cpu >= CS_PER_CPU_MAX
        if base is not None:
            hot |= (per_cpu >= CS_BASELINE_FACTOR * base) & (per_cpu >= CS_PER_CPU_FLOOR)
        found = sustained(run["ts"], hot, min_samples=sustained_samples(run["ts"]))
        if found:
            windows, step = windows + found, step_seconds(run["ts"])
            base_per_cpu = base if base_per_cpu is None else base_per_cpu
    if not windows:
        return None
    rows, per_cpu_med, evidence = vmstat_rate_evidence(tl, windows, "cs", "context switches cs", ncpu)
    load = concurrent_load(tl, windows, ncpu)
    if load and per_cpu_med < CS_PER_CPU_CRITICAL:
        return None  # threads of that load switching: its evidence (cpu-saturation, disk-saturation)
    if base_per_cpu and per_cpu_med >= CS_BASELINE_FACTOR * base_per_cpu:  # the capture has a quiet part
        evidence += [
            Evidence(
                "capture's quiet level, cs per CPU (10th percentile)",
                int(round(base_per_cpu)),
                ("/s per cpu"),
                "vmstat.cs",
            ),
            Evidence("rise over the quiet level", round(per_cpu_med / base_per_cpu, 1), "x", "vmstat.cs"),
        ]
    evidence += column_evidence(
        tl,
        rows,
        "vmstat",
        (
            ("interrupts in (median)", "in", "median0", "/s"),
            ("run queue r (median)", "r", "median", "threads"),
            ("system CPU sy (mean)", "sy", "mean1", "%"),
        ),
    )
    severe = per_cpu_med >= CS_PER_CPU_CRITICAL
    return CONTEXT_SWITCH_STORM.finding(
        "context-switch-storm",
        Severity.CRITICAL if severe else Severity.WARNING,
        windows,
        evidence,
        related=("cpu-saturation", "interrupt-storm"),
        cs=int(per_cpu_med * ncpu),
        per_cpu=round(per_cpu_med),
        held=held_seconds(windows, step),
        with_load=f" {load[0].upper()}{load[1:]} ran in the same window, but it does not explain so many."
        if load
        else "",
    )
