"""A member cut into pieces, so that a one-hour member is never held whole: where the cuts go and how
large a piece is.

Captures made of snapshots after ``TS``/``zzz`` markers (processlist, ps, performance_schema threads,
/proc/meminfo, /proc/interrupts, mysqladmin extended-status) are cut at a marker every
``PIECE_BYTES`` (:func:`split`); rows that stand alone are cut at line ends (:func:`split_lines`); any
other member up to ``WHOLE_MAX_BYTES`` is one piece (:func:`whole`). Pieces are bytes as uploaded,
with universal newlines applied (``\\r\\n`` and a lone ``\\r`` become ``\\n``, as
``io.TextIOWrapper(newline=None)`` reads them), so lines are numbered as the parsers number them.
Every piece after the first starts again with the last snapshot of the one before
(``Piece.overlap_lines``). The pieces are parsed by ``parsers.ingest.pieces``.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from parsers import registry
from parsers.base import (
    parse_marker,
)
from parsers.rawtext import newlines

#: Bytes of text per piece (8 MiB): large enough that a parser's fixed costs do not show, small
#: enough that the transient arrays of a parse (several times the text) stay near 200 MB a process.
PIECE_BYTES = 8 << 20
#: Pieces of a member of a format declaring ``large_pieces`` (``parsers.base.FormatTraits``) of at most
#: ``LARGE_PIECES_UP_TO_MEMBER_BYTES`` (an
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
    ``SMALL_PIECE_BYTES`` (never more than ``PIECE_BYTES``) past ``SMALL_PIECES_ABOVE_BYTES`` or for a
    format declaring ``small_pieces`` (``parsers.base.FormatTraits``), else ``LARGE_PIECE_FACTOR`` x
    ``PIECE_BYTES`` for a member of a format declaring ``large_pieces`` of known size up to
    ``LARGE_PIECES_UP_TO_MEMBER_BYTES``, else ``PIECE_BYTES``: the worker and its parse processes
    stay under 1 GiB together on a day-long capture (DESIGN.md, Targets)."""
    if held > SMALL_PIECES_ABOVE_BYTES or registry.traits(fmt).small_pieces:
        return min(SMALL_PIECE_BYTES, PIECE_BYTES)
    if registry.traits(fmt).large_pieces and (member_bytes or 1 << 62) <= LARGE_PIECES_UP_TO_MEMBER_BYTES:
        return int(PIECE_BYTES * LARGE_PIECE_FACTOR)
    return PIECE_BYTES


#: A member that is not cut at markers and is at most this long is parsed whole, as one piece
#: (longer ones are read as a stream by the worker itself).
WHOLE_MAX_BYTES = 64 << 20
MARKERS = (b"\nTS ", b"\nzzz ")


def in_snapshots(fmt: str, head: list[str]) -> bool:
    """Whether a member of format ``fmt`` whose first lines are ``head`` is cut at its markers: a
    format declaring ``markers`` (``parsers.base.FormatTraits``) whose head holds a ``TS``/``zzz``
    marker."""
    return registry.traits(fmt).markers and any(parse_marker(line) for line in head)


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


def _lines(data: bytes) -> int:
    """Line ends in ``data`` (``parsers.rawtext.newlines``: a few times faster than ``bytes.count``)."""
    return newlines(np.frombuffer(data, dtype=np.uint8))


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
