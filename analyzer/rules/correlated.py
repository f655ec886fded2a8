"""Correlated-source rules: OS evidence (vmstat, ps threads, iostat) joined with MySQL evidence at the same
moment.

Single metrics mislead, and the explanation appears when sources are read side by side
(docs/background.md, "One metric misleads"):

- **load-from-uninterruptible-threads**: in a typical incident, load average 588 on 14 cores while the CPUs
  were
  40-50 % idle. Linux load counts threads in uninterruptible sleep (D) as well as runnable ones; ps
  showed 547 ``mysqld`` threads in D in ``unlinkat`` (deleting temporary-table files) while the
  sessions were in ``removing tmp table``. vmstat ``b`` and ``%wa`` count only threads waiting for
  block I/O (``nr_iowait``), not those sleeping in D on a kernel lock such as a directory's inode
  lock, so they can stay low while the load explodes.
- **commit-serialization**: 64 sysbench threads on 2 cores, idle 40-50 %, iowait in single
  digits, yet most sessions sat at ``COMMIT``: with innodb_flush_log_at_trx_commit=1 on disks without
  a battery-backed cache, every commit waits for the redo-log fsync, and only one thread flushes while
  the others wait on a mutex/condition, which the kernel counts as idle, not iowait.
- **iowait-understates-io**: idle + iowait high while far more work is queued than there are
  cores: read idle + iowait as available CPU and look for the serialisation point.

Sources: Brendan Gregg, "Linux Load Averages: Solving the Mystery" (2017); Linux
Documentation/filesystems/proc.rst ("iowait"); Linux fs/proc/stat.c (``procs_blocked`` = ``nr_iowait()``).
Background: docs/background.md ("Linux load counts threads in D state", "iowait is idle time").
"""

from __future__ import annotations

import dataclasses
from functools import partial

import pandas as pd

from analyzer.detect import (
    available_cpu,
    cite,
    column_evidence,
    count_per_snapshot,
    d_threads_bar,
    held_seconds,
    merge_windows,
    nearest,
    need,
    over_quiet,
    per_host,
    short_note,
    snapshots,
    state_in,
    status,
    step_seconds,
    sustained_or_extreme,
    top_values,
    variable,
    variables_evidence,
    with_setting,
    within_slack,
)
from analyzer.evidence import threads
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.pairing import join_tolerance
from analyzer.timeline.timeline import Timeline, value_is
from analyzer.timeline.windows import sustained, within

#: idle + iowait >= 30 %: the CPUs have room, so the load is not CPU work (docs/background.md:
#: 40-50 % idle with a load of 588 on 14 cores).
AVAILABLE_CPU_MIN_PCT = 30.0
#: 5 s of ps snapshots (detect.SESSIONS_SUSTAINED_S) and 5 consecutive vmstat samples (as
#: cpu-saturation): longer than a burst of file deletions or a journal commit.
SUSTAINED_SAMPLES = 5
#: Critical when the D threads alone are 4 x the cores: the load average is then mostly waiting.
D_SEVERE_PER_CPU = 4.0
#: Wait channels named in the evidence.
TOP_WCHANS = 3

# commit-serialization -----------------------------------------------------------------------------
#: States of a session in the commit phase (MySQL 8.0 ``waiting for handler commit``; 5.6/5.7 autocommit
#: statements flush the binlog and redo in ``query end``; MariaDB/Percona ``Commit``); a session whose
#: Info is ``COMMIT`` counts whatever its State (State NULL on MySQL 5.x, ``starting`` on 8.0).
COMMIT_STATES = frozenset({"waiting for handler commit", "query end", "commit", "committing"})
#: Group commit makes a few sessions wait together as a matter of course: one flush serves every
#: session that reached the commit meanwhile, and a busy host has about as many committers in flight
#: as it has cores. A queue is more than that: at least 8 sessions and at least one per CPU (14 of 800
#: sessions committing on a healthy 64-CPU server is ordinary group commit), a third of the active
#: sessions, twice the capture's quiet level when it has one, held 5 s (docs/background.md, "iowait is idle
#: time": most of 64 sessions on 2 CPUs for minutes).
COMMIT_MIN_SESSIONS = 8
COMMIT_SESSIONS_PER_CPU = 1.0
COMMIT_MIN_SHARE = 0.30
#: Extreme: most active sessions committing, four times the bar: kept from 3 snapshots.
COMMIT_EXTREME_SHARE = 0.80
COMMIT_EXTREME_FACTOR = 4.0
#: iowait below 10 % while commits queue: "iowait understates the waits" (docs/background.md: 1-14 %).
IOWAIT_LOW_PCT = 10.0

# iowait-understates-io ----------------------------------------------------------------------------
#: idle + iowait >= 40 % (docs/background.md, "iowait is idle time": 40-55 %)...
IDLE_PLUS_WAIT_MIN_PCT = 40.0
#: ...while runnable/blocked work is >= 2 x the cores: with that much queued, a CPU-bound server
#: would have no idle time (USE method saturation; 64 sessions on 2 cores)...
QUEUED_PER_CPU = 2.0
#: ...and at least half of that available time shows as idle, not iowait: the finding is that the
#: waits are NOT counted as iowait (id 40-50 %, wa 1-14 % in docs/background.md). When wa itself is high, the
#: kernel does show the I/O wait (a disk-bound load), and nothing is understated.
IDLE_SHARE_OF_AVAILABLE_MIN = 0.5


# ---------------------------------------------------------------------------------------------
# load-from-uninterruptible-threads
# ---------------------------------------------------------------------------------------------

LOAD_FROM_D_THREADS = RuleTexts(
    title="Load from {peak_d} threads in uninterruptible sleep (D) while CPUs are {idle:.0f} % idle{mostly}",
    explanation=(
        "For {held:.0f} s up to {peak_d} threads were in uninterruptible sleep (state D) while the CPUs were "
        "{idle:.0f} % idle and {wa:.0f} % in iowait. Linux counts D-state threads in the load average "
        "as if they were running, so the load climbs although the CPUs have room: the threads are waiting, "
        "not working.{dominant_text}{vmstat_blind}"
    ),
    recommendation=(
        "Name what the D threads wait for, then remove that wait:\n"
        "  ps -eLo pid,tid,stat,pcpu,comm,wchan:32 | awk '$3 ~ /^D/' | sort -k6 | uniq -c -f5 | sort -rn | "
        "head\n"
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
        "MySQL 8.4 Reference Manual, Internal Temporary Table Use in MySQL",
        'Brendan Gregg, "Linux Load Averages: Solving the Mystery" (2017)',
        "ps(1) PROCESS STATE CODES",
    ),
    disproof=(
        "Read /proc/loadavg and count D threads (`ps -eLo stat | grep -c ^D`) in the same second a few "
        "times: "
        "if the load minus the runnable threads does not track the D count, the load comes from elsewhere."
    ),
)
VMSTAT_BLIND = (
    " vmstat b and wa stayed low because they count only threads waiting for block I/O; threads "
    "sleeping in D on a kernel lock (a directory's inode lock, the mmap lock) count in the load but in "
    "neither."
)


@dataclasses.dataclass(slots=True)
class _DThreads:
    """What ps and vmstat say about D-state threads: windows, counts per snapshot, wait channels."""

    windows: list[Window]
    vm_windows: list[Window]
    d_all: pd.Series
    by_wchan: pd.DataFrame


def _d_threads(tl: Timeline, bar: int) -> _DThreads:
    """Windows where D-state threads (ps, all processes; else vmstat b) >= ``bar`` while idle + iowait
    >= AVAILABLE_CPU_MIN_PCT, sustained."""
    vm, ps = tl.frame("vmstat"), tl.frame("ps_threads")
    available = available_cpu(vm)
    windows: list[Window] = []
    d_all, by_wchan = pd.Series(dtype="int64"), pd.DataFrame()
    if threads.has_thread_states(ps):
        # Load counts every D thread, not only mysqld's: the threshold uses all of them, the
        # evidence says how many are the server's.
        d_all = threads.d_threads_by_wchan(ps, mysqld_only=False).sum(axis=1).astype("int64")
        d_all = d_all.reindex(pd.Index(ps["ts"].drop_duplicates().sort_values()), fill_value=0)
        avail_at = nearest(d_all.index.to_series(), vm, available)
        hit = (d_all >= bar) & (avail_at >= AVAILABLE_CPU_MIN_PCT)
        windows += sustained_or_extreme(d_all.index.to_series(), hit)[0]
        by_wchan = threads.d_threads_by_wchan(ps, mysqld_only=True)
    vm_hit = (vm["b"] >= bar) & (available >= AVAILABLE_CPU_MIN_PCT)
    vm_windows = sustained(vm["ts"], vm_hit, min_samples=need(len(vm), SUSTAINED_SAMPLES))
    return _DThreads(merge_windows(windows + vm_windows), vm_windows, d_all, by_wchan)


def _wchan_evidence(
    tl: Timeline, d: _DThreads, at: pd.Timestamp, member, lines
) -> tuple[list[Evidence], str]:
    """The top wait channels of mysqld's D threads at ``at``, and the dominant one ('' when none)."""
    if not len(d.by_wchan.columns) or at not in d.by_wchan.index:
        return [], ""
    row = d.by_wchan.loc[at]
    out = []
    for wchan, n in row[row > 0].sort_values(ascending=False, kind="stable").head(TOP_WCHANS).items():
        meaning = threads.wchan_meaning(str(wchan))
        label = f"mysqld threads in D in wchan {wchan}" + (f" ({meaning})" if meaning else "")
        out.append(Evidence(label, int(n), "threads", "ps_threads.wchan", member, lines))
    return out, (str(row.idxmax()) if (row > 0).any() else "")


def _sessions_beside(
    tl: Timeline, ps: pd.DataFrame, d: _DThreads, at: pd.Timestamp, dominant: str, member, lines
) -> list[Evidence]:
    """The processlist at the moment of the most D threads: how many sessions, in which states.
    Only the snapshots around ``at`` are paired, with the tolerance the whole capture gives."""
    pl = tl.frame("processlist")
    if not len(pl) or not dominant:
        return []
    tolerance = join_tolerance(d.by_wchan.index.to_series(), pl["ts"])
    near = pl[((pl["ts"] - at).abs() <= tolerance).to_numpy()]
    side = threads.threads_beside_sessions(ps[(ps["ts"] == at).to_numpy()], near, tolerance=tolerance)
    if at not in side.index or pd.isna(side.loc[at, "processlist_ts"]):
        return []
    srow = side.loc[at]
    states = sorted(
        (
            (c[6:], int(srow[c]))
            for c in side.columns
            if c.startswith("state:") and pd.notna(srow[c]) and srow[c] > 0
        ),
        key=lambda sc: -sc[1],
    )
    said = ", ".join(f"{n} in '{s}'" for s, n in states[:TOP_WCHANS])
    text = (
        f"{int(srow[f'wchan:{dominant}'])} mysqld threads in D state in {dominant} while "
        f"{int(srow['active'])} sessions were active ({said})"
    )
    return [Evidence("at the same moment", text, "", "ps_threads.wchan", member, lines)]


def _pfs_evidence(tl: Timeline, ps: pd.DataFrame) -> list[Evidence]:
    """Through performance_schema.threads: the sessions behind the D threads, by wait channel."""
    pfs, pl = tl.frame("pfs_threads"), tl.frame("processlist")
    if not len(pfs) or "thread_os_id" not in pfs:
        return []
    behind = threads.sessions_by_wchan(threads.thread_sessions(ps, pfs, pl if len(pl) else None))
    return [
        Evidence(
            f"sessions behind D threads in {b['wchan']}",
            (
                f"{int(b['sessions'])} sessions in '{b['session_state']}' running "
                f"{str(b['fingerprint'])[:300]}"
            ),
            "",
            "pfs_threads.processlist_id",
        )
        for _, b in behind.head(TOP_WCHANS).iterrows()
    ]


def _ps_d_evidence(tl: Timeline, d: _DThreads, bar: int) -> tuple[list[Evidence], list[str], int, float, str]:
    """Evidence from ps (D-thread counts, wait channels, the sessions beside them). Returns
    (evidence, sources that agree, peak D, median D, dominant wait channel)."""
    in_win = within(d.d_all.index.to_series(), d.windows) if len(d.d_all) else None
    if in_win is None or not in_win.any():
        return [], [], 0, 0.0, ""
    ps = tl.frame("ps_threads")
    d_in = d.d_all[in_win]
    agree = ["ps"] if d_in.max() >= bar else []
    at = d_in.idxmax()
    d_rows = ps[(ps["ts"] == at) & threads.in_d_state(ps)]
    member, lines = tl.lines_of(d_rows)
    mysqld_at = int(d_rows["is_mysqld"].astype(bool).sum()) if "is_mysqld" in d_rows else 0
    evidence = [
        Evidence("threads in D state (max)", int(d_in.max()), "threads", "ps_threads.state", member, lines),
        Evidence("threads in D state (median)", float(d_in.median()), "threads", "ps_threads.state"),
        Evidence(
            "of them mysqld/mariadbd threads (at the max)",
            mysqld_at,
            "threads",
            "ps_threads.comm",
            member,
            lines,
        ),
    ]
    wchans, dominant = _wchan_evidence(tl, d, at, member, lines)
    beside = _sessions_beside(tl, ps, d, at, dominant, member, lines)
    pfs = _pfs_evidence(tl, ps)
    agree += (["processlist"] if beside else []) + (["performance_schema.threads"] if pfs else [])
    return evidence + wchans + beside + pfs, agree, int(d_in.max()), float(d_in.median()), dominant


@rule(
    key="load-from-uninterruptible-threads",
    requires=("vmstat",),
    optional=("ps_threads", "ncpu", "processlist", "pfs_threads", "top_load"),
)
def load_from_uninterruptible_threads(tl: Timeline) -> Finding | None:
    """Threads in D state (ps, else vmstat b) >= max(10, ncpu) while idle + iowait >= 30 %, sustained."""
    vm, ps = tl.frame("vmstat"), tl.frame("ps_threads")
    ncpu = tl.ncpu or 0
    bar = d_threads_bar(ncpu)
    d = _d_threads(tl, bar)
    if not d.windows:
        return None
    windows = d.windows
    tol = join_tolerance(vm["ts"], ps["ts"] if len(ps) else vm["ts"])
    vm_in = vm[within_slack(vm["ts"], windows, tol)]
    evidence, agree, peak_d, median_d, dominant = _ps_d_evidence(tl, d, bar)
    agree += ["vmstat b"] if d.vm_windows else []
    evidence += column_evidence(
        tl,
        vm_in,
        "vmstat",
        (
            ("run queue r (median)", "r", "median1", "threads"),
            ("blocked b (max)", "b", "max1", "threads"),
            ("idle id (mean)", "id", "mean1", "%"),
            ("iowait wa (mean)", "wa", "mean1", "%"),
        ),
    )
    if not peak_d and len(vm_in):
        peak_d, median_d = int(vm_in["b"].max()), float(vm_in["b"].median())
    evidence += [Evidence("CPUs", ncpu, "cpus", "ncpu")] if ncpu else []
    load = tl.frame("top_load")
    load_in = load[within_slack(load["ts"], windows, tol)] if "load1" in load else load.iloc[0:0]
    if len(load_in):
        evidence.append(
            cite(
                tl,
                "load average, 1 min (max)",
                round(float(load_in["load1"].max()), 2),
                "",
                "top_load.load1",
                load_in,
            )
        )
    meaning = threads.wchan_meaning(dominant) if dominant else ""
    dominant_text = (
        f" Most of the server's D threads slept in {dominant}" + (f": {meaning}." if meaning else ".")
        if dominant
        else ""
    )
    blind = not d.vm_windows and len(vm_in) and vm_in["b"].max() < bar
    severe = bool(ncpu) and median_d >= D_SEVERE_PER_CPU * ncpu
    return LOAD_FROM_D_THREADS.finding(
        "load-from-uninterruptible-threads",
        Severity.CRITICAL if severe else Severity.WARNING,
        windows,
        evidence,
        peak_d=peak_d,
        idle=float(vm_in["id"].mean()) if len(vm_in) else float("nan"),
        wa=float(vm_in["wa"].mean()) if len(vm_in) and "wa" in vm_in else 0.0,
        mostly=f", mostly in {dominant}" if dominant else "",
        held=held_seconds(windows, step_seconds(vm["ts"])),
        dominant_text=dominant_text,
        vmstat_blind=VMSTAT_BLIND if blind else "",
        agree=" + ".join(agree) or "vmstat",
    )


# ---------------------------------------------------------------------------------------------
# commit-serialization
# ---------------------------------------------------------------------------------------------

COMMIT_SERIALIZATION = RuleTexts(
    title="{peak} sessions queued on commit while CPUs are {idle:.0f} % idle",
    explanation=(
        "For {held:.0f} s up to {peak} sessions at once were committing ({share:.0f} % of "
        "the active ones) while the CPUs were {idle:.0f} % idle{iowait_text}. Commits are serialised on the "
        "redo-log (and binary-log) flush: one thread writes and fsyncs while the others wait on a mutex "
        "for the "
        "group commit, and the kernel counts that wait as idle, not iowait. The server has CPU to spare; the "
        "commit path is the bottleneck.{flush_text}"
    ),
    recommendation="{recommendation}",
    caveats=(
        "iowait understates I/O waits: a thread waiting for another thread's fsync is idle, not iowait.",
        "'query end' also covers other end-of-statement work (e.g. the binary log of a large transaction).",
        "Semi-synchronous replication makes commits wait for a replica's ACK: that shows the same way.",
    ),
    sources=(
        'Linux Documentation/filesystems/proc.rst ("iowait" is not reliable)',
        "MySQL manual, innodb_flush_log_at_trx_commit and sync_binlog",
    ),
    confidence="processlist + vmstat agree; held {held:.0f} s in {n_windows} window(s){short}",
    disproof=(
        "Set innodb_flush_log_at_trx_commit=2 for a few minutes on a test or replica: if the commit states "
        "and "
        "throughput do not change, the fsync is not the serialisation point (look at locks or the binlog)."
    ),
)
COMMIT_FIX_RELAXED = (
    "Durability is already relaxed (innodb_flush_log_at_trx_commit={flush}, sync_binlog={sync_binlog}):\n"
    "commits still queue, so look at the log device's write latency (iostat -x: w_await, f_await),\n"
    "semi-synchronous replication waits (Rpl_semi_sync_master_tx_avg_wait_time), and the binlog group\n"
    "commit (binlog_group_commit_sync_delay / binlog_commit_wait_count in MariaDB)."
)
COMMIT_FIX_DURABLE = (
    "If losing up to about a second of committed transactions on an OS crash or power loss is acceptable:\n"
    "  SET GLOBAL innodb_flush_log_at_trx_commit = 2;  -- write the redo log at commit, fsync it once a "
    "second\n"
    "  SET GLOBAL sync_binlog = 0;                     -- or e.g. 100: fsync the binary log every N commit "
    "groups\n"
    "  -- persist both in my.cnf [mysqld]\n"
    "Trade-off: with 2, a mysqld crash loses nothing but an OS crash or power cut loses the last ~1 s of\n"
    "commits; with sync_binlog != 1 the binary log can lose transactions InnoDB kept, and replicas can\n"
    "diverge after such a crash. Keep both at 1 where every commit must survive, and make fsync cheap\n"
    "instead: a controller with a battery/flash-backed write cache, or a faster log device (on\n"
    "disks without a battery-backed cache, 2 has given +60 % throughput in sysbench tests)."
)


def _log_device_evidence(tl: Timeline, windows: list[Window], tol: pd.Timedelta) -> list[Evidence]:
    """The busiest writing device in the windows: w/s, w_await, f/s (iostat -x)."""
    io = tl.frame("iostat")
    io_in = io[within_slack(io["ts"], windows, tol)] if "w_per_s" in io else io.iloc[0:0]
    if not len(io_in):
        return []
    busiest = io_in.groupby("device", observed=True)["w_per_s"].median().sort_values(ascending=False)
    if not len(busiest):
        return []
    dev = str(busiest.index[0])
    rows = io_in[io_in["device"].astype(str) == dev]
    return column_evidence(
        tl,
        rows,
        "iostat",
        (
            (f"{dev} w/s (median, busiest writer)", "w_per_s", "median1", "/s"),
            (f"{dev} w_await (median)", "w_await", "median2", "ms"),
            (f"{dev} f/s flushes (median)", "f_per_s", "median1", "/s"),
        ),
    )


def _commit_counter_evidence(tl: Timeline, windows: list[Window], tol: pd.Timedelta) -> list[Evidence]:
    """Redo-log fsyncs and commits per second in the windows (mysqladmin)."""
    out = []
    for name in ("Innodb_os_log_fsyncs", "Com_commit"):
        st = status(tl, name).dropna(subset=["per_s"])
        st = st[within_slack(st["ts"], windows, tol)]
        if len(st):
            out.append(
                cite(
                    tl,
                    f"{name} per second (median)",
                    round(float(st["per_s"].median()), 1),
                    "/s",
                    f"mysqladmin.{name}",
                    st,
                )
            )
    return out


@rule(
    key="commit-serialization",
    requires=("processlist", "vmstat"),
    optional=("iostat", "variables", "mysqladmin", "ncpu"),
)
def commit_serialization(tl: Timeline) -> Finding | None:
    """Sessions in the commit phase >= max(8, ncpu) (and twice the capture's quiet level when it has
    one), >= 30 % of the active ones, while idle + iowait >= 30 %, for 5 s (3 snapshots when extreme:
    >= 80 % of the active sessions and 4 x the bar)."""
    pl, vm = tl.frame("processlist"), tl.frame("vmstat")
    snaps = snapshots(pl)
    active = pl["active"].astype(bool)
    committing = active & (value_is(pl["fingerprint"], lambda s: s == "commit") | state_in(pl, COMMIT_STATES))
    active_n = count_per_snapshot(pl, active)
    n = count_per_snapshot(pl, committing)
    share = n / active_n.where(active_n > 0)
    avail_at = nearest(snaps, vm, available_cpu(vm))
    bar = per_host(COMMIT_MIN_SESSIONS, tl.ncpu, COMMIT_SESSIONS_PER_CPU)
    hit = over_quiet(n, bar) & (share >= COMMIT_MIN_SHARE) & (avail_at.to_numpy() >= AVAILABLE_CPU_MIN_PCT)
    extreme = (n >= COMMIT_EXTREME_FACTOR * bar) & (share >= COMMIT_EXTREME_SHARE)
    windows, short = sustained_or_extreme(snaps, hit, extreme)
    windows = merge_windows(windows + short)
    if not windows:
        return None
    in_win = within(snaps, windows)
    rows = pl[committing & within(pl["ts"], windows)]
    member, lines = tl.lines_of(rows)
    state_evidence = partial(
        Evidence, unit="sessions", series="processlist.state", member=member, lines=lines
    )
    evidence = [
        state_evidence("sessions in the commit phase (max)", int(n[in_win].max())),
        state_evidence("sessions in the commit phase (median)", float(n[in_win].median())),
        Evidence(
            "their share of active sessions (max)",
            round(float(share[in_win].max()) * 100, 1),
            "%",
            "processlist.active",
        ),
    ]
    shown = rows["state"].astype("string").fillna("").replace("", "(none)")
    shown = shown.where(
        ~(rows["fingerprint"].astype("string") == "commit").fillna(False), "Info COMMIT, State " + shown
    )
    evidence += [
        Evidence(f"'{s}'", c, "session-snapshots", "processlist.state", member, lines)
        for s, c in top_values(shown)
    ]
    tol = join_tolerance(pl["ts"], vm["ts"])
    vm_in = vm[within_slack(vm["ts"], windows, tol)]
    idle_iowait = (("idle id (mean)", "id", "mean1", "%"), ("iowait wa (mean)", "wa", "mean1", "%"))
    evidence += column_evidence(tl, vm_in, "vmstat", idle_iowait)
    evidence += _log_device_evidence(tl, windows, tol) + _commit_counter_evidence(tl, windows, tol)
    evidence += variables_evidence(tl, ("innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin"))
    flush, sync_binlog = variable(tl, "innodb_flush_log_at_trx_commit"), variable(tl, "sync_binlog")
    wa = float(vm_in["wa"].mean()) if len(vm_in) and "wa" in vm_in else 0.0
    relaxed = flush in ("0", "2") and sync_binlog not in (None, "1")
    found = COMMIT_SERIALIZATION.finding(
        "commit-serialization",
        Severity.CRITICAL if share[in_win].median() >= 0.5 else Severity.WARNING,
        windows,
        evidence,
        peak=int(n[in_win].max()),
        share=float(share[in_win].max()) * 100,
        idle=float(vm_in["id"].mean()) if len(vm_in) else float("nan"),
        held=held_seconds(windows, step_seconds(snaps)),
        iowait_text=f" and iowait only {wa:.0f} %" if wa < IOWAIT_LOW_PCT else f" with {wa:.0f} % iowait",
        flush_text=" innodb_flush_log_at_trx_commit is 1: every commit waits for an fsync."
        if flush == "1"
        else "",
        recommendation=(
            COMMIT_FIX_RELAXED.format(flush=flush, sync_binlog=sync_binlog) if relaxed else COMMIT_FIX_DURABLE
        ),
        short=short_note(short, f"{COMMIT_EXTREME_SHARE:.0%} or more of the active sessions were committing"),
    )
    if flush != "1":
        return found
    return with_setting(
        tl,
        found,
        "innodb_flush_log_at_trx_commit",
        f"the fsync of each commit (sync_binlog = {sync_binlog or '?'}).",
    )


# ---------------------------------------------------------------------------------------------
# iowait-understates-io
# ---------------------------------------------------------------------------------------------

IOWAIT_UNDERSTATES_IO = RuleTexts(
    title="CPUs {available:.0f} % idle+iowait with {work:.0f} tasks queued on {ncpu} CPUs",
    explanation=(
        "For {held:.0f} s the CPUs were {idle:.0f} % idle and {wa:.0f} % in iowait while "
        "{work:.0f} threads or statements were queued ({per_cpu:.1f} per CPU). If the work "
        "were CPU-bound there would be no idle time; it waits instead on something the CPU counters do not "
        "show as iowait: a commit flush, a lock, a file-system lock. Read idle + iowait as available CPU and "
        "look for the serialisation point."
    ),
    recommendation=(
        "Find where the queued work waits:\n"
        "  SHOW FULL PROCESSLIST;   -- states: commit phase, temporary tables, lock waits\n"
        "  ps -eLo pid,tid,stat,comm,wchan:32 | awk '$3 ~ /^D/'   -- threads in D and their wait channel\n"
        "  SHOW ENGINE INNODB STATUS\\G   -- SEMAPHORES: mutex/rw-lock waits\n"
        "Then fix that point (see the related findings) rather than adding CPUs or faster disks blindly."
    ),
    caveats=(
        (
            "In a container with a CPU quota, idle time is the host's: throttled threads wait with the CPUs "
            "idle."
        ),
        "Active sessions include those waiting on a slow client (Sending to client/Writing to net).",
    ),
    sources=(
        (
            'Linux Documentation/filesystems/proc.rst ("iowait" is not reliable: treat idle + iowait as '
            "available CPU)"
        ),
        "vmstat(8)",
    ),
    disproof=(
        "If `mpstat -P ALL 1` shows the idle time on a few CPUs only while the others are 100 % busy, "
        "the work is pinned, not waiting (see single-cpu-saturation)."
    ),
)


def _active_at(tl: Timeline, vm: pd.DataFrame) -> pd.Series:
    """Active sessions of the nearest processlist snapshot, per vmstat row (NaN without one)."""
    pl = tl.frame("processlist")
    if not len(pl) or "active" not in pl:
        return pd.Series(float("nan"), index=vm.index)
    active_n = count_per_snapshot(pl, pl["active"])
    frame = pd.DataFrame({"ts": active_n.index, "n": active_n.to_numpy()})
    return pd.Series(nearest(vm["ts"], frame, "n").reindex(vm["ts"]).to_numpy(), index=vm.index)


@rule(key="iowait-understates-io", requires=("vmstat", "ncpu"), optional=("processlist",))
def iowait_understates_io(tl: Timeline) -> Finding | None:
    """idle + iowait >= 40 %, mostly idle, while queued work (vmstat r + b, or active sessions) >= 2 x ncpu,
    sustained."""
    vm = tl.frame("vmstat")
    ncpu = tl.ncpu or 0
    available = available_cpu(vm)
    queued = vm["r"] + (vm["b"] if "b" in vm else 0)
    active_at = _active_at(tl, vm)
    work = pd.concat([queued.astype("float64"), active_at], axis=1).max(axis=1)
    idle_dominates = vm["id"] >= IDLE_SHARE_OF_AVAILABLE_MIN * available
    hit = (available >= IDLE_PLUS_WAIT_MIN_PCT) & idle_dominates & (work >= QUEUED_PER_CPU * ncpu)
    windows = sustained(vm["ts"], hit, min_samples=need(len(vm), SUSTAINED_SAMPLES))
    if not windows:
        return None
    mask = within(vm["ts"], windows)
    rows = vm[mask]
    member, lines = tl.lines_of(rows)
    evidence = column_evidence(
        tl, rows, "vmstat", (("idle id (mean)", "id", "mean1", "%"), ("iowait wa (mean)", "wa", "mean1", "%"))
    )
    evidence += [
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
        evidence += [
            Evidence(
                "active sessions (median)", float(active_at[mask].median()), "sessions", "processlist.active"
            ),
            Evidence("active sessions (max)", int(active_at[mask].max()), "sessions", "processlist.active"),
        ]
        agree += ["processlist"] if active_at[mask].median() >= QUEUED_PER_CPU * ncpu else []
    idle, wa = float(rows["id"].mean()), float(rows["wa"].mean()) if "wa" in rows else 0.0
    work_median = float(work[mask].median())
    return IOWAIT_UNDERSTATES_IO.finding(
        "iowait-understates-io",
        Severity.WARNING,
        windows,
        evidence,
        available=idle + wa,
        work=work_median,
        ncpu=ncpu,
        held=held_seconds(windows, step_seconds(vm["ts"])),
        idle=idle,
        wa=wa,
        per_cpu=work_median / ncpu,
        agree=" + ".join(agree),
    )
