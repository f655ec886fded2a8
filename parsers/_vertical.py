"""Shared reading of ``mysql -e '...\\G'`` output (vertical records) cut into timed snapshots.

The MySQL client's vertical format (``\\G``) prints each row as ``*** N. row ***`` followed by
``key: value`` lines whose keys are right-aligned, so every colon of one record sits in the same
column; a value with newlines (a statement, an error text) continues on lines that do not have a
key there. pt-stalk writes such output for ``-transactions``, ``-lock-waits`` and ``-slave-status``,
with a ``TS <epoch> <date> <time>`` marker before each snapshot (pt-stalk 3.5+) or without one
(3.2: then an echoed statement such as ``SHOW SLAVE STATUS\\G`` or a row numbered 1 of the
first query starts a snapshot, timed from the collection's start plus the interval).

Two readers, one for each size of member:

- ``read``: record by record, for the small members of ``parsers.innodb_trx``,
  ``parsers.lock_waits`` and ``parsers.slave_status`` (any keys, echoed statements, the colon
  column of each record), and for ``parsers.threads`` (``multiline``: only PROCESSLIST_INFO spans
  lines; ``batch``: records handed over in parts, so a day of listings is typed piece by piece).
- ``read_chunk`` (``parsers._vertical_chunks``): the chunks of a large member
  (``parsers.processlist``: SHOW PROCESSLIST\\G every second for a day), whose keys are learned from
  its first row; a regular chunk is read as bytes with NumPy (``parsers._bytes``), any other with one
  regex per row. The rows go to a ``RowSink`` (``parsers._processlist_rows.State``).

Not a format.
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
#: A row header with any blanks around it and any run of stars (``read_chunk``, ``sniff`` of
#: processlist): the regex reading of a chunk accepts what the NumPy reading turns down.
ANY_ROW_HEADER = re.compile(r"^\s*\*+ (\d+)\. row \*+\s*$")
#: A ``Key:`` line (key and the blanks before it), followed by a blank or the line's end.
KEY_LINE = re.compile(r"^(\s*)(\w+):(?: |$)")


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


#: At most this many distinct texts before the colon column are remembered per member (``read``).
KEY_CACHE = 4096


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
    multiline: frozenset[str] | None = None,
    batch: Callable[[list[Record]], None] | None = None,
    batch_records: int = 10_000,
) -> Vertical:
    """Read every ``\\G`` record of ``stream`` with its snapshot.

    A snapshot starts at each ``TS``/``zzz`` marker, else at each echoed statement for which
    ``starts_snapshot(line)`` holds, else (no marker and no such echo in the member) at each
    row numbered 1 whose key set is the member's first. Raises ``ParseError`` naming the line when
    a line outside a record is neither blank, a marker, an echoed statement nor mysql's
    ``Warning``/``ERROR`` text, before any record was read.

    ``multiline``: the keys whose value may span lines (``PROCESSLIST_INFO``): inside a record a
    line that is not a key line continues the value only after one of them, blank lines and lines
    that look like an echoed statement included, and is skipped after any other key; a record then
    ends only at the next row header or marker. None (default): any key's value continues on such
    lines, and a blank line or an echoed statement ends the record.
    ``batch``: called with every ``batch_records`` records read (and with the rest at the end), which
    are then dropped from ``Vertical.records``: a large member is typed in parts, memory stays bounded.
    """
    r = _Records(member, warnings, starts_snapshot, what, multiline, batch, batch_records)
    for no, line in iter_lines(stream):
        if line.startswith(("TS ", "zzz ")) and (marker := parse_marker(line)) is not None:
            r.close()
            r.used_marker = True
            r.markers.append(marker)
        elif (m := ROW_HEADER.match(line) if line[:1] == "*" else None) is not None:  # stars first
            r.open(no, int(m.group(1)))
        elif r.current is not None:
            r.in_record(no, line, r.current)
        else:
            r.outside(no, line)
    return r.finish(clock)


class _Records:
    """The state of ``read`` between lines: the record being read, the snapshots so far, how they
    are told apart (markers, echoed statements, a first row numbered 1 again)."""

    def __init__(
        self,
        member: str,
        warnings: list[ParseWarning],
        starts_snapshot: Callable[[str], bool],
        what: str,
        multiline: frozenset[str] | None,
        batch: Callable[[list[Record]], None] | None,
        batch_records: int,
    ) -> None:
        self.member, self.warnings, self.what = member, warnings, what
        self.starts_snapshot, self.multiline = starts_snapshot, multiline
        self.batch, self.batch_records = batch, batch_records
        self.out = Vertical()
        self.read_any = False
        self.markers: list[TsMarker | None] = []
        self.current: Record | None = None
        self.colon = -1
        self.last_key = ""
        self.statement = ""
        self.used_marker = self.used_echo = False
        self.first_keys: tuple[str, ...] | None = None
        # What the text before a record's colon column is: the key it names, or "" (a continuation
        # line). Keys repeat in every record, so each is matched once; bounded against hostile input.
        self.key_of: dict[str, str] = {}

    def close(self) -> None:
        """The record being read is done: kept (and handed to ``batch`` every ``batch_records``)."""
        current = self.current
        if current is None:
            return
        keys = tuple(current.values)
        if self.first_keys is None:
            self.first_keys = keys
        elif not self.used_marker and not self.used_echo and current.row == 1 and keys == self.first_keys:
            self.markers.append(None)  # no marker, no echo: the first query's row 1 starts a snapshot
            current.snapshot = len(self.markers) - 1
        self.out.records.append(current)
        self.read_any = True
        self.current = None
        if self.batch is not None and len(self.out.records) >= self.batch_records:
            self.batch(self.out.records)
            self.out.records = []

    def open(self, no: int, row: int) -> None:
        """A row header at line ``no``: a new record of its snapshot."""
        self.close()
        if not self.markers:
            self.markers.append(None)
        self.current = Record({}, no, no, len(self.markers) - 1, self.statement, row)
        self.colon = -1

    def echoed(self, line: str) -> None:
        """An echoed statement: remembered for the records after it; may start a snapshot."""
        self.statement = line.strip()
        if self.starts_snapshot(line) and not self.used_marker:
            self.used_echo = True
            self.markers.append(None)

    def in_record(self, no: int, line: str, current: Record) -> None:
        """A line inside a record: a key line, a continuation of the last value, or its end."""
        if self.colon < 0:
            self.colon = line.find(":")
        colon = self.colon
        if colon > 0 and len(line) > colon and line[colon] == ":":
            head = line[:colon]
            key = self.key_of.get(head)
            if key is None:
                key = head.strip() if _KEY.match(head) else ""
                if len(self.key_of) < KEY_CACHE:
                    self.key_of[head] = key
            if key:
                self.last_key = key
                current.values[key] = _value(line[colon + 2 :] if len(line) > colon + 1 else "")
                current.key_lines[key] = no
                current.line_end = no
                return
        last_key = self.last_key
        if self.multiline is not None:
            if last_key in self.multiline and last_key in current.values:
                current.values[last_key] = (current.values[last_key] or "") + "\n" + line
                current.line_end = no
            return
        if line.strip() == "" and not last_key:
            return
        if _STATEMENT.match(line) or (line.strip() == "" and current.values):
            self.close()  # a blank line or the next echoed statement ends the record
            if _STATEMENT.match(line):
                self.echoed(line)
            return
        current.values[last_key] = (current.values.get(last_key) or "") + "\n" + line
        current.line_end = no

    def outside(self, no: int, line: str) -> None:
        """A line outside any record: blank, an echoed statement, the client's message, or stray."""
        if not line.strip():
            return
        if _STATEMENT.match(line):
            self.echoed(line)
        elif line.startswith(("Warning", "ERROR", "mysql:", "mariadb:")):
            self.warnings.append(ParseWarning(no, "client-message", f"mysql client said: {line[:120]!r}"))
        elif not self.read_any and not self.out.records:
            raise ParseError(
                self.member, no, line, f"not {self.what}: expected a '*** 1. row ***' or a TS line"
            )
        else:
            self.warnings.append(
                ParseWarning(no, "stray-line", f"line outside any record skipped: {line[:80]!r}")
            )

    def finish(self, clock: ClockHints) -> Vertical:
        """The last record closed, the snapshots timed (``snapshot_times``)."""
        self.close()
        out, markers = self.out, self.markers
        if self.batch is not None and out.records:
            self.batch(out.records)
            out.records = []
        if not markers and (out.records or self.read_any):
            markers.append(None)
        times = snapshot_times(markers, clock, self.warnings, interval_code="assumed-interval")
        out.ts, out.clock, out.ts_is_local, out.utc_offset_s = (
            times.ts,
            times.clock,
            times.ts_is_local,
            times.utc_offset_s,
        )
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
