"""Who holds the lock the others wait for: row locks, metadata locks and the global read / backup lock.

A senior engineer reading a pt-stalk collection of a lock pile-up names the blocking session, its
user@host, its transaction's start and age, the rows it locked and changed, its statement (or that it
is idle in transaction), how many sessions it blocks, and writes the ``KILL``. This module finds that
session from what the bundle holds (docs/background.md, "Name the culprit"):

- **row locks**: pt-stalk ``-lock-waits`` (``waiting_thread`` -> ``blocking_thread`` per snapshot, from
  INFORMATION_SCHEMA.INNODB_LOCK_WAITS), else ``-transactions``' INNODB_LOCK_WAITS rows joined to
  INNODB_TRX. MariaDB lists a queue: every waiter "blocks" the waiters behind it, so the root blocker is
  the blocking thread that is not itself waiting, and it blocks every waiter whose chain leads to it.
  A root blocker is named only when the bundle shows it HOLDING (``HOLDER_MIN_S``,
  2 s): the same transaction (trx id) blocking in snapshots that span that long, or a waiter queued on
  it (``wait_time``) or its own idleness inside the transaction (``idle_in_trx``) proving it held the
  lock continuously that long. A session that blocks for a second in each of many short transactions
  (a deadlock storm, hot rows) is one of a rotating set, never a holder (``analyzer.waits.holders.locks``
  reads that as contention).
- **metadata locks** (``Waiting for table metadata lock``): the DDL waiting, and ahead of it the
  oldest open transaction (INNODB_TRX, or the TRANSACTIONS section of SHOW ENGINE INNODB STATUS) of
  a session that does not wait itself, else a statement on the DDL's table running since before the
  first wait; else no holder is named (the oldest session not waiting is only a ``candidate``). What
  the rules read is ``analyzer.waits.holders.locks.metadata_holder``: this, then the only client
  session not waiting (elimination, from the wait model this package does not import).
- **the global read or backup lock** (``Waiting for global read lock``, MariaDB ``Waiting for backup
  lock``): the session running FLUSH TABLES WITH READ LOCK, BACKUP STAGE or a dump's
  ``SELECT /*!40001 SQL_NO_CACHE */``, and the backup client in ``ps`` (mysqldump, mariadb-dump,
  mariabackup, xtrabackup, mydumper). What the rules read is
  ``analyzer.waits.holders.locks.global_holder``: this, then the only client session not waiting.

Inputs are timeline frames (analyzer/timeline/timeline.py): ``processlist`` (``id user host command time_s
state fingerprint active``), ``lock_waits``, ``innodb_trx``, ``innodb_lock_waits_raw``,
``innodb_transactions``, ``ps_threads``. No Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from analyzer.evidence import lock_graph
from analyzer.findings import Culprit, Evidence, Window
from analyzer.statements.fingerprint import fingerprint
from analyzer.statements.tables import ddl_table, names_table
from analyzer.timeline.timeline import Timeline, value_is
from analyzer.timeline.windows import within

#: A holder is named only when the bundle shows it holding for at least this long (first to last
#: snapshot that shows it holding, plus one step): a blocker seen for one second is one of many.
#: Every holder reader (``analyzer.waits.holders``) uses it.
HOLDER_MIN_S = 2.0

#: A blocker seen this long (and in two snapshots) blocks for a sustained window
#: (detect.SESSIONS_SUSTAINED_S).
BLOCKER_SUSTAINED_S = 5.0
#: Row-lock blockers looked up in the processlist and the transaction lists: the ones blocking most.
BLOCKERS_NAMED = 5
#: Metadata-lock waits (MySQL 8.0 and MariaDB "General Thread States").
MDL_STATE_RE = re.compile(r"^waiting for (table|schema|stored \w+|trigger|event) metadata lock$", re.I)
#: The global read lock (FLUSH TABLES WITH READ LOCK) and MariaDB 10.4+'s backup lock (BACKUP STAGE,
#: and FTWRL itself, which MariaDB takes as a backup lock).
GLOBAL_STATE_RE = re.compile(r"^waiting for (global read|backup|commit) lock$", re.I)
#: Statements that take the global read or backup lock, as fingerprints (analyzer/statements/fingerprint.py).
#: ``select /*!40001 sql_no_cache */`` is how mysqldump and mariadb-dump read a table.
GLOBAL_HOLDER_RE = re.compile(
    r"^(flush tables? .*with read lock|flush tables with read lock|backup stage|lock tables? for backup"
    r"|lock instance for backup|select /\*!\?? ?sql_no_cache \*/)",
    re.I,
)
#: Backup clients that take FLUSH TABLES WITH READ LOCK or a backup lock (their ps command name).
BACKUP_CLIENTS = frozenset(
    {"mysqldump", "mariadb-dump", "mariabackup", "mariadb-backup", "xtrabackup", "innobackupex", "mydumper"}
)
#: DDL statements that queue behind a metadata lock and then block every later query on the table.
DDL_RE = re.compile(r"^(alter|create|drop|rename|truncate|optimize|repair|analyze)\b", re.I)
#: What an idle session (Command Sleep) is doing: ``IDLE`` when a transaction list (INNODB_TRX, the
#: monitor's TRANSACTIONS, the lock graph's blocking transaction) shows its transaction open, else
#: ``SLEEPING``: it holds what it took (LOCK TABLES, FLUSH TABLES WITH READ LOCK) without a transaction
#: the bundle shows (MySQL 8.4, "Thread Command Values", "LOCK TABLES and UNLOCK TABLES Statements").
IDLE = "idle in transaction"
SLEEPING = "idle"


@dataclass(frozen=True, slots=True)
class Blocker:
    """One session that others wait for.

    ``lock``: ``row``, ``metadata`` or ``global``. ``thread``: processlist Id (what KILL takes), None when
    only a process is known. ``since``: its transaction's ``trx_started`` (UTC); ``age_s``: its age at the
    end of the capture (s); ``idle_s``: how long it has been idle (Command Sleep) at its last sighting;
    ``blocks``: the most sessions waiting on it at once; ``windows``: when it blocked; ``waiter``: the
    DDL or statement waiting first (fingerprint); ``process``: the backup client's command name and PID;
    ``held_s``: how long the bundle shows it holding (s; for a row lock, see the module docstring);
    ``candidate``: with ``thread`` None, the oldest session that does not wait, when nothing in the
    bundle shows who holds the lock (said as a candidate, never named as the holder); ``shown``: how the
    bundle shows it holding, a clause (a metadata lock's or the global read / backup lock's holder).
    """

    lock: str
    thread: int | None
    user: str | None = None
    host: str | None = None
    statement: str | None = None
    trx_id: str | None = None
    since: pd.Timestamp | None = None
    age_s: float | None = None
    idle_s: float | None = None
    rows_locked: int | None = None
    rows_modified: int | None = None
    blocks: int = 0
    windows: tuple[Window, ...] = ()
    waiter: str | None = None
    process: str | None = None
    evidence: tuple[Evidence, ...] = field(default=())
    held_s: float = 0.0
    candidate: int | None = None
    shown: str = ""

    @property
    def sustained(self) -> bool:
        """Blocked others for BLOCKER_SUSTAINED_S or more."""
        return sum(w.seconds for w in self.windows) >= BLOCKER_SUSTAINED_S

    def who(self) -> str:
        """``session 5 app@10.0.0.7`` (or the process when no session is known)."""
        if self.thread is None:
            return f"process {self.process}" if self.process else "an unknown session"
        account = f" {self.user or '?'}@{self.host}" if self.host else (f" {self.user}" if self.user else "")
        return f"session {self.thread}{account}"

    def phrase(self) -> str:
        """One line for a title or a card: who, doing what, for how long, how many it blocks."""
        doing = self.statement or "?"
        if doing == IDLE and self.idle_s is not None:
            doing = f"{IDLE} for {self.idle_s:.0f} s"
        elif doing == SLEEPING:
            doing = f"{SLEEPING} (Command Sleep" + (f", Time {self.idle_s:.0f} s)" if self.idle_s else ")")
        parts = [self.who(), doing]
        if self.age_s is not None:
            parts.append(f"transaction open {self.age_s:.0f} s")
        if self.process and self.thread is not None:
            parts.append(f"client {self.process}")
        return ", ".join(parts) + f", blocks {self.blocks}"

    def kill(self) -> str:
        """The statement that ends it: ``KILL <id>;`` (or the process to stop)."""
        if self.thread is not None:
            return f"KILL {self.thread};"
        return f"kill {self.process.rsplit(' ', 1)[-1]}  # the backup client" if self.process else ""

    def culprit(self) -> Culprit:
        """As the structured culprit of a finding (kind ``session``, or ``process`` without a session)."""
        if self.thread is None:
            return Culprit(
                kind="process",
                id=str(self.process or "?"),
                statement=self.process,
                blocks=self.blocks,
                evidence=self.evidence,
            )
        return Culprit(
            kind="session",
            id=str(self.thread),
            user=self.user,
            host=self.host,
            statement=self.statement,
            since=self.since,
            blocks=self.blocks,
            evidence=self.evidence,
        )


def _ids(values: pd.Series) -> pd.Series:
    return pd.to_numeric(values, errors="coerce")


def _windows(ts: pd.Series, step: float) -> tuple[Window, ...]:
    """The span of the snapshots ``ts`` (one window; a lone snapshot counts ``step`` seconds)."""
    start, end = ts.min(), ts.max()
    if start == end:
        end = start + pd.Timedelta(seconds=step)
    return (Window(start, end),)


def _step(ts: pd.Series) -> float:
    d = pd.Series(sorted(ts.unique())).diff().dt.total_seconds().dropna()
    return float(d.median()) if len(d) else 1.0


def _cite(tl: Timeline, label: str, value: object, unit: str, series: str, rows: pd.DataFrame) -> Evidence:
    member, lines = tl.lines_of(rows) if len(rows) else (None, None)
    return Evidence(
        label, value if isinstance(value, int | float | str) else str(value), unit, series, member, lines
    )


def session_facts(
    tl: Timeline,
    thread: int,
    windows: tuple[Window, ...],
    ev: list[Evidence],
    trx_id: str | None = None,
    *,
    in_transaction: bool = False,
) -> dict[str, object]:
    """What the processlist, INNODB_TRX and the monitor's TRANSACTIONS say of session ``thread``:
    a dict of ``Blocker`` fields (``user host statement idle_s trx_id since age_s rows_locked
    rows_modified``, those known); the lines they come from are appended to ``ev``. ``trx_id``: read
    that transaction of the session only (its age is that transaction's, not a later one's). An idle
    session (Command Sleep) is ``IDLE`` only when a transaction list shows its transaction, or the
    caller has other evidence of it (``in_transaction``: the lock graph's blocking transaction, a
    transaction-scoped lock in performance_schema), else ``SLEEPING``."""
    out: dict[str, object] = {}
    pl = tl.frame("processlist")
    if len(pl) and "id" in pl:
        rows = pl[(_ids(pl["id"]) == thread).to_numpy()]
        if len(rows):
            last = rows.iloc[-1]
            out["user"] = str(last["user"]) if pd.notna(last.get("user")) else None
            host = last.get("host")
            out["host"] = str(host) if host is not None and pd.notna(host) and str(host) else None
            if str(last.get("command")) == "Sleep":
                out["statement"] = IDLE if in_transaction else SLEEPING
                out["idle_s"] = float(last["time_s"]) if pd.notna(last.get("time_s")) else None
            elif pd.notna(last.get("fingerprint")):
                out["statement"] = str(last["fingerprint"])
            ev.append(
                _cite(
                    tl,
                    f"session {thread} in the processlist (user, Command, Time)",
                    f"{out.get('user')}, {last.get('command')}, {last.get('time_s')} s",
                    "",
                    "processlist.id",
                    rows.tail(1),
                )
            )
    trx = tl.frame("innodb_trx")
    source = "innodb_trx"
    if not len(trx) or "thread_id" not in trx or not (_ids(trx["thread_id"]) == thread).any():
        trx, source = tl.frame("innodb_transactions"), "innodb_transactions"
    if len(trx) and "thread_id" in trx:
        rows = trx[(_ids(trx["thread_id"]) == thread).to_numpy()]
        if trx_id is not None:
            rows = rows[rows["trx_id"].astype("string").eq(trx_id).fillna(False).to_numpy()]
        if len(rows):
            last = rows.iloc[-1]
            out["trx_id"] = str(last["trx_id"])
            if out.get("statement") == SLEEPING:
                out["statement"] = IDLE  # its transaction is listed open: idle in it
            if pd.notna(last.get("active_s")):
                out["since"] = (last["ts"] - pd.Timedelta(seconds=float(last["active_s"]))).floor("s")
                last_seen = rows["ts"].max() if trx_id is not None else trx["ts"].max()
                end = max(last_seen, *(w.end for w in windows))
                out["age_s"] = (end - out["since"]).total_seconds()
            locked = last.get("rows_locked", last.get("row_locks"))
            modified = last.get("rows_modified", last.get("undo_entries"))
            out["rows_locked"] = int(locked) if locked is not None and pd.notna(locked) else None
            out["rows_modified"] = int(modified) if modified is not None and pd.notna(modified) else None
            query = last.get("query")
            if "statement" not in out:
                out["statement"] = fingerprint(str(query)) if query is not None and pd.notna(query) else IDLE
            if "user" not in out and source == "innodb_transactions" and pd.notna(last.get("client")):
                parts = str(last["client"]).split()  # "host ip user [state]": MySQL thread id ... line
                out["host"], out["user"] = parts[0], (parts[2] if len(parts) > 2 else None)
            ev.append(
                _cite(
                    tl,
                    f"its transaction {last['trx_id']}: started, rows locked / modified",
                    f"{out.get('since')}, {out['rows_locked']} / {out['rows_modified']}",
                    "",
                    f"{source}.trx_id",
                    rows.tail(1),
                )
            )
    return out


def row_lock_blockers(tl: Timeline) -> list[Blocker]:
    """Root blockers of InnoDB row-lock waits shown holding for ``HOLDER_MIN_S`` or more (see the
    module docstring), most waiters first; each at its longest stretch, with that stretch's
    transaction (its age is that transaction's)."""
    found = lock_graph.edges(tl)
    if not len(found):
        return []
    step = _step(found["ts"])
    best: dict[int, tuple[float, lock_graph.Stretch]] = {}
    for h in lock_graph.stretches(lock_graph.sightings(found, tl)):
        held = h.held_s(step)
        if held >= HOLDER_MIN_S and held > best.get(h.thread, (-1.0, h))[0]:
            best[h.thread] = (held, h)
    kept = sorted(best.values(), key=lambda x: (-x[1].blocks, -x[0]))[:BLOCKERS_NAMED]
    out = []
    for held, h in kept:
        windows = (Window(h.start, h.end),)
        rows = found[
            (found["blocking"] == h.thread).to_numpy() & within(found["ts"], list(windows)).to_numpy()
        ]
        ev = [
            _cite(
                tl,
                f"sessions waiting on session {h.thread} (max)",
                h.blocks,
                "sessions",
                "lock_waits.blocking_thread",
                rows,
            )
        ]
        # the lock graph shows its transaction blocking: open
        trx_id = lock_graph.holding_trx(tl, h, step)
        info = session_facts(tl, h.thread, windows, ev, trx_id=trx_id, in_transaction=True)
        if "idle_s" not in info and "idle_in_trx_s" in rows and rows["idle_in_trx_s"].notna().any():
            idle = float(rows["idle_in_trx_s"].iloc[-1])
            if idle > 0:
                info.setdefault("statement", IDLE)
                info["idle_s"] = idle
        if "host" not in info and "blocking_host" in rows and rows["blocking_host"].notna().any():
            info["host"] = str(rows["blocking_host"].iloc[-1])
        waiters = found[within(found["ts"], list(windows)).to_numpy()]
        first = waiters["waiting_query"].dropna() if "waiting_query" in waiters else pd.Series(dtype=object)
        out.append(
            Blocker(
                lock="row",
                thread=h.thread,
                blocks=h.blocks,
                windows=windows,
                evidence=tuple(ev),
                waiter=fingerprint(str(first.iloc[0])) if len(first) else None,
                held_s=held,
                **info,
            )
        )  # type: ignore[arg-type]
    return sorted(out, key=lambda b: -b.blocks)


def _waiting(pl: pd.DataFrame, pattern: re.Pattern[str]) -> pd.Series:
    return pd.Series(
        pl["active"].to_numpy(dtype=bool) & value_is(pl["state"], lambda s: s.str.match(pattern)),
        index=pl.index,
    )


def _queue(
    tl: Timeline, pattern: re.Pattern[str]
) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame, tuple[Window, ...], int] | None:
    """The sessions whose State matches ``pattern``: (processlist, waiting mask, their rows, when,
    most at once), or None when none waits."""
    pl = tl.frame("processlist")
    if not len(pl) or "state" not in pl:
        return None
    waiting = _waiting(pl, pattern)
    if not waiting.any():
        return None
    rows = pl[waiting]
    return (
        pl,
        waiting,
        rows,
        _windows(rows["ts"], _step(pl["ts"])),
        int(rows.groupby("ts")["id"].nunique().max()),
    )


def pfs_holder(
    tl: Timeline, windows: tuple[Window, ...], types: frozenset[str]
) -> tuple[int, Evidence] | None:
    """The session holding a metadata lock others wait for, per performance_schema.metadata_locks
    (``pfs_metadata_locks``, pt-stalk ``-ps-locks-transactions``): of the objects of ``types`` with a
    PENDING lock in ``windows``, the session with a GRANTED lock on the same object that waits for
    nothing itself, seen in the most snapshots; with the evidence of its rows. None without the frame."""
    ml = tl.frame("pfs_metadata_locks")
    if not len(ml) or "lock_status" not in ml:
        return None
    ml = ml[within(ml["ts"], windows) & ml["object_type"].astype("string").isin(types).fillna(False)]
    key = ["ts", "object_type", "object_schema", "object_name"]
    ml = ml.assign(**{c: ml[c].astype("string").fillna("") for c in key[1:]})
    pending = ml[ml["lock_status"] == "PENDING"]
    if not len(pending):
        return None
    waiting = set(zip(pending["ts"], pending["processlist_id"], strict=True))
    granted = ml[(ml["lock_status"] == "GRANTED").to_numpy()].merge(pending[key].drop_duplicates(), on=key)
    granted = granted[
        [(t, p) not in waiting for t, p in zip(granted["ts"], granted["processlist_id"], strict=True)]
    ]
    granted = granted.dropna(subset=["processlist_id"])
    if not len(granted):
        return None
    holder = int(granted.groupby("processlist_id")["ts"].nunique().idxmax())
    rows = granted[granted["processlist_id"] == holder]
    last = rows.iloc[-1]
    what = (
        f"{last['lock_type']} on {last['object_type']} {last['object_schema']}.{last['object_name']}".rstrip(
            "."
        )
    )
    return holder, _cite(
        tl,
        f"session {holder} holds the lock (performance_schema.metadata_locks)",
        what,
        "",
        "pfs_metadata_locks.lock_status",
        rows,
    )


#: performance_schema object types of a table's metadata lock, and of the global read / backup lock.
MDL_OBJECTS = frozenset({"TABLE", "SCHEMA", "FUNCTION", "PROCEDURE", "TRIGGER", "EVENT"})
GLOBAL_OBJECTS = frozenset({"GLOBAL", "BACKUP", "COMMIT"})


def metadata_lock_blocker(tl: Timeline) -> Blocker | None:
    """The session the bundle shows holding the metadata lock sessions in ``Waiting for table metadata
    lock`` wait for (see the module docstring), ``shown`` saying how; with none shown, ``thread`` None
    and the ``candidate``. None when no session waits for a metadata lock. The rules read it through
    ``analyzer.waits.holders.locks.metadata_holder``, which adds the holder by elimination."""
    queue = _queue(tl, MDL_STATE_RE)
    if queue is None:
        return None
    pl, waiting, rows, windows, blocks = queue
    ddl = (
        rows[value_is(rows["fingerprint"], lambda s: s.str.match(DDL_RE))]
        if "fingerprint" in rows
        else rows.iloc[0:0]
    )
    waiter = str(ddl["fingerprint"].iloc[0]) if len(ddl) else None
    ev = [
        _cite(tl, "sessions waiting for a metadata lock (max)", blocks, "sessions", "processlist.state", rows)
    ]
    if len(ddl):
        ev.append(
            _cite(
                tl,
                f"DDL waiting: session {ddl['id'].iloc[0]}",
                waiter or "",
                "",
                "processlist.fingerprint",
                ddl.head(1),
            )
        )
    waiting_ids = set(_ids(rows["id"]).dropna().astype(int))
    holder, shown = None, ""
    named = pfs_holder(tl, windows, MDL_OBJECTS)
    if named is not None:
        holder, shown = named[0], SHOWN_BY_PFS
        ev.append(named[1])
    if holder is None:
        holder = _oldest_transaction(tl, windows, waiting_ids)
    cand = pl[within(pl["ts"], windows) & ~waiting & ~_ids(pl["id"]).isin(waiting_ids)]
    cand = cand.assign(_t=_ids(cand["time_s"])).dropna(subset=["_t", "id"])
    cand = cand[cand["_t"] >= _ids(rows["time_s"]).max()]
    if holder is None and waiter is not None:
        running = _running_on_table(cand, waiter)
        if running is not None:
            holder, shown = int(running["id"]), SHOWN_RUNNING
            ev.append(
                _cite(
                    tl,
                    f"{RUNNING_ON_TABLE} (Time, s): session {holder}",
                    int(running["_t"]),
                    "s",
                    "processlist.time_s",
                    cand[_ids(cand["id"]) == holder].tail(1),
                )
            )
    if holder is None:  # nothing shows the holder: the oldest session that does not wait, a candidate
        oldest = int(cand.sort_values("_t", kind="stable").iloc[-1]["id"]) if len(cand) else None
        info: dict[str, object] = {"candidate": oldest}
    else:
        scoped = shown == SHOWN_BY_PFS and _transaction_lock(tl, holder, windows)
        info = session_facts(tl, holder, windows, ev, in_transaction=scoped)
        trx = trx_word(info.get("trx_id"))  # type: ignore[arg-type]
        info["shown"] = shown or f"its transaction{trx} is open ahead of the waiters (transaction list)"
    return Blocker(
        lock="metadata",
        thread=holder,
        blocks=blocks,
        windows=windows,
        waiter=waiter,
        evidence=tuple(ev),
        **info,
    )  # type: ignore[arg-type]


def _oldest_transaction(tl: Timeline, windows: tuple[Window, ...], waiting: set[int]) -> int | None:
    """The session of the oldest transaction open in ``windows`` (INNODB_TRX, else the monitor's
    TRANSACTIONS) of a session not in ``waiting``; None when neither lists one."""
    for name in ("innodb_trx", "innodb_transactions"):
        trx = tl.frame(name)
        if not len(trx) or "thread_id" not in trx or "active_s" not in trx:
            continue
        trx = trx[within(trx["ts"], windows) & ~_ids(trx["thread_id"]).isin(waiting)].dropna(
            subset=["thread_id", "active_s"]
        )
        if len(trx):
            return int(trx.loc[trx["active_s"].idxmax(), "thread_id"])
    return None


def _transaction_lock(tl: Timeline, thread: int, windows: tuple[Window, ...]) -> bool:
    """Session ``thread`` holds a GRANTED metadata lock of LOCK_DURATION ``TRANSACTION`` in ``windows``
    (``pfs_metadata_locks``): its open transaction holds it. LOCK TABLES, FLUSH TABLES WITH READ LOCK
    and GET_LOCK() hold theirs ``EXPLICIT`` (MySQL 8.4 Reference Manual, "The metadata_locks Table")."""
    ml = tl.frame("pfs_metadata_locks")
    if not len(ml) or "lock_duration" not in ml:
        return False
    ml = ml[within(ml["ts"], windows).to_numpy() & (_ids(ml["processlist_id"]) == thread).to_numpy()]
    return bool((ml["lock_status"].eq("GRANTED") & ml["lock_duration"].eq("TRANSACTION")).fillna(False).any())


#: The label of the evidence of a statement that holds a table's metadata lock by running on it.
RUNNING_ON_TABLE = "statement on the DDL's table running since before the first wait"
#: How the bundle shows a metadata lock's holder (``Blocker.shown``), besides its open transaction.
SHOWN_BY_PFS = "performance_schema.metadata_locks shows its GRANTED lock"
SHOWN_RUNNING = (
    "its statement on the table runs since before the first wait (a statement's metadata locks last until "
    "its transaction ends)"
)


def trx_word(trx_id: str | None) -> str:
    """`` 421337`` for a transaction id, empty for none or InnoDB's 0 (a read-only transaction shows
    no id of its own: MySQL 8.4, "INNODB_TRX")."""
    return f" {trx_id}" if trx_id and trx_id != "0" else ""


def _running_on_table(cand: pd.DataFrame, ddl: str) -> pd.Series | None:
    """The session running a statement on the table of ``ddl`` (a fingerprint) longest, when it started
    before the first wait (``cand``: processlist rows not waiting, Time >= the longest wait, ``_t``): a
    statement's metadata locks last until its transaction ends (MySQL 8.4 Reference Manual, "Metadata
    Locking"), so it holds the lock the DDL waits for. None when no such statement is in the bundle."""
    table = ddl_table(ddl)
    if table is None or not len(cand) or "fingerprint" not in cand:
        return None
    running = cand[
        cand["active"].astype(bool).to_numpy() & names_table(cand["fingerprint"], table).to_numpy()
    ]
    if not len(running):
        return None
    return running.sort_values("_t", kind="stable").iloc[-1]


def global_lock_holder(tl: Timeline) -> Blocker | None:
    """The holder of the global read / backup lock that sessions wait for (see the module docstring):
    a GRANTED GLOBAL, BACKUP or COMMIT lock in performance_schema.metadata_locks, else the session
    running FLUSH TABLES WITH READ LOCK, LOCK INSTANCE FOR BACKUP, BACKUP STAGE or a dump's read
    (processlist Info), and the backup client in ``ps``; ``shown`` says how. With none shown,
    ``thread`` and ``process`` are None. None when no session waits for it. The rules read it through
    ``analyzer.waits.holders.locks.global_holder``, which adds the holder by elimination."""
    queue = _queue(tl, GLOBAL_STATE_RE)
    if queue is None:
        return None
    pl, waiting, rows, windows, blocks = queue
    waiting_label = "sessions waiting for the global read / backup lock (max)"
    ev = [_cite(tl, waiting_label, blocks, "sessions", "processlist.state", rows)]
    process = None
    ps = tl.frame("ps_threads")
    if len(ps) and "comm" in ps:
        tools = ps[value_is(ps["comm"], lambda s: s.isin(BACKUP_CLIENTS))]
        if len(tools):
            t = tools.iloc[-1]
            process = f"{t['comm']} PID {int(t['pid'])}"
            ev.append(_cite(tl, "backup client in ps", process, "", "ps_threads.comm", tools.tail(1)))
    fp = pl["fingerprint"] if "fingerprint" in pl else None
    holder, shown = None, []
    named = pfs_holder(tl, windows, GLOBAL_OBJECTS)
    if named is not None:
        holder = named[0]
        ev.append(named[1])
        shown.append(SHOWN_GLOBAL_BY_PFS)
    if fp is not None and holder is None:
        cand = pl[
            ~waiting & value_is(fp, lambda s: s.str.match(GLOBAL_HOLDER_RE)) & within(pl["ts"], windows)
        ]
        cand = cand.dropna(subset=["id"])
        if len(cand):
            holder = int(cand.assign(_t=_ids(cand["time_s"])).sort_values("_t", kind="stable").iloc[-1]["id"])
            ev.append(
                _cite(
                    tl,
                    f"session {holder} holds it",
                    str(cand["fingerprint"].iloc[-1])[:200],
                    "",
                    "processlist.fingerprint",
                    cand[_ids(cand["id"]) == holder].tail(1),
                )
            )
            shown.append(SHOWN_GLOBAL_STATEMENT)
    if process is not None:
        shown.append(f"the backup client {process} in ps")
    info = session_facts(tl, holder, windows, ev) if holder is not None else {}
    return Blocker(
        lock="global",
        thread=holder,
        blocks=blocks,
        windows=windows,
        process=process,
        evidence=tuple(ev),
        shown="; ".join(shown),
        **info,
    )  # type: ignore[arg-type]


#: How the bundle shows the global read / backup lock's holder (``Blocker.shown``).
SHOWN_GLOBAL_BY_PFS = "a GRANTED lock in performance_schema.metadata_locks"
SHOWN_GLOBAL_STATEMENT = "its statement in the processlist"
