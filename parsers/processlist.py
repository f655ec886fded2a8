"""Parse MySQL / MariaDB / Percona Server ``SHOW [FULL] PROCESSLIST`` captures: one row per session per
snapshot.

Accepts:
    the three layouts of the ``mysql`` client: table (``mysql -t``, ``+----+`` borders; columns are
    cut at the border's ``+`` positions, so a ``|`` inside a value is kept; a multi-line Info is
    re-joined), vertical (``\\G``: ``*** 1. row ***`` then right-aligned ``Key: value`` lines; Info
    continues over lines until the next key; an optional leading blank on every line) and
    tab-separated (``mysql -B`` with its header line; ``\\n``, ``\\t``, ``\\\\`` escapes undone).
    Several snapshots in one member: one per ``TS`` marker (pt-stalk, Casebook collector), or, in older
    pt-stalk (3.2) captures without ``TS`` lines, a new snapshot wherever the row number falls back to
    1 (vertical) or a new table / header starts. Extra columns ``Time_ms``, ``Rows_sent``,
    ``Rows_examined``, ``Rows_read`` (Percona Server), ``Progress`` (MariaDB); ``NULL`` as text.

Sample input (``SHOW FULL PROCESSLIST\\G`` by pt-stalk 3.7.1, Percona Server 8.0.42)::

    TS 1776789801.009025316 2026-04-21 16:43:21
    *************************** 1. row ***************************
               Id: 6
             User: event_scheduler
             Host: localhost
               db: NULL
          Command: Daemon
             Time: 2460
            State: Waiting on empty queue
             Info: NULL
          Time_ms: 2459677
        Rows_sent: 0
    Rows_examined: 0

Output: frame ``processlist``, one row per session per snapshot:
    ``ts`` datetime64[ns, UTC] (the snapshot's time); ``line_no`` / ``line_end`` int64 (first and last
    line of the session in the member); ``snapshot`` int64 (0-based, in file order); ``id`` Int64
    (connection id); ``user``, ``host``, ``command`` string; ``time_s`` Int64 (seconds in the current
    state); ``state``, ``db``, ``info`` string (``NULL`` -> <NA>); and when captured: ``time_ms``
    float64 (ms), ``rows_sent``, ``rows_examined``, ``rows_read`` Int64, ``progress`` float64
    (percent, MariaDB). Another column is kept under its snake_case name (string) with a warning.
    ``ts_source``: ``marker`` (TS/zzz line) or ``inferred`` (``clock.start_local`` + snapshot x
    interval, interval = ``clock.interval_s`` or 1 s; ``ts_is_local`` is then True).
    Meta: ``variant`` (``processlist vertical (\\G), Percona columns Time_ms/Rows_*``), ``columns`` (the
    client's spelling), ``layout`` (``table``, ``vertical`` or ``tsv``), ``snapshots``, ``utc_offset_s``
    (from the first ``TS`` marker with a wall-clock part).

Warnings: ``unreadable-line`` (text that is neither a row, a header nor a marker, e.g. an
``ERROR 2013`` line), ``bad-row`` (a table row whose cells do not line up with the border),
``bad-number``, ``unknown-column``, ``no-start-time`` (no marker and no start hint: snapshot times
count from the Unix epoch), ``empty``.

Limits: when Info is the last column (classic 8-column listing) a non-NULL Info runs until the next
row header or marker, so a stray line printed right after the last row (other than after ``Info:
NULL``) joins that Info. A ``|`` at the start of a continuation line of a multi-line Info in table
layout is read as a new row (the table layout cannot tell them apart).

Errors: ``ParseError`` when no processlist header or row is found (line of the first text line).

>>> text = '''TS 1776789801.009025316 2026-04-21 16:43:21
... *************************** 1. row ***************************
...      Id: 47
...    User: root
...    Host: localhost
...      db: NULL
... Command: Query
...    Time: 0
...   State: init
...    Info: SHOW FULL PROCESSLIST'''
>>> src = parse(text.splitlines(), member="processlist", clock=ClockHints())
>>> row = src.main.iloc[0]
>>> str(row["ts"]), int(row["id"]), row["command"], row["info"], row["db"] is pd.NA
('2026-04-21 16:43:21.009025316+00:00', 47, 'Query', 'SHOW FULL PROCESSLIST', True)
>>> int(row["line_no"]), int(row["line_end"]), src.clock.value, src.meta["layout"]
(2, 10, 'ts-marker', 'vertical')
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from parsers import _vertical
from parsers._processlist_rows import COLUMN_MAP, FLOAT_COLUMNS, INT_COLUMNS, NULLABLE_TEXT, State, out_name
from parsers._processlist_table import TABLE_HEADER, TSV_HEADER, cut_table, table_chunk, tsv_chunk
from parsers._vertical_chunks import cut_chunk, read_chunk
from parsers.base import (
    CHUNK_CHARS,
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    cut_lines,
    parse_marker,
    raw_blocks,
    snapshot_times,
    text_chunks,
)
from parsers.sensitive import Sensitive

FORMAT = "processlist"
TRAITS = FormatTraits(
    short_lines=False,
    unsigned=False,
    capped_pct=False,
    blocks=Blocks.RECORDS,
    markers=True,
    large_pieces=True,
)
#: The frame of sessions per snapshot that ``parse(..., idle=...)`` adds.
SESSIONS_FRAME = "processlist_sessions"
#: The frame ``parse(..., idle=...)`` adds of the sessions it counts rather than types, by snapshot and
#: account (``ACCOUNT_COLUMNS``: ``client`` the Host without its port; ``user``, ``client`` and
#: ``command`` categories; ``sessions`` int32; Times in s, float64; rows of one snapshot cut over two
#: chunks are summed by the reader; and ``line_no``, the first line of a row counted, by which a
#: piece's overlap is dropped): who holds idle connections.
ACCOUNTS_FRAME = "processlist_accounts"
ACCOUNT_COLUMNS = ("ts", "user", "client", "command", "sessions", "time_min_s", "time_max_s", "time_sum_s")


#: Where to look for the first header: registry.HEAD_LINES is 60; a long multi-line Info or a run of
#: error lines may push the first header further, but never past a few hundred lines.
DETECT_LINES = 400
DETECT_CHARS = 1 << 20

_TSV_ESCAPE = re.compile(r"\\(.)")
_TSV_UNESCAPE = {"n": "\n", "t": "\t", "0": "\0", "\\": "\\", "r": "\r", "b": "\b", "Z": "\x1a"}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a processlist header: table ``| Id | User |``, ``-B`` ``Id<TAB>User``,
    or a vertical ``*** N. row ***`` followed by ``Id:`` and ``Command:`` keys.

    >>> sniff(["TS 1776789801.0 2026-04-21 16:43:21", "*************************** 1. row ***",
    ...        "     Id: 6", "   User: root", "Command: Sleep"])
    True
    >>> sniff(["*************************** 1. row ***", "THREAD_ID: 1", "PROCESSLIST_COMMAND: Sleep"])
    False
    """
    row = key_id = key_cmd = False
    for line in head:
        if TABLE_HEADER.match(line) or TSV_HEADER.match(line):
            return True
        if _vertical.ANY_ROW_HEADER.match(line):
            row = True
        elif row:
            key = _vertical.KEY_LINE.match(line)
            if key:
                key_id |= key.group(2) == "Id"
                key_cmd |= key.group(2) == "Command"
    return row and key_id and key_cmd


# ---------------------------------------------------------------------------------------------
# Typing
# ---------------------------------------------------------------------------------------------
#: The client options each layout comes from.
LAYOUT_NAMES = {"table": "table (mysql -t)", "vertical": "vertical (\\G)", "tsv": "tab-separated (mysql -B)"}
#: Columns that name the server flavour (SHOW PROCESSLIST in the Percona Server and MariaDB manuals).
FLAVOUR_COLUMNS = (
    ("Percona", ("Time_ms", "Rows_sent", "Rows_examined", "Rows_read")),
    ("MariaDB", ("Progress",)),
)


def _variant(layout: str, columns: list[str], markers: bool) -> str:
    """``processlist vertical (\\G), Percona columns Time_ms/Rows_*``: layout, flavour columns, markers."""
    clues = [f"processlist {LAYOUT_NAMES.get(layout, layout)}"]
    for flavour, names in FLAVOUR_COLUMNS:
        seen = [c for c in names if c in columns]
        if seen:
            rows = [c for c in seen if c.startswith("Rows_")]
            shown = [c for c in seen if not c.startswith("Rows_")] + (["Rows_*"] if len(rows) > 1 else rows)
            clues.append(f"{flavour} column{'s' if len(seen) > 1 else ''} {'/'.join(shown)}")
    if not markers:
        clues.append("no TS markers")
    return ", ".join(clues)


def _detect_layout(text: str) -> str | None:
    for line in text.split("\n", DETECT_LINES)[:DETECT_LINES]:
        if TABLE_HEADER.match(line):
            return "table"
        if TSV_HEADER.match(line):
            return "tsv"
        if _vertical.ANY_ROW_HEADER.match(line):
            return "vertical"
    return None


def _is_numbers(cells: object) -> bool:
    return isinstance(cells, np.ndarray) and cells.dtype.kind == "f"


def _objects(cells: object) -> np.ndarray:
    """A part's cells of one column as an object array (numbers read already as Python floats)."""
    if isinstance(cells, np.ndarray):
        return cells.astype(object) if cells.dtype != object else cells
    out = np.empty(len(cells), dtype=object)  # type: ignore[arg-type]
    out[:] = cells
    return out


def _typed(columns: tuple[str, ...], parts: list, layout: str, state: State) -> pd.DataFrame:
    """The frame of one column set from its parts (``State.add_columns``): numbers read already
    are kept, the text of number columns is read by :func:`_numbers`, text is ``string``."""
    starts = np.concatenate([p[0] for p in parts])
    ends = np.concatenate([p[1] for p in parts])
    snaps = np.concatenate([p[2] for p in parts]).astype(np.int64)
    out: dict[str, object] = {"line_no": starts, "line_end": ends, "snapshot": snaps}
    for j, col in enumerate(columns):
        name = out_name(col)
        cells = [p[3][j] for p in parts]
        if name in INT_COLUMNS or name in FLOAT_COLUMNS:
            if all(_is_numbers(c) for c in cells):  # read already (vertical, -B): NaN for NULL
                values = pd.Series(np.concatenate(cells) if len(cells) > 1 else cells[0])
                num = values
            else:
                values = pd.Series(np.concatenate([_objects(c) for c in cells]), dtype=object)
                num = _numbers(values, col, starts, state)
            if name in INT_COLUMNS:
                fraction = ((num.to_numpy() % 1) != 0) & ~np.isnan(num.to_numpy())
                if fraction.any():
                    for i in np.flatnonzero(fraction):
                        state.warnings.append(
                            ParseWarning(
                                int(starts[i]), "bad-number", f"{col}: {values.iat[i]!r} is not a number"
                            )
                        )
                    num = num.mask(fraction)
            out[name] = num.astype("Int64") if name in INT_COLUMNS else num.astype("float64")
            continue
        text = np.concatenate([_objects(c) for c in cells]) if len(cells) > 1 else _objects(cells[0])
        if layout == "tsv" and state.tsv_escapes:
            values = pd.Series(text, dtype=object)
            has_escape = values.str.contains("\\", regex=False).fillna(False).to_numpy()
            if has_escape.any():
                values = values.copy()
                values[has_escape] = values[has_escape].map(
                    lambda v: _TSV_ESCAPE.sub(lambda e: _TSV_UNESCAPE.get(e.group(1), e.group(1)), v)
                )
            text = values.to_numpy(dtype=object)
        if name in NULLABLE_TEXT:
            null = text == "NULL"
            if null.any():
                text = np.where(null, None, text)
        out[name] = pd.Series(text, dtype="string")
    return pd.DataFrame(out)


def _numbers(values: pd.Series, col: str, starts: np.ndarray, state: State) -> pd.Series:
    """Number cells as float64: ``""`` and ``NULL`` are SQL NULL (NaN), anything else must parse
    (``float()`` accepts surrounding blanks) or is warned about (``bad-number``) and left NaN."""
    missing = values.isna().to_numpy() | values.isin(["", "NULL"]).to_numpy()
    try:
        return pd.Series(np.where(missing, np.nan, values.to_numpy(dtype=object)).astype(np.float64))
    except (TypeError, ValueError):  # some cell is not a number: find and name them (rare)
        num = pd.to_numeric(values, errors="coerce")
    missing |= values.astype(str).str.strip().isin(["", "NULL"]).to_numpy()
    for i in np.flatnonzero(num.isna().to_numpy() & ~missing):
        state.warnings.append(
            ParseWarning(int(starts[i]), "bad-number", f"{col}: {values.iat[i]!r} is not a number")
        )
    return num.reset_index(drop=True)


def _empty() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "ts": pd.Series([], dtype="datetime64[ns, UTC]"),
            "line_no": pd.Series([], dtype="int64"),
            "line_end": pd.Series([], dtype="int64"),
            "snapshot": pd.Series([], dtype="int64"),
        }
    )
    for col in ("Id", "User", "Host", "db", "Command", "Time", "State", "Info"):
        name = COLUMN_MAP[col]
        frame[name] = pd.Series([], dtype="Int64" if name in INT_COLUMNS else "string")
    frame["ts_source"] = pd.Series([], dtype="object")
    return frame


def parse(
    stream: Iterable[str] | io.TextIOBase,
    *,
    member: str,
    clock: ClockHints,
    idle: frozenset[str] | None = None,
) -> ParsedSource:
    """Parse a processlist capture (see the module docstring for layouts, columns and units).

    ``stream``: text lines (with or without newlines) or a text file object. ``idle``: when given,
    Command values (``Sleep``) of sessions that a vertical capture's regular rows count rather than
    type (see ``_processlist_rows.State.typed_rows``: the first and last row of each snapshot and its
    longest-idle session stay), and a second frame, ``processlist_sessions`` (``ts``, ``line_no`` and
    ``line_end`` the first and last row of the snapshot, ``sessions`` int32), counts every session of each
    snapshot: a day of 1,000 mostly idle sessions a second is counted, not typed row by row (and by account:
    ``ACCOUNTS_FRAME``). Raises ``ParseError`` with the first text line's number when no processlist header or
    row is found.
    """
    state = State(member)
    state.idle = tuple(sorted(c.encode("utf-8") for c in idle)) if idle is not None else None
    handlers = {"table": (cut_table, table_chunk), "vertical": (cut_chunk, read_chunk)}
    blocks = raw_blocks(stream, CHUNK_CHARS)
    head: list[str] = []
    size = 0
    layout = None
    # Read until a header shows the layout (or DETECT_CHARS without one: not a processlist).
    for block in blocks:
        head.append(block)
        size += len(block)
        layout = _detect_layout("".join(head))
        if layout is not None or size >= DETECT_CHARS:
            break
    first_block = "".join(head)
    if layout is None:
        stripped = [(i, ln) for i, ln in enumerate(first_block.split("\n"), start=1) if ln.strip()]
        if not stripped:
            warnings = [ParseWarning(0, "empty", "no processlist header or row")]
            meta: dict[str, object] = {"columns": [], "layout": None, "snapshots": 0}
            return ParsedSource(
                FORMAT, member, {"processlist": _empty()}, Clock.INFERRED, warnings, meta, True
            )
        line_no, line = next(((i, ln) for i, ln in stripped if parse_marker(ln.strip()) is None), stripped[0])
        raise ParseError(member, line_no, line, "no processlist header (table, -B or \\G) found")
    state.layout = layout
    cut, handle = handlers.get(layout, (cut_lines, tsv_chunk))

    def all_blocks() -> Iterator[str]:
        yield first_block
        yield from blocks

    for first, text in text_chunks(all_blocks(), cut):
        handle(first, text, state)

    frames = [_typed(cols, parts, layout, state) for cols, parts in state.groups.items()]
    df = (
        pd.concat(frames, ignore_index=True, sort=False)
        if frames
        else _empty().drop(columns=["ts", "ts_source"])
    )
    df = df.sort_values("line_no", kind="stable", ignore_index=True)
    n_snap = state.snapshot + 1
    warnings = state.warnings
    marks = [state.snapshot_marker.get(s) for s in range(n_snap)]
    times = snapshot_times(marks, clock, warnings, interval_code=None)
    snap_ts = times.ts
    snap_source = np.array(["inferred" if m is None else "marker" for m in marks], dtype=object)
    snapshot = df["snapshot"].to_numpy(dtype=np.int64)
    df.insert(0, "ts", snap_ts[snapshot] if len(df) else pd.Series([], dtype="datetime64[ns, UTC]"))
    df["ts_source"] = snap_source[snapshot] if len(df) else pd.Series([], dtype="object")
    columns = list(dict.fromkeys(c for cols in state.groups for c in cols))
    meta = {"tool": "mysql client", "columns": columns, "layout": layout, "snapshots": n_snap}
    if times.utc_offset_s is not None:
        meta["utc_offset_s"] = times.utc_offset_s
    meta["variant"] = _variant(layout, columns, bool(state.markers))
    warnings.sort(key=lambda w: w.line_no)
    frames = {"processlist": df}
    if idle is not None:
        frames[SESSIONS_FRAME] = _sessions(df, state.untyped)
        frames[ACCOUNTS_FRAME] = _accounts(state.accounts, state.account_names, snap_ts)
    return ParsedSource(FORMAT, member, frames, times.clock, warnings, meta, times.ts_is_local)


def _accounts(accounts: list[dict], names: list[tuple[str, str, str]], snap_ts: object) -> pd.DataFrame:
    """``State.accounts`` (a dict of columns per chunk, each row's account an index into ``names``)
    as the ``processlist_accounts`` frame (``ACCOUNT_COLUMNS``), ``ts`` the time of each row's
    snapshot; ``user``, ``client`` and ``command`` as categories made from the accounts' names
    (no string per row; a piece's are joined by ``parsers.ingest.joining``)."""
    if not accounts:
        return pd.DataFrame(
            {
                c: pd.Series([], dtype="datetime64[ns, UTC]" if c == "ts" else object)
                for c in (*ACCOUNT_COLUMNS, "line_no")
            }
        )
    part = {c: np.concatenate([chunk[c] for chunk in accounts]) for c in accounts[0]}
    account = part.pop("account")
    out = {"ts": pd.DatetimeIndex(snap_ts)[part.pop("snapshot")]}
    for column, values in zip(ACCOUNT_COLUMNS[1:4], zip(*names, strict=True), strict=True):
        codes, categories = pd.factorize(np.array(values, dtype=object))
        out[column] = pd.Categorical.from_codes(codes[account], categories=categories)
    out |= {c: part[c] for c in ACCOUNT_COLUMNS[4:]}
    out["line_no"] = part["line_no"]
    return pd.DataFrame(out).astype({"sessions": "int32"})


def _sessions(df: pd.DataFrame, untyped: dict[int, int]) -> pd.DataFrame:
    """Sessions per snapshot: the typed rows of ``df`` and those ``State.typed_rows`` counted."""
    snap = df["snapshot"].to_numpy(dtype=np.int64)  # in line order: snapshots never go back
    first = np.flatnonzero(np.diff(snap, prepend=-1)) if len(snap) else np.zeros(0, dtype=np.int64)
    sessions = np.diff(first, append=len(snap)) + np.array([untyped.get(int(x), 0) for x in snap[first]])
    return pd.DataFrame(
        {
            "ts": df["ts"].iloc[first].reset_index(drop=True),
            "line_no": df["line_no"].to_numpy(dtype=np.int64)[first],
            "line_end": np.maximum.reduceat(df["line_end"].to_numpy(dtype=np.int64), first)
            if len(first)
            else np.zeros(0, dtype=np.int64),
            "sessions": sessions.astype(np.int32),
        }
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    statements=("processlist.info",),
    users=("processlist.user", "processlist_accounts.user"),
    hosts=("processlist.host", "processlist_accounts.client"),
    schemas=("processlist.db",),
    statement_fields=frozenset({"Info"}),
    table_statement_column=7,  # Id, User, Host, db, Command, Time, State, then Info
)
