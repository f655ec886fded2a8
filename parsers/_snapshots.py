"""Lines of a member cut into snapshots by pt-stalk's ``TS`` markers (or OSWatcher's ``zzz``), for
the small text members read line by line (df, netstat, slabinfo, numastat, sysctl ...).

``Snapshots(stream, clock)`` yields ``(line_no, ts, line)`` for every line that is not a marker:
``ts`` is the UTC time of the last marker (its wall clock labelled UTC when the marker has no epoch),
or, before any marker, the capture's start from the layout (``ClockHints.start_local``, the server's
wall clock: ``ts_is_local``), or NaT when nothing tells the time. ``ChunkedRows`` does the same for members of
millions of similar rows (netstat sockets, slab caches): chunks of whole snapshots, one regex pass each,
snapshot and line of each row by NumPy. ``read_table`` is the one reader of the small snapshot tables (df,
sysctl, numastat, SHOW OPEN TABLES, SHOW ENGINE INNODB MUTEX): each format only says what a line
holds; ``table_source`` types any such table into its source (netstat's counted sockets too). Not
a format.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parsers import _counters
from parsers.base import (
    Clock,
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    parse_marker,
    raw_blocks,
    text_chunks,
)

#: The dtype of every ``ts`` column.
TS_DTYPE = "datetime64[ns, UTC]"


class Snapshots:
    """Iterate ``(line_no, ts, line)`` over ``stream`` (see the module docstring); after the loop,
    ``clock``, ``ts_is_local`` and ``snapshots`` (markers read) describe what was found."""

    def __init__(self, stream: Iterable[str], clock: ClockHints) -> None:
        self.stream = stream
        self.hints = clock
        self.snapshots = 0
        self.marker_local = False

    def __iter__(self) -> Iterator[tuple[int, pd.Timestamp, str]]:
        start = self.hints.start_local
        ts = pd.Timestamp(start).tz_localize("UTC") if start is not None else pd.NaT
        for no, raw in enumerate(self.stream, start=1):
            line = raw.rstrip("\r\n")
            if line[:2] in ("TS", "zz"):
                marker = parse_marker(line)
                if marker is not None:
                    self.snapshots += 1
                    self.marker_local = marker.utc is None
                    ts = marker.ts
                    continue
            yield no, ts, line

    @property
    def clock(self) -> Clock:
        return Clock.TS_MARKER if self.snapshots else Clock.INFERRED

    @property
    def ts_is_local(self) -> bool:
        """True when the times are the server's wall clock (no marker with an epoch was read)."""
        return self.marker_local if self.snapshots else self.hints.start_local is not None


def ts_column(values: list[pd.Timestamp]) -> pd.Series:
    """A ``ts`` column of dtype ``datetime64[ns, UTC]`` from timestamps (NaT allowed)."""
    return pd.Series(pd.to_datetime(values, utc=True) if values else [], dtype=TS_DTYPE)


@dataclass(slots=True)
class Matches:
    """The rows one regex found in a chunk of snapshots: ``snap`` (index into ``ChunkedRows.times``
    of the snapshot each row is in: 0 is before any marker), ``line_no`` (1-based, in the member),
    ``groups`` (the regex groups of each row, as text)."""

    snap: np.ndarray
    line_no: np.ndarray
    groups: list[tuple[str, ...]]


class ChunkedRows:
    """The rows of a snapshot member found chunk by chunk (a few MB of whole snapshots, cut at the
    markers) by one multi-line regex pass each, with their snapshot and line found by NumPy: for
    members of millions of similar rows (netstat sockets, slab caches). Iterate to get ``Matches``
    per chunk; ``times`` (UTC per snapshot, ``times[0]`` the time before any marker: the capture
    start, local, or NaT), ``markers``, ``clock`` and ``ts_is_local`` describe the member after.

    ``row`` is a ``re.M`` pattern matching a whole row from its line start; ``is_row(line)`` tells
    the lines that should have matched and ``count_rows(text)`` counts them in a chunk (when it
    counts more than matched, each that did not match gets an ``odd-line`` warning in
    ``warnings``); ``head_ok(line)`` the lines allowed before the first row (another raises
    ``ParseError`` naming it).
    """

    def __init__(
        self,
        stream: Iterable[str],
        clock: ClockHints,
        *,
        member: str,
        row: re.Pattern[str],
        is_row: Callable[[str], bool],
        count_rows: Callable[[str], int],
        head_ok: Callable[[str], bool],
        what: str,
    ) -> None:
        self.stream = stream
        self.member = member
        self.row = row
        self.is_row = is_row
        self.count_rows = count_rows
        self.head_ok = head_ok
        self.what = what
        start = clock.start_local
        self.start_local = start
        self.times: list[pd.Timestamp] = [
            pd.Timestamp(start).tz_localize("UTC") if start is not None else pd.NaT
        ]
        self.markers = 0
        self.marker_local = False
        self.warnings: list[ParseWarning] = []

    def __iter__(self) -> Iterator[Matches]:
        checked = False
        for base, text in text_chunks(raw_blocks(self.stream), _counters.cut_at_marker):
            if not checked:
                self._head_check(text, base)
                checked = True
            found = _counters.find_markers(text)
            lines = _counters.marker_lines(text, found)
            marker_at = np.fromiter((m.start() for m in found), dtype="int64", count=len(found))
            before = self.markers
            for marker in _counters.markers_of([m.group(0) for m in found], self.member, base, lines):
                self.times.append(marker.ts)
                self.markers += 1
                self.marker_local = marker.utc is None
            matches = list(self.row.finditer(text))
            if self.count_rows(text) != len(matches):
                self._odd_rows(text, base)
            if not matches:
                continue
            pos = np.fromiter((m.start() for m in matches), dtype="int64", count=len(matches))
            if text.isascii():
                newlines = np.flatnonzero(np.frombuffer(text.encode(), np.uint8) == 10)
                line_idx = np.searchsorted(newlines, pos)
            else:
                line_idx = np.array([text.count("\n", 0, p) for p in pos], dtype="int64")
            snap = before + np.searchsorted(marker_at, pos, side="right")
            yield Matches(snap, base + line_idx, [m.groups() for m in matches])
        _counters.forget()

    def _head_check(self, text: str, base: int) -> None:
        for i, line in enumerate(text.split("\n")):
            if self.is_row(line) or i > HEAD_CHECK_LINES:
                return
            if line.strip() and not line.startswith(("TS ", "zzz ")) and not self.head_ok(line):
                raise ParseError(self.member, base + i, line, f"not {self.what}")

    def _odd_rows(self, text: str, base: int) -> None:
        for i, line in enumerate(text.split("\n")):
            if self.is_row(line) and self.row.match(line) is None:
                self.warnings.append(
                    ParseWarning(base + i, "odd-line", f"not a row of {self.what}: {line[:80]!r}")
                )

    @property
    def clock(self) -> Clock:
        return Clock.TS_MARKER if self.markers else Clock.INFERRED

    @property
    def ts_is_local(self) -> bool:
        return self.marker_local if self.markers else self.start_local is not None


#: Lines before the first row that are checked to be this format's titles (``ChunkedRows``).
HEAD_CHECK_LINES = 50


#: The name of the empty first frame of a source none of whose rows has a time (``source_frames``).
UNTIMED = "untimed"


def source_frames(name: str, frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``{name: frame}`` for ``ParsedSource.frames``; behind an empty first frame (``UNTIMED``) when
    rows exist and none has a time (a loose file without markers nor a capture start): the source's
    main frame then has no samples, start or end (NaT is no time), and ``frame`` is still read."""
    if len(frame) and frame["ts"].isna().all():
        return {
            UNTIMED: pd.DataFrame({"ts": ts_column([]), "line_no": pd.Series([], dtype="int64")}),
            name: frame,
        }
    return {name: frame}


#: What a snapshot-table format reads of one line (``read_table``): ``(line_no, stripped text, line)``
#: -> the rows it holds (tuples of the table's columns after ``ts`` and ``line_no``; none for a
#: title, a border or an odd line, which it warns about itself); raises ``ParseError`` when the
#: member is not its format.
RowReader = Callable[[int, str, str], Iterable[tuple[object, ...]]]
#: The ``meta`` of a snapshot-table source from its frame and the count of markers read.
MetaOf = Callable[[pd.DataFrame, int], dict[str, object]]


def read_table(
    stream: Iterable[str],
    *,
    fmt: str,
    member: str,
    clock: ClockHints,
    frame: str,
    columns: dict[str, str],
    row: RowReader,
    meta: MetaOf,
    warnings: list[ParseWarning],
    finish: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> ParsedSource:
    """The one reader of the small snapshot tables (df, sysctl, numastat, SHOW OPEN TABLES, SHOW
    ENGINE INNODB MUTEX): the member's lines cut into snapshots at their markers (``Snapshots``),
    blank lines skipped, every other line handed to ``row``, whose rows are timed by their
    snapshot; then ``table_source``. ``columns``: name -> dtype of the columns ``row`` gives."""
    snaps = Snapshots(stream, clock)
    rows: list[tuple[object, ...]] = []
    for no, ts, line in snaps:
        text = line.strip()
        if text:
            rows += [(ts, no, *r) for r in row(no, text, line)]
    table = pd.DataFrame(rows, columns=["ts", "line_no", *columns])
    return table_source(
        table,
        fmt=fmt,
        member=member,
        frame=frame,
        columns=columns,
        timed=snaps,
        markers=snaps.snapshots,
        meta=meta,
        warnings=warnings,
        finish=finish,
    )


def table_source(
    table: pd.DataFrame,
    *,
    fmt: str,
    member: str,
    frame: str,
    columns: dict[str, str],
    timed: Snapshots | ChunkedRows,
    markers: int,
    meta: MetaOf,
    warnings: list[ParseWarning],
    finish: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> ParsedSource:
    """The source of a snapshot table: ``table`` (``ts``, ``line_no`` and ``columns``) typed (``ts``
    UTC, ``line_no`` int64, each column its dtype), passed through ``finish`` when given, with
    ``ts_source`` (``marker`` when ``markers`` were read, else ``inferred``) as its second column,
    as frame ``frame`` (behind an empty ``UNTIMED`` one when no row has a time:
    ``source_frames``), the clock of ``timed`` (``Snapshots`` or ``ChunkedRows``)."""
    table = table.reindex(columns=["ts", "line_no", *columns])
    table["ts"] = ts_column(list(table["ts"]))
    table = table.astype({"line_no": "int64", **{c: t for c, t in columns.items() if t != "object"}})
    if finish is not None:
        table = finish(table)
    table.insert(1, "ts_source", "marker" if markers else "inferred")
    return ParsedSource(
        format=fmt,
        member=member,
        frames=source_frames(frame, table),
        clock=timed.clock,
        warnings=warnings,
        meta=meta(table, markers),
        ts_is_local=timed.ts_is_local,
    )
