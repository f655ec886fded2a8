"""Shared by the kernel counter parsers (``netstat_s``, ``procvmstat``): snapshots cut at markers,
and per-second rates of long frames of counters. Not a format."""

from __future__ import annotations

import re

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


def cut_at_marker(text: str) -> int:
    """End a chunk before its last marker line (a snapshot stays whole), else at a line end."""
    at = max(text.rfind("\nTS "), text.rfind("\nzzz "))
    return at + 1 if at > 0 else text.rfind("\n") + 1


def snapshots(text: str, base: int, member: str, first_line: re.Pattern[str] | None = None):
    """``(marker or None, first line number, text)`` of each snapshot of ``text`` (lines numbered
    from ``base``): the text after each ``TS``/``zzz`` marker, or, with no marker, cut where
    ``first_line`` matches (the first line of each snapshot, e.g. ``Ip:``)."""
    found = list(MARKER_LINE.finditer(text))
    out = []
    if found:
        pos, line = 0, base
        if text[: found[0].start()].strip():
            out.append((None, base, text[: found[0].start()]))
        for i, m in enumerate(found):
            line = base + text.count("\n", 0, m.start())
            marker = parse_marker(m.group(0))
            if marker is None:
                raise ParseError(member, line, m.group(0), "unreadable TS marker")
            end = found[i + 1].start() if i + 1 < len(found) else len(text)
            out.append((marker, line + 1, text[m.end() + 1 : end]))
        del pos
        return out
    starts = [m.start() for m in first_line.finditer(text)] if first_line is not None else []
    if not starts or starts[0] != 0 and text[: starts[0]].strip():
        starts = [0, *starts]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        out.append((None, base + text.count("\n", 0, start), text[start:end]))
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
    ts_ns: np.ndarray, line_no: np.ndarray, fields: list[str] | np.ndarray, values: np.ndarray
) -> pd.DataFrame:
    """The long frame ``ts``, ``line_no``, ``field`` (category), ``value``, ``per_s``."""
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
    fields: list[str] | np.ndarray,
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
