"""parsers/processlist.py: table, vertical and -B layouts, snapshots, the real samples, warnings, errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from parsers import processlist
from parsers.base import Clock, ClockHints, ParsedSource, ParseError

START = pd.Timestamp("2026-04-21 16:43:19")
HINTS = ClockHints(start_local=START, interval_s=1.0)
MULTI_LINE_QUERY_6 = "SELECT SLEEP(6),\n  'x | y' AS pipe_in_string\nFROM dual"
MULTI_LINE_QUERY_3 = "SELECT SLEEP(3),\n  'x | y' AS pipe_in_string\nFROM dual"


def _parse(path: Path, clock: ClockHints = HINTS) -> ParsedSource:
    with path.open() as fh:
        return processlist.parse(fh, member=path.name, clock=clock)


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def _epoch(ns: int) -> pd.Timestamp:
    return pd.Timestamp(ns, unit="ns", tz="UTC")


# ---------------------------------------------------------------------------------------------
# sniff
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "mariadb-10.11.19_table_ts.txt",
        "mariadb-10.11.19_tsv_ts.txt",
        "mariadb-10.11.19_vertical_ts.txt",
        "mariadb-10.11.19_vertical_no-ts.txt",
    ],
)
def test_sniff_accepts_each_layout(fixtures: Path, name: str) -> None:
    assert processlist.sniff((fixtures / "processlist" / name).read_text().splitlines()[:60])


def test_sniff_accepts_a_leading_blank_on_every_line(samples: Path) -> None:
    head = (samples / "percona-toolkit/processlist/recset003.txt").read_text().splitlines()[:60]
    assert processlist.sniff(head)


@pytest.mark.parametrize(
    "rel",
    [
        "My-gather/pt-stalk/example2/2026_04_21_16_51_41-threads",
        "My-gather/pt-stalk/example2/2026_04_21_16_51_41-slave-status",
        "My-gather/pt-stalk/example2/2026_04_21_16_51_41-vmstat",
        "percona-toolkit/pt-mext/mext-001.txt",
    ],
)
def test_sniff_rejects_other_captures(samples: Path, rel: str) -> None:
    assert not processlist.sniff((samples / rel).read_text(errors="replace").splitlines()[:60])


# ---------------------------------------------------------------------------------------------
# own fixtures (MariaDB 10.11.19)
# ---------------------------------------------------------------------------------------------
def test_vertical_with_ts_markers_gives_one_snapshot_per_marker(fixtures: Path) -> None:
    src = _parse(fixtures / "processlist" / "mariadb-10.11.19_vertical_ts.txt")
    df = src.main
    assert src.meta["layout"] == "vertical" and src.meta["snapshots"] == 2
    assert src.clock is Clock.TS_MARKER and not src.ts_is_local
    assert df.groupby("snapshot").size().tolist() == [4, 4]
    assert (src.start, src.end) == (_epoch(1795350616261310778), _epoch(1795350617279814941))


def test_vertical_multi_line_info_is_joined(fixtures: Path) -> None:
    df = _parse(fixtures / "processlist" / "mariadb-10.11.19_vertical_ts.txt").main
    row = df[df["id"] == 674].iloc[0]
    assert row["info"] == MULTI_LINE_QUERY_6
    assert (row["line_no"], row["line_end"]) == (22, 33)
    assert row["progress"] == 0.0


def test_vertical_reads_types_and_null(fixtures: Path) -> None:
    df = _parse(fixtures / "processlist" / "mariadb-10.11.19_vertical_ts.txt").main
    row = df.iloc[0]
    assert (row["id"], row["user"], row["host"], row["db"], row["command"]) == (
        672,
        "root",
        "127.0.0.1:34028",
        "mysql",
        "Query",
    )
    assert (row["time_s"], row["state"], row["info"]) == (1, "User sleep", "SELECT SLEEP(6)")
    assert df["db"].isna().sum() == 6
    assert str(df["id"].dtype) == "Int64" and str(df["time_s"].dtype) == "Int64"


def test_table_cuts_cells_at_the_border_and_rejoins_multi_line_info(fixtures: Path) -> None:
    src = _parse(fixtures / "processlist" / "mariadb-10.11.19_table_ts.txt")
    df = src.main
    assert src.meta["layout"] == "table" and src.meta["snapshots"] == 2
    assert len(df) == 8 and src.warnings == []
    row = df[df["id"] == 674].iloc[0]
    assert (row["info"], row["line_no"], row["line_end"], row["time_s"]) == (MULTI_LINE_QUERY_6, 7, 9, 3)
    assert src.start == _epoch(1795350618330032491)


def test_tsv_unescapes_newlines_and_reads_null(fixtures: Path) -> None:
    src = _parse(fixtures / "processlist" / "mariadb-10.11.19_tsv_ts.txt")
    df = src.main
    assert src.meta["layout"] == "tsv" and src.meta["snapshots"] == 2
    assert df["line_no"].tolist() == [3, 4, 5, 8, 9, 10]
    assert df["info"].iat[1] == MULTI_LINE_QUERY_3
    assert df["db"].tolist()[:2] == ["mysql", pd.NA]
    assert src.end == _epoch(1795350632286082756)


def test_vertical_without_ts_splits_snapshots_where_row_number_falls_to_1(fixtures: Path) -> None:
    src = _parse(fixtures / "processlist" / "mariadb-10.11.19_vertical_no-ts.txt")
    df = src.main
    assert src.clock is Clock.INFERRED and src.ts_is_local
    assert df["snapshot"].tolist() == [0, 0, 0, 1, 1, 1]
    assert (src.start, src.end) == (_ts("2026-04-21 16:43:19"), _ts("2026-04-21 16:43:20"))
    assert df["ts_source"].tolist() == ["inferred"] * 6


def test_no_marker_and_no_start_counts_from_the_epoch_with_a_warning(fixtures: Path) -> None:
    src = _parse(fixtures / "processlist" / "mariadb-10.11.19_vertical_no-ts.txt", clock=ClockHints())
    assert src.start == _ts("1970-01-01 00:00:00")
    assert [w.code for w in src.warnings] == ["no-start-time"]


# ---------------------------------------------------------------------------------------------
# oddities, errors
# ---------------------------------------------------------------------------------------------
VERTICAL = [
    "TS 1776789801.009025316 2026-04-21 16:43:21",
    "*************************** 1. row ***************************",
    "     Id: 6",
    "   User: event_scheduler",
    "   Host: localhost",
    "     db: NULL",
    "Command: Daemon",
    "   Time: 2460",
    "  State: Waiting on empty queue",
    "   Info: NULL",
]


def test_error_line_between_snapshots_warns_with_its_line_number() -> None:
    lines = [*VERTICAL, "ERROR 2013 (HY000): Lost connection to server", *VERTICAL]
    lines[0] = "TS 1776789800.0 2026-04-21 16:43:20"
    src = processlist.parse(lines, member="p", clock=HINTS)
    assert src.main["snapshot"].tolist() == [0, 1] and src.main["info"].isna().all()
    assert [(w.line_no, w.code) for w in src.warnings] == [(11, "unreadable-line")]


def test_vertical_bad_number_warns_and_keeps_the_row() -> None:
    lines = [ln.replace("Time: 2460", "Time: soon") for ln in VERTICAL]
    src = processlist.parse(lines, member="p", clock=HINTS)
    assert src.main["time_s"].isna().iat[0]
    assert [(w.line_no, w.code) for w in src.warnings] == [(2, "bad-number")]


def test_unknown_column_is_kept_with_a_warning() -> None:
    lines = [*VERTICAL[:-1], "   Info: NULL", "  Extra: x"]
    src = processlist.parse(lines, member="p", clock=HINTS)
    assert src.main["extra"].iat[0] == "x"
    assert [w.code for w in src.warnings] == ["unknown-column"]


def test_table_row_that_does_not_line_up_warns() -> None:
    lines = [
        "+----+------+------+----+---------+------+-------+------+",
        "| Id | User | Host | db | Command | Time | State | Info |",
        "+----+------+------+----+---------+------+-------+------+",
        "| 9  | a    | h    |    | Sleep   | 1    |       | NULL |",
        "| 10 | b    | h    | Sleep | 1 | x |",
        "+----+------+------+----+---------+------+-------+------+",
    ]
    src = processlist.parse(lines, member="p", clock=HINTS)
    assert src.main["id"].tolist() == [9]
    assert [(w.line_no, w.code) for w in src.warnings] == [(5, "bad-row")]


def test_not_a_processlist_raises_with_the_first_text_line() -> None:
    with pytest.raises(ParseError) as err:
        processlist.parse(["", "TS 1776789801.0 2026-04-21 16:43:21", "hello"], member="p", clock=HINTS)
    assert err.value.line_no == 3


def test_empty_input_gives_an_empty_frame() -> None:
    src = processlist.parse(["", ""], member="p", clock=HINTS)
    assert len(src.main) == 0 and "info" in src.main
    assert [w.code for w in src.warnings] == ["empty"]


@pytest.mark.parametrize(
    "rel",
    [
        "My-gather/pt-stalk/example2/2026_04_21_16_52_11-processlist",
        "percona-toolkit/pt-secure-collect/2018_03_05_13_24_55-processlist",
        "percona-toolkit/processlist/recset003.txt",
    ],
)
def test_chunks_split_anywhere_give_the_same_frame(
    samples: Path, monkeypatch: pytest.MonkeyPatch, rel: str
) -> None:
    path = samples / rel
    whole = _parse(path).main
    monkeypatch.setattr(processlist, "CHUNK_CHARS", 1009)  # a prime: blocks end mid-row
    pd.testing.assert_frame_equal(_parse(path).main, whole)


@pytest.mark.parametrize("name", ["mariadb-10.11.19_table_ts.txt", "mariadb-10.11.19_tsv_ts.txt"])
def test_small_chunks_give_the_same_frame(fixtures: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    path = fixtures / "processlist" / name
    whole = _parse(path).main
    monkeypatch.setattr(processlist, "CHUNK_CHARS", 101)
    pd.testing.assert_frame_equal(_parse(path).main, whole)


def test_list_of_lines_and_file_object_give_the_same_frame(fixtures: Path) -> None:
    path = fixtures / "processlist" / "mariadb-10.11.19_table_ts.txt"
    from_list = processlist.parse(path.read_text().splitlines(), member="p", clock=HINTS).main
    pd.testing.assert_frame_equal(from_list, _parse(path).main)


# ---------------------------------------------------------------------------------------------
# real samples
# ---------------------------------------------------------------------------------------------
PT = "percona-toolkit"
SAMPLES = [
    # path, rows, snapshots, first ts, last ts, layout
    (
        "My-gather/pt-stalk/example1/2026_04_21_16_43_19-processlist",
        137,
        30,
        1776789801009025316,
        1776789830009015615,
    ),
    (
        "My-gather/pt-stalk/example1/2026_04_21_16_43_49-processlist",
        141,
        30,
        1776789831008861390,
        1776789860009323180,
    ),
    (
        "My-gather/pt-stalk/example2/2026_04_21_16_51_41-processlist",
        436,
        30,
        1776790303009325313,
        1776790332009088559,
    ),
    (
        "My-gather/pt-stalk/example2/2026_04_21_16_52_11-processlist",
        433,
        30,
        1776790333008962516,
        1776790362009596483,
    ),
    (
        f"{PT}/pt-secure-collect/2018_03_05_13_24_55-processlist",
        545,
        30,
        1520256297002113337,
        1520256326003924709,
    ),
]


@pytest.mark.samples
@pytest.mark.parametrize(("rel", "rows", "snaps", "first", "last"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_pt_stalk_sample_counts_and_window(
    samples: Path, rel: str, rows: int, snaps: int, first: int, last: int
) -> None:
    src = _parse(samples / rel)
    assert (len(src.main), src.samples, src.meta["snapshots"]) == (rows, snaps, snaps)
    assert (src.start, src.end) == (_epoch(first), _epoch(last))
    assert src.warnings == []


SINGLE = [
    # path, rows, layout, extra columns
    (f"{PT}/processlist/recset001.txt", 1, "table", []),
    (f"{PT}/processlist/recset002.txt", 2, "vertical", []),
    (f"{PT}/processlist/recset003.txt", 113, "vertical", []),
    (f"{PT}/processlist/recset004.txt", 51, "vertical", []),
    (f"{PT}/processlist/recset005.txt", 1, "vertical", []),
    (f"{PT}/processlist/recset006.txt", 2, "vertical", []),
    (f"{PT}/processlist/recset007.txt", 1, "table", []),
    (f"{PT}/processlist/recset008.txt", 1, "vertical", []),
    (f"{PT}/processlist/recset009.txt", 2, "tsv", []),
    (f"{PT}/processlist/recset010.txt", 7, "vertical", []),
    (f"{PT}/processlist/recset011.txt", 5, "vertical", []),
    (f"{PT}/pt-mysql-summary/processlist-001.txt", 167, "vertical", []),
    (
        f"{PT}/pt-mysql-summary/temp002/mysql-processlist",
        1,
        "vertical",
        ["rows_sent", "rows_examined", "rows_read"],
    ),
    (f"{PT}/pt-mysql-summary/temp005/mysql-processlist", 2, "vertical", []),
    (
        f"{PT}/pt-mysql-summary/temp006/mysql-processlist",
        4,
        "vertical",
        ["rows_sent", "rows_examined", "rows_read"],
    ),
    (
        f"{PT}/pt-mysql-summary/temp_enc008/mysql-processlist",
        5,
        "vertical",
        ["time_ms", "rows_sent", "rows_examined"],
    ),
    (
        f"{PT}/pt-mysql-summary/temp_enc009/mysql-processlist",
        4,
        "vertical",
        ["time_ms", "rows_sent", "rows_examined"],
    ),
]


@pytest.mark.samples
@pytest.mark.parametrize(("rel", "rows", "layout", "extra"), SINGLE, ids=[s[0] for s in SINGLE])
def test_single_listing_samples(samples: Path, rel: str, rows: int, layout: str, extra: list[str]) -> None:
    src = _parse(samples / rel)
    df = src.main
    assert (len(df), src.meta["layout"], src.meta["snapshots"]) == (rows, layout, 1)
    assert (src.start, src.end) == (_ts("2026-04-21 16:43:19"), _ts("2026-04-21 16:43:19"))
    assert list(df.columns[12:-1]) == extra
    assert src.warnings == []


@pytest.mark.samples
def test_multi_line_info_with_indented_lines_is_kept_whole(samples: Path) -> None:
    df = _parse(samples / "My-gather/pt-stalk/example2/2026_04_21_16_52_11-processlist").main
    row = df[df["line_no"] == 2391].iloc[0]
    assert (row["id"], row["line_end"], row["state"], row["time_ms"]) == (1907, 2418, "Opening tables", 399.0)
    assert row["info"].startswith("SELECT SQL_NO_CACHE\n            r.trx_id AS waiting_trx_id,")
    assert row["info"].count("\n") == 16


@pytest.mark.samples
def test_percona_rows_columns_are_integers(samples: Path) -> None:
    df = _parse(samples / f"{PT}/pt-secure-collect/2018_03_05_13_24_55-processlist").main
    assert str(df["rows_read"].dtype) == "Int64"
    assert (df["id"].iat[0], df["db"].iat[0], df["time_s"].iat[0], df["state"].iat[0]) == (
        689004,
        "version_check",
        9,
        "",
    )


@pytest.mark.samples
def test_leading_blank_on_every_line_and_state_null(samples: Path) -> None:
    df = _parse(samples / f"{PT}/processlist/recset003.txt").main
    assert (df["id"].iat[0], df["host"].iat[0], df["state"].iat[0], df["line_no"].iat[0]) == (
        29319424,
        "1.2.4.42:54442",
        pd.NA,
        1,
    )
    assert df["state"].iat[1] == ""  # `State:` with nothing after it is an empty string, not NULL


def test_variant_names_layout_and_flavour_columns(fixtures: Path) -> None:
    src = _parse(fixtures / "processlist" / "mariadb-10.11.19_tsv_ts.txt")
    assert src.meta["variant"] == "processlist tab-separated (mysql -B), MariaDB column Progress"


# ---------------------------------------------------------------------------------------------
# idle: Sleep sessions counted, not typed (what the ingest asks for)
# ---------------------------------------------------------------------------------------------
IDLE = frozenset({"Sleep"})


def _vertical(snapshots: int, sessions: int) -> list[str]:
    """A vertical capture, MariaDB columns: session i sleeps unless i % 4 == 1 (a query); the
    sleeping sessions' Time grows with i, ties at i % 50, so the longest idle is not the last row."""
    lines = []
    for snap in range(snapshots):
        lines.append(f"TS {1776789801 + snap}.009025316 2026-04-21 16:43:{21 + snap}")
        for i in range(sessions):
            query = i % 4 == 1
            lines += [
                f"*************************** {i + 1}. row ***************************",
                f"      Id: {1000 + i}",
                "    User: app",
                f"    Host: 10.20.4.{i % 250}:{40000 + i}",
                "      db: shop",
                f" Command: {'Query' if query else 'Sleep'}",
                f"    Time: {0 if query else 100 + i % 50}",
                f"   State: {'Sending data' if query else ''}",
                f"    Info: {f'SELECT * FROM orders WHERE id = {i}' if query else 'NULL'}",
                "Progress: 0.000",
            ]
    return lines


def test_idle_sessions_are_counted_and_the_rows_the_rules_read_stay() -> None:
    lines = _vertical(snapshots=3, sessions=120)
    full = processlist.parse(lines, member="m", clock=HINTS)
    lean = processlist.parse(lines, member="m", clock=HINTS, idle=IDLE)
    rows = full.main
    sleeping = rows["command"] == "Sleep"
    assert sleeping.sum() == 270
    kept = lean.main
    assert (kept["command"] != "Sleep").sum() == (~sleeping).sum()  # every other session typed
    pd.testing.assert_frame_equal(  # the kept rows are the full parse's, cell for cell
        kept, rows[rows["line_no"].isin(kept["line_no"])].reset_index(drop=True)
    )
    idle_kept = kept[kept["command"] == "Sleep"]
    first_longest = rows[sleeping & (rows["time_s"] == 149)].groupby("snapshot")["line_no"].min()
    assert set(first_longest) <= set(idle_kept["line_no"])  # the longest idle session of each snapshot
    assert set(rows.groupby("snapshot")["line_no"].agg(["min", "max"]).to_numpy().ravel()) <= set(
        kept["line_no"]
    )  # the first and the last row of each snapshot
    assert len(idle_kept) < sleeping.sum() // 20  # a few per snapshot (and per chunk it runs over)
    sessions = lean.frames[processlist.SESSIONS_FRAME]
    assert sessions["sessions"].tolist() == [120, 120, 120]
    assert sessions["ts"].tolist() == rows.groupby("snapshot")["ts"].first().tolist()
    assert sessions["line_end"].tolist() == rows.groupby("snapshot")["line_end"].max().tolist()


def test_idle_over_many_chunks_counts_each_session_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processlist, "CHUNK_CHARS", 4096)  # a snapshot over many chunks
    lines = _vertical(snapshots=2, sessions=200)
    lean = processlist.parse(lines, member="m", clock=HINTS, idle=IDLE)
    assert lean.frames[processlist.SESSIONS_FRAME]["sessions"].tolist() == [200, 200]
    assert (lean.main["command"] == "Query").sum() == 100


def test_idle_leaves_other_layouts_typed_and_counted(fixtures: Path) -> None:
    path = fixtures / "processlist" / "mariadb-10.11.19_table_ts.txt"
    full = _parse(path)
    with path.open() as fh:
        lean = processlist.parse(fh, member=path.name, clock=HINTS, idle=IDLE)
    pd.testing.assert_frame_equal(lean.main, full.main)
    sessions = lean.frames[processlist.SESSIONS_FRAME]
    assert sessions["sessions"].tolist() == full.main.groupby("snapshot").size().tolist()
