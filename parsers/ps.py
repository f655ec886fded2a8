"""Parse ``ps`` listings (procps / procps-ng) into per-thread snapshots: state, wait channel, CPU share.

Accepts:
    Any procps listing read by its header line, one or many snapshots:
    - ``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32`` (what ``collect.sh`` writes, each snapshot
      after a ``TS <epoch.ns> <YYYY-MM-DD HH:MM:SS>`` line) and any other ``-o`` column list;
    - ``ps -eLf`` (UID PID PPID LWP C NLWP STIME TTY TIME CMD), ``ps -elfL`` (F S ... WCHAN ... CMD);
    - ``ps -eaF`` (pt-stalk ``-ps``: no threads, no wchan -> ``tid`` = ``pid``, ``wchan`` missing);
    - ``ps alx`` / ``ps alxwww`` (F UID PID PPID PRI NI VSZ RSS WCHAN STAT TTY TIME COMMAND),
      ``ps -ef``, ``ps aux``, ``ps axo ...,wchan,lstart,...`` (``lstart`` = 5 tokens).
    Snapshots start after a ``TS``/OSWatcher ``zzz`` marker, or where the header line repeats.
    WCHAN cut short by the column width (``do_epo``) is kept as printed; ``-`` means none.
    Columns overflowing their width (``VSZ 8591369724``, ``PRI -100``) are read by token instead.
    ``ps auxm`` / ``ps -m`` listings (threads as ``-`` placeholder rows with no thread id) are
    rejected with ``ParseError``: capture threads with ``ps -eLo`` instead.

Sample input (``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32``, procps-ng 4.0.2, after the
collector's ``TS`` line)::

    TS 1795350437.084825799 2026-11-22 12:27:17
      PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN
        1     1     0 root     S<Ll  0.6 process_api     -
     2189  2189     1 postgres Ss    0.0 postgres        poll_schedule_timeout.constprop.0
     3774  3774     1 mysql    Sl    8.3 mariadbd        poll_schedule_timeout.constprop.0
     3774  3779     1 mysql    Sl    0.0 mariadbd        futex_do_wait
     3774  3781     1 mysql    Sl    0.0 mariadbd        io_cqring_wait

Output: one frame, ``ps_threads``, one row per thread (per process when the listing has no threads):
    ``ts`` datetime64[ns, UTC] (the snapshot's time), ``line_no`` int64 (1-based line of the row),
    ``snapshot`` int64 (0-based), ``pid`` int64, ``tid`` int64 (TID/LWP/SPID; = ``pid`` without
    threads), ``ppid`` Int64 (NA when not listed), ``user`` category (USER, else UID: a name or a
    number as printed), ``stat`` category (STAT or S, full: ``Sl``, ``D<``), ``state`` category (its
    first letter: R, S, D, Z, T, I...), ``pcpu`` float64 (%CPU, or ``C`` as an integer percent),
    ``comm`` category (executable name: COMMAND/CMD in the middle of an ``-o`` list is ``comm`` as
    printed; a last COMMAND/CMD/ARGS column is the command line, reduced to the basename of its first
    token, kernel threads ``[kworker/0:1]`` kept as is), ``wchan`` category (``-`` -> ``""``; NA when
    the listing has no WCHAN). Columns not listed are NA. ``ts_source``: ``ParsedSource.clock`` is
    ``ts-marker`` (``TS`` epoch; OSWatcher ``zzz`` is wall clock, ``ts_is_local``) or ``inferred``
    (``ClockHints.start_local`` + snapshot x ``interval_s``; ``ts_is_local``).
    ``meta``: ``variant`` (``ps -eLo with wchan``, ``ps alx with wchan, no threads``), ``columns`` (header
    tokens), ``threads`` (bool), ``snapshots`` (list of ``(snapshot, first_line, last_line)``),
    ``utc_offset_s`` when a ``TS`` marker gives it.
    With ``parse(..., states=...)`` (what an ingest asks for): only the threads in those states and
    the first of each snapshot are rows, and ``ps_state_counts`` counts them all by state.

Warnings: ``bad-row`` (a row that cannot be read, dropped), ``unknown-column`` (header token not known,
    ignored), ``no-start-time`` (no marker and no start: timestamps count from the epoch),
    ``no-interval`` (several unmarked snapshots and no interval: 1 s assumed), ``empty``.
Errors: ``ParseError`` when no ps header precedes the first data row (``ps -ef | grep mysqld``
    output, a ``top`` table), when the header has no PID column, or on ``ps m`` placeholder rows.

Source: procps-ng ps(1) "STANDARD FORMAT SPECIFIERS" (headers and alignment), procps-ng 3.3.15 / 4.0.2.

>>> from parsers.base import ClockHints
>>> src = parse(["TS 1795350437.084825799 2026-11-22 12:27:17",
...     "  PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN",
...     " 3774  3779     1 mysql    Sl    0.0 mariadbd        futex_do_wait",
...     " 3774  3781     1 mysql    D     1.5 mariadbd        -"], member="ps", clock=ClockHints())
>>> src.main[["tid", "state", "pcpu", "comm", "wchan"]].values.tolist()
[[3779, 'S', 0.0, 'mariadbd', 'futex_do_wait'], [3781, 'D', 1.5, 'mariadbd', '']]
>>> str(src.start), src.clock.value
('2026-11-22 12:27:17.084825799+00:00', 'ts-marker')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from parsers.base import (
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    first_of_snapshots,
    parse_marker,
    raw_blocks,
    snapshot_times,
    text_chunks,
)

FORMAT = "ps"
FRAME = "ps_threads"

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
#: Headers that only ``top`` (PR, VIRT, RES, SHR, TIME+) or ``lsof`` (FD, NODE, DEVICE) print: a
#: head with one of them is not a ps listing even though it has a PID column.
NOT_PS = frozenset({"PR", "VIRT", "RES", "SHR", "TIME+", "FD", "NODE", "DEVICE", "SIZE/OFF", "NAME"})
#: Between a left-aligned and a right-aligned column the separator is the leftmost position blank in
#: nearly every row: a few rows may overflow across it (``SZ 473648``), while positions further right
#: can be blank in every row only by accident (the double space in ``lstart``'s ``Oct  2``). Rows the
#: chosen split does not fit are read by token, so this only decides speed, never values.
SEPARATOR_QUORUM = 0.95
#: Rows per vectorised chunk: bounds memory (the byte grid is rows x width) while amortising the
#: NumPy call overhead over thousands of rows.
CHUNK_ROWS = 65_536

_HEADER_TOKEN = re.compile(r"^[A-Z%][A-Z0-9%_+:/-]*$")
_SPACE = 32
_COLUMNS = (
    "ts",
    "line_no",
    "snapshot",
    "pid",
    "tid",
    "ppid",
    "user",
    "stat",
    "state",
    "pcpu",
    "comm",
    "wchan",
)
_TEXT = ("user", "stat", "comm", "wchan")
_NUMBERS = ("pid", "tid", "ppid", "pcpu")
#: The frame of thread counts by state that ``parse(..., states=...)`` adds.
COUNTS_FRAME = "ps_state_counts"


def _header_tokens(line: str) -> list[str] | None:
    """Header tokens when ``line`` looks like a ps header (uppercase tokens incl. PID), else None."""
    tokens = line.split()
    if len(tokens) < 2 or "PID" not in tokens:
        return None
    if not all(_HEADER_TOKEN.match(t) for t in tokens) or NOT_PS.intersection(tokens):
        return None
    return tokens


def sniff(head: list[str]) -> bool:
    """True when the first line that is not blank or a ``TS``/``zzz`` marker is a ps header.

    ``top -b`` heads start with ``top - HH:MM:SS up`` and its table has PR/VIRT/RES/SHR/TIME+, so
    neither is taken; ``ps -ef | grep`` output without a header is not taken either.
    """
    for line in head:
        if not line.strip() or parse_marker(line) is not None:
            continue
        return _header_tokens(line) is not None
    return False


@dataclass(frozen=True, slots=True)
class _Col:
    name: str  # header token
    hs: int  # header token start (0-based char)
    he: int  # header token end (exclusive)
    ntok: int  # whitespace tokens in a value (lstart: 5)
    spaced: bool  # value may contain spaces


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where each needed output column comes from in one header."""

    header: str
    cols: tuple[_Col, ...]
    src: dict[str, int]  # output column -> index in cols
    free: int | None  # index of the COMMAND column (may contain spaces)
    free_last: bool  # the COMMAND column is last: a command line, reduce to its first token


def _layout(header: str, member: str, line_no: int, warnings: list[ParseWarning]) -> _Layout:
    matches = list(re.finditer(r"\S+", header))
    cols: list[_Col] = []
    for i, m in enumerate(matches):
        name = m.group()
        width = m.end() - (matches[i - 1].end() + 1 if i else 0)
        lstart = name in ("STARTED", "LSTART") and width >= LSTART_MIN_WIDTH
        cols.append(_Col(name, m.start(), m.end(), LSTART_TOKENS if lstart else 1, name in SPACED))
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
        cols[free] = _Col(cols[free].name, cols[free].hs, cols[free].he, 1, True)
    return _Layout(header, tuple(cols), src, free, free_last)


# ---------------------------------------------------------------------------------------------
# _split: a chunk of rows -> raw byte columns (fixed-width slicing), rows that need token splitting
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rows:
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


_WORD = 64
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def _grid(rows: _Rows, cap: int | None) -> np.ndarray:
    """Rows as a (n, width) uint8 grid; width = longest row (at most ``cap``) rounded up to 64.

    Bytes past a row's end are whatever follows it in the buffer: ``_bits`` masks them, and
    ``_block`` blanks them in the fields that are read.
    """
    n = len(rows.starts)
    width = int(rows.lens.max()) if n else 0
    if cap is not None:
        width = min(width, cap)
    width = max(_WORD, -(-width // _WORD) * _WORD)
    # a row is a window of the (blank-padded) buffer: one fancy index per row, not per byte
    windows = np.lib.stride_tricks.sliding_window_view(rows.buf, width)
    return windows[rows.starts]


def _bits(grid: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Non-blank positions of each row as a bitset: (n, width / 64) uint64, bit j of word j // 64
    is position j. Field checks then cost a few word operations per row instead of a byte loop."""
    bits = np.packbits(grid != _SPACE, axis=1, bitorder="little").view("<u8").copy()
    for w in range(bits.shape[1]):
        k = np.clip(lens - w * _WORD, 0, _WORD).astype(np.uint64)
        bits[:, w] &= np.where(
            k >= _WORD, _ALL, (np.uint64(1) << np.minimum(k, np.uint64(63))) - np.uint64(1)
        )
    return bits


def _words(s: int, e: int) -> Iterator[tuple[int, np.uint64]]:
    """(word, mask) pairs covering positions [s, e)."""
    for w in range(s // _WORD, -(-e // _WORD)):
        lo, hi = max(s - w * _WORD, 0), min(e - w * _WORD, _WORD)
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


def _bit(bits: np.ndarray, j: int) -> np.ndarray:
    if not 0 <= j < bits.shape[1] * _WORD:
        return np.zeros(len(bits), dtype=bool)
    return ((bits[:, j // _WORD] >> np.uint64(j % _WORD)) & np.uint64(1)).astype(bool)


def _fields(layout: _Layout, bits: np.ndarray, width: int) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Field boundaries ``[(start, end)]`` per column, inferred from the header and the data, and the
    mask of rows that fit them (every field in place, separators blank, single tokens contiguous)."""
    n = len(bits)
    cols = layout.cols
    last = len(cols) - 1
    align = []
    for i, c in enumerate(cols):
        if i == layout.free and layout.free_last:
            align.append("left")
            continue
        # a value starts exactly at the header's start (left-aligned) or ends exactly at its end
        # (right-aligned); rows shifted by an overflow earlier in the line vote for neither
        left = np.count_nonzero(_bit(bits, c.hs) & ~_bit(bits, c.hs - 1))
        right = np.count_nonzero(_bit(bits, c.he - 1) & ~_bit(bits, c.he))
        align.append("right" if right > left else "left" if left > right else "both")
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
                blanks = np.array([n - np.count_nonzero(_bit(bits, j)) for j in range(lo, hi)])
                p = lo + int(np.argmax(blanks >= SEPARATOR_QUORUM * blanks.max()))
            bounds[i][1], bounds[i + 1][0] = p, p + 1
    bounds = [[min(s, width), min(e, width)] for s, e in bounds]
    # token starts: a non-blank position whose left neighbour is blank
    carry = np.zeros((n, bits.shape[1]), dtype=np.uint64)
    carry[:, 1:] = bits[:, :-1] >> np.uint64(_WORD - 1)
    starts = bits & ~((bits << np.uint64(1)) | carry)
    ok = np.ones(n, dtype=bool)
    for i, (s, e) in enumerate(bounds):
        if i < last and bounds[i + 1][0] > e:  # the gap up to the next field must be blank
            ok &= ~_any(bits, e, bounds[i + 1][0])
        if e <= s:
            ok[:] = False
            continue
        if i == layout.free and layout.free_last:
            ok &= _bit(bits, s)
            # the first token must end inside the window: a blank in it, or the line ends in it
            ok &= _count(bits, s, width) < width - s
            continue
        if align[i] != "left" and i < last:
            ok &= _bit(bits, e - 1)
        if align[i] != "right":
            ok &= _bit(bits, s)
        if cols[i].spaced:
            ok &= _any(bits, s, e)
        else:  # exactly one token (a field is never empty: ps prints "-")
            ok &= (_count(starts, s, e) + (_bit(bits, s) & ~_bit(starts, s))) == 1
    return [(s, e) for s, e in bounds], ok


def _block(grid: np.ndarray, ok: np.ndarray, lens: np.ndarray, s: int, e: int) -> np.ndarray:
    """Positions [s, e) of the rows in ``ok`` as a (n_ok, e - s) uint8 block, blank past line ends."""
    block = np.compress(ok, grid[:, s:e], axis=0)
    kept = lens[ok]
    if int(kept.min(initial=e)) < e:
        # int16 comparisons: half the memory traffic of the default int64 for this (n, w) mask
        small = np.int16 if e < np.iinfo(np.int16).max else np.int64
        past = np.arange(s, e, dtype=small)[None, :] >= np.minimum(kept, e).astype(small)[:, None]
        np.putmask(block, past, np.uint8(_SPACE))
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
        block = np.concatenate([block, np.full((n, pad), _SPACE, dtype=np.uint8)], axis=1)
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


def _basename(token: str) -> str:
    """Executable name from a command line's first token; kernel threads ``[kthreadd]`` kept as is."""
    if token.startswith("[") and token.endswith("]"):
        return token
    return token.rsplit("/", 1)[-1] or token


def _split(
    layout: _Layout, rows: _Rows, only: tuple[str, ...] | None = None
) -> tuple[dict[str, object], np.ndarray]:
    """Cut a chunk of rows into raw columns by fixed field boundaries.

    Returns ``{column: (n_ok, w) uint8 block, or (codes, uniques) for text}`` for the rows that fit
    the layout (of the columns in ``only`` when given), and the mask of those rows; the others are
    read token by token in ``_split_tokens``.
    """
    cap = layout.cols[-1].hs + FIRST_TOKEN_WINDOW if layout.free_last else None
    grid = _grid(rows, cap)
    width = grid.shape[1]
    bits = _bits(grid, rows.lens)
    bounds, ok = _fields(layout, bits, width)
    ok &= rows.ascii_ok
    if layout.free is None or not layout.free_last:
        ok &= rows.lens <= width
    raw: dict[str, object] = {}
    for out, idx in layout.src.items():
        if only is not None and out not in only:
            continue
        s, e = bounds[idx]
        if out == "comm" and layout.free_last:  # the first token: blank from its first blank on
            block = _block(grid, ok, rows.lens, s, width)
            blank = block == _SPACE
            block[np.arange(width - s)[None, :] >= blank.argmax(axis=1)[:, None]] = _SPACE
        else:
            block = _block(grid, ok, rows.lens, s, e)
        raw[out] = _factorize(block) if out in _TEXT else block
    return raw, ok


def _split_tokens(layout: _Layout, line: str) -> dict[str, str] | None:
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


# ---------------------------------------------------------------------------------------------
# _to_frame: raw columns -> typed chunk frame
# ---------------------------------------------------------------------------------------------


# Byte -> digit value / multiplier / "not part of a number" lookup tables for _digits.
_DIG = np.zeros(256)
_DIG[ord("0") : ord("9") + 1] = np.arange(10)
_MUL = np.ones(256)
_MUL[ord("0") : ord("9") + 1] = 10.0
_JUNK = np.ones(256, dtype=bool)
_JUNK[[*range(ord("0"), ord("9") + 1), ord("."), _SPACE]] = False


def _digits(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Numbers written in a (n, w) uint8 block (digits, at most one ``.``, blanks) -> float64, and
    the mask of cells holding anything else (read one by one by the caller)."""
    n, w = block.shape
    value = np.zeros(n)
    scale = np.ones(n)
    seen_dot = np.zeros(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)
    for j in range(w):  # left to right: value = value * 10 + digit; scale counts decimals
        b = block[:, j]
        mul = _MUL[b]
        value = value * mul + _DIG[b]
        scale = np.where(seen_dot, scale * mul, scale)
        dot = b == ord(".")
        bad |= _JUNK[b] | (dot & seen_dot)
        seen_dot |= dot
    # a cell with no digit at all reads 0: only "0" (or "0.0") may do so
    zero = value == 0
    if zero.any():
        bad[zero] |= ~(block[zero] == ord("0")).any(axis=1)
    return value / scale, bad


def _cell_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _text_category(codes: np.ndarray, uniques: list[str]) -> pd.Categorical:
    canon: dict[str, int] = {}
    remap = np.array([canon.setdefault(u, len(canon)) for u in uniques], dtype=np.int64)
    return pd.Categorical.from_codes(remap[codes] if len(codes) else codes, categories=list(canon))


def _to_frame(layout: _Layout, rows: _Rows, member: str, warnings: list[ParseWarning]) -> dict[str, object]:
    """Type one chunk: pid/tid/ppid integers, pcpu float, text columns as categories (column arrays)."""
    raw, ok = _split(layout, rows)
    nos, snaps = rows.nos, rows.snaps
    fast_idx = np.flatnonzero(ok)
    slow_rows: list[tuple[int, dict[str, str]]] = []
    for i in np.flatnonzero(~ok):
        line = rows.text(int(i))
        if line.isspace():
            continue
        fields = _split_tokens(layout, line)
        if fields is None:
            warnings.append(ParseWarning(int(nos[i]), "bad-row", f"cannot read ps row: {line[:80]!r}"))
        else:
            slow_rows.append((int(i), fields))
    slow_idx = np.array([i for i, _ in slow_rows], dtype=np.int64)
    order = np.concatenate([fast_idx, slow_idx])
    keep = np.ones(len(order), dtype=bool)
    cols: dict[str, object] = {}
    for out in _NUMBERS:
        if out not in raw:
            continue
        block = raw[out]
        num, bad = _digits(block)
        cells = {j: block[j].tobytes().decode("ascii").strip() for j in np.flatnonzero(bad)}
        tail = [f[out] for _, f in slow_rows]
        cells.update({len(num) + k: v for k, v in enumerate(tail)})
        num = np.concatenate([num, np.zeros(len(tail))])
        bad = np.concatenate([bad, np.zeros(len(tail), dtype=bool)])
        for j, cell in cells.items():
            value = _cell_number(cell)
            bad[j] = value is None
            num[j] = 0.0 if value is None else value
        for j in np.flatnonzero(bad & keep):
            row = int(order[j])
            cell = cells[int(j)]
            if out == "pid" and cell == "-":
                raise ParseError(
                    member,
                    int(nos[row]),
                    rows.text(row),
                    "ps m thread rows ('-' PID) carry no thread id: capture threads with ps -eLo",
                    whole=True,
                )
            warnings.append(ParseWarning(int(nos[row]), "bad-row", f"{out} {cell!r} is not a number"))
        if out != "pcpu":
            num = num.astype(np.int64)
        keep &= ~bad
        cols[out] = num
    for out in _TEXT:
        if out not in raw:
            continue
        codes, uniq = raw[out]
        texts = [u.decode("ascii").strip() for u in uniq]
        if out == "comm" and layout.free_last:
            texts = [_basename(t) for t in texts]
        if out == "wchan":
            texts = ["" if t == "-" else t for t in texts]
        if slow_rows:
            extra = []
            for _, f in slow_rows:
                v = f[out]
                if out == "comm" and layout.free_last:
                    v = _basename(v)
                elif out == "wchan" and v == "-":
                    v = ""
                extra.append(v)
            codes = np.concatenate([codes, np.arange(len(texts), len(texts) + len(extra))])
            texts = texts + extra
        cols[out] = _text_category(codes, texts)
    sel = np.argsort(order[keep], kind="stable")
    rows = order[keep][sel]
    n = len(rows)
    piece: dict[str, object] = {"line_no": nos[rows], "snapshot": snaps[rows]}
    for out in _NUMBERS:
        if out in cols:
            piece[out] = np.asarray(cols[out])[keep][sel]
    piece["tid"] = piece.get("tid", piece["pid"])
    piece["ppid_na"] = np.zeros(n, dtype=bool) if "ppid" in piece else np.ones(n, dtype=bool)
    piece["ppid"] = piece.get("ppid", np.zeros(n, dtype=np.int64))
    piece["pcpu"] = piece.get("pcpu", np.full(n, np.nan))
    for out in _TEXT:
        piece[out] = cols[out][keep][sel] if out in cols else _missing(n)
    return piece


def _state(stat: pd.Series) -> pd.Categorical:
    """First letter of each STAT value, computed once per distinct STAT."""
    if not len(stat.cat.categories):
        return _missing(len(stat))
    cats = list(stat.cat.categories)
    letters = [s[:1] for s in cats]
    uniq = list(dict.fromkeys(letters))
    remap = np.array([uniq.index(x) for x in letters] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(remap[stat.cat.codes.to_numpy()], categories=uniq)


# ---------------------------------------------------------------------------------------------
# parse: stream -> snapshots -> chunks
# ---------------------------------------------------------------------------------------------


def _frame(pieces: list[dict[str, object]]) -> pd.DataFrame:
    """One frame from the chunk pieces: arrays concatenated, categories united, ``state`` derived."""
    if not pieces:
        return _empty()

    def cat(col: str) -> np.ndarray:
        return np.concatenate([p[col] for p in pieces])

    frame = pd.DataFrame(
        {
            "line_no": cat("line_no"),
            "snapshot": cat("snapshot"),
            "pid": cat("pid").astype(np.int64),
            "tid": cat("tid").astype(np.int64),
            "ppid": pd.arrays.IntegerArray(cat("ppid").astype(np.int64), cat("ppid_na")),
            "pcpu": cat("pcpu").astype(np.float64),
        }
    )
    for col in _TEXT:
        frame[col] = union_categoricals([p[col] for p in pieces]) if len(pieces) > 1 else pieces[0][col]
    frame["state"] = _state(frame["stat"])
    return frame


@dataclass(slots=True)
class _State:
    """What carries from one batch of lines to the next."""

    member: str
    warnings: list[ParseWarning]
    #: ``parse(states=...)``: the states whose threads are typed; None: every thread
    states: frozenset[str] | None = None
    #: threads counted but not typed (``_counted``): (snapshot, state) -> threads
    untyped: dict[tuple[int, str], int] = field(default_factory=dict)
    #: snapshots whose first row was typed
    first_typed: set[int] = field(default_factory=set)
    pieces: list[dict[str, object]] = field(default_factory=list)
    layout: _Layout | None = None
    snapshot: int = -1
    rows_in_snapshot: int = 0
    markers: list[TsMarker | None] = field(default_factory=list)
    snap_lines: list[list[int]] = field(default_factory=list)  # [first_line, last_line] per snapshot
    pending: list[tuple[np.ndarray, int]] = field(default_factory=list)  # (row indices, snapshot)

    def new_snapshot(self, marker: TsMarker | None, line_no: int) -> None:
        self.snapshot += 1
        self.rows_in_snapshot = 0
        self.markers.append(marker)
        self.snap_lines.append([line_no, line_no])


def _emit(
    st: _State, buf: np.ndarray, starts: np.ndarray, lens: np.ndarray, hi: np.ndarray, base: int
) -> None:
    """Type the pending data rows of the current layout, in chunks of ``CHUNK_ROWS``."""
    if not st.pending:
        return
    idx = np.concatenate([r for r, _ in st.pending])
    snaps = np.concatenate([np.full(len(r), snap, dtype=np.int64) for r, snap in st.pending])
    st.pending.clear()
    for a in range(0, len(idx), CHUNK_ROWS):
        sel = idx[a : a + CHUNK_ROWS]
        rows = _Rows(buf, starts[sel], lens[sel], ~hi[sel], sel + base + 1, snaps[a : a + CHUNK_ROWS])
        if st.states is not None and "stat" in st.layout.src:
            rows = _counted(st, rows)
        st.pieces.append(_to_frame(st.layout, rows, st.member, st.warnings))


def _plain_digits(block: np.ndarray) -> np.ndarray:
    """Rows of a (n, w) uint8 block that hold digits and blanks only, at least one digit."""
    digit = (block - np.uint8(48)) <= 9  # uint8: below "0" wraps around
    return (digit | (block == _SPACE)).all(axis=1) & digit.any(axis=1)


def _counted(st: _State, rows: _Rows) -> _Rows:
    """The rows of a chunk that ``_to_frame`` types when ``parse`` was given ``states``.

    The others are threads in another state (sleeping ``S`` and idle ``I`` threads: nine in ten on a
    busy server) on a well-formed row (every field in place, one token each, PID digits) that is not
    the first of its snapshot: they are only counted, by their STAT, into ``st.untyped``; their other
    cells are not read (so a garbled %CPU there is not warned about). Any other row is typed, read,
    warned about or refused as without ``states`` (a ``ps m`` listing's ``-`` PID is refused)."""
    layout = st.layout
    assert layout is not None
    raw, ok = _split(layout, rows, only=("stat", "pid"))
    fast = np.flatnonzero(ok)
    codes, uniq = raw["stat"]
    letters = [u.decode("ascii").strip()[:1] for u in uniq]
    other = np.array([letter not in st.states and letter != "" for letter in letters], dtype=bool)
    skip = other[codes] if len(codes) else np.zeros(0, dtype=bool)
    skip &= _plain_digits(raw["pid"])
    skip &= ~first_of_snapshots(rows.snaps, st.first_typed)[fast]
    if skip.any():
        pairs = pd.DataFrame({"snapshot": rows.snaps[fast[skip]], "code": codes[skip]})
        for (snap, code), n in pairs.value_counts(sort=False).items():
            key = (int(snap), letters[int(code)])
            st.untyped[key] = st.untyped.get(key, 0) + int(n)
    keep = np.ones(len(rows.starts), dtype=bool)
    keep[fast[skip]] = False
    return _Rows(
        rows.buf, rows.starts[keep], rows.lens[keep], rows.ascii_ok[keep], rows.nos[keep], rows.snaps[keep]
    )


def _scan(st: _State, text: str, base: int) -> None:
    """Classify the lines of one batch (markers, headers, rows) on its byte buffer, then type its rows.

    ``base``: lines before this batch. Only marker and header candidates (a line starting with
    ``T``/``z``, a line containing ``PID``) are looked at one by one.
    """
    data = text.encode("utf-8")
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    # blank tail so that every row's window of the widest row fits (see _grid)
    longest = int((ends - np.r_[0, ends[:-1] + 1]).max())
    buf = np.concatenate([buf, np.full(longest + 2 * _WORD, _SPACE, np.uint8)])
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lens = ends - starts
    rows = np.flatnonzero(lens)  # blank-only lines are dropped when a row is read by token
    if text.isascii():
        hi = np.zeros(len(ends), dtype=bool)
    else:
        high = np.concatenate([[0], np.cumsum(buf >= 128)])
        hi = high[ends] > high[starts]
    first = buf[np.minimum(starts, len(buf) - 1)]
    cand = set(np.flatnonzero((first == ord("T")) | (first == ord("z"))).tolist())
    pos = data.find(b"PID")
    while pos != -1:
        li = int(np.searchsorted(ends, pos))
        cand.add(li)
        pos = data.find(b"PID", int(ends[li]) + 1)

    def take(lo: int, hi_line: int) -> None:  # data rows in lines [lo, hi_line)
        seg = rows[np.searchsorted(rows, lo) : np.searchsorted(rows, hi_line)]
        if not len(seg):
            return
        if st.layout is None:
            seg = seg[[not buf[starts[i] : ends[i]].tobytes().isspace() for i in seg]]  # blank-only lines
            if not len(seg):
                return
            i = int(seg[0])
            line = buf[starts[i] : ends[i]].tobytes().decode("utf-8", "replace")
            raise ParseError(
                st.member, base + i + 1, line, "no ps header (a line with PID and other column names)"
            )
        st.pending.append((seg, st.snapshot))
        st.rows_in_snapshot += len(seg)
        st.snap_lines[st.snapshot][1] = base + int(seg[-1]) + 1

    prev = 0
    for li in sorted(cand):
        line = buf[starts[li] : ends[li]].tobytes().decode("utf-8", "replace").rstrip()
        no = base + li + 1
        marker = parse_marker(line) if line[:1] in ("T", "z") else None
        if marker is not None:
            take(prev, li)
            st.new_snapshot(marker, no)
            prev = li + 1
        elif st.layout is not None and line == st.layout.header:
            take(prev, li)
            if st.rows_in_snapshot:
                st.new_snapshot(None, no)
            prev = li + 1
        elif "PID" in line and _header_tokens(line) is not None:
            take(prev, li)
            _emit(st, buf, starts, lens, hi, base)
            st.layout = _layout(line, st.member, no, st.warnings)
            if st.rows_in_snapshot or st.snapshot < 0:
                st.new_snapshot(None, no)
            prev = li + 1
    take(prev, len(ends))
    _emit(st, buf, starts, lens, hi, base)


def parse(
    stream: Iterable[str], *, member: str, clock: ClockHints, states: frozenset[str] | None = None
) -> ParsedSource:
    """Parse a ps listing (one or many snapshots) into ``ps_threads``; see the module docstring.

    ``stream``: text lines. ``states``: when given (and the listing has STAT or S), only the threads
    in these states (first letters: ``R``, ``D``...) and the first thread of each snapshot are rows
    of ``ps_threads`` (see ``_counted``), and a second frame, ``ps_state_counts`` (``ts``,
    ``line_no`` and ``line_end`` the first and last row of the snapshot, ``state``, ``threads``
    int64), counts every thread of each snapshot by state: a day of 2,000 mostly sleeping threads a
    second is counted, not typed row by row. Raises ``ParseError`` when the member is not a ps
    listing.
    """
    st = _State(member, [], states)
    for first, text in text_chunks(raw_blocks(stream)):  # whole lines, a few MB at a time
        _scan(st, text, first - 1)
    warnings = st.warnings
    if st.layout is None:  # nothing but blank lines and markers
        warnings.append(ParseWarning(0, "empty", "no ps rows"))
    frame = _frame(st.pieces)
    times = snapshot_times(st.markers, clock, warnings)
    frame["ts"] = (
        times.ts[frame["snapshot"].to_numpy()] if len(frame) else pd.Series([], dtype="datetime64[ns, UTC]")
    )
    frame = frame[list(_COLUMNS)]
    frames = {FRAME: frame}
    if states is not None and st.layout is not None and "stat" in st.layout.src:
        frames = {FRAME: _kept(frame, states), COUNTS_FRAME: _counts(st, frame, times.ts)}
    meta: dict[str, object] = {
        "tool": "ps",
        "columns": [c.name for c in st.layout.cols] if st.layout else [],
        "threads": bool(st.layout is not None and "tid" in st.layout.src),
        "snapshots": [(i, a, b) for i, (a, b) in enumerate(st.snap_lines)],
    }
    if times.utc_offset_s is not None:
        meta["utc_offset_s"] = times.utc_offset_s
    meta["variant"] = _variant(st.layout)
    return ParsedSource(FORMAT, member, frames, times.clock, warnings, meta, times.ts_is_local)


def _kept(frame: pd.DataFrame, states: frozenset[str]) -> pd.DataFrame:
    """The rows of threads in ``states`` and the first row of each snapshot."""
    keep = frame["state"].isin(states).to_numpy(dtype=bool) | ~frame["snapshot"].duplicated().to_numpy()
    return frame if keep.all() else frame[keep].reset_index(drop=True)


def _counts(st: _State, frame: pd.DataFrame, ts: pd.DatetimeIndex) -> pd.DataFrame:
    """Threads per snapshot and state: the typed rows of ``frame`` and those ``_counted`` skipped."""
    typed = frame.groupby(["snapshot", "state"], observed=True).size()
    counts = dict(zip(typed.index.tolist(), typed.tolist(), strict=True))
    for key, n in st.untyped.items():
        counts[key] = counts.get(key, 0) + n
    keys = sorted(counts)
    snap = np.array([k[0] for k in keys], dtype=np.int64)
    first_row = frame.groupby("snapshot")["line_no"].min()  # the first row of a snapshot is typed
    return pd.DataFrame(
        {
            "ts": pd.Series(ts[snap] if len(snap) else [], dtype="datetime64[ns, UTC]"),
            "line_no": first_row.reindex(snap).to_numpy(dtype=np.int64),
            "line_end": np.array([st.snap_lines[k][1] for k in snap], dtype=np.int64),
            "state": pd.Series([k[1] for k in keys], dtype="string"),
            "threads": np.array([counts[k] for k in keys], dtype=np.int64),
        }
    )


#: Headers of the standard listings (procps-ng ps(1) "EXAMPLES"), by their column names.
KNOWN_LISTINGS: dict[str, str] = {
    "UID PID PPID LWP C NLWP STIME TTY TIME CMD": "ps -eLf",
    "F S UID PID PPID LWP C PRI NI ADDR SZ WCHAN STIME TTY TIME CMD": "ps -elfL",
    "UID PID PPID C SZ RSS PSR STIME TTY TIME CMD": "ps -eaF",
    "UID PID PPID C STIME TTY TIME CMD": "ps -ef",
    "F S UID PID PPID C PRI NI ADDR SZ WCHAN STIME TTY TIME CMD": "ps -elf",
    "F UID PID PPID PRI NI VSZ RSS WCHAN STAT TTY TIME COMMAND": "ps alx",
    "USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND": "ps aux",
}


def _variant(layout: _Layout | None) -> str:
    """``ps -eLo with wchan``: the standard listing the header is, else ``-o`` (``-eLo`` with a
    thread id column); whether WCHAN and threads are there."""
    if layout is None:
        return "ps"
    names = " ".join(c.name for c in layout.cols)
    threads = "tid" in layout.src
    name = KNOWN_LISTINGS.get(names) or ("ps -eLo" if threads else "ps -o")
    clues = [name + (" with wchan" if "wchan" in layout.src else "")]
    if not threads:
        clues.append("no threads")
    if any(c.ntok == LSTART_TOKENS for c in layout.cols):
        clues.append("lstart")
    return ", ".join(clues)


def _empty() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "line_no": np.zeros(0, np.int64),
            "snapshot": np.zeros(0, np.int64),
            "pid": np.zeros(0, np.int64),
            "tid": np.zeros(0, np.int64),
            "ppid": pd.array([], dtype="Int64"),
            "pcpu": np.zeros(0, np.float64),
        }
    )
    for col in (*_TEXT, "state"):
        frame[col] = _missing(0)
    return frame


def _missing(n: int) -> pd.Categorical:
    """A text column the listing does not have: all NA, string categories."""
    return pd.Categorical.from_codes(np.full(n, -1, dtype=np.int64), categories=pd.Index([], dtype="str"))
