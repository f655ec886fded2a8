"""Snapshot captures parsed piece by piece give the same frames as one whole parse."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from parsers import interrupts, mysqladmin, processlist
from parsers.base import ClockHints, ParseError
from parsers.pieces import parse_in_pieces

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _processlist(snapshots: int, sessions: int) -> str:
    out = []
    for s in range(snapshots):
        out.append(f"TS {1776790301 + s}.000000000 2026-04-21 16:51:{41 + s % 19:02d}")
        for n in range(1, sessions + 1):
            out += [
                f"*************************** {n}. row ***************************",
                f"     Id: {1000 + n}",
                "   User: app",
                "   Host: app1:50928",
                "     db: shop",
                "Command: Query",
                f"   Time: {s % 3}",
                "  State: Sending data",
                f"   Info: SELECT * FROM t WHERE id = {s * 100 + n}",
            ]
    return "\n".join(out) + "\n"


def _both(module, text: str, piece_chars: int):
    whole = module.parse(text.splitlines(keepends=True), member="m", clock=ClockHints())
    head, rest = text.splitlines(keepends=True)[:5], io.StringIO("".join(text.splitlines(keepends=True)[5:]))
    seen: list[int] = []

    def on_piece(piece):
        seen.append(len(piece.main))
        return piece

    pieced = parse_in_pieces(
        module, head, rest, member="m", clock=ClockHints(), on_piece=on_piece, piece_chars=piece_chars
    )
    return whole, pieced, seen


def test_a_processlist_in_pieces_equals_the_whole_parse() -> None:
    whole, pieced, seen = _both(processlist, _processlist(40, 7), piece_chars=3000)
    assert len(seen) > 5  # it was really cut
    columns = ["ts", "line_no", "line_end", "id", "time_s", "info"]
    pd.testing.assert_frame_equal(pieced.main[columns], whole.main[columns])
    assert pieced.samples == whole.samples == 40


def test_interrupt_rates_continue_across_pieces() -> None:
    text = (FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt").read_text()
    whole, pieced, seen = _both(interrupts, text, piece_chars=200)
    assert len(seen) == 3
    columns = ["ts", "irq", "cpu", "count", "per_s", "line_no"]
    got = pieced.frames["interrupts"][columns].astype({"irq": "string"})
    want = whole.frames["interrupts"][columns].astype({"irq": "string"})
    pd.testing.assert_frame_equal(got, want)
    assert got["per_s"].notna().sum() == want["per_s"].notna().sum() > 0


def test_status_counter_rates_continue_across_pieces() -> None:
    text = (FIXTURES / "mysqladmin" / "mariadb-10.11_ts-markers_ext_subset.txt").read_text()
    whole, pieced, seen = _both(mysqladmin, text, piece_chars=1000)
    assert len(seen) == 3
    columns = ["ts", "variable", "value", "per_s", "line_no"]
    got = pieced.frames["mysqladmin"][columns].astype({"variable": "string"})
    want = whole.frames["mysqladmin"][columns].astype({"variable": "string"})
    pd.testing.assert_frame_equal(got, want)
    assert got["per_s"].notna().any()


def test_warnings_of_a_later_piece_carry_the_member_line_number() -> None:
    good = _processlist(10, 3)
    text = good + "TS 1776790400.000000000 2026-04-21 16:53:20\nhello world\n"
    lines = text.splitlines(keepends=True)
    whole = processlist.parse(lines, member="m", clock=ClockHints())
    source = parse_in_pieces(
        processlist,
        lines[:3],
        io.StringIO("".join(lines[3:])),
        member="m",
        clock=ClockHints(),
        piece_chars=len(good) // 3,
    )
    assert [(w.line_no, w.code) for w in source.warnings] == [(w.line_no, w.code) for w in whole.warnings]
    assert source.warnings and source.warnings[-1].line_no == len(lines)


def test_a_member_that_is_not_the_format_raises_on_its_first_piece() -> None:
    with pytest.raises(ParseError, match="line 2"):
        parse_in_pieces(
            processlist,
            ["TS 1776790400.0 2026-04-21 16:53:20\n"],
            io.StringIO("hello\n"),
            member="m",
            clock=ClockHints(),
        )


def test_line_numbers_count_newlines_only_whatever_the_statement_holds() -> None:
    # A statement with a form feed and a U+2028: str.splitlines would cut there and shift every
    # later line number; the member's lines (and the raw lines shown for them) end at "\n" only.
    text = _processlist(6, 2).replace("id = 101", "id = 101 /* a\x0cb\u2028c */")
    _, pieced, seen = _both(processlist, text, piece_chars=700)
    assert len(seen) > 2
    lines = text.split("\n")
    for row in pieced.main.itertuples():
        assert lines[row.line_no - 1].startswith("*"), row.line_no
        assert lines[row.line_end - 1].lstrip().startswith("Info: SELECT"), row.line_end
