"""pt-stalk's -transactions, -lock-waits and -slave-status (MariaDB 10.11 made here; Percona 8.0 samples)."""

from __future__ import annotations

import pandas as pd
import pytest

from parsers import innodb_trx, lock_waits, registry, slave_status
from parsers.base import ClockHints, ParseError
from tests.analyzer.context_captures import FIXTURES, SAMPLES

HINTS = ClockHints(start_local=pd.Timestamp("2026-11-25 17:53:20"), interval_s=1.0)


def lines(name: str) -> list[str]:
    return (FIXTURES / name).read_text().splitlines(keepends=True)


def test_transactions_give_seconds_active_from_the_ts_wall_clock() -> None:
    src = innodb_trx.parse(lines("mariadb-10.11_transactions_long-trx.txt"), member="t", clock=HINTS)
    trx = src.main
    assert src.clock == "ts-marker" and src.meta["snapshots"] == 6
    waiting = trx[trx["state"] == "LOCK WAIT"]
    assert len(waiting) == 6 and waiting["wait_s"].notna().all()
    holder = trx[trx["state"] == "RUNNING"]
    assert holder["active_s"].max() >= 180 and holder["query"].str.contains("SLEEP").all()
    assert len(src.frames["innodb_lock_waits_raw"]) == 6  # INNODB_LOCK_WAITS rows, one per snapshot


def test_lock_waits_read_the_summary_and_the_detail() -> None:
    text = lines("mariadb-10.11_lock-waits_long-trx.txt")
    src = lock_waits.parse(text, member="l", clock=HINTS)
    assert src.meta["snapshots"] == sum(ln.startswith("TS ") for ln in text) == 6
    waits = sum("waiting_trx_id:" in ln for ln in text)  # one snapshot can fall between two lock requests
    assert waits >= 5 and len(src.main) == waits
    assert (src.main["waiting_query"] == "UPDATE test.casebook_ctx_rows SET v = v + 2 WHERE id = 1").all()
    assert src.main["blocking_query"].str.fullmatch(r"SELECT SLEEP\(\d+\)").all()
    assert src.frames["lock_waits_summary"]["num_waiters"].tolist() == [1.0] * sum(
        "num_waiters:" in ln for ln in text
    )


def test_slave_status_of_a_server_that_is_not_a_replica_is_read_as_no_rows() -> None:
    src = slave_status.parse(lines("mariadb-10.11_slave-status_not-replica.txt"), member="s", clock=HINTS)
    assert src.meta["replica"] is False and len(src.main) == 0 and src.meta["snapshots"] == 3
    assert src.clock == "inferred"


def test_slave_status_of_a_stopped_replica() -> None:
    src = slave_status.parse(lines("mariadb-10.11_slave-status_replica-stopped.txt"), member="s", clock=HINTS)
    rows = src.main
    assert len(rows) == 3 and src.clock == "ts-marker"
    assert rows["io_running"].tolist() == ["No"] * 3 and rows["sql_running"].tolist() == ["Yes"] * 3
    assert rows["seconds_behind"].isna().all()
    assert rows["last_io_error"].str.contains("error 1236").all()


def test_replica_status_8_0_names() -> None:
    text = [
        "*************************** 1. row ***************************",
        "             Replica_IO_Running: Yes",
        "            Replica_SQL_Running: Yes",
        "          Seconds_Behind_Source: 420",
        "                   Channel_Name: ",
    ]
    src = slave_status.parse(text, member="s", clock=HINTS)
    assert src.main[["io_running", "seconds_behind"]].values.tolist() == [["Yes", 420.0]]
    assert src.meta["variant"].startswith("SHOW REPLICA STATUS")


def test_a_non_number_in_a_counter_column_names_its_line() -> None:
    text = [
        "*************************** 1. row ***************************",
        "             trx_id: 9",
        "          trx_state: RUNNING",
        "trx_mysql_thread_id: many",
    ]
    with pytest.raises(ParseError, match="t line 4: trx_mysql_thread_id: 'many' is not a number"):
        innodb_trx.parse(text, member="t", clock=HINTS)


def test_text_before_any_row_raises_with_the_line() -> None:
    with pytest.raises(ParseError, match="x line 2: not INNODB_TRX"):
        innodb_trx.parse(["", "hello world"], member="x", clock=HINTS)


def test_detection_tells_the_three_apart() -> None:
    for name, fmt in (
        ("mariadb-10.11_transactions_long-trx.txt", "innodb_trx"),
        ("mariadb-10.11_lock-waits_long-trx.txt", "lock_waits"),
        ("mariadb-10.11_slave-status_not-replica.txt", "slave_status"),
    ):
        assert registry.detect([ln.rstrip("\n") for ln in lines(name)][:60]).FORMAT == fmt


@pytest.mark.samples
def test_percona_8_0_transactions_sample() -> None:
    path = SAMPLES / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-transactions"
    if not path.exists():
        pytest.skip("../shared/samples is absent")
    with path.open() as fh:
        src = innodb_trx.parse(fh, member=path.name, clock=HINTS)
    assert src.meta["snapshots"] == 30 and len(src.main) == 312
    first = src.main.iloc[0]
    assert (first["trx_id"], first["thread_id"], first["active_s"]) == ("68943", 1112.0, 1.0)
    assert first["query"] == "UPDATE sbtest3 SET k=k+1 WHERE id=792023"


@pytest.mark.samples
@pytest.mark.parametrize(
    "name", ["example1/2026_04_21_16_43_19-slave-status", "example2/2026_04_21_16_51_41-slave-status"]
)
def test_percona_8_0_slave_status_samples_are_not_replicas(name: str) -> None:
    path = SAMPLES / "My-gather/pt-stalk" / name
    if not path.exists():
        pytest.skip("../shared/samples is absent")
    with path.open() as fh:
        src = slave_status.parse(fh, member=path.name, clock=HINTS)
    assert src.meta["replica"] is False and src.meta["snapshots"] == 30


PS_LOCKS = FIXTURES.parent / "ps-locks" / "2026_11_27_16_35_06-ps-locks-transactions"


def test_ps_locks_read_the_metadata_locks_one_snapshot_per_echoed_query() -> None:
    from parsers import ps_locks

    text = PS_LOCKS.read_text().splitlines(keepends=True)
    assert registry.detect([t.rstrip("\n") for t in text[:60]]) is ps_locks
    src = ps_locks.parse(text, member="p", clock=HINTS)
    locks = src.frames["pfs_metadata_locks"]
    assert src.meta["snapshots"] == 3 and src.warnings == []
    assert len(locks) == 21  # 7 locks a snapshot: the two sessions', then the collector's own two
    pending = locks[locks["lock_status"] == "PENDING"]
    assert pending[["processlist_id", "object_name", "lock_type"]].drop_duplicates().values.tolist() == [
        [6.0, "orders", "EXCLUSIVE"]
    ]
    first = locks.iloc[0]
    assert (first["line_no"], first["line_end"], first["lock_type"]) == (4, 15, "SHARED_READ")


def test_ps_locks_with_performance_schema_off_is_an_empty_capture() -> None:
    from parsers import ps_locks

    head = ["Performance schema is not enabled"]
    assert ps_locks.sniff(head)
    assert len(ps_locks.parse(head * 3, member="p", clock=HINTS).frames["pfs_metadata_locks"]) == 0


#: The echoed statement of scripts/collect.sh's ps-locks.txt (pt-stalk's metadata-locks query).
ECHOED_PS_LOCKS = (
    "select t.processlist_id, ml.* from performance_schema.metadata_locks ml join performance_schema.threads"
    " t on (ml.owner_thread_id=t.thread_id)\\G\n"
)


def _collector_lock(pid: int, lock_type: str, status: str) -> str:
    """One ``\\G`` row of metadata_locks as the collector's mariadb client prints it (MariaDB 10.11)."""
    keys = ("processlist_id", "OBJECT_TYPE", "OBJECT_SCHEMA", "OBJECT_NAME", "OBJECT_INSTANCE_BEGIN")
    keys += ("LOCK_TYPE", "LOCK_DURATION", "LOCK_STATUS", "SOURCE", "OWNER_THREAD_ID", "OWNER_EVENT_ID")
    values = (pid, "TABLE", "shop", "t", 1970324839923712, lock_type, "TRANSACTION", status, "", pid + 9, 1)
    rows = "".join(f"{k:>21}: {v}\n" for k, v in zip(keys, values, strict=True))
    return "*************************** 1. row ***************************\n" + rows


#: scripts/collect.sh's ps-locks.txt: a TS line and the echoed statement every interval, then the rows;
#: at 17:53:22 nothing held a metadata lock (no rows).
COLLECTOR_PS_LOCKS = (
    "TS 1795629201.101000000 2026-11-25 17:53:21\n"
    + ECHOED_PS_LOCKS
    + _collector_lock(6, "SHARED_READ", "GRANTED")
    + "TS 1795629202.102000000 2026-11-25 17:53:22\n"
    + ECHOED_PS_LOCKS
    + "TS 1795629203.103000000 2026-11-25 17:53:23\n"
    + ECHOED_PS_LOCKS
    + _collector_lock(7, "EXCLUSIVE", "PENDING")
)


def test_ps_locks_of_the_collector_one_snapshot_per_ts_line() -> None:
    from parsers import ps_locks

    text = COLLECTOR_PS_LOCKS.splitlines(keepends=True)
    assert registry.detect([t.rstrip("\n") for t in text]) is ps_locks
    src = ps_locks.parse(text, member="ps-locks.txt", clock=HINTS)
    locks = src.frames["pfs_metadata_locks"]
    assert (src.clock, src.meta["snapshots"], src.warnings) == ("ts-marker", 3, [])
    assert locks["processlist_id"].tolist() == [6.0, 7.0]
    assert locks["ts"].dt.strftime("%H:%M:%S").tolist() == ["17:53:21", "17:53:23"]
