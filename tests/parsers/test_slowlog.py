"""The slow query log parser (parsers/slowlog.py) and its digest (analyzer/statements/querydigest.py), on the
real MariaDB 10.11 log and the hand-written MySQL 5.7/8.0/8.4 and Percona Server samples of
tests/fixtures/slowlog/ (README there), side by side with pt-query-digest 3.2.1's reports of the same
files (``*.pt-query-digest.json``, stored beside them)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from analyzer.statements.querydigest import checksum, queries
from parsers import registry, slowlog
from parsers.base import ClockHints, ParseError
from parsers.ingest.bundle import read_bundle

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slowlog"
MARIADB = FIXTURES / "mariadb-10.11_query_plan-explain_sysbench.log"
LOGS = sorted(FIXTURES.glob("*.log"))

#: The wall clock of each fixture's server against UTC, as pt-query-digest prints its times (it drops
#: a ``# Time:`` line's zone): the MariaDB server ran with TZ=Europe/Paris, the MySQL 5.7 sample has
#: ``log_timestamps=SYSTEM`` at +01:00.
PT_CLOCK_S = {MARIADB.name: 3600, "mysql-5.7_log-timestamps-system_hand.log": 3600}

# Deliberate differences from pt-query-digest 3.2.1 (docs/inputs.md, "The slow query log"):
#: 1. Fingerprints: a ``+``/``-`` is a sign only where it cannot be an operator
#: (analyzer/statements/fingerprint.py),
#:    where pt takes any for the start of a number. pt's fingerprint -> ours.
FINGERPRINTS = {
    "update sbtest? set k=k? where id=?": "update sbtest? set k=k+? where id=?",
    "update orders set total = total ? ? where id = ?": "update orders set total = total + ? where id = ?",
    "update sbtest? set k = k ? ? where id = ?": "update sbtest? set k = k + ? where id = ?",
}
#: 2. pt's header pattern wants ``mysqld, Version``: MariaDB's ``mariadbd, Version`` header, written
#:    when the log is reopened or the server restarts, is glued to the statement before it, and so is
#:    the entry after it. pt's glued class -> ours; the swallowed entries (a ``BEGIN`` after each of
#:    the two headers) count in ours; pt's times after each header are those of the glued entry
#:    (its ``# Time:`` line is lost) until the next ``# Time:`` line.
GLUED = {
    "select version(), @@system_time_zone, now(), utc_timestamp(); /usr/sbin/mariadbd": (
        "select version(), @@system_time_zone, now(), utc_timestamp()"
    ),
    "show variables like ?; /usr/sbin/mariadbd": "show variables like ?",
}
SWALLOWED = {"begin": 2}
GLUED_TIMES = {"2026-12-07 02:33:48", "2026-12-07 02:34:24"}


def _parse(path: Path, clock: ClockHints | None = None) -> slowlog.ParsedSource:
    with path.open() as f:
        return slowlog.parse(f, member=path.name, clock=clock or ClockHints())


def _ours_of(pt_fp: str) -> str:
    glued = next((ours for pt, ours in GLUED.items() if pt_fp.startswith(pt)), None)
    return glued or FINGERPRINTS.get(pt_fp, pt_fp)


def _pt_time(value: str, log: Path) -> pd.Timestamp:
    return pd.Timestamp(value.replace("T", " "), tz="UTC") - pd.Timedelta(seconds=PT_CLOCK_S.get(log.name, 0))


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_every_class_agrees_with_pt_query_digest(log: Path) -> None:
    report = json.loads(log.with_suffix(".pt-query-digest.json").read_text())
    ours = {q["fingerprint"]: q for q in queries(_parse(log).frames["slowlog_classes"])}
    assert len(ours) == len(report["classes"])
    for pt in report["classes"]:
        fp = _ours_of(pt["fingerprint"])
        q = ours[fp]
        m = pt["metrics"]
        assert checksum(pt["fingerprint"]) == pt["checksum"]
        if fp == pt["fingerprint"]:
            assert q["checksum"] == pt["checksum"]
        if pt["fingerprint"] in GLUED or any(pt["fingerprint"].startswith(g) for g in GLUED):
            assert q["count"] == pt["query_count"] == 1
            continue
        assert q["count"] == pt["query_count"] + SWALLOWED.get(fp, 0), fp
        if fp in SWALLOWED:
            continue
        assert q["query_time_s"]["sum"] == pytest.approx(float(m["Query_time"]["sum"]), abs=1e-6), fp
        assert q["query_time_s"]["max"] == pytest.approx(float(m["Query_time"]["max"]), abs=1e-6), fp
        assert q["query_time_s"]["p95"] == pytest.approx(float(m["Query_time"]["pct_95"]), abs=1e-6), fp
        assert q["lock_time_s"]["sum"] == pytest.approx(float(m["Lock_time"]["sum"]), abs=1e-6), fp
        assert q["lock_time_s"]["p95"] == pytest.approx(float(m["Lock_time"]["pct_95"]), abs=1e-6), fp
        assert q["rows_sent"]["sum"] == int(m["Rows_sent"]["sum"]), fp
        assert q["rows_examined"]["sum"] == int(m["Rows_examined"]["sum"]), fp
        for ours_ts, pt_ts in ((q["first_seen"], pt["ts_min"]), (q["last_seen"], pt["ts_max"])):
            same = pd.Timestamp(ours_ts).floor("s") == _pt_time(pt_ts, log)
            assert same or pt_ts in GLUED_TIMES, (fp, ours_ts, pt_ts)


def test_queries_are_sorted_by_total_query_time_with_the_longest_entry_as_example() -> None:
    out = queries(_parse(MARIADB).frames["slowlog_classes"])
    totals = [q["query_time_s"]["sum"] for q in out]
    assert totals == sorted(totals, reverse=True)
    assert out[0]["fingerprint"] == "select sleep(?)"
    assert out[0]["example"]["statement"] == "SELECT SLEEP(1.5)"
    assert out[0]["example"]["line"] == 7300
    assert out[0]["example"]["ts"] == "2026-12-07T01:34:25Z"


def test_wall_clock_times_go_on_utc_by_the_offset_set_timestamp_gives() -> None:
    src = _parse(MARIADB)
    assert src.meta["utc_offset_s"] == 3600 and src.meta["time_style"] == "wall-clock"
    assert not src.ts_is_local
    assert src.frames["slowlog"]["ts"].tolist() == [
        pd.Timestamp("2026-12-07 01:33", tz="UTC"),
        pd.Timestamp("2026-12-07 01:34", tz="UTC"),
    ]


def test_an_iso_time_with_an_offset_is_read_in_utc() -> None:
    classes = _parse(FIXTURES / "mysql-5.7_log-timestamps-system_hand.log").frames["slowlog_classes"]
    first = classes.set_index("fingerprint").loc["administrator command: Quit", "first_seen"]
    assert first == pd.Timestamp("2026-12-07 01:40:02.000100", tz="UTC")


WALL_ONLY = [
    "# Time: 261207  2:34:07\n",
    "# User@Host: app[app] @  [127.0.0.1]\n",
    "# Query_time: 0.5  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 9\n",
    "SELECT 1;\n",
]


def test_wall_clock_times_without_set_timestamp_take_the_bundles_offset() -> None:
    src = slowlog.parse(WALL_ONLY, member="s", clock=ClockHints(utc_offset_s=7200))
    assert src.frames["slowlog_classes"]["first_seen"].tolist() == [
        pd.Timestamp("2026-12-07 00:34:07", tz="UTC")
    ]
    assert not src.ts_is_local


def test_wall_clock_times_with_no_offset_anywhere_stay_local_and_say_so() -> None:
    src = slowlog.parse(WALL_ONLY, member="s", clock=ClockHints())
    assert src.ts_is_local
    assert [w.code for w in src.warnings] == ["wall-clock"]


def test_a_restart_header_ends_the_entry_before_it() -> None:
    classes = _parse(MARIADB).frames["slowlog_classes"].set_index("fingerprint")
    assert classes.loc["show variables like ?", "example"] == "SHOW VARIABLES LIKE 'pid_file'"
    assert classes.loc["begin", "queries"] == 37
    assert _parse(MARIADB).meta["headers"] == 9  # three lines at the start, the reopen and the restart


def test_a_statement_over_many_lines_is_one_entry() -> None:
    classes = _parse(FIXTURES / "mysql-8.0_log-slow-extra_hand.log").frames["slowlog_classes"]
    row = classes.set_index("fingerprint").loc[
        "select email, sum(total) as spent from orders group by email order by spent desc limit ?"
    ]
    assert row["example"].splitlines()[0] == "SELECT email, SUM(total) AS spent"
    assert (row["line_no"], row["line_end"]) == (10, 18)


def test_an_administrator_command_is_its_own_class() -> None:
    out = {
        q["fingerprint"]: q
        for q in queries(_parse(FIXTURES / "mysql-8.4_log-slow-extra_hand.log").frames["slowlog_classes"])
    }
    assert out["administrator command: Quit"]["count"] == 1


def test_use_and_the_schema_field_give_the_schema() -> None:
    clients = _parse(MARIADB).frames["slowlog_clients"]
    assert set(clients["schema"]) == {"", "sbtest", "shop"}
    percona = _parse(FIXTURES / "percona-server-5.7_log-slow-verbosity-full_hand.log").frames[
        "slowlog_clients"
    ]
    assert percona[["user", "host", "ip", "schema"]].values.tolist() == [
        ["app", "app1.example.net", "10.0.1.21", "shop"]
    ]


def test_percona_extended_fields_are_summed_per_class() -> None:
    classes = _parse(FIXTURES / "percona-server-5.7_log-slow-verbosity-full_hand.log").frames[
        "slowlog_classes"
    ]
    row = classes.set_index("fingerprint").loc[
        "select note, count(*) from orders group by note order by ? desc limit ?"
    ]
    assert row[
        ["tmp_disk_tables", "full_scans", "filesorts", "innodb_io_r_ops", "innodb_pages_distinct"]
    ].tolist() == [1, 2, 2, 15, 78]
    update = classes.set_index("fingerprint").loc["update orders set total = total * ? where id = ?"]
    assert update["innodb_rec_lock_wait_s"] == pytest.approx(1.15)


def test_mariadb_query_plan_flags_are_counted() -> None:
    classes = _parse(MARIADB).frames["slowlog_classes"].set_index("fingerprint")
    row = classes.loc[
        (
            "select left(c, ?) as prefix, count(*) as n, group_concat(pad) as pads from sbtest? group by "
            "prefix order by n desc limit ?"
        )
    ]
    assert row[["tmp_tables", "tmp_disk_tables", "full_scans", "filesorts"]].tolist() == [2, 2, 1, 1]


def test_a_log_cut_mid_entry_warns_with_the_line_and_counts_the_rest() -> None:
    src = _parse(FIXTURES / "mysql-8.0_log-slow-extra_hand.log")
    assert [(w.code, w.line_no) for w in src.warnings] == [("cut-entry", 35)]
    assert src.meta["entries"] == 5


def test_a_piece_that_starts_mid_entry_skips_to_the_first_entry() -> None:
    lines = MARIADB.read_text().splitlines(keepends=True)[8:120]  # lines 9-120: from and to mid-entry
    src = slowlog.parse(lines, member="s", clock=ClockHints())
    assert [(w.code, w.line_no) for w in src.warnings] == [("no-entry", 1), ("cut-entry", 104)]
    assert src.meta["entries"] == 10


def test_reading_in_small_blocks_gives_the_same_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _parse(MARIADB)
    monkeypatch.setattr(slowlog, "BLOCK_CHARS", 3000)
    small = _parse(MARIADB)
    pd.testing.assert_frame_equal(small.frames["slowlog_classes"], whole.frames["slowlog_classes"])
    pd.testing.assert_frame_equal(small.frames["slowlog"], whole.frames["slowlog"])
    pd.testing.assert_frame_equal(
        small.frames["slowlog_class_minutes"], whole.frames["slowlog_class_minutes"]
    )


def test_each_class_minutes_add_up_to_its_digest() -> None:
    """A window's figures are sums over ``slowlog_class_minutes``: over the whole log they are the
    digest's, class by class; each row is one class in one minute, at the minute."""
    src = _parse(FIXTURES / "mysql-5.7_log-timestamps-system_hand.log")
    minutes, classes = src.frames["slowlog_class_minutes"], src.frames["slowlog_classes"]
    assert not minutes.duplicated(["ts", "class_no"]).any()
    assert (minutes["ts"] == minutes["ts"].dt.floor("min")).all()
    folded = minutes.groupby("class_no").agg(
        queries=("queries", "sum"),
        query_time_s=("query_time_s", "sum"),
        query_time_max_s=("query_time_max_s", "max"),
        lock_time_s=("lock_time_s", "sum"),
        rows_examined=("rows_examined", "sum"),
        rows_sent_max=("rows_sent_max", "max"),
    )
    assert folded.index.tolist() == list(range(len(classes)))
    for column in folded.columns:
        assert folded[column].to_numpy() == pytest.approx(classes[column].to_numpy()), column
    first = minutes.groupby("class_no")["ts"].min()
    assert (first.to_numpy() == classes["first_seen"].dt.floor("min").to_numpy()).all()


def test_a_member_that_is_not_a_slow_log_is_refused() -> None:
    with pytest.raises(ParseError) as err:
        slowlog.parse(
            ["# User@Host: x[x] @ localhost []\n", "no query time here\n"] * 3, member="s", clock=ClockHints()
        )
    assert err.value.line_no == 1


def test_empty_input_gives_no_class() -> None:
    src = slowlog.parse([], member="s", clock=ClockHints())
    assert len(src.frames["slowlog_classes"]) == 0 and src.samples == 0


def test_it_is_detected_by_content() -> None:
    head = MARIADB.read_text().splitlines()[:60]
    assert registry.detect(head) is slowlog


def test_a_slow_log_member_of_a_bundle_is_used(tmp_path: Path) -> None:
    path = tmp_path / "bundle.tar.gz"
    data = MARIADB.read_bytes()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("pt/2026_12_07_02_33_48-slow.log")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    bundle = read_bundle(path)
    assert not bundle.not_used
    (source,) = bundle.sources
    assert source.format == "slowlog" and source.meta["entries"] == 743


#: A server started as ``mariadbd`` from the PATH writes its header without a directory
#: (tests/fixtures/bundles/slowlog-fullscan.tar.gz, scripts/make_slowlog_bundle.sh).
_NO_PATH_HEADER = [
    "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n",
    "Tcp port: 3397  Unix socket: /tmp/s/mysqld.sock\n",
    "Time\t\t    Id Command\tArgument\n",
]


def test_a_header_without_the_servers_directory_ends_the_entry_before_it() -> None:
    entry = [
        "# Time: 261207  4:40:44\n",
        "# User@Host: app[app] @ localhost [127.0.0.1]\n",
        "# Query_time: 3.9  Lock_time: 0.0001  Rows_sent: 0  Rows_examined: 200000\n",
        "SET timestamp=1796618444;\n",
        "SELECT id FROM items WHERE pad LIKE '%y%';\n",
    ]
    src = slowlog.parse(
        iter(_NO_PATH_HEADER + entry + _NO_PATH_HEADER + entry), member="s", clock=ClockHints()
    )
    classes = src.frames["slowlog_classes"]
    assert classes["fingerprint"].tolist() == ["select id from items where pad like ?"]
    assert int(classes["queries"].iloc[0]) == 2 and not src.warnings
    assert src.meta["server_version"] == "10.11.19-MariaDB-0+deb12u1" and src.meta["headers"] == 6
