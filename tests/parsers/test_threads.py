"""parsers.threads: pt-stalk -threads (performance_schema.threads\\G after TS markers).

The local MariaDB runs with performance_schema off, so there is no fixture made here: the real
captures are the My-gather samples; the small inputs below are retyped in the samples' shape.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from parsers import threads
from parsers.base import Clock, ClockHints, ParseError

EX2 = "My-gather/pt-stalk/example2/2026_04_21_16_51_41-threads"
EX1 = "My-gather/pt-stalk/example1/2026_04_21_16_43_19-threads"


def _parse(path: Path):
    with path.open() as fh:
        return threads.parse(fh, member=path.name, clock=ClockHints())


def _row(n: int, tid: int, pid: str, info: list[str], os_id: str = "6120") -> list[str]:
    return [
        f"*************************** {n}. row ***************************",
        f"          THREAD_ID: {tid}",
        "               NAME: thread/sql/one_connection",
        "               TYPE: FOREGROUND",
        f"     PROCESSLIST_ID: {pid}",
        "   PROCESSLIST_USER: sysbench",
        "PROCESSLIST_COMMAND: Query",
        f"   PROCESSLIST_INFO: {info[0]}",
        *info[1:],
        "   PARENT_THREAD_ID: NULL",
        f"       THREAD_OS_ID: {os_id}",
    ]


@pytest.mark.samples
def test_example2_counts_rows_and_snapshots(samples: Path) -> None:
    src = _parse(samples / EX2)
    assert (len(src.main), src.samples, src.meta["snapshots"]) == (1539, 30, 30)
    assert src.clock is Clock.TS_MARKER and src.warnings == []


@pytest.mark.samples
def test_example2_window_from_markers(samples: Path) -> None:
    src = _parse(samples / EX2)
    assert str(src.start) == "2026-04-21 16:51:43.009325313+00:00"
    assert str(src.end) == "2026-04-21 16:52:12.009088559+00:00"


@pytest.mark.samples
def test_example2_background_thread_has_no_processlist_id(samples: Path) -> None:
    first = _parse(samples / EX2).main.iloc[0]
    assert (first.thread_id, first["name"], first.thread_os_id) == (1, "thread/sql/main", 5555)
    assert pd.isna(first.processlist_id) and pd.isna(first.processlist_info)
    assert (first.line_no, first.line_end, first.processlist_time_s) == (2, 26, 2962)


@pytest.mark.samples
def test_example2_foreground_thread_joins_session_and_tid(samples: Path) -> None:
    last = _parse(samples / EX2).main.iloc[-1]
    assert (last.processlist_id, last.thread_os_id, last.line_no, last.snapshot) == (1116, 7625, 38481, 29)
    assert last.processlist_info == "UPDATE sbtest9 SET k=k+1 WHERE id=922774"
    assert (last.processlist_command, last.processlist_state) == ("Execute", "updating")


@pytest.mark.samples
def test_example1_row_count(samples: Path) -> None:
    assert len(_parse(samples / EX1).main) == 1239


def test_multi_line_info_is_kept_whole() -> None:
    lines = ["TS 1776790303.009325313 2026-04-21 16:51:43"]
    lines += _row(1, 52, "11", ["SELECT c", "  FROM sbtest1", " WHERE id: 5"])
    lines += _row(2, 53, "NULL", ["NULL"])
    df = threads.parse(lines, member="t", clock=ClockHints()).main
    assert df.processlist_info.iloc[0] == "SELECT c\n  FROM sbtest1\n WHERE id: 5"
    assert (df.line_no.tolist(), df.line_end.tolist()) == ([2, 14], [13, 23])
    assert pd.isna(df.processlist_id.iloc[1])


def test_without_markers_a_new_snapshot_starts_at_row_one() -> None:
    lines = _row(1, 52, "11", ["SELECT 1"]) + _row(1, 52, "11", ["SELECT 2"])
    clock = ClockHints(start_local=pd.Timestamp("2026-04-21 16:51:41"), interval_s=1.0)
    src = threads.parse(lines, member="t", clock=clock)
    assert src.main.snapshot.tolist() == [0, 1]
    assert [str(t) for t in src.main.ts] == ["2026-04-21 16:51:41+00:00", "2026-04-21 16:51:42+00:00"]
    assert src.clock is Clock.INFERRED and src.ts_is_local


def test_non_numeric_tid_warns_with_the_row_line() -> None:
    lines = ["TS 1776790303.009325313 2026-04-21 16:51:43", *_row(1, 52, "11", ["SELECT 1"], os_id="abc")]
    src = threads.parse(lines, member="t", clock=ClockHints())
    assert [(w.line_no, w.code) for w in src.warnings] == [(2, "not-a-number")]
    assert pd.isna(src.main.thread_os_id.iloc[0])


def test_wrong_format_raises_at_first_foreign_line() -> None:
    with pytest.raises(ParseError) as exc:
        threads.parse(
            ["TS 1776790303.009325313 2026-04-21 16:51:43", "", "Id: 5"], member="t", clock=ClockHints()
        )
    assert exc.value.line_no == 3


def test_empty_input_gives_empty_typed_frame() -> None:
    df = threads.parse([], member="t", clock=ClockHints()).main
    assert (
        len(df) == 0 and str(df.thread_os_id.dtype) == "Int64" and str(df.ts.dtype) == "datetime64[ns, UTC]"
    )


@pytest.mark.samples
def test_sniff_accepts_threads_sample(samples: Path) -> None:
    assert threads.sniff((samples / EX2).read_text().splitlines()[:60])


@pytest.mark.samples
def test_sniff_refuses_ps_locks_transactions(samples: Path) -> None:
    head = (samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-ps-locks-transactions").read_text()
    assert not threads.sniff(head.splitlines()[:60])


@pytest.mark.samples
def test_sniff_refuses_vertical_processlist(samples: Path) -> None:
    head = (samples / "percona-toolkit/pt-mysql-summary/processlist-001.txt").read_text().splitlines()[:60]
    assert not threads.sniff(head)


def test_variant_names_the_column_generation() -> None:
    lines = ["TS 1776790303.009325313 2026-04-21 16:51:43", *_row(1, 52, "11", ["SELECT 1"])]
    src = threads.parse(lines, member="t", clock=ClockHints())
    assert src.meta["variant"] == "performance_schema.threads vertical, MySQL 5.7 columns (THREAD_OS_ID)"


def test_a_blank_line_in_the_last_statement_keeps_the_row_whole() -> None:
    """A statement with an empty line in it, in the member's last row: the row ends at its last key
    (THREAD_OS_ID), not at the blank line, and no line is reported as stray."""
    lines = ["TS 1776790303.009325313 2026-04-21 16:51:43"]
    lines += _row(1, 52, "11", ["SELECT c", "", "  FROM sbtest1"], os_id="6121")
    src = threads.parse(lines, member="t", clock=ClockHints())
    row = src.main.iloc[0]
    assert row.processlist_info == "SELECT c\n\n  FROM sbtest1"
    assert (int(row.thread_os_id), row.line_end, src.warnings) == (6121, len(lines), [])


def test_rows_typed_in_parts_match_one_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """Typed in parts of 2 rows (CHUNK_LINES cut to 24 cells) or all at once, across markers and
    multi-line statements, the frame and the warnings are the same."""
    lines: list[str] = []
    for snap in range(3):
        lines.append(f"TS {1776790303 + snap}.0 2026-04-21 16:51:{43 + snap}")
        for n in range(1, 4):
            lines += _row(n, 50 + n, str(n), ["SELECT 1", "", "  FROM t"], os_id="x" if n == 2 else "7")
    whole = threads.parse(list(lines), member="t", clock=ClockHints())
    monkeypatch.setattr(threads, "CHUNK_LINES", 24)
    parts = threads.parse(list(lines), member="t", clock=ClockHints())
    pd.testing.assert_frame_equal(whole.main, parts.main)
    assert whole.warnings == parts.warnings and [w.code for w in parts.warnings] == ["not-a-number"] * 3
    assert parts.main.snapshot.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
