"""Parse a large snapshot capture piece by piece, so a one-hour member is never held whole.

Captures made of snapshots after ``TS``/``zzz`` markers (processlist, ps, performance_schema threads,
/proc/meminfo, /proc/interrupts, mysqladmin extended-status) are cut at a marker every ``PIECE_CHARS`` characters. Each piece
is parsed by the format's own ``parse`` and handed to ``on_piece`` (the ingest writes its detail rows
and keeps a reduced copy); the reduced pieces are joined at the end. Every piece after the first
starts again with the last snapshot of the one before, so that formats whose values are rates
between snapshots (/proc/interrupts counters) get the rate of their first snapshot; the rows and
warnings of that repeated snapshot are then dropped. Line numbers are shifted to the member's.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TextIO

import pandas as pd

from parsers.base import ClockHints, ParsedSource, ParseError, ParseWarning

#: Characters of text per piece (about 8 MB): large enough that a parser's fixed costs do not show,
#: small enough that the transient arrays of a parse (several times the text) stay in the low
#: hundreds of MB.
PIECE_CHARS = 8 * 1024 * 1024
#: Formats made of snapshots after markers, which can be cut at a marker. mysqladmin is among them
#: because a capture with a TS line before each table comes from one `mysqladmin extended-status`
#: run per table, so its tables are absolute (a relative `ext -r -i` run writes no markers).
SNAPSHOT_FORMATS = frozenset({"processlist", "ps", "threads", "meminfo", "interrupts", "mysqladmin"})
MARKERS = ("\nTS ", "\nzzz ")
LINE_COLUMNS = ("line_no", "line_end")


@dataclass(frozen=True, slots=True)
class Piece:
    """``text`` starting at member line ``first_line``; its first ``overlap_lines`` lines repeat the
    last snapshot of the piece before."""

    text: str
    first_line: int
    overlap_lines: int


def _last_marker(data: str, after: int) -> int:
    """Start of the last marker line that starts at index ``after`` or later (-1 when there is none)."""
    found = max(data.rfind(m, max(after - 1, 0)) for m in MARKERS)
    if found >= 0 and found + 1 >= after:
        return found + 1
    return 0 if after == 0 and data.startswith(("TS ", "zzz ")) else -1


def split(head: str, rest: TextIO, *, piece_chars: int = PIECE_CHARS) -> Iterator[Piece]:
    r"""Cut ``head`` + ``rest`` into pieces that end just before a marker line.

    >>> import io
    >>> text = "TS 1 a\nx\nTS 2 b\ny\nTS 3 c\nz\n"
    >>> [(p.first_line, p.overlap_lines, p.text) for p in split("", io.StringIO(text), piece_chars=8)]
    [(1, 0, 'TS 1 a\nx\n'), (1, 2, 'TS 1 a\nx\nTS 2 b\ny\n'), (3, 2, 'TS 2 b\ny\nTS 3 c\nz\n')]
    """
    carry, first_line, overlap = head, 1, ""
    while True:
        block = rest.read(piece_chars)
        data = carry + block
        if not block:
            if data[len(overlap) :].strip():
                yield Piece(data, first_line, overlap.count("\n"))
            return
        cut = _last_marker(data, len(overlap) + 1)  # a cut that leaves at least one new line
        if cut < 0:
            carry = data  # one snapshot longer than a piece: read on until the next marker
            continue
        piece = data[:cut]
        yield Piece(piece, first_line, overlap.count("\n"))
        last = _last_marker(piece, len(overlap))
        overlap = piece[last:] if last >= 0 else ""
        first_line += piece.count("\n") - overlap.count("\n")
        carry = overlap + data[cut:]


def _shift_lines(source: ParsedSource, offset: int, drop_before: int) -> ParsedSource:
    """Line numbers moved by ``offset``; rows and warnings of lines before ``drop_before`` dropped."""
    frames = {}
    for name, frame in source.frames.items():
        frame = frame.copy()
        for column in LINE_COLUMNS:
            if column in frame:
                frame[column] = frame[column] + offset
        if "line_no" in frame and drop_before:
            frame = frame[frame["line_no"] >= drop_before].reset_index(drop=True)
        frames[name] = frame
    warnings = [
        ParseWarning(w.line_no + offset if w.line_no else 0, w.code, w.message)
        for w in source.warnings
        if not drop_before or w.line_no == 0 or w.line_no + offset >= drop_before
    ]
    return dataclasses.replace(source, frames=frames, warnings=warnings)


def _join(pieces: list[ParsedSource]) -> ParsedSource:
    first = pieces[0]
    names = list(dict.fromkeys(name for p in pieces for name in p.frames))
    frames = {}
    for name in names:
        parts = [p.frames[name] for p in pieces if name in p.frames and len(p.frames[name])]
        if not parts:
            frames[name] = first.frames.get(name, pd.DataFrame())
            continue
        joined = pd.concat(parts, ignore_index=True)
        # the pieces' categories differ, and concat turns such columns into strings: a category
        # again (a few IRQ names, states, users repeated millions of times)
        categorical = {
            c for part in parts for c, t in part.dtypes.items() if isinstance(t, pd.CategoricalDtype)
        }
        for column in categorical:
            if not isinstance(joined[column].dtype, pd.CategoricalDtype):
                joined[column] = joined[column].astype("category")
        frames[name] = joined
    warnings = list(itertools.chain.from_iterable(p.warnings for p in pieces))
    return dataclasses.replace(first, frames=frames, warnings=warnings)


def parse_in_pieces(
    module: ModuleType,
    head_lines: Iterable[str],
    rest: TextIO,
    *,
    member: str,
    clock: ClockHints,
    on_piece: Callable[[ParsedSource], ParsedSource] | None = None,
    piece_chars: int = PIECE_CHARS,
) -> ParsedSource:
    """Parse a snapshot capture piece by piece with ``module.parse``; see the module docstring.

    Raises ``ParseError`` when the first piece is not the format; a later piece that fails keeps
    what was read before it and adds a ``cut`` warning naming the line.
    """
    kept: list[ParsedSource] = []
    for piece in split("".join(head_lines), rest, piece_chars=piece_chars):
        try:
            # a file object: block parsers read it whole, line parsers split it at "\n" only, as
            # the member's own lines are counted (str.splitlines would also cut at \f, \x1c ...)
            parsed = module.parse(io.StringIO(piece.text), member=member, clock=clock)
        except ParseError as exc:
            if not kept:
                raise
            line = exc.line_no + piece.first_line - 1
            kept[-1].warnings.append(
                ParseWarning(line, "cut", f"the rest of the member was not read: line {line}: {exc.reason}")
            )
            break
        drop_before = piece.first_line + piece.overlap_lines if piece.overlap_lines else 0
        parsed = _shift_lines(parsed, piece.first_line - 1, drop_before)
        kept.append(on_piece(parsed) if on_piece else parsed)
    if not kept:
        raise ParseError(member, 1, "", "no snapshot found")
    return _join(kept)
