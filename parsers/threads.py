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

from parsers.base import Clock, ClockHints, ParsedSource, ParseError, ParseWarning, parse_marker

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

#: Rows per chunk: a chunk is cut at a snapshot (TS marker) or, in a marker-less member, at a row
#: once it holds this many lines, so memory stays bounded.
CHUNK_LINES = 200_000

_ROW_MARKER = re.compile(r"^\*+ (\d+)\. row \*+\s*$")
_KEY_LINE = re.compile(r"^( *)([A-Z_]+): ?(.*)$")


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a vertical row with ``THREAD_OS_ID:`` or ``PROCESSLIST_ID:`` next to
    ``THREAD_ID:`` (upper-case keys: pt-stalk's ``-ps-locks-transactions`` prints ``processlist_id``)."""
    keys = {m.group(2) for line in head if (m := _KEY_LINE.match(line))}
    return "THREAD_ID" in keys and "NAME" in keys and bool(keys & {"THREAD_OS_ID", "PROCESSLIST_ID"})


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a vertical ``performance_schema.threads`` capture (lines of text) into ``pfs_threads``.

    Raises ``ParseError`` when the member is not this format (see the module docstring).
    """
    warnings: list[ParseWarning] = []
    parts: list[pd.DataFrame] = []
    block: list[str] = []
    block_start = 1
    snapshot = -1
    ts: pd.Timestamp | None = None
    used_marker = False
    local = False
    seen_row = False
    last_row = 0
    interval = pd.Timedelta(seconds=clock.interval_s or 1.0)

    acc = _empty_split()
    acc_lines = 0

    def flush() -> None:
        nonlocal acc, acc_lines
        if block:
            got = _split(block, block_start, member, warnings)
            n = len(got["line_no"])
            for col, values in got.items():
                acc[col].extend(values)
            acc["snapshot"].extend([max(snapshot, 0)] * n)
            acc["ts"].extend([ts] * n)
            acc_lines += len(block)
        if acc_lines >= CHUNK_LINES:  # type what has accumulated: memory stays bounded
            parts.append(_to_frame(acc, warnings))
            acc, acc_lines = _empty_split(), 0

    for no, raw in enumerate(stream, start=1):
        head = raw[:1]
        if head == "T" and (m := parse_marker(raw.rstrip("\r\n"))) is not None:
            flush()
            block, block_start = [], no + 1
            snapshot += 1
            ts, used_marker, local = m.ts, True, local or m.utc is None
            last_row = 0
            continue
        if head == "*" and (r := _ROW_MARKER.match(raw)):
            n = int(r.group(1))
            if snapshot < 0 or (n <= last_row and n == 1):  # no marker: row numbers restart
                flush()
                block, block_start = [], no
                snapshot += 1
                ts = _inferred(snapshot, clock, interval, warnings) if not used_marker else ts
                local = local or not used_marker
            elif len(block) >= CHUNK_LINES:
                flush()
                block, block_start = [], no
            last_row = n
            seen_row = True
        elif not seen_row and raw.strip():
            raise ParseError(member, no, raw, "not a vertical performance_schema.threads listing")
        block.append(raw)
    flush()
    parts.append(_to_frame(acc, warnings))
    main = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"pfs_threads": main},
        clock=Clock.TS_MARKER if used_marker else Clock.INFERRED,
        warnings=warnings,
        meta={"snapshots": int(main["snapshot"].nunique()) if len(main) else 0},
        ts_is_local=local,
    )


def _inferred(
    snapshot: int, clock: ClockHints, interval: pd.Timedelta, warnings: list[ParseWarning]
) -> pd.Timestamp:
    """Start time plus ``snapshot`` intervals (local wall clock labelled UTC); 1970 with a warning."""
    if clock.start_local is not None:
        return pd.Timestamp(clock.start_local).tz_localize("UTC") + snapshot * interval
    if not any(w.code == "no-start-time" for w in warnings):
        warnings.append(
            ParseWarning(0, "no-start-time", "no TS marker and no start time: times from 1970-01-01")
        )
    return pd.Timestamp(0, tz="UTC") + snapshot * interval


def _empty_split() -> dict[str, list]:
    return {"ts": [], "snapshot": [], "line_no": [], "line_end": [], **{c: [] for c in COLUMN_MAP.values()}}


_KEY_ALL = re.compile(r"^ *([A-Z_]+): ?(.*)$", re.M)


def _split(lines: list[str], start: int, member: str, warnings: list[ParseWarning]) -> dict[str, list]:
    """Cut one block (rows of one snapshot, first line numbered ``start``) into raw string columns.

    Fast path: every row has the same keys in the same order and no value spans lines; then one regex
    pass over the block and a reshape do the work. Otherwise ``_split_lines`` reads line by line.
    """
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    lines = lines[:end]
    joined = "".join(lines) if lines and lines[0].endswith("\n") else "\n".join(lines)
    if "\r" in joined:
        joined = joined.replace("\r\n", "\n")
    n_rows = joined.count(" row ***")
    pairs = _KEY_ALL.findall(joined)
    if n_rows and lines[0].startswith("*") and len(pairs) == len(lines) - n_rows and len(pairs) % n_rows == 0:
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
    return _split_lines([ln.rstrip("\r\n") for ln in lines], start, warnings)


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


def _to_frame(raw: dict[str, list], warnings: list[ParseWarning]) -> pd.DataFrame:
    """Type the raw columns: NULL -> missing, ids and TIDs -> Int64 (a non-number warns, stays NA)."""
    df = pd.DataFrame({c: pd.Series(v, dtype="object") for c, v in raw.items() if c != "ts"})
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
    df.insert(
        0, "ts", pd.to_datetime(pd.Series(raw["ts"], dtype="object"), utc=True).astype("datetime64[ns, UTC]")
    )
    df["snapshot"] = df["snapshot"].astype("int64")
    df["line_no"] = df["line_no"].astype("int64")
    df["line_end"] = df["line_end"].astype("int64")
    return df
