"""Shared reading of ``mysql -e '...\\G'`` output (vertical records) cut into timed snapshots.

The MySQL client's vertical format (``\\G``) prints each row as ``*** N. row ***`` followed by
``key: value`` lines whose keys are right-aligned, so every colon of one record sits in the same
column; a value with newlines (a statement, an error text) continues on lines that do not have a
key there. pt-stalk writes such output for ``-transactions``, ``-lock-waits`` and ``-slave-status``,
with a ``TS <epoch> <date> <time>`` marker before each snapshot (pt-stalk 3.5+) or without one
(3.2: then an echoed statement such as ``SHOW SLAVE STATUS\\G`` or a row numbered 1 of the
first query starts a snapshot, timed from the collection's start plus the interval).

Used by ``parsers.innodb_trx``, ``parsers.lock_waits`` and ``parsers.slave_status``; not a format.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers.base import (
    Clock,
    ClockHints,
    ParseError,
    ParseWarning,
    TsMarker,
    iter_lines,
    parse_marker,
    snapshot_times,
)

ROW_HEADER = re.compile(r"^\*{3,} *(\d+)\. row *\*{3,}\s*$")
_KEY = re.compile(r"^ *([A-Za-z_][A-Za-z0-9_]*)$")
#: An echoed statement line (pt-stalk's ``echo -e "\\n$sql\\n"``): upper-case SQL verb first.
_STATEMENT = re.compile(r"^(SHOW|SELECT|select|show)\s")


@dataclass(slots=True)
class Record:
    """One ``\\G`` row: ``values`` by key (strings; ``NULL`` kept as None), first and last line,
    the snapshot it belongs to and the statement echoed before it (or '')."""

    values: dict[str, str | None]
    line_no: int
    line_end: int
    snapshot: int
    statement: str = ""
    row: int = 0
    key_lines: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Vertical:
    """Records of a member and the time of each snapshot (``ts`` one per snapshot index)."""

    records: list[Record] = field(default_factory=list)
    ts: pd.DatetimeIndex | None = None
    clock: Clock = Clock.INFERRED
    ts_is_local: bool = False
    utc_offset_s: int | None = None
    walls: list[pd.Timestamp | None] = field(default_factory=list)
    snapshots: int = 0


def _value(text: str) -> str | None:
    return None if text == "NULL" else text


def read(
    stream: Iterable[str],
    *,
    member: str,
    clock: ClockHints,
    warnings: list[ParseWarning],
    starts_snapshot: Callable[[str], bool] = lambda _: False,
    what: str = "vertical (\\G) output",
) -> Vertical:
    """Read every ``\\G`` record of ``stream`` with its snapshot.

    A snapshot starts at each ``TS``/``zzz`` marker, else at each echoed statement for which
    ``starts_snapshot(line)`` holds, else (no marker and no such echo in the member) at each
    row numbered 1 whose key set is the member's first. Raises ``ParseError`` naming the line when
    a line outside a record is neither blank, a marker, an echoed statement nor mysql's
    ``Warning``/``ERROR`` text, before any record was read.
    """
    out = Vertical()
    markers: list[TsMarker | None] = []
    current: Record | None = None
    colon = -1
    last_key = ""
    statement = ""
    used_marker = used_echo = False
    first_keys: tuple[str, ...] | None = None
    pending_keys: list[str] = []

    def close() -> None:
        nonlocal current, first_keys
        if current is not None:
            keys = tuple(current.values)
            if first_keys is None:
                first_keys = keys
            elif not used_marker and not used_echo and current.row == 1 and keys == first_keys:
                markers.append(None)  # no marker, no echo: the first query's row 1 starts a snapshot
                current.snapshot = len(markers) - 1
            out.records.append(current)
            current = None

    def new_snapshot(marker: TsMarker | None) -> None:
        markers.append(marker)

    def echoed(line: str) -> None:
        """An echoed statement: remembered for the records after it; may start a snapshot."""
        nonlocal statement, used_echo
        statement = line.strip()
        if starts_snapshot(line) and not used_marker:
            used_echo = True
            new_snapshot(None)

    for no, line in iter_lines(stream):
        if line.startswith(("TS ", "zzz ")):
            marker = parse_marker(line)
            if marker is not None:
                close()
                used_marker = True
                new_snapshot(marker)
                continue
        m = ROW_HEADER.match(line)
        if m:
            close()
            if not markers:
                new_snapshot(None)
            current = Record({}, no, no, len(markers) - 1, statement, int(m.group(1)))
            colon = -1
            pending_keys = []
            continue
        if current is not None:
            if colon < 0:
                colon = line.find(":")
            if colon > 0 and len(line) > colon and line[colon] == ":" and _KEY.match(line[:colon]):
                last_key = line[:colon].strip()
                current.values[last_key] = _value(line[colon + 2 :] if len(line) > colon + 1 else "")
                current.key_lines[last_key] = no
                pending_keys.append(last_key)
                current.line_end = no
                continue
            if line.strip() == "" and not last_key:
                continue
            if _STATEMENT.match(line) or (line.strip() == "" and current.values):
                # a blank line or the next echoed statement ends the record
                close()
                if _STATEMENT.match(line):
                    echoed(line)
                continue
            prev = current.values.get(last_key)
            current.values[last_key] = (prev or "") + "\n" + line
            current.line_end = no
            continue
        if not line.strip():
            continue
        if _STATEMENT.match(line):
            echoed(line)
            continue
        if line.startswith(("Warning", "ERROR", "mysql:", "mariadb:")):
            warnings.append(ParseWarning(no, "client-message", f"mysql client said: {line[:120]!r}"))
            continue
        if not out.records:
            raise ParseError(member, no, line, f"not {what}: expected a '*** 1. row ***' or a TS line")
        warnings.append(ParseWarning(no, "stray-line", f"line outside any record skipped: {line[:80]!r}"))
    close()
    if not markers and out.records:
        markers.append(None)
    times = snapshot_times(markers, clock, warnings, interval_code="assumed-interval")
    out.ts = times.ts
    out.clock = times.clock
    out.ts_is_local = times.ts_is_local
    out.utc_offset_s = times.utc_offset_s
    out.walls = [m.wall if m is not None else None for m in markers]
    out.snapshots = len(markers)
    return out


def frame(v: Vertical, rows: list[Record], columns: dict[str, tuple[tuple[str, ...], str]]) -> pd.DataFrame:
    """``rows`` as a frame: ``ts`` (their snapshot's time), ``line_no``, ``line_end``, then one
    column per entry of ``columns`` (name -> (keys tried in order, dtype ``float``/``str``))."""
    snaps = np.array([r.snapshot for r in rows], dtype="int64")
    ts = v.ts[snaps] if len(rows) else pd.DatetimeIndex([], tz="UTC")
    data: dict[str, object] = {
        "ts": pd.Series(ts, dtype="datetime64[ns, UTC]"),
        "line_no": np.array([r.line_no for r in rows], dtype="int64"),
        "line_end": np.array([r.line_end for r in rows], dtype="int64"),
    }
    for name, (keys, kind) in columns.items():
        values = [next((r.values[k] for k in keys if k in r.values), None) for r in rows]
        if kind == "float":
            data[name] = pd.to_numeric(pd.Series(values, dtype="object"), errors="coerce").astype("float64")
        else:
            data[name] = pd.Series(values, dtype="string")
    return pd.DataFrame(data)


def number_check(v: Vertical, rows: list[Record], keys: tuple[str, ...], member: str) -> None:
    """Raise ``ParseError`` at the first of ``rows`` whose value of one of ``keys`` is neither NULL,
    empty nor a number: a number that does not parse is never silently NaN."""
    for r in rows:
        for k in keys:
            value = r.values.get(k)
            if value is None or value == "":
                continue
            try:
                float(value)
            except ValueError:
                no = r.key_lines.get(k, r.line_no)
                raise ParseError(member, no, f"{k}: {value}", f"{k}: {value!r} is not a number") from None


def wall_of(v: Vertical, snapshot: int) -> pd.Timestamp | None:
    """The server's wall clock of ``snapshot`` (from its TS marker), or its time when that is local."""
    wall = v.walls[snapshot] if snapshot < len(v.walls) else None
    if wall is not None:
        return wall
    if v.ts_is_local and v.ts is not None and snapshot < len(v.ts):
        return v.ts[snapshot].tz_localize(None)
    return None
