"""Parse ``/proc/meminfo`` snapshots (pt-stalk ``-meminfo``) into a long frame of KiB values.

Accepts:
    repeated ``cat /proc/meminfo`` after ``TS`` markers (pt-stalk: ``(echo $ts; cat /proc/meminfo)``
    every second), OSWatcher ``zzz ***`` markers, or bare snapshots (a new one at each ``MemTotal:``);
    any kernel's field set (``MemAvailable`` from 3.14, ``Zswap``, ``Unaccepted`` ...): fields are
    kept by name. Values in ``kB`` (the kernel's KiB); ``HugePages_*`` are page counts, kept as is.

Sample input (pt-stalk 3.7.1 ``-meminfo``, kernel 5.14)::

    TS 1776790303.009325313 2026-04-21 16:51:43
    MemTotal:       394329280 kB
    MemFree:        104521596 kB
    MemAvailable:   348273696 kB
    Buffers:        10433708 kB
    HugePages_Total:       0
    Hugepagesize:       2048 kB

Output:
    frame ``meminfo`` (long, one row per field per snapshot): ``ts`` datetime64[ns, UTC] (the
    snapshot's marker), ``line_no`` int64, ``field`` category (``MemAvailable``, ``Active(file)``),
    ``kib`` float64 (KiB; for ``HugePages_Total/Free/Rsvd/Surp`` the number of huge pages).
    ``clock``: ``ts-marker``, or ``inferred`` (``clock.start_local`` + snapshot x interval).

Warnings:
    ``no-start-time`` (no marker, no start time), ``odd-line`` (a line that is not ``Field: value``).

Errors:
    ``ParseError`` at the first line that is neither blank, a marker nor ``Field: number [kB]``
    before the first value.

>>> src = parse(["TS 1776790303.009325313 2026-04-21 16:51:43", "MemTotal:       394329280 kB",
...              "HugePages_Total:       0"], member="m", clock=ClockHints())
>>> src.main[["line_no", "field", "kib"]].to_numpy().tolist()
[[2, 'MemTotal', 394329280.0], [3, 'HugePages_Total', 0.0]]
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers.base import (
    DEFAULT_INTERVAL_S,
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    line_chunks,
    parse_marker,
    start_or_epoch,
)
from parsers.sensitive import SYSTEM

FORMAT = "meminfo"
TRAITS = FormatTraits(short_lines=True, unsigned=True, capped_pct=False, blocks=Blocks.ROWS, markers=True)

#: Sniffing: this many ``Field: value`` lines in the head, one of them ``MemTotal``.
SNIFF_MIN_ROWS = 3

_ROW = re.compile(r"^([A-Za-z][A-Za-z0-9_()]*):[ \t]+(\d+)(?: kB)?[ \t\r]*$", re.M)
_MARKER = re.compile(r"^(?:TS|zzz) [^\n]*$", re.M)


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds ``/proc/meminfo`` lines, ``MemTotal:`` among them."""
    rows = [m.group(1) for line in head if (m := _ROW.match(line))]
    return len(rows) >= SNIFF_MIN_ROWS and "MemTotal" in rows


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read ``/proc/meminfo`` snapshots (lines of text) into the ``meminfo`` frame (KiB).

    Raises ``ParseError`` when the member is not this format (see the module docstring).
    """
    warnings: list[ParseWarning] = []
    state = {"snapshot": -1, "used_marker": False, "local": False, "seen_row": False}
    parts = [
        _chunk(lines, base, state, clock, member, warnings)
        for base, lines in line_chunks(stream, _last_marker)
    ]
    main = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    main["field"] = main["field"].astype("category")
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"meminfo": main},
        clock=Clock.TS_MARKER if state["used_marker"] else Clock.INFERRED,
        warnings=warnings,
        meta={"snapshots": int(main["ts"].nunique()), "variant": _variant(main)},
        ts_is_local=bool(state["local"]),
    )


def _variant(main: pd.DataFrame) -> str:
    """``/proc/meminfo 55 fields, MemAvailable (kernel >= 3.14)``: the field set's size and age."""
    fields = set(main["field"].cat.categories)
    new = "MemAvailable (kernel >= 3.14)" if "MemAvailable" in fields else "no MemAvailable (kernel < 3.14)"
    return f"/proc/meminfo {len(fields)} fields, {new}"


def _last_marker(lines: list[str]) -> int:
    """Index of the last marker line (where a chunk may end), or 0."""
    i = len(lines) - 1
    while i > 0 and not lines[i].startswith(("TS", "zzz")):
        i -= 1
    return i


def _split(text: str) -> tuple[list[str], list[str]] | None:
    """Fields and values of a segment made only of ``Field: value`` lines, else None."""
    pairs = _ROW.findall(text)
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0
    if len(pairs) != n_lines:
        return None
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _chunk(
    raw: list[str], base: int, state: dict, clock: ClockHints, member: str, warnings: list[ParseWarning]
) -> pd.DataFrame:
    """Parse complete snapshots (``raw`` lines, the first numbered ``base``).

    Fast path: the chunk is only markers and ``Field: value`` lines, each marker followed by one
    snapshot; one regex pass reads it. Otherwise ``_segments`` reads marker by marker.
    """
    text = "".join(raw) if raw and raw[0].endswith("\n") else "\n".join(raw)
    fast = _fast(text, raw, base, state)
    if fast is not None:
        return fast
    bounds = [(m.start(), m.end(), m.group(0)) for m in _MARKER.finditer(text)]
    return _segments(text, bounds, base, state, clock, member, warnings)


def _fast(text: str, raw: list[str], base: int, state: dict) -> pd.DataFrame | None:
    """Whitespace-split the chunk with pandas' C reader; None when it is not plain marker-led snapshots.

    Plain: every line is a marker, blank, or ``Field: <number> [kB]``; the first non-blank line is a
    marker; each marker heads at most one ``MemTotal``.
    """
    try:
        df = pd.read_csv(
            io.BytesIO(text.encode()),
            sep=r"\s+",
            header=None,
            names=["f", "v", "u", "x"],
            engine="c",
            skip_blank_lines=False,
            dtype={"f": "category", "v": "float64", "u": "category", "x": "str"},
            na_filter=False,
            quoting=csv.QUOTE_NONE,
        )
    except (ValueError, pd.errors.ParserError):
        return None
    if len(df) != len(raw):
        return None
    cats = df["f"].cat.categories
    codes = df["f"].cat.codes.to_numpy()
    kind = np.array(
        [2 if c in ("TS", "zzz") else 1 if c.endswith(":") else 0 if c == "" else 3 for c in cats]
    )
    k = kind[codes]
    marker_idx = np.flatnonzero(k == 2)
    row_idx = np.flatnonzero(k == 1)
    if (k == 3).any() or not len(marker_idx) or (len(row_idx) and row_idx[0] < marker_idx[0]):
        return None
    if not set(df["u"].cat.categories[df["u"].cat.codes.to_numpy()[row_idx]]) <= {"", "kB"}:
        return None
    if (df["x"].to_numpy()[row_idx] != "").any() or np.isnan(df["v"].to_numpy()[row_idx]).any():
        return None
    fields = df["f"].iloc[row_idx].cat.rename_categories([c[:-1] if c.endswith(":") else c for c in cats])
    if (fields == "MemTotal").sum() > len(marker_idx):
        return None
    marker_ts = []
    for i in marker_idx:
        m = parse_marker(raw[i].rstrip("\r\n"))
        if m is None:
            return None
        marker_ts.append(m.ts)
        state["local"] = state["local"] or m.utc is None
    state["used_marker"] = True
    state["seen_row"] = True
    state["snapshot"] += len(marker_idx)
    seg = np.searchsorted(marker_idx, row_idx) - 1
    ts = pd.DatetimeIndex(marker_ts).as_unit("ns").tz_convert(None).to_numpy()[seg]
    return pd.DataFrame(
        {
            "ts": pd.Series(ts).dt.tz_localize("UTC"),
            "line_no": row_idx + base,
            "field": pd.Categorical(fields.array).remove_unused_categories(),
            "kib": df["v"].to_numpy()[row_idx],
        }
    )


def _segments(
    text: str,
    bounds: list[tuple[int, int, str]],
    base: int,
    state: dict,
    clock: ClockHints,
    member: str,
    warnings: list[ParseWarning],
) -> pd.DataFrame:
    """The general reading: segment by segment between markers, snapshots cut at ``MemTotal``."""
    fields: list[str] = []
    values: list[str] = []
    line_nos: list[np.ndarray] = []
    snap: list[np.ndarray] = []
    ts_of: dict[int, pd.Timestamp] = {}
    step = pd.Timedelta(seconds=clock.interval_s or DEFAULT_INTERVAL_S)
    pos, line = 0, base
    marker_ts: pd.Timestamp | None = None
    for seg_end, next_start, marker in [*[(b[0], b[1], b[2]) for b in bounds], (len(text), len(text), None)]:
        seg = text[pos:seg_end]
        got = _split(seg) if seg.strip() else ([], [])
        nos = np.array([], dtype="int64")
        if got is None:
            got, nos = _split_lines(seg, line, member, state, warnings)
        else:
            nos = line + np.arange(len(got[0]), dtype="int64")
        if got[0]:
            new = np.cumsum(np.asarray(got[0], dtype=object) == "MemTotal")
            if new[0] == 0:  # rows before any MemTotal (a truncated snapshot) start a snapshot too
                new = new + 1
            ids = state["snapshot"] + new
            for k, sid in enumerate(np.unique(ids)):
                if marker_ts is not None:
                    ts_of[int(sid)] = marker_ts + k * step
                else:
                    ts_of[int(sid)] = start_or_epoch(clock, warnings).tz_localize("UTC") + int(sid) * step
                    state["local"] = True
            state["snapshot"] = int(ids[-1])
            state["seen_row"] = True
            fields += got[0]
            values += got[1]
            line_nos.append(nos)
            snap.append(ids)
        line += seg.count("\n")
        if marker is None:
            break
        m = parse_marker(marker.rstrip("\r"))
        if m is None:
            raise ParseError(member, line, marker, "unreadable TS marker")
        marker_ts = m.ts
        state["used_marker"] = True
        state["local"] = state["local"] or m.utc is None
        pos = next_start + 1
        line += 1
    ids = np.concatenate(snap) if snap else np.array([], dtype="int64")
    ts = pd.DatetimeIndex([ts_of[int(i)] for i in np.unique(ids)]).as_unit("ns") if len(ids) else None
    order = {int(i): j for j, i in enumerate(np.unique(ids))}
    return pd.DataFrame(
        {
            "ts": ts[[order[int(i)] for i in ids]]
            if ts is not None
            else pd.Series([], dtype="datetime64[ns, UTC]"),
            "line_no": np.concatenate(line_nos) if line_nos else np.array([], dtype="int64"),
            "field": pd.Series(fields, dtype="object"),
            "kib": pd.to_numeric(pd.Series(values, dtype="object")).astype("float64"),
        }
    )


def _split_lines(
    seg: str, first: int, member: str, state: dict, warnings: list[ParseWarning]
) -> tuple[tuple[list[str], list[str]], np.ndarray]:
    """The slow path for a segment holding blank or odd lines: one line at a time."""
    fields, values, nos = [], [], []
    for i, line in enumerate(seg.split("\n")):
        if not line.strip():
            continue
        m = _ROW.match(line)
        if m:
            fields.append(m.group(1))
            values.append(m.group(2))
            nos.append(first + i)
            state["seen_row"] = True
        elif not state["seen_row"]:
            raise ParseError(member, first + i, line, "not a /proc/meminfo line")
        else:
            warnings.append(ParseWarning(first + i, "odd-line", f"not 'Field: value': {line[:80]!r}"))
    return (fields, values), np.asarray(nos, dtype="int64")


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
