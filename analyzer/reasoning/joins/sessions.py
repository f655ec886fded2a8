"""Joins through MySQL sessions: the blocker the waiters queue behind, the sessions a crowd is made of,
the statement two findings name, the server process whose threads take the CPU.

Each function reads the processlist (``id``, ``state``, ``fingerprint``, ``active``) of the host both
findings are about, in the effect's windows, and links only when the sessions of the cause are most of
the sessions of the effect (JOINED_SHARE). Sources: MySQL manual, "General Thread States" and
"INFORMATION_SCHEMA INNODB_TRX"; top(1), procps-ng 4.0.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from analyzer.detect import state_in
from analyzer.evidence import lock_graph
from analyzer.evidence.consumers import cpu_consumers
from analyzer.findings import Evidence, Finding, Link
from analyzer.reasoning.links import JoinContext, joins, link, same_host, subject_ids
from analyzer.rules.correlated import COMMIT_STATES
from analyzer.rules.sessions import LOCK_STATE_RE
from analyzer.rules.transactions import DEADLOCK_STORM_PER_S
from analyzer.timeline.timeline import REPLICATION_USER, Timeline, value_is
from analyzer.timeline.windows import within

#: The cause's sessions make up at least half of the effect's: the effect is mostly the cause.
JOINED_SHARE = 0.5
#: MySQL takes the CPUs when mysqld has at least half of what top lists (100 = one CPU).
MYSQLD_CPU_SHARE = 0.5
#: States of sessions waiting to open or close a table (table-cache-contention).
TABLE_CACHE_STATES = frozenset({"opening tables", "closing tables", "opening table", "checking table"})


def _active(tl: Timeline, f: Finding) -> pd.DataFrame:
    """The active processlist rows of ``f``'s windows (all of them when the finding has none)."""
    pl = tl.frame("processlist")
    if not len(pl) or "active" not in pl:
        return pl.iloc[0:0]
    pl = pl[pl["active"].astype(bool)]
    return pl[within(pl["ts"], list(f.windows))] if f.windows else pl


def _share(rows: pd.DataFrame, mask: np.ndarray | pd.Series) -> tuple[int, int, float]:
    """(matching session-snapshots, all, share) of ``rows``."""
    hit = int(np.asarray(mask, dtype=bool).sum())
    return hit, len(rows), (hit / len(rows) if len(rows) else 0.0)


def _crowd_link(cause: Finding, effect: Finding, ctx: JoinContext, mask_of, what: str) -> Link | None:
    """Link when the rows ``mask_of(active)`` selects are most (JOINED_SHARE) of the effect's active
    sessions."""
    tl = ctx.timeline(effect)
    if tl is None or not same_host(cause, effect):
        return None
    active = _active(tl, effect)
    if not len(active):
        return None
    hit, total, share = _share(active, mask_of(active))
    if share < JOINED_SHARE:
        return None
    ids = sorted({str(i) for i in active.loc[np.asarray(mask_of(active), dtype=bool), "id"]})[:5]
    member, lines = tl.lines_of(active)
    sentence = (
        f"{share:.0%} of the active sessions of the effect ({hit} of {total} session-snapshots; "
        f"ids {', '.join(ids)}{'…' if len(ids) == 5 else ''}) are {what}."
    )
    return link(
        cause,
        effect,
        "session",
        sentence,
        [
            Evidence(
                "active sessions that are the cause's",
                round(100 * share, 1),
                "%",
                "processlist.id",
                member,
                lines,
            )
        ],
    )


def _statement(f: Finding) -> str | None:
    ids = subject_ids(f, "statement")
    return min(ids) if ids else None


@joins(("long-transaction", "lock-waits"), ("innodb-deadlock", "lock-waits"))
def blocker_is_the_session(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The lock-waits' blocker (its culprit session) is the cause's session."""
    if not same_host(cause, effect):
        return None
    shared = subject_ids(cause, "session") & subject_ids(effect, "session")
    if not shared:
        return None
    sid = min(shared)
    return link(
        cause,
        effect,
        "session",
        f"The waiters queue behind session {sid}, the session of the cause (the blocker -lock-waits, "
        "-transactions or the processlist name).",
        effect.culprit.evidence if effect.culprit else (),
    )


@joins(
    ("long-transaction", "sessions-waiting"),
    ("lock-waits", "sessions-waiting"),
    ("purge-lag", "sessions-waiting"),
)
def holder_is_the_culprit(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The holder the waits finding names (analyzer/waits/holders) is the cause's culprit: the same
    session or transaction."""
    if not same_host(cause, effect) or cause.culprit is None or effect.culprit is None:
        return None
    if (cause.culprit.kind, cause.culprit.id) != (effect.culprit.kind, effect.culprit.id):
        return None
    c = effect.culprit
    return link(
        cause,
        effect,
        "session",
        f"The sessions waiting queue behind {c.kind} {c.id}, the holder the cause names.",
        c.evidence[:2],
    )


@joins(("innodb-deadlock", "lock-waits"), ("innodb-deadlock", "sessions-waiting"))
def waiters_deadlock(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """No holder: the row-lock waiters (-lock-waits) include the sessions of the latest deadlock while
    InnoDB detects DEADLOCK_STORM_PER_S deadlocks or more per second (Innodb_deadlocks): the waits are
    the contention that deadlocks, not a queue behind one session."""
    tl = ctx.timeline(effect)
    if tl is None or not same_host(cause, effect) or effect.culprit is not None:
        return None
    rate = next((e for e in cause.evidence if e.series == "mysqladmin.Innodb_deadlocks"), None)
    if rate is None or not isinstance(rate.value, int | float) or rate.value < DEADLOCK_STORM_PER_S:
        return None
    waiting = lock_graph.waiting_sessions(tl, list(effect.windows))
    deadlocked = {int(i) for i in subject_ids(cause, "session") if i.isdigit()}
    shared = sorted(waiting & deadlocked) if deadlocked else sorted(waiting)[:5]
    if not shared:
        return None
    return link(
        cause,
        effect,
        "session",
        f"Sessions {', '.join(map(str, shared))} wait for row locks and deadlock, {rate.value:g} "
        "deadlocks "
        "per second: the waiters take turns on the same rows, no session holds them.",
        (rate,),
    )


@joins(("lock-waits", "active-sessions-overload"), ("lock-waits", "long-running-queries"))
def waiters_are_the_crowd(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Most active sessions of the effect are in a lock-wait state or wait for a row lock (-lock-waits)."""

    tl = ctx.timeline(effect)
    row_waiters = lock_graph.waiting_sessions(tl, list(effect.windows)) if tl is not None else frozenset()

    def waiting(rows: pd.DataFrame) -> np.ndarray:
        ids = pd.to_numeric(rows["id"], errors="coerce").isin(row_waiters).to_numpy(dtype=bool)
        return value_is(rows["state"], lambda s: s.str.match(LOCK_STATE_RE)) | ids

    return _crowd_link(cause, effect, ctx, waiting, "sessions waiting for a lock")


@joins(("commit-serialization", "active-sessions-overload"))
def committers_are_the_crowd(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Most active sessions of the effect are in the commit phase."""

    def committing(rows: pd.DataFrame) -> np.ndarray:
        commit = value_is(rows["fingerprint"], lambda s: s == "commit")
        return commit | state_in(rows, COMMIT_STATES).to_numpy()

    return _crowd_link(cause, effect, ctx, committing, "sessions in the commit phase")


@joins(("table-cache-contention", "active-sessions-overload"))
def openers_are_the_crowd(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Most active sessions of the effect wait to open or close tables."""

    def opening(rows: pd.DataFrame) -> np.ndarray:
        return state_in(rows, TABLE_CACHE_STATES).to_numpy()

    return _crowd_link(cause, effect, ctx, opening, "sessions opening or closing tables")


@joins(
    ("same-query-pileup", "active-sessions-overload"),
    ("tmp-table-churn", "active-sessions-overload"),
    ("full-scans", "active-sessions-overload"),
    ("tmp-table-churn", "same-query-pileup"),
    ("full-scans", "same-query-pileup"),
)
def statement_is_the_crowd(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Most active sessions of the effect run the statement the cause names (its fingerprint)."""
    fp = _statement(cause)
    if fp is None:
        return None
    other = _statement(effect)
    if other is not None and other != fp:
        return None

    def running(rows: pd.DataFrame) -> np.ndarray:
        return (rows["fingerprint"].astype("string") == fp).fillna(False).to_numpy(dtype=bool)

    return _crowd_link(cause, effect, ctx, running, "sessions running the statement the cause names")


#: The page reads from disk are the crowd's when most sessions run reads and the pool reads at least
#: this many pages from disk per second per active session (each waits on disk every second).
READS_PER_SESSION_MIN = 1.0
#: The InnoDB page reads from disk are the pile-up's when it is a read statement run by most sessions.
READ_STATEMENT_RE = re.compile(r"^\s*(\(\s*)?(select|with)\b", re.I)


@joins(("buffer-pool-misses", "same-query-pileup"), ("buffer-pool-misses", "active-sessions-overload"))
def misses_are_the_crowds_reads(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The buffer pool's reads from disk are made by the effect's sessions: most active sessions run
    reads (SELECT) while the pool reads from disk at least READS_PER_SESSION_MIN pages per second per
    active session, so the pages they wait for come from disk."""

    tl = ctx.timeline(effect)
    reads = next(
        (float(e.value) for e in cause.evidence if e.label == "Innodb_buffer_pool_reads per second"), 0.0
    )
    if tl is None or not len(active := _active(tl, effect)):
        return None
    # Enough page reads from disk for every session of the crowd to wait on one each second.
    sessions = float(active.groupby("ts").size().median())
    if reads < READS_PER_SESSION_MIN * sessions:
        return None

    def reading(rows: pd.DataFrame) -> np.ndarray:
        fp = rows["fingerprint"].astype("string").fillna("")
        return fp.str.match(READ_STATEMENT_RE).fillna(False).to_numpy(dtype=bool)

    return _crowd_link(
        cause,
        effect,
        ctx,
        reading,
        f"sessions running reads (SELECT) while the buffer pool reads {reads:,.0f} pages/s "
        "from disk, "
        f"{reads / sessions:,.0f} per active session",
    )


@joins(
    ("active-sessions-overload", "cpu-saturation"),
    ("same-query-pileup", "cpu-saturation"),
    ("full-scans", "cpu-saturation"),
)
def mysqld_takes_the_cpu(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The process taking the CPUs (top) is mysqld, the server whose sessions the cause names; no
    link when another process takes them (cpu-saturation then names it as its culprit)."""
    tl = ctx.timeline(effect)
    if tl is None or not same_host(cause, effect) or effect.culprit is not None:
        return None
    used = cpu_consumers(tl, list(effect.windows))
    if used is None or used.mysqld + used.others <= 0:
        return None
    share = used.mysqld / (used.mysqld + used.others)
    if share < MYSQLD_CPU_SHARE:
        return None
    return link(
        cause,
        effect,
        "process",
        f"top shows mysqld taking {share:.0%} of the busy CPU ({used.mysqld:.0f} % CPU, 100 % = "
        "one CPU): "
        "the run queue is the server's threads running these sessions.",
        used.evidence[:3],
    )


@joins(("long-transaction", "replica-lag"), ("lock-waits", "replica-lag"))
def sql_thread_is_the_waiter(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """A waiter for a row lock (-lock-waits, or INNODB_LOCK_WAITS with INNODB_TRX) is the replica's SQL
    thread (processlist User ``system user``), and the blocker is the cause's session (long-transaction;
    lock-waits: whatever blocker it names): the local session holds the rows the replica must change."""
    tl = ctx.timeline(effect)
    if tl is None or not same_host(cause, effect):
        return None
    windows = list(cause.windows) + list(effect.windows)
    waiters = lock_graph.waiting_sessions(tl, windows)
    pl = tl.frame("processlist")
    if not waiters or not len(pl) or "user" not in pl:
        return None
    system = pl[(pl["user"].astype("string") == REPLICATION_USER).fillna(False)]
    sql_threads = sorted({int(i) for i in pd.to_numeric(system["id"], errors="coerce").dropna()} & waiters)
    if not sql_threads:
        return None
    member, lines = tl.lines_of(system[pd.to_numeric(system["id"], errors="coerce").isin(sql_threads)])
    blocker = min(subject_ids(cause, "session")) if subject_ids(cause, "session") else "the blocker named"
    return link(
        cause,
        effect,
        "thread",
        f"The thread waiting for the row lock, thread {sql_threads[0]}, is the replication SQL "
        "thread "
        f"(system user); it waits behind session {blocker}.",
        [
            Evidence(
                "replication SQL thread waiting for a row lock",
                sql_threads[0],
                "thread id",
                "processlist.user",
                member,
                lines,
            )
        ],
    )
