"""Cross-source rules: OS evidence (vmstat, ps threads, iostat) joined with MySQL evidence at the same moment.

The seeds' lesson is that single metrics mislead, and the explanation appears when sources are read
side by side:

- **load-from-uninterruptible-threads** (seed 000): load average 588 on 14 cores while the CPUs were
  40-50 % idle. Linux load counts threads in uninterruptible sleep (D) as well as runnable ones; ps
  showed 547 ``mysqld`` threads in D in ``unlinkat`` (deleting temporary-table files) while the
  sessions were in ``removing tmp table``. vmstat ``b`` and ``%wa`` count only threads waiting for
  block I/O (``nr_iowait``), not those sleeping in D on a kernel lock such as a directory's inode
  lock, so they can stay low while the load explodes.
- **commit-serialization** (seed 001): 64 sysbench threads on 2 cores, idle 40-50 %, iowait in single
  digits, yet most sessions sat at ``COMMIT``: with innodb_flush_log_at_trx_commit=1 on disks without
  a battery-backed cache, every commit waits for the redo-log fsync, and only one thread flushes while
  the others wait on a mutex/condition, which the kernel counts as idle, not iowait.
- **iowait-understates-io** (seed 001): idle + iowait high while far more work is queued than there are
  cores: read idle + iowait as available CPU and look for the serialisation point.

Sources: Brendan Gregg, "Linux Load Averages: Solving the Mystery" (2017); seed 001 (a Russian
translation of the Percona blog post "Don't trust vmstat iowait numbers"); Linux fs/proc/stat.c
(``procs_blocked`` = ``nr_iowait()``).
"""

from __future__ import annotations

import pandas as pd

from analyzer import join
from analyzer.detect import (
    available_cpu,
    count_per_snapshot,
    d_threads_bar,
    held_seconds,
    merge_windows,
    nearest,
    need,
    snapshots,
    state_in,
    status,
    step_seconds,
    top_values,
    variable,
    within_slack,
)
from analyzer.engine import rule
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.timeline import Timeline, value_is
from analyzer.windows import sustained, within

#: idle + iowait >= 30 %: the CPUs have room, so the load is not CPU work (FINDINGS.md, seed 000:
#: 40-50 % idle with a load of 588 on 14 cores).
AVAILABLE_CPU_MIN_PCT = 30.0
#: 3 consecutive ps snapshots (3 s with the collector) and 5 consecutive vmstat samples (as
#: cpu-saturation): longer than a burst of file deletions or a journal commit.
MIN_PS_SNAPSHOTS = 3
SUSTAINED_SAMPLES = 5
#: Critical when the D threads alone are 4 x the cores: the load average is then mostly waiting.
D_SEVERE_PER_CPU = 4.0
#: Wait channels named in the evidence.
TOP_WCHANS = 3

# commit-serialization -----------------------------------------------------------------------------
#: States of a session in the commit phase (MySQL 8.0 ``waiting for handler commit``; 5.6/5.7 autocommit
#: statements flush the binlog and redo in ``query end``; MariaDB/Percona ``Commit``); a session whose
#: Info is ``COMMIT`` counts whatever its State (seed 001 shows State NULL, MySQL 8.0 ``starting``).
COMMIT_STATES = frozenset({"waiting for handler commit", "query end", "commit", "committing"})
#: Group commit makes a few sessions wait together as a matter of course; eight or more at once, and
#: a third of the active sessions, held for 3 snapshots, is a queue behind the flush (seed 001: most
#: of 64).
COMMIT_MIN_SESSIONS = 8
COMMIT_MIN_SHARE = 0.30
#: iowait below 10 % while commits queue is seed 001's "iowait understates the waits" (it showed 1-14 %).
IOWAIT_LOW_PCT = 10.0

# iowait-understates-io ----------------------------------------------------------------------------
#: idle + iowait >= 40 % (FINDINGS.md; seed 001: 40-55 %)...
IDLE_PLUS_WAIT_MIN_PCT = 40.0
#: ...while runnable/blocked work is >= 2 x the cores: with that much queued, a CPU-bound server
#: would have no idle time (USE method saturation; seed 001: 64 sessions on 2 cores)...
QUEUED_PER_CPU = 2.0
#: ...and at least half of that available time shows as idle, not iowait: the finding is that the
#: waits are NOT counted as iowait (seed 001: id 40-50 %, wa 1-14 %). When wa itself is high, the
#: kernel does show the I/O wait (a disk-bound load), and nothing is understated.
IDLE_SHARE_OF_AVAILABLE_MIN = 0.5


@rule(
    key="load-from-uninterruptible-threads",
    requires=("vmstat",),
    optional=("ps_threads", "ncpu", "processlist", "pfs_threads", "top_load"),
)
def load_from_uninterruptible_threads(tl: Timeline) -> Finding | None:
    """Threads in D state (ps, else vmstat b) >= max(10, ncpu) while idle + iowait >= 30 %, sustained."""
    vm = tl.frame("vmstat")
    ncpu = tl.ncpu or 0
    bar = d_threads_bar(ncpu)
    available = available_cpu(vm)
    ps = tl.frame("ps_threads")
    windows: list[Window] = []
    d_all = pd.Series(dtype="int64")
    by_wchan = pd.DataFrame()
    if join.has_thread_states(ps):
        # Load counts every D thread, not only mysqld's: the threshold uses all of them, the
        # evidence says how many are the server's.
        d_all = join.d_threads_by_wchan(ps, mysqld_only=False).sum(axis=1).astype("int64")
        d_all = d_all.reindex(pd.Index(ps["ts"].drop_duplicates().sort_values()), fill_value=0)
        avail_at = nearest(d_all.index.to_series(), vm, available)
        hit = (d_all >= bar) & (avail_at >= AVAILABLE_CPU_MIN_PCT)
        windows += sustained(d_all.index.to_series(), hit, min_samples=need(len(d_all), MIN_PS_SNAPSHOTS))
        by_wchan = join.d_threads_by_wchan(ps, mysqld_only=True)
    vm_hit = (vm["b"] >= bar) & (available >= AVAILABLE_CPU_MIN_PCT)
    vm_windows = sustained(vm["ts"], vm_hit, min_samples=need(len(vm), SUSTAINED_SAMPLES))
    windows = merge_windows(windows + vm_windows)
    if not windows:
        return None

    tol = join.join_tolerance(vm["ts"], ps["ts"] if len(ps) else vm["ts"])
    vm_in = vm[within_slack(vm["ts"], windows, tol)]
    evidence: list[Evidence] = []
    agree: list[str] = []
    peak_d, median_d, dominant = 0, 0.0, ""
    if len(d_all) and within(d_all.index.to_series(), windows).any():
        d_in = d_all[within(d_all.index.to_series(), windows)]
        if d_in.max() >= bar:
            agree.append("ps")
        peak_d, median_d = int(d_in.max()), float(d_in.median())
        at = d_in.idxmax()
        d_rows = ps[(ps["ts"] == at) & join.in_d_state(ps)]
        member, lines = tl.lines_of(d_rows)
        mysqld_at = int(d_rows["is_mysqld"].astype(bool).sum()) if "is_mysqld" in d_rows else 0
        evidence.append(
            Evidence("threads in D state (max)", peak_d, "threads", "ps_threads.state", member, lines)
        )
        evidence.append(Evidence("threads in D state (median)", median_d, "threads", "ps_threads.state"))
        evidence.append(
            Evidence(
                "of them mysqld/mariadbd threads (at the max)",
                mysqld_at,
                "threads",
                "ps_threads.comm",
                member,
                lines,
            )
        )
        if len(by_wchan.columns) and at in by_wchan.index:
            row = by_wchan.loc[at]
            for wchan, n in row[row > 0].sort_values(ascending=False, kind="stable").head(TOP_WCHANS).items():
                meaning = join.wchan_meaning(str(wchan))
                evidence.append(
                    Evidence(
                        f"mysqld threads in D in wchan {wchan}" + (f" ({meaning})" if meaning else ""),
                        int(n),
                        "threads",
                        "ps_threads.wchan",
                        member,
                        lines,
                    )  # fmt: skip
                )
            if (row > 0).any():
                dominant = str(row.idxmax())
        pl = tl.frame("processlist")
        if len(pl) and dominant:
            side = join.threads_beside_sessions(ps, pl)
            if at in side.index and pd.notna(side.loc[at, "processlist_ts"]):
                srow = side.loc[at]
                states = [
                    (c[6:], int(srow[c]))
                    for c in side.columns
                    if c.startswith("state:") and pd.notna(srow[c]) and srow[c] > 0
                ]
                states.sort(key=lambda sc: -sc[1])
                said = ", ".join(f"{n} in '{s}'" for s, n in states[:TOP_WCHANS])
                evidence.append(
                    Evidence(
                        "at the same moment",
                        f"{int(srow[f'wchan:{dominant}'])} mysqld threads in D state in {dominant} while "
                        f"{int(srow['active'])} sessions were active ({said})",
                        "",
                        "ps_threads.wchan",
                        member,
                        lines,
                    )  # fmt: skip
                )
                agree.append("processlist")
        pfs = tl.frame("pfs_threads")
        if len(pfs) and "thread_os_id" in pfs:
            behind = join.sessions_by_wchan(join.thread_sessions(ps, pfs, pl if len(pl) else None))
            for _, b in behind.head(TOP_WCHANS).iterrows():
                evidence.append(
                    Evidence(
                        f"sessions behind D threads in {b['wchan']}",
                        f"{int(b['sessions'])} sessions in '{b['session_state']}' running {str(b['fingerprint'])[:300]}",
                        "",
                        "pfs_threads.processlist_id",
                    )  # fmt: skip
                )
            if len(behind):
                agree.append("performance_schema.threads")
    if vm_windows:
        agree.append("vmstat b")
    if len(vm_in):
        member, lines = tl.lines_of(vm_in)
        for col, label, unit in (("r", "run queue r (median)", "threads"), ("b", "blocked b (max)", "threads"),
                                 ("id", "idle id (mean)", "%"), ("wa", "iowait wa (mean)", "%")):  # fmt: skip
            if col in vm_in:
                value = (
                    vm_in[col].max()
                    if col == "b"
                    else vm_in[col].median()
                    if col == "r"
                    else vm_in[col].mean()
                )
                evidence.append(Evidence(label, round(float(value), 1), unit, f"vmstat.{col}", member, lines))
        if not peak_d:
            peak_d, median_d = int(vm_in["b"].max()), float(vm_in["b"].median())
    if ncpu:
        evidence.append(Evidence("CPUs", ncpu, "cpus", "ncpu"))
    load = tl.frame("top_load")
    if len(load) and "load1" in load:
        load_in = load[within_slack(load["ts"], windows, tol)]
        if len(load_in):
            member, lines = tl.lines_of(load_in)
            evidence.append(
                Evidence(
                    "load average, 1 min (max)",
                    round(float(load_in["load1"].max()), 2),
                    "",
                    "top_load.load1",
                    member,
                    lines,
                )
            )

    held = held_seconds(windows, step_seconds(vm["ts"]))
    idle_mean = float(vm_in["id"].mean()) if len(vm_in) else float("nan")
    wa_mean = float(vm_in["wa"].mean()) if len(vm_in) and "wa" in vm_in else 0.0
    meaning = join.wchan_meaning(dominant) if dominant else ""
    explanation = (
        f"For {held:.0f} s up to {peak_d} threads were in uninterruptible sleep (state D) while the CPUs were "
        f"{idle_mean:.0f} % idle and {wa_mean:.0f} % in iowait. Linux counts D-state threads in the load average "
        "as if they were running, so the load climbs although the CPUs have room: the threads are waiting, not working."
    )
    if dominant:
        explanation += f" Most of the server's D threads slept in {dominant}" + (
            f": {meaning}." if meaning else "."
        )
    if not vm_windows and len(vm_in) and vm_in["b"].max() < bar:
        explanation += (
            " vmstat b and wa stayed low because they count only threads waiting for block I/O; threads "
            "sleeping in D on a kernel lock (a directory's inode lock, the mmap lock) count in the load but in neither."
        )
    severe = bool(ncpu) and median_d >= D_SEVERE_PER_CPU * ncpu
    return Finding(
        key="load-from-uninterruptible-threads",
        severity=Severity.CRITICAL if severe else Severity.WARNING,
        title=f"Load from {peak_d} threads in uninterruptible sleep (D) while CPUs are {idle_mean:.0f} % idle"
        + (f", mostly in {dominant}" if dominant else ""),
        explanation=explanation,
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=(
            "Name what the D threads wait for, then remove that wait:\n"
            "  ps -eLo pid,tid,stat,pcpu,comm,wchan:32 | awk '$3 ~ /^D/' | sort -k6 | uniq -c -f5 | sort -rn | head\n"
            "  cat /proc/<pid>/task/<tid>/stack      # the kernel stack of one D thread (root)\n"
            "File creation/deletion (unlinkat, path_openat): temporary tables in tmpdir, see tmp-table-churn\n"
            "(tmpdir on tmpfs). Block I/O (io_schedule, blk_mq_get_tag): see the device in iostat -x.\n"
            "fsync/journal (jbd2, xlog): the commit path, see commit-serialization."
        ),
        caveats=(
            "ps samples the threads once per snapshot: the count is a moment, not an average like the load.",
            "The load average is per machine: D threads of other processes (backup, NFS client) count too.",
        ),
        sources=(
            "seed 000 (load 588 on 14 cores, 547 mysqld threads in D in unlinkat)",
            'Brendan Gregg, "Linux Load Averages: Solving the Mystery" (2017)',
            "ps(1) PROCESS STATE CODES",
        ),  # fmt: skip
        confidence=f"{' + '.join(agree) or 'vmstat'} agree; held {held:.0f} s in {len(windows)} window(s)",
        disproof=(
            "Read /proc/loadavg and count D threads (`ps -eLo stat | grep -c ^D`) in the same second a few times: "
            "if the load minus the runnable threads does not track the D count, the load comes from elsewhere."
        ),
    )


@rule(
    key="commit-serialization",
    requires=("processlist", "vmstat"),
    optional=("iostat", "variables", "mysqladmin", "ncpu"),
)
def commit_serialization(tl: Timeline) -> Finding | None:
    """>= 8 active sessions and >= 30 % of active in the commit phase while idle + iowait >= 30 %,
    for 3 consecutive snapshots."""
    pl = tl.frame("processlist")
    vm = tl.frame("vmstat")
    snaps = snapshots(pl)
    active = pl["active"].astype(bool)
    committing = active & (value_is(pl["fingerprint"], lambda s: s == "commit") | state_in(pl, COMMIT_STATES))
    active_n = count_per_snapshot(pl, active)
    n = count_per_snapshot(pl, committing)
    share = n / active_n.where(active_n > 0)
    avail_at = nearest(snaps, vm, available_cpu(vm))
    hit = (
        (n >= COMMIT_MIN_SESSIONS)
        & (share >= COMMIT_MIN_SHARE)
        & (avail_at.to_numpy() >= AVAILABLE_CPU_MIN_PCT)
    )
    windows = sustained(snaps, hit, min_samples=need(len(snaps), MIN_PS_SNAPSHOTS))
    if not windows:
        return None
    in_win = within(snaps, windows)
    rows = pl[committing & within(pl["ts"], windows)]
    member, lines = tl.lines_of(rows)
    peak = int(n[in_win].max())
    evidence = [
        Evidence("sessions in the commit phase (max)", peak, "sessions", "processlist.state", member, lines),
        Evidence("sessions in the commit phase (median)", float(n[in_win].median()), "sessions", "processlist.state", member, lines),
        Evidence("their share of active sessions (max)", round(float(share[in_win].max()) * 100, 1), "%", "processlist.active"),
    ]  # fmt: skip
    shown = rows["state"].astype("string").fillna("").replace("", "(none)")
    shown = shown.where(
        ~(rows["fingerprint"].astype("string") == "commit").fillna(False), "Info COMMIT, State " + shown
    )
    evidence += [
        Evidence(f"'{s}'", c, "session-snapshots", "processlist.state", member, lines)
        for s, c in top_values(shown)
    ]
    tol = join.join_tolerance(pl["ts"], vm["ts"])
    vm_in = vm[within_slack(vm["ts"], windows, tol)]
    idle_mean = float(vm_in["id"].mean()) if len(vm_in) else float("nan")
    wa_mean = float(vm_in["wa"].mean()) if len(vm_in) and "wa" in vm_in else 0.0
    if len(vm_in):
        vm_member, vm_lines = tl.lines_of(vm_in)
        evidence.append(
            Evidence("idle id (mean)", round(idle_mean, 1), "%", "vmstat.id", vm_member, vm_lines)
        )
        evidence.append(
            Evidence("iowait wa (mean)", round(wa_mean, 1), "%", "vmstat.wa", vm_member, vm_lines)
        )
    io = tl.frame("iostat")
    if len(io) and "w_per_s" in io:
        io_in = io[within_slack(io["ts"], windows, tol)]
        if len(io_in):
            busiest = io_in.groupby("device", observed=True)["w_per_s"].median().sort_values(ascending=False)
            if len(busiest):
                dev = str(busiest.index[0])
                dev_rows = io_in[io_in["device"].astype(str) == dev]
                io_member, io_lines = tl.lines_of(dev_rows)
                evidence.append(
                    Evidence(
                        f"{dev} w/s (median, busiest writer)",
                        round(float(dev_rows["w_per_s"].median()), 1),
                        "/s",
                        "iostat.w_per_s",
                        io_member,
                        io_lines,
                    )
                )
                if "w_await" in dev_rows and dev_rows["w_await"].notna().any():
                    evidence.append(
                        Evidence(
                            f"{dev} w_await (median)",
                            round(float(dev_rows["w_await"].median()), 2),
                            "ms",
                            "iostat.w_await",
                            io_member,
                            io_lines,
                        )
                    )
                if "f_per_s" in dev_rows and dev_rows["f_per_s"].notna().any():
                    evidence.append(
                        Evidence(
                            f"{dev} f/s flushes (median)",
                            round(float(dev_rows["f_per_s"].median()), 1),
                            "/s",
                            "iostat.f_per_s",
                            io_member,
                            io_lines,
                        )
                    )
    for name in ("Innodb_os_log_fsyncs", "Com_commit"):
        st = status(tl, name).dropna(subset=["per_s"])
        st = st[within_slack(st["ts"], windows, tol)]
        if len(st):
            s_member, s_lines = tl.lines_of(st)
            evidence.append(
                Evidence(
                    f"{name} per second (median)",
                    round(float(st["per_s"].median()), 1),
                    "/s",
                    f"mysqladmin.{name}",
                    s_member,
                    s_lines,
                )
            )
    flush = variable(tl, "innodb_flush_log_at_trx_commit")
    sync_binlog = variable(tl, "sync_binlog")
    for name, value in (
        ("innodb_flush_log_at_trx_commit", flush),
        ("sync_binlog", sync_binlog),
        ("log_bin", variable(tl, "log_bin")),
    ):
        if value is not None:
            evidence.append(Evidence(f"variable {name}", value, "", "variables"))
    held = held_seconds(windows, step_seconds(snaps))
    relaxed = flush in ("0", "2") and sync_binlog not in (None, "1")
    explanation = (
        f"For {held:.0f} s up to {peak} sessions at once were committing ({float(share[in_win].max()) * 100:.0f} % of "
        f"the active ones) while the CPUs were {idle_mean:.0f} % idle"
        + (
            f" and iowait only {wa_mean:.0f} %"
            if wa_mean < IOWAIT_LOW_PCT
            else f" with {wa_mean:.0f} % iowait"
        )
        + ". Commits are serialised on the redo-log (and binary-log) flush: one thread writes and fsyncs while "
        "the others wait on a mutex for the group commit, and the kernel counts that wait as idle, not iowait. "
        "The server has CPU to spare; the commit path is the bottleneck."
    )
    if flush == "1":
        explanation += " innodb_flush_log_at_trx_commit is 1: every commit waits for an fsync."
    if relaxed:
        recommendation = (
            f"Durability is already relaxed (innodb_flush_log_at_trx_commit={flush}, sync_binlog={sync_binlog}):\n"
            "commits still queue, so look at the log device's write latency (iostat -x: w_await, f_await),\n"
            "semi-synchronous replication waits (Rpl_semi_sync_master_tx_avg_wait_time), and the binlog group\n"
            "commit (binlog_group_commit_sync_delay / binlog_commit_wait_count in MariaDB)."
        )
    else:
        recommendation = (
            "If losing up to about a second of committed transactions on an OS crash or power loss is acceptable:\n"
            "  SET GLOBAL innodb_flush_log_at_trx_commit = 2;  -- write the redo log at commit, fsync it once a second\n"
            "  SET GLOBAL sync_binlog = 0;                     -- or e.g. 100: fsync the binary log every N commit groups\n"
            "  -- persist both in my.cnf [mysqld]\n"
            "Trade-off: with 2, a mysqld crash loses nothing but an OS crash or power cut loses the last ~1 s of\n"
            "commits; with sync_binlog != 1 the binary log can lose transactions InnoDB kept, and replicas can\n"
            "diverge after such a crash. Keep both at 1 where every commit must survive, and make fsync cheap\n"
            "instead: a controller with a battery/flash-backed write cache, or a faster log device (seed 001:\n"
            "setting 2 gave +60 % throughput on disks without a BBU)."
        )
    return Finding(
        key="commit-serialization",
        severity=Severity.CRITICAL if share[in_win].median() >= 0.5 else Severity.WARNING,
        title=f"{peak} sessions queued on commit while CPUs are {idle_mean:.0f} % idle",
        explanation=explanation,
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=recommendation,
        caveats=(
            "iowait understates I/O waits: a thread waiting for another thread's fsync is idle, not iowait (seed 001).",
            "'query end' also covers other end-of-statement work (e.g. the binary log of a large transaction).",
            "Semi-synchronous replication makes commits wait for a replica's ACK: that shows the same way.",
        ),
        sources=(
            'seed 001 ("don\'t trust vmstat iowait", sysbench 64 threads on 2 cores)',
            "MySQL manual, innodb_flush_log_at_trx_commit and sync_binlog",
        ),  # fmt: skip
        confidence=f"processlist + vmstat agree; held {held:.0f} s in {len(windows)} window(s)",
        disproof=(
            "Set innodb_flush_log_at_trx_commit=2 for a few minutes on a test or replica: if the commit states and "
            "throughput do not change, the fsync is not the serialisation point (look at locks or the binlog)."
        ),
    )


@rule(key="iowait-understates-io", requires=("vmstat", "ncpu"), optional=("processlist",))
def iowait_understates_io(tl: Timeline) -> Finding | None:
    """idle + iowait >= 40 %, mostly idle, while queued work (vmstat r + b, or active sessions) >= 2 x ncpu,
    sustained."""
    vm = tl.frame("vmstat")
    ncpu = tl.ncpu or 0
    available = available_cpu(vm)
    queued = vm["r"] + (vm["b"] if "b" in vm else 0)
    pl = tl.frame("processlist")
    active_at = pd.Series(float("nan"), index=vm.index)
    if len(pl) and "active" in pl:
        active_n = count_per_snapshot(pl, pl["active"])
        frame = pd.DataFrame({"ts": active_n.index, "n": active_n.to_numpy()})
        active_at = pd.Series(nearest(vm["ts"], frame, "n").reindex(vm["ts"]).to_numpy(), index=vm.index)
    work = pd.concat([queued.astype("float64"), active_at], axis=1).max(axis=1)
    idle_dominates = vm["id"] >= IDLE_SHARE_OF_AVAILABLE_MIN * available
    hit = (available >= IDLE_PLUS_WAIT_MIN_PCT) & idle_dominates & (work >= QUEUED_PER_CPU * ncpu)
    windows = sustained(vm["ts"], hit, min_samples=need(len(vm), SUSTAINED_SAMPLES))
    if not windows:
        return None
    mask = within(vm["ts"], windows)
    rows = vm[mask]
    member, lines = tl.lines_of(rows)
    idle_mean = float(rows["id"].mean())
    wa_mean = float(rows["wa"].mean()) if "wa" in rows else 0.0
    evidence = [
        Evidence("idle id (mean)", round(idle_mean, 1), "%", "vmstat.id", member, lines),
        Evidence("iowait wa (mean)", round(wa_mean, 1), "%", "vmstat.wa", member, lines),
        Evidence(
            "idle + iowait (mean)", round(float(available[mask].mean()), 1), "%", "vmstat.id", member, lines
        ),
        Evidence(
            "runnable + blocked r+b (median)",
            float(queued[mask].median()),
            "threads",
            "vmstat.r",
            member,
            lines,
        ),
        Evidence("CPUs", ncpu, "cpus", "ncpu"),
    ]
    agree = ["vmstat"]
    if active_at[mask].notna().any():
        evidence.append(
            Evidence(
                "active sessions (median)", float(active_at[mask].median()), "sessions", "processlist.active"
            )
        )
        evidence.append(
            Evidence("active sessions (max)", int(active_at[mask].max()), "sessions", "processlist.active")
        )
        if active_at[mask].median() >= QUEUED_PER_CPU * ncpu:
            agree.append("processlist")
    work_median = float(work[mask].median())
    held = held_seconds(windows, step_seconds(vm["ts"]))
    return Finding(
        key="iowait-understates-io",
        severity=Severity.WARNING,
        title=f"CPUs {idle_mean + wa_mean:.0f} % idle+iowait with {work_median:.0f} tasks queued on {ncpu} CPUs",
        explanation=(
            f"For {held:.0f} s the CPUs were {idle_mean:.0f} % idle and {wa_mean:.0f} % in iowait while "
            f"{work_median:.0f} threads or statements were queued ({work_median / ncpu:.1f} per CPU). If the work "
            "were CPU-bound there would be no idle time; it waits instead on something the CPU counters do not "
            "show as iowait: a commit flush, a lock, a file-system lock. Read idle + iowait as available CPU and "
            "look for the serialisation point."
        ),
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=(
            "Find where the queued work waits:\n"
            "  SHOW FULL PROCESSLIST;   -- states: commit phase, temporary tables, lock waits\n"
            "  ps -eLo pid,tid,stat,comm,wchan:32 | awk '$3 ~ /^D/'   -- threads in D and their wait channel\n"
            "  SHOW ENGINE INNODB STATUS\\G   -- SEMAPHORES: mutex/rw-lock waits\n"
            "Then fix that point (see the related findings) rather than adding CPUs or faster disks blindly."
        ),
        caveats=(
            "In a container with a CPU quota, idle time is the host's: throttled threads wait with the CPUs idle.",
            "Active sessions include those waiting on a slow client (Sending to client/Writing to net).",
        ),
        sources=(
            'seed 001 ("don\'t trust vmstat iowait": treat idle + iowait as available CPU)',
            "vmstat(8)",
        ),
        confidence=f"{' + '.join(agree)} agree; held {held:.0f} s in {len(windows)} window(s)",
        disproof="If `mpstat -P ALL 1` shows the idle time on a few CPUs only while the others are 100 % busy, the work is pinned, not waiting (see single-cpu-saturation).",
    )
