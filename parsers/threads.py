"""Parse ``performance_schema.threads`` captures (pt-stalk ``-threads``) into one row per thread.

Accepts:
    ``SELECT * FROM performance_schema.threads\\G`` (vertical, keys right-aligned to the longest
    column name) after each ``TS`` marker, as pt-stalk 3.x writes it; MySQL 5.6 to 8.4 and Percona
    Server column sets (``THREAD_OS_ID`` from 5.7, ``RESOURCE_GROUP`` from 8.0, memory columns from
    8.0.37 ...); multi-line ``PROCESSLIST_INFO``; ``NULL`` as text. Without markers, a new snapshot
    starts where the row number falls back to 1. Columns are read by name; absent ones are NA.

Sample input (pt-stalk 3.7.1 ``-threads``, Percona Server 8.0.42)::

    TS 1776790303.009325313 2026-04-21 16:51:43
    *************************** 1. row ***************************
                THREAD_ID: 1
                     NAME: thread/sql/main
                     TYPE: BACKGROUND
           PROCESSLIST_ID: NULL
         PROCESSLIST_USER: NULL
      PROCESSLIST_COMMAND: NULL
         PROCESSLIST_INFO: NULL
             THREAD_OS_ID: 5555

Output:
    frame ``pfs_threads``, one row per thread per snapshot:
        ``ts`` datetime64[ns, UTC] (the snapshot's ``TS`` marker), ``line_no`` / ``line_end`` int64
        (the ``*** N. row ***`` line and the row's last line), ``snapshot`` int64 (0-based);
        ``thread_id`` Int64; ``name`` (``thread/sql/one_connection``), ``type`` (``FOREGROUND``/
        ``BACKGROUND``); ``processlist_id`` Int64 (NA for NULL: background threads);
        ``processlist_user``, ``processlist_host``, ``processlist_db``, ``processlist_command``,
        ``processlist_state``, ``processlist_info`` (str, NULL -> missing); ``processlist_time_s``
        Int64 (seconds); ``thread_os_id`` Int64 (the Linux TID: joins ``ps_threads.tid``).
    ``clock``: ``ts-marker``, or ``inferred`` (``clock.start_local`` + snapshot x interval).

Warnings:
    ``no-start-time`` (no marker, no start time), ``not-a-number`` (an id that is neither a number
    nor NULL: kept as NA), ``odd-line`` (text before the first row of a snapshot).

Errors:
    ``ParseError`` at the first line that is neither blank, a marker nor a row of a vertical
    ``performance_schema.threads`` listing, before the first row.

>>> lines = ["TS 1776790303.009325313 2026-04-21 16:51:43",
...          "*************************** 1. row ***************************",
...          "       THREAD_ID: 52", "            NAME: thread/sql/one_connection",
...          "  PROCESSLIST_ID: 11", "PROCESSLIST_INFO: SELECT 1", "    THREAD_OS_ID: 6120"]
>>> row = parse(lines, member="t", clock=ClockHints()).main.iloc[0]
>>> int(row.processlist_id), int(row.thread_os_id), row.processlist_info, str(row.ts)
(11, 6120, 'SELECT 1', '2026-04-21 16:51:43.009325313+00:00')
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers.base import (
    DEFAULT_INTERVAL_S,
    Clock,
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    parse_marker,
    raw_blocks,
    start_or_epoch,
    text_chunks,
)

FORMAT = "threads"

#: performance_schema.threads column -> output column (MySQL 8.0 manual, "The threads Table").
COLUMN_MAP = {
    "THREAD_ID": "thread_id",
    "NAME": "name",
    "TYPE": "type",
    "PROCESSLIST_ID": "processlist_id",
    "PROCESSLIST_USER": "processlist_user",
    "PROCESSLIST_HOST": "processlist_host",
    "PROCESSLIST_DB": "processlist_db",
    "PROCESSLIST_COMMAND": "processlist_command",
    "PROCESSLIST_TIME": "processlist_time_s",
    "PROCESSLIST_STATE": "processlist_state",
    "PROCESSLIST_INFO": "processlist_info",
    "THREAD_OS_ID": "thread_os_id",
}
_INT_COLUMNS = ("thread_id", "processlist_id", "processlist_time_s", "thread_os_id")
_MULTILINE_KEY = "PROCESSLIST_INFO"  # the only column whose text may span lines (the statement)

#: Cells gathered before they are typed (rows x columns): memory stays bounded on a long capture.
CHUNK_LINES = 200_000

_ROW_MARKER = re.compile(r"^\*+ (\d+)\. row \*+\s*$")
_KEY_LINE = re.compile(r"^( *)([A-Z_]+): ?(.*)$")
_KEY_LINE_M = re.compile(r"^ *([A-Z_]+):", re.M)


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a vertical row with ``THREAD_OS_ID:`` or ``PROCESSLIST_ID:`` next to
    ``THREAD_ID:`` (upper-case keys: pt-stalk's ``-ps-locks-transactions`` prints ``processlist_id``)."""
    keys = {m.group(2) for line in head if (m := _KEY_LINE.match(line))}
    return "THREAD_ID" in keys and "NAME" in keys and bool(keys & {"THREAD_OS_ID", "PROCESSLIST_ID"})


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a vertical ``performance_schema.threads`` capture (lines of text) into ``pfs_threads``.

    Raises ``ParseError`` when the member is not this format (see the module docstring).
    """
    st = _Reader(member, clock)
    for first, text in text_chunks(raw_blocks(stream), _cut_rows):
        st.chunk(first, text)
    st.parts.append(_to_frame(st.acc, st.snap_ts, st.warnings))
    main = pd.concat(st.parts, ignore_index=True) if len(st.parts) > 1 else st.parts[0]
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"pfs_threads": main},
        clock=Clock.TS_MARKER if st.used_marker else Clock.INFERRED,
        warnings=st.warnings,
        meta={"snapshots": int(main["snapshot"].nunique()) if len(main) else 0, "variant": _variant(st.keys)},
        ts_is_local=st.local,
    )


#: A ``TS`` marker or a ``*** N. row ***`` header: the only lines looked at one by one.
#: Searched in ``"\\n" + text``: a pattern that starts with a literal scans far faster than ``^``.
_EVENT = re.compile(r"\n(?:(TS [^\n]*)|\*+ (\d+)\. row \*+[ \t]*)(?=\n)")


def _cut_rows(text: str) -> int:
    """Start of the last marker or row header line of ``text`` (chunks end on a row boundary)."""
    at = max(text.rfind("\nTS "), text.rfind(". row ***"))
    return text.rfind("\n", 0, at) + 1 if at > 0 else 0


class _Reader:
    """What carries from one chunk to the next: snapshot, its time, rows waiting to be typed."""

    def __init__(self, member: str, clock: ClockHints) -> None:
        self.member = member
        self.clock = clock
        self.interval = pd.Timedelta(seconds=clock.interval_s or DEFAULT_INTERVAL_S)
        self.warnings: list[ParseWarning] = []
        self.parts: list[pd.DataFrame] = []
        self.acc = _empty_split()
        self.acc_rows = 0
        self.snapshot = -1
        self.snap_ts: list[pd.Timestamp] = []  # one per snapshot
        self.used_marker = False
        self.local = False
        self.seen_row = False
        self.last_row = 0
        self.keys: set[str] = set()  # column names of the first block, for the variant

    def chunk(self, first: int, text: str) -> None:
        """Cut a chunk into blocks (rows of one snapshot) at markers and row-number restarts."""
        pos = 0  # start of the current block in text
        line = first  # its line number
        seen, seen_line = 0, first  # the last event looked at and its line number
        for m in _EVENT.finditer("\n" + text):  # m.start() is the line's offset in text
            start = m.start()
            if not self.seen_row and text[pos:start].strip():
                self._not_threads(text, pos, line)
            if m.group(1) is not None:
                marker = parse_marker(m.group(1))
                if marker is None:
                    continue  # a `TS ...` value line of a row: part of the block
                at = seen_line + text.count("\n", seen, start)  # line number of the marker
                seen, seen_line = start, at
                self.flush(text[pos:start], line)
                self.snapshot += 1
                self.snap_ts.append(marker.ts)
                self.used_marker, self.local = True, self.local or marker.utc is None
                self.last_row = 0
                pos, line = m.end(), at + 1
                continue
            n = int(m.group(2))
            if self.snapshot < 0 or (n <= self.last_row and n == 1):  # no marker: row numbers restart
                at = seen_line + text.count("\n", seen, start)  # line number of the row header
                seen, seen_line = start, at
                self.flush(text[pos:start], line)
                self.snapshot += 1
                if not self.used_marker:
                    start_ts = start_or_epoch(self.clock, self.warnings).tz_localize("UTC")
                    self.snap_ts.append(start_ts + self.snapshot * self.interval)
                    self.local = True
                else:  # a listing without its marker: the previous marker's time
                    self.snap_ts.append(self.snap_ts[-1])
                pos, line = start, at
            self.last_row = n
            self.seen_row = True
        if not self.seen_row and text[pos:].strip():
            self._not_threads(text, pos, line)
        self.flush(text[pos:], line)

    def _not_threads(self, text: str, pos: int, line: int) -> None:
        for i, raw in enumerate(text[pos:].split("\n")):
            if raw.strip():
                raise ParseError(
                    self.member, line + i, raw, "not a vertical performance_schema.threads listing"
                )

    def flush(self, block: str, start: int) -> None:
        """Split one block (first line numbered ``start``) and type what waits when it is enough."""
        if not block.strip():
            return
        if not self.keys:
            self.keys.update(_KEY_LINE_M.findall(block[: VARIANT_LINES * 80]))
        got = _split(block, start, self.warnings)
        n = len(got["line_no"])
        for col, values in got.items():
            self.acc[col].extend(values)
        self.acc["snapshot"].extend([max(self.snapshot, 0)] * n)
        self.acc_rows += n
        if self.acc_rows * len(COLUMN_MAP) >= CHUNK_LINES:  # memory stays bounded
            self.parts.append(_to_frame(self.acc, self.snap_ts, self.warnings))
            self.acc, self.acc_rows = _empty_split(), 0


#: performance_schema.threads columns by the release that added them (MySQL 8.0 / 5.7 manuals).
GENERATIONS = (
    ("CONTROLLED_MEMORY", "MySQL 8.0.31+"),
    ("RESOURCE_GROUP", "MySQL 8.0"),
    ("THREAD_OS_ID", "MySQL 5.7"),
)
#: Lines of the first snapshot read for the column set: more than one row of the widest (8.4) table.
VARIANT_LINES = 64


def _variant(keys: set[str]) -> str:
    """``performance_schema.threads vertical, MySQL 8.0 columns (RESOURCE_GROUP)``."""
    for key, release in GENERATIONS:
        if key in keys:
            return f"performance_schema.threads vertical, {release} columns ({key})"
    return "performance_schema.threads vertical, MySQL 5.6 columns (no THREAD_OS_ID)"


def _empty_split() -> dict[str, list]:
    return {"snapshot": [], "line_no": [], "line_end": [], **{c: [] for c in COLUMN_MAP.values()}}


_KEY_ALL = re.compile(r"\n *([A-Z_]+): ?([^\n]*)")  # in "\n" + text, as _EVENT


def _split(block: str, start: int, warnings: list[ParseWarning]) -> dict[str, list]:
    """Cut one block (rows of one snapshot, first line numbered ``start``) into raw string columns.

    Fast path: every row has the same keys in the same order and no value spans lines; then one regex
    pass over the block and a reshape do the work. Otherwise ``_split_lines`` reads line by line.
    """
    joined = block.rstrip("\n")
    while joined and not joined[joined.rfind("\n") + 1 :].strip():  # trailing blank lines
        joined = joined[: max(joined.rfind("\n"), 0)].rstrip("\n")
    n_lines = joined.count("\n") + 1
    n_rows = joined.count(" row ***")
    pairs = _KEY_ALL.findall("\n" + joined)
    if n_rows and joined.startswith("*") and len(pairs) == n_lines - n_rows and len(pairs) % n_rows == 0:
        k = len(pairs) // n_rows
        keys = np.array([p[0] for p in pairs], dtype=object).reshape(n_rows, k)
        if (keys == keys[0]).all():
            values = np.array([p[1] for p in pairs], dtype=object).reshape(n_rows, k)
            first = start + np.arange(n_rows, dtype="int64") * (k + 1)
            out: dict[str, list] = {"line_no": first.tolist(), "line_end": (first + k).tolist()}
            where = {key: j for j, key in enumerate(keys[0])}
            for key, col in COLUMN_MAP.items():
                out[col] = values[:, where[key]].tolist() if key in where else [None] * n_rows
            return out
    return _split_lines(joined.split("\n") if joined else [], start, warnings)


def _split_lines(lines: list[str], start: int, warnings: list[ParseWarning]) -> dict[str, list]:
    """Line-by-line reading of a block: a key line is ``<padding>KEY: value`` with the colon at the
    same column in every row (the mysql client pads keys to the longest column name); any other line
    continues the previous value (a multi-line ``PROCESSLIST_INFO``)."""
    out: dict[str, list] = {"line_no": [], "line_end": [], **{c: [] for c in COLUMN_MAP.values()}}
    row: dict[str, str] | None = None
    width = -1
    key = ""
    for i, line in enumerate(lines):
        if line[:1] == "*" and _ROW_MARKER.match(line):
            if row is not None:
                _emit(out, row, start + i - 1)
            row = {"line_no": start + i}
            width = -1
            continue
        if row is None:
            if line.strip():
                warnings.append(
                    ParseWarning(start + i, "odd-line", f"text before the first row: {line[:80]!r}")
                )
            continue
        if width < 0:
            width = line.find(": ") if ": " in line else len(line) - 1
        name = line[:width].lstrip()
        if line[width : width + 1] == ":" and name.isupper() and " " not in name:
            key = name
            if key in COLUMN_MAP:
                row[key] = line[width + 2 :]
            continue
        if key == _MULTILINE_KEY and key in row:
            row[key] += "\n" + line
    if row is not None:
        _emit(out, row, start + len(lines) - 1)
    return out


def _emit(out: dict[str, list], row: dict, line_end: int) -> None:
    out["line_no"].append(row.pop("line_no"))
    out["line_end"].append(line_end)
    for key, col in COLUMN_MAP.items():
        out[col].append(row.get(key))


def _to_frame(
    raw: dict[str, list], snap_ts: list[pd.Timestamp], warnings: list[ParseWarning]
) -> pd.DataFrame:
    """Type the raw columns: NULL -> missing, ids and TIDs -> Int64 (a non-number warns, stays NA)."""
    df = pd.DataFrame({c: pd.Series(v, dtype="object") for c, v in raw.items()})
    for col in COLUMN_MAP.values():
        df[col] = df[col].where(df[col] != "NULL", None)
    for col in _INT_COLUMNS:
        num = pd.to_numeric(df[col], errors="coerce")
        bad = (num.isna() & df[col].notna()).to_numpy()
        for line_no, value in zip(df["line_no"][bad], df[col][bad], strict=True):
            warnings.append(ParseWarning(int(line_no), "not-a-number", f"{col} = {value!r} is not a number"))
        df[col] = num.astype("Int64")
    for col in set(COLUMN_MAP.values()) - set(_INT_COLUMNS):
        df[col] = df[col].astype("str")
    df["snapshot"] = df["snapshot"].astype("int64")
    ts = pd.DatetimeIndex(snap_ts or [pd.Timestamp(0, tz="UTC")]).as_unit("ns")
    df.insert(0, "ts", ts[df["snapshot"].to_numpy()] if len(df) else ts[:0])
    df["line_no"] = df["line_no"].astype("int64")
    df["line_end"] = df["line_end"].astype("int64")
    return df
