"""Parse ``/proc/vmstat`` snapshots (pt-stalk ``-procvmstat``) into kernel memory counters with rates.

Accepts:
    repeated ``cat /proc/vmstat`` after ``TS`` markers (pt-stalk: ``(echo $ts; cat /proc/vmstat)``
    every second) or bare snapshots (a new one at each ``nr_free_pages``); any kernel's field set
    (``allocstall`` before 4.8, ``allocstall_normal``/``_movable``... after; ``pgscan_direct``
    per zone before 4.8; ``thp_*`` with transparent huge pages; ``compact_stall``).

Sample input (pt-stalk 3.7.1 ``-procvmstat``, kernel 5.14)::

    TS 1776790303.009325313 2026-04-21 16:51:43
    nr_free_pages 26130399
    nr_zone_inactive_anon 4672
    pgscan_direct 0
    allocstall_normal 0
    compact_stall 0

Output:
    ``procvmstat`` (long: one row per field per snapshot): ``ts`` datetime64[ns, UTC], ``line_no``
    int64, ``field`` category (the kernel's name), ``value`` float64 (pages for ``nr_*`` gauges,
    events since boot for the counters), ``per_s`` float64 (per second since the previous snapshot;
    NaN on the first and where the value fell: meaningful for counters only).

Warnings: ``no-start-time``, ``assumed-interval``, ``odd-line`` (a line that is not ``name number``).

Errors: ``ParseError`` (member, line) when the first meaningful line is neither a marker nor
``name number``, or a marker is unreadable.

Source: kernel mm/vmstat.c (``vmstat_text``); Documentation/admin-guide/mm/transhuge.rst.

>>> src = parse(["TS 1776790303.0 2026-04-21 16:51:43", "nr_free_pages 10", "allocstall_normal 5",
...   "TS 1776790305.0 2026-04-21 16:51:45", "nr_free_pages 8", "allocstall_normal 25"],
...   member="v", clock=ClockHints())
>>> src.main[["field", "per_s"]].values.tolist()[2:]
[['nr_free_pages', nan], ['allocstall_normal', 10.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from parsers import _counters
from parsers.base import (
    Blocks,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    raw_blocks,
    text_chunks,
)
from parsers.sensitive import SYSTEM

FORMAT = "procvmstat"
TRAITS = FormatTraits(short_lines=True, unsigned=True, capped_pct=False, blocks=Blocks.ROWS, markers=True)

_ROW = re.compile(r"^([a-z][a-z0-9_]*) (\d+)$")
_FIRST = re.compile(r"^nr_free_pages \d+$", re.M)
#: Fields a /proc/vmstat head has in every kernel since 2.6 (one of them must be there).
_WELL_KNOWN = {"nr_free_pages", "pgpgin", "pgfault", "pswpin", "nr_dirty"}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds ``name number`` lines of /proc/vmstat (``nr_free_pages``, ``pgfault`` ...)."""
    names = {m.group(1) for line in head if (m := _ROW.match(line.strip()))}
    return len(names) >= 5 and bool(names & _WELL_KNOWN)


def _chunk(text: str, base: int, member: str, warnings: list[ParseWarning]):
    """(markers, snapshot index per row, line numbers, names, values) of a chunk: markers found by
    regex and blanked (numbering kept), the rest read at once by pandas' C reader; line by line
    when it holds an odd line. Without markers a snapshot starts at each ``nr_free_pages``."""
    found = _counters.find_markers(text)
    markers = _counters.markers_of(
        [m.group(0) for m in found], member, base, _counters.marker_lines(text, found)
    )
    try:
        df, rows, starts = _counters.read_rows(
            text, found, sep=" ", names=["f", "v"], dtype={"f": "category"}, on_bad_lines="error"
        )
        if df["v"].dtype == object:
            raise ValueError("a value is not a number")
        ok = df["f"].notna().to_numpy()
        if np.isnan(df["v"].to_numpy(dtype="float64")[ok]).any():
            raise ValueError("a value is missing")
        idx = rows[ok]
        names, vals = df["f"].array[ok], df["v"].to_numpy(dtype="float64")[ok]  # names: a Categorical
    except (ValueError, pd.errors.ParserError):
        idx, names, vals = _slow(text, base, member, warnings)
        starts = _counters.marker_lines(text, found)
    if found:
        snap = np.searchsorted(starts, idx, side="right") - 1
        if (snap < 0).any():
            markers.insert(0, None)
            snap = snap + 1
    else:
        firsts = np.flatnonzero(np.asarray(names, dtype=object) == "nr_free_pages")
        snap = np.maximum(np.searchsorted(firsts, np.arange(len(names)), side="right") - 1, 0)
        markers = [None] * (int(snap.max()) + 1 if len(snap) else 0)
    return markers, snap, idx + base, names, vals


def _slow(text: str, base: int, member: str, warnings: list[ParseWarning]):
    offsets, names, values = [], [], []
    for i, line in enumerate(text.split("\n")):
        if not line.strip() or line.startswith(("TS ", "zzz ")):
            continue
        m = _ROW.match(line.strip())
        if m:
            offsets.append(i)
            names.append(m.group(1))
            values.append(float(m.group(2)))
        elif not names:
            raise ParseError(member, base + i, line, "not /proc/vmstat: expected 'name number'")
        else:
            warnings.append(ParseWarning(base + i, "odd-line", f"not 'name number': {line[:80]!r}"))
    return (
        np.asarray(offsets, dtype="int64"),
        np.asarray(names, dtype=object),
        np.asarray(values, dtype="float64"),
    )


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read /proc/vmstat snapshots into the long ``procvmstat`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    markers, snap_of, lines, fields, values = [], [], [], [], []
    for base, text in text_chunks(raw_blocks(stream), _counters.cut_at_marker):
        chunk_markers, snap, line_no, names, vals = _chunk(text, base, member, warnings)
        snap_of.append(snap + len(markers))
        markers += chunk_markers
        lines.append(line_no)
        fields.append(names)
        values.append(vals)
    fields = union_categoricals([pd.Categorical(f) for f in fields]) if fields else pd.Categorical([])
    _counters.forget()
    frame, times = _counters.finish(markers, snap_of, lines, fields, values, clock, warnings)
    new = (
        "allocstall_* per zone (kernel >= 4.8)"
        if any(f.startswith("allocstall_") for f in frame["field"].cat.categories)
        else "allocstall (kernel < 4.8)"
    )
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"procvmstat": frame},
        clock=times.clock,
        warnings=warnings,
        meta={"variant": f"/proc/vmstat, {len(markers)} snapshots, {frame['field'].nunique()} fields, {new}"},
        ts_is_local=times.ts_is_local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
