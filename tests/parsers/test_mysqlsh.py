"""MySQL Shell diagnostics zips (``parsers.mysqlsh``, ``mysqlsh_instance``, ``mysqlsh_layout``), read
from the fixtures of tests/fixtures/mysqlsh (written by the rules of MySQL Shell's writer: see its
README) and from hand-cut results of the writer's edge cases."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd
import pytest

from parsers import mysqlsh, mysqlsh_instance, registry
from parsers.base import ClockHints, ParseError
from parsers.ingest.bundle import read_bundle

FIXTURES = Path(__file__).parent.parent / "fixtures" / "mysqlsh"
RS = FIXTURES / "replicaset-3-members.zip"
HL = FIXTURES / "highload-db1.zip"
FOLDER = "mysql-diagnostics-20261127-140210/"


def member(zip_path: Path, name: str) -> list[str]:
    """The lines of one member of a fixture zip."""
    with zipfile.ZipFile(zip_path) as zf:
        folder = zf.namelist()[0].split("/")[0]
        return zf.read(f"{folder}/{name}").decode().splitlines(keepends=True)


def parsed(zip_path: Path, name: str):
    lines = member(zip_path, name)
    module = registry.detect([ln.rstrip("\n") for ln in lines[: registry.HEAD_LINES]])
    assert module is not None, name
    return module.parse(lines, member=f"{FOLDER}{name}", clock=ClockHints())


@pytest.fixture(scope="module")
def replicaset():
    return read_bundle(RS)


def by_name(bundle, name: str):
    return next(s for s in bundle.sources if s.member.endswith("/" + name))


def test_three_members_give_three_hosts(replicaset):
    shell = [s for s in replicaset.sources if s.format in (mysqlsh.FORMAT, mysqlsh_instance.FORMAT)]
    hosts = {s.meta["host"] for s in shell}
    assert hosts == {"db1", "db2", "db3"}
    for s in replicaset.sources:  # every member of an instance prefix names its host, with the reason
        prefix = s.member.split("/")[-1].split(".")[0]
        assert s.meta["host"] == {"1": "db1", "2": "db2", "3": "db3"}[prefix], s.member
        assert "MySQL Shell 2.instance" in str(s.meta["host_origin"]) or prefix != "2"
    assert by_name(replicaset, "1.error_log").format == "mysqld_errorlog"  # the local target's copied file


def test_status_one_table_on_utc(replicaset):
    status = by_name(replicaset, "2.SHOW_GLOBAL_STATUS.tsv")
    frame = status.frames["mysqladmin"]
    row = frame[frame["variable"] == "Threads_connected"].iloc[0]
    assert row["value"] == 188.0 and int(row["line_no"]) == 42
    # Started 2026-11-27T14:02:12.820000 on the MySQL Shell machine (UTC+1, read from 2.metrics.tsv:
    # its Started against the server's UNIX_TIMESTAMP()) is 13:02:12.82 UTC
    assert str(status.start) == "2026-11-27 13:02:12.820000+00:00"
    assert status.ts_is_local is False
    assert "metrics.tsv" in status.meta["mysqlsh"]["offset_origin"]
    assert frame["per_s"].isna().all()  # one table: no rate
    assert status.meta["status_text"] == {"Rpl_semi_sync_source_status": "OFF"}


def test_variables_processlist_innodb_replica(replicaset):
    variables = by_name(replicaset, "3.global_variables.tsv")
    assert variables.meta["variables"]["hostname"] == "db3" and variables.meta["max_connections"] == "500"
    assert variables.meta["variables"]["report_host"] == ""
    pl = by_name(replicaset, "1.SHOW_FULL_PROCESSLIST.tsv").frames["processlist"]
    assert len(pl) == 12 and pl["snapshot"].eq(0).all()
    q = pl[pl["id"] == 4400].iloc[0]  # a three-line Info: its row runs over three lines
    assert q["info"].endswith("WHERE c.email = 'user0@example.com'") and q["info"].count("\n") == 2
    assert (int(q["line_no"]), int(q["line_end"])) == (10, 12) and q["host"] == "10.0.1.20:51200"
    assert pl[pl["id"] == 5].iloc[0]["db"] is pd.NA and int(pl["time_s"].max()) == 1209600
    inno = by_name(replicaset, "2.SHOW_ENGINE_INNODB_STATUS.tsv")
    st = inno.frames["innodb_status"].iloc[0]
    assert st["history_list_length"] == 1220 and st["checkpoint_age_bytes"] == 41_000_000
    assert int(st["line_no"]) >= 8  # numbered as the member's lines, after the header
    trx = inno.frames["innodb_transactions"]
    assert (trx["active_s"] == 3).any()
    rs = by_name(replicaset, "2.SHOW_REPLICA_STATUS.tsv").frames["replica_status"].iloc[0]
    assert (rs["source_host"], rs["seconds_behind"], rs["io_running"]) == ("db1", 412.0, "Yes")
    assert rs["exec_source_log_pos"] == 372111100.0
    assert len(by_name(replicaset, "1.SHOW_REPLICA_STATUS.tsv").frames["replica_status"]) == 0  # the primary


def test_error_log_table_on_the_server_clock(replicaset):
    """performance_schema.error_log: LOGGED is the server's session clock (db2 at UTC+1, db3 at UTC)."""
    db2 = by_name(replicaset, "2.error_log.tsv")
    db3 = by_name(replicaset, "3.error_log.tsv")
    assert db2.meta["mysqlsh"]["clock"] == "server"
    # LOGGED 13:22:11.82 on db2 (UTC+1) and 12:22:13.52 on db3 (UTC): both 40 min before their collection
    assert str(db2.frames["mysqld_errors"]["ts"].iloc[0]) == "2026-11-27 12:22:11.820000+00:00"
    assert str(db3.frames["mysqld_errors"]["ts"].iloc[0]) == "2026-11-27 12:22:13.520000+00:00"
    kinds = db2.frames["mysqld_errors"]["kind"].tolist()
    assert kinds == ["ready", "replication"]


def test_yaml_twins_and_other_results_listed_with_reasons(replicaset):
    reasons = {n.member.split("/")[-1]: n.reason for n in replicaset.not_used}
    assert "the same rows as its .tsv twin" in reasons["2.SHOW_GLOBAL_STATUS.yaml"]
    assert "SHOW BINARY LOGS" in reasons["2.SHOW_BINARY_LOGS.tsv"]
    assert "not read by Casebook" in reasons["2.SHOW_BINARY_LOGS.tsv"]


def test_high_load_iterations_are_a_series():
    bundle = read_bundle(HL)
    tables = sorted(
        (s for s in bundle.sources if "mysqladmin" in s.frames and s.format == mysqlsh.FORMAT),
        key=lambda s: s.start,
    )
    assert [s.meta["mysqlsh"]["iteration"] for s in tables] == [1, 2, 3]
    assert {s.meta["host"] for s in bundle.sources} == {"db1"}
    for s in tables[1:]:
        f = s.frames["mysqladmin"]
        rates = dict(zip(f["variable"].astype(str), f["per_s"], strict=True))
        assert rates["Com_commit"] == pytest.approx(310.0) and rates["Questions"] == pytest.approx(6400.0)
        assert pd.isna(rates["Threads_running"])  # a gauge
        assert s.meta["interval_s"] == pytest.approx(60.0)
    assert tables[0].frames["mysqladmin"]["per_s"].isna().all()


def test_clock_skew_between_members(replicaset):
    """Every member's metrics.tsv sets the server's UNIX_TIMESTAMP() beside MySQL Shell's Started
    stamp: one clock for all, so each server's skew is measured (db3 runs 2.5 s ahead)."""
    skews = {
        h: by_name(replicaset, f"{i}.instance").meta["clock_skew_s"] for i, h in ((1, "db1"), (3, "db3"))
    }
    assert skews == {"db1": 0.0, "db3": 2.5}
    assert "UNIX_TIMESTAMP()" in by_name(replicaset, "3.instance").meta["clock_skew_origin"]
    # the offset is still whole quarter hours: db3's Started stamps are put on UTC like db1's
    assert str(by_name(replicaset, "3.SHOW_GLOBAL_STATUS.tsv").start) == "2026-11-27 13:02:14.520000+00:00"


def test_instance_file_names_and_clock():
    src = parsed(RS, "3.instance")
    assert (src.meta["host"], src.meta["port"], src.meta["utc_offset_s"]) == ("db3", 3306, 0)
    assert src.meta["server_uuid"] == "8a1f2a4e-ac6e-11ef-9d3b-525400a1b2c3" and src.meta["instance"] == "3"
    sandbox = mysqlsh_instance.parse(
        [
            "Hostname: lab.example.com (report_host=None)",
            "Port: 3320 (report_port=3320)",
            "UTC Time: 2026-11-27 13:02:10",
            "Local Time: 2026-11-27 08:02:10",
        ],
        member="d/2.instance",
        clock=ClockHints(),
    )
    assert sandbox.meta["host"] == "lab.example.com:3320" and sandbox.meta["utc_offset_s"] == -18000


HEADER = [
    "# Query:",
    "#\tSHOW FULL PROCESSLIST",
    "#",
    "# Started: 2026-11-27T14:02:11.482113",
    ("# Execution Time: 0.0003 sec"),
    "#",
]


def test_edge_cases_of_the_writer():
    # a value holding a tab in the last column stays whole; NULL becomes missing; no row at all is read
    lines = [
        *HEADER,
        "# Id\tUser\tHost\tdb\tCommand\tTime\tState\tInfo",
        "7\tapp\th:1\tNULL\tQuery\t2\tinit\tselect 'a\tb'",
    ]
    pl = mysqlsh.parse(lines, member="d/1.SHOW_FULL_PROCESSLIST.tsv", clock=ClockHints()).frames[
        "processlist"
    ]
    assert pl.iloc[0]["info"] == "select 'a\tb'" and pl.iloc[0]["db"] is pd.NA
    empty = mysqlsh.parse(
        [*HEADER, "# Id\tUser\tHost\tdb\tCommand\tTime\tState\tInfo"], member="d/x.tsv", clock=ClockHints()
    )
    assert len(empty.frames["processlist"]) == 0 and empty.meta["mysqlsh"]["instance"] is None
    with pytest.raises(ParseError, match="no '# Query:' header"):
        mysqlsh.parse(["# Id\tUser", "1\tx"], member="d/x.tsv", clock=ClockHints())
    with pytest.raises(ParseError, match="without its '# Started:'"):
        mysqlsh.parse(
            ["# Query:", "#\tSHOW FULL PROCESSLIST", "#", "# Id\tUser"], member="d/x.tsv", clock=ClockHints()
        )


def test_sniffers_claim_only_their_shapes():
    assert registry.detect(HEADER + ["# Id\tUser"]).FORMAT == "mysqlsh"
    assert (
        registry.detect(["Hostname: db1 (report_host=None)", "Port: 3306 (report_port=3306)"]).FORMAT
        == "mysqlsh_instance"
    )
    assert not mysqlsh.sniff(["# Query: select 1", "1"])  # a comment that is not the writer's header
    assert not mysqlsh_instance.sniff(["Hostname: db1", "Port: 3306"])


def test_high_load_iterations_reach_the_rules_as_one_series():
    """Each iteration is its own member and its own primary capture; the timeline joins them."""
    from analyzer.timeline.timeline import Timeline, reduce_piece

    bundle = read_bundle(HL, reduce=reduce_piece)
    tl = Timeline.from_sources(bundle.sources, ncpu=4, host="db1")
    ma = tl.frame("mysqladmin")
    commits = ma[ma["variable"] == "Com_commit"]
    assert commits["per_s"].tolist()[1:] == [pytest.approx(310.0)] * 2 and pd.isna(commits["per_s"].iloc[0])
    roles = {m.rsplit("/", 1)[-1]: r.role for m, r in tl.roles.items()}
    assert roles["iteration-2.SHOW_GLOBAL_STATUS.tsv"] == "primary"
    assert len(tl.frame("processlist").groupby("ts")) == 3


def test_share_links_scrub_statements_of_the_shell_processlist():
    """A redacted share shows a MySQL Shell processlist's raw lines with statements fingerprinted,
    and its users, client hosts and schemas enter the vocabulary (web.sharing.redaction.redactor)."""
    from web.sharing.redaction import formats
    from web.sharing.redaction.redactor import VocabularyBuilder

    lines = [ln.rstrip("\n") for ln in member(RS, "2.SHOW_FULL_PROCESSLIST.tsv")]
    shown = "\n".join(formats.statement_text(mysqlsh.SENSITIVE, lines))
    assert "user0@example.com" not in shown and "where c.email = ?" in shown
    builder = VocabularyBuilder()
    formats.collect(builder, mysqlsh.SENSITIVE, parsed(RS, "2.SHOW_FULL_PROCESSLIST.tsv").frames)
    vocabulary = builder.vocabulary()
    assert "app" in vocabulary.users and "shop" in vocabulary.schemas and "10.0.1.20" in vocabulary.hosts


def test_group_replication_tables_and_session_status():
    """InnoDB Cluster members' performance_schema tables keep their columns (lower case, counters as
    numbers); a SHOW SESSION STATUS is not the server's counters."""
    stats = mysqlsh.parse(
        [
            "# Query:",
            "#\tselect * from performance_schema.replication_group_member_stats",
            "#",
            "# Started: 2026-11-27T14:02:11.482113",
            "# Execution Time: 0.0003 sec",
            "#",
            (
                "# "
                "CHANNEL_NAME\tVIEW_ID\tMEMBER_ID\tCOUNT_TRANSACTIONS_IN_QUEUE\tCOUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE"
            ),
            "group_replication_applier\t17326:3\t8a1f2a4e-ac6e-11ef-9d3b-525400a1b2c2\t0\t1912",
            "group_replication_applier\t17326:3\t8a1f2a4e-ac6e-11ef-9d3b-525400a1b2c3\t12\t0",
        ],
        member="d/1.performance_schema.replication_group_member_stats.tsv",
        clock=ClockHints(),
    ).frames["group_member_stats"]
    assert stats["count_transactions_remote_in_applier_queue"].tolist() == [1912.0, 0.0]
    assert stats["member_id"].iloc[1].endswith("b2c3") and stats["view_id"].iloc[0] == "17326:3"
    session = [
        "# Query:",
        "#\tSHOW SESSION STATUS LIKE 'rapid%'",
        "#",
        ("# Started: 2026-11-27T14:02:11.482113"),
        "#",
        "# Variable_name\tValue",
        "rapid_query_offload_count\t3",
    ]
    with pytest.raises(ParseError, match="not read by Casebook"):
        mysqlsh.parse(session, member="d/x.tsv", clock=ClockHints())


def test_transaction_ages_on_the_server_clock(replicaset):
    """innodb_trx's trx_started is the server's wall clock: db3 runs UTC and 2.5 s ahead while MySQL
    Shell's Started stamp is UTC+1; its transaction is still 95 s old, as on db1."""
    ages = {}
    for i in (1, 3):
        src = by_name(replicaset, f"{i}.information_schema.innodb_trx.tsv")
        row = src.frames["innodb_trx"].iloc[0]
        ages[i] = row["active_s"]
        assert (row["trx_id"], row["state"], int(row["line_no"]), int(row["line_end"])) == (
            "93422004",
            "RUNNING",
            8,
            9,
        )
    assert ages[1] == pytest.approx(95.12) and ages[3] == pytest.approx(95.02)
    # trx_query, the 8th of 16 columns, runs over two lines: the row's other cells follow it there
    row = by_name(replicaset, "1.information_schema.innodb_trx.tsv").frames["innodb_trx"].iloc[0]
    assert row["query"] == "UPDATE orders SET state = 'paid'\nWHERE id = 77120"
    assert (row["lock_structs"], row["rows_modified"], row["isolation"]) == (2.0, 1.0, "REPEATABLE READ")
    assert (
        by_name(replicaset, "3.information_schema.innodb_trx.tsv").meta["mysqlsh"]["ages_corrected_s"]
        == -3597.5
    )
