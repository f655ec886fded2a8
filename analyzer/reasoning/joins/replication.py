"""Joins through replication and Galera: the local session whose lock the replica's SQL thread waits
for, the table scans the SQL thread makes, the node whose disk or CPU holds the cluster back.

A replica's lag (``replica-lag`` on the replica, ``replica-lag-source`` across the source and the
replica, the replica last in its ``hosts``) is joined to a finding of the replica's own host only by
what the replica's capture shows of its SQL thread (``analyzer.cluster.replica_causes``): the waiter in
``-lock-waits`` is the SQL thread (processlist ``system user``) and the blocker is the session the
other finding blames; the SQL thread is in ``find_row()``, copies a table or applies row events while the
other finding counts the table scans or the redo log's waits. A Galera finding is joined to a node's own
finding through the node it names first (the flow control sender, the node behind). Sources: MariaDB Knowledge
Base, "Replication Thread States"; MySQL 8.4 Reference Manual, INFORMATION_SCHEMA INNODB_LOCK_WAITS; Galera
Cluster documentation, "Flow Control".
"""

from __future__ import annotations

import re

import pandas as pd

from analyzer.cluster.nodes import saturation
from analyzer.cluster.replica_causes import (
    DDL_STATE_RE,
    DDL_STATEMENT_RE,
    FIND_ROW_RE,
    MOSTLY,
    ROW_EVENT_RE,
    applier_rows,
)
from analyzer.findings import Evidence, Finding, Link, Severity
from analyzer.reasoning.links import JoinContext, joins, link, subject_ids
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import within
from analyzer.waits.model import Resource

LAG_KEYS = ("replica-lag", "replica-lag-source")


def replica_of(f: Finding) -> str | None:
    """The replica a lag finding is about: its host, or the last of a cross-host finding's hosts."""
    if f.host is not None:
        return f.host
    return f.hosts[-1] if f.hosts else None


def _timeline(ctx: JoinContext, host: str | None) -> Timeline | None:
    """The timeline of ``host`` (None: a one-host analysis outside a case, keyed None)."""
    return ctx.timelines.get(host)


def _sql_waits(tl: Timeline, blocker: str) -> pd.DataFrame:
    """The -lock-waits rows in which a replication applier thread waits for session ``blocker``."""
    lw = tl.frame("lock_waits")
    appliers = applier_rows(tl)
    if not len(lw) or "waiting_thread" not in lw or not len(appliers):
        return lw.iloc[0:0]
    threads = set(pd.to_numeric(appliers["id"], errors="coerce").dropna().astype(int))
    waiting = pd.to_numeric(lw["waiting_thread"], errors="coerce").isin(threads)
    blocking = pd.to_numeric(lw["blocking_thread"], errors="coerce") == float(blocker)
    return lw[(waiting & blocking).to_numpy()]


@joins(*((cause, lag) for cause in ("long-transaction", "lock-waits") for lag in LAG_KEYS))
def blocker_holds_the_sql_thread(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The session the cause blames (its culprit, or its ``session`` subjects) on the replica is the
    blocker of the replica's SQL thread in the replica's -lock-waits."""
    replica = replica_of(effect)
    tl = _timeline(ctx, replica)
    if tl is None or cause.host != replica:
        return None
    for session in sorted(subject_ids(cause, "session")):
        if not session.isdigit():
            continue
        rows = _sql_waits(tl, session)
        if len(rows):
            waiter = int(rows["waiting_thread"].iloc[0])
            member, lines = tl.lines_of(rows)
            sentence = (
                f"The waiter in {replica}'s -lock-waits, thread {waiter}, is the replica's SQL thread, and "
                "the "
                f"session holding the lock is session {session}, the one this finding blames."
            )
            ev = Evidence(
                f"SQL thread {waiter} blocked by session {session}",
                len(rows),
                "snapshots",
                "lock_waits.waiting_thread",
                member,
                lines,
            )
            return link(cause, effect, "thread", sentence, [ev])
    return None


#: What the SQL thread does that reads tables by scan or writes much redo: row lookups without a key,
#: DDL (a table copy), row events of a large transaction.
SQL_WORK_RE = re.compile(f"{FIND_ROW_RE.pattern}|{DDL_STATE_RE.pattern}|{ROW_EVENT_RE.pattern}", re.I)


def _sql_work(tl: Timeline, effect: Finding) -> tuple[float, pd.DataFrame, str]:
    """Share of the applier's snapshots in ``effect``'s windows in which it scans, copies or applies
    rows (SQL_WORK_RE on its State, or DDL as its statement), those rows and the commonest State."""
    appliers = applier_rows(tl)
    if effect.windows:
        appliers = appliers[within(appliers["ts"], list(effect.windows))]
    if not len(appliers) or "state" not in appliers:
        return 0.0, appliers, ""
    states = appliers["state"].astype("string").fillna("")
    hit = states.str.contains(SQL_WORK_RE).fillna(False)
    if "fingerprint" in appliers:
        hit |= (
            appliers["fingerprint"].astype("string").fillna("").str.contains(DDL_STATEMENT_RE).fillna(False)
        )
    working = appliers[hit.to_numpy(dtype=bool)]
    share = working["ts"].nunique() / appliers["ts"].nunique()
    return share, working, str(states[working.index].mode().iloc[0]) if len(working) else ""


def _clients_quiet(tl: Timeline, effect: Finding) -> bool:
    """No client session runs a statement in most snapshots of ``effect``'s windows (processlist
    ``active``, which leaves out the collector's own statements and the replication threads)."""
    pl = tl.frame("processlist")
    if not len(pl) or "active" not in pl:
        return True
    pl = pl[within(pl["ts"], list(effect.windows))] if effect.windows else pl
    busy = pl[pl["active"].to_numpy(dtype=bool)]["ts"].nunique()
    return busy < MOSTLY * max(pl["ts"].nunique(), 1)


@joins(*((lag, effect) for lag in LAG_KEYS for effect in ("full-scans", "log-waits")))
def sql_thread_work(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The table scans (or the redo writes) counted on the replica are the SQL thread's: in the
    effect's windows the SQL thread looks up rows without a key, copies a table for DDL or applies row
    events in most snapshots (MOSTLY); for redo, no client session writes meanwhile."""
    replica = replica_of(cause)
    tl = _timeline(ctx, replica)
    if tl is None or effect.host != replica:
        return None
    share, working, state = _sql_work(tl, effect)
    if share < MOSTLY or (effect.key == "log-waits" and not _clients_quiet(tl, effect)):
        return None
    member, lines = tl.lines_of(working)
    what = "table scans" if effect.key == "full-scans" else "redo log writes"
    sentence = (
        f"{replica}'s SQL thread is in {state} in {share:.0%} of the snapshots of these {what}: they are "
        "the replica applying what the lag is made of."
    )
    return link(
        cause,
        effect,
        "thread",
        sentence,
        [
            Evidence(
                "SQL thread at work", round(100 * share), "% of snapshots", "processlist.state", member, lines
            )
        ],
    )


#: A node's own saturation that can hold a Galera cluster back.
NODE_CAUSES = ("disk-saturation", "cpu-saturation")


@joins(*((c, e) for c in NODE_CAUSES for e in ("galera-flow-control", "host-stall-holds-others")))
def slow_node(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The node the Galera finding names first (the flow-control sender, the stalled host) is the host
    whose own capture shows the saturation, and the others' do not (``cluster_nodes.saturation``)."""
    if not effect.hosts or cause.host != effect.hosts[0] or cause.hosts:
        return None
    named = {k: v for k, v in ctx.timelines.items() if k is not None}
    alone = saturation(named, cause.host) if cause.host in named else None
    if alone is None:  # the other nodes' captures show the same: hosts sharing one machine
        return None
    sentence = (
        f"{cause.host}, the node that sent flow control and held {', '.join(effect.hosts[1:])} back, is the "
        "host whose own capture shows this saturation."
    )
    return link(cause, effect, "galera", sentence, cause.evidence[:2])


#: What two Galera nodes writing the same rows cause on each of them: the transactions certification
#: or a brute-force abort rolls back show as InnoDB deadlocks (ER_LOCK_DEADLOCK is what the client
#: gets), and the appliers' brute-force aborts make local sessions wait for row locks and hold
#: transactions open (Galera Cluster documentation, "Certification-Based Replication").
CONFLICT_EFFECTS = ("innodb-deadlock", "lock-waits", "long-transaction", "sessions-waiting")
#: The waits of ``sessions-waiting`` a write conflict explains (its title names the resource).
CONFLICT_WAITS = (Resource.ROW_LOCK.value, Resource.GALERA_CERTIFICATION.value)


@joins(*(("galera-write-conflicts", e) for e in CONFLICT_EFFECTS))
def conflicting_writes(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The host of the lock or deadlock finding is one of the Galera nodes writing the same rows, and
    the two findings' windows overlap: that node's deadlocks and lock waits are the conflict's."""
    if effect.host is None or effect.hosts or effect.host not in cause.hosts:
        return None
    if effect.severity is Severity.INFO or (
        effect.key == "sessions-waiting" and not any(w in effect.title for w in CONFLICT_WAITS)
    ):
        return None  # a passing wait, or sessions waiting for flow control or a disk: another cause's
    if not any(a.start <= b.end and b.start <= a.end for a in cause.windows for b in effect.windows):
        return None
    others = [h for h in cause.hosts if h != effect.host]
    sentence = (
        f"{effect.host} writes the same rows as {' and '.join(others)}: Galera rolls back the transaction "
        "that loses certification or is brute-force aborted, and the client sees a deadlock; the lock "
        f"waits and deadlocks on {effect.host} are that conflict's."
    )
    node = [e for e in cause.evidence if e.label.startswith(f"{effect.host} ")]
    return link(cause, effect, "galera", sentence, node[:2] or cause.evidence[:1])


@joins(("galera-node-behind", "lock-waits"), ("galera-node-behind", "sessions-waiting"))
def node_lock_holder(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The node behind (the first of the cause's hosts) is the host of the waits, and the session
    holding the global read or backup lock that desynced it (the cause's culprit) is the holder the
    waits name: one FLUSH TABLES WITH READ LOCK or backup lock both desyncs the node and queues its
    writes (MySQL 8.4 Reference Manual, "FLUSH Statement"; Galera Cluster documentation, "Node State
    Changes")."""
    if effect.host is None or effect.hosts or not cause.hosts or effect.host != cause.hosts[0]:
        return None
    c, e = cause.culprit, effect.culprit
    if c is None or e is None or c.kind != "session" or (c.kind, c.id) != (e.kind, e.id):
        return None
    if not any(a.start <= b.end and b.start <= a.end for a in cause.windows for b in effect.windows):
        return None
    sentence = (
        f"Session {e.id} on {effect.host} holds the global read or backup lock that desynced "
        f"{effect.host}; the sessions waiting there queue behind the same session."
    )
    return link(cause, effect, "galera", sentence, e.evidence[:2])
