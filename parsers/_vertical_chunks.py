"""Chunks of a large vertical member read into rows (``read_chunk``): ``SHOW PROCESSLIST\\G`` every
second for a day (``parsers.processlist``), cut into chunks that end on a record boundary
(``cut_chunk``). The keys are learned from the first row; a regular chunk is read as bytes with NumPy
(``parsers._bytes``), any other with one regex per row. The rows go to a ``RowSink``
(``parsers._processlist_rows.State``).

The record-by-record reader of the small members, and the snapshot times, are in
``parsers._vertical``. Not a format.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from parsers._bytes import DIGIT, MAX_PATTERN, SPACE, Bytes, numbers_of, texts_of
from parsers._vertical import ANY_ROW_HEADER, KEY_LINE
from parsers.base import TsMarker, parse_marker


class RowSink(Protocol):
    """What ``read_chunk`` fills, from one chunk to the next (``parsers._processlist_rows.State``):
    the snapshot and the rows in it, the keys learned from the first row and their readers, and
    and which rows of a regular chunk to type (``typed_rows``)."""

    snapshot: int
    rows_in_snapshot: int
    columns: tuple[str, ...] | None
    vertical_re: re.Pattern[str] | None
    vertical_keys: VerticalKeys | None

    def marker(self, marker: TsMarker) -> None:
        """A ``TS``/``zzz`` marker: a new snapshot."""

    def new_listing(self) -> None:
        """A row numbered 1: a new snapshot unless a marker just opened one."""

    def odd(self, line_no: int, text: str) -> None:
        """Text between records (named unless blank)."""

    def no_rows(self, first: int, text: str) -> None:
        """A chunk before the first row."""

    def kind(self, key: str) -> str:
        """``int``, ``float`` or ``text``: how the cells of ``key`` are read."""

    def typed_rows(
        self,
        chunk: Bytes,
        layout: VerticalKeys,
        vs: list[np.ndarray | None],
        ve: list[np.ndarray | None],
        snaps: np.ndarray,
        long_info: np.ndarray,
        lines: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """The rows of a regular chunk to type (indices; the others only counted), or None: all.
        ``vs``/``ve``: each key's cell ranges in ``chunk`` (those of Command, Time, User and Host; None
        for the other keys); ``long_info``: rows whose Info spans lines; ``lines``: each row's first
        line in the member."""

    def add(
        self,
        columns: tuple[str, ...],
        starts: Sequence[int],
        ends: Sequence[int],
        snaps: Sequence[int],
        rows: list | pd.DataFrame,
    ) -> None:
        """Rows as records (one sequence of cells each)."""

    def add_columns(
        self,
        columns: tuple[str, ...],
        starts: Sequence[int],
        ends: Sequence[int],
        snaps: Sequence[int],
        cells: list,
    ) -> None:
        """Rows as one cell sequence per column."""


# ---------------------------------------------------------------------------------------------
# Chunks of a large member (SHOW PROCESSLIST\G every second for a day): regex and NumPy readers
# ---------------------------------------------------------------------------------------------
def cut_chunk(text: str) -> int:
    """Start of the last row header or marker line of ``text`` (chunks end on a record boundary)."""
    row = text.rfind(". row ***")
    start = text.rfind("\n", 0, row) + 1 if row > 0 else 0
    # each search only after the latest start found: a capture without `zzz` markers is not read whole
    start = max(start, text.rfind("\nTS ", start) + 1)
    return max(start, text.rfind("\nzzz ", start) + 1)


def _lines_from(text: str) -> Iterator[str]:
    """The lines of ``text`` one by one (a chunk is a few MB; the keys are in its first lines)."""
    pos = 0
    while pos <= len(text):
        end = text.find("\n", pos)
        if end < 0:
            end = len(text)
        yield text[pos:end]
        pos = end + 1


def _learn_keys(text: str) -> tuple[tuple[str, ...], list[str]] | None:
    """Keys and their exact prefixes (``'      Id:'``) from the first row of ``text``."""
    lines = _lines_from(text)
    for line in lines:
        if ANY_ROW_HEADER.match(line):
            break
    else:
        return None
    keys: list[str] = []
    prefixes: list[str] = []
    colon_at = None
    for line in lines:
        if ANY_ROW_HEADER.match(line) or line.startswith(("TS ", "zzz ")):
            break
        m = KEY_LINE.match(line)
        if not m:
            continue
        at = m.end(2)
        if colon_at is None:
            if m.group(2) != "Id":
                return None
            colon_at = at
        if at != colon_at:
            continue  # an Info line that happens to contain "word:"
        keys.append(m.group(2))
        prefixes.append(line[: at + 1])
    return (tuple(keys), prefixes) if keys else None


def _vertical_regex(keys: tuple[str, ...], prefixes: list[str]) -> re.Pattern[str]:
    row_header = r"[ \t]*\*+ (\d+)\. row \*+[ \t]*\n"
    end_of_row = r"[ \t]*\*+ \d+\. row \*+[ \t]*$|(?:TS|zzz) "
    parts = [row_header]
    for i, (key, prefix) in enumerate(zip(keys, prefixes, strict=True)):
        if key == "Info":
            stop = re.escape(prefixes[i + 1]) if i + 1 < len(keys) else end_of_row
            # NULL cannot span lines: whatever follows it (an `ERROR 2013` line) is not Info.
            value = f"NULL(?=\\n)|[^\\n]*(?:\\n(?!{stop})[^\\n]*)*"
            parts.append(f"{re.escape(prefix)} ?({value})\\n")
        else:
            parts.append(f"{re.escape(prefix)} ?([^\\n]*)\\n")
    row = "".join(parts)
    return re.compile(f"^(?:(?P<marker>(?:TS|zzz) [^\\n]*)\\n|(?P<row>{row}))", re.M)


def read_chunk(first: int, text: str, state: RowSink) -> None:
    """Rows of a vertical chunk: read as bytes with NumPy when the chunk is regular (see
    :func:`_vertical_fast`), else with the row regex, line by line."""
    if state.vertical_re is None:
        learned = _learn_keys(text)
        if learned is None:
            return state.no_rows(first, text)
        state.columns = learned[0]
        state.vertical_re = _vertical_regex(*learned)
        state.vertical_keys = VerticalKeys(*learned, [state.kind(k) for k in learned[0]])
    if _vertical_fast(first, text, state):
        return None
    return _vertical_regex_chunk(first, text, state)


def _vertical_regex_chunk(first: int, text: str, state: RowSink) -> None:
    """The rows of a chunk with the row regex: any text between rows is named (``unreadable-line``)."""
    regex = state.vertical_re
    assert regex is not None
    columns = state.columns
    starts: list[int] = []
    ends: list[int] = []
    snaps: list[int] = []
    rows: list[tuple] = []
    pos = 0
    line_no = first
    for m in regex.finditer(text):
        start = m.start()
        if start > pos:
            gap = text[pos:start]
            state.odd(line_no, gap.rstrip("\n"))
            line_no += gap.count("\n")
        if m.group("marker") is not None:
            marker = parse_marker(m.group("marker"))
            if marker is None:
                state.odd(line_no, m.group("marker"))
            else:
                state.marker(marker)
            line_no += 1
        else:
            groups = m.groups()
            # groups: (marker, row, row_number, values...)
            if groups[2] == "1":
                state.new_listing()
            elif state.snapshot < 0:
                state.snapshot = 0
            n_lines = m.group(0).count("\n")
            starts.append(line_no)  # the session's lines start with its `*** N. row ***` header
            ends.append(line_no + n_lines - 1)
            snaps.append(state.snapshot)
            rows.append(groups[3:])
            state.rows_in_snapshot += 1
            line_no += n_lines
        pos = m.end()
    if pos < len(text):
        state.odd(line_no, text[pos:].rstrip("\n"))
    state.add(columns, starts, ends, snaps, rows)
    return None


# ---------------------------------------------------------------------------------------------
# Vertical (\G) chunks read as bytes with NumPy
# ---------------------------------------------------------------------------------------------
#: A row header as the mysql client prints it (no blanks around it): stars, number, ``. row``, stars.
_HEADER_SHAPE = re.compile(r"(\*+) [0-9]+\. row (\*+)")
#: Where a multi-line Info that is the last column stops (the row regex's ``end_of_row``).
_END_OF_INFO = re.compile(r"[ \t]*\*+ \d+\. row \*+[ \t]*$|(?:TS|zzz) ")


class VerticalKeys:
    """The keys of the first row (``'      Id:'`` prefixes) as :func:`_vertical_fast` compares them."""

    def __init__(self, keys: tuple[str, ...], prefixes: list[str], kinds: list[str]) -> None:
        self.keys = keys
        self.prefixes = [p.encode("utf-8") for p in prefixes]
        self.info = keys.index("Info") if "Info" in keys else -1
        #: the Info of a row runs until a line that starts with the next key's prefix (None: Info is
        #: the last key and runs until the next row or marker)
        self.stop = prefixes[self.info + 1] if 0 <= self.info < len(keys) - 1 else None
        #: ``int``, ``float`` or ``text`` per key (``RowSink.kind``)
        self.kinds = kinds
        self.usable = len(set(keys)) == len(keys) and all(len(p) <= MAX_PATTERN for p in self.prefixes)


@dataclass(frozen=True, slots=True)
class _Lines:
    """A chunk's UTF-8 ``data`` (``chunk``: its ``Bytes``) and the start and newline of each line."""

    data: bytes
    chunk: Bytes
    starts: np.ndarray
    ends: np.ndarray

    def text(self, line: int) -> str:
        return self.data[self.starts[line] : self.ends[line]].decode("utf-8")


def _vertical_fast(first: int, text: str, state: RowSink) -> bool:
    """Read a vertical chunk with NumPy on its UTF-8 bytes, when it is regular: only ``TS``/``zzz``
    markers and rows; every row header exactly ``*** N. row ***`` with the stars of the chunk's
    first header and no blanks around; every key line where the learned keys put it, with its exact
    prefix; a multi-line Info only where the row regex reads the same lines into it. Then the rows,
    cells, snapshots and line numbers are those of :func:`_vertical_regex_chunk`; False (nothing
    done) for any other chunk, which that function reads."""
    layout = state.vertical_keys
    if layout is None or not layout.usable or not text.endswith("\n"):
        return False
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    chunk = Bytes(data)
    ends = np.flatnonzero(chunk.buf[: len(data)] == 10)  # the newline of each line
    starts = np.r_[0, ends[:-1] + 1].astype(np.int64)
    lines = _Lines(data, chunk, starts, ends)
    lead = chunk.buf[starts]
    headers = np.flatnonzero(lead == ord("*"))
    if not len(headers):
        return False
    maybe = np.flatnonzero((lead == ord("T")) | (lead == ord("z")))
    marks = maybe[chunk.starts_with(starts[maybe], b"TS ") | chunk.starts_with(starts[maybe], b"zzz ")]
    row_one = _row_ones(lines, headers)
    row_end = None if row_one is None else _row_ends(lead, headers, marks, len(ends))
    cells = None if row_end is None else _key_cells(lines, layout, headers, row_end)
    if cells is None:
        return False
    key_lines, long_info, whole_info = cells
    snaps = _snapshots(first, lines, headers, marks, row_one, state)
    # the cells the choice of rows reads first (Command, Time; User and Host to count the rows not
    # typed by account), then every cell of the rows typed
    vs, ve = _cell_ranges(lines, layout, key_lines, long_info, {"Command", "Time", "User", "Host"})
    rows = state.typed_rows(chunk, layout, vs, ve, snaps, long_info, first + headers)
    if rows is not None:
        key_lines = [line[rows] for line in key_lines]
        headers, row_end, snaps = headers[rows], row_end[rows], snaps[rows]
        long_info = np.searchsorted(rows, long_info)
    vs, ve = _cell_ranges(lines, layout, key_lines, long_info)
    values = _typed(chunk, layout, vs, ve)
    if len(long_info):
        info = values[layout.info]
        for r, value in zip(long_info.tolist(), whole_info, strict=True):
            info[r] = value
    state.add_columns(layout.keys, first + headers, first + row_end - 1, snaps, values)
    return True


def _row_ones(lines: _Lines, headers: np.ndarray) -> np.ndarray | None:
    """Whether each row header (line indices ``headers``) numbers row 1; None when one is not
    exactly the first header's shape (its stars, a number of 1-18 digits, no blanks)."""
    chunk, buf = lines.chunk, lines.chunk.buf
    shape = _HEADER_SHAPE.fullmatch(lines.text(int(headers[0])))
    if shape is None:
        return None
    head = shape.group(1).encode() + b" "
    tail = b". row " + shape.group(2).encode()
    if len(head) > MAX_PATTERN or len(tail) > MAX_PATTERN:
        return None
    h_start, h_end = lines.starts[headers], lines.ends[headers]
    n_digits = h_end - h_start - len(head) - len(tail)
    if n_digits.min() < 1 or n_digits.max() > 18:
        return None
    if not (chunk.starts_with(h_start, head).all() and chunk.starts_with(h_end - len(tail), tail).all()):
        return None
    widest = int(n_digits.max())
    digits = buf[(h_start + len(head))[:, None] + np.arange(widest)]
    if not (((digits - DIGIT) <= 9) | (np.arange(widest) >= n_digits[:, None])).all():
        return None
    return (n_digits == 1) & (digits[:, 0] == ord("1"))


def _row_ends(lead: np.ndarray, headers: np.ndarray, marks: np.ndarray, n_lines: int) -> np.ndarray | None:
    """The line after each row (a row runs to the next record); None unless the chunk starts with a
    record and every marker is one line."""
    records = np.sort(np.concatenate([headers, marks]))
    if records[0] != 0:
        return None
    following = np.r_[records[1:], n_lines]
    is_mark = lead[records] != ord("*")
    if (following[is_mark] - records[is_mark] != 1).any():
        return None
    return following[~is_mark]


def _key_cells(
    lines: _Lines, layout: VerticalKeys, headers: np.ndarray, row_end: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray, list[str]] | None:
    """The line of each key in every row (``_cell_ranges`` reads the cells), the rows whose Info
    spans lines and their whole Info; None when a key line is not where the learned keys put it, or
    a multi-line Info is not read as the row regex reads it."""
    chunk, buf, starts, ends, data = lines.chunk, lines.chunk.buf, lines.starts, lines.ends, lines.data
    extra = row_end - headers - 1 - len(layout.keys)  # lines of a multi-line Info past its first
    if extra.min() < 0 or (layout.info < 0 and extra.any()):
        return None
    key_lines = []
    for k, prefix in enumerate(layout.prefixes):
        line = headers + 1 + k + (extra if k > layout.info >= 0 else 0)
        if not chunk.starts_with(starts[line], prefix).all():
            return None
        key_lines.append(line)
    long_info = np.flatnonzero(extra)
    whole_info: list[str] = []
    if len(long_info):
        info_line = key_lines[layout.info][long_info]
        more = extra[long_info]
        vs = starts[info_line] + len(layout.prefixes[layout.info])
        vs += buf[vs] == SPACE
        for line, n, a in zip(info_line.tolist(), more.tolist(), vs.tolist(), strict=True):
            for cont in range(line + 1, line + n + 1):
                body = lines.text(cont)
                if (body.startswith(layout.stop)) if layout.stop is not None else _END_OF_INFO.match(body):
                    return None  # the row regex ends the Info there
            if layout.stop is None and data[a : ends[line]] == b"NULL":
                return None  # `Info: NULL` cannot span lines: the lines after it are not Info
        whole_info = [data[a:b].decode("utf-8") for a, b in zip(vs, ends[info_line + more], strict=True)]
    return key_lines, long_info, whole_info


def _cell_ranges(
    lines: _Lines,
    layout: VerticalKeys,
    key_lines: list[np.ndarray],
    long_info: np.ndarray,
    keys: set[str] | None = None,
) -> tuple[list, list]:
    """Where each key's cell starts and ends (byte offsets) in the rows of ``key_lines``: after the
    key's prefix and one optional blank, to the end of its line; an Info that spans lines (rows
    ``long_info``) is read as empty, then replaced by its whole text. Only the ``keys`` given
    (None for the others), or all of them."""
    vs: list = []
    ve: list = []
    for key, line, prefix in zip(layout.keys, key_lines, layout.prefixes, strict=True):
        if keys is not None and key not in keys:
            vs.append(None)
            ve.append(None)
            continue
        start = lines.starts[line] + len(prefix)
        start += lines.chunk.buf[start] == SPACE
        end = lines.ends[line]
        if key == "Info" and len(long_info):
            start[long_info] = end[long_info]
        vs.append(start)
        ve.append(end)
    return vs, ve


def _snapshots(
    first: int, lines: _Lines, headers: np.ndarray, marks: np.ndarray, row_one: np.ndarray, state: RowSink
) -> np.ndarray:
    """The snapshot of each row: markers and rows numbered 1 taken in line order (``state.marker``,
    ``state.new_listing``), the rows between them counted at once."""
    snaps = np.empty(len(headers), dtype=np.int64)
    done = 0

    def rows_until(stop: int) -> None:
        nonlocal done
        if stop > done:
            if state.snapshot < 0:
                state.snapshot = 0
            snaps[done:stop] = state.snapshot
            state.rows_in_snapshot += stop - done
            done = stop

    marks_at = np.searchsorted(headers, marks)  # rows before each marker
    events = [(int(m), -1, int(r)) for m, r in zip(marks, marks_at, strict=True)]
    events += [(int(headers[r]), 1, int(r)) for r in np.flatnonzero(row_one)]
    for line, kind, r in sorted(events):
        rows_until(r)
        if kind < 0:
            body = lines.text(line)
            marker = parse_marker(body)
            if marker is None:
                state.odd(first + line, body)
            else:
                state.marker(marker)
        else:
            state.new_listing()
            snaps[r] = state.snapshot
            state.rows_in_snapshot += 1
            done = r + 1
    rows_until(len(headers))
    return snaps


def _typed(chunk: Bytes, layout: VerticalKeys, vs: list[np.ndarray], ve: list[np.ndarray]) -> list:
    """Every key's cells: numbers (``numbers_of``) for ``int``/``float`` keys whose cells all read as
    such, else texts (``texts_of``)."""
    cells: list = [None] * len(layout.keys)
    texts = []
    for k, kind in enumerate(layout.kinds):
        if kind != "text":
            cells[k] = numbers_of(chunk, vs[k], ve[k], kind == "float")
        if cells[k] is None:
            texts.append(k)
    for k, values in zip(texts, texts_of(chunk.buf, [(vs[k], ve[k]) for k in texts]), strict=True):
        cells[k] = values
    return cells
