"""A member's text as the parsers read it, kept as Zstandard-compressed chunks of whole lines.

A case keeps the text of every parsed member so that a page can show the raw lines behind any
number and read one snapshot's sessions or threads back, without opening the upload again. Lines
are numbered as the parsers number them: 1-based, ending at ``\\n`` only, after universal newlines
(``\\r\\n`` and a lone ``\\r`` are line ends, as ``io.TextIOWrapper(newline=None)`` reads them). A
chunk holds about ``CHUNK_BYTES`` of UTF-8 as uploaded (invalid sequences are kept as bytes and
decoded with replacement by :func:`text_of`, which gives what the parsers read).

Chunks are made where the text is read: in the parse processes for the pieces of snapshot captures
(:func:`chunks_of`), line block by line block for the members the worker reads itself
(:class:`TextChunker`). This module is plain Python: parse processes import it without Django.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import zstandard

#: Bytes of text per chunk: a moment reads one or two chunks (a few ms to decompress).
CHUNK_BYTES = 2 << 20
#: Zstandard level 2 compresses capture text 20-100x at over 1 GB/s: on a dense bundle's members (processlist,
#: ps, /proc/interrupts, mysqladmin, sysstat; 367 MB) 23 % less CPU than level 3 for 4 % more bytes
#: (13.3 MB against 12.8; /proc/interrupts and mysqladmin come out smaller, processlist and ps larger).
ZSTD_LEVEL = 2


class _PerThread(threading.local):
    """A compressor and a decompressor per thread: a ``ZstdCompressor``/``ZstdDecompressor`` holds
    one zstd context and must not be used by two threads at once (python-zstandard's docs), and the
    web reads moments from several request threads of one process (gunicorn gthread)."""

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
        self.decompressor = zstandard.ZstdDecompressor()


_zstd = _PerThread()


@dataclass(frozen=True, slots=True)
class TextChunk:
    """Lines ``line_start..line_end`` (1-based, inclusive) of a member, compressed (``data``)."""

    line_start: int
    line_end: int
    data: bytes


def chunks_of(
    text: bytes, first_line: int, *, chunk_bytes: int | None = None, skip: int = 0
) -> list[TextChunk]:
    """``text`` from byte ``skip`` on (whole lines, ``\\n`` line ends, starting at member line
    ``first_line``) cut after a line end every ``chunk_bytes`` or so, each part compressed. The last
    line may lack its ``\\n`` (the end of a member).

    >>> [(c.line_start, c.line_end, text_of(c.data)) for c in chunks_of(b"a\\nb\\nc", 7, chunk_bytes=2)]
    [(7, 7, 'a\\n'), (8, 8, 'b\\n'), (9, 9, 'c')]
    """
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    out: list[TextChunk] = []
    start, line = skip, first_line
    view, codes = memoryview(text), np.frombuffer(text, dtype=np.uint8)  # parts without copies
    while start < len(text):
        cut = text.find(b"\n", start + chunk_bytes - 1) + 1 if len(text) - start > chunk_bytes else 0
        end = cut or len(text)
        lines = newlines(codes[start:end]) + int(codes[end - 1] != 0x0A)
        out.append(TextChunk(line, line + lines - 1, _zstd.compressor.compress(view[start:end])))
        start, line = end, line + lines
    return out


#: Bytes compared at a time by :func:`newlines`: its temporary array stays in the cache, and below the
#: mmap threshold that the worker fixes (``parsers.ingest.malloc.steady_heap``), so it is reused
#: rather than mapped afresh.
NEWLINES_STRIDE = 1 << 19


def newlines(codes: np.ndarray) -> int:
    """The line ends (``\\n``) in ``codes`` (bytes as a ``uint8`` array): NumPy counts them about four
    times faster than ``bytes.count``, twice as fast again ``NEWLINES_STRIDE`` at a time."""
    return sum(
        int(np.count_nonzero(codes[i : i + NEWLINES_STRIDE] == 0x0A))
        for i in range(0, len(codes), NEWLINES_STRIDE)
    )


def text_of(data: bytes) -> str:
    """The text of a compressed chunk, as the parsers read it (UTF-8 with replacement). Safe to call
    from several threads at once."""
    return _zstd.decompressor.decompress(data).decode("utf-8", "replace")


def lines_in(data: bytes, first: int, count: int) -> list[str]:
    r"""Lines ``first .. first + count - 1`` (0-based within the chunk) of a compressed chunk, decoded
    like :func:`text_of`, without splitting or decoding the rest of the chunk (a moment needs a few
    hundred lines of a chunk of 2 MiB: finding the line ends with NumPy costs a millisecond or two).

    >>> chunk = chunks_of(b"a\nb\nc\nd\n", 1)[0].data
    >>> lines_in(chunk, 1, 2), lines_in(chunk, 3, 5)
    (['b', 'c'], ['d'])
    """
    raw = _zstd.decompressor.decompress(data)
    if count <= 0 or not raw:
        return []
    ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0x0A)
    if not len(ends) or ends[-1] != len(raw) - 1:
        ends = np.append(ends, len(raw))  # a last line without its newline
    starts = np.concatenate([[0], ends[:-1] + 1])
    lo, hi = max(first, 0), min(first + count, len(ends))
    return [
        raw[a:b].decode("utf-8", "replace")
        for a, b in zip(starts[lo:hi].tolist(), ends[lo:hi].tolist(), strict=True)
    ]


class TextChunker:
    """Chunks of one member's text fed block by block (``str``, as a text stream reads it); each
    block may end mid-line. ``feed`` and ``close`` return the chunks completed so far."""

    def __init__(self, *, chunk_bytes: int | None = None) -> None:
        self.chunk_bytes = chunk_bytes
        self.parts: list[bytes] = []
        self.size = 0
        self.next_line = 1

    def feed(self, block: str) -> list[TextChunk]:
        data = block.encode("utf-8")
        self.parts.append(data)
        self.size += len(data)
        if self.size < (self.chunk_bytes or CHUNK_BYTES):
            return []
        joined = b"".join(self.parts)
        cut = joined.rfind(b"\n") + 1
        self.parts, self.size = [joined[cut:]], len(joined) - cut
        return self._chunks(joined[:cut])

    def close(self) -> list[TextChunk]:
        joined = b"".join(self.parts)
        self.parts, self.size = [], 0
        return self._chunks(joined)

    def _chunks(self, text: bytes) -> list[TextChunk]:
        if not text:
            return []
        got = chunks_of(text, self.next_line, chunk_bytes=self.chunk_bytes)
        self.next_line = got[-1].line_end + 1
        return got
