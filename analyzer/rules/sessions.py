"""MySQL session rules over the processlist (pile-ups, overload; classic lock and long-query checks).

What the field reads in ``SHOW FULL PROCESSLIST`` and ``mysqladmin ext`` (docs/background.md):

- **same-query-pileup**: in the tmp-table incident of docs/background.md, ~700 sessions ran the same fast
  query (Time 0-1 s) at once; each was cheap, their concurrency was not. Grouping by query fingerprint shows
  it; State alone does not.
- **active-sessions-overload**: far more statements running at once than cores.
- **long-running-queries** / **lock-waits** (classic): statements running for minutes; sessions
  queued behind a metadata, table or row lock, and the blocker to look for.

Sessions are counted as docs/background.md says ("Counting sessions and threads right"): ``active`` (from
the timeline) is Command Query/Execute without Sleep, Daemon, replication, system users or the
collector's own SHOW PROCESSLIST.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd

from analyzer.detect import (
    cite,
    column_evidence,
    count_per_snapshot,
    held_seconds,
    merge_windows,
    need,
    over_quiet,
    per_host,
    short_query,
    snapshots,
    statement_culprit,
    status,
    status_evidence,
    step_seconds,
    sustained_or_extreme,
    top_values,
    within_slack,
)
from analyzer.evidence import blockers
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.pairing import join_tolerance
from analyzer.timeline.timeline import Timeline, value_is
from analyzer.timeline.windows import sustained, within
from analyzer.waits.holders import locks, slots

PILEUP_SHARE = (
    0.5  # one fingerprint is most of the active sessions (docs/background.md, the tmp-table incident)
)
#: A crowd of one query: at least 20 sessions and as many as the overload bar (4 per core: the tmp-table
#: incident's ~630 on 14 cores, the real 64-session load on 2 CPUs here); fewer is ordinary application
#: concurrency.
PILEUP_MIN_SESSIONS = 20
PILEUP_SESSIONS_PER_CPU = 4.0
FAST_QUERY_MAX_TIME_S = 1  # Time 0-1 s: each execution is fast, the concurrency is the problem
#: Transaction control is not a query the application can throttle or cache: 55 sessions at COMMIT
#: (docs/background.md, "iowait is idle time") are commit-serialization, not a pile-up of one query.
TRANSACTION_CONTROL = frozenset(
    {"commit", "rollback", "begin", "start transaction", "commit work", "rollback work"}
)

# active-sessions-overload ----------------------------------------------------------------------
ACTIVE_PER_CPU = 4.0  # >= 4 statements per core: most of them wait for a CPU or a lock (docs/background.md)
ACTIVE_SEVERE_PER_CPU = 16.0  # 16 per core (the incidents of docs/background.md: ~50, 32) is critical

# long-running-queries --------------------------------------------------------------------------
#: A statement running a minute or more holds its locks and its InnoDB read view that long: it
#: blocks DDL (metadata lock) and purge (history list grows). pt-kill(1) examples use --busy-time 60.
LONG_QUERY_S = 60
LONG_QUERY_SEVERE_S = 600  # ten minutes: a report, a missing index or a forgotten session

# lock-waits ------------------------------------------------------------------------------------
#: Lock-wait states (MySQL 8.0 "General Thread States"; MariaDB KB): metadata locks, table locks,
#: FLUSH TABLES / FLUSH TABLES WITH READ LOCK, backup locks; ``Locked`` is MySQL <= 5.1 MyISAM.
LOCK_STATE_RE = re.compile(r"^(waiting for .*lock|locked|table lock|waiting for table flush)$", re.I)
LOCK_WAIT_MIN_SESSIONS = 3  # three sessions queued behind one lock is a queue, not a passing wait
LOCK_WAIT_MIN_S = 10  # or one session waiting 10 s: a DDL queued that long blocks every later query
LOCK_WAIT_SNAPSHOTS = 2  # seen in 2 consecutive snapshots: a wait that resolved within a second is normal
LOCK_WAIT_SEVERE_SESSIONS = 10  # ten queued sessions (or a minute of waiting) is critical
LOCK_WAIT_SEVERE_S = 60
#: InnoDB row-lock waits are invisible in State (``updating``, ``executing``): the gauge
#: Innodb_row_lock_current_waits counts them (MySQL manual, "Server Status Variables").
ROW_LOCK_MIN_WAITS = 3  # ...held 5 s (detect.SESSIONS_SUSTAINED_S)


# -------------------------------------------------------------------------------------------------
# active-sessions-overload
# -------------------------------------------------------------------------------------------------

ACTIVE_SESSIONS_OVERLOAD = RuleTexts(
    title="{peak} statements running at once on {ncpu} CPUs",
    explanation=(
        "For {held:.0f} s the server ran a median of {median:.0f} statements at once, {per_cpu:.1f} per CPU "
        "(the bar is {bar:g}). A core runs one thread at a time: the others wait for a CPU, a lock "
        "or I/O, and every statement's latency grows with the crowd."
    ),
    recommendation=(
        "Cap concurrency where it comes from: the application's connection pool size (a few connections\n"
        "per core is usually the fastest), or the server's thread pool:\n"
        "  # MariaDB / Percona Server, my.cnf [mysqld] (restart):\n"
        "  thread_handling = pool-of-threads\n"
        "  # or limit statements inside InnoDB (dynamic):\n"
        "  SET GLOBAL innodb_thread_concurrency = <2 x CPUs>;\n"
        "Then see what the crowd runs (top queries and states in the evidence)."
    ),
    caveats=(
        "Sessions waiting on locks or on a slow client count as active too.",
        "The processlist is sampled: a burst shorter than a snapshot interval is not seen.",
    ),
    sources=(
        "MySQL 8.4 Reference Manual, Server Status Variables (Threads_running)",
        "MariaDB KB, Thread Pool in MariaDB",
    ),
    confidence="processlist{with_counters}; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If Threads_running stays below 4 x CPUs between snapshots (mysqladmin ext -i1), the crowd "
        "was a momentary burst."
    ),
)


@rule(key="active-sessions-overload", requires=("processlist", "ncpu"), optional=("mysqladmin", "vmstat"))
def active_sessions_overload(tl: Timeline) -> Finding | None:
    """Active sessions >= 4 x ncpu (and twice the capture's quiet level when it has one) for 5 s."""
    pl = tl.frame("processlist")
    ncpu = tl.ncpu or 0
    snaps = snapshots(pl)
    active_n = count_per_snapshot(pl, pl["active"])
    windows, _ = sustained_or_extreme(snaps, over_quiet(active_n, ACTIVE_PER_CPU * ncpu))
    if not windows:
        return None
    in_win = active_n[within(snaps, windows)]
    rows = pl[pl["active"].astype(bool) & within(pl["ts"], windows)]
    member, lines = tl.lines_of(rows)
    median = float(in_win.median())
    evidence = [
        Evidence("active sessions (max)", int(in_win.max()), "sessions", "processlist.active", member, lines),
        Evidence("active sessions (median)", median, "sessions", "processlist.active", member, lines),
        Evidence("CPUs", ncpu, "cpus", "ncpu"),
        Evidence(
            "active sessions per CPU (median)", round(median / ncpu, 1), "sessions/cpu", "processlist.active"
        ),
    ]
    tol = join_tolerance(pl["ts"])
    running = status_evidence(tl, windows, tol, (("Threads_running", "Threads_running (median)", "median"),))
    vm = tl.frame("vmstat")
    vm_in = vm[within_slack(vm["ts"], windows, tol)] if "r" in vm else vm.iloc[0:0]
    evidence += running + column_evidence(
        tl,
        vm_in,
        "vmstat",
        (
            ("run queue r (median)", "r", "median", "threads"),
            ("idle id (mean)", "id", "mean1", "%"),
        ),
    )
    evidence += [
        Evidence(f"query '{fp[:200]}'", c, "session-snapshots", "processlist.fingerprint")
        for fp, c in top_values(rows["fingerprint"])
    ]
    evidence += [
        Evidence(f"State '{s}'", c, "session-snapshots", "processlist.state")
        for s, c in top_values(rows["state"])
    ]
    severe = median >= ACTIVE_SEVERE_PER_CPU * ncpu
    return ACTIVE_SESSIONS_OVERLOAD.finding(
        "active-sessions-overload",
        Severity.CRITICAL if severe else Severity.WARNING,
        windows,
        evidence,
        peak=int(in_win.max()),
        ncpu=ncpu,
        held=held_seconds(windows, step_seconds(snaps)),
        median=median,
        per_cpu=median / ncpu,
        bar=ACTIVE_PER_CPU,
        with_counters=" + mysqladmin" if running else "",
    )


# -------------------------------------------------------------------------------------------------
# long-running-queries
# -------------------------------------------------------------------------------------------------

LONG_RUNNING_QUERIES = RuleTexts(
    title="{sessions} statement(s) running for {bar} s or more (longest {peak} s)",
    explanation=(
        "{sessions} session(s) ran one statement for {bar} s or more; the longest had been running "
        "{peak} s. A long statement keeps its locks and its read view open: it can block DDL behind a "
        "metadata "
        "lock, other writers behind row locks, and InnoDB purge (the history list grows)."
    ),
    recommendation=(
        "Look at the oldest statements and transactions:\n"
        "  SELECT * FROM information_schema.processlist WHERE command <> 'Sleep' ORDER BY time DESC LIMIT "
        "10;\n"
        "  SELECT trx_mysql_thread_id, trx_started, trx_state, trx_query FROM "
        "information_schema.innodb_trx ORDER BY trx_started LIMIT 10;\n"
        "EXPLAIN the query for a missing index; if it must be stopped: KILL QUERY <Id>;\n"
        "Cap SELECTs with max_execution_time (MySQL 5.7.8+, ms) or max_statement_time (MariaDB 10.1+, s)."
    ),
    caveats=(
        "Backups (mysqldump, 'SELECT /*!40001 SQL_NO_CACHE */') and reports are long by design.",
        "Sessions waiting for a lock also show a growing Time: see lock-waits if it fired.",
    ),
    sources=("MySQL 8.4 Reference Manual, SHOW PROCESSLIST Statement", "pt-kill(1) --busy-time"),
    confidence="{rows} row(s) in {snapshots} snapshot(s); Time is the statement's own duration",
    disproof=(
        "If the same session Id shows a smaller Time in the next snapshot, it ran several statements, "
        "not one long one."
    ),
)


#: Time tracks a statement when, between two snapshots of its session, it grew by the time between
#: them, within this many seconds (or a fifth of the interval): snapshots are taken a few ms apart.
TIME_TRACK_TOLERANCE_S = 2.0


def _time_tracks_statement(pl: pd.DataFrame, long: pd.Series, time_s: pd.Series) -> pd.Series:
    """For each row of ``pl`` flagged ``long``: True unless the session's previous snapshot, taken
    while this statement should already have been running (Time says so), shows the same statement
    with a Time that does not fit (a statement that ran 70 s cannot read 0 s ten seconds earlier).
    A row with no such earlier snapshot (the capture starts mid-statement) is taken at its word."""
    rows = pd.DataFrame(
        {"ts": pl["ts"], "id": pl["id"], "t": time_s, "fp": pl["fingerprint"].astype("string")}
    )
    rows = rows[pl["active"].astype(bool).to_numpy() & rows["id"].isin(rows.loc[long, "id"]).to_numpy()]
    rows = rows.sort_values(["id", "ts"], kind="stable")
    prev = rows.groupby("id", sort=False).shift(1)
    dt = (rows["ts"] - prev["ts"]).dt.total_seconds()
    during = prev["ts"].notna() & (dt < rows["t"])  # the earlier snapshot fell inside the statement's run
    fits = (rows["t"] - prev["t"] - dt).abs() <= np.maximum(TIME_TRACK_TOLERANCE_S, 0.2 * dt)
    contradicted = during & (prev["fp"] == rows["fp"]).fillna(False) & ~fits
    out = pd.Series(True, index=pl.index)
    out[contradicted[contradicted].index] = False
    return out & long


@rule(key="long-running-queries", requires=("processlist",))
def long_running_queries(tl: Timeline) -> Finding | None:
    """Active statements with Time >= LONG_QUERY_S whose Time tracks the statement across snapshots
    (``_time_tracks_statement``)."""
    pl = tl.frame("processlist")
    time_s = pd.to_numeric(pl["time_s"], errors="coerce")
    mask = (pl["active"].astype(bool) & (time_s >= LONG_QUERY_S)).fillna(False).astype(bool)
    if mask.any():
        mask = _time_tracks_statement(pl, mask, time_s)
    windows = sustained(snapshots(pl), count_per_snapshot(pl, mask) > 0, min_samples=1)
    if not windows:
        return None
    rows = pl[mask].assign(_t=time_s[mask])
    longest = rows.sort_values("_t", ascending=False, kind="stable").iloc[0]
    sessions = int(rows["id"].nunique())
    member, lines = tl.lines_of(rows)
    longest_lines = (int(longest["line_no"]), int(longest.get("line_end", longest["line_no"])))
    evidence = [
        Evidence(
            f"sessions running >= {LONG_QUERY_S} s", sessions, "sessions", "processlist.time_s", member, lines
        ),
        Evidence("longest Time", int(longest["_t"]), "s", "processlist.time_s", member, longest_lines),
        Evidence(
            "longest: session Id",
            int(longest["id"]) if pd.notna(longest["id"]) else "?",
            "",
            "processlist.id",
        ),
        Evidence(
            "longest: State",
            str(longest["state"]) if pd.notna(longest["state"]) else "(none)",
            "",
            "processlist.state",
        ),
        Evidence("longest: query", str(longest["fingerprint"] or "")[:500], "", "processlist.fingerprint"),
    ]
    per_session = rows.sort_values("_t").drop_duplicates("id", keep="last")
    evidence += [
        Evidence(f"query '{fp[:200]}'", c, "sessions", "processlist.fingerprint")
        for fp, c in top_values(per_session["fingerprint"])
    ]
    peak = int(longest["_t"])
    return LONG_RUNNING_QUERIES.finding(
        "long-running-queries",
        Severity.CRITICAL if peak >= LONG_QUERY_SEVERE_S else Severity.WARNING,
        windows,
        evidence,
        sessions=sessions,
        bar=LONG_QUERY_S,
        peak=peak,
        rows=len(rows),
        snapshots=rows["ts"].nunique(),
    )


# -------------------------------------------------------------------------------------------------
# lock-waits
# -------------------------------------------------------------------------------------------------

LOCK_WAITS = RuleTexts(
    title="{peak} sessions waiting for locks{longest_title}{behind}",
    explanation=(
        "For {held:.0f} s sessions queued behind locks: up to {peak} at once{longest_text}. Every statement "
        "that needs the same table or rows joins the queue until the holder commits, finishes or is "
        "killed; a "
        "DDL waiting for a metadata lock also blocks every later query on its table.{blocker_text}"
    ),
    recommendation=(
        "{kill}"
        "Find the blocker (the oldest transaction or DDL), then decide whether to end it:\n"
        "  SELECT * FROM sys.schema_table_lock_waits;     -- metadata locks (MySQL 5.7+, "
        "performance_schema)\n"
        "  SELECT * FROM sys.innodb_lock_waits;           -- row locks (MySQL 5.7+)\n"
        "  SELECT * FROM information_schema.METADATA_LOCK_INFO;  -- MariaDB (plugin metadata_lock_info)\n"
        "  SELECT trx_mysql_thread_id, trx_started, trx_query FROM information_schema.innodb_trx ORDER BY "
        "trx_started;\n"
        "  KILL <blocking Id>;\n"
        "Run DDL with a short wait so it cannot queue everyone: SET SESSION lock_wait_timeout = 5; before "
        "ALTER,\n"
        "or pt-online-schema-change / gh-ost."
    ),
    caveats=(
        (
            "InnoDB row-lock waits do not show in State (they look like 'updating' or 'executing'); only "
            "the status "
            "counter Innodb_row_lock_current_waits or sys.innodb_lock_waits show them."
        ),
        (
            "An idle session (Sleep) can hold locks inside an open transaction: the blocker may not be running "
            "anything."
        ),
    ),
    sources=("MySQL manual, Metadata Locking", "MySQL sys schema"),
    confidence="{agree}; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If sys.schema_table_lock_waits and sys.innodb_lock_waits are empty while the states persist, "
        "the sessions are not blocked by another session (e.g. a lock held by a stuck storage engine "
        "call)."
    ),
)


def _lock_state_evidence(
    tl: Timeline, pl: pd.DataFrame, waiting: pd.Series, windows: list[Window], n: pd.Series
) -> tuple[list[Evidence], int, int]:
    """Sessions in lock-wait states: (evidence, peak sessions, longest wait s)."""
    rows = pl[waiting & within(pl["ts"], windows)]
    member, lines = tl.lines_of(rows)
    peak_n = int(n[within(snapshots(pl), windows)].max())
    peak_wait = int(pd.to_numeric(pl["time_s"], errors="coerce")[rows.index].max()) if len(rows) else 0
    evidence = (
        [
            Evidence(
                "sessions waiting for a lock (max)", peak_n, "sessions", "processlist.state", member, lines
            ),
            Evidence("longest wait (Time)", peak_wait, "s", "processlist.time_s", member, lines),
        ]
        + [
            Evidence(f"State '{s}'", c, "session-snapshots", "processlist.state", member, lines)
            for s, c in top_values(rows["state"])
        ]
        + [
            Evidence(f"waiting query '{fp[:200]}'", c, "session-snapshots", "processlist.fingerprint")
            for fp, c in top_values(rows["fingerprint"], 2)
        ]
    )
    return evidence, peak_n, peak_wait


@rule(
    key="lock-waits",
    requires=("processlist",),
    optional=tuple(sorted({"mysqladmin", *locks.FIND_INPUTS} - {"processlist"})),
)
def lock_waits(tl: Timeline) -> Finding | None:
    """>= 3 sessions in lock-wait states, or one waiting >= 10 s (its Time proves the wait), in 2
    consecutive snapshots; or Innodb_row_lock_current_waits >= 3 for 5 s."""
    pl = tl.frame("processlist")
    snaps = snapshots(pl)
    # Match each distinct State once: a 1-hour capture has millions of rows but a few dozen states.
    is_lock = value_is(pl["state"], lambda s: s.str.match(LOCK_STATE_RE))
    waiting = pd.Series(pl["active"].to_numpy(dtype=bool) & is_lock, index=pl.index)
    time_s = pd.to_numeric(pl["time_s"], errors="coerce")
    n = count_per_snapshot(pl, waiting)
    long_wait = count_per_snapshot(pl, waiting & (time_s >= LOCK_WAIT_MIN_S).fillna(False)) > 0
    hit = (n >= LOCK_WAIT_MIN_SESSIONS) | long_wait
    windows = sustained(snaps, hit, min_samples=need(len(snaps), LOCK_WAIT_SNAPSHOTS))
    row_locks = status(tl, "Innodb_row_lock_current_waits")
    row_windows: list[Window] = []
    if len(row_locks):
        row_windows, _ = sustained_or_extreme(row_locks["ts"], row_locks["value"] >= ROW_LOCK_MIN_WAITS)
    all_windows = merge_windows(windows + row_windows)
    if not all_windows:
        return None
    evidence: list[Evidence] = []
    agree: list[str] = []
    peak_n, peak_wait = 0, 0
    if windows:
        agree.append("processlist states")
        evidence, peak_n, peak_wait = _lock_state_evidence(tl, pl, waiting, windows, n)
    if row_windows:
        agree.append("Innodb_row_lock_current_waits")
        rl = row_locks[within(row_locks["ts"], row_windows)]
        series = "mysqladmin.Innodb_row_lock_current_waits"
        evidence.append(
            cite(tl, "InnoDB row-lock waits now (max)", int(rl["value"].max()), "waits", series, rl)
        )
        peak_n = max(peak_n, int(rl["value"].max()))
    blocker = _named_blocker(tl, all_windows)
    behind, kill, blocker_text = "", "", ""
    if blocker is not None:
        evidence += blocker.evidence
        lock = LOCK_KIND_WORDS[blocker.lock]
        if blocker.lock == "metadata":
            lock = (
                f"metadata lock; waiting first: {short_query(blocker.waiter)}"
                if blocker.waiter
                else "metadata lock"
            )
        blocker_text = f"{blocker.phrase()} ({lock})"
        behind = f" behind {blocker.who()}"
        peak_n = max(peak_n, blocker.blocks)
        kill = f"End the blocker ({blocker.phrase()}):\n  {blocker.kill()}\n" + (
            SLEEPING_RELEASE if blocker.statement == blockers.SLEEPING else ""
        )
        agree.append(blocker.evidence[0].series.split(".")[0] if blocker.evidence else "blocker")
    severe = peak_n >= LOCK_WAIT_SEVERE_SESSIONS or peak_wait >= LOCK_WAIT_SEVERE_S
    found = LOCK_WAITS.finding(
        "lock-waits",
        Severity.CRITICAL if severe else Severity.WARNING,
        all_windows,
        evidence,
        peak=peak_n,
        longest_title=f" (up to {peak_wait} s)" if peak_wait else "",
        behind=behind,
        kill=kill,
        held=held_seconds(all_windows, step_seconds(snaps)),
        longest_text=f", the longest waiting {peak_wait} s" if peak_wait else "",
        blocker_text=(
            f" Blocker: {blocker_text}."
            if blocker is not None
            else " The bundle does not show who holds the lock: no lock table or transaction list names it."
        ),
        agree=" + ".join(agree),
    )
    return dataclasses.replace(found, culprit=blocker.culprit()) if blocker is not None else found


#: What releases the lock of an idle blocker no transaction list shows in a transaction, short of KILL
#: (MySQL 8.4, "LOCK TABLES and UNLOCK TABLES Statements", "FLUSH Statement").
SLEEPING_RELEASE = (
    "  -- or, in that session: UNLOCK TABLES (a LOCK TABLES or FLUSH TABLES WITH READ LOCK it took), COMMIT "
    "(an open transaction)\n"
)
#: How a blocker's lock is named in the text.
LOCK_KIND_WORDS = {
    "row": "InnoDB row lock",
    "metadata": "metadata lock",
    "global": "global read / backup lock",
}


def _named_blocker(tl: Timeline, windows: list[Window]) -> blockers.Blocker | None:
    """The blocker the bundle names (``analyzer.waits.holders.locks.find``) in ``windows``, most waiters
    first: the session to end, with its user@host, transaction and statement."""
    for b in locks.find(tl):
        if b.blocks and any(w.start <= x.end and x.start <= w.end for w in b.windows for x in windows):
            return b
    return None


# -------------------------------------------------------------------------------------------------
# same-query-pileup
# -------------------------------------------------------------------------------------------------

SAME_QUERY_PILEUP = RuleTexts(
    title="{peak} sessions running the same fast query at once",
    explanation=(
        "One query shape, {query}, accounted for up to {share:.0f} % of the active sessions "
        "({peak} at the peak), each running for {fast_s} s or less. The query "
        "itself is fast; so many copies at the same moment compete for CPU, locks and temporary tables."
    ),
    recommendation=(
        "Throttle or cache this query at the application (result cache, fewer identical requests),\n"
        "and cap concurrency with the connection pool size. Inspect it with:\n"
        "  EXPLAIN <the query with real values>;\n"
        "and in MariaDB/Percona Server consider thread_handling=pool-of-threads."
    ),
    caveats=(
        "The processlist is sampled: sessions between snapshots are not seen.",
        "Fingerprints replace literals; different values of the same shape count as one query.",
    ),
    sources=("MySQL 8.4 Reference Manual, General Thread States", "pt-fingerprint(1)"),
    confidence="seen in {snapshots} consecutive snapshot(s)",
    disproof=(
        "If the application's request rate did not rise in the window, look for a slowdown that made "
        "the query pile up."
    ),
)


def _top_fingerprint(pl: pd.DataFrame, active: pd.DataFrame) -> pd.DataFrame:
    """Per snapshot: the most frequent fingerprint among ``active``, its sessions ``n``, their median
    Time, the snapshot's active sessions and the share (indexed by ts)."""
    per_fp = active.groupby(["ts", "fingerprint"], observed=True).agg(
        n=("id", "size"), time_med=("time_s", "median")
    )
    per_fp = per_fp.reset_index().sort_values(["ts", "n"], ascending=[True, False])
    active_n = pl.groupby("ts")["active"].sum()
    top = per_fp.drop_duplicates("ts").set_index("ts").reindex(active_n.index)
    return top.assign(active=active_n, share=top["n"] / active_n.where(active_n > 0))


@rule(key="same-query-pileup", requires=("processlist",))
def same_query_pileup(tl: Timeline) -> Finding | None:
    """One fingerprint >= 50 % of active sessions and >= max(20, 4 x ncpu) sessions, median Time
    <= 1 s, for 5 s."""
    pl = tl.frame("processlist")
    fp = pl["fingerprint"]  # a category: isin looks at the distinct fingerprints, not at every row
    active = pl[pl["active"] & fp.notna() & ~fp.isin(TRANSACTION_CONTROL)]
    if not len(active):
        return None
    top = _top_fingerprint(pl, active)
    hit = (
        (top["n"] >= per_host(PILEUP_MIN_SESSIONS, tl.ncpu, PILEUP_SESSIONS_PER_CPU))
        & (top["share"] >= PILEUP_SHARE)
        & (top["time_med"] <= FAST_QUERY_MAX_TIME_S)
    )
    windows, _ = sustained_or_extreme(top.index.to_series(), hit.fillna(False).astype(bool))
    if not windows:
        return None
    in_win = top[within(top.index.to_series(), windows)]
    fingerprint = in_win["fingerprint"].mode().iloc[0]
    rows = active[(active["fingerprint"] == fingerprint) & within(active["ts"], windows)]
    member, lines = tl.lines_of(rows)
    peak = in_win.loc[in_win["fingerprint"] == fingerprint]
    evidence = [
        Evidence("query fingerprint", fingerprint[:500], "", "processlist.fingerprint", member, lines),
        Evidence(
            "sessions running it (max)",
            int(peak["n"].max()),
            "sessions",
            "processlist.fingerprint",
            member,
            lines,
        ),
        Evidence(
            "share of active sessions (max)",
            round(float(peak["share"].max()) * 100, 1),
            "%",
            "processlist.active",
        ),
        Evidence("active sessions (max)", int(in_win["active"].max()), "sessions", "processlist.active"),
        Evidence(
            "Time of those sessions (max)",
            int(rows["time_s"].max()),
            "s",
            "processlist.time_s",
            member,
            lines,
        ),
    ]
    states = rows["state"].astype("string").fillna("(none)").value_counts().head(3)
    evidence += [
        Evidence(f"State '{s}'", int(c), "session-snapshots", "processlist.state") for s, c in states.items()
    ]
    found = SAME_QUERY_PILEUP.finding(
        "same-query-pileup",
        Severity.WARNING,
        windows,
        evidence,
        peak=int(peak["n"].max()),
        share=float(peak["share"].max()) * 100,
        fast_s=FAST_QUERY_MAX_TIME_S,
        snapshots=len(in_win),
        query=fingerprint[:200],
    )
    return dataclasses.replace(
        found, culprit=statement_culprit(tl, active[within(active["ts"], windows)], fingerprint)
    )


# -------------------------------------------------------------------------------------------------
# connection slots: who holds them (analyzer/waits/holders/slots.py)
# -------------------------------------------------------------------------------------------------


def slot_holder(tl: Timeline, found: Finding) -> Finding | None:
    """``found`` (a finding about connection slots) blaming the account the bundle shows holding
    them (``analyzer.waits.holders.slots.connection_slots``: user@client host, its Command and Time),
    with that holding's fix first; None when no account is shown holding (the caller then names the
    setting: a setting is the culprit only when no holder is shown)."""
    holding = slots.connection_holding(tl)
    if holding is None or not holding.named:
        return None
    c = holding.holder
    title = f"{found.title}, held by {c.id} ({c.statement.split(':')[0]})"
    return dataclasses.replace(
        found,
        title=title,
        explanation=f"Held by {c.id}: {c.statement}; {holding.shown_by}. {found.explanation}",
        evidence=found.evidence + tuple(e for e in holding.evidence if e not in found.evidence),
        recommendation=f"{holding.fix}\n{found.recommendation}",
        culprit=c,
    )


USER_CONNECTION_LIMIT = RuleTexts(
    title="Account {account} at its connection limit: {held} connections, new ones refused",
    explanation=(
        "{account} held {held} connections, its limit ({limit}), in {snapshots} snapshot(s): "
        "each new connection of that account finds no connection slot and is refused with "
        "ER_USER_LIMIT_REACHED (1226) while the server "
        "has slots left (Threads_connected {connected:.0f} of max_connections {max_conn}). {what}"
    ),
    recommendation="{fix}",
    caveats=(
        (
            "An account's own limit (ALTER USER ... WITH MAX_USER_CONNECTIONS n) overrides the global "
            "max_user_connections; the bundle's -variables show only the global one."
        ),
        "Aborted_connects counts every failed connection attempt, not only those refused at the limit.",
    ),
    sources=(
        "MySQL 8.4 Reference Manual, Setting Account Resource Limits (max_user_connections)",
        "MariaDB Server documentation, max_user_connections",
    ),
    confidence="processlist{refused}",
    disproof="If the account's connections stay below the limit between snapshots, the refusals were bursts.",
)


@rule(
    key="user-connection-limit",
    requires=("processlist",),
    optional=("variables", "mysqladmin", "processlist_accounts"),
)
def user_connection_limit(tl: Timeline) -> Finding | None:
    """An account at its connection limit while the server is below ``max_connections``
    (connection-saturation speaks of that): its connections reach the global ``max_user_connections``
    (> 0), or stay at one number while connections are refused (its own MAX_USER_CONNECTIONS:
    ``analyzer.waits.holders.slots``), all its sessions counted, idle ones included. Names the account."""
    holding = slots.connection_holding(tl)
    if holding is None or holding.holder is None or not str(holding.object or "").startswith("max_user"):
        return None
    c = holding.holder
    connected = status(tl, "Threads_connected") if len(tl.frame("mysqladmin")) else pd.DataFrame()
    refused = holding.waiters
    found = USER_CONNECTION_LIMIT.finding(
        "user-connection-limit",
        Severity.CRITICAL if refused else Severity.WARNING,
        list(holding.windows),
        list(holding.evidence),
        account=c.id,
        limit=holding.object,
        held=c.statement.split(" of ")[0],
        snapshots=next((e.value for e in holding.evidence if ("at its limit") in e.label), 0),
        connected=float(connected["value"].max()) if len(connected) else 0.0,
        max_conn=tl.variables.get("max_connections", "?"),
        what=f"Its connections: {c.statement}.",
        fix=holding.fix,
        refused=f" + Aborted_connects (+{refused})" if refused else "",
    )
    return dataclasses.replace(found, culprit=c)
