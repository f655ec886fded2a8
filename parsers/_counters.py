"""Shared by the kernel counter parsers (``netstat_s``, ``procvmstat``): snapshots cut at markers,
and per-second rates of long frames of counters. Not a format."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parsers.base import (
    ClockHints,
    ParseError,
    ParseWarning,
    SnapshotTimes,
    TsMarker,
    parse_marker,
    snapshot_times,
)

MARKER_LINE = re.compile(r"^(?:TS|zzz) [^\n]*$", re.M)


@dataclass(frozen=True, slots=True)
class Found:
    """A marker line found in a chunk: ``text[start:end]`` (the ``re.Match`` calls its users make)."""

    text: str
    begin: int
    stop: int

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.stop

    def group(self, _: int = 0) -> str:
        return self.text[self.begin : self.stop]


_last: list[tuple[str, bytes, np.ndarray]] = []


def _bytes_and_newlines(text: str) -> tuple[bytes, np.ndarray]:
    """``text`` encoded and the offsets of its newlines, computed once per chunk (the marker search,
    the marker line numbers and the reader all need them; a chunk is several MB)."""
    if _last and _last[0][0] is text:
        return _last[0][1], _last[0][2]
    data = text.encode()
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    _last[:] = [(text, data, newlines)]
    return data, newlines


def forget() -> None:
    """Drop the cached bytes of the last chunk (called when a member is parsed)."""
    _last.clear()


def bytes_of(text: str) -> bytes:
    """``text`` encoded, from the cache of its chunk."""
    return _bytes_and_newlines(text)[0]


def find_markers(text: str) -> list[Found] | list[re.Match[str]]:
    """The ``TS``/``zzz`` marker lines of ``text``: NumPy over the bytes of an ASCII text (the line
    starts whose first bytes are ``TS `` or ``zzz ``), else the regex ``MARKER_LINE``."""
    if not text.isascii():
        return list(MARKER_LINE.finditer(text))
    data, newlines = _bytes_and_newlines(text)
    a = np.frombuffer(data, dtype=np.uint8)
    starts = np.concatenate(([0], newlines + 1))
    starts = starts[starts + 3 < len(a)]
    ts = (a[starts] == 84) & (a[starts + 1] == 83) & (a[starts + 2] == 32)
    zzz = (a[starts] == 122) & (a[starts + 1] == 122) & (a[starts + 2] == 122) & (a[starts + 3] == 32)
    hits = starts[ts | zzz]
    ends = newlines[np.searchsorted(newlines, hits)] if len(newlines) else np.full(len(hits), len(a))
    ends = np.where(ends < hits, len(a), ends)
    return [Found(text, int(b), int(e)) for b, e in zip(hits, ends, strict=True)]


def marker_lines(text: str, found: list[re.Match[str]]) -> np.ndarray:
    """0-based line index in ``text`` of each match in ``found`` (in order): the newlines before
    each, found by NumPy in the bytes of an ASCII text, else counted from one match to the next."""
    if text.isascii():
        _, newlines = _bytes_and_newlines(text)
        starts = np.fromiter((m.start() for m in found), dtype="int64", count=len(found))
        return np.searchsorted(newlines, starts).astype("int64")
    out = np.empty(len(found), dtype="int64")
    line, counted = 0, 0
    for i, m in enumerate(found):
        line += text.count("\n", counted, m.start())
        counted = m.start()
        out[i] = line
    return out


def read_rows(
    text: str, found: list[re.Match[str]], **read_csv: object
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """``text`` read by pandas' C reader (``read_csv`` options as given), its marker lines (``found``)
    turned into comments the reader skips, so no copy of the text is cut apart: returns the frame,
    the 0-based line index of each of its rows in ``text``, and the line index of each marker."""
    marker_idx = marker_lines(text, found)
    data = _bytes_and_newlines(text)[0]
    if found:
        data = data.replace(b"\nTS ", b"\n#TS ")
        if b"\nzzz " in data:
            data = data.replace(b"\nzzz ", b"\n#zzz ")
        if data.startswith((b"TS ", b"zzz ")):
            data = b"#" + data
    frame = pd.read_csv(
        io.BytesIO(data), header=None, comment="#", skip_blank_lines=False, engine="c", **read_csv
    )
    n_lines = len(_bytes_and_newlines(text)[1]) + (0 if text.endswith("\n") else 1)
    rows = np.delete(np.arange(n_lines, dtype="int64"), marker_idx)
    if len(rows) != len(frame):  # a '#' inside a line: the caller reads line by line
        raise ValueError("a '#' inside a line")
    return frame, rows, marker_idx


def cut_at_marker(text: str) -> int:
    """End a chunk before its last marker line (a snapshot stays whole), else at a line end."""
    at = max(text.rfind("\nTS "), text.rfind("\nzzz "))
    return at + 1 if at > 0 else text.rfind("\n") + 1


def snapshots(text: str, base: int, member: str, first_line: re.Pattern[str] | None = None):
    """``(marker or None, first line number, start, end)`` of each snapshot of ``text`` (lines
    numbered from ``base``; ``text[start:end]`` its lines): the text after each ``TS``/``zzz``
    marker, or, with no marker, cut where ``first_line`` matches (the first line of each snapshot,
    e.g. ``Ip:``)."""
    found = find_markers(text)
    out = []
    if found:
        if text[: found[0].start()].strip():
            out.append((None, base, 0, found[0].start()))
        lines = marker_lines(text, found)
        markers = markers_of([m.group(0) for m in found], member, base, lines)
        for i, (m, line, marker) in enumerate(zip(found, lines, markers, strict=True)):
            end = found[i + 1].start() if i + 1 < len(found) else len(text)
            out.append((marker, base + int(line) + 1, min(m.end() + 1, end), end))
        return out
    starts = [m.start() for m in first_line.finditer(text)] if first_line is not None else []
    if not starts or starts[0] != 0 and text[: starts[0]].strip():
        starts = [0, *starts]
    line, counted = base, 0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        line += text.count("\n", counted, start)
        counted = start
        out.append((None, line, start, end))
    return out


_TS_FAST = re.compile(r"^TS (\d{9,11})(?:\.(\d{1,9}))? (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")


def markers_of(
    lines: list[str], member: str, base_line: int = 0, line_idx: np.ndarray | None = None
) -> list[TsMarker]:
    """The markers of ``lines`` (marker lines of one chunk), pt-stalk's ``TS <epoch.ns> <date> <time>``
    read in one vectorised pass (a one-hour member has 3,600 of them), any other shape one by one
    (``parse_marker``). Raises ``ParseError`` for an unreadable marker (line ``base_line`` +
    ``line_idx[i]``)."""
    matches = [_TS_FAST.match(line) for line in lines]
    if lines and all(matches):
        ns = np.array(
            [int(m.group(1)) * 1_000_000_000 + int(((m.group(2) or "") + "000000000")[:9]) for m in matches]
        )
        utc = pd.DatetimeIndex(ns.view("datetime64[ns]"), tz="UTC")
        wall = pd.to_datetime([m.group(3) for m in matches], format="%Y-%m-%d %H:%M:%S")
        return [TsMarker(utc=u, wall=w) for u, w in zip(utc, wall, strict=True)]
    out = []
    for i, line in enumerate(lines):
        marker = parse_marker(line)
        if marker is None:
            no = base_line + (int(line_idx[i]) if line_idx is not None else 0)
            raise ParseError(member, no, line, "unreadable TS marker")
        out.append(marker)
    return out


def per_second(ts_ns: np.ndarray, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-second rate of each row's counter since the previous row of the same ``codes``; NaN on
    a counter's first row and where it went backwards (reset or a gauge that fell)."""
    out = np.full(len(values), np.nan)
    if not len(values):
        return out
    order = np.lexsort((ts_ns, codes))
    same = np.r_[False, codes[order][1:] == codes[order][:-1]]
    cur, prev = order[same], order[np.flatnonzero(same) - 1]
    dt = (ts_ns[cur] - ts_ns[prev]) / 1e9
    delta = values[cur] - values[prev]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[cur] = np.where((dt > 0) & (delta >= 0), delta / dt, np.nan)
    return out


def long_frame(
    ts_ns: np.ndarray,
    line_no: np.ndarray,
    fields: list[str] | np.ndarray | pd.Categorical,
    values: np.ndarray,
) -> pd.DataFrame:
    """The long frame ``ts``, ``line_no``, ``field`` (category), ``value``, ``per_s``."""
    if isinstance(fields, pd.Categorical):
        codes, names = fields.codes.astype("int64"), fields.categories
    else:
        codes, names = pd.factorize(np.asarray(fields, dtype=object))
    return pd.DataFrame(
        {
            "ts": pd.DatetimeIndex(ts_ns.view("datetime64[ns]"), tz="UTC"),
            "line_no": line_no.astype("int64"),
            "field": pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object)),
            "value": values.astype("float64"),
            "per_s": per_second(ts_ns, codes, values.astype("float64")),
        }
    )


def finish(
    markers: list[TsMarker | None],
    snap_of: list[np.ndarray],
    lines: list[np.ndarray],
    fields: list[str] | np.ndarray | pd.Categorical,
    values: list[np.ndarray],
    clock: ClockHints,
    warnings: list[ParseWarning],
) -> tuple[pd.DataFrame, SnapshotTimes]:
    """The long frame of a counter member from its per-snapshot pieces, timed by its markers (or
    the start hint plus the interval)."""
    times = snapshot_times(markers, clock, warnings, interval_code="assumed-interval")
    snaps = np.concatenate(snap_of) if snap_of else np.zeros(0, dtype="int64")
    frame = long_frame(
        times.ts_ns[snaps] if len(snaps) else np.zeros(0, dtype="int64"),
        np.concatenate(lines) if lines else np.zeros(0, dtype="int64"),
        fields,
        np.concatenate(values) if values else np.zeros(0),
    )
    frame["field"] = frame["field"].astype(pd.CategoricalDtype(frame["field"].cat.categories.astype(str)))
    return frame, times
