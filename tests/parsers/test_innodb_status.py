"""SHOW ENGINE INNODB STATUS: MariaDB 10.11 captures made here, Percona Server 8.0 and 5.x samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers import innodb_status, registry
from parsers.base import ClockHints, ParseError
from tests.analyzer.context_captures import FIXTURES, SAMPLES


def parse(path: Path):
    with path.open() as fh:
        return innodb_status.parse(fh, member=path.name, clock=ClockHints())


def test_mariadb_idle_output_reads_its_log_and_buffer_pool() -> None:
    src = parse(FIXTURES / "mariadb-10.11_innodbstatus_idle.txt")
    row = src.main.iloc[0]
    assert src.meta["variant"] == "SHOW ENGINE INNODB STATUS, MariaDB 10.x/11.x"
    assert src.ts_is_local and src.clock == "per-line"
    text = (FIXTURES / "mariadb-10.11_innodbstatus_idle.txt").read_text()
    lsn = int(next(ln for ln in text.splitlines() if ln.startswith("Log sequence number")).split()[-1])
    chk = int(next(ln for ln in text.splitlines() if ln.startswith("Last checkpoint at")).split()[-1])
    assert row["lsn"] == lsn and row["checkpoint_age_bytes"] == lsn - chk
    assert row["semaphore_waits"] == 0 and row["transactions_active"] == 0
    assert row["pending_fsync_log"] == 0 and row["pending_writes_lru"] == 0


def test_mariadb_deadlock_names_both_transactions_and_the_victim() -> None:
    src = parse(FIXTURES / "mariadb-10.11_innodbstatus2_deadlock.txt")
    dl = src.frames["innodb_deadlock"]
    assert dl["n"].tolist() == [1, 2]
    assert dl["query"].str.startswith("UPDATE test.casebook_ctx_rows").all()
    assert dl["waits_for"].str.contains("lock_mode X locks rec but not gap waiting").all()
    assert dl["rolled_back"].tolist() == [True, False]
    assert 0 <= src.main["deadlock_age_s"].iloc[0] < 30


def test_mariadb_lock_wait_shows_a_waiting_transaction() -> None:
    src = parse(FIXTURES / "mariadb-10.11_innodbstatus1_long-trx.txt")
    trx = src.frames["innodb_transactions"]
    active = trx[trx["state"] == "ACTIVE"]
    assert len(active) == 2
    assert active["lock_wait"].tolist().count(True) == 1
    assert set(active["query"]) >= {"UPDATE test.casebook_ctx_rows SET v = v + 2 WHERE id = 1"}
    assert src.main["lock_wait_transactions"].iloc[0] == 1


@pytest.mark.samples
def test_percona_8_0_sample_reads_semaphores_pending_io_and_rows(tmp_path: Path) -> None:
    path = SAMPLES / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-innodbstatus1"
    if not path.exists():
        pytest.skip("../shared/samples is absent")
    src = parse(path)
    row = src.main.iloc[0]
    assert src.meta["variant"] == "SHOW ENGINE INNODB STATUS, MySQL/Percona 8.0+ with checkpoint age lines"
    assert (row["history_list_length"], row["checkpoint_age_bytes"], row["max_checkpoint_age_bytes"]) == (
        133,
        25100942,
        87417344,
    )
    assert (row["pending_reads"], row["pending_writes_lru"], row["pending_writes_flush_list"]) == (1, 6, 6)
    assert row["rows_read"] == 12024794 and row["os_wait_reservations"] == 157492
    sem = src.frames["innodb_semaphores"]
    assert sem["wait_file"].tolist() == ["buf0buf.cc", "buf0buf.cc"] and sem["wait_line"].tolist() == [
        3207,
        4968,
    ]
    assert sem["latch"].iloc[0].startswith("Mutex at 0x7f23342f75d0, Mutex BUF_POOL_LRU_LIST")
    assert str(src.main["ts"].iloc[0]) == "2026-04-21 16:51:42+00:00"


@pytest.mark.samples
def test_percona_5_sample_with_a_yymmdd_header() -> None:
    path = SAMPLES / "percona-toolkit/pt-secure-collect/2018_03_05_13_24_55-innodbstatus1"
    if not path.exists():
        pytest.skip("../shared/samples is absent")
    src = parse(path)
    row = src.main.iloc[0]
    assert src.meta["variant"] == "SHOW ENGINE INNODB STATUS, Percona Server 5.x"
    assert str(row["ts"]) == "2018-03-05 13:24:56+00:00"
    assert (row["history_list_length"], row["checkpoint_age_bytes"]) == (5198, 8899922)
    assert row["pending_aio_reads"] == 0 and row["os_wait_signals"] == 977828096


def test_an_escaped_mysql_batch_line_is_expanded() -> None:
    text = (FIXTURES / "mariadb-10.11_innodbstatus_idle.txt").read_text()
    body = text.split("Status: ", 1)[1]
    line = "InnoDB\t\t" + body.replace("\n", "\\n")
    src = innodb_status.parse([line], member="b", clock=ClockHints())
    assert (
        src.main["lsn"].iloc[0] == parse(FIXTURES / "mariadb-10.11_innodbstatus_idle.txt").main["lsn"].iloc[0]
    )


def test_a_truncated_output_warns_with_its_line() -> None:
    lines = (FIXTURES / "mariadb-10.11_innodbstatus_idle.txt").read_text().splitlines()[:20]
    src = innodb_status.parse(lines, member="t", clock=ClockHints())
    assert [(w.code, w.line_no) for w in src.warnings] == [("truncated", 6)]


def test_not_a_monitor_output_raises() -> None:
    with pytest.raises(ParseError, match="t line 1: no 'INNODB MONITOR OUTPUT' header"):
        innodb_status.parse(["hello"], member="t", clock=ClockHints())


def test_detection_picks_the_monitor() -> None:
    head = (FIXTURES / "mariadb-10.11_innodbstatus_idle.txt").read_text().splitlines()[:60]
    assert registry.detect(head).FORMAT == "innodb_status"
