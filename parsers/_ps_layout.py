"""The columns of a ``ps`` listing (``parsers.ps``): where each column sits in a header line
(``layout_of``) and a batch of rows cut into raw byte columns by those positions (``split_rows``),
with the rows whose values overflow their width split by token (``split_tokens``). Not a format.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parsers.base import ParseError, ParseWarning

#: Header spelling -> output column, best source first: when a listing has both USER and UID, or
#: STAT and S, or %CPU and C, the first one listed wins.
COLUMN_MAP: dict[str, str] = {
    "PID": "pid",
    "TGID": "pid",
    "TID": "tid",
    "LWP": "tid",
    "SPID": "tid",
    "PPID": "ppid",
    "USER": "user",
    "EUSER": "user",
    "RUSER": "user",
    "UID": "user",
    "STAT": "stat",
    "S": "stat",
    "%CPU": "pcpu",
    "PCPU": "pcpu",
    "C": "pcpu",
    "COMMAND": "comm",
    "CMD": "comm",
    "ARGS": "comm",
    "COMM": "comm",
    "WCHAN": "wchan",
}
#: Headers ps prints that feed no output column (read, not warned about).
KNOWN_OTHER = frozenset(
    "F PRI NI ADDR SZ VSZ VSIZE RSS RSZ TTY TT TIME STIME START STARTED LSTART NLWP PSR CLS PGID SID "
    "%MEM PMEM ELAPSED ETIME ETIMES TPGID SESS RTPRIO POL PSR SCH CP LABEL GROUP RGROUP EGROUP "
    "GID RUID EUID SUID FUID SVUID TIME+ MAJFL MINFL DRS TRS SWAP CPUID NUMA SIZE PENDING BLOCKED "
    "IGNORED CAUGHT CGROUP IO".split()
)
#: Columns whose value may contain spaces: ``lstart``/``start`` (header STARTED) and ``bsdstart`` (START).
SPACED = frozenset({"STARTED", "START", "LSTART"})
#: ``lstart`` prints ``Wed Oct  2 02:19:25 2019`` (24 chars, 5 tokens); ``start`` prints 8 chars.
LSTART_MIN_WIDTH = 20
LSTART_TOKENS = 5
#: The last COMMAND/CMD/ARGS column is the command line; only its first token (the executable) is
#: read by vectorised slicing, within this many characters (longer first tokens take the slow path).
FIRST_TOKEN_WINDOW = 160
#: Between a left-aligned and a right-aligned column the separator is the leftmost position blank in
#: nearly every row: a few rows may overflow across it (``SZ 473648``), while positions further right
#: can be blank in every row only by accident (the double space in ``lstart``'s ``Oct  2``). Rows the
#: chosen split does not fit are read by token, so this only decides speed, never values.
SEPARATOR_QUORUM = 0.95
#: The byte of a blank.
SPACE = 32
TEXT_COLUMNS = ("user", "stat", "comm", "wchan")


@dataclass(frozen=True, slots=True)
class Col:
    name: str  # header token
    hs: int  # header token start (0-based char)
    he: int  # header token end (exclusive)
    ntok: int  # whitespace tokens in a value (lstart: 5)
    spaced: bool  # value may contain spaces


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each needed output column comes from in one header."""

    header: str
    cols: tuple[Col, ...]
    src: dict[str, int]  # output column -> index in cols
    free: int | None  # index of the COMMAND column (may contain spaces)
    free_last: bool  # the COMMAND column is last: a command line, reduce to its first token


def layout_of(header: str, member: str, line_no: int, warnings: list[ParseWarning]) -> Layout:
    matches = list(re.finditer(r"\S+", header))
    cols: list[Col] = []
    for i, m in enumerate(matches):
        name = m.group()
        width = m.end() - (matches[i - 1].end() + 1 if i else 0)
        lstart = name in ("STARTED", "LSTART") and width >= LSTART_MIN_WIDTH
        cols.append(Col(name, m.start(), m.end(), LSTART_TOKENS if lstart else 1, name in SPACED))
    src: dict[str, int] = {}
    for out in dict.fromkeys(COLUMN_MAP.values()):
        for spelling, target in COLUMN_MAP.items():
            if target != out:
                continue
            idx = next((i for i, c in enumerate(cols) if c.name == spelling), None)
            if idx is not None:
                src[out] = idx
                break
    unknown = [c.name for c in cols if c.name not in COLUMN_MAP and c.name not in KNOWN_OTHER]
    if unknown:
        warnings.append(ParseWarning(line_no, "unknown-column", f"ignored ps column(s) {', '.join(unknown)}"))
    if "pid" not in src:
        raise ParseError(member, line_no, header, "ps header has no PID column")
    free = src.get("comm")
    free_last = free is not None and free == len(cols) - 1
    if free is not None and not free_last:
        cols[free] = Col(cols[free].name, cols[free].hs, cols[free].he, 1, True)
    return Layout(header, tuple(cols), src, free, free_last)


# ---------------------------------------------------------------------------------------------
# split_rows: a chunk of rows -> raw byte columns (fixed-width slicing), rows that need token splitting
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rows:
    """Some lines of a batch, as byte offsets into the batch's UTF-8 buffer."""

    buf: np.ndarray  # uint8, the batch, every line ending with \n
    starts: np.ndarray  # int64 byte offset of each row
    lens: np.ndarray  # int64 byte length of each row (without \n)
    ascii_ok: np.ndarray  # bool: no byte >= 128 (byte offsets = character offsets)
    nos: np.ndarray  # int64 1-based line numbers
    snaps: np.ndarray  # int64 snapshot of each row

    def text(self, i: int) -> str:
        s = int(self.starts[i])
        return self.buf[s : s + int(self.lens[i])].tobytes().decode("utf-8", "replace")


WORD = 64
#: The word of the ``k`` lowest bits set, for k = 0..64 (a row's positions before its end).
_LOW_BITS = np.array([(1 << k) - 1 for k in range(WORD + 1)], dtype=np.uint64)


def _grid(rows: Rows, cap: int | None) -> np.ndarray:
    """Rows as a (n, width) uint8 grid; width = longest row (at most ``cap``) rounded up to 64.

    Bytes past a row's end are whatever follows it in the buffer: ``_bits`` masks them, and
    ``_block`` blanks them in the fields that are read.
    """
    n = len(rows.starts)
    width = int(rows.lens.max()) if n else 0
    if cap is not None:
        width = min(width, cap)
    width = max(WORD, -(-width // WORD) * WORD)
    # a row is a window of the (blank-padded) buffer: one fancy index per row, not per byte
    windows = np.lib.stride_tricks.sliding_window_view(rows.buf, width)
    return windows[rows.starts]


def _bits(grid: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Non-blank positions of each row as a bitset: (n, width / 64) uint64, bit j of word j // 64
    is position j. Field checks then cost a few word operations per row instead of a byte loop."""
    bits = np.packbits(grid != SPACE, axis=1, bitorder="little").view("<u8")
    for w in range(bits.shape[1]):
        bits[:, w] &= _LOW_BITS[np.clip(lens - w * WORD, 0, WORD)]
    return bits


def _words(s: int, e: int) -> Iterator[tuple[int, np.uint64]]:
    """(word, mask) pairs covering positions [s, e)."""
    for w in range(s // WORD, -(-e // WORD)):
        lo, hi = max(s - w * WORD, 0), min(e - w * WORD, WORD)
        if hi > lo:
            yield w, np.uint64(((1 << (hi - lo)) - 1) << lo)


def _any(bits: np.ndarray, s: int, e: int) -> np.ndarray:
    out = np.zeros(len(bits), dtype=bool)
    for w, m in _words(s, e):
        out |= (bits[:, w] & m) != 0
    return out


def _count(bits: np.ndarray, s: int, e: int) -> np.ndarray:
    out = np.zeros(len(bits), dtype=np.int64)
    for w, m in _words(s, e):
        out += np.bitwise_count(bits[:, w] & m)
    return out


def _planes(bits: np.ndarray) -> np.ndarray:
    """A bitset ``(n, words)`` as byte planes ``(words * 8, n)``: plane k holds positions 8k..8k+7
    of every row (bit j % 8 of plane j // 8), so that one position of all rows is one contiguous read."""
    return np.ascontiguousarray(bits.view(np.uint8).T)


def _bit(planes: np.ndarray, j: int) -> np.ndarray:
    """Whether position ``j`` is set, per row (False out of the grid)."""
    if not 0 <= j < planes.shape[0] * 8:
        return np.zeros(planes.shape[1], dtype=bool)
    return (planes[j >> 3] & np.uint8(1 << (j & 7))) != 0


def _tally(planes: np.ndarray, j: int) -> int:
    """Rows with position ``j`` set (0 out of the grid)."""
    if not 0 <= j < planes.shape[0] * 8:
        return 0
    return int(np.count_nonzero(planes[j >> 3] & np.uint8(1 << (j & 7))))


def _tokens(start_planes: np.ndarray, s: int, e: int) -> np.ndarray:
    """Per row, the token starts at positions [s, e) (byte planes of token starts): int64."""
    out = np.zeros(start_planes.shape[1], dtype=np.int64)
    for b in range(s >> 3, min(-(-e // 8), start_planes.shape[0])):
        lo, hi = max(s - 8 * b, 0), min(e - 8 * b, 8)
        out += np.bitwise_count(start_planes[b] & np.uint8(((1 << (hi - lo)) - 1) << lo))
    return out


def _edges(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Token starts (a non-blank position whose left neighbour is blank) and token ends (one whose
    right neighbour is blank, or the grid ends) of a bitset."""
    carry = np.zeros(bits.shape, dtype=np.uint64)
    carry[:, 1:] = bits[:, :-1] >> np.uint64(WORD - 1)
    starts = bits & ~((bits << np.uint64(1)) | carry)
    carry[:, 1:] = 0
    carry[:, :-1] = bits[:, 1:] << np.uint64(WORD - 1)
    return starts, bits & ~((bits >> np.uint64(1)) | carry)


def _alignment(layout: Layout, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """Per column: ``left``, ``right`` or ``both``, by the rows' votes (byte planes of token starts
    and ends): a value starts exactly at the header's start (left-aligned) or ends exactly at its end
    (right-aligned); rows shifted by an overflow earlier in the line vote for neither."""
    align = []
    for i, c in enumerate(layout.cols):
        if i == layout.free and layout.free_last:
            align.append("left")
            continue
        left, right = _tally(starts, c.hs), _tally(ends, c.he - 1)
        align.append("right" if right > left else "left" if left > right else "both")
    return align


def _fields(layout: Layout, bits: np.ndarray, width: int) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Field boundaries ``[(start, end)]`` per column, inferred from the header and the data, and the
    mask of rows that fit them (every field in place, separators blank, single tokens contiguous)."""
    n = len(bits)
    cols = layout.cols
    last = len(cols) - 1
    starts, ends = _edges(bits)
    planes, start_planes = _planes(bits), _planes(starts)
    align = _alignment(layout, start_planes, _planes(ends))
    bounds: list[list[int]] = [[0, width] for _ in cols]
    bounds[0][0] = cols[0].hs if align[0] != "right" else 0
    for i in range(last):
        a, b = align[i], align[i + 1]
        if a != "left":
            bounds[i][1] = cols[i].he
            bounds[i + 1][0] = cols[i + 1].hs if b != "right" else cols[i].he + 1
        elif b != "right":
            bounds[i][1] = bounds[i + 1][0] = cols[i + 1].hs
            bounds[i][1] -= 1
        else:  # left-aligned then right-aligned: see SEPARATOR_QUORUM
            lo, hi = cols[i].hs + 1, min(cols[i + 1].he - 1, width)
            if hi <= lo:
                p = lo
            else:
                blanks = np.array([n - _tally(planes, j) for j in range(lo, hi)])
                p = lo + int(np.argmax(blanks >= SEPARATOR_QUORUM * blanks.max()))
            bounds[i][1], bounds[i + 1][0] = p, p + 1
    bounds = [[min(s, width), min(e, width)] for s, e in bounds]
    ok = np.ones(n, dtype=bool)
    for i, (s, e) in enumerate(bounds):
        if i < last and bounds[i + 1][0] > e:  # the gap up to the next field must be blank
            ok &= ~_any(bits, e, bounds[i + 1][0])
        if e <= s:
            ok[:] = False
            continue
        if i == layout.free and layout.free_last:
            ok &= _bit(planes, s)
            # the first token must end inside the window: a blank in it, or the line ends in it
            ok &= _count(bits, s, width) < width - s
            continue
        if align[i] != "left" and i < last:
            ok &= _bit(planes, e - 1)
        if align[i] != "right":
            ok &= _bit(planes, s)
        if cols[i].spaced:
            ok &= _any(bits, s, e)
        else:  # exactly one token (a field is never empty: ps prints "-")
            ok &= (_tokens(start_planes, s, e) + (_bit(planes, s) & ~_bit(start_planes, s))) == 1
    return [(s, e) for s, e in bounds], ok


def _block(grid: np.ndarray, ok: np.ndarray, lens: np.ndarray, s: int, e: int) -> np.ndarray:
    """Positions [s, e) of the rows in ``ok`` as a (n_ok, e - s) uint8 block, blank past line ends."""
    block = np.compress(ok, grid[:, s:e], axis=0)
    kept = lens[ok]
    if int(kept.min(initial=e)) < e:
        # int16 comparisons: half the memory traffic of the default int64 for this (n, w) mask
        small = np.int16 if e < np.iinfo(np.int16).max else np.int64
        past = np.arange(s, e, dtype=small)[None, :] >= np.minimum(kept, e).astype(small)[:, None]
        np.putmask(block, past, np.uint8(SPACE))
    return block


def _factorize(block: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """Codes and unique byte strings of the rows of a (n, w) uint8 block.

    Rows are hashed as uint64 words (pandas' hash table is ~25x faster than ``np.unique`` on bytes);
    a collision is detected by comparing every row with its representative, and then falls back to
    ``np.unique``.
    """
    n, w = block.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    pad = (-w) % 8
    if pad:
        block = np.concatenate([block, np.full((n, pad), SPACE, dtype=np.uint8)], axis=1)
    words = np.ascontiguousarray(block).view(np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    for j in range(words.shape[1]):
        h = (h ^ words[:, j]) * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    codes, uniq = pd.factorize(words[:, 0] if words.shape[1] == 1 else h)  # one word: no collision
    first = np.empty(len(uniq), dtype=np.int64)
    first[codes[::-1]] = np.arange(n - 1, -1, -1)
    if not np.array_equal(words, words[first[codes]]):
        keys = np.ascontiguousarray(block).view(f"V{block.shape[1]}").ravel()
        _, first, codes = np.unique(keys, return_index=True, return_inverse=True)
    return codes.astype(np.int64), [block[k].tobytes() for k in first]


def basename(token: str) -> str:
    """Executable name from a command line's first token; kernel threads ``[kthreadd]`` kept as is."""
    if token.startswith("[") and token.endswith("]"):
        return token
    return token.rsplit("/", 1)[-1] or token


@dataclass(frozen=True, slots=True)
class Fit:
    """A chunk of rows laid on a layout's fixed field boundaries (``fit``)."""

    grid: np.ndarray  # (n, width) uint8: each row's bytes from its start (see _grid)
    bounds: list[tuple[int, int]]  # [start, end) of each header column's field, in bytes
    ok: np.ndarray  # (n,) bool: the row fits (ASCII, every field in place)

    def block(self, rows: Rows, s: int, e: int) -> np.ndarray:
        """Positions [s, e) of the rows that fit, (n_ok, e - s) uint8, blank past line ends."""
        return _block(self.grid, self.ok, rows.lens, s, e)


def fit(layout: Layout, rows: Rows) -> Fit:
    """Field boundaries of ``layout`` for a chunk of rows, and which rows fit them; the others are
    read token by token (``split_tokens``)."""
    cap = layout.cols[-1].hs + FIRST_TOKEN_WINDOW if layout.free_last else None
    grid = _grid(rows, cap)
    width = grid.shape[1]
    bounds, ok = _fields(layout, _bits(grid, rows.lens), width)
    ok &= rows.ascii_ok
    if layout.free is None or not layout.free_last:
        ok &= rows.lens <= width
    return Fit(grid, bounds, ok)


def split_rows(layout: Layout, rows: Rows) -> tuple[dict[str, object], np.ndarray]:
    """Cut a chunk of rows into raw columns by fixed field boundaries.

    Returns ``{column: (n_ok, w) uint8 block, or (codes, uniques) for text}`` for the rows that fit
    the layout, and the mask of those rows; the others are read token by token in ``split_tokens``.
    """
    fitted = fit(layout, rows)
    grid, bounds, ok = fitted.grid, fitted.bounds, fitted.ok
    width = grid.shape[1]
    raw: dict[str, object] = {}
    for out, idx in layout.src.items():
        s, e = bounds[idx]
        if out == "comm" and layout.free_last:  # the first token: blank from its first blank on
            block = fitted.block(rows, s, width)
            if block.shape[1]:  # none when every row ends before the command (a listing cut short)
                blank = block == SPACE
                block[np.arange(width - s)[None, :] >= blank.argmax(axis=1)[:, None]] = SPACE
        else:
            block = fitted.block(rows, s, e)
        raw[out] = _factorize(block) if out in TEXT_COLUMNS else block
    return raw, ok


def split_tokens(layout: Layout, line: str) -> dict[str, str] | None:
    """Read one row by whitespace tokens (rows whose columns overflowed their width); None if it does
    not have the header's token count."""
    cols = layout.cols
    ntok = [c.ntok for c in cols]
    if layout.free is None:
        parts = line.split()
        if len(parts) != sum(ntok):
            return None
    else:
        k_left = sum(ntok[: layout.free])
        k_right = sum(ntok[layout.free + 1 :])
        parts = line.split(None, k_left)
        if len(parts) != k_left + 1:
            return None
        rest = parts.pop()
        if k_right:
            tail = rest.rsplit(None, k_right)
            if len(tail) != k_right + 1:
                return None
            parts += tail
        else:
            parts.append(rest)
    values: list[str] = []
    pos = 0
    for i, k in enumerate(ntok):
        if i == layout.free:
            values.append(parts[pos])
            pos += 1
        else:
            values.append(" ".join(parts[pos : pos + k]))
            pos += k
    out = {name: values[idx] for name, idx in layout.src.items()}
    if "comm" in out and layout.free_last:
        out["comm"] = out["comm"].split(None, 1)[0] if out["comm"] else out["comm"]
    return out
