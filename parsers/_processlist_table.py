"""The table (``mysql -t``) and tab-separated (``mysql -B``) readers of ``parsers.processlist``: rows
into ``parsers._processlist_rows.State``, chunk by chunk. Not a format.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd

from parsers._processlist_rows import FLOAT_COLUMNS, INT_COLUMNS, State, out_name
from parsers.base import ParseWarning, parse_marker

TABLE_HEADER = re.compile(r"^\|\s*Id\s*\|\s*User\s*\|")
TSV_HEADER = re.compile(r"^\s*Id\tUser\t")
_BORDER = re.compile(r"^\+-[-+]*\+[ \t]*$")
_TABLE_EVENTS = re.compile(r"^(?:\+-[-+]*\+|TS [^\n]*|zzz [^\n]*)[ \t]*$", re.M)


def cut_table(text: str) -> int:
    """Start of the last table (its top border) or marker line of ``text``: chunks end there."""
    header = text.rfind("\n| Id ")
    top = text.rfind("\n", 0, header) + 1 if header > 0 else 0
    return max(top, text.rfind("\nTS ") + 1, text.rfind("\nzzz ") + 1)


# ---------------------------------------------------------------------------------------------
# Table (mysql -t)
# ---------------------------------------------------------------------------------------------
def _cells(line: str, plus: list[int], info: int) -> list[str] | None:
    """Cut one logical row by the border's ``+`` positions; the Info cell absorbs any length difference."""
    n = len(plus) - 1
    d = len(line) - (plus[-1] + 1)
    if d == 0 and all(line[p] == "|" for p in plus):
        return [line[plus[i] + 1 : plus[i + 1]].strip() for i in range(n)]
    # Misaligned (multi-line Info, wide characters): cells left of Info from the left, right of it
    # from the right end.
    if any(line[p] != "|" for p in plus[: info + 1]) or any(
        p + d >= len(line) or line[p + d] != "|" for p in plus[info + 1 :]
    ):
        return None
    cells = [line[plus[i] + 1 : plus[i + 1]].strip() for i in range(info)]
    value = line[plus[info] + 2 : plus[info + 1] + d - 1].rstrip(" ")
    cells.append(value)
    cells.extend(line[plus[i] + 1 + d : plus[i + 1] + d].strip() for i in range(info + 1, n))
    return cells


def _table_rows(
    first: int, body: str, plus: list[int], info: int, state: State, columns: tuple[str, ...]
) -> None:
    """Rows between the header's closing border and the table's last border.

    A body whose every line is one row cut only at the border's ``|`` (no multi-line value, no ``|``
    inside a cell, no wide character, no carriage return, which the C reader would take for a line
    end) waits in ``state.aligned`` for one C read per chunk (``_aligned_rows``); any other body is
    cut row by row at the border's ``+`` positions.
    """
    lines = body.split("\n")
    width = plus[-1] + 1
    if (
        body.startswith("|")
        and "\r" not in body
        and body.count("|") == len(lines) * len(plus)
        and body.count("\n|") == len(lines) - 1
        and set(map(len, lines)) == {width}
    ):
        state.aligned.setdefault(columns, []).append((first, len(lines), state.snapshot, body))
        state.rows_in_snapshot += len(lines)
        return
    starts: list[int] = []
    ends: list[int] = []
    snaps: list[int] = []
    rows: list[list[str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        while j < len(lines) and not lines[j].startswith("|"):
            j += 1  # continuation lines of a multi-line value
        logical = "\n".join(lines[i:j]).rstrip(" \t") if j > i + 1 else line.rstrip(" \t")
        if logical.strip():
            cells = _cells(logical, plus, info) if logical.startswith("|") else None
            if cells is None:
                state.warnings.append(
                    ParseWarning(first + i, "bad-row", f"cells do not line up with the border: {line[:80]!r}")
                )
            else:
                starts.append(first + i)
                ends.append(first + j - 1)
                snaps.append(state.snapshot)
                rows.append(cells)
                state.rows_in_snapshot += 1
        i = j
    state.add(columns, starts, ends, snaps, rows)


def _stripped(values: pd.Series) -> np.ndarray:
    """Cells without their padding, each distinct cell stripped once (users, hosts, states and
    statements repeat from snapshot to snapshot)."""
    codes, uniques = pd.factorize(values.to_numpy(dtype=object))
    return np.array([u.strip() for u in uniques], dtype=object)[codes]


def _aligned_rows(state: State) -> None:
    """Read the aligned table bodies of a chunk (``state.aligned``) with one C ``read_csv`` per
    column set, ``|`` as separator; cells are stripped of their padding."""
    for columns, bodies in state.aligned.items():
        n = len(columns)
        counts = np.array([b[1] for b in bodies], dtype=np.int64)
        firsts = np.array([b[0] for b in bodies], dtype=np.int64)
        starts = np.repeat(firsts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        snaps = np.repeat(np.array([b[2] for b in bodies], dtype=np.int64), counts)
        raw = pd.read_csv(
            io.BytesIO(("\n".join(b[3] for b in bodies)).encode()),
            sep="|",
            header=None,
            names=list(range(n + 2)),  # empty cells before the first and after the last |
            dtype=str,
            quoting=3,
            na_filter=False,
            engine="c",
        )
        cells = pd.DataFrame({j: _stripped(raw[j + 1]) for j in range(n)})
        state.add(columns, starts, starts, snaps, cells)
    state.aligned.clear()


def table_chunk(first: int, text: str, state: State) -> None:
    events = list(_TABLE_EVENTS.finditer(text))
    # Line number of every event: count newlines between consecutive events (C speed).
    pos = 0
    line_no = first
    k = 0
    while k < len(events):
        m = events[k]
        gap = text[pos : m.start()]
        if gap.strip():
            state.odd(line_no, gap.rstrip("\n"))
        line_no += gap.count("\n")
        line = m.group(0)
        if not line.startswith("+"):
            marker = parse_marker(line)
            if marker is None:
                state.odd(line_no, line)
            else:
                state.marker(marker)
            pos = m.end() + 1
            line_no += 1
            k += 1
            continue
        # A table: top border, header line, border, rows..., bottom border.
        if k + 1 >= len(events) or not events[k + 1].group(0).startswith("+"):
            state.odd(line_no, line)
            pos, line_no, k = m.end() + 1, line_no + 1, k + 1
            continue
        header_text = text[m.end() + 1 : events[k + 1].start()]
        header_lines = header_text.rstrip("\n").split("\n")
        if len(header_lines) != 1 or not TABLE_HEADER.match(header_lines[0]):
            state.odd(line_no, line)
            pos, line_no, k = m.end() + 1, line_no + 1, k + 1
            continue
        border = line.rstrip(" \t")
        plus = [i for i, ch in enumerate(border) if ch == "+"]
        columns = tuple(c.strip() for c in header_lines[0].rstrip(" \t").strip("|").split("|"))
        if len(columns) != len(plus) - 1:
            state.odd(line_no + 1, header_lines[0])
            pos, line_no, k = events[k + 1].end() + 1, line_no + 3, k + 2
            continue
        info = columns.index("Info") if "Info" in columns else len(columns) - 1
        state.new_listing()
        body_start = events[k + 1].end() + 1
        body_line = line_no + 3
        if k + 2 < len(events) and events[k + 2].group(0).startswith("+"):
            bottom = events[k + 2]
            body = text[body_start : bottom.start()].rstrip("\n")
            if body:
                _table_rows(body_line, body, plus, info, state, columns)
            line_no = body_line + text.count("\n", body_start, bottom.start()) + 1
            pos = bottom.end() + 1
            k += 3
        else:  # no bottom border (capture cut short): rows run to the next event or the chunk end
            stop = events[k + 2].start() if k + 2 < len(events) else len(text)
            body = text[body_start:stop].rstrip("\n")
            if body:
                _table_rows(body_line, body, plus, info, state, columns)
            line_no = body_line + text.count("\n", body_start, stop)
            pos = stop
            k += 2
    rest = text[pos:]
    if rest.strip():
        state.odd(line_no, rest.rstrip("\n"))
    _aligned_rows(state)


# ---------------------------------------------------------------------------------------------
# Tab-separated (mysql -B)
# ---------------------------------------------------------------------------------------------
# Lines of a -B capture that are not rows: markers, header lines, blank lines.
_TSV_ODD = re.compile(r"\n((?:TS |zzz |[ \t]*Id\t)[^\n]*|[ \t]*)(?=\n)")


def tsv_chunk(first: int, text: str, state: State) -> None:
    """Rows go to one C ``read_csv`` per column set; only markers, headers and blanks are seen in Python."""
    pieces: list[
        tuple[int, int, int, int, int, tuple[str, ...]]
    ] = []  # pos, end, line, count, snapshot, cols
    pos = 0
    line_no = first
    for m in _TSV_ODD.finditer("\n" + text):
        start = m.start()
        if start > pos:
            n = text.count("\n", pos, start)
            if state.columns is None:
                state.odd(line_no, text[pos:start].rstrip("\n"))
            else:
                pieces.append((pos, start, line_no, n, state.snapshot, state.columns))
                state.rows_in_snapshot += n
            line_no += n
        line = m.group(1)
        stripped = line.strip()
        if stripped.startswith("Id\t"):
            state.columns = tuple(f.strip() for f in stripped.split("\t"))
            state.new_listing()
        elif stripped.startswith(("TS ", "zzz ")) and (marker := parse_marker(stripped)) is not None:
            state.marker(marker)
        elif stripped:
            state.odd(line_no, line)
        line_no += 1
        pos = m.end()
    if pos < len(text):
        n = text.count("\n", pos)
        if state.columns is None:
            state.odd(line_no, text[pos:].rstrip("\n"))
        else:
            pieces.append((pos, len(text), line_no, n, state.snapshot, state.columns))
            state.rows_in_snapshot += n
    for columns in dict.fromkeys(p[5] for p in pieces):
        group = [p for p in pieces if p[5] == columns]
        counts = np.array([p[3] for p in group], dtype=np.int64)
        firsts = np.array([p[2] for p in group], dtype=np.int64)
        line_nos = np.repeat(firsts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        snaps = np.repeat(np.array([p[4] for p in group], dtype=np.int64), counts)
        data = "".join(text[p[0] : p[1]] for p in group)
        state.tsv_escapes |= "\\" in data
        rows = _tsv_rows(data, columns, line_nos, state)
        if rows is None:
            continue
        records, keep = rows
        kept = line_nos[keep]
        state.add(columns, kept, kept, snaps[keep], records)


def _tsv_rows(
    data: str, columns: tuple[str, ...], line_nos: np.ndarray, state: State
) -> tuple[list, np.ndarray] | None:
    """Split -B rows: C ``read_csv`` when every row has the header's field count, else line by line."""
    n = len(columns)
    numeric = [
        j for j, col in enumerate(columns) if out_name(col) in INT_COLUMNS or out_name(col) in FLOAT_COLUMNS
    ]
    options = {"sep": "\t", "header": None, "names": list(range(n)), "engine": "c", "skip_blank_lines": False}
    options["quoting"] = 3  # csv.QUOTE_NONE: mysql -B never quotes, it escapes
    try:
        # Numbers typed by the C reader (NULL and "" are SQL NULL); a cell that is not a number
        # (ValueError) sends the chunk to the all-text reading, where it is named.
        raw = pd.read_csv(
            io.BytesIO(data.encode()),
            dtype={j: "float64" if j in numeric else str for j in range(n)},
            keep_default_na=False,
            na_values={j: ["NULL", ""] for j in numeric},
            **options,
        )
    except (ValueError, pd.errors.ParserError):
        try:
            raw = pd.read_csv(io.BytesIO(data.encode()), dtype=str, na_filter=False, **options)
        except pd.errors.ParserError:
            raw = None
    # every row has the header's field count: none too long (no ParserError) and none too short
    if raw is not None and len(raw) == len(line_nos) and data.count("\t") == len(line_nos) * (n - 1):
        return raw, np.ones(len(line_nos), dtype=bool)
    # Some row has a wrong field count: split line by line to name it.
    lines = data.split("\n")[: len(line_nos)]
    records = []
    keep = np.zeros(len(lines), dtype=bool)
    for i, line in enumerate(lines):
        fields = line.split("\t")
        if len(fields) == n:
            records.append(fields)
            keep[i] = True
        else:
            state.warnings.append(
                ParseWarning(
                    int(line_nos[i]), "bad-row", f"expected {n} tab-separated fields, found {len(fields)}"
                )
            )
    return records, keep
