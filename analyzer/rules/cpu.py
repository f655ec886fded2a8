"""CPU rules: run-queue saturation, one hot core, steal, context-switch storms.

The USE method (Brendan Gregg) reads CPU saturation as runnable work queued beyond the cores:
vmstat ``r`` (running + waiting for a CPU) well above the CPU count while idle is near zero means
threads wait for a core. A short burst is normal scheduling; it must hold for a window.

Averages hide one hot core (seed 004, Yoshinori Matsunobu: mpstat showed one CPU at 100 % while
vmstat said 88 % idle): ``single-cpu-saturation`` reads mpstat per CPU. ``cpu-steal`` is time the
hypervisor gave to other guests while ours wanted to run. ``context-switch-storm`` is scheduling
itself becoming the work (too many threads, mutex ping-pong).
"""

from __future__ import annotations

import pandas as pd

from analyzer.detect import (
    baseline,
    held_seconds,
    per_run,
    step_seconds,
    sustained_samples,
    vmstat_rate_evidence,
)
from analyzer.detect import (
    busy as busy_pct,
)
from analyzer.engine import rule
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.timeline import Timeline
from analyzer.windows import sustained, within

RUNQUEUE_PER_CPU = 2.0  # r >= 2 x ncpu: every core has at least one thread waiting behind it (FINDINGS.md)
IDLE_MAX_PCT = 5.0  # with >5 % idle the cores are not all busy, so the queue is not CPU saturation
SUSTAINED_SAMPLES = 5  # 5 consecutive 1 s samples: longer than a scheduler burst or a cron job start


@rule(key="cpu-saturation", requires=("vmstat", "ncpu"), optional=("processlist",))
def cpu_saturation(tl: Timeline) -> Finding | None:
    """vmstat r >= 2 x ncpu with id <= 5 % for at least SUSTAINED_SAMPLES samples."""
    vm = tl.frame("vmstat")
    ncpu = tl.ncpu or 0
    hot = (vm["r"] >= RUNQUEUE_PER_CPU * ncpu) & (vm["id"] <= IDLE_MAX_PCT)
    windows = sustained(vm["ts"], hot, min_samples=SUSTAINED_SAMPLES)
    if not windows:
        return None
    rows = vm[within(vm["ts"], windows)]
    member, lines = tl.lines_of(rows)
    held = held_seconds(windows, step_seconds(vm["ts"]))
    evidence = [
        Evidence("run queue r (max)", int(rows["r"].max()), "threads", "vmstat.r", member, lines),
        Evidence("run queue r (median)", float(rows["r"].median()), "threads", "vmstat.r", member, lines),
        Evidence("CPUs", ncpu, "cpus", "ncpu"),
        Evidence(
            "r per CPU (median)",
            round(float(rows["r"].median()) / ncpu, 1),
            "threads/cpu",
            "vmstat.r",
            member,
            lines,
        ),
        Evidence("user CPU us (mean)", round(float(rows["us"].mean()), 1), "%", "vmstat.us", member, lines),
        Evidence("system CPU sy (mean)", round(float(rows["sy"].mean()), 1), "%", "vmstat.sy", member, lines),
        Evidence("idle id (mean)", round(float(rows["id"].mean()), 1), "%", "vmstat.id", member, lines),
    ]
    agree = ["vmstat"]
    pl = tl.frame("processlist")
    if len(pl) and "active" in pl:
        in_win = pl[within(pl["ts"], windows)]
        if len(in_win):
            active = in_win[in_win["active"]].groupby("ts").size()
            if len(active):
                evidence.append(
                    Evidence("active sessions (max)", int(active.max()), "sessions", "processlist.active")
                )
                if active.max() >= ncpu:
                    agree.append("processlist")
    return Finding(
        key="cpu-saturation",
        severity=Severity.CRITICAL if rows["r"].median() >= 4 * ncpu else Severity.WARNING,
        title=f"CPU saturated: run queue {int(rows['r'].median())} on {ncpu} CPUs with no idle time",
        explanation=(
            f"For {held:.0f} s the run queue (vmstat r) stayed at or above {RUNQUEUE_PER_CPU:g} threads per CPU "
            f"while the CPUs were at most {IDLE_MAX_PCT:g} % idle: threads were waiting for a core. "
            "The server is CPU-bound in this window; latency grows with the queue."
        ),
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=(
            "Find the top CPU consumers in the window (top -H, or `ps -eLo pid,tid,pcpu,comm --sort=-pcpu | head`)\n"
            "and compare the run queue with the active MySQL sessions (SHOW FULL PROCESSLIST):\n"
            "if one query dominates, tune or cache it; otherwise cap concurrency at the application's\n"
            "connection pool, or add CPUs."
        ),
        caveats=(
            "vmstat r counts running and runnable threads of every process, not only mysqld.",
            "On a VM, high %st (steal) also shows as a long run queue: check the steal column.",
        ),
        sources=("Brendan Gregg, The USE Method (CPU saturation)", "vmstat(8)"),
        confidence=f"{' + '.join(agree)} agree; held {held:.0f} s in {len(windows)} window(s)",
        disproof="If `mpstat -P ALL` shows idle CPUs in the same window, the load is not CPU-bound but pinned or serialised.",
    )


# ---------------------------------------------------------------------------------------------
# single-cpu-saturation
# ---------------------------------------------------------------------------------------------

HOT_CPU_BUSY_PCT = 90.0  # one CPU at >= 90 % busy has no headroom left (seed 004: "one core at 100 %"); 90 allows sampling jitter
AVERAGE_BUSY_MAX_PCT = 50.0  # FINDINGS.md: with the all-CPU average at most half busy, vmstat/top look healthy and hide the hot core
# %irq + %soft at least half of the hot core's busy time: interrupts, not a thread, keep it busy
INTERRUPT_SHARE = 0.5


@rule(key="single-cpu-saturation", requires=("mpstat_cpu",), optional=("vmstat",))
def single_cpu_saturation(tl: Timeline) -> Finding | None:
    """One CPU's busy >= HOT_CPU_BUSY_PCT while the all-CPU busy <= AVERAGE_BUSY_MAX_PCT, sustained.

    Input: ``mpstat_cpu`` (``mpstat -P ALL``, percent of CPU time per CPU, ``cpu`` -1 = all).
    Source: seed 004; mpstat(1) (sysstat 12.6).
    """
    hits: list[tuple[float, float, int, list[Window], pd.DataFrame, pd.Series]] = []
    for run in per_run(tl.frame("mpstat_cpu")):
        run = run.assign(busy=busy_pct(run))
        cpus = run[run["cpu"] >= 0]
        wide = cpus.pivot_table(index="ts", columns="cpu", values="busy", aggfunc="mean")
        if wide.shape[1] < 2:
            continue  # a single CPU cannot be hot "while the others idle"
        avg = run[run["cpu"] == -1].groupby("ts")["busy"].mean().reindex(wide.index)
        avg = avg.fillna(wide.mean(axis=1))
        ts = wide.index.to_series()
        need = sustained_samples(ts)
        step = step_seconds(ts)
        for cpu in wide.columns:
            windows = sustained(
                ts, (wide[cpu] >= HOT_CPU_BUSY_PCT) & (avg <= AVERAGE_BUSY_MAX_PCT), min_samples=need
            )
            if windows:
                rows = cpus[(cpus["cpu"] == cpu) & within(cpus["ts"], windows)]
                avg_in = avg[within(ts, windows)]
                hits.append(
                    (
                        held_seconds(windows, step),
                        float(rows["busy"].median()),
                        int(cpu),
                        windows,
                        rows,
                        avg_in,
                    )
                )
    if not hits:
        return None
    hits.sort(key=lambda h: (-h[0], -h[1], h[2]))
    held, busy, cpu, windows, rows, avg_in = hits[0]
    ncpu = tl.ncpu or len(tl.frame("mpstat_cpu").query("cpu >= 0")["cpu"].unique())
    member, lines = tl.lines_of(rows)

    def med(col: str) -> float:
        return round(float(rows[col].median()), 1) if col in rows else 0.0

    irq_soft = med("irq") + med("soft")
    share = irq_soft / busy if busy > 0 else 0.0
    by_interrupts = share >= INTERRUPT_SHARE
    others = sorted({h[2] for h in hits[1:]} - {cpu})
    evidence = [
        Evidence("hot CPU", cpu, "cpu", "mpstat_cpu.cpu", member, lines),
        Evidence(f"CPU {cpu} busy (median)", round(busy, 1), "%", "mpstat_cpu.idle", member, lines),
        Evidence(f"CPU {cpu} %usr (median)", med("usr"), "%", "mpstat_cpu.usr", member, lines),
        Evidence(f"CPU {cpu} %sys (median)", med("sys"), "%", "mpstat_cpu.sys", member, lines),
        Evidence(f"CPU {cpu} %irq (median)", med("irq"), "%", "mpstat_cpu.irq", member, lines),
        Evidence(f"CPU {cpu} %soft (median)", med("soft"), "%", "mpstat_cpu.soft", member, lines),
        Evidence(
            f"CPU {cpu} %irq + %soft share of busy",
            round(share * 100, 1),
            "%",
            "mpstat_cpu.soft",
            member,
            lines,
        ),
        Evidence("all-CPU busy (mean)", round(float(avg_in.mean()), 1), "%", "mpstat_cpu.idle"),
        Evidence("CPUs", int(ncpu), "cpus", "ncpu"),
    ]
    if others:
        evidence.append(
            Evidence("other saturated CPUs", ", ".join(map(str, others)), "cpu", "mpstat_cpu.cpu")
        )
    agree = ["mpstat"]
    vm = tl.frame("vmstat")
    if len(vm) and "id" in vm:
        vm_in = vm[within(vm["ts"], windows)]
        if len(vm_in):
            vm_idle = round(float(vm_in["id"].mean()), 1)
            vm_member, vm_lines = tl.lines_of(vm_in)
            evidence.append(Evidence("vmstat idle id (mean)", vm_idle, "%", "vmstat.id", vm_member, vm_lines))
            if vm_idle >= 100 - AVERAGE_BUSY_MAX_PCT:
                agree.append("vmstat (the average that hides it)")
    cause = (
        f"{share * 100:.0f} % of that time went to hardware (%irq) and software (%soft) interrupts: the "
        "interrupts of one device, often a network card queue, are all handled by this core."
        if by_interrupts
        else "Its time is mostly %usr/%sys: a single thread is doing the work, and it cannot use the other cores."
    )
    if by_interrupts:
        recommendation = (
            f"Find the interrupts CPU {cpu} handles (compare two readings):\n"
            "  watch -d -n1 cat /proc/interrupts ; cat /proc/softirqs\n"
            "Spread them: run irqbalance (systemctl enable --now irqbalance), or move a busy device IRQ N:\n"
            "  echo <cpu-list> > /proc/irq/N/smp_affinity_list\n"
            "For a network card with a single receive queue enable RPS/RFS:\n"
            "  echo <hex-cpu-mask> > /sys/class/net/<dev>/queues/rx-0/rps_cpus\n"
            "  sysctl -w net.core.rps_sock_flow_entries=32768"
        )
    else:
        recommendation = (
            f"Find the thread running on CPU {cpu} (psr = the CPU it last ran on):\n"
            "  ps -eLo pid,tid,psr,pcpu,comm --sort=-pcpu | head\n"
            "  pidstat -t -u 1 5   (or top -H -p $(pidof mysqld))\n"
            "In MySQL the usual single-threaded work is the replication applier (replica_parallel_workers /\n"
            "slave_parallel_workers), one long query, purge, or a dump/ALTER: parallelise it or make it\n"
            "cheaper; adding cores will not help."
        )
    return Finding(
        key="single-cpu-saturation",
        severity=Severity.WARNING,
        title=f"CPU {cpu} saturated ({busy:.0f} % busy) while the {ncpu} CPUs average {float(avg_in.mean()):.0f} % busy",
        explanation=(
            f"For {held:.0f} s CPU {cpu} was {busy:.0f} % busy while the average over all {ncpu} CPUs, the "
            f"figure vmstat and top show, was only {float(avg_in.mean()):.0f} %. {cause} "
            "Work that depends on this core waits although the server looks mostly idle."
        ),
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=recommendation,
        caveats=(
            "Busy here is 100 - %idle - %iowait: %iowait is idle time with I/O outstanding, not CPU work.",
            "A thread that migrates between cores spreads its load and escapes this check; top -H still shows it at 100 %.",
            "On a VM, %steal counts as busy: the core was wanted but not available.",
        ),
        sources=(
            "seed 004 (Yoshinori Matsunobu: one core at 100 % while vmstat shows 88 % idle)",
            "mpstat(1), sysstat 12.6",
        ),
        confidence=f"{' + '.join(agree)}; held {held:.0f} s in {len(windows)} window(s)",
        disproof=(
            f"If pidstat -t shows no thread near 100 % and /proc/interrupts shows no IRQ concentrated on CPU {cpu}, "
            "the hot core is many short tasks confined there (taskset/cpuset), not one thread."
        ),
        related=("interrupt-imbalance", "cpu-saturation"),
    )


# ---------------------------------------------------------------------------------------------
# cpu-steal
# ---------------------------------------------------------------------------------------------

STEAL_PCT = 10.0  # FINDINGS.md (classic): a tenth of CPU time taken by the hypervisor is felt as latency
# almost a third of every CPU gone to other guests: the VM runs as if it had a third fewer cores
STEAL_CRITICAL_PCT = 30.0


@rule(key="cpu-steal", any_of=(("vmstat", "mpstat_cpu"),))
def cpu_steal(tl: Timeline) -> Finding | None:
    """vmstat ``st`` or mpstat all-CPU ``%steal`` >= STEAL_PCT, sustained.

    Input: ``vmstat`` (``st``, percent), ``mpstat_cpu`` (``steal`` per CPU, percent).
    Source: vmstat(8) ("st: time stolen from a virtual machine"); mpstat(1) %steal.
    """
    found_by: dict[str, tuple[list[Window], float]] = {}
    for run in per_run(tl.frame("vmstat")):
        if "st" in run:
            found = sustained(run["ts"], run["st"] >= STEAL_PCT, min_samples=sustained_samples(run["ts"]))
            if found:
                prior = found_by.get("vmstat", ([], 1.0))[0]
                found_by["vmstat"] = (prior + found, step_seconds(run["ts"]))
    mp = tl.frame("mpstat_cpu")
    for run in per_run(mp):
        if "steal" not in run:
            continue
        all_rows = run[run["cpu"] == -1]
        if not len(all_rows):
            all_rows = run[run["cpu"] >= 0].groupby("ts", as_index=False)["steal"].mean()
        found = sustained(
            all_rows["ts"], all_rows["steal"] >= STEAL_PCT, min_samples=sustained_samples(all_rows["ts"])
        )
        if found:
            prior = found_by.get("mpstat", ([], 1.0))[0]
            found_by["mpstat"] = (prior + found, step_seconds(all_rows["ts"]))
    agree = list(found_by)
    # vmstat is the primary series (every bundle has it); mpstat's windows are used when only it saw steal
    windows, step = found_by.get("vmstat") or found_by.get("mpstat") or ([], 1.0)
    if not windows:
        return None
    windows.sort(key=lambda w: w.start)
    held = held_seconds(windows, step)
    evidence: list[Evidence] = []
    peak = 0.0
    vm = tl.frame("vmstat")
    vm_in = vm[within(vm["ts"], windows)] if "st" in vm else vm.iloc[0:0]
    if len(vm_in):
        member, lines = tl.lines_of(vm_in)
        peak = float(vm_in["st"].median())
        evidence += [
            Evidence("steal st (median)", round(peak, 1), "%", "vmstat.st", member, lines),
            Evidence("steal st (max)", round(float(vm_in["st"].max()), 1), "%", "vmstat.st", member, lines),
            Evidence("user us (mean)", round(float(vm_in["us"].mean()), 1), "%", "vmstat.us", member, lines),
            Evidence(
                "system sy (mean)", round(float(vm_in["sy"].mean()), 1), "%", "vmstat.sy", member, lines
            ),
            Evidence("idle id (mean)", round(float(vm_in["id"].mean()), 1), "%", "vmstat.id", member, lines),
        ]
    mp_in = mp[within(mp["ts"], windows) & (mp["cpu"] >= 0)] if "steal" in mp else mp.iloc[0:0]
    if len(mp_in):
        member, lines = tl.lines_of(mp_in)
        per_cpu = mp_in.groupby("cpu")["steal"].median().sort_values(ascending=False)
        all_med = float(per_cpu.mean())
        peak = max(peak, all_med)
        evidence.append(
            Evidence(
                "mpstat %steal, all CPUs (mean of medians)",
                round(all_med, 1),
                "%",
                "mpstat_cpu.steal",
                member,
                lines,
            )
        )
        evidence += [
            Evidence(
                f"CPU {int(c)} %steal (median)", round(float(v), 1), "%", "mpstat_cpu.steal", member, lines
            )
            for c, v in per_cpu.head(3).items()
        ]
    return Finding(
        key="cpu-steal",
        severity=Severity.CRITICAL if peak >= STEAL_CRITICAL_PCT else Severity.WARNING,
        title=f"CPU steal {peak:.0f} %: the hypervisor gave this VM's CPU time to other guests",
        explanation=(
            f"For {held:.0f} s, {peak:.0f} % of CPU time was stolen: the virtual CPUs had work to run but the "
            "hypervisor was running another virtual machine. Queries slow down although the server itself "
            "does not look busier; the cause is outside this VM."
        ),
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=(
            "This is not fixed inside the VM. Ask the provider or the virtualisation team about contention on\n"
            "the host (VMware: CPU Ready; KVM: host load), move the VM to a less loaded host or a dedicated\n"
            "host, or use a larger / non-burstable instance type. On burstable cloud instances (e.g. AWS T\n"
            "family) steal also appears when CPU credits run out: check the credit balance.\n"
            "Watch it per CPU: mpstat -P ALL 1 (%steal)."
        ),
        caveats=(
            "Only paravirtualised guests report steal; 0 % on some hypervisors does not prove there is no contention.",
            "Steal accrues only when the guest wants CPU: an idle VM shows little steal even on a crowded host.",
        ),
        sources=(
            "vmstat(8): st, time stolen from a virtual machine",
            "mpstat(1): %steal",
            "FINDINGS.md (classic)",
        ),
        confidence=f"{' + '.join(agree)} {'agree' if len(agree) > 1 else 'shows it'}; held {held:.0f} s in {len(windows)} window(s)",
        disproof="If the host (hypervisor) shows this VM's vCPUs never waiting to run (CPU Ready ~0), the steal figure is an accounting artefact.",
        related=("cpu-saturation",),
    )


# ---------------------------------------------------------------------------------------------
# context-switch-storm
# ---------------------------------------------------------------------------------------------

# A context switch costs a few microseconds of direct work plus cache refills (Tsuna, "How long
# does it take to make a context switch?", 2010: about 2-5 us). At 50k switches/s on one CPU that
# is 10-25 % of the CPU spent switching, before any useful work: a storm whatever the baseline.
CS_PER_CPU_MAX = 50_000  # FINDINGS.md's "> 50k", taken per CPU (a 64-core box does 50k in total at ease)
CS_PER_CPU_CRITICAL = 100_000  # 25-50 % of every CPU spent switching
CS_BASELINE_FACTOR = 5.0  # five times the capture's own quiet level: a change of regime, not load noise
# ...and at least 20k/s per CPU (~5-10 % of a CPU switching): below it a rise is ordinary load
CS_PER_CPU_FLOOR = 20_000


@rule(key="context-switch-storm", requires=("vmstat", "ncpu"))
def context_switch_storm(tl: Timeline) -> Finding | None:
    """vmstat cs per CPU >= CS_PER_CPU_MAX, or >= CS_BASELINE_FACTOR x the capture's quiet level and
    >= CS_PER_CPU_FLOOR, sustained.

    Input: ``vmstat`` (``cs``, ``in`` per second; ``r``), ``ncpu``. Source: vmstat(8); FINDINGS.md.
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
            windows += found
            step = step_seconds(run["ts"])
            base_per_cpu = base if base_per_cpu is None and base is not None else base_per_cpu
    if not windows:
        return None
    rows, per_cpu_med, evidence = vmstat_rate_evidence(tl, windows, "cs", "context switches cs", ncpu)
    member, lines = tl.lines_of(rows)
    cs_med = per_cpu_med * ncpu
    held = held_seconds(windows, step)
    if base_per_cpu and per_cpu_med >= CS_BASELINE_FACTOR * base_per_cpu:  # the capture has a quiet part
        evidence += [
            Evidence(
                "capture's quiet level, cs per CPU (10th percentile)",
                int(round(base_per_cpu)),
                "/s per cpu",
                "vmstat.cs",
            ),
            Evidence("rise over the quiet level", round(per_cpu_med / base_per_cpu, 1), "x", "vmstat.cs"),
        ]
    evidence += [
        Evidence("interrupts in (median)", int(rows["in"].median()), "/s", "vmstat.in", member, lines),
        Evidence("run queue r (median)", float(rows["r"].median()), "threads", "vmstat.r", member, lines),
        Evidence("system CPU sy (mean)", round(float(rows["sy"].mean()), 1), "%", "vmstat.sy", member, lines),
    ]
    return Finding(
        key="context-switch-storm",
        severity=Severity.CRITICAL if per_cpu_med >= CS_PER_CPU_CRITICAL else Severity.WARNING,
        title=f"Context-switch storm: {int(cs_med):,} switches/s ({round(per_cpu_med):,} per CPU)",
        explanation=(
            f"For {held:.0f} s the CPUs switched between threads about {round(per_cpu_med):,} times per second each. "
            "Each switch costs a few microseconds plus cold caches, so a large share of the CPU goes to "
            "scheduling instead of queries. It usually means more runnable threads than cores, or threads "
            "waking each other on a contended lock."
        ),
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=(
            "See which threads switch and why:\n"
            "  pidstat -wt 1 5   (cswch/s voluntary = blocking on locks or I/O; nvcswch/s involuntary = too many runnable threads)\n"
            "In MySQL compare Threads_running with the CPU count and look for mutex waits\n"
            "(SHOW ENGINE INNODB STATUS\\G, SEMAPHORES). Cap concurrency: the application's connection pool,\n"
            "thread_handling=pool-of-threads (MariaDB / Percona Server), or\n"
            "  SET GLOBAL innodb_thread_concurrency = <about the number of CPUs>;"
        ),
        caveats=(
            "vmstat cs counts every process's switches, not only mysqld's.",
            "The baseline is this capture's own quiet part; a capture taken entirely during the problem has only the fixed bar.",
        ),
        sources=(
            "vmstat(8): cs",
            "Tsuna, How long does it take to make a context switch? (2010)",
            "FINDINGS.md (classic; seed 003)",
        ),
        confidence=f"vmstat; held {held:.0f} s in {len(windows)} window(s)",
        disproof="If pidstat -w shows the switches come from a process other than mysqld (a monitoring agent, a busy-polling daemon), the database is not the cause.",
        related=("cpu-saturation", "interrupt-storm"),
    )
