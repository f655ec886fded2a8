"""The cells of ``mysqladmin extended-status`` tables (``parsers.mysqladmin``): variable numbers and
value cells of a chunk's ``| name | value |`` rows, read as a byte matrix with NumPy when the tables
are regular, else with one ``split("|")``, else with a regex line by line. Not a format.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(slots=True)
class State:
    """What carries from one chunk to the next.

    Variables are numbered in the order first seen: ``names`` (number -> name), ``ids`` (name ->
    number) and ``cells`` (a row's raw name cell, padding included -> number).
    """

    tables: int = 0  # tables already emitted
    mode: str | None = None
    interval_s: float | None = None
    marker_ts: pd.Timestamp | None = None  # last marker seen, and tables read since it
    marker_wall_only: bool = False
    since_marker: int = 0
    prev_value: dict[str, float] = field(default_factory=dict)
    prev_ts: dict[str, np.datetime64] = field(default_factory=dict)
    running: dict[str, float] = field(default_factory=dict)  # relative mode: the sum so far
    string_vars: set[str] = field(default_factory=set)
    used_markers: bool = False
    local: bool = False
    names: list[str] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)
    cells: dict[str, int] = field(default_factory=dict)
    byte_cells: dict[bytes, int] = field(default_factory=dict)  # the same, as bytes
    layouts: dict[bytes, np.ndarray] = field(default_factory=dict)  # see _run_ids

    def id_of(self, name: str) -> int:
        """The number of variable ``name`` (a new one when first seen)."""
        got = self.ids.get(name)
        if got is None:
            got = self.ids[name] = len(self.names)
            self.names.append(name)
        return got


#: A table row: ``| name | value |``; the value may be empty or hold spaces (``Buffer pool(s) load
#: completed at 261122 12:22:36``); its trailing padding is stripped later, only where needed.
_ROW_FULL = re.compile(r"^\| *(\S+(?: \S+)*) *\| ?([^|\n]*)\|[ \t\r]*$", re.M)


def split_rows(lines: list[str]) -> tuple[np.ndarray, list[str], list[str], np.ndarray]:
    """Cut a chunk into its table rows: (row line indices, names, raw values, other line indices).

    ``lines`` may keep their line ends. One regex pass over the joined rows does the bulk; the rows
    found must be exactly the lines that start with ``|``, else the odd ones are located one by one.
    """
    first = np.array([ln[:1] for ln in lines], dtype="<U1") if lines else np.array([], dtype="<U1")
    is_row = first == "|"
    row_idx = np.flatnonzero(is_row)
    other_idx = np.flatnonzero(~is_row & (first != "+"))
    joined = "".join(lines) if lines and lines[0].endswith("\n") else "\n".join(lines)
    pairs = _ROW_FULL.findall(joined)
    if len(pairs) != len(row_idx):  # a `|` line that is not a two-column row: find it
        keep, pairs = [], []
        for i in row_idx:
            m = _ROW_FULL.match(lines[i].rstrip("\r\n"))
            if m:
                keep.append(i)
                pairs.append(m.groups())
            else:
                other_idx = np.append(other_idx, i)
        row_idx = np.asarray(keep, dtype="int64")
        other_idx.sort()
    names = [p[0] for p in pairs]
    values = [p[1] for p in pairs]
    return row_idx, names, values, other_idx


def cells(text: str, rows: int, state: State) -> tuple[np.ndarray, list[str]] | None:
    """The variable numbers and raw value cells of the ``rows`` table rows of ``text``, read with one
    ``split("|")``; None unless every line holding a ``|`` is a row that ``_ROW_FULL`` matches (starts
    with ``|``, exactly three of them, a name of single-space separated words, blanks after the
    last), in which case the cells are that regex's groups (a value cell keeps its leading space)."""
    if not rows:
        return None
    if not text.endswith("\n"):
        text += "\n"
    pieces = text.split("|")
    if len(pieces) != 3 * rows + 1 or (pieces[0] and not pieces[0].endswith("\n")):
        return None
    heads, values, tails = pieces[1::3], pieces[2::3], pieces[3::3]
    last = tails.pop()  # the end of the last row's line, and what follows it
    plain = tails.count("\n")  # the rest of a row's line is mostly just its end
    odd = [tail for tail in tails if tail != "\n"] if plain < len(tails) else []
    newlines = pieces[0].count("\n") + plain
    for tail in [*odd, last]:
        end = tail.find("\n")
        if end < 0 or tail[:end].strip(" \t\r") or (tail is not last and not tail.endswith("\n")):
            return None
        newlines += tail.count("\n")
    if newlines != text.count("\n"):  # a name or value cell runs over a line end
        return None
    cells = state.cells
    try:
        ids = np.fromiter(map(cells.__getitem__, heads), dtype=np.int64, count=rows)
    except KeyError:
        for head in set(heads).difference(cells):
            name = head.strip(" ")
            if name.split() != name.split(" "):
                return None  # not `\S+(?: \S+)*` between the padding
            cells[head] = state.id_of(name)
        ids = np.fromiter(map(cells.__getitem__, heads), dtype=np.int64, count=rows)
    return ids, values


#: A value cell that is only a run of 1 to 15 ASCII digits between spaces is read here: below 2**53
#: every reader gives the same float. The others go through ``pd.to_numeric``.
MAX_PLAIN_DIGITS = 15
_POW10 = 10 ** np.arange(MAX_PLAIN_DIGITS, dtype=np.int64)


def _plain_block(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, values) for a block of same-width cells (uint8 ASCII, one cell per row): the cells that
    are plain non-negative integers, and their values as float64 (0 elsewhere), digit by digit."""
    k, width = block.shape
    if not k or not width:
        return np.zeros(k, dtype=bool), np.zeros(k, dtype=np.float64)
    flat = np.ascontiguousarray(block).reshape(-1)
    digit = (flat - 48) < 10
    bad = np.zeros(k, dtype=bool)
    bad[np.flatnonzero(~digit & (flat != 32)) // width] = True  # a character that is neither
    pos = np.flatnonzero(digit)
    row = pos // width
    run = np.ones(len(pos), dtype=bool)  # a digit that starts a run of digits in its cell
    run[1:] = (pos[1:] != pos[:-1] + 1) | (row[1:] != row[:-1])
    good = ~bad & (np.bincount(row[run], minlength=k) == 1)
    good &= np.bincount(row, minlength=k) <= MAX_PLAIN_DIGITS
    keep = good[row]
    pos, row = pos[keep], row[keep]
    last = np.ones(len(pos), dtype=bool)
    last[:-1] = row[1:] != row[:-1]
    end = np.zeros(k, dtype=np.int64)
    end[row[last]] = pos[last]
    weight = _POW10[end[row] - pos]
    # sums of integers below 2**53: exact in float64
    got = np.bincount(row, weights=(flat[pos] - 48).astype(np.int64) * weight, minlength=k)
    return good, got


class Values:
    """The value cells of a chunk's rows: ``plain`` (plain integers, see :func:`_plain_block`) with
    their ``ints`` (float64), and ``text(i)``: cell ``i`` as ``_ROW_FULL``'s value group."""

    def __init__(self, plain: np.ndarray, ints: np.ndarray, text: Callable[[int], str]) -> None:
        self.plain, self.ints, self.text = plain, ints, text

    @classmethod
    def of_cells(cls, cells: list[str], lead: bool) -> Values:
        """From cell strings; ``lead``: each still has the blank after its ``|`` (dropped in ``text``)."""
        n = len(cells)
        plain = np.zeros(n, dtype=bool)
        ints = np.zeros(n, dtype=np.float64)
        joined = "".join(cells)
        if n and joined.isascii():
            data = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
            lens = np.fromiter(map(len, cells), dtype=np.int64, count=n)
            cuts = np.flatnonzero(np.diff(lens)) + 1  # runs of cells of one width: one block each
            starts = np.concatenate([[0], cuts]).tolist()
            ends = np.concatenate([cuts, [n]]).tolist()
            offsets = np.concatenate([[0], np.cumsum(lens)]).tolist()
            for a, b in zip(starts, ends, strict=True):
                block = data[offsets[a] : offsets[b]].reshape(b - a, int(lens[a]))
                plain[a:b], ints[a:b] = _plain_block(block)
        if lead:
            return cls(plain, ints, lambda i: cells[i][1:] if cells[i][:1] == " " else cells[i])
        return cls(plain, ints, cells.__getitem__)


def matrix(
    lines: list[str], joined: str, row_idx: np.ndarray, state: State
) -> tuple[np.ndarray, Values] | None:
    """Variable numbers and value cells of the table rows (``lines[row_idx]``), read as blocks of bytes:
    the rows of one width are a matrix whose ``|`` columns are the same in every row. None unless
    every line ends with its only line end and every row is one that ``_ROW_FULL`` matches (exactly
    three ``|``, a name of single-space separated words, blanks after the last ``|``); then the cells
    are that regex's groups."""
    n = len(row_idx)
    if not n or not joined.isascii():
        return None
    data = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    lens = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    ends = np.cumsum(lens)
    if int(ends[-1]) != len(data) or not lens.all() or (data[ends - 1] != 10).any():
        return None
    if np.count_nonzero(data == 10) != len(lines):
        return None
    starts = ends - lens
    width = lens[row_idx]
    ids = np.empty(n, dtype=np.int64)
    plain = np.empty(n, dtype=bool)
    ints = np.empty(n, dtype=np.float64)
    texts: list[tuple[np.ndarray, np.ndarray]] = []
    for w in np.unique(width).tolist():
        sel = np.flatnonzero(width == w)
        rows = row_idx[sel]
        # runs of consecutive row lines: one contiguous stretch of bytes each
        cut = np.flatnonzero(np.diff(rows) != 1) + 1
        run_a = np.concatenate([[0], cut]).tolist()
        run_b = np.concatenate([cut, [len(rows)]]).tolist()
        first = starts[rows[run_a]].tolist()
        views = [
            data[at : at + (b - a) * w].reshape(b - a, w)
            for at, a, b in zip(first, run_a, run_b, strict=True)
        ]
        m = views[0] if len(views) == 1 else np.concatenate(views)
        pipes = np.flatnonzero(m[0] == 124)
        if len(pipes) != 3 or np.count_nonzero(m == 124) != 3 * len(m):
            return None
        p2, p3 = int(pipes[1]), int(pipes[2])
        if not ((m[:, p2] == 124).all() and (m[:, p3] == 124).all()):
            return None
        tail = m[:, p3 + 1 : w - 1]
        if tail.size and not ((tail == 32) | (tail == 9) | (tail == 13)).all():
            return None
        got = _run_ids([v[:, 1:p2] for v in views], state)
        if got is None:
            return None
        ids[sel] = got
        block = m[:, p2 + 1 : p3]
        plain[sel], ints[sel] = _plain_block(block)
        texts.append((sel, block))
    where = np.empty((n, 2), dtype=np.int64)
    for g, (sel, _) in enumerate(texts):
        where[sel, 0] = g
        where[sel, 1] = np.arange(len(sel))

    def text(i: int) -> str:
        g, j = where[i].tolist()
        cell = texts[g][1][j].tobytes().decode("ascii")
        return cell[1:] if cell[:1] == " " else cell

    return ids, Values(plain, ints, text)


#: Name columns of tables already read (bytes -> variable numbers); cleared past this many.
MAX_LAYOUTS = 64


def _run_ids(blocks: list[np.ndarray], state: State) -> np.ndarray | None:
    """Variable numbers of the rows of each block of name cells (bytes, padding included); a table
    that repeats one seen before costs a dictionary look-up. None when a cell is not a valid name."""
    out = []
    for block in blocks:
        key = block.tobytes()
        got = state.layouts.get(key)
        if got is None:
            got = np.empty(len(block), dtype=np.int64)
            for j, raw in enumerate(block):
                cell = raw.tobytes()
                v = state.byte_cells.get(cell)
                if v is None:
                    name = cell.decode("ascii").strip(" ")
                    if name.split() != name.split(" "):
                        return None  # not `\S+(?: \S+)*` between the padding
                    v = state.byte_cells[cell] = state.id_of(name)
                got[j] = v
            if len(state.layouts) >= MAX_LAYOUTS:
                state.layouts.clear()
            state.layouts[key] = got
        out.append(got)
    return out[0] if len(out) == 1 else np.concatenate(out)


def numbers(values: Values, rows: np.ndarray) -> np.ndarray:
    """The value cells at ``rows`` as float64, exactly as ``pd.to_numeric(..., errors="coerce")``
    reads that column: NaN where it is not a number.

    Plain integers are read already (``values.ints``); ``pd.to_numeric`` reads the others, with one
    plain ``"0"`` added when there were plain ones, so that it sees the same kinds of value (ints,
    floats, unsigned, missing) as in the whole column and picks the same result type.
    """
    plain, out = values.plain[rows], values.ints[rows]
    if plain.all():
        return out
    rest = np.flatnonzero(~plain)
    raw = [values.text(i) for i in rows[rest].tolist()]
    if len(rest) == len(rows):
        return _to_numeric(raw)
    raw.append("0")
    num = pd.to_numeric(pd.Series(np.asarray(raw, dtype=object)), errors="coerce")
    if num.dtype.kind not in "iuf":
        return _to_numeric([values.text(i) for i in rows.tolist()])
    out[rest] = num.to_numpy(dtype="float64")[:-1]
    return out


def _to_numeric(raw: list[str]) -> np.ndarray:
    return pd.to_numeric(pd.Series(np.asarray(raw, dtype=object)), errors="coerce").to_numpy(dtype="float64")
