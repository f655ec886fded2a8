"""Parse Linux ``vmstat`` interval reports (procps / procps-ng) into one row per report line.

Accepts:
    ``vmstat N [COUNT]`` from procps 3.2 (no ``st`` column) through procps-ng 4 (``gu`` column in
    wide mode); ``-t`` (two timestamp columns ``YYYY-MM-DD HH:MM:SS``, zone name at the end of the
    column header); ``-w`` wide and extra-wide (``--procs--`` banner); ``-a`` (``inact``/``active``
    instead of ``buff``/``cache``); ``-S k|K|m|M`` (the output does not say which unit was used: pass
    ``unit=`` when the command line is known, else values are taken as KiB, vmstat's default);
    headers repeated within a run; trailing TABs and blank lines; ``TS`` (pt-stalk, Casebook
    collector) and OSWatcher ``zzz ***`` marker lines before each run. BSD vmstat (``r b w avm fre``)
    and the ``-d``/``-s``/``-m`` reports are a different layout and are not accepted.

Sample input (``vmstat -t 1 3``, procps-ng 4.0.2, Debian 12)::

    procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
     r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
    56  0      0 23676192  19356 623912    0    0  2133  6444  570 1646 16  6 77  1  0 2026-11-22 12:27:06
    48  0      0 23676192  19356 623912    0    0    36     4 1296 26064 82 16  2  0  0 2026-11-22 12:27:07
    65  0      0 23676192  19356 623912    0    0     0     0 1094 26051 86 13  1  0  0 2026-11-22 12:27:08

Output: frame ``vmstat``, one row per report line:
    ``ts`` datetime64[ns, UTC]; ``line_no`` int64 (1-based line in the member); ``since_boot`` bool
    (the first report of each vmstat run averages since boot: keep it, leave it out of rates);
    ``r``, ``b`` (processes runnable / in uninterruptible sleep); ``swpd_kib free_kib buff_kib
    cache_kib`` or ``inact_kib active_kib`` (KiB); ``si so`` (KiB/s swapped in / out); ``bi bo``
    (blocks/s read / written); ``in cs`` (interrupts, context switches per second); ``us sy id wa st
    gu`` (percent of CPU time). Absent columns are absent, not zero. A column vmstat prints that is
    not listed here is kept under its own (snake_case) name with an ``unknown-column`` warning.
    ``ts_source``: ``line`` (``-t``), ``marker`` (TS/zzz marker time + row index x interval) or
    ``inferred`` (``clock.start_local`` + row index x interval, interval = ``clock.interval_s`` or 1 s).
    Meta: ``columns`` (vmstat's spelling, in order), ``variant`` (e.g. ``procps-ng wide -a -t``),
    ``timezone`` (``-t`` header zone name), ``memory_unit``, ``utc_offset_s`` (from a ``TS`` marker).
    ``ts_is_local`` is True for inferred times, ``zzz`` markers and ``-t`` in a zone other than UTC.

Warnings: ``unreadable-line`` (a line that is neither a header, a marker nor a report row),
``short-row`` / ``long-row`` (wrong field count), ``bad-number``, ``bad-timestamp``,
``unknown-column``, ``no-start-time`` (no marker, no ``-t``, no start hint: times count from the
Unix epoch), ``empty``.

Errors: ``ParseError`` when a report row comes before any vmstat column header, when the text has
no vmstat header at all, or the header is a BSD/``-d`` layout.

>>> text = '''procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
...  r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
... 56  0      0 23676192  19356 623912    0    0  2133  6444  570 1646 16  6 77  1  0 2026-11-22 12:27:06
... 48  0      0 23676192  19356 623912    0    0    36     4 1296 26064 82 16  2  0  0 2026-11-22 12:27:07'''
>>> src = parse(text.splitlines(), member="vmstat", clock=ClockHints())
>>> src.main[["ts", "line_no", "since_boot", "r", "cs", "id"]].to_string(index=False)
'                       ts  line_no  since_boot  r    cs  id\\n2026-11-22 12:27:06+00:00        3        True 56  1646  77\\n2026-11-22 12:27:07+00:00        4       False 48 26064   2'
>>> src.clock.value, src.ts_is_local, src.meta["variant"]
('per-line', False, 'procps-ng -t')
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parsers.base import (
    CHUNK_CHARS,
    DEFAULT_INTERVAL_S,
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    empty_frame,
    parse_marker,
    raw_blocks,
    safe_name,
    start_or_epoch,
    text_chunks,
    utc_offset,
)
from parsers.sensitive import SYSTEM

FORMAT = "vmstat"
TRAITS = FormatTraits(
    short_lines=True,
    unsigned=True,
    capped_pct=True,
    blocks=Blocks.NONE,
    markers=False,
    timed_rows="timestamp",
)

#: vmstat's column spelling -> our column (names carry units; percent and per-second columns keep
#: vmstat's own short names, as documented in vmstat(8) and parsers/__init__.py).
COLUMN_MAP: dict[str, str] = {
    "r": "r",
    "b": "b",
    "swpd": "swpd_kib",
    "free": "free_kib",
    "buff": "buff_kib",
    "cache": "cache_kib",
    "inact": "inact_kib",
    "active": "active_kib",
    "si": "si",
    "so": "so",
    "bi": "bi",
    "bo": "bo",
    "in": "in",
    "cs": "cs",
    "us": "us",
    "sy": "sy",
    "id": "id",
    "wa": "wa",
    "st": "st",
    "gu": "gu",
}
#: Memory columns scaled by ``-S`` (vmstat(8): k=1000, K=1024, m=1000000, M=1048576 bytes).
MEMORY_COLUMNS = frozenset({"swpd", "free", "buff", "cache", "inact", "active"})
#: ``-S`` unit letter -> factor to KiB.
UNIT_TO_KIB: dict[str, float] = {"k": 1000 / 1024, "K": 1.0, "m": 1_000_000 / 1024, "M": 1024.0}
#: Zone names vmstat -t prints for UTC (strftime %Z).
UTC_ZONES = frozenset({"UTC", "GMT", "Z", "UCT"})
#: End of the ``free`` heading: column 19 in the default layout (6-wide memory columns), 35 with
#: ``-w`` (12-wide); anything past 24 is the wide layout.
WIDE_FREE_END = 24
#: Field count of the two ``-t`` columns (date, time).
TIMESTAMP_FIELDS = 2

# A report row starts with a digit after optional blanks; anything else is a header, marker, blank or
# odd line. Searched in "\n" + chunk: a pattern that starts with a literal scans twice as fast as `^`.
_ODD_LINE = re.compile(r"\n([ \t]*(?:[^\d \t\n][^\n]*)?)(?=\n)")
_BANNER = re.compile(r"^\s*-*procs\b")


@dataclass(frozen=True, slots=True)
class _Layout:
    columns: tuple[str, ...]  # vmstat's spelling
    timezone: str | None  # -t zone name, None without -t
    wide: bool  # -w: memory columns 12 wide instead of 6

    @property
    def fields(self) -> int:
        return len(self.columns) + (TIMESTAMP_FIELDS if self.timezone is not None else 0)


def _is_column_header(tokens: list[str]) -> bool:
    return len(tokens) >= 4 and tokens[0] == "r" and tokens[1] == "b" and "free" in tokens


def sniff(head: list[str]) -> bool:
    """True when ``head`` (first lines, no newlines) holds a Linux vmstat column header ``r b swpd free``.

    BSD vmstat (``r b w avm fre``) and ``vmstat -d`` are rejected.

    >>> sniff(["TS 1776790303.0 2026-04-21 16:51:43", " r  b   swpd   free   buff  cache   si   so"])
    True
    >>> sniff([" r b w     avm    fre   flt  re  pi  po    fr  sr ad0 da0   in   sy   cs us sy id"])
    False
    """
    for line in head:
        tokens = line.split()
        if _is_column_header(tokens) and ("swpd" in tokens or "si" in tokens):
            return True
    return False


class _State:
    """What carries from one chunk to the next."""

    def __init__(self) -> None:
        self.layout: _Layout | None = None
        self.layouts: list[_Layout] = []
        self.markers: list[TsMarker] = []
        self.run = -1  # index of the current vmstat run (-1: none yet)
        self.new_run_pending = True  # a marker (or the file start) was seen and no row since
        self.warnings: list[ParseWarning] = []
        self.frames: list[pd.DataFrame] = []
        self.banner = False


def _header(state: _State, tokens: list[str], line_no: int, line: str, member: str) -> None:
    """A column header line: set the layout; open a new run when it follows a marker (or the start)."""
    if "w" in tokens[:3] and ("avm" in tokens or "fre" in tokens):
        raise ParseError(member, line_no, line, "BSD vmstat layout (r b w avm fre) is not supported")
    timezone = None
    columns = tokens
    last = tokens[-1]
    # Zone names are upper case (UTC, PDT, CEST) or numeric (+03); vmstat's columns are lower case.
    if last not in COLUMN_MAP and (state.banner or last.isupper() or last[:1] in "+-"):
        # -t: the header ends with the zone name over the two timestamp columns.
        timezone, columns = last, tokens[:-1]
    layout = _Layout(tuple(columns), timezone, line.find("free") + len("free") > WIDE_FREE_END)
    if layout not in state.layouts:
        state.layouts.append(layout)
        for col in columns:
            if col not in COLUMN_MAP:
                state.warnings.append(
                    ParseWarning(line_no, "unknown-column", f"column {col!r} kept as {safe_name(col)!r}")
                )
    state.layout = layout
    if state.new_run_pending:
        state.run += 1
        state.new_run_pending = False
    state.banner = False


def _read_rows(
    data: str, layout: _Layout, line_nos: np.ndarray, state: _State
) -> tuple[pd.DataFrame, np.ndarray]:
    """Type one run of report rows under ``layout``; drop (and warn about) rows that cannot be read."""
    n_fields = layout.fields
    names = [f"f{i}" for i in range(n_fields)]
    dtypes: dict[str, type] = {}
    if layout.timezone is not None:
        dtypes = {names[-2]: str, names[-1]: str}
    try:
        raw = pd.read_csv(
            io.BytesIO(data.encode()),
            sep=r"\s+",
            header=None,
            names=names,
            dtype=dtypes,
            engine="c",
            na_filter=True,
        )
    except pd.errors.ParserError:
        # A row with too many fields: fall back to a split per line (rare) to name the culprits.
        rows = [ln.split() for ln in data.split("\n")[: len(line_nos)]]
        keep = np.array([len(r) == n_fields for r in rows], dtype=bool)
        for i in np.flatnonzero(~keep):
            code = "long-row" if len(rows[i]) > n_fields else "short-row"
            state.warnings.append(
                ParseWarning(
                    int(line_nos[i]), code, f"expected {n_fields} fields, found {len(rows[i])}: row skipped"
                )
            )
        good = [r for r, k in zip(rows, keep, strict=True) if k]
        raw = pd.DataFrame(good, columns=names)
        line_nos = line_nos[keep]
        for col in names[: len(layout.columns)]:
            raw[col] = pd.to_numeric(raw[col], errors="coerce") if len(raw) else raw[col]
        # to_numeric(coerce) turns a bad token into NaN: the check below warns about it.
        return _check_rows(raw, layout, line_nos, state, names)
    if len(raw) != len(line_nos):
        raise AssertionError(f"vmstat: {len(raw)} rows for {len(line_nos)} lines")  # pragma: no cover
    return _check_rows(raw, layout, line_nos, state, names)


def _check_rows(
    raw: pd.DataFrame, layout: _Layout, line_nos: np.ndarray, state: _State, names: list[str]
) -> tuple[pd.DataFrame, np.ndarray]:
    bad = np.zeros(len(raw), dtype=bool)
    n_cols = len(layout.columns)
    for name in names[:n_cols]:
        col = raw[name]
        if not pd.api.types.is_numeric_dtype(col.dtype):
            num = pd.to_numeric(col, errors="coerce")
            wrong = (num.isna() & col.notna()).to_numpy()
            for i in np.flatnonzero(wrong & ~bad):
                state.warnings.append(
                    ParseWarning(
                        int(line_nos[i]), "bad-number", f"{col.iloc[i]!r} is not a number: row skipped"
                    )
                )
            bad |= wrong
            raw[name] = num
    short = raw[names].isna().any(axis=1).to_numpy() & ~bad
    for i in np.flatnonzero(short):
        found = int(raw.iloc[i][names].notna().sum())
        state.warnings.append(
            ParseWarning(
                int(line_nos[i]), "short-row", f"expected {len(names)} fields, found {found}: row skipped"
            )
        )
    bad |= short
    if bad.any():
        raw = raw.loc[~bad].reset_index(drop=True)
        line_nos = line_nos[~bad]
    return raw, line_nos


def _chunk_frame(first: int, text: str, state: _State, member: str) -> None:
    """Cut one chunk into runs of report rows between odd lines and type each run.

    Only the odd lines (headers, markers, blanks: one in ~20 in a plain capture) are looked at in
    Python; the report rows go to one ``read_csv`` call per layout.
    """
    # Per run of report rows: text slice, first line, line count, layout index, marker index, run.
    pieces: list[tuple[int, int, int, int, int, int, int]] = []
    pos = 0
    line_no = first
    end = len(text)
    header_cache: dict[str, _Layout] = {}

    def take(a: int, b: int, line_no: int) -> int:
        """Report rows text[a:b] (first line ``line_no``) join the pieces; returns the next line."""
        n = text.count("\n", a, b)
        if state.layout is None:
            raise ParseError(
                member, line_no, text[a : text.find("\n", a)], "report row before any vmstat header"
            )
        pieces.append(
            (a, b, line_no, n, state.layouts.index(state.layout), len(state.markers) - 1, state.run)
        )
        state.new_run_pending = False
        return line_no + n

    for m in _ODD_LINE.finditer("\n" + text):
        start = m.start()  # = offset of the odd line in `text` (the "\n" prefix shifts by one)
        if start > pos:
            line_no = take(pos, start, line_no)
        line = m.group(1)
        cached = header_cache.get(line)
        if cached is not None and not state.new_run_pending:
            state.layout = cached  # a repeated header inside a run: nothing new
            state.banner = False
        else:
            stripped = line.strip()
            if stripped:
                marker = parse_marker(stripped) if stripped[:2] in ("TS", "zz") else None
                tokens = stripped.split()
                if marker is not None:
                    state.markers.append(marker)
                    state.new_run_pending = True
                elif _BANNER.match(line):
                    state.banner = "timestamp" in line
                elif _is_column_header(tokens):
                    _header(state, tokens, line_no, line, member)
                    header_cache[line] = state.layout
                elif tokens[0] == "r" and "b" in tokens[:3]:
                    raise ParseError(member, line_no, line, f"not a Linux vmstat header: {stripped[:60]!r}")
                else:
                    state.warnings.append(
                        ParseWarning(line_no, "unreadable-line", f"skipped: {stripped[:80]!r}")
                    )
        line_no += 1
        pos = m.end()  # the lookahead left the odd line's "\n" unconsumed: +1 for it, -1 for the prefix
    if pos < end:
        take(pos, end, line_no)
    if not pieces:
        return
    table = np.array([p[2:] for p in pieces], dtype=np.int64)  # first line, count, layout, marker, run
    for lay_idx in np.unique(table[:, 2]):
        sel = np.flatnonzero(table[:, 2] == lay_idx)
        layout = state.layouts[int(lay_idx)]
        data = "".join(text[pieces[i][0] : pieces[i][1]] for i in sel)
        counts = table[sel, 1]
        starts = np.repeat(table[sel, 0] - np.cumsum(counts) + counts, counts)
        line_nos = starts + np.arange(int(counts.sum()), dtype=np.int64)
        marker_idx = np.repeat(table[sel, 3], counts)
        run_idx = np.repeat(table[sel, 4], counts)
        raw, kept = _read_rows(data, layout, line_nos, state)
        keep = np.isin(line_nos, kept) if len(kept) != len(line_nos) else slice(None)
        frame = pd.DataFrame({"line_no": kept, "_marker": marker_idx[keep], "_run": run_idx[keep]})
        for i, col in enumerate(layout.columns):
            frame[COLUMN_MAP.get(col, safe_name(col))] = raw[f"f{i}"].to_numpy()
        if layout.timezone is not None:
            n = len(layout.columns)
            frame["_line_ts"] = _timestamps(raw[f"f{n}"], raw[f"f{n + 1}"])
            frame["_utc_zone"] = layout.timezone.upper() in UTC_ZONES
        state.frames.append(frame)


def _timestamps(dates: pd.Series, times: pd.Series) -> np.ndarray:
    """``YYYY-MM-DD`` + ``HH:MM:SS`` columns -> datetime64[ns] (NaT when unreadable), vectorised:
    dates repeat (factorised, parsed once each); times are cut by character position."""
    codes, uniques = pd.factorize(dates.astype(str))
    day = pd.to_datetime(pd.Series(uniques), format="%Y-%m-%d", errors="coerce").to_numpy()[codes]
    t = times.astype(str)
    ok = (t.str.len() == len("HH:MM:SS")).to_numpy()
    raw = np.frombuffer("".join(t.where(ok, "00:00:00")).encode("ascii", "replace"), dtype=np.uint8)
    digits = raw.reshape(-1, len("HH:MM:SS")).astype(np.int64) - ord("0")
    seconds = (digits[:, 0] * 10 + digits[:, 1]) * 3600 + (digits[:, 3] * 10 + digits[:, 4]) * 60
    seconds += digits[:, 6] * 10 + digits[:, 7]
    valid = (
        ok
        & (digits[:, [0, 1, 3, 4, 6, 7]] >= 0).all(axis=1)
        & (digits[:, [0, 1, 3, 4, 6, 7]] <= 9).all(axis=1)
    )
    out = day + seconds.astype("timedelta64[s]").astype("timedelta64[ns]")
    out[~valid] = np.datetime64("NaT")
    return out


def _variant(layouts: list[_Layout], unit: str | None) -> str:
    cols = set().union(*(set(lay.columns) for lay in layouts)) if layouts else set()
    # `st` arrived in procps 3.2.7 and stayed in procps-ng; `gu` in procps-ng 4.0.
    parts = ["procps-ng 4" if "gu" in cols else ("procps-ng" if "st" in cols else "procps (no st)")]
    if any(lay.wide for lay in layouts):
        parts.append("wide")
    if "inact" in cols:
        parts.append("-a")
    zones = [lay.timezone for lay in layouts if lay.timezone is not None]
    if zones:
        parts.append("-t" if zones[0].upper() in UTC_ZONES else f"-t ({zones[0]} times)")
    if unit is not None:
        parts.append(f"-S {unit}")
    return " ".join(parts)


def _meta(state: _State, unit: str | None, interval: float) -> dict[str, object]:
    """The source's ``meta``: tool, columns, variant, memory unit, interval, zone and UTC offset."""
    meta: dict[str, object] = {
        "tool": "vmstat",
        "columns": list(dict.fromkeys(c for lay in state.layouts for c in lay.columns)),
        "variant": _variant(state.layouts, unit),
        "memory_unit": "KiB" if unit is None else f"-S {unit} (converted to KiB)",
        "interval_s": interval,
    }
    zones = [lay.timezone for lay in state.layouts if lay.timezone is not None]
    if zones:
        meta["timezone"] = zones[0]
    offset = utc_offset(state.markers)
    if offset is not None:
        meta["utc_offset_s"] = offset
    return meta


def _empty(state: _State, member: str, meta: dict[str, object]) -> ParsedSource:
    """The source of a member without a report row: empty, or ``ParseError`` when no line of it was
    vmstat's (text, but not vmstat output)."""
    warnings = state.warnings
    unreadable = [w for w in warnings if w.code == "unreadable-line"]
    if not state.layouts and unreadable:
        first = unreadable[0]
        raise ParseError(
            member, first.line_no, first.message, "no vmstat header (procs ... r b swpd ...) found"
        )
    if not state.layouts:
        warnings.append(ParseWarning(0, "empty", "no vmstat header or report row"))
    frame = empty_frame(since_boot="bool", ts_source="object")
    return ParsedSource(FORMAT, member, {"vmstat": frame}, Clock.INFERRED, warnings, meta, True)


def _times(
    df: pd.DataFrame, state: _State, clock: ClockHints, step: pd.Timedelta
) -> tuple[pd.Series, np.ndarray, Clock, bool]:
    """Each row's time (naive, NaT where unreadable), where it came from (``line``, ``marker`` or
    ``inferred``), the source's clock and whether its times are the server's wall clock: a ``-t``
    row's own time; else the marker before it plus ``step`` per row after it (rows before the first
    marker counted back from it); else ``clock``'s start (or the epoch, with a warning) plus
    ``step`` per row. Takes the helper columns ``_marker``, ``_line_ts``, ``_utc_zone`` out of ``df``."""
    marker_idx = df.pop("_marker").to_numpy()
    ts = pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns]")
    source = np.full(len(df), "inferred", dtype=object)
    ts_is_local = True
    clock_kind = Clock.INFERRED
    if "_line_ts" in df:
        line_ts = df.pop("_line_ts")
        utc_zone = df.pop("_utc_zone").to_numpy(dtype=object)
        per_line = pd.notna(utc_zone)  # rows of a -t layout (others have NaN here after concat)
        ts.loc[df.index[per_line]] = line_ts.loc[df.index[per_line]]
        source[per_line] = "line"
        if per_line.any():
            clock_kind = Clock.PER_LINE
            ts_is_local = not bool(utc_zone[per_line].astype(bool).all())
    if state.markers:
        rank = pd.Series(marker_idx).groupby(marker_idx).cumcount().to_numpy()
        marked = (marker_idx >= 0) & (source != "line")
        if marked.any():
            base = pd.Series([m.ts.tz_localize(None) for m in state.markers], dtype="datetime64[ns]")
            when = base.to_numpy()[marker_idx[marked]] + rank[marked] * step.to_timedelta64()
            ts.loc[df.index[marked]] = when
            source[marked] = "marker"
            if clock_kind is Clock.INFERRED:
                clock_kind = Clock.TS_MARKER
                ts_is_local = any(m.utc is None for m in state.markers)
        before = (marker_idx < 0) & (source != "line")
        if before.any():
            # Rows before the first marker: count back from it so the whole member keeps one clock.
            first = state.markers[0].ts.tz_localize(None)
            ts.loc[df.index[before]] = first - step * np.arange(int(before.sum()), 0, -1)
    rest = source == "inferred"
    if rest.any() and not state.markers:
        start = start_or_epoch(
            clock, state.warnings, "no marker, no -t column and no start time: times count from 1970"
        )
        ts.loc[df.index[rest]] = start + step * np.arange(int(rest.sum()))
    return ts, source, clock_kind, ts_is_local


def parse(
    stream: Iterable[str] | io.TextIOBase,
    *,
    member: str,
    clock: ClockHints,
    unit: str | None = None,
) -> ParsedSource:
    """Parse a vmstat capture (see the module docstring for variants, columns and units).

    ``stream``: text lines (with or without newlines) or a text file object. ``unit``: the ``-S``
    letter when the command line is known (``k``, ``K``, ``m``, ``M``); None = KiB (vmstat's default).
    Raises ``ParseError`` (with the line number) when the member is not Linux vmstat output.
    """
    if unit is not None and unit not in UNIT_TO_KIB:
        raise ValueError(f"unit must be one of {sorted(UNIT_TO_KIB)}, not {unit!r}")
    state = _State()
    for first, text in text_chunks(raw_blocks(stream, CHUNK_CHARS)):
        _chunk_frame(first, text, state, member)
    interval = clock.interval_s or DEFAULT_INTERVAL_S
    meta = _meta(state, unit, interval)
    warnings = state.warnings
    if not state.frames or not sum(len(f) for f in state.frames):
        return _empty(state, member, meta)
    df = pd.concat(state.frames, ignore_index=True, sort=False)
    df = df.sort_values("line_no", kind="stable", ignore_index=True)
    run = df.pop("_run").to_numpy()
    since_boot = np.ones(len(df), dtype=bool)
    since_boot[1:] = run[1:] != run[:-1]
    ts, source, clock_kind, ts_is_local = _times(df, state, clock, pd.to_timedelta(interval, unit="s"))
    bad_ts = ts.isna().to_numpy()
    for i in np.flatnonzero(bad_ts):
        warnings.append(
            ParseWarning(int(df["line_no"].iat[i]), "bad-timestamp", "timestamp not readable: row skipped")
        )
    df.insert(0, "ts", ts.dt.tz_localize("UTC"))
    df.insert(2, "since_boot", since_boot)
    df["ts_source"] = source
    if bad_ts.any():
        df = df.loc[~bad_ts].reset_index(drop=True)
    if unit is not None and unit != "K":
        factor = UNIT_TO_KIB[unit]
        for col in MEMORY_COLUMNS:
            name = COLUMN_MAP[col]
            if name in df:
                df[name] = df[name] * factor
    df["line_no"] = df["line_no"].astype("int64")
    warnings.sort(key=lambda w: w.line_no)
    return ParsedSource(FORMAT, member, {"vmstat": df}, clock_kind, warnings, meta, ts_is_local)


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
