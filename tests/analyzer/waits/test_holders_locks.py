"""analyzer/waits/holders/locks.py and purge.py: the holders of row locks, table locks and purge's read
view, read from pt-stalk-shaped captures (``-lock-waits``, ``-transactions``, ``-processlist``, ``-mysqladmin``)
parsed by the real parsers, and on the fixture bundles."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pandas as pd

from analyzer.rules.sessions import lock_waits as lock_waits_rule
from analyzer.timeline.timeline import Timeline
from analyzer.waits.elimination import only_session_not_waiting
from analyzer.waits.holders import HOLDER_MIN_S, holders
from analyzer.waits.holders.locks import (
    global_holder,
    global_read_lock,
    metadata_holder,
    metadata_lock,
    row_lock,
    table_lock,
)
from analyzer.waits.holders.purge import purge
from analyzer.waits.model import Resource
from analyzer.waits.read import waits
from parsers import innodb_trx, lock_waits, mysqladmin, processlist
from parsers.base import ClockHints
from tests.analyzer.captures import EPOCH0, START, mysqladmin_ext_text, processlist_text
from tests.analyzer.waits.bundles import BUNDLES, timelines

HINTS = ClockHints(start_local=START, interval_s=1.0)
MEMBER = "2026_04_21_16_51_41-"


def _ts(i: int) -> str:
    return f"TS {EPOCH0 + 2 + i}.009325313 {(START + pd.Timedelta(seconds=2 + i)):%Y-%m-%d %H:%M:%S}"


def _lock_waits_text(snapshots: list[list[tuple[int, int, int, int]]]) -> str:
    """Per snapshot, rows of (waiting thread, wait_time s, blocking thread, idle_in_trx s), in the
    layout of pt-stalk 3.2.1's ``-lock-waits`` detail query (MariaDB 10.11)."""
    out: list[str] = []
    for i, rows in enumerate(snapshots):
        out.append(_ts(i))
        for n, (waiting, wait, blocking, idle) in enumerate(rows, start=1):
            values = {
                "waiting_trx_id": 9000 + waiting,
                "waiting_thread": waiting,
                "wait_time": wait,
                "waiting_query": "UPDATE sbtest1 SET k=k+1 WHERE id=7",
                "waiting_table_lock": "`sb`.`sbtest1`",
                "blocking_trx_id": 8000 + blocking,
                "blocking_thread": blocking,
                "blocking_host": "app1",
                "blocking_port": 50928,
                "idle_in_trx": idle,
                "blocking_query": "NULL",
            }
            out.append(f"*************************** {n}. row ***************************")
            out += [f"{key:>18}: {value}" for key, value in values.items()]
    return "\n".join(out) + "\n"


def _trx_text(snapshots: list[list[tuple[str, int, str, int, str]]]) -> str:
    """Per snapshot, INNODB_TRX rows of (trx_id, thread, state, age s, isolation)."""
    out: list[str] = []
    for i, rows in enumerate(snapshots):
        out.append(_ts(i))
        now = START + pd.Timedelta(seconds=2 + i)
        for n, (trx, thread, state, age, isolation) in enumerate(rows, start=1):
            values = {
                "trx_id": trx,
                "trx_state": state,
                "trx_started": f"{now - pd.Timedelta(seconds=age):%Y-%m-%d %H:%M:%S}",
                "trx_mysql_thread_id": thread,
                "trx_query": "NULL",
                "trx_isolation_level": isolation,
            }
            out.append(f"*************************** {n}. row ***************************")
            out += [f"{key:>26}: {value}" for key, value in values.items()]
    return "\n".join(out) + "\n"


def _timeline(
    *,
    lw: str | None = None,
    trx: str | None = None,
    pl: str | None = None,
    ma: str | None = None,
    frames: dict[str, pd.DataFrame] | None = None,
) -> Timeline:
    sources = []
    for text, module, name in (
        (lw, lock_waits, "lock-waits"),
        (trx, innodb_trx, "transactions"),
        (pl, processlist, "processlist"),
        (ma, mysqladmin, "mysqladmin"),
    ):
        if text is not None:
            sources.append(module.parse(text.splitlines(keepends=True), member=MEMBER + name, clock=HINTS))
    tl = Timeline.from_sources(sources, ncpu=4)
    return Timeline(frames={**tl.frames, **(frames or {})}, ncpu=4) if frames else tl


def _waiting(tl: Timeline) -> pd.DataFrame:
    return waits(tl)


def test_the_same_transaction_blocking_across_snapshots_is_named_with_that_transactions_age() -> None:
    # session 5 blocks sessions 6 and 7 for 6 s; its transaction 8005 is 40 s old
    lw = _lock_waits_text([[(6, 1 + i, 5, 0), (7, 1 + i, 5, 0)] for i in range(6)])
    trx = _trx_text([[("8005", 5, "RUNNING", 40 + i, "REPEATABLE READ")] for i in range(6)])
    tl = _timeline(lw=lw, trx=trx)
    [h] = row_lock(tl, _waiting(tl))
    assert h.named and (h.holder.kind, h.holder.id) == ("session", "5")
    assert h.held_s >= 6 and round(h.age_s) == 45  # the transaction's own age, at its last sighting
    assert h.waiters == 2 and "KILL 5;" in h.fix and "transaction 8005" in h.shown_by


def test_a_blocker_seen_under_two_seconds_is_never_a_holder() -> None:
    # a deadlock storm: every second another session blocks the others for under a second, and
    # session 13 comes back in a new transaction each time (its session is old, its transactions not)
    blockers = [13, 14, 13, 15, 13, 16]
    lw = _lock_waits_text([[(w, 0, b, 0) for w in (13, 14, 15, 16, 17) if w != b] for b in blockers])
    trx = _trx_text([[(str(7000 + i), b, "RUNNING", 0, "REPEATABLE READ")] for i, b in enumerate(blockers)])
    tl = _timeline(lw=lw, trx=trx, ma=mysqladmin_ext_text(6, per_s={"Innodb_deadlocks": 45}))
    found = row_lock(tl, _waiting(tl))
    assert [h.holder for h in found] == [None] and not found[0].named
    c = found[0].contention
    assert c.startswith("contention among 5 sessions on `sb`.`sbtest1`: 4 sessions took turns blocking"), c
    assert f"none shown holding {HOLDER_MIN_S:.0f} s" in c and "update sbtest? set k=k+? where id=?" in c


def test_the_deadlock_rate_is_quoted_when_mysqladmin_has_the_counter() -> None:
    lw = _lock_waits_text([[(w, 0, b, 0) for w in (13, 14, 15) if w != b] for b in (13, 14, 15, 13)])
    ma = mysqladmin.parse(
        mysqladmin_ext_text(4, per_s={"Innodb_deadlocks": 45}).splitlines(keepends=True),
        member=MEMBER + "mysqladmin",
        clock=HINTS,
    )
    tl = _timeline(lw=lw, frames={"mysqladmin": ma.frames["mysqladmin"]})
    [h] = row_lock(tl, _waiting(tl))
    assert "45 deadlocks per second" in h.contention
    assert any(e.series == "mysqladmin.Innodb_deadlocks" and e.value == 45 for e in h.evidence)


def test_a_waiter_queued_long_proves_the_hold_without_a_transaction_list() -> None:
    # one snapshot only, but a waiter has waited 9 s on session 5: it held the row that long
    tl = _timeline(lw=_lock_waits_text([[(6, 9, 5, 0), (7, 2, 5, 0)]]))
    [h] = row_lock(tl, _waiting(tl))
    assert h.named and h.holder.id == "5" and h.held_s == 9


def test_a_table_lock_is_held_by_the_session_that_ran_lock_tables() -> None:
    locker = ("app", "Sleep", 30, "", "LOCK TABLES shop.orders WRITE")
    waiting = [("app", "Query", 5, "Waiting for table level lock", "UPDATE shop.orders SET n=1")] * 3
    tl = _timeline(pl=processlist_text([[locker, *waiting]] * 6))
    [h] = table_lock(tl, _waiting(tl))
    assert h.named and h.holder.id == "1001" and "UNLOCK TABLES" in h.fix


def _purge_frames(hll: list[int]) -> dict[str, pd.DataFrame]:
    ts = [pd.Timestamp(START, tz="UTC") + pd.Timedelta(seconds=2 + 20 * i) for i in range(len(hll))]
    st = pd.DataFrame(
        {
            "ts": ts,
            "line_no": [1] * len(ts),
            "line_end": [2] * len(ts),
            "history_list_length": [float(h) for h in hll],
            "member": MEMBER + "innodbstatus1",
        }
    )
    growth = [float("nan")] + [(b - a) / 20 for a, b in zip(hll, hll[1:], strict=False)]
    rates = pd.DataFrame(
        {"ts": ts, "line_no": 1, "history_growth_per_s": growth, "member": MEMBER + "innodbstatus1"}
    )
    return {"innodb_status": st, "innodb_rates": rates}


def test_purge_is_held_by_the_oldest_read_view_of_an_idle_session() -> None:
    idle = ("app", "Sleep", 84, "", "NULL")
    busy = [("app", "Query", 0, "Updating", "UPDATE sb.t SET k=k+1 WHERE id=1")] * 2
    trx = _trx_text(
        [
            [
                ("5001", 1001, "RUNNING", 80 + i, "REPEATABLE READ"),
                (str(6000 + i), 1002, "RUNNING", 0, "REPEATABLE READ"),
            ]
            for i in range(3)
        ]
    )
    tl = _timeline(
        trx=trx, pl=processlist_text([[idle, *busy]] * 3), frames=_purge_frames([260_000, 540_000, 820_000])
    )
    [h] = purge(tl, _waiting(tl))
    assert h.named and (h.holder.kind, h.holder.id, h.holder.statement) == (
        "session",
        "1001",
        "idle in transaction",
    )
    assert h.fix.startswith("End the session holding the oldest read view: KILL 1001;")
    assert "transaction 5001" in h.shown_by and h.age_s == 82


def test_purge_behind_without_an_old_read_view_names_no_one() -> None:
    # the only old transaction runs READ COMMITTED: it holds no read view between its statements
    trx = _trx_text([[("5001", 1001, "RUNNING", 80 + i, "READ COMMITTED")] for i in range(3)])
    tl = _timeline(trx=trx, frames=_purge_frames([260_000, 540_000, 820_000]))
    [h] = purge(tl, _waiting(tl))
    assert h.holder is None and "no transaction holding a read view older than" in h.contention


def test_purge_is_read_even_when_no_session_waits_and_not_when_purge_keeps_up() -> None:
    trx = _trx_text([[("5001", 1001, "RUNNING", 80 + i, "REPEATABLE READ")] for i in range(3)])
    behind = _timeline(trx=trx, frames=_purge_frames([260_000, 540_000, 820_000]))
    steady = _timeline(trx=trx, frames=_purge_frames([900, 950, 920]))
    assert [h.resource for h in holders(behind, _waiting(behind))] == [Resource.PURGE]
    assert holders(steady, _waiting(steady)) == []


def test_the_fixture_bundles_name_the_holders_a_senior_engineer_would() -> None:
    got = {}
    for name, host in (
        ("culprit-rowlock", "vm"),
        ("culprit-mdl", "vm"),
        ("culprit-ftwrl", "vm"),
        ("cluster-lag-lock", "db-b"),
        ("cluster-galera-desync", "db-a"),
    ):
        tl = timelines(BUNDLES / f"{name}.tar.gz")[host]
        got[name] = [(h.resource.value, h.holder.id if h.named else None) for h in holders(tl, waits(tl))]
    assert got == {
        "culprit-rowlock": [("row lock", "5")],  # idle in transaction 29, 20 waiters
        "culprit-mdl": [("metadata lock", "119")],  # its open transaction ahead of the ALTER
        "culprit-ftwrl": [("global read or backup lock", "220")],  # mariadb-dump's session
        "cluster-lag-lock": [("row lock", "11")],  # blocks the replica's SQL thread for 34 s
        # the writers' certification conflicts (no single holder: two nodes write the same rows), and
        # passing row-lock conflicts under a second: contention
        "cluster-galera-desync": [("Galera certification", None), ("row lock", None)],
    }


def test_sessions_in_get_lock_without_a_lock_table_name_no_holder() -> None:
    idle = ("batch", "Sleep", 15, "", "NULL")
    waiting = [("app", "Query", 13, "User lock", "SELECT GET_LOCK('nightly_job', 600)")] * 6
    tl = _timeline(pl=processlist_text([[idle, *waiting]] * 6))
    [h] = metadata_lock(tl, _waiting(tl))
    assert h.holder is None and "GET_LOCK()" in h.contention and "IS_USED_LOCK" in h.fix


def _backup_snapshots(idle: list[tuple[str, str, int, str, str]], n: int = 6) -> str:
    """``n`` snapshots of 6 sessions waiting for the backup lock (Time 13 s and growing), an applier
    (``system user``), the collector's own SHOW FULL PROCESSLIST, and the ``idle`` sessions."""
    return processlist_text(
        [
            [
                *[(u, c, t + i, s, q) for u, c, t, s, q in idle],
                ("system user", "Sleep", 16 + i, "After apply log event", "NULL"),
                *[("app", "Query", 13 + i, "Waiting for backup lock", "UPDATE sbtest1 SET k=k+1 WHERE id=7")]
                * 6,
                ("root", "Query", 0, "starting", "SHOW FULL PROCESSLIST"),
            ]
            for i in range(n)
        ]
    )


def test_the_only_client_session_not_waiting_holds_the_global_read_lock() -> None:
    # FLUSH TABLES WITH READ LOCK ran and its session went idle: no statement shows it, elimination does
    tl = _timeline(pl=_backup_snapshots([("backup", "Sleep", 15, "", "NULL")]))
    [h] = global_read_lock(tl, _waiting(tl))
    assert h.named and (h.holder.kind, h.holder.id, h.holder.user) == ("session", "1001", "backup")
    assert h.shown_by.endswith(
        "the only client session not waiting, idle since before the first wait (Time 20 s >= the longest "
        "wait 18 s), in 6 snapshots"
    ), h.shown_by
    assert "KILL 1001;" in h.fix and "idle in its transaction" not in h.fix and h.held_s == 5


def test_two_idle_sessions_or_a_younger_one_or_no_counts_name_no_holder() -> None:
    two = _timeline(
        pl=_backup_snapshots([("backup", "Sleep", 15, "", "NULL"), ("report", "Sleep", 40, "", "NULL")])
    )
    younger = _timeline(pl=_backup_snapshots([("backup", "Sleep", 2, "", "NULL")]))
    counted = _timeline(pl=_backup_snapshots([("backup", "Sleep", 15, "", "NULL")]))
    uncounted = Timeline(
        frames={k: v for k, v in counted.frames.items() if k != "processlist_sessions"}, ncpu=4
    )
    brief = _timeline(pl=_backup_snapshots([("backup", "Sleep", 15, "", "NULL")], n=2))
    for tl in (two, younger, uncounted, brief):
        assert only_session_not_waiting(tl, _waiting(tl), Resource.GLOBAL_READ_LOCK) is None
        assert not any(h.named for h in global_read_lock(tl, _waiting(tl)))


def test_a_table_lock_whose_statement_is_gone_is_held_by_the_only_idle_session() -> None:
    locker = ("batch", "Sleep", 30, "", "NULL")
    waiting = [("app", "Query", 5, "Waiting for table level lock", "UPDATE shop.orders SET n=1")] * 3
    tl = _timeline(pl=processlist_text([[locker, *waiting]] * 6))
    [h] = table_lock(tl, _waiting(tl))
    assert h.named and h.holder.id == "1001" and "only client session not waiting" in h.shown_by
    assert "KILL 1001;" in h.fix and "UNLOCK TABLES" in h.fix
    # it holds a table lock, not a transaction the bundle shows: idle, never "idle in transaction"
    assert h.holder.statement == "idle" and "idle in" not in h.fix
    assert "It is idle (Command Sleep, Time 30 s), holding the lock it took" in h.fix


def test_an_idle_holder_is_in_a_transaction_only_when_a_transaction_list_shows_it() -> None:
    # the global read lock held by elimination; with -transactions listing session 1001's transaction
    # it is idle in that transaction, without it only idle
    trx = _trx_text([[("5001", 1001, "RUNNING", 20 + i, "REPEATABLE READ")] for i in range(6)])
    listed = _timeline(pl=_backup_snapshots([("backup", "Sleep", 15, "", "NULL")]), trx=trx)
    alone = _timeline(pl=_backup_snapshots([("backup", "Sleep", 15, "", "NULL")]))
    [h] = global_read_lock(listed, _waiting(listed))
    assert h.named and h.holder.id == "1001" and h.holder.statement == "idle in transaction"
    [h] = global_read_lock(alone, _waiting(alone))
    assert h.named and h.holder.id == "1001" and h.holder.statement == "idle"
    assert "no transaction list shows a transaction of it open" in h.fix


def test_the_longest_wait_cites_the_waiters_processlist_row() -> None:
    # waits-lock-tables: session 8 holds by elimination; the longest waiter (Time 27 s) in the last
    # snapshot is cited at its own row of -processlist, where the case page links it
    tl = timelines(BUNDLES / "waits-lock-tables.tar.gz")["db-a"]
    [h] = metadata_lock(tl, waits(tl))
    [ev] = [e for e in h.evidence if e.label == "the longest wait for it (Time, s)"]
    assert ev.value == 27 and ev.member is not None and ev.member.endswith("-processlist")
    assert ev.lines is not None and 0 < ev.lines[1] - ev.lines[0] < 12, ev.lines
    first, last = ev.lines
    text = "".join(_member_lines(BUNDLES / "waits-lock-tables.tar.gz", ev.member)[first - 1 : last])
    assert "Waiting for table metadata lock" in text and "Time: 27" in text, text


def _member_lines(path: Path, member: str) -> list[str]:
    """The lines of ``member`` (as the timeline names it: its path inside the archive) of ``path``."""
    with tarfile.open(path) as tar:
        [name] = [n for n in tar.getnames() if n.endswith(member)]
        data = tar.extractfile(name)
        assert data is not None
        return data.read().decode().splitlines(keepends=True)


def test_lock_waits_and_sessions_waiting_take_the_metadata_lock_holder_from_one_reader() -> None:
    # metadata_holder is the one reader: the rule lock-waits (its blocker) and the wait model's
    # sessions-waiting (its holding) name the same session, shown the same way
    for name, host, holder in (
        ("waits-lock-tables", "db-a", 8),  # the only client session not waiting
        ("waits-ddl-long-read", "db-a", 9),  # its transaction ahead of the ALTER
        ("culprit-mdl", "vm", 119),  # its open transaction ahead of the ALTER
    ):
        tl = timelines(BUNDLES / f"{name}.tar.gz")[host]
        b = metadata_holder(tl)
        assert b is not None and b.thread == holder and b.shown, (name, b)
        [h] = metadata_lock(tl, waits(tl))
        assert h.holder is not None and h.holder.id == str(holder) and h.shown_by.endswith(b.shown), name
        finding = lock_waits_rule(tl)
        assert finding is not None and finding.culprit is not None, name
        assert finding.culprit.id == str(holder) and f"behind session {holder} " in finding.title, name
        assert finding.culprit.evidence == h.holder.evidence, name


def test_a_statement_on_another_table_is_not_shown_holding_the_ddls_metadata_lock() -> None:
    # the only client session not waiting runs a SELECT on invoices while the ALTER of orders waits:
    # nothing shows it holding orders' lock, so both rules name no holder (a candidate only)
    snapshot = [
        ("app", "Query", 312, "Sending data", "SELECT COUNT(*) FROM invoices"),
        ("dba", "Query", 40, "Waiting for table metadata lock", "ALTER TABLE orders ADD COLUMN note TEXT"),
        *[("app", "Query", 30, "Waiting for table metadata lock", "SELECT * FROM orders WHERE id = 7")] * 5,
        ("root", "Query", 0, "starting", "SHOW FULL PROCESSLIST"),
    ]
    tl = _timeline(pl=processlist_text([snapshot] * 3))
    assert only_session_not_waiting(tl, _waiting(tl), Resource.METADATA_LOCK) is not None
    [h] = metadata_lock(tl, _waiting(tl))
    assert h.holder is None and "session 1001, a candidate" in h.contention, h
    finding = lock_waits_rule(tl)
    assert finding is not None and finding.culprit is None


def test_lock_waits_and_sessions_waiting_take_the_global_lock_holder_from_one_reader() -> None:
    # global_holder is the one reader of the global read / backup lock's holder: the rule lock-waits
    # (its blocker) and the wait model's sessions-waiting (its holding) name the same session, with
    # the same evidence and the same KILL
    for name, host, holder in (
        ("waits-galera-ftwrl", "db-b", 15),  # idle after FLUSH TABLES WITH READ LOCK: by elimination
        ("culprit-ftwrl", "vm", 220),  # mariadb-dump's read in the processlist, the dump in ps
    ):
        tl = timelines(BUNDLES / f"{name}.tar.gz")[host]
        b = global_holder(tl)
        assert b is not None and b.thread == holder and b.shown, (name, b)
        [h] = global_read_lock(tl, waits(tl))
        assert h.named and h.holder is not None and h.holder.id == str(holder), name
        assert h.shown_by.endswith(b.shown), (name, h.shown_by)
        finding = lock_waits_rule(tl)
        assert finding is not None and finding.culprit is not None, name
        assert finding.culprit.id == str(holder) and f"behind session {holder} " in finding.title, name
        assert finding.culprit.evidence == h.holder.evidence and h.holder.evidence, name
        assert f"KILL {holder};" in h.fix and f"KILL {holder};" in finding.recommendation, name
    galera = global_holder(timelines(BUNDLES / "waits-galera-ftwrl.tar.gz")["db-b"])
    assert galera is not None and galera.statement == "idle"
    assert galera.shown.startswith("the only client session not waiting, idle since before the first wait")


def test_a_session_running_a_statement_is_not_shown_holding_the_global_lock() -> None:
    # the only client session not waiting runs a SELECT (no FLUSH TABLES WITH READ LOCK, LOCK INSTANCE
    # FOR BACKUP or BACKUP STAGE; no lock table, no backup client): nothing shows it holding the
    # backup lock, so neither rule names a holder nor writes a KILL
    tl = _timeline(
        pl=_backup_snapshots([("app", "Query", 40, "Sending data", "SELECT COUNT(*) FROM invoices")])
    )
    assert only_session_not_waiting(tl, _waiting(tl), Resource.GLOBAL_READ_LOCK) is not None
    b = global_holder(tl, _waiting(tl))
    assert b is not None and b.thread is None and b.process is None  # session 1001 runs the SELECT
    [h] = global_read_lock(tl, _waiting(tl))
    assert not h.named and h.holder is None and h.fix == ""
    assert h.contention is not None and "the bundle does not show who holds the lock" in h.contention
    finding = lock_waits_rule(tl)
    # the rule's general advice only ("KILL <blocking Id>;"), no session's KILL
    assert finding is not None and finding.culprit is None and "KILL 1001" not in finding.recommendation
    assert "does not show who holds the lock" in finding.explanation
