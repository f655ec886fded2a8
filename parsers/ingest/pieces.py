"""Parse a bundle's members in pieces, several at once, so that a one-hour member is never held whole.

Captures made of snapshots after ``TS``/``zzz`` markers (processlist, ps, performance_schema threads,
/proc/meminfo, /proc/interrupts, mysqladmin extended-status) are cut at a marker every
``PIECE_BYTES`` (:func:`split`); any other member up to ``WHOLE_MAX_BYTES`` is one piece. Pieces are
bytes as uploaded, with universal newlines applied (``\\r\\n`` and a lone ``\\r`` become ``\\n``, as
``io.TextIOWrapper(newline=None)`` reads them), so lines are numbered as the parsers number them.

A piece is decoded (UTF-8 with replacement) and parsed by the format's own ``parse`` where a
runner puts it: in this process (:class:`LocalRunner`) or in a parse process
(``parsers.ingest.pool.PiecePool``). :class:`Work` says what else is done there: a reducer (a
callable handed in by the caller, e.g. the analysis's ``analyzer.timeline.timeline.reduce_piece``) applied to the
parsed piece, and the piece's text compressed into chunks (``parsers.rawtext``), so that only
reduced frames and compressed text come back. :class:`Pipeline` keeps pieces of consecutive
members in flight together and hands back each member's result, in member order.

Every piece after the first starts again with the last snapshot of the one before, so that formats
whose values are rates between snapshots (/proc/interrupts counters) get the rate of their first
snapshot; the rows and warnings of that repeated snapshot are then dropped. Line numbers are
shifted to the member's.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import ModuleType
from typing import BinaryIO, Protocol

import numpy as np
import pandas as pd

from parsers import damage, pasted, registry, truncation
from parsers.base import (
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    lines_of,
    parse_marker,
)
from parsers.ingest.joining import join
from parsers.rawtext import TextChunk, chunks_of

#: Bytes of text per piece (8 MiB): large enough that a parser's fixed costs do not show, small
#: enough that the transient arrays of a parse (several times the text) stay near 200 MB a process.
PIECE_BYTES = 8 << 20
#: Pieces of a member of a format declaring ``large_pieces`` (``parsers.base.FormatTraits``) of at most ``LARGE_PIECES_UP_TO_MEMBER_BYTES`` (an
#: hour of a busy server's processlist, 834 MB, or ps) are this many times ``PIECE_BYTES`` (12 MiB)
#: while the worker holds at most ``SMALL_PIECES_ABOVE_BYTES``: the whole ingest of the hour takes
#: about 5 % less (fewer pieces, fewer of a parse's costs per piece) for about 60 MB more in each
#: parse process; what the worker keeps of such a member leaves room for that.
LARGE_PIECE_FACTOR = 1.5
#: Longer members are cut into ``PIECE_BYTES`` pieces or smaller: what the worker keeps of them (a
#: day of ps or processlist) grows while their pieces are parsed (with larger pieces a day of 500
#: sessions peaked at 967 MiB, against 905 MiB).
LARGE_PIECES_UP_TO_MEMBER_BYTES = 900 << 20
#: Bytes per piece once the worker holds ``SMALL_PIECES_ABOVE_BYTES`` (``piece_bytes``): a day-long
#: dense capture's kept frames leave less room for the parse processes, which stay near 110-120 MB
#: with pieces of this size (a day's processlist and /proc/interrupts: the same CPU per MB as in
#: 4 MiB pieces, 12 MB less in each parse process; mysqladmin 6 % more CPU).
SMALL_PIECE_BYTES = 3 << 20
#: Resident size of the worker past which members are cut into ``SMALL_PIECE_BYTES`` pieces.
SMALL_PIECES_ABOVE_BYTES = 480 << 20


def piece_bytes(held: int, member_bytes: int | None = None, fmt: str = "") -> int:
    """The size of the pieces to cut a member of format ``fmt`` and ``member_bytes`` (None: unknown)
    into when the process that keeps what they give back holds ``held`` bytes (its resident size):
    ``SMALL_PIECE_BYTES`` past ``SMALL_PIECES_ABOVE_BYTES`` or for a format declaring
    ``small_pieces`` (``parsers.base.FormatTraits``), else ``LARGE_PIECE_FACTOR`` x
    ``PIECE_BYTES`` for a member of a format declaring ``large_pieces`` of known size up to
    ``LARGE_PIECES_UP_TO_MEMBER_BYTES``, else ``PIECE_BYTES``: the worker and its parse processes
    stay under 1 GiB together on a day-long capture (DESIGN.md, Targets)."""
    if held > SMALL_PIECES_ABOVE_BYTES or registry.traits(fmt).small_pieces:
        return SMALL_PIECE_BYTES
    if registry.traits(fmt).large_pieces and (member_bytes or 1 << 62) <= LARGE_PIECES_UP_TO_MEMBER_BYTES:
        return int(PIECE_BYTES * LARGE_PIECE_FACTOR)
    return PIECE_BYTES


#: A member of one piece at least this long goes to parse processes that are already running (started
#: ahead of the bundle, or by a large upload) rather than being parsed here while they wait: this
#: process reads on meanwhile.
WARM_PIECE_BYTES = 1 << 20

#: A member that is not cut at markers and is at most this long is parsed whole, as one piece
#: (longer ones are read as a stream by the worker itself).
WHOLE_MAX_BYTES = 64 << 20
MARKERS = (b"\nTS ", b"\nzzz ")


def in_snapshots(fmt: str, head: list[str]) -> bool:
    """Whether a member of format ``fmt`` whose first lines are ``head`` is cut at its markers: a
    format declaring ``markers`` (``parsers.base.FormatTraits``) whose head holds a ``TS``/``zzz``
    marker."""
    return registry.traits(fmt).markers and any(parse_marker(line) for line in head)


LINE_COLUMNS = ("line_no", "line_end")


@dataclass(frozen=True, slots=True)
class Piece:
    """``data`` (UTF-8 bytes, ``\\n`` line ends) starting at member line ``first_line``; its first
    ``overlap_lines`` lines (``overlap_bytes`` bytes) repeat the last snapshot of the piece before."""

    data: bytes
    first_line: int
    overlap_lines: int = 0
    overlap_bytes: int = 0
    #: the last piece of its member (its end is the member's: a missing last line end is said)
    last: bool = False


class Newlines:
    """Universal newlines on bytes read block by block: ``\\r\\n`` and a lone ``\\r`` become
    ``\\n``, a ``\\r`` at the end of a block waiting for the next one (it may start with ``\\n``).

    >>> nl = Newlines()
    >>> nl(b"a\\r"), nl(b"\\nb\\rc\\r"), nl(b"", final=True)
    (b'a', b'\\nb\\nc', b'\\n')
    """

    def __init__(self) -> None:
        self.cr = False

    def __call__(self, block: bytes, *, final: bool = False) -> bytes:
        if self.cr:
            block, self.cr = b"\r" + block, False
        if b"\r" not in block:
            return block
        if block.endswith(b"\r") and not final:
            block, self.cr = block[:-1], True
        return block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _blocks(head: bytes, rest: BinaryIO, size: int) -> Iterator[bytes | bytearray]:
    """``head`` then ``rest`` read ``size`` bytes at a time, newlines translated (see ``Newlines``).

    ``rest`` is read into two buffers used in turn (``readinto``), so a block is only valid until
    the second block after it is asked for: the caller reads one block ahead and copies what it
    keeps. A fresh block of a piece's size per read would cost its pages afresh each time in a worker whose
    large blocks are mapped (``parsers.ingest.malloc.steady_heap``)."""
    nl = Newlines()
    if head:
        yield nl(head)
    buffers = (bytearray(size), bytearray(size))
    for turn in itertools.count():
        buffer = buffers[turn % 2]
        try:
            n = rest.readinto(buffer)  # type: ignore[attr-defined]
        except (AttributeError, NotImplementedError, io.UnsupportedOperation):  # a stream with read() only
            block = rest.read(size)
            n = len(block)
            buffer[:n] = block
        if not n:
            break
        yield nl(buffer if n == size else buffer[:n])
    if tail := nl(b"", final=True):
        yield tail


#: Bytes at the end of a block searched first for its last marker (a snapshot is usually shorter).
MARKER_WINDOW = 1 << 16


def _last_marker(data: bytes, after: int) -> int:
    """Start of the last marker line that starts at index ``after`` or later (-1 when there is none).
    Searched backwards in windows that double: a member uses one kind of marker, and looking for
    the other through a whole piece would cost more than the rest of the cut."""
    lowest = max(after - 1, 0)
    window = MARKER_WINDOW
    while True:
        start = max(lowest, len(data) - window)
        found = max(data.rfind(m, start) for m in MARKERS)
        if found >= 0 or start == lowest:
            break
        window *= 2
    if found >= 0 and found + 1 >= after:
        return found + 1
    return 0 if after == 0 and data.startswith((b"TS ", b"zzz ")) else -1


#: Bytes compared at a time by ``_lines``: its temporary array stays below the mmap threshold that
#: the worker fixes (``parsers.ingest.malloc.steady_heap``), so it is reused rather than mapped afresh.
LINES_STRIDE = 1 << 19


def _lines(data: bytes) -> int:
    """Line ends in ``data`` (NumPy counts them about three times faster than ``bytes.count``)."""
    codes = np.frombuffer(data, dtype=np.uint8)
    return sum(
        int(np.count_nonzero(codes[i : i + LINES_STRIDE] == 10)) for i in range(0, len(codes), LINES_STRIDE)
    )


def split(head: bytes, rest: BinaryIO, *, piece_bytes: int | None = None) -> Iterator[Piece]:
    r"""Cut ``head`` + ``rest`` (bytes as uploaded) into pieces that end just before a marker line.

    >>> import io
    >>> text = b"TS 1 a\nx\nTS 2 b\ny\nTS 3 c\nz\n"
    >>> [(p.first_line, p.overlap_lines, p.data) for p in split(b"", io.BytesIO(text), piece_bytes=8)]
    [(1, 0, b'TS 1 a\nx\n'), (1, 2, b'TS 1 a\nx\nTS 2 b\ny\n'), (3, 2, b'TS 2 b\ny\nTS 3 c\nz\n')]
    """
    blocks = _blocks(head, rest, piece_bytes or PIECE_BYTES)
    carry, first_line, overlap = b"", 1, b""
    block = next(blocks, b"")
    while True:
        following = next(blocks, b"") if block else b""  # read ahead: is this the last block?
        if not following:
            data = carry + block
            if data[len(overlap) :].strip():
                yield Piece(data, first_line, _lines(overlap), len(overlap), last=True)
            return
        # The cut: the last marker line after the overlap (so that the piece adds a line). It is
        # nearly always in the block just read, and the piece is then made in one copy of the carry
        # and the block's head; else the two are joined and searched (a snapshot at the block's start).
        at = _last_marker(block, 1)
        if at > 0:
            after: bytes | memoryview = memoryview(block)[at:]
            piece = b"".join((carry, memoryview(block)[:at]))
        else:
            data = carry + block
            cut = _last_marker(data, len(overlap) + 1)
            if cut < 0:
                carry, block = data, following  # one snapshot longer than a piece: read on
                continue
            piece, after = data[:cut], data[cut:]
        yield Piece(piece, first_line, _lines(overlap), len(overlap))
        last = _last_marker(piece, len(overlap))
        overlap = piece[last:] if last >= 0 else b""
        first_line += _lines(piece) - _lines(overlap)
        carry, block = b"".join((overlap, after)), following


#: Bytes per piece of a member cut at line ends (``SMALL_PIECE_BYTES``, 3 MiB): the worker keeps
#: every row of such a member (nothing of a vmstat row is reduced away), so its parse processes get
#: the smaller pieces. A 300 MB ``vmstat -t`` member: the tree peaked at 974 MiB with 8 MiB pieces,
#: 940 MiB with 4 MiB, for the same CPU time (13.6 s against 13.4 s).
LINE_PIECE_BYTES = SMALL_PIECE_BYTES
#: Lines of the column header that every piece of a member cut at line ends starts again with
#: (vmstat's group line and its column names).
LINE_HEADER_LINES = 2


def in_lines(fmt: str, head: list[str]) -> bool:
    """Whether a member of format ``fmt`` whose first lines are ``head`` is cut at line ends: a
    format whose rows stand alone once their column header is known, with a time on every row: its
    ``timed_rows`` word (``parsers.base.FormatTraits``: vmstat's ``timestamp``) is in the header.
    Such a member too long to parse whole is cut at line ends (:func:`split_lines`) rather than
    read as one stream."""
    mark = registry.traits(fmt).timed_rows
    return mark is not None and any(mark in line for line in head[:5])


def split_lines(
    head: bytes, rest: BinaryIO, *, header_lines: int, piece_bytes: int | None = None
) -> Iterator[Piece]:
    r"""Cut ``head`` + ``rest`` at line ends into pieces of about ``piece_bytes`` (default
    ``LINE_PIECE_BYTES``). Every piece after
    the first starts again with the member's first ``header_lines`` lines (the column header) and
    the last line of the piece before (a first row that a parser would take for the since-boot
    report); they are its overlap, their rows and warnings dropped.

    >>> import io
    >>> cut = split_lines(b"", io.BytesIO(b"h\na\nb\nc\n"), header_lines=1, piece_bytes=4)
    >>> [(p.first_line, p.overlap_lines, p.data) for p in cut]
    [(1, 0, b'h\na\n'), (1, 2, b'h\na\nb\nc\n')]
    """
    blocks = _blocks(head, rest, piece_bytes or LINE_PIECE_BYTES)
    carry = b""
    header: bytes | None = None
    first_line = 1
    overlap = b""
    block = next(blocks, b"")
    while block:
        following = next(blocks, b"")
        data = carry + bytes(block)
        if header is None:
            at = -1
            for _ in range(header_lines):
                at = data.find(b"\n", at + 1)
            header = data[: at + 1] if at >= 0 else b""
        cut = data.rfind(b"\n") + 1 if following else len(data)
        if cut <= 0:
            carry, block = data, following
            continue
        piece, carry = data[:cut], data[cut:]
        if piece.strip():
            lines = _lines(overlap)
            yield Piece(
                overlap + piece, first_line - lines, lines, len(overlap), last=not following and not carry
            )
        first_line += _lines(piece)
        last = piece.rstrip(b"\n").rfind(b"\n")
        overlap = header + piece[last + 1 :] if header else b""
        block = following
    if carry.strip():
        lines = _lines(overlap)
        yield Piece(overlap + carry, first_line - lines, lines, len(overlap), last=True)


def whole(data: bytes) -> Piece:
    """A member read whole (bytes as uploaded) as one piece."""
    return Piece(Newlines()(data, final=True), 1, last=True)


def _shift_lines(source: ParsedSource, offset: int, drop_before: int) -> ParsedSource:
    """Line numbers moved by ``offset``; rows and warnings of lines before ``drop_before`` dropped."""
    if not offset and not drop_before:
        return source
    frames = {}
    for name, frame in source.frames.items():
        if "line_no" in frame and drop_before:
            frame = _from_line(frame, drop_before - offset)
        frame = frame.copy(deep=False)  # the line columns are replaced, the others shared
        for column in LINE_COLUMNS:
            if column in frame:
                frame[column] = frame[column] + offset
        frames[name] = frame
    warnings = [
        _shifted(w, offset)
        for w in source.warnings
        if not drop_before or w.line_no == 0 or w.line_no + offset >= drop_before
    ]
    return dataclasses.replace(source, frames=frames, warnings=warnings)


def _shifted(warning: ParseWarning, offset: int) -> ParseWarning:
    """``warning`` of a piece with its line moved by ``offset`` to the member's; a damage warning's
    message names its line too (``line 12``), moved with it."""
    if not warning.line_no:
        return warning
    message = warning.message
    if offset and warning.code in damage.DAMAGE_CODES:
        message = re.sub(rf"\bline {warning.line_no}\b", f"line {warning.line_no + offset}", message)
    return ParseWarning(warning.line_no + offset, warning.code, message)


def _from_line(frame: pd.DataFrame, first: int) -> pd.DataFrame:
    """The rows of ``frame`` whose ``line_no`` is ``first`` or later: a slice when the rows are in
    line order (as parsers give them; the overlap is then a head), else a copy of those rows."""
    line_no = frame["line_no"]
    if line_no.dtype.kind in "iu" and line_no.is_monotonic_increasing:
        return frame.iloc[int(np.searchsorted(line_no.to_numpy(), first)) :].reset_index(drop=True)
    return frame[line_no >= first].reset_index(drop=True)


class _Text:
    r"""A piece's text read as a text file: ``read(n)`` by blocks, or its lines cut at ``\n`` only,
    as the member's lines are counted. (``io.StringIO`` would hold it as four bytes a character.)"""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self, n: int = -1) -> str:
        end = len(self.text) if n < 0 else self.pos + n
        out = self.text[self.pos : end]
        self.pos += len(out)
        return out

    def __iter__(self) -> Iterator[str]:
        text = self.text[self.pos :] if self.pos else self.text
        self.pos = len(self.text)
        return iter(lines_of(text))


def parse_piece(
    module: ModuleType, piece: Piece, *, member: str, clock: ClockHints, **options: object
) -> ParsedSource:
    """One piece decoded (UTF-8, other bytes as Windows-1252: parsers/pasted.py) and parsed by ``module.parse``, its line numbers
    the member's, the rows and warnings of its overlap (the last snapshot of the piece before) dropped.

    ``options``: keyword arguments of ``module.parse`` (``Work.options``). Raises ``ParseError`` (with
    the member's line number) when the piece cannot be read.
    """
    text, not_utf8 = pasted.decode(piece.data)
    text, clipped = damage.clip_long_lines(text, module.FORMAT, piece.data if not_utf8 is None else None)
    if piece.first_line == 1 and piece.last:
        text, twice = damage.drop_second_copy(text)
        clipped += twice
    clipped += damage.nul_warning(text)

    def parse(lines: Iterable[str]) -> ParsedSource:
        return module.parse(lines, member=member, clock=clock, **options)

    try:
        parsed = parse(_Text(text))
    except Exception as exc:  # noqa: BLE001 - a damaged line: salvaged, else raised with the member's line
        parsed = (
            _as_pasted(module, piece, text, member, clock, options) if isinstance(exc, ParseError) else None
        )
        if parsed is None:
            try:
                parsed = damage.parse_salvaging(parse, text, member=member, error=exc)
            except ParseError as final:
                raise ParseError(
                    member, final.line_no + piece.first_line - 1, final.line, final.reason
                ) from final
    parsed.warnings[:0] = clipped
    if not_utf8 is not None:
        parsed.warnings.append(not_utf8)
    damage.check_source(
        parsed, jumps=piece.first_line == 1 and piece.last
    )  # a whole member: else once joined
    if piece.last and (
        cut := damage.truncation_warning(piece.data, 1) or truncation.truncated_block(parsed, text)
    ):
        parsed.warnings.append(cut)
    drop_before = piece.first_line + piece.overlap_lines if piece.overlap_lines else 0
    return _shift_lines(parsed, piece.first_line - 1, drop_before)


def _as_pasted(
    module: ModuleType, piece: Piece, text: str, member: str, clock: ClockHints, options: dict[str, object]
) -> ParsedSource | None:
    """A small whole member the parser refused, read again as a capture pasted into a note: the
    prose and ``#`` lines around it blanked (``parsers.pasted.strip_note``), said in a warning; None
    when that changes nothing or still fails."""
    if piece.first_line != 1 or piece.overlap_lines or len(piece.data) > pasted.PASTED_MAX_BYTES:
        return None
    stripped, skipped = pasted.strip_note(text)
    if not skipped:
        return None
    try:
        parsed = module.parse(_Text(stripped), member=member, clock=clock, **options)
    except ParseError:
        return None
    parsed.warnings.insert(
        0,
        ParseWarning(
            skipped[0],
            "pasted-note",
            f"lines {pasted.ranges(skipped)} skipped: prose or # comments around a pasted capture",
        ),
    )
    return parsed


@dataclass(frozen=True, slots=True)
class Done:
    """A parsed piece (reduced when the work says so) and its new lines as compressed chunks."""

    source: ParsedSource
    text: tuple[TextChunk, ...] = ()


@dataclass(frozen=True, slots=True)
class Work:
    """What a runner does with a piece: parse it, then apply ``reduce`` (a callable, ``ParsedSource``
    -> ``ParsedSource``, handed in by whoever runs the ingest: this package does not know the
    analysis) and, with ``keep_text``, compress the lines the piece adds (not its overlap) into
    ``parsers.rawtext`` chunks. A ``Work`` given to parse processes travels to them by pickle, so its
    reducer must be picklable: a module-level function (pickled by its name) or an instance of a
    module-level class.

    A reducer may tell the parsers what it drops anyway, so that they need not build it: its
    ``parse_options`` attribute (format -> keyword arguments of that format's ``parse``, e.g.
    ``{"ps": {"states": ...}}``) is handed to the parser of each piece (``options``).

    ``memory_bytes``: the memory a parse process that runs this work may take (its data segment,
    ``RLIMIT_DATA``: heap and private mappings, set by the process when it reads the ``Work``,
    ``parsers.ingest.pool.limit_memory``); 0 for no limit. A piece that needs more fails its member
    alone (``pool.OutOfMemory``). Not applied where a piece is parsed in the caller's process."""

    reduce: Callable[[ParsedSource], ParsedSource] | None = None
    keep_text: bool = False
    memory_bytes: int = 0

    def options(self, fmt: str) -> dict[str, object]:
        """Keyword arguments for the parser of ``fmt``: the reducer's ``parse_options`` for it."""
        return dict(getattr(self.reduce, "parse_options", {}).get(fmt, {}))

    def __call__(self, fmt: str, piece: Piece, *, member: str, clock: ClockHints) -> Done:
        module = registry.by_format(fmt)
        source = self.reduced(parse_piece(module, piece, member=member, clock=clock, **self.options(fmt)))
        text: tuple[TextChunk, ...] = ()
        if self.keep_text:
            first = piece.first_line + piece.overlap_lines
            text = tuple(chunks_of(piece.data, first, skip=piece.overlap_bytes))
        return Done(source, text)

    def reduced(self, source: ParsedSource) -> ParsedSource:
        return self.reduce(source) if self.reduce is not None else source


#: Work that only parses.
PARSE_ONLY = Work()


class Runner(Protocol):
    """Runs ``Work`` on pieces: ``submit`` returns a future of its ``Done``, or of the
    ``ParseError`` of a piece that is not the format. ``processes``: pieces it parses at once
    besides this process (0: it parses in this process); ``started``: a piece went to it;
    ``running``: it takes a piece without starting anything (its processes are up, started ahead of
    the bundle or by a piece; always, for one that parses in this process)."""

    processes: int
    started: bool
    running: bool
    work: Work

    def submit(self, fmt: str, piece: Piece, *, member: str, clock: ClockHints) -> Future: ...


class LocalRunner:
    """Parses each piece in this process when it is submitted (the future is done on return)."""

    processes = 0
    started = True
    running = True

    def __init__(self, work: Work = PARSE_ONLY) -> None:
        self.work = work

    def submit(self, fmt: str, piece: Piece, *, member: str, clock: ClockHints) -> Future:
        future: Future = Future()
        try:
            future.set_result(self.work(fmt, piece, member=member, clock=clock))
        except Exception as exc:  # noqa: BLE001 - handed to whoever takes the result, as a pool does
            future.set_exception(exc)
        return future


#: Pieces of a member joined into one part as soon as this many are kept apart (``_Member``): a day
#: of processlist comes back as about 500 reduced pieces, whose frames held apart take half again
#: the memory of the same rows joined (each piece's frame and column objects, its categories).
JOIN_EVERY_PIECES = 32


@dataclass(slots=True)
class _Member:
    """A member whose pieces are in flight; ``done`` gets its joined source or the exception.

    ``kept``: what came back so far, every ``JOIN_EVERY_PIECES`` pieces joined into one part
    (``join``: the same rows, warnings and meta as when all are joined at the end)."""

    name: str
    done: Callable[[ParsedSource | Exception], None]
    kept: list[ParsedSource] = field(default_factory=list)
    error: Exception | None = None
    stopped: bool = False  # a piece failed: later pieces are not read
    aborted: bool = False  # the archive broke inside the member: nothing is reported
    pieces: int = 0  # pieces kept, joined or not
    joined: int = 0  # the leading parts of ``kept`` that are joins of pieces
    main: str | None = None  # the name of the first kept piece's first frame
    in_time: bool = True  # the ``main`` frame of every kept piece is in time order

    def take(self, future: Future, keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None) -> None:
        try:
            done: Done = future.result()
        except ParseError as exc:
            if not self.stopped:
                if self.kept:  # what was read before stays; the cut is named
                    self.kept[-1].warnings.append(
                        ParseWarning(
                            exc.line_no,
                            "cut",
                            f"the rest of the member was not read: line {exc.line_no}: {exc.reason}",
                        )
                    )
                else:
                    self.error = exc
            self.stopped = True
            return
        except Exception as exc:  # noqa: BLE001 - a parser bug or a dead process: the member is not used
            if not self.stopped:
                self.error, self.kept = exc, []
            self.stopped = True
            return
        if self.stopped:
            return
        if keep_text is not None and done.text:
            keep_text(self.name, done.text)
        self._keep(done.source)

    def _keep(self, source: ParsedSource) -> None:
        if not self.pieces:
            self.main = next(iter(source.frames), None)
        self.pieces += 1
        main = source.frames.get(self.main) if self.main is not None else None
        self.in_time = (
            self.in_time and main is not None and "ts" in main and main["ts"].is_monotonic_increasing
        )
        self.kept.append(source)
        if len(self.kept) - self.joined >= JOIN_EVERY_PIECES:
            self.kept[self.joined :] = [join(self.kept[self.joined :])]
            self.joined += 1

    def end(self) -> None:
        if self.aborted:
            return
        if self.error is not None:
            self.done(self.error)
        elif not self.kept:
            self.done(ParseError(self.name, 1, "", "no snapshot found"))
        elif self.pieces == 1:
            self.done(self.kept[0])
        else:  # repeated times across pieces (a long capture written twice) are seen once joined
            joined = join(self.kept)
            if self.in_time:  # a main frame in time order in each piece: one that goes back is damage
                damage.check_source(joined, values=False, only=self.main)
            self.done(joined)


def _in_flight(processes: int) -> int:
    """Pieces in flight for ``processes`` parse processes (0: none, each is parsed when submitted):
    two for each and one more, so that a process that is done finds a piece waiting while the
    worker still waits on an older, slower one (pieces are handed back in order)."""
    return 2 * processes + 1 if processes else 0


class Pipeline:
    """Members parsed piece by piece, pieces of consecutive members in flight together, results
    handed back in the order things were added.

    ``local`` parses a piece in this process; ``pool`` (optional) in parse processes, started for a
    member of two pieces or more, or a large one: a bundle of small members starts none. Once its
    processes run (started ahead, or by a piece), a member of one piece of ``WARM_PIECE_BYTES`` or
    more goes to them too. At most
    ``2 * pool.processes + 1`` pieces wait in flight. ``keep_text(member, chunks)`` receives the text
    chunks of each piece, in order. Use as a context manager; leaving it hands back everything.
    """

    def __init__(
        self,
        *,
        local: Runner,
        pool: Runner | None = None,
        keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None = None,
    ) -> None:
        self.local = local
        self.pool = pool
        self.keep_text = keep_text
        self.queue: deque[tuple[_Member, Future] | Callable[[], None]] = deque()
        self.in_flight = 0

    def pieces(
        self,
        module: ModuleType,
        pieces: Iterable[Piece],
        *,
        member: str,
        clock: ClockHints,
        done: Callable[[ParsedSource | Exception], None],
        large: bool = False,
    ) -> None:
        """Parse the ``pieces`` of ``member`` with ``module``; ``done`` gets the joined source, or the
        exception that made the member unreadable (a ``ParseError`` when its first piece is not the
        format; a later piece that is not keeps what was read before it, with a ``cut`` warning).
        ``large``: worth starting the parse processes for, even as one piece."""
        job = _Member(member, done)
        it = iter(pieces)
        try:
            pool = self.pool
            read = list(itertools.islice(it, 1))
            if pool is not None and pool.started:
                runner: Runner = pool  # pieces go there already: the first is sent before the second is read
            else:
                read += itertools.islice(it, 1)  # a second piece: worth the parse processes
                worth = large or len(read) > 1
                if pool is not None and read and not worth:
                    worth = pool.running and len(read[0].data) >= WARM_PIECE_BYTES
                runner = pool if pool is not None and worth else self.local
            for piece in itertools.chain(read, it):
                if job.stopped:
                    break  # the member is cut: the rest is not parsed (the archive reads past it)
                self.queue.append((job, runner.submit(module.FORMAT, piece, member=member, clock=clock)))
                self.in_flight += 1
                self._drain(_in_flight(runner.processes))
        except BaseException:
            job.aborted = True  # the archive broke inside the member: the caller reports it
            self.queue.append(job.end)
            raise
        self.queue.append(job.end)
        self._drain(self._limit())

    def later(self, step: Callable[[], None]) -> None:
        """Run ``step`` once everything added before it is handed back."""
        self.queue.append(step)
        self._drain(self._limit())

    def _limit(self) -> int:
        return _in_flight(self.pool.processes) if self.pool is not None and self.pool.started else 0

    def _drain(self, limit: int) -> None:
        """Hand back from the front of the queue until at most ``limit`` pieces are in flight."""
        while self.queue:
            front = self.queue[0]
            if isinstance(front, tuple):
                if self.in_flight <= limit:
                    return
                self.queue.popleft()
                self.in_flight -= 1
                job, future = front
                job.take(future, self.keep_text)
            else:
                self.queue.popleft()
                front()

    def close(self) -> None:
        """Hand back everything still in flight."""
        self._drain(0)

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            for item in self.queue:
                if isinstance(item, tuple):
                    item[1].cancel()
            self.queue.clear()
