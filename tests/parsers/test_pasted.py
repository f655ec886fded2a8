"""Captures as people paste them (tests/fixtures/context/pasted_*: real iostat, mpstat and vmstat runs
wrapped in a ticket note with CRLF, prose, ``#`` lines and a Windows-1252 byte, no banner; vmstat -w -t
without its header), read through ``read_bundle`` as an upload is."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers import vmstat_headerless
from parsers.base import ClockHints
from parsers.ingest.bundle import read_bundle
from parsers.pasted import decode, strip_note
from tests.analyzer.context_captures import FIXTURES


def one_source(name: str):
    bundle = read_bundle(FIXTURES / name)
    assert bundle.not_used == []
    [source] = bundle.sources
    return source


@pytest.mark.parametrize(
    "name,fmt,samples,skipped",
    [
        ("pasted_iostat-dx_note.txt", "iostat", 2, "lines 1-3, 12-13 skipped"),
        ("pasted_mpstat-P-ALL_note.txt", "mpstat", 2, "lines 1-3, 18-19 skipped"),
    ],
)
def test_a_sysstat_capture_inside_a_note_is_read_and_the_note_is_named(
    name: str, fmt: str, samples: int, skipped: str
) -> None:
    source = one_source(name)
    assert (source.format, source.samples) == (fmt, samples)
    codes = {w.code: w for w in source.warnings}
    assert codes["pasted-note"].message.startswith(skipped)
    assert codes["not-utf8"].line_no == 2


def test_the_cp1252_byte_is_read_as_such() -> None:
    text, warning = decode((FIXTURES / "pasted_iostat-dx_note.txt").read_bytes())
    assert "(café app)" in text and warning is not None and warning.code == "not-utf8"


def test_vmstat_inside_a_note_warns_for_each_line_it_skips() -> None:
    source = one_source("pasted_vmstat-w-t_note.txt")
    skipped = [w.line_no for w in source.warnings if w.code == "unreadable-line"]
    assert source.samples == 3 and skipped == [1, 2, 3, 9, 10]


def test_headerless_vmstat_w_t_is_read_with_its_columns_assumed() -> None:
    source = one_source("pasted_vmstat-w-t_headerless.txt")
    rows = (FIXTURES / "pasted_vmstat-w-t_headerless.txt").read_text().splitlines()
    assert source.format == "vmstat" and source.samples == len(rows) == 3
    first = rows[0].split()
    assert source.main["line_no"].tolist() == [1, 2, 3]
    assert source.main["r"].iloc[0] == int(first[0]) and source.main["us"].iloc[0] == int(first[12])
    assert str(source.main["ts"].iloc[0])[:19] == f"{first[-2]} {first[-1]}"
    assert source.warnings[0].code == "no-header"


def test_headerless_rows_under_a_header_belong_to_vmstat() -> None:
    head = [
        "procs -----------memory----------",
        " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st",
    ]
    assert not vmstat_headerless.sniff(head)


def test_strip_note_keeps_the_numbering() -> None:
    text = "Hi team,\nhere it is:\n r b swpd\n 1 0 0\n# end\nThanks, Bob.\n"
    stripped, skipped = strip_note(text)
    assert stripped.count("\n") == text.count("\n") and skipped == [1, 2, 5, 6]


def test_a_member_that_is_no_capture_at_all_stays_not_used(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Hi team,\nthe customer will send the files tomorrow.\nThanks, Bob.\n")
    bundle = read_bundle(path)
    assert bundle.sources == [] and "format not recognised" in bundle.not_used[0].reason


def test_the_doctest_of_the_headerless_parser_uses_the_sample_layout() -> None:
    src = vmstat_headerless.parse(
        [" 1 0 0 10 20 30 0 0 0 0 5 6 1 2 97 0 0 2026-11-25 17:54:50"], member="m", clock=ClockHints()
    )
    assert src.main["id"].iloc[0] == 97


@pytest.mark.parametrize(
    ("name", "fmt", "samples", "skipped"),
    [
        ("pasted_mpstat-P-ALL-5_prose.txt", "mpstat", 2, "lines 1-3, 20-21 skipped"),
        ("pasted_iostat-dmx-1_comments.txt", "iostat", 3, "lines 1, 5, 9 skipped"),
        ("pasted_mpstat-P-ALL_en-IN.md", "mpstat", 2, "lines 1, 3, 5, 7, 24, 26, 28 skipped"),
    ],
)
def test_the_pasted_shapes_of_issue_23_are_read(name: str, fmt: str, samples: int, skipped: str) -> None:
    source = one_source(name)
    assert (source.format, source.samples) == (fmt, samples)
    assert {w.code: w for w in source.warnings}["pasted-note"].message.startswith(skipped)


def test_prose_with_numbers_and_a_command_is_note_not_capture() -> None:
    source = one_source("pasted_mpstat-P-ALL-5_prose.txt")
    assert source.main["line_no"].min() == 6 and {w.code: w for w in source.warnings}["not-utf8"].line_no == 3
    assert source.main["ts"].dt.hour.iloc[0] == 16  # 04:09:15 PM


def test_en_in_times_with_their_zone_and_a_dd_mm_yy_banner() -> None:
    source = one_source("pasted_mpstat-P-ALL_en-IN.md")
    assert str(source.main["ts"].iloc[0])[:19] == "2026-11-27 21:39:21"
    assert source.meta["date_order"] == "DMY"


def test_a_table_row_is_never_taken_for_a_sentence() -> None:
    assert strip_note("Hi team,\nvda 85.81 6.02 15.33 15.16 2.46\n")[1] == [1]
