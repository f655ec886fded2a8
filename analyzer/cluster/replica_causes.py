"""Why a replica is behind: the cause read from what the replica's own capture holds.

A replica falls behind for one of a few reasons, and each has its own fix. ``lag_cause`` reads, in
this order (the first that the bundle shows wins):

1. **an intentional delay**: SQL_Delay (MASTER_DELAY) > 0 and the lag within it, or the SQL thread
   ``Waiting until MASTER_DELAY seconds after master executed event``;
2. **a local session's row lock**: the waiter in ``-lock-waits`` (or a ``LOCK WAIT`` transaction of
   ``-transactions``) is the replica's SQL or worker thread (processlist ``system user``); the blocker is
   named by ``analyzer.evidence.blockers`` (id, user@host, statement or idle in transaction, ``KILL``);
3. **a local session's metadata lock**: the SQL thread ``Waiting for table metadata lock`` (a DDL of
   the source behind a local reader); the holder is the oldest open transaction of another session;
4. **DDL being applied**: the SQL thread's State or statement is an ALTER / copy to tmp table;
5. **row events on a table without a usable key**: the SQL thread in ``*_rows_log_event::find_row()``
   while the replica's Handler_read_rnd_next runs at a table scan's rate;
6. **one large transaction**: Exec_Master_Log_Pos stays put in most snapshots while the I/O thread
   has more (Read_Master_Log_Pos ahead), the SQL thread applying row events;
7. **the I/O thread behind**: the SQL thread has read all its relay log, and the I/O thread is not
   running, reconnecting, or receives less than the source writes;
8. **commit cost**: the SQL thread seen in its commit step while the replica syncs at every commit
   (innodb_flush_log_at_trx_commit=1, sync_binlog=1);
9. **single-threaded apply**: one SQL thread (slave_parallel_threads / replica_parallel_workers <= 1)
   busy in most snapshots.

None of these shown: the cause is ``unknown`` and its text says so. A stopped replica is its own
finding (``replica-stopped``), not a cause here.

Inputs: the replica's ``Timeline`` (``processlist`` with its ``system user`` rows, ``lock_waits``,
``innodb_trx``, ``mysqladmin`` Handler_read_rnd_next, ``variables``) and its ``replica_status`` rows
of one channel; optionally the source's write figures (``source_binlog``: bytes/s). Sources: MariaDB
Knowledge Base "Replication Thread States" (Slave SQL thread states), "SHOW REPLICA STATUS", "Delayed
Replication", "Parallel Replication", "Row-based Replication With No Primary Key"; MySQL 8.4
Reference Manual 19.2.3 "Replication Threads" and 19.4.11 "Delayed Replication".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from analyzer.cluster.nodes import disk_wait
from analyzer.cluster.texts import CAUSE_TEXTS, STOPPED_FIXES
from analyzer.detect import cite, status, variable, variable_number
from analyzer.evidence import blockers
from analyzer.findings import Culprit, Evidence, Window
from analyzer.timeline.timeline import REPLICATION_USER, Timeline, value_is
from analyzer.timeline.windows import within

#: The replica's I/O thread (its processlist rows are not the applier's).
IO_STATE_RE = re.compile(
    r"(?:waiting for (?:master|source) to send event|queueing (?:master|source) event|reading from "
    r"net|connecting to"
    r"|reconnecting|waiting to reconnect|requesting binlog dump|checking (?:master|source) version"
    r"|registering (?:slave|replica)|free enough relay log space|waiting for (?:master|source) update)",
    re.I,
)
IO_COMMANDS = frozenset({"Slave_IO", "Binlog Dump", "Binlog Dump GTID"})
#: The SQL thread with nothing to apply.
IDLE_SQL_RE = re.compile(
    r"has read all relay log|waiting for (?:work|an event) from|waiting for more updates", re.I
)
MDL_WAIT_RE = re.compile(r"^waiting for table metadata lock$", re.I)
DELAY_STATE_RE = re.compile(r"waiting until (?:master|source)_delay", re.I)
DDL_STATE_RE = re.compile(
    r"(?:copy to tmp table|altering table|alter table|creating index|committing alter)", re.I
)
DDL_STATEMENT_RE = re.compile(
    r"^\s*(?:alter|create\s+(?:unique\s+)?index|optimize|truncate|drop\s+index)\b", re.I
)
FIND_ROW_RE = re.compile(r"(?:update|delete)_rows_log_event::find_row", re.I)
ROW_EVENT_RE = re.compile(r"(?:write|update|delete)_rows_log_event|applying batch of row changes", re.I)
COMMIT_STATE_RE = re.compile(
    r"^(?:commit|waiting for (?:handler )?commit|waiting for prior transaction to commit)", re.I
)
#: A table named in a State or statement: ``on table `sb`.`nokey` ``, ``FROM sb.nokey``, ``ALTER TABLE big``.
TABLE_RE = re.compile(
    r"(?:on table|from|into|update|alter table)\s+[`'\"]?([\w$]+)[`'\"]?(?:\.[`'\"]?([\w$]+)[`'\"]?)?", re.I
)

#: Lag within this many seconds of SQL_Delay is the delay itself (Seconds_Behind_Master counts it).
DELAY_SLACK_S = 10.0
#: A table scan's rate: Handler_read_rnd_next at 100,000 rows/s or more while the SQL thread looks
#: up rows (an indexed lookup reads a handful of rows per event).
SCAN_ROWS_PER_S = 100_000.0
#: The SQL thread's state is "most of the time" in this share of the snapshots that show it.
MOSTLY = 0.5
#: One transaction: Exec_Master_Log_Pos unchanged in this share of three or more snapshots.
STILL_SHARE = 0.8
STILL_MIN_SNAPSHOTS = 3
#: The I/O thread receives less than this share of what the source writes to its binlog.
IO_BEHIND_SHARE = 0.5
#: The SQL thread is seen committing in this share of its snapshots: commits are its bottleneck.
COMMIT_SHARE = 0.3


#: SQL thread errors that mean the replica's data differs from the source's: 1062 duplicate key,
#: 1032 row not found (MySQL 8.4 "Server Error Message Reference").
DATA_ERRORS = (1062.0, 1032.0)


def stopped_fix(last: pd.Series, replica: str) -> str:
    """The fix of a stopped replication thread (``STOPPED_FIXES``) from the replica's last SHOW SLAVE
    STATUS row ``last``: the SQL thread's data error (1062, 1032) or another, the I/O thread's error,
    or an I/O thread stopped with none (by hand: STOP SLAVE IO_THREAD)."""
    sql_no = str(last.get("sql_running")) == "No"
    errno = last.get("last_sql_errno" if sql_no else "last_io_errno")
    errno = float(errno) if errno is not None and pd.notna(errno) and errno else None
    if sql_no:
        kind = "sql-data" if errno in DATA_ERRORS else "sql"
    else:
        kind = "io" if errno or str(last.get("last_io_error") or "").strip() else "io-by-hand"
    return STOPPED_FIXES[kind].format(replica=replica)


@dataclass(frozen=True, slots=True)
class LagCause:
    """Why one replica is behind. ``key``: one of CAUSE_TEXTS (``delay``, ``local-lock``, ``ddl``,
    ``no-key``, ``large-transaction``, ``io-thread``, ``commit-cost``, ``single-thread``, ``unknown``);
    ``title``: the phrase after "db-b is 40 s behind db-a: "; ``explanation`` and ``fix``: that cause's
    texts; ``culprit`` and ``evidence``: what names it; ``threads``: the SQL and worker thread ids."""

    key: str
    title: str
    explanation: str
    fix: str
    culprit: Culprit | None = None
    evidence: tuple[Evidence, ...] = ()
    threads: tuple[int, ...] = ()

    @property
    def subjects(self) -> tuple[tuple[str, str], ...]:
        """The finding's ``subjects`` (analyzer/reasoning/links.py): the SQL and worker threads' processlist
        Ids as ``("session", id)``, and the statement the cause names as ``("statement", fingerprint)``."""
        out = tuple(("session", str(t)) for t in self.threads)
        if self.culprit is not None and self.culprit.kind == "statement" and self.culprit.statement:
            out += (("statement", self.culprit.statement),)
        return out

    @property
    def intentional(self) -> bool:
        """The lag is asked for (MASTER_DELAY): not a problem."""
        return self.key == "delay"


def applier_rows(tl: Timeline) -> pd.DataFrame:
    """The processlist rows of the replica's SQL and worker threads: user ``system user``, not the I/O
    thread (Command Slave_IO, or an I/O State on MySQL where every replication thread is ``Connect``),
    not Galera's own threads (Command Sleep/Daemon)."""
    pl = tl.frame("processlist")
    if not len(pl) or "user" not in pl:
        return pl.iloc[0:0]
    system = value_is(pl["user"], lambda s: s == REPLICATION_USER)
    command = value_is(pl["command"], lambda s: ~s.isin(IO_COMMANDS | {"Sleep", "Daemon"}))
    state = value_is(pl["state"], lambda s: ~s.str.contains(IO_STATE_RE)) if "state" in pl else True
    return pl[system & command & state]


def _states(rows: pd.DataFrame) -> pd.Series:
    """The State of each applier row (text; '' for none)."""
    return rows["state"].astype("string").fillna("") if "state" in rows else pd.Series("", index=rows.index)


def _share(rows: pd.DataFrame, pattern: re.Pattern[str]) -> tuple[float, pd.DataFrame]:
    """Share of the snapshots in which an applier thread's State matches ``pattern``, and those rows."""
    if not len(rows):
        return 0.0, rows
    hit = rows[_states(rows).str.contains(pattern).fillna(False).to_numpy(dtype=bool)]
    return hit["ts"].nunique() / rows["ts"].nunique(), hit


def _fill(key: str, **values: object) -> tuple[str, str, str]:
    """CAUSE_TEXTS[key] (title, explanation, fix) filled from ``values``."""
    return tuple(t.format(**values) for t in CAUSE_TEXTS[key])  # type: ignore[return-value]


def _cause(
    key: str, culprit: Culprit | None, evidence: list[Evidence], threads: tuple[int, ...], **values: object
) -> LagCause:
    title, explanation, fix = _fill(key, **values)
    return LagCause(key, title, explanation, fix, culprit, tuple(evidence), threads)


def _delay(
    tl: Timeline, rs: pd.DataFrame, appliers: pd.DataFrame, threads: tuple[int, ...]
) -> LagCause | None:
    if "sql_delay" not in rs or not rs["sql_delay"].notna().any():
        return None
    delay = float(rs["sql_delay"].dropna().iloc[-1])
    lag = rs["seconds_behind"].dropna()
    waiting, _ = _share(appliers, DELAY_STATE_RE)
    state_says = (
        rs["sql_state"].astype("string").fillna("").str.contains(DELAY_STATE_RE).any()
        if "sql_state" in rs
        else False
    )
    if delay <= 0 or not (
        waiting > 0 or state_says or (len(lag) and float(lag.max()) <= delay + DELAY_SLACK_S)
    ):
        return None
    ev = [cite(tl, "SQL_Delay (MASTER_DELAY)", delay, "s", "replica_status.sql_delay", rs.tail(1))]
    return _cause(
        "delay",
        Culprit(kind="setting", id="MASTER_DELAY", statement=f"{delay:.0f}"),
        ev,
        threads,
        delay=delay,
    )


def holder_words(b: blockers.Blocker) -> str:
    """The session a replica's SQL thread waits for, in a title's words: ``session 11 app@localhost,
    idle in transaction for 33 s`` (or its statement), with its transaction's age when known."""
    return b.phrase().rsplit(", blocks ", 1)[0]


def _lock(tl: Timeline, threads: tuple[int, ...]) -> LagCause | None:
    lw = tl.frame("lock_waits")
    waits = pd.DataFrame()
    if len(lw) and "waiting_thread" in lw:
        waits = lw[pd.to_numeric(lw["waiting_thread"], errors="coerce").isin(threads).to_numpy()]
    trx = tl.frame("innodb_trx")
    if not len(waits) and len(trx) and "thread_id" in trx:
        waits = trx[
            (
                pd.to_numeric(trx["thread_id"], errors="coerce").isin(threads) & (trx["state"] == "LOCK WAIT")
            ).to_numpy()
        ]
    if not len(waits):
        return None
    wanted = set(
        pd.to_numeric(waits.get("blocking_thread", pd.Series(dtype=float)), errors="coerce")
        .dropna()
        .astype(int)
    )
    found = [b for b in blockers.row_lock_blockers(tl) if b.thread is not None and b.thread not in threads]
    named = [b for b in found if b.thread in wanted] or found
    waiter = int(
        pd.to_numeric(waits.get("waiting_thread", waits.get("thread_id")), errors="coerce").dropna().iloc[0]
    )
    wait_s = float(waits["wait_s"].max()) if "wait_s" in waits and waits["wait_s"].notna().any() else None
    ev = [
        cite(
            tl,
            f"the replica's SQL thread {waiter} waits for a row lock",
            f"{wait_s:.0f} s" if wait_s is not None else "yes",
            "",
            "lock_waits.waiting_thread" if "waiting_thread" in waits else "innodb_trx.state",
            waits,
        )
    ]
    if not named:
        return _cause(
            "local-lock",
            None,
            ev,
            threads,
            thread=waiter,
            blocker="a session the capture does not name",
            kill="",
        )
    b = named[0]
    ev += list(b.evidence)
    return _cause(
        "local-lock", b.culprit(), ev, threads, thread=waiter, blocker=holder_words(b), kill=b.kill()
    )


def _mdl(tl: Timeline, appliers: pd.DataFrame, threads: tuple[int, ...]) -> LagCause | None:
    """The SQL thread waits for a metadata lock (a DDL from the source behind a local reader): the
    holder is the oldest open transaction of another session in those snapshots (INNODB_TRX)."""
    _, rows = _share(appliers, MDL_WAIT_RE)
    trx = tl.frame("innodb_trx")
    if not len(rows) or not len(trx) or "thread_id" not in trx or "active_s" not in trx:
        return None
    windows = (Window(rows["ts"].min(), rows["ts"].max()),)
    ids = pd.to_numeric(trx["thread_id"], errors="coerce")
    open_trx = trx[(within(trx["ts"], list(windows)) & ~ids.isin(threads)).to_numpy()].dropna(
        subset=["active_s"]
    )
    if not len(open_trx):
        return None
    holder = int(open_trx.loc[open_trx["active_s"].idxmax(), "thread_id"])
    statement = str(rows["fingerprint"].iloc[-1]) if "fingerprint" in rows else "a DDL statement"
    ev = [
        cite(
            tl,
            f"the replica's SQL thread waits for a metadata lock ({statement})",
            f"{rows['ts'].nunique()} snapshots",
            "",
            "processlist.state",
            rows,
        )
    ]
    facts = blockers.session_facts(tl, holder, windows, ev)
    b = blockers.Blocker(
        lock="metadata", thread=holder, blocks=1, windows=windows, evidence=tuple(ev), **facts
    )  # type: ignore[arg-type]
    return _cause(
        "local-mdl", b.culprit(), ev, threads, blocker=holder_words(b), kill=b.kill(), statement=statement
    )


def _ddl(tl: Timeline, appliers: pd.DataFrame, threads: tuple[int, ...]) -> LagCause | None:
    share, rows = _share(appliers, DDL_STATE_RE)
    if "fingerprint" in appliers:
        fp = appliers["fingerprint"].astype("string").fillna("")
        ddl = appliers[fp.str.contains(DDL_STATEMENT_RE).fillna(False).to_numpy(dtype=bool)]
        rows = pd.concat([rows, ddl]).drop_duplicates(subset=["ts", "id"]) if len(ddl) else rows
    if not len(rows):
        return None
    last = rows.iloc[-1]
    statement = (
        str(last["fingerprint"]) if "fingerprint" in rows and pd.notna(last.get("fingerprint")) else None
    )
    running = float(rows["time_s"].max()) if "time_s" in rows and rows["time_s"].notna().any() else None
    ev = [
        cite(
            tl,
            "the SQL thread applies DDL (State, statement)",
            f"{last.get('state')}; {statement or '?'}",
            "",
            "processlist.state",
            rows,
        )
    ]
    culprit = Culprit(
        kind="statement", id=statement or str(last.get("state")), statement=statement, evidence=tuple(ev)
    )
    return _cause(
        "ddl",
        culprit,
        ev,
        threads,
        state=str(last.get("state")),
        statement=statement or "a DDL statement",
        table=_table([statement or ""]) or "a table the capture does not name",
        running=f"{running:.0f} s" if running is not None else "an unknown time",
    )


def _table(states: pd.Series) -> str | None:
    for text in states:
        m = TABLE_RE.search(str(text))
        if m:
            return ".".join(g for g in m.groups() if g)
    return None


def _no_key(tl: Timeline, appliers: pd.DataFrame, threads: tuple[int, ...]) -> LagCause | None:
    share, rows = _share(appliers, FIND_ROW_RE)
    scans = status(tl, "Handler_read_rnd_next").dropna(subset=["per_s"])
    if share < MOSTLY or not len(scans):
        return None
    scans = scans[
        (scans["ts"] >= rows["ts"].min() - pd.Timedelta(seconds=2))
        & (scans["ts"] <= rows["ts"].max() + pd.Timedelta(seconds=2))
    ]
    rate = float(scans["per_s"].median()) if len(scans) else 0.0
    if rate < SCAN_ROWS_PER_S:
        return None
    table = _table(_states(rows)) or _table(
        tl.frame("innodb_trx").get("query", pd.Series(dtype=object)).dropna()
    )
    state = str(_states(rows).mode().iloc[0])
    ev = [
        cite(tl, "the SQL thread looks up rows (State)", state, "", "processlist.state", rows),
        cite(
            tl,
            "Handler_read_rnd_next (median)",
            round(rate),
            "rows/s",
            "mysqladmin.Handler_read_rnd_next",
            scans,
        ),
    ]
    what = f"table {table}" if table else "a table the capture does not name"
    culprit = Culprit(kind="statement", id=what, statement=state, evidence=tuple(ev))
    words = f"{rate / 1e6:.1f} M rows/s" if rate >= 1e6 else f"{rate:,.0f} rows/s"
    return _cause(
        "no-key",
        culprit,
        ev,
        threads,
        state=state,
        rate=rate,
        rate_words=words,
        share=100 * share,
        table=what,
    )


def _still(rs: pd.DataFrame) -> pd.DataFrame:
    """The snapshots in which the SQL thread has not moved (Exec_Master_Log_Pos and its file as in the
    snapshot before) while the I/O thread holds more (Read_Master_Log_Pos or its file ahead)."""
    rs = rs.dropna(subset=["exec_source_log_pos"])
    file = rs["relay_source_log_file"] if "relay_source_log_file" in rs else rs["source_log_file"]
    same = (rs["exec_source_log_pos"].diff() == 0) & (file == file.shift())
    ahead = (rs["read_source_log_pos"] != rs["exec_source_log_pos"]) | (rs["source_log_file"] != file)
    return rs[(same & ahead).to_numpy(dtype=bool)]


def _large(
    tl: Timeline, rs: pd.DataFrame, appliers: pd.DataFrame, threads: tuple[int, ...]
) -> LagCause | None:
    if len(rs) < STILL_MIN_SNAPSHOTS + 1 or "exec_source_log_pos" not in rs:
        return None
    still = _still(rs)
    if len(still) < STILL_MIN_SNAPSHOTS or len(still) < STILL_SHARE * (len(rs) - 1):
        return None
    _, rows = _share(appliers, ROW_EVENT_RE)
    last = still.iloc[-1]
    file = last.get("relay_source_log_file") or last.get("source_log_file")
    ev = [
        cite(
            tl,
            "Exec_Master_Log_Pos unchanged",
            f"{file}:{last['exec_source_log_pos']:.0f} in {len(still)} of {len(rs)} snapshots",
            "",
            "replica_status.exec_source_log_pos",
            still,
        )
    ]
    trx = tl.frame("innodb_trx")
    mine = (
        trx[pd.to_numeric(trx["thread_id"], errors="coerce").isin(threads).to_numpy()]
        if len(trx) and "thread_id" in trx
        else trx.iloc[0:0]
    )
    changed, trx_id, rows_phrase = "", None, ""
    if len(mine) and "rows_modified" in mine and mine["rows_modified"].notna().any():
        t = mine.iloc[-1]
        trx_id = str(t["trx_id"])
        changed = f"; its transaction {trx_id} has changed {float(t['rows_modified']):,.0f} rows so far"
        rows_phrase = f", {float(t['rows_modified']):,.0f} rows changed so far"
        ev.append(
            cite(
                tl,
                f"transaction {trx_id} of the SQL thread: rows modified",
                float(t["rows_modified"]),
                "rows",
                "innodb_trx.rows_modified",
                mine,
            )
        )
    state = str(_states(rows).mode().iloc[0]) if len(rows) else str(last.get("sql_state") or "?")
    culprit = Culprit(
        kind="transaction",
        id=trx_id or f"{file}:{last['exec_source_log_pos']:.0f}",
        statement=state,
        evidence=tuple(ev),
    )
    seconds = (still["ts"].iloc[-1] - still["ts"].iloc[0]).total_seconds() + 1
    return _cause(
        "large-transaction",
        culprit,
        ev,
        threads,
        position=f"{file}:{last['exec_source_log_pos']:.0f}",
        seconds=seconds,
        changed=changed,
        rows=rows_phrase,
        state=state,
    )


def _io(
    tl: Timeline,
    rs: pd.DataFrame,
    appliers: pd.DataFrame,
    threads: tuple[int, ...],
    source_binlog: float | None,
    received: float | None,
) -> LagCause | None:
    idle, _ = _share(appliers, IDLE_SQL_RE)
    if not len(appliers) and "sql_state" in rs:
        idle = float(rs["sql_state"].astype("string").fillna("").str.contains(IDLE_SQL_RE).mean())
    io_state = (
        str(rs["io_state"].dropna().iloc[-1]) if "io_state" in rs and rs["io_state"].notna().any() else ""
    )
    io_down = str(rs["io_running"].iloc[-1]) != "Yes" or bool(
        re.search(r"reconnect|connecting", io_state, re.I)
    )
    slow = source_binlog is not None and received is not None and received < IO_BEHIND_SHARE * source_binlog
    if idle < MOSTLY or not (io_down or slow):
        return None
    got = f"{received / 1024:,.0f} KiB/s" if received is not None else "an unknown rate"
    wrote = f"{source_binlog / 1024:,.0f} KiB/s" if source_binlog is not None else "an unknown rate"
    ev = [
        cite(
            tl,
            "Slave_IO_Running / Slave_IO_State",
            f"{rs['io_running'].iloc[-1]} / {io_state or '?'}",
            "",
            "replica_status.io_running",
            rs.tail(1),
        )
    ]
    return _cause(
        "io-thread",
        None,
        ev,
        threads,
        received=got,
        written=wrote,
        io_state=io_state or "unknown",
        io_running=str(rs["io_running"].iloc[-1]),
    )


def _commit(tl: Timeline, appliers: pd.DataFrame, threads: tuple[int, ...]) -> LagCause | None:
    share, rows = _share(appliers, COMMIT_STATE_RE)
    flush, sync = variable(tl, "innodb_flush_log_at_trx_commit"), variable_number(tl, "sync_binlog")
    synced = [
        n
        for n, on in (
            ("innodb_flush_log_at_trx_commit=1", flush == "1"),
            (f"sync_binlog={sync:.0f}" if sync else "", bool(sync and sync >= 1)),
        )
        if on
    ]
    if share < COMMIT_SHARE or not synced:
        return None
    ev = [
        cite(
            tl,
            "the SQL thread in its commit step",
            f"{100 * share:.0f} % of snapshots",
            "",
            "processlist.state",
            rows,
        )
    ]
    ev += [Evidence(f"variable {n.split('=')[0]}", n.split("=")[1], "", "variables") for n in synced]
    per_s = ""
    for name in ("Innodb_os_log_fsyncs", "Innodb_data_fsyncs"):
        fsyncs = status(tl, name).dropna(subset=["per_s"])
        rate = float(fsyncs["per_s"].mean()) if len(fsyncs) else 0.0
        if rate > 0:  # with O_DSYNC the writes sync themselves and these counters stand still
            per_s = f" InnoDB called fsync {rate:,.0f} times a second ({name})."
            ev.append(cite(tl, name, round(rate, 1), "/s", f"mysqladmin.{name}", fsyncs))
            break
    disk = disk_wait(tl)
    if disk is not None:
        per_s += f" Its busiest device, {disk[1]}, took {disk[0]:.1f} ms per write (iostat w_await, median)."
        ev.append(cite(tl, f"{disk[1]} w_await (median)", round(disk[0], 1), "ms", "iostat.w_await", disk[2]))
    culprit = Culprit(kind="setting", id=synced[0].split("=")[0], statement=synced[0].split("=")[1])
    return _cause(
        "commit-cost", culprit, ev, threads, share=100 * share, settings=" and ".join(synced), fsyncs=per_s
    )


def _single(tl: Timeline, appliers: pd.DataFrame, threads: tuple[int, ...]) -> LagCause | None:
    workers = None
    for name in ("slave_parallel_threads", "replica_parallel_workers", "slave_parallel_workers"):
        workers = variable_number(tl, name)
        if workers is not None:
            break
    idle, _ = _share(appliers, IDLE_SQL_RE)
    if workers is None or workers > 1 or not len(appliers) or idle >= MOSTLY:
        return None
    busy = 100 * (1 - idle)
    ev = [
        Evidence(f"variable {name}", f"{workers:.0f}", "", "variables"),
        cite(tl, "the SQL thread busy", f"{busy:.0f} % of snapshots", "", "processlist.state", appliers),
    ]
    culprit = Culprit(kind="setting", id=name, statement=f"{workers:.0f}")
    return _cause("single-thread", culprit, ev, threads, name=name, workers=workers, busy=busy)


def lag_cause(
    tl: Timeline, rs: pd.DataFrame, *, source_binlog: float | None = None, received: float | None = None
) -> LagCause:
    """The cause of the lag of the replica whose timeline is ``tl``, from its ``replica_status`` rows
    ``rs`` of one channel (time order) and, when its source is in the case, ``source_binlog`` (the
    source's Binlog_bytes_written, bytes/s) and ``received`` (Read_Master_Log_Pos growth, bytes/s).
    Tries the causes in the module docstring's order; ``unknown`` when none is shown."""
    rs = rs.sort_values("ts")
    appliers = applier_rows(tl)
    threads = (
        tuple(sorted(set(pd.to_numeric(appliers["id"], errors="coerce").dropna().astype(int))))
        if len(appliers)
        else ()
    )
    readers = (
        lambda: _delay(tl, rs, appliers, threads),
        lambda: _lock(tl, threads) if threads else None,
        lambda: _mdl(tl, appliers, threads),
        lambda: _ddl(tl, appliers, threads),
        lambda: _no_key(tl, appliers, threads),
        lambda: _large(tl, rs, appliers, threads),
        lambda: _io(tl, rs, appliers, threads, source_binlog, received),
        lambda: _commit(tl, appliers, threads),
        lambda: _single(tl, appliers, threads),
    )
    for read in readers:
        found = read()
        if found is not None:
            return found
    return _cause("unknown", None, [], threads)
