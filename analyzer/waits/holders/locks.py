"""Holder readers (see analyzer.waits.holders) of the locks: InnoDB row locks, metadata locks, table
locks, the global read or backup lock, and the read view purge waits for.

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
  TRANSACTIONS) of a session that does not wait itself (``blockers.metadata_lock_blocker``). The
  oldest session merely not waiting, with no transaction list, is a candidate, not a holder.
- ``GLOBAL_READ_LOCK``: the session that ran FLUSH TABLES WITH READ LOCK, BACKUP STAGE, LOCK
  INSTANCE FOR BACKUP or a dump's read (processlist Info, performance_schema.metadata_locks GRANTED
  GLOBAL/BACKUP rows), and the backup client in ps (``blockers.global_lock_holder``).
- ``TABLE_LOCK``: the session that ran LOCK TABLES (processlist Info) and does not wait itself.
- ``PURGE`` (read always: purge has no session waiting): while the history list length grows, the
  oldest open transaction of INNODB_TRX or the monitor's TRANSACTIONS (a transaction holds its read
  view until it ends; READ COMMITTED ones only during a statement), joined to its session (Command
  Sleep: idle in transaction).

Sources: MySQL 8.4 Reference Manual, "InnoDB Locking" and "The INFORMATION_SCHEMA INNODB_TRX Table",
"Metadata Locking", "FLUSH Statement", "Purge Configuration"; MariaDB "METADATA_LOCK_INFO Plugin",
"BACKUP STAGE". Pure: no I/O, no clock, no Django.
"""

from __future__ import annotations

import pandas as pd

from analyzer.detect import top_values
from analyzer.evidence import blockers
from analyzer.findings import Culprit, Evidence, Window
from analyzer.statements.fingerprint import fingerprint
from analyzer.timeline.timeline import Timeline, value_is
from analyzer.waits.elimination import only_session_not_waiting
from analyzer.waits.holding import HOLDER_MIN_S, Holding, reads
from analyzer.waits.model import Resource

#: History list growth that makes purge a wait (undo records per second between monitor outputs),
#: or a history list this long whatever its growth (docs/background.md: 1,000,000).
PURGE_GROWTH_PER_S = 100.0
PURGE_HISTORY_HIGH = 1_000_000
#: A transaction this old holds purge back (a read view far older than the OLTP's seconds).
PURGE_HOLDER_MIN_AGE_S = 30.0
#: MariaDB's status variable of the history list length (mysqladmin ext).
HISTORY = "Innodb_history_list_length"
#: Isolation levels whose transactions hold no read view between statements (MySQL 8.4,
#: "Consistent Nonlocking Reads": READ COMMITTED sets a fresh snapshot per consistent read).
NO_LASTING_VIEW = frozenset({"READ COMMITTED", "READ UNCOMMITTED"})
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


def _trx_word(trx_id: str | None) -> str:
    """`` 421337`` for a transaction id, empty for none or InnoDB's 0 (a read-only transaction shows
    no id of its own: MySQL 8.4, "INNODB_TRX")."""
    return f" {trx_id}" if trx_id and trx_id != "0" else ""


#: What ending the holder's session does, by resource (MySQL 8.4, "KILL Statement").
KILL_NOTES = {
    Resource.ROW_LOCK: "its transaction rolls back and releases the rows",
    Resource.METADATA_LOCK: (
        "its transaction rolls back and releases the metadata lock; the queued DDL runs next"
    ),
    Resource.GLOBAL_READ_LOCK: (
        "the lock is released with its session; the backup that took it fails and must be rerun"
    ),
    Resource.TABLE_LOCK: (
        "its table locks are released with its session (UNLOCK TABLES from the session itself)"
    ),
}


#: Locks an idle session holds only inside an open transaction (the others outlive it: FTWRL, LOCK TABLES).
IN_TRANSACTION = frozenset({Resource.ROW_LOCK, Resource.METADATA_LOCK})


def _fix(b: blockers.Blocker, resource: Resource, what: str) -> str:
    """The holder's fix: end it (``KILL``), then the application path that left it holding."""
    if b.thread is None:
        return f"Stop the backup client holding {what} ({b.process}), or let it finish: {b.kill()}"
    idle = (
        (
            " It is idle in its transaction (Command Sleep): the application left it open (autocommit off, "
            "a missing COMMIT, an exception path that skips it)."
        )
        if b.statement == blockers.IDLE and resource in IN_TRANSACTION
        else ""
    )
    return f"End the session holding {what}: {b.kill()}  -- {KILL_NOTES.get(resource, KILL_NOTE)}.{idle}"


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
    found = blockers.edges(tl)
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
PURGE_INPUTS = (
    "innodb_status",
    "innodb_rates",
    "innodb_trx",
    "innodb_transactions",
    "processlist",
    "mysqladmin",
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
        trx = f"transaction{_trx_word(b.trx_id)} of " if _trx_word(b.trx_id) else ""
        shown_by = f"{trx}session {b.thread} blocks up to {b.blocks} sessions for {b.held_s:.0f} s ({source})"
        out.append(_holding(tl, b, Resource.ROW_LOCK, shown_by, "the rows", _object(rows), peak))
    if out:
        return out
    c = _contention(tl, waits)
    return [c] if c is not None else []


@reads(Resource.METADATA_LOCK, inputs=SESSION_INPUTS)
def metadata_lock(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The session with a GRANTED lock on the object others wait for (performance_schema.metadata_locks),
    else the oldest open transaction (INNODB_TRX, the monitor's TRANSACTIONS) of a session that does not
    wait itself; the oldest session merely not waiting is a candidate, not a holder."""
    rows, peak, windows = _waiters(waits, Resource.METADATA_LOCK)
    b = blockers.metadata_lock_blocker(tl)
    if b is None:
        return _user_lock(tl, rows, peak, windows)
    pfs = any("metadata_locks" in e.series for e in b.evidence)
    if b.thread is None or (b.trx_id is None and not pfs):
        who = f"the oldest session not waiting is session {b.thread}, a candidate" if b.thread else "none"
        return [
            _holding(
                tl,
                b,
                Resource.METADATA_LOCK,
                (f"no transaction list or lock table shows the holder ({who})"),
                "a metadata lock",
                _object(rows),
                peak,
                named=False,
            )
        ]
    how = (
        "performance_schema.metadata_locks shows its GRANTED lock"
        if pfs
        else f"its transaction{_trx_word(b.trx_id)} is open ahead of the waiters (transaction list)"
    )
    ahead = f", ahead of {b.waiter[:120]}" if b.waiter else ""
    shown_by = f"session {b.thread} holds the metadata lock{ahead}: {how}"
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


#: How the bundle shows the holder of the global read or backup lock, by the series of its evidence.
HOW_SHOWN = {
    "processlist.fingerprint": "its statement in the processlist",
    "pfs_metadata_locks.lock_status": "a GRANTED lock in performance_schema.metadata_locks",
    "ps_threads.comm": "the backup client {process} in ps",
}


#: ``Blocker.lock`` of the locks a holder by elimination may hold.
LOCK_WORDS = {Resource.GLOBAL_READ_LOCK: "global", Resource.TABLE_LOCK: "table"}
GLOBAL_WHAT = "the global read / backup lock"
TABLE_WHAT = "the table lock (UNLOCK TABLES ends it)"


def _by_elimination(
    tl: Timeline,
    waits: pd.DataFrame,
    resource: Resource,
    rows: pd.DataFrame,
    peak: int,
    windows: tuple[Window, ...],
    what: str,
) -> Holding | None:
    """The holding of a session-scoped lock (global read, backup, LOCK TABLES) by the only client
    session not waiting (``analyzer.waits.elimination``), or None when the bundle does not show it so."""
    alone = only_session_not_waiting(tl, waits, resource)
    if alone is None:
        return None
    member, lines = tl.lines_of(alone.rows)
    ev = [
        Evidence(
            f"session {alone.thread}: the only client session not waiting (Time, s)",
            alone.time_s,
            "s",
            "processlist.time_s",
            member,
            lines,
        ),
        Evidence(
            "the longest wait for it (Time, s)", alone.wait_s, "s", "processlist.time_s", *tl.lines_of(rows)
        ),
    ]
    facts = blockers.session_facts(tl, alone.thread, windows, ev)
    b = blockers.Blocker(
        lock=LOCK_WORDS[resource],
        thread=alone.thread,
        blocks=peak,
        windows=windows,
        evidence=tuple(ev),
        held_s=alone.span_s,
        **facts,
    )  # type: ignore[arg-type]
    return _holding(
        tl, b, resource, f"session {alone.thread} holds it: {alone.sentence()}", what, _object(rows), peak
    )


@reads(Resource.GLOBAL_READ_LOCK, inputs=SESSION_INPUTS)
def global_read_lock(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The session that ran FLUSH TABLES WITH READ LOCK, BACKUP STAGE, LOCK INSTANCE FOR BACKUP or a
    dump's read (processlist Info, performance_schema.metadata_locks GRANTED GLOBAL or BACKUP rows),
    and the backup client in ps."""
    rows, peak, windows = _waiters(waits, Resource.GLOBAL_READ_LOCK)
    b = blockers.global_lock_holder(tl)
    if b is None or b.thread is None:
        alone = _by_elimination(tl, waits, Resource.GLOBAL_READ_LOCK, rows, peak, windows, GLOBAL_WHAT)
        if alone is not None:
            return [alone]
    if b is None:
        return []
    how = "; ".join(HOW_SHOWN[e.series] for e in b.evidence if e.series in HOW_SHOWN) or "the processlist"
    how = how.replace("{process}", str(b.process))
    shown_by = f"{b.who()} holds the global read / backup lock ({how})"
    return [_holding(tl, b, Resource.GLOBAL_READ_LOCK, shown_by, GLOBAL_WHAT, _object(rows), peak)]


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
        alone = _by_elimination(tl, waits, Resource.TABLE_LOCK, rows, peak, windows, TABLE_WHAT)
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


def history(tl: Timeline) -> tuple[float, float, pd.DataFrame] | None:
    """(history list length max, growth per second, the rows that show it) when purge falls behind:
    the monitor's ``History list length`` (growth between outputs: ``innodb_rates``) and MariaDB's
    ``Innodb_history_list_length`` status (mysqladmin, growth first to last sighting)."""
    st = tl.frame("innodb_status")
    st = (
        st.dropna(subset=["history_list_length"]) if len(st) and "history_list_length" in st else st.iloc[0:0]
    )
    rates = tl.frame("innodb_rates")
    growth = (
        float(rates["history_growth_per_s"].max()) if len(rates) and "history_growth_per_s" in rates else 0.0
    )
    growth = growth if pd.notna(growth) else 0.0
    hll = float(st["history_list_length"].max()) if len(st) else 0.0
    rows = st
    ma = tl.frame("mysqladmin")
    if len(ma) and "variable" in ma:
        hl = ma[(ma["variable"] == HISTORY).to_numpy(dtype=bool, na_value=False)].dropna(subset=["value"])
        if len(hl) >= 2:
            span = (hl["ts"].iloc[-1] - hl["ts"].iloc[0]).total_seconds()
            if span > 0:
                growth = max(growth, float(hl["value"].iloc[-1] - hl["value"].iloc[0]) / span)
            hll = max(hll, float(hl["value"].max()))
            rows = hl if not len(st) or growth > 0 else st
    if not len(rows) or (growth < PURGE_GROWTH_PER_S and hll < PURGE_HISTORY_HIGH):
        return None
    return hll, growth, rows


@reads(Resource.PURGE, always=True, inputs=PURGE_INPUTS)
def purge(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """While the history list length grows (PURGE_GROWTH_PER_S or more) or exceeds PURGE_HISTORY_HIGH:
    the oldest open transaction holding a read view (INNODB_TRX, not READ COMMITTED, else the monitor's
    TRANSACTIONS), PURGE_HOLDER_MIN_AGE_S old or more, joined to its session (Command Sleep: idle in
    transaction); its fix ends that session."""
    found = history(tl)
    if found is None:
        return []
    hll, growth, st = found
    windows = (Window(st["ts"].min(), st["ts"].max()),)
    trx, source = _open_transactions(tl)
    what = f"purge of {hll:,.0f} undo records (history list growing {growth:+,.0f}/s)"
    keeps_up = (
        f"{what} with no transaction holding a read view older than {PURGE_HOLDER_MIN_AGE_S:.0f} s: "
        "purge does not keep up (innodb_purge_threads, the write rate)"
    )
    if not len(trx):
        return [_no_transaction(tl, windows, what, keeps_up)]
    per = trx.groupby("trx_id", sort=False).agg(
        age=("active_s", "max"), first=("ts", "min"), last=("ts", "max"), thread=("thread_id", "last")
    )
    trx_id = str(per["age"].idxmax())
    top = per.loc[trx_id]
    age = float(top["age"])
    if age < PURGE_HOLDER_MIN_AGE_S:
        return [
            Holding(
                Resource.PURGE,
                tl.host,
                None,
                (f"the oldest transaction is {age:.0f} s old: no old read view"),
                windows=windows,
                age_s=age,
                contention=keeps_up,
            )
        ]
    mine = trx[trx["trx_id"].eq(trx_id).to_numpy()]
    member, lines = tl.lines_of(mine)
    ev = [
        Evidence(
            f"oldest open transaction {trx_id}: seconds active", age, "s", f"{source}.active_s", member, lines
        ),
        Evidence(
            "history list length (max)",
            int(hll),
            "undo records",
            "innodb_status.history_list_length" if "history_list_length" in st else f"mysqladmin.{HISTORY}",
            *tl.lines_of(st),
        ),
    ]
    holder, fix, who = _purge_holder(tl, top["thread"], trx_id, mine, windows, ev, what)
    seen = (top["last"] - top["first"]).total_seconds()
    shown_by = (
        f"{who}: transaction {trx_id}, the oldest open ({age:.0f} s, {source}), seen over "
        f"{seen:.0f} s "
        f"while the history list grew to {hll:,.0f}"
    )
    return [
        Holding(
            Resource.PURGE,
            tl.host,
            holder,
            shown_by,
            held_s=age,
            age_s=age,
            windows=windows,
            object="the undo history",
            fix=fix,
            evidence=tuple(ev),
        )
    ]


#: Said of an idle (Command Sleep) purge holder.
IDLE_PURGE_NOTE = (
    " It is idle in its transaction (Command Sleep): fix the application that leaves it open "
    "(autocommit off, a missing COMMIT)."
)


def _no_transaction(tl: Timeline, windows: tuple[Window, ...], what: str, keeps_up: str) -> Holding:
    """Purge lags and no transaction that can hold a read view is listed (or no list at all)."""
    listed = any(len(tl.frame(name)) for name in ("innodb_trx", "innodb_transactions"))
    shown_by = (
        "no open transaction holds a read view (INNODB_TRX)"
        if listed
        else "the bundle lists no transaction (INNODB_TRX, TRANSACTIONS)"
    )
    return Holding(
        Resource.PURGE, tl.host, None, shown_by, windows=windows, contention=keeps_up if listed else what
    )


def _purge_holder(
    tl: Timeline,
    thread: object,
    trx_id: str,
    mine: pd.DataFrame,
    windows: tuple[Window, ...],
    ev: list[Evidence],
    what: str,
) -> tuple[Culprit, str, str]:
    """The oldest read view's holder (its session when the transaction list names its thread, else the
    transaction), its fix and how the title names it. ``mine``: that transaction's rows."""
    since = mine["ts"].iloc[-1] - pd.Timedelta(seconds=float(mine["active_s"].iloc[-1]))
    if pd.isna(thread):
        holder = Culprit(kind="transaction", id=trx_id, since=since.floor("s"), evidence=tuple(ev))
        fix = f"End transaction {trx_id} (its session is not in the bundle): its read view holds back {what}."
        who = f"transaction {trx_id}"
    else:
        thread = int(thread)
        facts = blockers.session_facts(tl, thread, windows, ev, trx_id=trx_id)
        holder = Culprit(
            kind="session",
            id=str(thread),
            user=facts.get("user"),
            host=facts.get("host"),  # type: ignore[arg-type]
            statement=facts.get("statement"),
            since=since.floor("s"),
            evidence=tuple(ev),
        )  # type: ignore[arg-type]
        idle = facts.get("statement") == blockers.IDLE
        note = IDLE_PURGE_NOTE if idle else ""
        fix = (
            f"End the session holding the oldest read view: KILL {thread};  -- its transaction"
            f"{_trx_word(trx_id)} rolls back and purge can remove the undo it held back.{note}"
        )
        who = f"session {thread}" + (" (idle in transaction)" if idle else "")
    return holder, fix, who


def _open_transactions(tl: Timeline) -> tuple[pd.DataFrame, str]:
    """``ts trx_id thread_id active_s`` of the transactions that can hold a read view: INNODB_TRX
    (not READ COMMITTED or READ UNCOMMITTED), else the monitor's TRANSACTIONS (not ``not started``)."""
    for name in ("innodb_trx", "innodb_transactions"):
        trx = tl.frame(name)
        if not len(trx) or "active_s" not in trx or "trx_id" not in trx:
            continue
        keep = trx["active_s"].notna().to_numpy().copy()
        if "isolation" in trx:
            keep &= ~trx["isolation"].astype("string").isin(NO_LASTING_VIEW).fillna(False).to_numpy()
        if "state" in trx:
            keep &= ~trx["state"].astype("string").eq("not started").fillna(False).to_numpy()
        trx = trx[keep]
        if len(trx):
            out = trx.assign(
                trx_id=trx["trx_id"].astype("string"),
                thread_id=pd.to_numeric(trx.get("thread_id"), errors="coerce"),
            )
            return out, name
    return pd.DataFrame(columns=["ts", "trx_id", "thread_id", "active_s"]), ""
