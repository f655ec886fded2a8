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
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol, TextIO

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
    block = rest.read(piece_chars)
    while True:
        following = rest.read(piece_chars) if block else ""  # read ahead: is this the last block?
        data = carry + block
        if not following:
            if data[len(overlap) :].strip():
                yield Piece(data, first_line, overlap.count("\n"))
            return
        cut = _last_marker(data, len(overlap) + 1)  # a cut that leaves at least one new line
        if cut < 0:
            carry, block = data, following  # one snapshot longer than a piece: read on
            continue
        piece = data[:cut]
        yield Piece(piece, first_line, overlap.count("\n"))
        last = _last_marker(piece, len(overlap))
        overlap = piece[last:] if last >= 0 else ""
        first_line += piece.count("\n") - overlap.count("\n")
        carry, block = overlap + data[cut:], following


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


def parse_piece(module: ModuleType, piece: Piece, *, member: str, clock: ClockHints) -> ParsedSource:
    """One piece parsed by ``module.parse``, its line numbers the member's, the rows and warnings
    of its overlap (the last snapshot of the piece before) dropped.

    Raises ``ParseError`` (with the member's line number) when the piece cannot be read.
    """
    try:
        # a file object: block parsers read it whole, line parsers split it at "\n" only, as the
        # member's own lines are counted (str.splitlines would also cut at \f, \x1c, U+2028 ...)
        parsed = module.parse(io.StringIO(piece.text), member=member, clock=clock)
    except ParseError as exc:
        raise ParseError(member, exc.line_no + piece.first_line - 1, exc.line, exc.reason) from exc
    drop_before = piece.first_line + piece.overlap_lines if piece.overlap_lines else 0
    return _shift_lines(parsed, piece.first_line - 1, drop_before)


class PieceRunner(Protocol):
    """Parses pieces elsewhere (``parsers.pool.PiecePool``): ``submit`` returns a future of what
    ``parse_piece`` returns (reduced by the runner's own reducer, if it has one)."""

    processes: int

    def submit(self, module: ModuleType, piece: Piece, *, member: str, clock: ClockHints) -> Future: ...


def parse_in_pieces(
    module: ModuleType,
    head_lines: Iterable[str],
    rest: TextIO,
    *,
    member: str,
    clock: ClockHints,
    on_piece: Callable[[ParsedSource], ParsedSource] | None = None,
    piece_chars: int | None = None,
    runner: PieceRunner | None = None,
) -> ParsedSource:
    """Parse a snapshot capture piece by piece with ``module.parse``; see the module docstring.

    With a ``runner`` (a pool of parse processes), a member of more than one piece has its pieces
    parsed in parallel, at most ``runner.processes + 1`` in flight; ``on_piece`` still sees them in
    order, in this process. Raises ``ParseError`` when the first piece is not the format; a later
    piece that fails keeps what was read before it and adds a ``cut`` warning naming the line.
    """
    kept: list[ParsedSource] = []
    pending: deque[Future | Piece] = deque()
    pieces = split("".join(head_lines), rest, piece_chars=piece_chars or PIECE_CHARS)

    def take() -> bool:
        """Parse (or collect) the oldest pending piece; False once a piece could not be read."""
        job = pending.popleft()
        try:
            if isinstance(job, Piece):
                parsed = parse_piece(module, job, member=member, clock=clock)
            else:
                parsed = job.result()
        except ParseError as exc:
            if not kept:
                raise
            kept[-1].warnings.append(
                ParseWarning(
                    exc.line_no,
                    "cut",
                    f"the rest of the member was not read: line {exc.line_no}: {exc.reason}",
                )
            )
            return False
        kept.append(on_piece(parsed) if on_piece else parsed)
        return True

    try:
        first = next(pieces, None)
        if first is not None:
            pending.append(first)
        for piece in pieces:  # a second piece: the member is worth the runner's processes
            if runner is not None and isinstance(pending[0], Piece):
                pending[0] = runner.submit(module, pending[0], member=member, clock=clock)
            pending.append(runner.submit(module, piece, member=member, clock=clock) if runner else piece)
            while len(pending) > (runner.processes if runner else 0):
                if not take():
                    return _join(kept)
        while pending:
            if not take():
                break
    finally:
        for job in pending:
            if isinstance(job, Future):
                job.cancel()
    if not kept:
        raise ParseError(member, 1, "", "no snapshot found")
    return _join(kept)
