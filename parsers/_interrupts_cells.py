"""The counts of ``/proc/interrupts`` rows (``parsers.interrupts``): each row's count text, located
by the parser in its line, read as int64 with NumPy, as a grid of the kernel's fixed-width cells
(``" %10u"``, kernel/irq/proc.c ``show_interrupts()``) when they are, else by NumPy's text reader,
else token by token. Not a format.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from parsers.base import ParseWarning

#: The byte of a blank.
SPACE = 32


class Rows(Protocol):
    """The rows a parse collected (``parsers.interrupts._Acc``): per row, in file order, its IRQ
    ``labels``, ``row_lines`` (1-based), ``row_snaps``, ``row_cpus`` (CPU numbers of its counts),
    ``ks`` (how many counts) and ``spans`` (start and end of its count text in its line)."""

    warnings: list[ParseWarning]
    labels: list[str]
    row_lines: list[int]
    row_snaps: list[int]
    row_cpus: list[np.ndarray]
    ks: list[int]
    spans: list[tuple[int, int]]


#: Rows whose count texts are read in one NumPy call (a few hundred kB of text: the buffers are
#: reused from one batch to the next instead of growing with the member).
BATCH_ROWS = 1024
#: Characters a row's count text may hold for :func:`fast_counts`, with the ``-1`` it adds.
_COUNT_CHARS = b" -0123456789"
#: The kernel prints each count as ``" %10u"`` (kernel/irq/proc.c, arch/x86/kernel/irq.c): a row's
#: count text is this many characters a count when no count is wider than 10 digits.
CELL = 11
#: The high half of a digit's byte, and the last digit.
_DIGITS, _NINE = np.uint8(0x30), ord("9")


def fast_counts(acc: Rows, lines: list[str]) -> np.ndarray | None:
    """All counts as int64, read batch by batch from the rows' count texts; None unless every text
    holds exactly its row's number of plain decimal counts (ASCII digits and spaces only).

    A batch whose texts are all ``CELL`` characters a count is read as a grid of cells
    (:func:`_cells`); another is joined with a ``-1`` after each row and read by NumPy's text reader,
    the ``-1`` landing where expected proving the number of counts."""
    ks = np.array(acc.ks, dtype=np.int64)
    counts = np.empty(int(ks.sum()), dtype=np.int64)
    spans, row_lines = acc.spans, acc.row_lines
    widths = np.fromiter((b - a for a, b in spans), dtype=np.int64, count=len(spans))
    fixed = widths == CELL * ks
    out = 0
    for first in range(0, len(ks), BATCH_ROWS):
        last = min(first + BATCH_ROWS, len(ks))
        texts = [
            lines[no - 1][a:b] for no, (a, b) in zip(row_lines[first:last], spans[first:last], strict=True)
        ]
        values = _cells("".join(texts)) if fixed[first:last].all() else None
        if values is None:
            values = _joined(texts, ks[first:last])
        if values is None:
            return None
        counts[out : out + len(values)] = values
        out += len(values)
    return counts


def _cells(text: str) -> np.ndarray | None:
    """The counts of a text of ``CELL``-character cells, each a blank then a right-aligned decimal
    (``"      1234"``), as int64; None when a cell is anything else."""
    if not text.isascii():
        return None
    data = text.encode("ascii")
    flat = np.frombuffer(data, dtype=np.uint8)
    n = len(flat) // CELL
    filled = flat != SPACE
    # every byte a blank or a digit ("0".."9" are 0x30..0x39, and no other byte up to "9" is 0x3_);
    # every cell starts blank and ends with a digit, so it holds one number when blanks and digits
    # change places once in each cell and once between two cells, nowhere else
    if (
        not len(flat)
        or flat.max() > _NINE
        or np.count_nonzero((flat & np.uint8(0xF0)) == _DIGITS) != np.count_nonzero(filled)
        or filled[::CELL].any()
        or not filled[CELL - 1 :: CELL].all()
        or np.count_nonzero(filled[1:] != filled[:-1]) != 2 * n - 1
    ):
        return None
    return _cell_values(data, n)


#: Eight ASCII digits in a little-endian word to their number in three steps, two places at a time,
#: then four, then eight: (mask, multiplier, shift) of each (SWAR; blanks, ``& 0x0F``, count as 0).
_EIGHT_DIGITS = (
    (0x0F0F0F0F0F0F0F0F, 10 << 8 | 1, 8),
    (0x00FF00FF00FF00FF, 100 << 16 | 1, 16),
    (0x0000FFFF0000FFFF, 10_000 << 32 | 1, 32),
)


def _cell_values(data: bytes, n: int) -> np.ndarray:
    """The numbers of the ``n`` cells of ``data`` (checked by :func:`_cells`): the last eight places of
    each read as one word, the first two (at most 99, x 10**8) apart."""
    low = np.ndarray((n,), dtype="<u8", buffer=data, offset=CELL - 8, strides=(CELL,)).copy()
    for mask, times, shift in _EIGHT_DIGITS:
        low &= np.uint64(mask)
        low *= np.uint64(times)  # wraps modulo 2**64: the bits kept are exact
        low >>= np.uint64(shift)
    high = np.ndarray((n,), dtype="<u2", buffer=data, offset=1, strides=(CELL,)) & np.uint16(0x0F0F)
    values = ((high & np.uint16(0xFF)) * np.uint16(10) + (high >> np.uint16(8))).astype(np.int64)
    values *= 100_000_000
    values += low.view(np.int64)
    return values


def _joined(texts: list[str], ks: np.ndarray) -> np.ndarray | None:
    """The counts of the rows' count ``texts`` (``ks`` counts each), joined with a ``-1`` after each
    row and read by NumPy's text reader; None unless each text holds its number of plain decimals."""
    joined = " -1 ".join([*texts, ""])
    if not joined.isascii():
        return None
    data = joined.encode("ascii")
    if data.translate(None, _COUNT_CHARS) or data.count(b"-") != len(texts):
        return None
    try:
        values = np.fromstring(data, dtype=np.int64, sep=" ")
    except ValueError:
        return None
    marks = np.cumsum(ks + 1) - 1  # where each row's -1 lands
    if len(values) != int(marks[-1]) + 1 or not (values[marks] == -1).all():
        return None
    keep = np.ones(len(values), dtype=bool)
    keep[marks] = False
    return values[keep]


def slow_counts(acc: Rows, lines: list[str]) -> np.ndarray:
    """All counts as int64, token by token; rows with a count that is not a number are dropped with a
    ``bad-row`` warning (rare: checked per row only when needed)."""
    tokens = [
        t for no, (a, b) in zip(acc.row_lines, acc.spans, strict=True) for t in lines[no - 1][a:b].split()
    ]
    if tokens and not "".join(tokens).isdigit():
        tokens = _drop_bad(acc, tokens)
    # every token is digits (checked above): NumPy's text reader converts them all at C speed
    return np.fromstring(" ".join(tokens), dtype=np.int64, sep=" ") if tokens else np.zeros(0, np.int64)


def _drop_bad(acc: Rows, counts: list[str]) -> list[str]:
    """Drop the rows with a count that is not a number; returns the count tokens of the rows kept."""
    keep = []
    pos = 0
    for i, c in enumerate(acc.row_cpus):
        tokens = counts[pos : pos + len(c)]
        pos += len(c)
        if all(t.isdigit() for t in tokens):
            keep.append(i)
        else:
            bad = next(t for t in tokens if not t.isdigit())
            acc.warnings.append(ParseWarning(acc.row_lines[i], "bad-row", f"{acc.labels[i]}: count {bad!r}"))
    offsets = np.concatenate([[0], np.cumsum([len(c) for c in acc.row_cpus])])
    kept = [t for i in keep for t in counts[offsets[i] : offsets[i + 1]]]
    acc.labels = [acc.labels[i] for i in keep]
    acc.row_lines = [acc.row_lines[i] for i in keep]
    acc.row_snaps = [acc.row_snaps[i] for i in keep]
    acc.row_cpus = [acc.row_cpus[i] for i in keep]
    acc.ks = [acc.ks[i] for i in keep]
    return kept
