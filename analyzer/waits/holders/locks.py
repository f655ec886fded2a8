"""Holder readers (see analyzer.waits.holders) of the locks: InnoDB row locks, metadata locks, table
locks and the global read or backup lock.

One way per resource, a holder named only when the bundle shows it holding (``HOLDER_MIN_S``):

- ``ROW_LOCK``: the lock graph (pt-stalk ``-lock-waits``, else INNODB_LOCK_WAITS joined to INNODB_TRX)
  across snapshots, read by ``analyzer.evidence.blockers.row_lock_blockers``: a root blocker whose
  same transaction blocks across snapshots, or whose waiters' waits (``wait_time``) or own idleness
  (``idle_in_trx``) prove it held the lock, for HOLDER_MIN_S or more. Its age is that transaction's.
  A rotating set of short blockers is contention: ``Holding(holder=None, contention="contention among
  16 sessions on `sb`.`t1` ...")`` with the statements and the deadlock rate (``Innodb_deadlocks``
  per second, mysqladmin).
- ``METADATA_LOCK``: the session holding the lock per performance_schema.metadata_locks (a GRANTED
  row on the object others wait for), else the oldest open transaction (INNODB_TRX or the monitor's
  TRANSACTIONS) of a session that does not wait itself, else a statement on the DDL's table running
  since before the first wait (``blockers.metadata_lock_blocker``), else the only client session not
  waiting (``analyzer.waits.elimination``). The oldest session merely not waiting is a candidate.
  ``metadata_holder`` is the one reader of it: the rule lock-waits (through ``find``, every blocker
  the bundle names) and this reader both take the holder from there.
- ``GLOBAL_READ_LOCK``: the session that ran FLUSH TABLES WITH READ LOCK, BACKUP STAGE, LOCK
  INSTANCE FOR BACKUP or a dump's read (processlist Info, performance_schema.metadata_locks GRANTED
  GLOBAL/BACKUP/COMMIT rows), and the backup client in ps (``blockers.global_lock_holder``), else the
  only client session not waiting when idle (``analyzer.waits.elimination``). ``global_holder`` is
  the one reader of it, for the rule lock-waits (through ``find``) and this reader.
- ``TABLE_LOCK``: the session that ran LOCK TABLES (processlist Info) and does not wait itself.
- ``PURGE``: ``analyzer.waits.holders.purge``.

Sources: MySQL 8.4 Reference Manual, "InnoDB Locking" and "The INFORMATION_SCHEMA INNODB_TRX Table",
"Metadata Locking", "FLUSH Statement", "Purge Configuration"; MariaDB "METADATA_LOCK_INFO Plugin",
"BACKUP STAGE". Pure: no I/O, no clock, no Django.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.detect import top_values
from analyzer.evidence import blockers, lock_graph
from analyzer.findings import Evidence, Window
from analyzer.statements.fingerprint import fingerprint
from analyzer.timeline.timeline import Timeline, value_is
from analyzer.waits.elimination import only_session_not_waiting
from analyzer.waits.holding import HOLDER_MIN_S, Holding, reads
from analyzer.waits.model import Resource
from analyzer.waits.read import WAITS_INPUTS
from analyzer.waits.read import waits as read_waits

#: Statements quoted in a contention.
STATEMENTS_QUOTED = 2
#: LOCK TABLES as a fingerprint (analyzer/statements/fingerprint.py), not LOCK TABLES ... FOR BACKUP.
LOCK_TABLES_PREFIXES = ("lock tables ", "lock table ")
DEADLOCKS = "Innodb_deadlocks"
KILL_NOTE = "its transaction rolls back, what it holds is released"


def _waiters(waits: pd.DataFrame, resource: Resource) -> tuple[pd.DataFrame, int, tuple[Window, ...]]:
    """The waits rows of ``resource`` (sessions only), the most sessions at once, and their span."""
    rows = waits[waits["resource"].eq(resource.value).to_numpy() & waits["session"].notna().to_numpy()]
    if not len(rows):
        return rows, 0, ()
    peak = int(rows.groupby("ts")["session"].nunique().max())
    return rows, peak, (Window(rows["ts"].min(), rows["ts"].max()),)


def _object(rows: pd.DataFrame) -> str | None:
    objects = rows["object"].dropna() if "object" in rows else pd.Series(dtype="string")
    return top_values(objects, 1)[0][0] if len(objects) else None


#: What ending the holder's session does, by resource (MySQL 8.4, "KILL Statement").
KILL_NOTES = {
    Resource.ROW_LOCK: "its transaction rolls back and releases the rows",
    Resource.METADATA_LOCK: "its transaction rolls back and releases the metadata lock",
    Resource.GLOBAL_READ_LOCK: (
        "the lock is released with its session; a backup that took it fails and must be rerun"
    ),
    Resource.TABLE_LOCK: (
        "its table locks are released with its session (UNLOCK TABLES from the session itself)"
    ),
}


#: Locks an idle session holds only inside an open transaction (the others outlive it: FTWRL, LOCK TABLES).
IN_TRANSACTION = frozenset({Resource.ROW_LOCK, Resource.METADATA_LOCK})
#: What ending a metadata lock's holder does when no transaction list shows its transaction (MySQL 8.4,
#: "Metadata Locking", "LOCK TABLES and UNLOCK TABLES Statements").
MDL_NO_TRX_NOTE = (
    "the metadata locks it holds are released with its session (from the session itself: UNLOCK TABLES "
    "for LOCK TABLES, COMMIT for a transaction)"
)


def _fix(b: blockers.Blocker, resource: Resource, what: str) -> str:
    """The holder's fix: end it (``KILL``), what that releases, then the application path that left it
    holding: idle in its transaction only when a transaction list shows it (``blockers.IDLE``), else
    idle holding what it took (``blockers.SLEEPING``)."""
    if b.thread is None:
        return f"Stop the backup client holding {what} ({b.process}), or let it finish: {b.kill()}"
    note = KILL_NOTES.get(resource, KILL_NOTE)
    if resource == Resource.METADATA_LOCK:
        note = (note if b.trx_id is not None else MDL_NO_TRX_NOTE) + (
            "; the queued DDL runs next" if b.waiter else ""
        )
    idle = ""
    if b.statement == blockers.IDLE and resource in IN_TRANSACTION:
        idle = (
            " It is idle in its transaction (Command Sleep): the application left it open (autocommit off, "
            "a missing COMMIT, an exception path that skips it)."
        )
    elif b.statement == blockers.SLEEPING:
        time = f", Time {b.idle_s:.0f} s" if b.idle_s is not None else ""
        idle = (
            f" It is idle (Command Sleep{time}), holding the lock it took; no transaction list shows a "
            "transaction of it open."
        )
    return f"End the session holding {what}: {b.kill()}  -- {note}.{idle}"


def _holding(
    tl: Timeline,
    b: blockers.Blocker,
    resource: Resource,
    shown_by: str,
    what: str,
    obj: str | None,
    waiters: int,
    named: bool = True,
) -> Holding:
    held = b.held_s or sum(w.seconds for w in b.windows)
    return Holding(
        resource=resource,
        host=tl.host,
        holder=b.culprit() if named else None,
        shown_by=shown_by,
        held_s=held,
        age_s=b.age_s,
        waiters=max(waiters, b.blocks),
        windows=b.windows,
        object=obj,
        fix=_fix(b, resource, what) if named else "",
        evidence=b.evidence,
        contention=None if named else f"{max(waiters, b.blocks)} sessions wait for {what}; {shown_by}",
    )


def deadlock_rate(tl: Timeline, windows: tuple[Window, ...] | list[Window]) -> tuple[float, Evidence] | None:
    """InnoDB deadlocks per second over ``windows`` (``Innodb_deadlocks`` per_s of mysqladmin, its
    mean; MariaDB and Percona Server; MySQL 8.0+ has no such counter), with its evidence; None when
    the bundle lacks the counter."""
    ma = tl.frame("mysqladmin")
    if not len(ma) or "variable" not in ma:
        return None
    rows = ma[(ma["variable"] == DEADLOCKS).to_numpy(dtype=bool, na_value=False)].dropna(subset=["per_s"])
    if windows and len(rows):
        lo = min(w.start for w in windows) - pd.Timedelta(seconds=1)
        hi = max(w.end for w in windows) + pd.Timedelta(seconds=1)
        rows = rows[((rows["ts"] >= lo) & (rows["ts"] <= hi)).to_numpy()]
    if not len(rows):
        return None
    rate = round(float(rows["per_s"].mean()), 1)
    member, lines = tl.lines_of(rows)
    return rate, Evidence(
        "InnoDB deadlocks per second (mean)", rate, "/s", f"mysqladmin.{DEADLOCKS}", member, lines
    )


def _contention(tl: Timeline, waits: pd.DataFrame) -> Holding | None:
    """Row-lock waits with no holder shown: who took part, on what, the statements, the deadlock rate."""
    rows, peak, windows = _waiters(waits, Resource.ROW_LOCK)
    found = lock_graph.edges(tl)
    if windows and len(found):
        found = found[((found["ts"] >= windows[0].start) & (found["ts"] <= windows[0].end)).to_numpy()]
    if not len(rows) and not len(found):
        return None
    sessions = set(rows["session"].dropna().astype(int))
    turns = 0
    if len(found):
        sessions |= set(found["waiting"].astype(int)) | set(found["blocking"].astype(int))
        turns = found["blocking"].nunique()
        windows = windows or (Window(found["ts"].min(), found["ts"].max()),)
    table = _object(rows)
    if table is None and "waiting_table" in found and found["waiting_table"].notna().any():
        table = top_values(found["waiting_table"].dropna(), 1)[0][0]
    queries = found["waiting_query"].dropna() if "waiting_query" in found else pd.Series(dtype="string")
    statements = list(dict.fromkeys(fingerprint(str(q))[:200] for q in queries.unique()))[:STATEMENTS_QUOTED]
    rate = deadlock_rate(tl, windows)
    on = f" on {table}" if table else ""
    text = f"contention among {len(sessions)} sessions{on}"
    if turns:
        took = f"{turns} sessions took turns blocking" if turns > 1 else "one session blocked"
        text += f": {took}, none shown holding {HOLDER_MIN_S:.0f} s or more"
    if rate is not None:
        text += f", {rate[0]:g} deadlocks per second while they waited"
    if statements:
        text += "; statements: " + "; ".join(statements)
    evidence = [
        Evidence("sessions taking part in the row-lock waits", len(sessions), "sessions", "lock_waits")
    ]
    evidence += [rate[1]] if rate is not None else []
    evidence += [Evidence("statement waiting", s, "", "lock_waits.waiting_query") for s in statements]
    shown_by = (
        f"the lock graph (-lock-waits) shows {turns} blocker(s), none holding {HOLDER_MIN_S:.0f} s"
        if turns
        else ("the bundle has no lock graph (-lock-waits, INNODB_LOCK_WAITS) naming the blocker")
    )
    fix = (
        "No single holder: the sessions take turns on the same rows. Take the rows in one order in every "
        "code "
        "path, keep the transactions short, give the statements an index that narrows the rows they lock, "
        "and retry on deadlock (error 1213). Look at: SELECT * FROM sys.innodb_lock_waits; "
        "(MariaDB: information_schema.INNODB_LOCK_WAITS joined to INNODB_TRX)."
    )
    return Holding(
        resource=Resource.ROW_LOCK,
        host=tl.host,
        holder=None,
        shown_by=shown_by,
        waiters=peak,
        windows=windows,
        object=table,
        contention=text,
        fix=fix,
        evidence=tuple(evidence),
    )


ROW_INPUTS = (
    "lock_waits",
    "innodb_lock_waits_raw",
    "innodb_trx",
    "innodb_transactions",
    "processlist",
    "mysqladmin",
)
SESSION_INPUTS = (
    "processlist",
    "processlist_accounts",
    "processlist_sessions",
    "innodb_trx",
    "innodb_transactions",
    "pfs_metadata_locks",
    "ps_threads",
)


def row_contention(tl: Timeline) -> str | None:
    """The contention text of the lock graph alone (no waits frame): who took part, on what, the
    statements and the deadlock rate; None without row-lock waits in the bundle."""
    c = _contention(tl, pd.DataFrame(columns=["ts", "session", "resource", "object", "state"]))
    return c.contention if c is not None else None


@reads(Resource.ROW_LOCK, inputs=ROW_INPUTS)
def row_lock(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The lock graph (-lock-waits, else INNODB_LOCK_WAITS with INNODB_TRX) across snapshots: a root
    blocker whose same transaction blocks across snapshots, or whose waiters' waits or own idleness in
    its transaction prove it held the lock, for HOLDER_MIN_S or more; its age is that transaction's
    (``blockers.row_lock_blockers``). Otherwise the contention among the sessions, with their
    statements and the deadlock rate (Innodb_deadlocks per second)."""
    rows, peak, _ = _waiters(waits, Resource.ROW_LOCK)
    out = []
    for b in blockers.row_lock_blockers(tl):
        source = b.evidence[0].series.split(".")[0] if b.evidence else "lock_waits"
        trx = f"transaction{blockers.trx_word(b.trx_id)} of " if blockers.trx_word(b.trx_id) else ""
        shown_by = f"{trx}session {b.thread} blocks up to {b.blocks} sessions for {b.held_s:.0f} s ({source})"
        out.append(_holding(tl, b, Resource.ROW_LOCK, shown_by, "the rows", _object(rows), peak))
    if out:
        return out
    c = _contention(tl, waits)
    return [c] if c is not None else []


def metadata_holder(tl: Timeline, waits: pd.DataFrame | None = None) -> blockers.Blocker | None:
    """The holder of the metadata lock sessions wait for: the one reader of it, that the rules
    lock-waits (through ``find``) and sessions-waiting (``metadata_lock``) both take it from.

    ``blockers.metadata_lock_blocker``: a GRANTED row in performance_schema.metadata_locks, else the
    oldest open transaction of a session not waiting (INNODB_TRX, the monitor's TRANSACTIONS), else a
    statement on the waiting DDL's table running since before the first wait; else the only client
    session not waiting (``analyzer.waits.elimination``) when it is idle (Command Sleep: what it holds,
    it took before; a statement running on another table is not shown holding this one).
    ``Blocker.shown`` says which. When none shows
    it, ``thread`` is None and ``candidate`` the oldest session merely not waiting. ``tl``: a host's
    timeline; ``waits``: its waits frame (``analyzer.waits.model.WAIT_COLUMNS``), None to read it here
    only if elimination is needed. None when no session waits for a metadata lock."""
    b = blockers.metadata_lock_blocker(tl)
    if b is None or b.thread is not None:
        return b
    alone = _idle_alone(tl, waits, Resource.METADATA_LOCK)
    return b if alone is None else dataclasses.replace(alone, waiter=b.waiter)


def global_holder(tl: Timeline, waits: pd.DataFrame | None = None) -> blockers.Blocker | None:
    """The holder of the global read / backup lock sessions wait for (FLUSH TABLES WITH READ LOCK, LOCK
    INSTANCE FOR BACKUP, BACKUP STAGE): the one reader of it, that the rules lock-waits (through
    ``find``) and sessions-waiting (``global_read_lock``) both take it from.

    ``blockers.global_lock_holder``: a GRANTED GLOBAL, BACKUP or COMMIT lock in
    performance_schema.metadata_locks, else the session running the statement that takes it (processlist
    Info), with the backup client in ps; else the only client session not waiting
    (``analyzer.waits.elimination``) when it is idle (Command Sleep: the lock outlives the statement
    that took it; a session running a statement is not shown holding it). ``Blocker.shown`` says which.
    When none shows it, ``thread`` is None (and ``process`` too when no backup client runs). ``tl``: a
    host's timeline; ``waits``: its waits frame (``analyzer.waits.model.WAIT_COLUMNS``), None to read
    it here only if elimination is needed. None when no session waits for the lock. Sources: MySQL 8.4
    Reference Manual, "FLUSH Statement", "LOCK INSTANCE FOR BACKUP and UNLOCK INSTANCE Statement";
    MariaDB "BACKUP STAGE"."""
    b = blockers.global_lock_holder(tl)
    if b is None or b.thread is not None:
        return b
    alone = _idle_alone(tl, waits, Resource.GLOBAL_READ_LOCK)
    if alone is None:
        return b
    if not b.process:
        return alone
    client = tuple(e for e in b.evidence if e.series == "ps_threads.comm")
    return dataclasses.replace(
        alone, process=b.process, evidence=alone.evidence + client, shown=f"{alone.shown}; {b.shown}"
    )


def _idle_alone(tl: Timeline, waits: pd.DataFrame | None, resource: Resource) -> blockers.Blocker | None:
    """``_alone`` when that session is idle (Command Sleep), else None; ``waits`` None reads the wait
    model only when the bundle counts every session of a snapshot (elimination needs it)."""
    if waits is None:
        if not len(tl.frame("processlist_sessions")):
            return None
        waits = read_waits(tl)
    alone = _alone(tl, waits, resource)
    if alone is None or alone.statement not in (blockers.IDLE, blockers.SLEEPING):
        return None
    return alone


#: The inputs ``find`` (and ``metadata_holder`` through it) reads, for the rules that call it.
FIND_INPUTS = tuple(sorted({*SESSION_INPUTS, *ROW_INPUTS, *WAITS_INPUTS}))


def find(tl: Timeline) -> list[blockers.Blocker]:
    """Every blocker the bundle names (``blockers.row_lock_blockers``, ``metadata_holder``,
    ``global_holder``: a session or a process shown holding; a metadata lock's candidate is not one),
    the one blocking most sessions first. Reads ``FIND_INPUTS``."""
    found: list[blockers.Blocker] = list(blockers.row_lock_blockers(tl))
    for b in (metadata_holder(tl), global_holder(tl)):
        if b is not None and (b.thread is not None or b.process):
            found.append(b)
    return sorted(found, key=lambda b: (-b.blocks, b.lock))


@reads(Resource.METADATA_LOCK, inputs=SESSION_INPUTS)
def metadata_lock(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The holder ``metadata_holder`` shows (a GRANTED lock in performance_schema.metadata_locks, the
    oldest open transaction of a session not waiting, a statement on the waiting DDL's table running
    since before the first wait, the only client session not waiting); else the oldest session merely
    not waiting, as a candidate, not a holder. Sessions in GET_LOCK() (State ``User lock``): the
    GRANTED user lock in performance_schema.metadata_locks, else no holder."""
    rows, peak, windows = _waiters(waits, Resource.METADATA_LOCK)
    b = metadata_holder(tl, waits)
    if b is None:
        return _user_lock(tl, rows, peak, windows)
    if b.thread is None:
        who = (
            f"the oldest session not waiting is session {b.candidate}, a candidate" if b.candidate else "none"
        )
        return [
            _holding(
                tl,
                b,
                Resource.METADATA_LOCK,
                f"no transaction list or lock table shows the holder ({who})",
                "a metadata lock",
                _object(rows),
                peak,
                named=False,
            )
        ]
    ahead = f", ahead of {b.waiter[:120]}" if b.waiter else ""
    shown_by = f"session {b.thread} holds the metadata lock{ahead}: {b.shown}"
    return [_holding(tl, b, Resource.METADATA_LOCK, shown_by, "the metadata lock", _object(rows), peak)]


def _user_lock(tl: Timeline, rows: pd.DataFrame, peak: int, windows: tuple[Window, ...]) -> list[Holding]:
    """Sessions waiting in GET_LOCK() (State ``User lock``): the session with a GRANTED ``USER LEVEL
    LOCK`` in performance_schema.metadata_locks when the bundle has it, else no holder shown."""
    users = rows[rows["state"].astype("string").str.lower().isin(USER_LOCK_STATES).fillna(False).to_numpy()]
    if not len(users):
        return []
    found = blockers.pfs_holder(tl, windows, USER_LOCK_OBJECTS)
    what = "a user lock (GET_LOCK)"
    if found is not None:
        thread, ev = found
        evidence = [ev]
        facts = blockers.session_facts(tl, thread, windows, evidence)
        b = blockers.Blocker(
            lock="user", thread=thread, blocks=peak, windows=windows, evidence=tuple(evidence), **facts
        )  # type: ignore[arg-type]
        return [
            _holding(
                tl,
                b,
                Resource.METADATA_LOCK,
                f"session {thread} holds the user lock (performance_schema.metadata_locks, GRANTED)",
                "the user lock",
                _object(rows),
                peak,
            )
        ]
    return [
        Holding(
            Resource.METADATA_LOCK,
            tl.host,
            None,
            (
                "no member of the bundle lists user locks (performance_schema.metadata_locks, MariaDB "
                "METADATA_LOCK_INFO)"
            ),
            waiters=peak,
            windows=windows,
            object="user lock",
            contention=f"{peak} sessions wait in GET_LOCK() for {what} whose holder the bundle does not show",
            fix="Find who holds the lock: SELECT IS_USED_LOCK('<name>'); with the name the waiting GET_LOCK() "
            "asks for "
            "(MariaDB: SELECT * FROM information_schema.METADATA_LOCK_INFO WHERE LOCK_TYPE = 'User lock';), "
            "then RELEASE_LOCK() in that session or end it (KILL <id>).",
            evidence=(
                Evidence(
                    "sessions waiting in GET_LOCK() (State 'User lock', max)",
                    peak,
                    "sessions",
                    "processlist.state",
                ),
            ),
        )
    ]


#: States of a session waiting in GET_LOCK() (MySQL 8.4 and MariaDB "General Thread States"), lower case.
USER_LOCK_STATES = frozenset({"user lock", "waiting for user lock"})
#: performance_schema.metadata_locks object type of GET_LOCK()'s locks.
USER_LOCK_OBJECTS = frozenset({"USER LEVEL LOCK"})


#: ``Blocker.lock`` of the locks a holder by elimination may hold.
LOCK_WORDS = {
    Resource.GLOBAL_READ_LOCK: "global",
    Resource.TABLE_LOCK: "table",
    Resource.METADATA_LOCK: "metadata",
}
GLOBAL_WHAT = "the global read / backup lock"
TABLE_WHAT = "the table lock (UNLOCK TABLES ends it)"


def _alone(tl: Timeline, waits: pd.DataFrame, resource: Resource) -> blockers.Blocker | None:
    """The only client session not waiting for ``resource`` (``analyzer.waits.elimination``) as a
    blocker, with the processlist lines of it and of the longest waiter; None when the bundle does not
    show it so."""
    alone = only_session_not_waiting(tl, waits, resource)
    if alone is None:
        return None
    _, peak, windows = _waiters(waits, resource)
    ev = [
        Evidence(
            f"session {alone.thread}: the only client session not waiting (Time, s)",
            alone.time_s,
            "s",
            "processlist.time_s",
            *tl.lines_of(alone.rows),
        ),
        Evidence(
            "the longest wait for it (Time, s)",
            alone.wait_s,
            "s",
            "processlist.time_s",
            *tl.lines_of(alone.longest),
        ),
    ]
    facts = blockers.session_facts(tl, alone.thread, windows, ev)
    return blockers.Blocker(
        lock=LOCK_WORDS[resource],
        thread=alone.thread,
        blocks=peak,
        windows=windows,
        evidence=tuple(ev),
        held_s=alone.span_s,
        shown=alone.sentence(),
        **facts,
    )  # type: ignore[arg-type]


def _by_elimination(tl: Timeline, waits: pd.DataFrame, resource: Resource, what: str) -> Holding | None:
    """The holding of a session-scoped lock (global read, backup, LOCK TABLES) by the only client
    session not waiting (``_alone``), or None when the bundle does not show it so."""
    b = _alone(tl, waits, resource)
    if b is None:
        return None
    rows, peak, _ = _waiters(waits, resource)
    return _holding(tl, b, resource, f"session {b.thread} holds it: {b.shown}", what, _object(rows), peak)


#: What sessions-waiting says of the global read / backup lock when nothing shows its holder.
GLOBAL_UNSHOWN = (
    "the bundle does not show who holds the lock (no GRANTED lock in performance_schema.metadata_locks, "
    "no session running the statement that takes it, no backup client in ps, no lone idle session)"
)


@reads(Resource.GLOBAL_READ_LOCK, inputs=SESSION_INPUTS)
def global_read_lock(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The holder ``global_holder`` shows: a GRANTED GLOBAL, BACKUP or COMMIT lock in
    performance_schema.metadata_locks, the session running FLUSH TABLES WITH READ LOCK, LOCK INSTANCE
    FOR BACKUP, BACKUP STAGE or a dump's read (processlist Info), the backup client in ps, the only
    client session not waiting when idle; else a holding that names none ("the bundle does not show who
    holds the lock", no KILL)."""
    rows, peak, _ = _waiters(waits, Resource.GLOBAL_READ_LOCK)
    b = global_holder(tl, waits)
    if b is None:
        return []
    obj = _object(rows)
    if b.thread is None and not b.process:
        return [
            _holding(tl, b, Resource.GLOBAL_READ_LOCK, GLOBAL_UNSHOWN, GLOBAL_WHAT, obj, peak, named=False)
        ]
    shown_by = f"{b.who()} holds the global read / backup lock: {b.shown or 'the processlist'}"
    return [_holding(tl, b, Resource.GLOBAL_READ_LOCK, shown_by, GLOBAL_WHAT, obj, peak)]


@reads(Resource.TABLE_LOCK, inputs=SESSION_INPUTS)
def table_lock(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The session that ran LOCK TABLES and waits for nothing itself, while others wait for a table lock."""
    rows, peak, windows = _waiters(waits, Resource.TABLE_LOCK)
    pl = tl.frame("processlist")
    if not len(rows) or not len(pl) or "fingerprint" not in pl:
        return []
    waiting = set(rows["session"].astype(int))
    ids = pd.to_numeric(pl["id"], errors="coerce")
    took = value_is(pl["fingerprint"], lambda s: s.str.lower().str.startswith(LOCK_TABLES_PREFIXES))
    cand = pl[took & ~ids.isin(waiting).to_numpy()]
    if not len(cand):
        alone = _by_elimination(tl, waits, Resource.TABLE_LOCK, TABLE_WHAT)
        if alone is not None:
            return [alone]
        return [
            Holding(
                Resource.TABLE_LOCK,
                tl.host,
                None,
                "no session seen running LOCK TABLES",
                waiters=peak,
                windows=windows,
                object=_object(rows),
                contention=(f"{peak} sessions wait for a table lock; no session seen running LOCK TABLES"),
            )
        ]
    thread = int(pd.to_numeric(cand["id"], errors="coerce").iloc[-1])
    ev: list[Evidence] = []
    facts = blockers.session_facts(tl, thread, windows, ev)
    member, lines = tl.lines_of(cand.tail(1))
    ev.insert(
        0,
        Evidence(
            f"session {thread} ran LOCK TABLES",
            str(cand["fingerprint"].iloc[-1])[:200],
            "",
            "processlist.fingerprint",
            member,
            lines,
        ),
    )
    b = blockers.Blocker(
        lock="table",
        thread=thread,
        blocks=peak,
        windows=windows,
        evidence=tuple(ev),
        held_s=sum(w.seconds for w in windows),
        **facts,
    )  # type: ignore[arg-type]
    return [
        _holding(
            tl,
            b,
            Resource.TABLE_LOCK,
            f"session {thread} ran LOCK TABLES (processlist Info)",
            TABLE_WHAT,
            _object(rows),
            peak,
        )
    ]
