"""Sessions waiting, by what they wait for: one rule for every resource of the wait model.

A senior engineer reads a processlist by what each session waits for, not by its State's wording:
fifteen sessions in ``updating`` whose transactions are in ``LOCK WAIT`` wait for a row lock; sixty
in ``Waiting for backup lock`` for a backup. ``analyzer.waits.read.waits`` gives every session's
resource (the manuals' states, the transaction lists, lock waits, ps wait channels); this rule raises
"N sessions wait for <resource>" for each resource that kept sessions waiting, quoting their states,
the object when the bundle names it and the counters of the catalogue that measure the same wait. A
state no table entry knows is reported as unknown, never dropped.

Who holds each resource is read by ``analyzer.waits.holders`` (one reader per resource). When the
bundle shows the holder of the resource sessions wait for (``Holding.named``: held ``HOLDER_MIN_S`` or
more), the finding names it: severity by waiters and time, culprit the holder, title and text its
``shown_by`` and age, recommendation the holder's ``fix`` (``KILL <id>``, end the read view ...).
Without a holder shown it stays informational and says what the bundle shows instead (the
contention: ``contention among 16 sessions on sb.t1 ... 45 deadlocks per second``) and where to look.
Sources: MySQL 8.4 Reference Manual, "Examining Server Thread (Process) Information"; MariaDB Server
documentation, "Thread States".
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.detect import held_seconds, status, step_seconds, sustained_or_extreme, top_values
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import STATUS_KEPT, Timeline
from analyzer.timeline.windows import within
from analyzer.waits.counters import of_resource
from analyzer.waits.holders import Holding, holders, pool, reader_inputs
from analyzer.waits.holders.slots import NO_WAITS
from analyzer.waits.model import Resource
from analyzer.waits.read import snapshots, waits

#: Three sessions waiting for the same resource at once is a queue, not a passing wait (as
#: ``lock-waits``' LOCK_WAIT_MIN_SESSIONS).
WAIT_MIN_SESSIONS = 3
#: Resources that are not a wait: working, or idle with nothing held; ``UNKNOWN`` is reported apart.
NOT_WAITS = frozenset({Resource.NOTHING.value, Resource.UNKNOWN.value})
#: Without a holder shown the finding is informational (an info finding never becomes the root cause),
#: except for the locks: sessions queued on a lock are a problem whoever holds it (``LOCK_WAITS_SEVERITY``).
WAITS_SEVERITY = Severity.INFO
LOCK_RESOURCES = frozenset(
    {Resource.ROW_LOCK, Resource.METADATA_LOCK, Resource.TABLE_LOCK, Resource.GLOBAL_READ_LOCK}
)
LOCK_WAITS_SEVERITY = Severity.WARNING
#: The series of the evidence that says what the bundle shows without a holder (the contention): the
#: verdict reads it as a cause shown (analyzer.reasoning.verdict.SHOWN_SERIES).
CONTENTION_SERIES = "holders.contention"
#: With a holder shown: critical from this many sessions waiting at once, or this long held (s).
HELD_SEVERE_WAITERS = 10
HELD_SEVERE_S = 60.0
#: States of each resource quoted in the text, most frequent first.
STATES_QUOTED = 3
#: Unknown states listed, most frequent first.
UNKNOWN_LISTED = 10
#: What to look at first, per resource (the holders step will name the holder itself).
LOOK_AT = {
    Resource.ROW_LOCK: (
        "the oldest transaction holding the rows: SELECT * FROM sys.innodb_lock_waits; "
        "(MariaDB: information_schema.INNODB_LOCK_WAITS joined to INNODB_TRX)"
    ),
    Resource.METADATA_LOCK: (
        "the session holding the metadata lock (an open transaction that used the "
        "table, or a DDL): SELECT * FROM sys.schema_table_lock_waits;"
    ),
    Resource.TABLE_LOCK: (
        "the session holding LOCK TABLES or writing a MyISAM table: SHOW OPEN TABLES WHERE In_use > 0;"
    ),
    Resource.GLOBAL_READ_LOCK: (
        "the session that ran FLUSH TABLES WITH READ LOCK, BACKUP STAGE or LOCK "
        "INSTANCE FOR BACKUP (often a backup tool)"
    ),
    Resource.DISK_SPACE: "the full file system: df -h on datadir, tmpdir and the binary log's directory",
    Resource.DISK_IO: "the device and who else loads it: iostat -x, pidstat -d",
    Resource.LOG_FLUSH: (
        "the redo and binary log's device latency and sync_binlog / innodb_flush_log_at_trx_commit"
    ),
    Resource.REPLICA_ACK: (
        "the semi-synchronous replicas: their I/O threads (SHOW REPLICA STATUS) and Rpl_semi_sync_*_clients"
    ),
    Resource.REPLICA_APPLY: "the replica's workers: performance_schema.replication_applier_status_by_worker",
    Resource.GALERA_CERTIFICATION: (
        "writes to the same rows on several nodes: wsrep_local_cert_failures per node"
    ),
    Resource.GALERA_FLOW_CONTROL: (
        "the node that sends flow control (wsrep_flow_control_sent) and its receive queue"
    ),
    Resource.TABLE_CACHE: (
        "table_open_cache, table_definition_cache and open_files_limit against the tables in use"
    ),
    Resource.QUERY_CACHE: "the query cache: query_cache_type = 0 removes its lock",
    Resource.CPU: "the run queue: vmstat r against the CPUs",
    Resource.CLIENT: (
        "the application: sessions left idle inside a transaction, or clients slow to read their results"
    ),
    Resource.SOURCE: "the replication source and the network to it",
}

SESSIONS_WAITING = RuleTexts(
    title="{peak} sessions wait for {resource}{on}",
    explanation=(
        "For {held:.0f} s up to {peak} sessions waited for {resource} at once{on_text} (states: {states})."
        "{others}{unknown}"
    ),
    recommendation="{contention}Look at {look_at}.",
    caveats=(
        (
            "The timeline keeps few idle sessions (Sleep) of each snapshot: an idle session holding a "
            "transaction is seen through INNODB_TRX or the InnoDB monitor when the bundle has them."
        ),
        (
            "A holder is named only when the bundle shows it holding for 2 s or more (the same transaction "
            "across "
            "snapshots, a wait or an idleness that long); a rotating set of short blockers is contention, "
            "not a holder."
        ),
    ),
    sources=(
        "MySQL 8.4 Reference Manual, Examining Server Thread (Process) Information",
        "MariaDB Server documentation, Thread States",
    ),
    confidence="{agree}; held {held:.0f} s in {n_windows} window(s)",
    disproof="If the same sessions show other states between the snapshots, the waits were passing.",
)

HELD_BY = RuleTexts(
    title="{peak} sessions wait for {resource}{on}, held by {holder}",
    explanation=(
        "For {held:.0f} s up to {peak} sessions waited for {resource} at once{on_text} (states: {states}). "
        "The holder is {holder}{age}: {shown_by}.{others}{unknown}"
    ),
    recommendation="{fix}",
    caveats=SESSIONS_WAITING.caveats,
    sources=SESSIONS_WAITING.sources,
    confidence="{agree}; the holder shown holding {held_by:.0f} s",
    disproof="If the holder ends and the sessions keep waiting, something else holds the resource too.",
)

STATES_UNKNOWN = RuleTexts(
    title="{n} session state(s) the wait model does not know",
    explanation=(
        "No manual entry of the wait model knows these states, so what their sessions waited for "
        "is not read: {unknown_states}."
    ),
    recommendation=(
        "Look the states up in the server's documentation and add them to "
        "analyzer/waits/states.py with their source."
    ),
    sources=(
        "MySQL 8.4 Reference Manual, General Thread States",
        "MariaDB Server documentation, Thread States",
    ),
    confidence="{rows} row(s) in {snapshots} snapshot(s)",
)


@dataclasses.dataclass(frozen=True, slots=True)
class Waited:
    """One resource sessions waited for: when, how many at most, and its rows in those windows."""

    resource: Resource
    windows: list[Window]
    peak: int
    rows: pd.DataFrame


def _waited(w: pd.DataFrame, snaps: pd.Series) -> list[Waited]:
    """Every resource with >= WAIT_MIN_SESSIONS sessions waiting, held for SESSIONS_SUSTAINED_S."""
    waiting = w[w["session"].notna().to_numpy() & ~w["resource"].isin(NOT_WAITS).to_numpy()]
    out = []
    for value, rows in waiting.groupby("resource", observed=True):
        counts = rows.groupby("ts")["session"].nunique().reindex(snaps.index, fill_value=0)
        windows, _ = sustained_or_extreme(snaps, (counts >= WAIT_MIN_SESSIONS).reset_index(drop=True))
        if windows:
            inside = rows[within(rows["ts"], windows).to_numpy()]
            peak = int(counts[within(snaps, windows).to_numpy()].max())
            out.append(Waited(Resource(value), windows, peak, inside))
    return sorted(out, key=lambda x: (-x.peak, x.resource.value))


def _lines(tl: Timeline, rows: pd.DataFrame) -> tuple[str | None, tuple[int, int] | None]:
    """The processlist lines behind ``rows`` (waits rows of the processlist)."""
    pl = tl.frame("processlist")
    if not len(pl) or "id" not in pl:
        return None, None
    keys = rows[["ts", "session"]].drop_duplicates()
    ids = pd.to_numeric(pl["id"], errors="coerce").round().astype("Int64")
    lines = pl[[c for c in ("ts", "member", "line_no", "line_end") if c in pl]]  # not a day's every column
    found = lines.assign(session=ids).merge(keys, on=["ts", "session"])
    return tl.lines_of(found)


def _evidence(tl: Timeline, x: Waited) -> list[Evidence]:
    member, lines = _lines(tl, x.rows)
    word = x.resource.value
    out = [
        Evidence(f"sessions waiting for {word} (max)", x.peak, "sessions", "waits.resource", member, lines)
    ]
    out += [
        Evidence(f"{word}: State '{s}'", c, "session-snapshots", "processlist.state", member, lines)
        for s, c in top_values(x.rows["state"], STATES_QUOTED)
    ]
    objects = x.rows["object"].dropna()
    out += [
        Evidence(f"{word}: waits on {o}", c, "session-snapshots", "waits.object")
        for o, c in top_values(objects)
    ]
    for c in of_resource(x.resource):
        if c.name not in STATUS_KEPT:
            continue
        rows = status(tl, c.name)
        rows = rows[within(rows["ts"], x.windows).to_numpy()] if len(rows) else rows
        if not len(rows):
            continue
        value = rows["per_s"].mean() if c.unit == "per second" else rows["value"].max()
        if pd.notna(value):
            unit = "/s" if c.unit == "per second" else ""
            out.append(
                Evidence(
                    f"{c.name} ({c.unit}; abnormal: {c.abnormal})",
                    round(float(value), 2),
                    unit,
                    f"mysqladmin.{c.name}",
                    *tl.lines_of(rows),
                )
            )
    return out


def _unknown(w: pd.DataFrame) -> list[tuple[str, int]]:
    """States (or wait channels) no entry knows, with their rows, most frequent first."""
    rows = w[w["resource"].eq(Resource.UNKNOWN.value).to_numpy()]
    return top_values(rows["state"], UNKNOWN_LISTED) if len(rows) else []


def _phrase(x: Waited, holding: Holding | None = None) -> str:
    states = ", ".join(f"'{s}' {c}" for s, c in top_values(x.rows["state"], STATES_QUOTED))
    objects = x.rows["object"].dropna()
    on = f" on {top_values(objects, 1)[0][0]}" if len(objects) else ""
    by = f", held by {_who(holding)}" if holding is not None and holding.named else ""
    return f"{x.resource.value}: up to {x.peak}{on} ({states}){by}"


def _who(h: Holding) -> str:
    """The holder as the text names it: ``session 5 (app@10.0.0.7)``, ``account app``."""
    c = h.holder
    if c is None:
        return "no one shown"
    account = f" ({c.user or '?'}@{c.host})" if c.host else (f" ({c.user})" if c.user else "")
    return f"{c.kind} {c.id}{account}"


def _holdings(tl: Timeline, w: pd.DataFrame, found: list[Waited]) -> dict[Resource, Holding]:
    """The holding of each waited resource (``analyzer.waits.holders``): the first named one (the
    readers sort them), else the first (contention)."""
    waited = {x.resource for x in found}
    out: dict[Resource, Holding] = {}
    for h in holders(tl, w):
        if h.resource in waited and (h.resource not in out or (h.named and not out[h.resource].named)):
            out[h.resource] = h
    return out


def _unknown_only(w: pd.DataFrame, unknown: list[tuple[str, int]], listed: str) -> Finding:
    """The finding of states no entry knows, when no resource kept sessions waiting."""
    rows = w[w["resource"].eq(Resource.UNKNOWN.value).to_numpy()]
    windows = [Window(rows["ts"].min(), rows["ts"].max())]
    ev = [Evidence(f"unknown state '{s}'", c, "rows", "waits.state") for s, c in unknown]
    return STATES_UNKNOWN.finding(
        "sessions-waiting",
        WAITS_SEVERITY,
        windows,
        ev,
        n=len(unknown),
        unknown_states=listed,
        rows=len(rows),
        snapshots=rows["ts"].nunique(),
    )


def _held_finding(
    holding: Holding, peak: int, windows: list[Window], evidence: list[Evidence], common: dict[str, object]
) -> Finding:
    """The finding of sessions waiting for a resource whose holder the bundle shows: the holder its
    culprit, its fix the recommendation; critical with HELD_SEVERE_WAITERS waiters or HELD_SEVERE_S held."""
    severe = peak >= HELD_SEVERE_WAITERS or holding.held_s >= HELD_SEVERE_S
    finding = HELD_BY.finding(
        "sessions-waiting",
        Severity.CRITICAL if severe else Severity.WARNING,
        windows,
        list(holding.evidence) + evidence,
        holder=_who(holding),
        age=f" (its age {holding.age_s:.0f} s)" if holding.age_s is not None else "",
        shown_by=holding.shown_by,
        fix=holding.fix,
        held_by=holding.held_s,
        **common,
    )
    return dataclasses.replace(finding, culprit=holding.holder)


@rule(
    key="sessions-waiting",
    any_of=(("processlist", "pfs_threads", "innodb_trx", "innodb_transactions"),),
    optional=tuple(
        sorted(
            {"lock_waits", "pfs_metadata_locks", "ps_threads", "mysqladmin", "variables", *reader_inputs()}
        )
    ),
)
def sessions_waiting(tl: Timeline) -> Finding | None:
    """>= WAIT_MIN_SESSIONS sessions waiting for the same resource (``analyzer.waits``) for 5 s, the
    resource with the most sessions in the title, the others in the text; states no entry knows
    listed (a finding of their own when nothing else waits)."""
    w = waits(tl)
    sessions = w[~w["source_frame"].eq("ps").to_numpy()] if len(w) else w
    if not len(sessions):
        return None
    snaps = pd.Series(sorted(set(sessions["ts"].unique()) | set(snapshots(tl))), dtype=sessions["ts"].dtype)
    snaps.index = pd.Index(snaps)  # every snapshot, those where nobody waits too (no row of ``w``)
    found, unknown = _waited(w, snaps), _unknown(w)
    listed = ", ".join(f"'{s}' ({c})" for s, c in unknown)
    if not found:
        return _unknown_only(w, unknown, listed) if unknown else None
    held = _holdings(tl, w, found)
    top = next((x for x in found if x.resource in held and held[x.resource].named), found[0])
    holding = held.get(top.resource)
    objects = top.rows["object"].dropna()
    on = f" on {top_values(objects, 1)[0][0]}" if len(objects) else ""
    windows = sorted((w_ for x in found for w_ in x.windows), key=lambda v: v.start)
    evidence = [e for x in found for e in _evidence(tl, x)]
    sources = sorted({str(s) for x in found for s in x.rows["source_frame"].unique()})
    common = {
        "peak": top.peak,
        "resource": top.resource.value,
        "on": on,
        "on_text": on.replace(" on ", ", on ", 1) if on else "",
        "held": held_seconds(top.windows, step_seconds(snaps)),
        "states": ", ".join(f"'{s}' {c}" for s, c in top_values(top.rows["state"], STATES_QUOTED)),
        "others": (
            " Also waiting: "
            + "; ".join(_phrase(x, held.get(x.resource)) for x in found if x is not top)
            + "."
        )
        if found[1:]
        else "",
        "unknown": f" States no entry knows (unknown): {listed}." if unknown else "",
        "agree": " + ".join(sources),
    }
    if holding is not None and holding.named:
        finding = _held_finding(holding, top.peak, windows, evidence, common)
    else:
        contention = holding.contention if holding is not None and holding.contention else ""
        shown = [Evidence("what the bundle shows instead of a holder", contention, "", CONTENTION_SERIES)]
        finding = SESSIONS_WAITING.finding(
            "sessions-waiting",
            LOCK_WAITS_SEVERITY if top.resource in LOCK_RESOURCES else WAITS_SEVERITY,
            windows,
            (shown if contention else [])
            + evidence
            + (list(holding.evidence) if holding is not None else []),
            look_at=LOOK_AT.get(top.resource, "the holder"),
            contention=f"No holder is shown: {contention}. {holding.fix} " if contention else "",
            **common,
        )
    ids = sorted({int(s) for x in found for s in x.rows["session"].dropna().unique()})
    return dataclasses.replace(finding, subjects=tuple(("session", str(i)) for i in ids))


# -------------------------------------------------------------------------------------------------
# the thread pool: connections that get no thread (analyzer/waits/holders/pool.py)
# -------------------------------------------------------------------------------------------------

THREAD_POOL_HELD = RuleTexts(
    title="{waiting} connections wait for CPU in the thread pool, held by {holder}",
    explanation=(
        "The server runs the thread pool (thread_handling pool-of-threads) with {object}: each group runs "
        "about "
        "one statement on a CPU at a time and its connections queue for it. For {held:.0f} s up to {waiting} "
        "connections were counted (Threads_connected) but had no session in the processlist: they waited in "
        "the pool for a thread, to log in or to run. The holder is {holder}{age}: {shown_by}."
    ),
    recommendation="{fix}",
    caveats=(
        (
            "A connection the pool has given no thread yet has no session to show: the connections waiting "
            "are "
            "counted from Threads_connected against the processlist, sampled a moment apart."
        ),
        (
            "MariaDB's status counters show no queue length: information_schema.THREAD_POOL_GROUPS "
            "(QUEUE_LENGTH, IS_STALLED; MariaDB 10.5 and later) shows it on the running server."
        ),
    ),
    sources=(
        "MariaDB Server documentation, Thread Pool in MariaDB",
        "MariaDB Server documentation, Thread Pool System and Status Variables",
        "MariaDB Server documentation, Thread Groups in the Unix Implementation of the Thread Pool",
    ),
    confidence="variables + mysqladmin + processlist; the holder shown running {held_by:.0f} s",
    disproof=(
        "If Threads_connected stays above the processlist's sessions once the holder's statement has ended, "
        "something else keeps the connections from a thread."
    ),
)

THREAD_POOL_WAITING = RuleTexts(
    title="{waiting} connections wait for CPU in the thread pool",
    explanation=(
        "The server runs the thread pool (thread_handling pool-of-threads) with {object}. For {held:.0f} s "
        "connections got no thread: {contention}. No statement is shown holding every thread group."
    ),
    recommendation="{fix}",
    caveats=THREAD_POOL_HELD.caveats,
    sources=THREAD_POOL_HELD.sources,
    confidence="variables + mysqladmin + processlist",
)


def _groups(h: Holding) -> str:
    """The pool's thread groups as the text names them: ``1 thread group(s) (thread_pool_size)``."""
    return str(h.object or "its thread groups").removeprefix("thread pool, ")


@rule(
    key="thread-pool-wait",
    requires=("processlist", "mysqladmin", "variables"),
    optional=("processlist_sessions",),
)
def thread_pool_wait(tl: Timeline) -> Finding | None:
    """Connections of a server running the thread pool that get no thread
    (``analyzer.waits.holders.pool``): the statements holding every thread group as culprit (the
    longest running), their fix (KILL, then thread_pool_size and thread_pool_stall_limit) as
    recommendation; informational when no statement is shown holding every group."""
    found = pool.thread_pool(tl, NO_WAITS)
    if not found:
        return None
    h = found[0]
    held = held_seconds(list(h.windows), 1.0)
    if not h.named:
        shown = [
            Evidence("what the bundle shows instead of a holder", h.contention or "", "", CONTENTION_SERIES)
        ]
        return THREAD_POOL_WAITING.finding(
            "thread-pool-wait",
            WAITS_SEVERITY,
            list(h.windows),
            shown + list(h.evidence),
            waiting=h.waiters,
            object=_groups(h),
            held=held,
            contention=h.contention,
            fix=h.fix,
        )
    severe = h.waiters >= HELD_SEVERE_WAITERS or h.held_s >= HELD_SEVERE_S
    finding = THREAD_POOL_HELD.finding(
        "thread-pool-wait",
        Severity.CRITICAL if severe else Severity.WARNING,
        list(h.windows),
        list(h.evidence),
        waiting=h.waiters,
        holder=_who(h),
        object=_groups(h),
        held=held,
        shown_by=h.shown_by,
        fix=h.fix,
        age=f" (its statement running {h.age_s:.0f} s)" if h.age_s is not None else "",
        held_by=h.held_s,
    )
    return dataclasses.replace(finding, culprit=h.holder, subjects=(("session", str(h.holder.id)),))
