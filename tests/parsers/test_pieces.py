"""Snapshot captures parsed piece by piece give the same frames as one whole parse; the text kept
of the pieces is the member's text, line for line, whatever its line ends."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from parsers import interrupts, mysqladmin, processlist
from parsers.base import ClockHints, ParseError
from parsers.ingest.cutting import split
from parsers.ingest.pieces import LocalRunner, Pipeline, Work
from parsers.rawtext import TextChunk, text_of

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


def parse_in_pieces(module, head: bytes, rest, *, runner=None, piece_bytes=None, keep_text=None):
    """One snapshot capture (``head`` + ``rest``) cut and parsed as ``read_bundle`` does it, by
    ``runner`` (this process by default); raises what makes the member unreadable."""
    got = []
    local = LocalRunner(runner.work if runner is not None else Work(keep_text=keep_text is not None))
    with Pipeline(local=local, pool=runner, keep_text=keep_text) as pipeline:
        cut = split(head, rest, piece_bytes=piece_bytes)
        pipeline.pieces(module, cut, member="m", clock=ClockHints(), done=got.append)
    if isinstance(got[0], Exception):
        raise got[0]
    return got[0]


def _pieced(module, text: str | bytes, piece_bytes: int, **kwargs):
    """``text`` parsed in pieces of about ``piece_bytes``, read from a stream after a 200-byte head."""
    data = text.encode() if isinstance(text, str) else text
    return parse_in_pieces(module, data[:200], io.BytesIO(data[200:]), piece_bytes=piece_bytes, **kwargs)


def _both(module, text: str, piece_bytes: int):
    whole = module.parse(text.splitlines(keepends=True), member="m", clock=ClockHints())
    data = text.encode()
    pieces = list(split(data[:200], io.BytesIO(data[200:]), piece_bytes=piece_bytes))
    return whole, _pieced(module, text, piece_bytes), pieces


def test_a_processlist_in_pieces_equals_the_whole_parse() -> None:
    whole, pieced, seen = _both(processlist, _processlist(40, 7), piece_bytes=3000)
    assert len(seen) > 5  # it was really cut
    columns = ["ts", "line_no", "line_end", "id", "time_s", "info"]
    pd.testing.assert_frame_equal(pieced.main[columns], whole.main[columns])
    assert pieced.samples == whole.samples == 40


def test_interrupt_rates_continue_across_pieces() -> None:
    text = (FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt").read_text()
    whole, pieced, seen = _both(interrupts, text, piece_bytes=200)
    assert len(seen) == 3
    columns = ["ts", "irq", "cpu", "count", "per_s", "line_no"]
    got = pieced.frames["interrupts"][columns].astype({"irq": "string"})
    want = whole.frames["interrupts"][columns].astype({"irq": "string"})
    pd.testing.assert_frame_equal(got, want)
    assert got["per_s"].notna().sum() == want["per_s"].notna().sum() > 0


def test_status_counter_rates_continue_across_pieces() -> None:
    text = (FIXTURES / "mysqladmin" / "mariadb-10.11_ts-markers_ext_subset.txt").read_text()
    whole, pieced, seen = _both(mysqladmin, text, piece_bytes=1000)
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
    source = _pieced(processlist, text, len(good) // 3)
    assert [(w.line_no, w.code) for w in source.warnings] == [(w.line_no, w.code) for w in whole.warnings]
    assert source.warnings and source.warnings[-1].line_no == len(lines)


def test_a_member_that_is_not_the_format_raises_on_its_first_piece() -> None:
    with pytest.raises(ParseError, match="line 2"):
        parse_in_pieces(processlist, b"TS 1776790400.0 2026-04-21 16:53:20\n", io.BytesIO(b"hello\n"))


def test_line_numbers_count_newlines_only_whatever_the_statement_holds() -> None:
    # A statement with a form feed and a U+2028: str.splitlines would cut there and shift every
    # later line number; the member's lines (and the raw lines shown for them) end at "\n" only.
    text = _processlist(6, 2).replace("id = 101", "id = 101 /* a\x0cb\u2028c */")
    _, pieced, seen = _both(processlist, text, piece_bytes=700)
    assert len(seen) > 2
    lines = text.split("\n")
    for row in pieced.main.itertuples():
        assert lines[row.line_no - 1].startswith("*"), row.line_no
        assert lines[row.line_end - 1].lstrip().startswith("Info: SELECT"), row.line_end


def _kept(text: bytes, piece_bytes: int, chunk_bytes: int, monkeypatch) -> tuple[list[TextChunk], object]:
    monkeypatch.setattr("parsers.rawtext.CHUNK_BYTES", chunk_bytes)
    chunks: list[TextChunk] = []
    source = _pieced(processlist, text, piece_bytes, keep_text=lambda member, got: chunks.extend(got))
    return chunks, source


def test_the_text_kept_of_the_pieces_is_the_member_line_for_line(monkeypatch) -> None:
    text = _processlist(30, 3)
    chunks, _ = _kept(text.encode(), 900, 500, monkeypatch)
    assert len(chunks) > 10
    assert "".join(text_of(c.data) for c in chunks) == text  # each line once, the overlaps not repeated
    assert [c.line_start for c in chunks] == [1] + [c.line_end + 1 for c in chunks[:-1]]
    assert chunks[-1].line_end == text.count("\n")


def test_carriage_returns_are_line_ends_as_a_text_stream_reads_them(monkeypatch) -> None:
    # \r\n and lone \r, some of them cut between two reads: numbered as io.TextIOWrapper numbers them
    text = _processlist(12, 2)
    crlf = text.replace("\n", "\r\n").encode()
    crlf = crlf.replace(
        b"Info: SELECT * FROM t WHERE id = 1001\r\n", b"Info: SELECT * FROM t WHERE id = 1001\r"
    )
    want = io.TextIOWrapper(io.BytesIO(crlf), encoding="utf-8", newline=None).read()
    for piece_bytes in (97, 301, 1000):  # odd sizes: reads end between \r and \n
        chunks, source = _kept(crlf, piece_bytes, 256, monkeypatch)
        assert "".join(text_of(c.data) for c in chunks) == want
        lines = want.split("\n")
        for row in source.main.itertuples():
            assert lines[row.line_no - 1].startswith("*"), (piece_bytes, row.line_no)
            assert lines[row.line_end - 1].lstrip().startswith("Info: SELECT"), (piece_bytes, row.line_end)
        assert source.samples == 12


def test_invalid_utf8_is_read_as_windows_1252_with_a_warning_and_kept_as_bytes(monkeypatch) -> None:
    data = _processlist(4, 2).replace("WHERE id = 102\n", "WHERE name = 'caf\xe9'\n").encode("latin-1")
    chunks, source = _kept(data, 400, 300, monkeypatch)
    assert "caf\u00e9" in "".join(
        source.main["info"].dropna()
    )  # a pasted note's cp1252 byte (parsers/pasted.py)
    assert [w.code for w in source.warnings].count("not-utf8") >= 1
    assert "".join(text_of(c.data) for c in chunks) == data.decode("utf-8", "replace")


@pytest.mark.parametrize("marker", ["TS", "zzz"])
def test_the_cuts_do_not_depend_on_the_marker_search_window(monkeypatch, marker: str) -> None:
    text = _processlist(25, 3)
    if marker == "zzz":  # OSWatcher's markers instead of TS lines
        text = text.replace("TS 17767903", "zzz ***Tue Apr 21 16:51:41 UTC 2026 17767903")
    data = text.encode()

    def cuts() -> list[tuple[int, int, bytes]]:
        return [
            (p.first_line, p.overlap_lines, p.data)
            for p in split(data[:100], io.BytesIO(data[100:]), piece_bytes=700)
        ]

    monkeypatch.setattr("parsers.ingest.cutting.MARKER_WINDOW", 1 << 30)
    whole = cuts()
    monkeypatch.setattr(
        "parsers.ingest.cutting.MARKER_WINDOW", 16
    )  # smaller than a snapshot: the window doubles
    assert cuts() == whole and len(whole) > 10


def test_a_stream_that_can_only_read_is_cut_as_one_that_reads_into_a_buffer() -> None:
    class ReadOnly:
        def __init__(self, data: bytes) -> None:
            self.inner = io.BytesIO(data)

        def read(self, n: int = -1) -> bytes:
            return self.inner.read(n)

    data = _processlist(25, 3).encode()
    both = [
        [(p.first_line, p.overlap_lines, p.data) for p in split(data[:100], stream, piece_bytes=700)]
        for stream in (io.BytesIO(data[100:]), ReadOnly(data[100:]))
    ]
    assert both[0] == both[1] and len(both[0]) > 10
    assert all(type(p[2]) is bytes for p in both[1])


def test_pieces_get_smaller_once_the_worker_holds_a_lot() -> None:
    from parsers.ingest import cutting

    assert cutting.piece_bytes(200 << 20) == cutting.PIECE_BYTES
    assert (
        cutting.piece_bytes(cutting.SMALL_PIECES_ABOVE_BYTES + 1)
        == cutting.SMALL_PIECE_BYTES
        < cutting.PIECE_BYTES
    )


def test_small_pieces_are_never_larger_than_the_pieces_asked_for(monkeypatch) -> None:
    from parsers.ingest import cutting

    monkeypatch.setattr(cutting, "PIECE_BYTES", 20_000)
    assert cutting.piece_bytes(cutting.SMALL_PIECES_ABOVE_BYTES + 1) == 20_000
    assert cutting.piece_bytes(0, 1 << 20, "interrupts") == 20_000


def test_an_hour_of_processlist_or_ps_is_cut_in_larger_pieces_a_day_is_not() -> None:
    from parsers.ingest import cutting

    hour, day = 834_000_000, 2_000_000_000
    large = cutting.piece_bytes(200 << 20, hour, "processlist")
    assert large == cutting.piece_bytes(200 << 20, hour, "ps") == 12 << 20
    # no gain from larger pieces, and the same CPU per MB in small ones, which hold half the memory
    assert cutting.piece_bytes(200 << 20, hour, "interrupts") == cutting.SMALL_PIECE_BYTES
    assert cutting.piece_bytes(200 << 20, day, "processlist") == cutting.PIECE_BYTES
    assert cutting.piece_bytes(200 << 20, None, "processlist") == cutting.PIECE_BYTES  # size unknown
    assert cutting.piece_bytes(cutting.SMALL_PIECES_ABOVE_BYTES + 1, hour, "ps") == cutting.SMALL_PIECE_BYTES


def test_joining_pieces_holds_the_member_once_not_twice() -> None:
    """Parsed frames keep their numeric columns in one 2-D block; joined column by column from
    views, each part's block would live until its last column is joined (the member held twice)."""
    import tracemalloc

    import numpy as np

    from parsers.base import Clock, ParsedSource
    from parsers.ingest.joining import join

    rows, columns, parts = 40_000, 12, 12
    member = rows * parts * (columns + 1) * 8
    tracemalloc.start()  # before the parts are made: their frees count too
    try:
        sources = []
        for p in range(parts):
            block = np.arange(rows * columns, dtype="int64").reshape(rows, columns) + p
            frame = pd.DataFrame(block, columns=[f"c{i}" for i in range(columns)])  # one 2-D block
            frame.insert(0, "line_no", np.arange(rows, dtype="int64") + p * rows + 1)
            sources.append(ParsedSource("vmstat", "m", {"vmstat": frame}, Clock.PER_LINE))
        del block, frame
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        joined = join(sources)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    frame = joined.frames["vmstat"]
    assert len(frame) == rows * parts and frame["line_no"].is_monotonic_increasing
    assert int(frame["c3"].iloc[rows]) == 3 + 1  # the second part's first row, column c3
    assert peak < member * 0.5, f"the join allocated {peak:,} bytes more for a member of {member:,}"
