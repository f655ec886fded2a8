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
    those of ``parsers._vertical.read``: ``no-start-time`` (no marker, no start time),
    ``assumed-interval`` (no marker and no interval), ``stray-line`` (text outside any row after the
    first), ``client-message`` (the mysql client's Warning/ERROR lines); and ``not-a-number`` (an id
    that is neither a number nor NULL: kept as NA). A blank line or a line that looks like SQL inside
    ``PROCESSLIST_INFO`` is part of the statement; after any other key such a line is skipped.

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

from parsers import _vertical
from parsers.base import Blocks, Clock, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "threads"
TRAITS = FormatTraits(
    short_lines=False,
    unsigned=False,
    capped_pct=False,
    blocks=Blocks.VARYING_ROWS,
    markers=True,
)

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

_KEY_LINE = re.compile(r"^( *)([A-Z_]+): ?(.*)$")


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a vertical row with ``THREAD_OS_ID:`` or ``PROCESSLIST_ID:`` next to
    ``THREAD_ID:`` (upper-case keys: pt-stalk's ``-ps-locks-transactions`` prints ``processlist_id``)."""
    keys = {m.group(2) for line in head if (m := _KEY_LINE.match(line))}
    return "THREAD_ID" in keys and "NAME" in keys and bool(keys & {"THREAD_OS_ID", "PROCESSLIST_ID"})


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a vertical ``performance_schema.threads`` capture (lines of text) into ``pfs_threads``.

    The records are read by ``parsers._vertical.read`` (as ``-transactions``, ``-lock-waits`` and
    ``-slave-status``), with ``PROCESSLIST_INFO`` the one value that spans lines, and typed in parts
    of ``CHUNK_LINES`` cells so memory stays bounded on a long capture. Raises ``ParseError`` when
    the member is not this format (see the module docstring).
    """
    warnings: list[ParseWarning] = []
    parts: list[pd.DataFrame] = []
    keys: set[str] = set()

    def typed(records: list[_vertical.Record]) -> None:
        if not keys and records:
            keys.update(records[0].values)
        parts.append(_to_frame(records, warnings))

    v = _vertical.read(
        stream,
        member=member,
        clock=clock,
        warnings=warnings,
        what="a vertical performance_schema.threads listing",
        multiline=frozenset({_MULTILINE_KEY}),
        batch=typed,
        batch_records=max(CHUNK_LINES // len(COLUMN_MAP), 1),
    )
    main = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0] if parts else _to_frame([], [])
    ts = pd.to_datetime(np.asarray(v.ts if v.ts is not None else [], dtype="int64"), utc=True).as_unit("ns")
    main.insert(0, "ts", ts[main["snapshot"].to_numpy()] if len(main) else ts[:0])
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"pfs_threads": main},
        clock=v.clock if len(main) else Clock.INFERRED,
        warnings=warnings,
        meta={"snapshots": int(main["snapshot"].nunique()) if len(main) else 0, "variant": _variant(keys)},
        ts_is_local=v.ts_is_local,
    )


#: performance_schema.threads columns by the release that added them (MySQL 8.0 / 5.7 manuals).
GENERATIONS = (
    ("CONTROLLED_MEMORY", "MySQL 8.0.31+"),
    ("RESOURCE_GROUP", "MySQL 8.0"),
    ("THREAD_OS_ID", "MySQL 5.7"),
)


def _variant(keys: set[str]) -> str:
    """``performance_schema.threads vertical, MySQL 8.0 columns (RESOURCE_GROUP)``."""
    for key, release in GENERATIONS:
        if key in keys:
            return f"performance_schema.threads vertical, {release} columns ({key})"
    return "performance_schema.threads vertical, MySQL 5.6 columns (no THREAD_OS_ID)"


def _to_frame(records: list[_vertical.Record], warnings: list[ParseWarning]) -> pd.DataFrame:
    """Type the records' columns: NULL -> missing, ids and TIDs -> Int64 (a non-number warns with the
    row's line and stays NA); ``snapshot``, ``line_no``, ``line_end`` int64. ``ts`` is added by ``parse``
    once every snapshot's time is known."""
    df = pd.DataFrame(
        {
            "snapshot": pd.Series([r.snapshot for r in records], dtype="int64"),
            "line_no": pd.Series([r.line_no for r in records], dtype="int64"),
            "line_end": pd.Series([r.line_end for r in records], dtype="int64"),
            **{
                col: pd.Series([r.values.get(key) for r in records], dtype="object")
                for key, col in COLUMN_MAP.items()
            },
        }
    )
    for col in COLUMN_MAP.values():
        df[col] = df[col].where(df[col].notna() & (df[col] != "NULL"), None)
    for col in _INT_COLUMNS:
        num = pd.to_numeric(df[col], errors="coerce")
        bad = (num.isna() & df[col].notna()).to_numpy()
        for line_no, value in zip(df["line_no"][bad], df[col][bad], strict=True):
            warnings.append(ParseWarning(int(line_no), "not-a-number", f"{col} = {value!r} is not a number"))
        df[col] = num.astype("Int64")
    for col in set(COLUMN_MAP.values()) - set(_INT_COLUMNS):
        df[col] = df[col].astype("str")
    return df


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    statements=("pfs_threads.processlist_info",),
    users=("pfs_threads.processlist_user",),
    hosts=("pfs_threads.processlist_host",),
    schemas=("pfs_threads.processlist_db",),
    statement_fields=frozenset({"PROCESSLIST_INFO", "processlist_info"}),
)
