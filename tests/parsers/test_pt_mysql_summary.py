"""parsers.pt_mysql_summary: pt-mysql-summary's report (percona-toolkit 3.2.1) on real MariaDB 10.11
servers: one without replication, a source and its replica."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers import pt_mysql_summary, registry
from parsers.base import ClockHints, ParseError

ALONE = "summaries/pt-mysql-summary-3.2.1_mariadb-10.11.out"
SOURCE = "summaries/pt-mysql-summary-3.2.1_mariadb-10.11_source.out"
REPLICA = "summaries/pt-mysql-summary-3.2.1_mariadb-10.11_replica.out"


def _parse(path: Path):
    with path.open() as fh:
        return pt_mysql_summary.parse(fh, member=path.name, clock=ClockHints())


@pytest.fixture
def source(fixtures: Path):
    return _parse(fixtures / SOURCE)


@pytest.mark.parametrize("name", [ALONE, SOURCE, REPLICA])
def test_it_is_detected_by_its_header(fixtures: Path, name: str) -> None:
    head = (fixtures / name).read_text().splitlines()[: registry.HEAD_LINES]
    assert registry.detect(head) is pt_mysql_summary
    assert not pt_mysql_summary.sniff(["# Percona Toolkit System Summary Report ####"])


@pytest.mark.parametrize(
    ("name", "role", "line", "replicas"),
    [(ALONE, "none", 19, 0), (SOURCE, "source", 23, 1), (REPLICA, "replica", 19, 0)],
)
def test_the_replication_role_and_its_line(
    fixtures: Path, name: str, role: str, line: int, replicas: int
) -> None:
    src = _parse(fixtures / name)
    assert (src.meta["role"], src.meta["role_line"], src.meta["replicas"]) == (role, line, replicas)


def test_the_server_facts_of_the_header(source) -> None:
    meta = source.meta
    assert (meta["host"], meta["port"], meta["version"]) == ("vm", "3317", "10.11.19-MariaDB-0+deb12u1-log")
    assert meta["version_comment"] == "Debian 12" and meta["report_time"] == "2026-12-07T02:18:09Z"
    assert meta["variant"] == "pt-mysql-summary, MariaDB 10.11.19, source"
    assert source.samples == 0 and source.warnings == []


def test_every_variable_the_report_prints_by_its_name_with_its_line(source) -> None:
    rows = source.frames["server_variables"]
    got = {
        name: (value, shown, line)
        for line, name, value, shown in rows[["line_no", "name", "value", "shown"]].values
    }
    assert got == {
        "hostname": ("vm", "vm", 16),
        "version": ("10.11.19-MariaDB-0+deb12u1-log", "10.11.19-MariaDB-0+deb12u1-log Debian 12", 17),
        "version_comment": ("Debian 12", "10.11.19-MariaDB-0+deb12u1-log Debian 12", 17),
        "datadir": ("/tmp/sumrepl/src/", "/tmp/sumrepl/src/", 21),
        "port": ("3317", "3317", 13),
        "table_open_cache": ("64", "64", 160),
        "query_cache_type": ("OFF", "OFF", 179),
        "query_cache_size": ("1048576", "1.0M", 180),
        "key_buffer_size": ("134217728", "128.0M", 198),
        "old_passwords": ("OFF", "OFF", 203),
        "log_bin": ("ON", "", 207),
        "binlog_format": ("ROW", "ROW", 210),
        "expire_logs_days": ("0.000000", "0.000000", 211),
        "sync_binlog": ("1", "1", 212),
        "server_id": ("1", "1", 213),
        "auto_increment_increment": ("1", "1/1", 217),
        "auto_increment_offset": ("1", "1/1", 217),
        "default_storage_engine": ("InnoDB", "InnoDB", 218),
        "flush_time": ("0", "0", 219),
        "sql_mode": (
            "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION",
            "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION",
            222,
        ),
        "join_buffer_size": ("262144", "256k", 223),
        "sort_buffer_size": ("2097152", "2M", 224),
        "read_buffer_size": ("131072", "128k", 225),
        "read_rnd_buffer_size": ("262144", "256k", 226),
        "max_heap_table_size": ("16777216", "16M", 228),
        "tmp_table_size": ("16777216", "16M", 229),
        "max_allowed_packet": ("16777216", "16M", 230),
        "thread_stack": ("299008", "292k", 231),
        "log_error": ("/tmp/sumrepl/src.err", "/tmp/sumrepl/src.err", 233),
        "log_warnings": ("2", "2", 234),
        "log_queries_not_using_indexes": ("OFF", "OFF", 236),
        "log_slave_updates": ("OFF", "OFF", 237),
    }
    assert source.meta["summary_variables"]["table_open_cache"] == "64"
    assert source.meta["variable_lines"]["table_open_cache"] == 160


def test_absent_variables_are_not_read_as_values(fixtures: Path) -> None:
    """``bulk_insert_buffer`` (no such variable: ``0.00``), ``log`` and ``log_slow_queries`` (gone
    from the server: empty), and a replica's empty Binary Logging section."""
    got = _parse(fixtures / REPLICA).meta["summary_variables"]
    assert not {
        "bulk_insert_buffer",
        "log",
        "log_slow_queries",
        "init_connect",
        "log_bin",
        "sync_binlog",
    } & set(got)
    assert got["table_open_cache"] == "2000" and got["datadir"] == "/tmp/sumrepl/rep/"


def test_the_processlist_tables_by_command_user_host_schema_and_state(source) -> None:
    rows = source.frames["server_sessions"]
    by = {
        c: rows.dropna(subset=[c])[[c, "count", "sum_time_s", "line_no"]].values.tolist()
        for c in ("user", "host", "db")
    }
    assert by == {
        "user": [["app", 1.0, 0.0, 34], ["repl", 1.0, 150.0, 35], ["root", 1.0, 0.0, 36]],
        "host": [["127.0.0.1", 3.0, 150.0, 40]],
        "db": [["shop", 1.0, 0.0, 45]],  # NULL (line 44): a session without a schema
    }
    assert rows.dropna(subset=["state"])["state"].tolist() == [
        "Master has sent all binlog to",
        "User sleep",
        "starting",
    ]
    assert rows.dropna(subset=["command"])["command"].tolist() == ["Binlog Dump", "Query"]


def test_the_sources_replicas_from_slave_hosts(source, fixtures: Path) -> None:
    assert source.frames["server_replicas"][["line_no", "server_id", "host", "port"]].values.tolist() == [
        [9, "2", "127.0.0.1", "3318"]
    ]
    assert len(_parse(fixtures / ALONE).frames["server_replicas"]) == 0  # "No slaves found"


def test_the_innodb_section_of_a_mysql_server() -> None:
    """The section pt-mysql-summary 3.2.1 prints for a server with ``innodb_version`` (``section_innodb``:
    MySQL and Percona Server; MariaDB 10.11 has none, so the real fixtures lack it)."""
    lines = [
        "# Percona Toolkit MySQL Summary Report #######################",
        "# InnoDB #####################################################",
        "                  Version | 8.0.36",
        "         Buffer Pool Size | 128.0M",
        "         Buffer Pool Fill | 35%",
        "           File Per Table | ON",
        "            Log File Size | 2 * 48.0M = 96.0M",
        "          Log Buffer Size | 16M",
        "             Flush Method | O_DIRECT",
        "      Flush Log At Commit | 2",
        "          R/W I/O Threads | 4 8",
        "             I/O Capacity | 200",
        "      Txn Isolation Level | ",
        "# The End ####################################################",
    ]
    got = pt_mysql_summary.parse(lines, member="m", clock=ClockHints()).meta["summary_variables"]
    assert got == {
        "innodb_version": "8.0.36",
        "innodb_buffer_pool_size": str(128 << 20),
        "innodb_file_per_table": "ON",
        "innodb_log_files_in_group": "2",
        "innodb_log_file_size": str(48 << 20),
        "innodb_log_buffer_size": str(16 << 20),
        "innodb_flush_method": "O_DIRECT",
        "innodb_flush_log_at_trx_commit": "2",
        "innodb_read_io_threads": "4",
        "innodb_write_io_threads": "8",
        "innodb_io_capacity": "200",
    }


def test_an_odd_processlist_row_and_a_cut_report_warn(fixtures: Path) -> None:
    lines = (fixtures / SOURCE).read_text().splitlines()[:40]
    lines[34] = "  repl                                  one"
    src = pt_mysql_summary.parse(lines, member="m", clock=ClockHints())
    assert [(w.line_no, w.code) for w in src.warnings] == [(40, "truncated"), (35, "odd-line")]
    assert src.meta["role"] == "source"


def test_another_file_raises_at_its_first_line() -> None:
    with pytest.raises(ParseError, match="line 1: not a report"):
        pt_mysql_summary.parse(
            ["# Percona Toolkit System Summary Report ####"], member="x", clock=ClockHints()
        )
