"""Machinery shared by the sysstat parsers (``parsers/mpstat.py``, ``parsers/iostat.py``).

The sysstat banner (``Linux <kernel> (<host>) <date> _<arch>_ (<n> CPU)``) and its date forms
(``MM/DD/YY[YY]``, ``DD/MM/YYYY``, ``DD.MM.YYYY``, ISO), times of day (24 h, 12 h AM/PM, epoch
seconds), iostat ``-t`` stamps, the choice of a report clock (:func:`resolve_times`), pdsh/clush
``host: `` prefixes, and :class:`SysstatReader`: the streaming state both parsers share (banners,
markers, reports, sections of rows waiting to be typed, capped line warnings) with the fast table
reader (:func:`read_table`, pandas' C reader) and the careful one (:func:`to_floats`).

Source: sysstat ``common.c`` (banner, ``S_TIME_FORMAT``), ``mpstat.c``, ``iostat.c`` (12.6).
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers.base import (
    Clock,
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    empty_frame,
    parse_marker,
    safe_name,
    snapshot_times,
    to_number,
    with_newlines,
)

#: ``Linux 5.14.0-611 (host) \t04/21/2026 \t_x86_64_\t(64 CPU)``; sysstat 7 stops after the date.
BANNER_RE = re.compile(
    r"^Linux\s+(?P<kernel>\S+)\s+\((?P<host>[^)]*)\)\s+(?P<date>\S+)"
    r"(?:\s+_(?P<arch>\S+)_)?(?:\s+\((?P<ncpu>\d+)\s+CPU\))?"
)
#: pdsh / clush write ``host: `` before every line of a remote command's output.
HOST_PREFIX_RE = re.compile(r"^(?P<host>[A-Za-z0-9][\w.-]*): (?P<rest>.*)$")
_DATE_SLASH = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})$")
_DATE_DOT = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{2}|\d{4})$")
_DATE_ISO = re.compile(r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$")
#: A time of day: 24 h, or 12 h with AM/PM, then the zone abbreviation some locales' ``%X`` adds (en_IN:
#: ``12:38:33 PM IST``); the zone is not used (IST is India, Ireland or Israel): the time stays local.
_TOD = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2})(?:\s*([AaPp][Mm]))?(?:\s+[A-Z]{2,5})?$")
EPOCH_RE = re.compile(r"^\d{9,11}$")

#: Two-digit years (``02/29/12``, sysstat 7): sysstat has existed since 1999, so 70-99 is 19xx.
TWO_DIGIT_YEAR_PIVOT = 70
#: A time of day that falls back by more than this is the next day (midnight roll-over); a smaller
#: step back is a DST fall-back or clock adjustment, which must not add a day.
ROLLOVER_MIN_BACKSTEP_S = 12 * 3600
#: A date hint (marker wall clock, pt-stalk start) within this many days of a banner date picks its
#: day/month order.
DATE_HINT_TOLERANCE_DAYS = 1
#: Rows gathered before converting to typed columns: bounds memory on multi-GB members, and a
#: few MB of rows at a time reuse the same memory (one flush of 200,000 rows ran 10 % slower).
FLUSH_ROWS = 50_000
#: Stop listing individual bad lines after this many (one summary warning follows).
MAX_LINE_WARNINGS = 50
_EPOCH_DAY = pd.Timestamp("1970-01-01")


@dataclass(frozen=True, slots=True)
class Banner:
    """The sysstat first line: ``Linux <kernel> (<host>) <date> [_<arch>_] [(<n> CPU)]``."""

    line_no: int
    kernel: str
    host: str
    date_raw: str
    ncpu: int | None


def parse_banner(line: str, line_no: int = 0) -> Banner | None:
    """Read a sysstat banner line (any sysstat tool), or None.

    >>> parse_banner("Linux 5.14.0-611 (node0) \\t13.03.2026 \\t_x86_64_\\t(64 CPU)").ncpu
    64
    >>> parse_banner("Linux 2.6.18-194.el5 (dm02cel01) \\t02/29/12").date_raw
    '02/29/12'
    """
    m = BANNER_RE.match(line.strip())
    if not m:
        return None
    ncpu = int(m["ncpu"]) if m["ncpu"] else None
    return Banner(line_no, m["kernel"], m["host"], m["date"], ncpu)


def line_prefix(line: str) -> tuple[str, str | None]:
    """The prefix every line of the member carries, judged on its first non-blank ``line``:
    ``("host: ", "host")`` for pdsh/clush output, ``(" ", None)`` for a leading space, else
    ``("", None)``.

    >>> line_prefix("object3: Linux 3.13.0-76-generic (object3)  03/15/2016  _x86_64_    (4 CPU)")
    ('object3: ', 'object3')
    """
    m = HOST_PREFIX_RE.match(line.strip())
    if m and (m["rest"].startswith("Linux ") or parse_marker(m["rest"].strip())):
        return m["host"] + ": ", m["host"]
    if line.startswith(" ") and line.strip():
        return " ", None
    return "", None


def _year(y: str) -> int:
    v = int(y)
    if len(y) == 2:
        return 1900 + v if v >= TWO_DIGIT_YEAR_PIVOT else 2000 + v
    return v


def _ymd(y: int, m: int, d: int) -> pd.Timestamp | None:
    try:
        return pd.Timestamp(year=y, month=m, day=d)
    except ValueError:
        return None


def decide_date_order(raws: Iterable[str], hints: Iterable[pd.Timestamp]) -> tuple[str, bool]:
    """Day/month order of slash dates (``04/05/2026``): ``("MDY"|"DMY", ambiguous)``.

    A first field above 12 means DMY, a second above 12 means MDY (sysstat prints the locale's
    ``%x``: en_US is MM/DD, en_GB DD/MM). Otherwise a hint date (``TS``/``zzz`` wall clock, pt-stalk
    start) picks the order; failing that MDY is assumed and ``ambiguous`` is True when it mattered.

    >>> decide_date_order(["21/04/2026"], [])
    ('DMY', False)
    >>> decide_date_order(["04/05/2026"], [pd.Timestamp("2026-05-04 10:00")])
    ('DMY', False)
    >>> decide_date_order(["04/05/2026"], [])
    ('MDY', True)
    """
    pairs = []
    for raw in raws:
        m = _DATE_SLASH.match(raw)
        if m:
            pairs.append((int(m[1]), int(m[2]), _year(m[3])))
    if not pairs:
        return "MDY", False
    if any(a > 12 for a, _, _ in pairs):
        return "DMY", False
    if any(b > 12 for _, b, _ in pairs):
        return "MDY", False
    if all(a == b for a, b, _ in pairs):
        return "MDY", False
    tol = pd.Timedelta(days=DATE_HINT_TOLERANCE_DAYS)
    for hint in hints:
        day = hint.normalize()
        for a, b, y in pairs:
            mdy, dmy = _ymd(y, a, b), _ymd(y, b, a)
            near_mdy = mdy is not None and abs(mdy - day) <= tol
            near_dmy = dmy is not None and abs(dmy - day) <= tol
            if near_dmy and not near_mdy:
                return "DMY", False
            if near_mdy and not near_dmy:
                return "MDY", False
    return "MDY", True


@functools.lru_cache(maxsize=1024)  # every report of a day repeats its date
def parse_date(raw: str, order: str) -> pd.Timestamp | None:
    """A sysstat date (``MM/DD/YY[YY]``, ``DD/MM/YYYY`` per ``order``, ``DD.MM.YYYY``,
    ``YYYY-MM-DD``) as a naive midnight Timestamp, or None when unreadable."""
    m = _DATE_ISO.match(raw)
    if m:
        return _ymd(int(m[1]), int(m[2]), int(m[3]))
    m = _DATE_DOT.match(raw)
    if m:
        return _ymd(_year(m[3]), int(m[2]), int(m[1]))
    m = _DATE_SLASH.match(raw)
    if m:
        a, b, y = int(m[1]), int(m[2]), _year(m[3])
        return _ymd(y, a, b) if order == "MDY" else _ymd(y, b, a)
    return None


def tod_seconds(raw: str) -> int | None:
    """``HH:MM:SS`` or ``HH:MM:SS AM/PM`` as seconds after midnight, or None.

    >>> tod_seconds("12:05:00 AM"), tod_seconds("12:05:00 PM"), tod_seconds("03:14:20 PM")
    (300, 43500, 54860)
    >>> tod_seconds("12:38:33 PM IST")
    45513
    """
    m = _TOD.match(raw.strip())
    if not m:
        return None
    h, mi, s = int(m[1]), int(m[2]), int(m[3])
    if m[4]:
        h = h % 12 + (12 if m[4].upper() == "PM" else 0)
    if h > 23 or mi > 59 or s > 60:
        return None
    return h * 3600 + mi * 60 + s


@dataclass(slots=True)
class Report:
    """One sysstat report (a sample): where it starts and what says when it was taken.

    ``tod``: the row time as printed (``12:53:21``, ``03:14:20 PM`` or epoch seconds);
    ``stamp``: an iostat ``-t`` line (date and time, or ``Time: HH:MM:SS``).
    """

    run: int
    line_no: int
    marker: TsMarker | None
    tod: str | None = None
    stamp: str | None = None
    since_boot: bool = False


@dataclass(slots=True)
class TimeResult:
    """What :func:`resolve_times` decided: ``ts`` (int64 ns per report), the clock and notes."""

    ts_ns: np.ndarray
    clock: Clock
    ts_is_local: bool
    warnings: list[ParseWarning] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)


_STAMP_DT = re.compile(
    r"^(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4})[ T]+(?P<time>\d{1,2}:\d{2}:\d{2}(?:\s*[AaPp][Mm])?)"
    r"\s*(?P<tz>Z|[+-]\d{2}:?\d{2})?$"
)
_STAMP_TIME = re.compile(r"^Time:\s+(?P<time>\d{1,2}:\d{2}:\d{2}(?:\s*[AaPp][Mm])?)$")


def is_stamp(s: str) -> bool:
    """True for an iostat ``-t`` report line: ``04/21/2026 04:51:43 PM``, ``11/22/26 12:26:28``,
    ``2026-11-22T12:26:29+0000`` or sysstat 7's ``Time: 11:01:52``."""
    return bool(_STAMP_DT.match(s) or _STAMP_TIME.match(s))


def _offset_s(tz: str) -> int:
    if tz == "Z":
        return 0
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3600 + int(digits[2:4]) * 60)


def resolve_times(
    reports: list[Report], banners: list[Banner], clock: ClockHints, *, all_markers: list[TsMarker]
) -> TimeResult:
    """Give every report a timestamp, choosing the best clock the member offers.

    Order (DESIGN.md "Time: the hard part"): a fresh ``TS``/``zzz`` marker before every report;
    epoch-second rows (UTC); iostat ``-t`` stamps with a date (UTC when they carry an offset);
    time of day on the banner date with midnight roll-over; else inferred from the last marker,
    ``clock.start_local`` or the epoch, plus ``clock.interval_s`` per report.
    """
    warnings: list[ParseWarning] = []
    meta: dict[str, object] = {}
    n = len(reports)
    for mk in all_markers:
        if mk.utc_offset_s is not None:
            meta["utc_offset_s"] = mk.utc_offset_s
            break
    hints = [mk.wall for mk in all_markers if mk.wall is not None]
    if clock.start_local is not None:
        hints.append(clock.start_local)
    date_raws = [b.date_raw for b in banners]
    for r in reports:
        if r.stamp:
            m = _STAMP_DT.match(r.stamp)
            if m:
                date_raws.append(m["date"])
    order, ambiguous = decide_date_order(date_raws, hints)
    meta["date_order"] = order
    if ambiguous:
        line = banners[0].line_no if banners else 0
        warnings.append(
            ParseWarning(
                line, "ambiguous-date", f"date {date_raws[0]!r} could be DD/MM or MM/DD: MM/DD assumed"
            )
        )
    dates: list[pd.Timestamp | None] = []
    for b in banners:
        d = parse_date(b.date_raw, order)
        if d is None:
            warnings.append(
                ParseWarning(b.line_no, "unknown-date", f"banner date {b.date_raw!r} not understood")
            )
        dates.append(d)
    if dates and dates[0] is not None:
        meta["sysstat_date"] = dates[0].date().isoformat()
    out = np.zeros(n, dtype="int64")
    if n == 0:
        return TimeResult(out, Clock.HEADER_TIME, True, warnings, meta)

    # 1. A marker right before every report.
    if all(r.marker is not None for r in reports):
        for i, r in enumerate(reports):
            out[i] = r.marker.ts.value
        local = any(r.marker.utc is None for r in reports)
        return TimeResult(out, Clock.TS_MARKER, local, warnings, meta)

    # 2. Epoch seconds on the rows (mpstat in sysstat's test suite, ``expected.mpstat-U``).
    if all(r.tod is not None and EPOCH_RE.match(r.tod) for r in reports):
        for i, r in enumerate(reports):
            out[i] = int(r.tod) * 1_000_000_000
        return TimeResult(out, Clock.PER_LINE, False, warnings, meta)

    # 3. iostat -t stamps with a date.
    stamps = [_STAMP_DT.match(r.stamp) if r.stamp else None for r in reports]
    if all(stamps):
        is_utc = all(m["tz"] for m in stamps)
        for i, m in enumerate(stamps):
            d = parse_date(m["date"], order)
            sec = tod_seconds(m["time"])
            if d is None or sec is None:
                warnings.append(
                    ParseWarning(reports[i].line_no, "unknown-date", f"timestamp {reports[i].stamp!r}")
                )
                out[i] = out[i - 1] if i else 0
                continue
            v = d.value + sec * 1_000_000_000
            if m["tz"]:
                off = _offset_s(m["tz"])
                meta["utc_offset_s"] = off
                if is_utc:
                    v -= off * 1_000_000_000
            out[i] = v
        return TimeResult(out, Clock.PER_LINE, not is_utc, warnings, meta)

    # 4. Time of day (mpstat rows, iostat ``Time:``) on the banner date, rolling over midnight.
    tods = []
    for r in reports:
        raw = r.tod
        if raw is None and r.stamp:
            m = _STAMP_TIME.match(r.stamp)
            raw = m["time"] if m else None
        tods.append(tod_seconds(raw) if raw else None)
    if all(t is not None for t in tods):
        fallback = None
        if hints:
            fallback = hints[0].normalize()
        day_ns = 86_400 * 1_000_000_000
        prev_run, prev_tod, days = None, 0, 0
        for i, (r, sec) in enumerate(zip(reports, tods, strict=True)):
            if r.run != prev_run:
                prev_run, prev_tod, days = r.run, sec, 0
            elif sec < prev_tod - ROLLOVER_MIN_BACKSTEP_S:
                days += 1
            prev_tod = sec
            base = dates[r.run] if 0 <= r.run < len(dates) and dates[r.run] is not None else fallback
            if base is None:
                if "no-date" not in meta:
                    meta["no-date"] = True
                    warnings.append(
                        ParseWarning(
                            r.line_no, "no-start-time", "no banner date nor hint: times put on 1970-01-01"
                        )
                    )
                base = _EPOCH_DAY
            out[i] = base.value + days * day_ns + sec * 1_000_000_000
        meta.pop("no-date", None)
        return TimeResult(out, Clock.HEADER_TIME, True, warnings, meta)

    # 5. Nothing on the rows: the marker in force (or the start hint) plus the interval.
    st = snapshot_times([r.marker for r in reports], clock, warnings, interval_code="assumed-interval")
    return TimeResult(st.ts_ns, Clock.INFERRED, st.ts_is_local, warnings, meta)


class LineWarnings:
    """Collects per-line warnings, capping their number (one summary past ``MAX_LINE_WARNINGS``)."""

    def __init__(self) -> None:
        self.items: list[ParseWarning] = []
        self.dropped: dict[str, int] = {}

    def add(self, line_no: int, code: str, message: str) -> None:
        if len(self.items) < MAX_LINE_WARNINGS:
            self.items.append(ParseWarning(line_no, code, message))
        else:
            self.dropped[code] = self.dropped.get(code, 0) + 1

    def finish(self) -> list[ParseWarning]:
        out = list(self.items)
        for code, count in self.dropped.items():
            out.append(ParseWarning(0, code, f"{count} more lines with {code!r} not listed"))
        return out


def read_table(
    rows: list[str],
    ncols: int,
    *,
    skip: int = 0,
    text_cols: frozenset[int] = frozenset(),
    all_col: int | None = None,
) -> tuple[list[np.ndarray], np.ndarray] | None:
    """Fast path: read whitespace-separated ``rows`` (each ending in a newline) with pandas' C reader.

    Of columns ``skip..ncols-1`` returns (the ``text_cols`` as object arrays, the others as one float64
    matrix, ``all`` in ``all_col`` read as NaN); None when any row is odd (field count, a cell that is not
    a number), so the caller takes the careful row-by-row path. Decimal commas are read on purpose
    (``decimal=","``) when the first row shows them.
    """
    dec = "," if "," in rows[0] else "."
    if len(rows[0].split()) != ncols:
        return None  # the reader would take the first row's field count for every row
    used = range(skip, ncols)  # the leading columns (a time of day) are not converted at all
    try:
        df = pd.read_csv(
            io.BytesIO("".join(rows).encode("utf-8")),  # the C reader's own input: no text copy
            sep=r"\s+",
            header=None,
            engine="c",
            usecols=used,
            keep_default_na=False,
            na_values={all_col: ["all"]} if all_col is not None else [],
            decimal=dec,
            dtype={i: str for i in text_cols if i in used} or None,
        )
    except (ValueError, pd.errors.ParserError):
        return None
    if df.shape != (len(rows), len(used)):
        return None
    num = [i for i in range(skip, ncols) if i not in text_cols]
    if any(df[i].dtype.kind not in "fiu" for i in num):
        return None
    mat = df[num].to_numpy(dtype="float64")
    check = [j for j, i in enumerate(num) if i != all_col]
    if np.isnan(mat[:, check]).any():
        return None
    texts = [df[i].to_numpy(dtype=object) for i in range(skip, ncols) if i in text_cols]
    return texts, mat


def line_numbers(segs: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Expand ``(first line, row count, report)`` segments into per-row line numbers and reports."""
    if not segs:
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype="int64")
    a = np.asarray(segs, dtype="int64")
    counts = a[:, 1]
    offsets = np.arange(int(counts.sum()), dtype="int64") - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(a[:, 0], counts) + offsets, np.repeat(a[:, 2], counts)


def to_floats(
    cells: list[str],
    nrows: int,
    ncols: int,
    nos: np.ndarray,
    member: str,
    what: list[str],
    warns: LineWarnings,
) -> tuple[np.ndarray, np.ndarray]:
    """Careful path: ``cells`` (row-major strings) -> (float64 matrix, good-row mask) via
    ``base.to_number``; rows with a cell that is not a number are warned about and dropped."""
    line_nos = np.repeat(nos, ncols)
    try:
        flat = to_number(cells, member=member, column=",".join(what), line_nos=line_nos).to_numpy()
        return flat.reshape(nrows, ncols), np.ones(nrows, dtype=bool)
    except ParseError:
        s = pd.Series(cells, dtype="object").astype("string").str.replace(",", ".", regex=False)
        flat = pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        mat = flat.reshape(nrows, ncols)
        bad = np.isnan(mat) & (pd.Series(cells).str.len().to_numpy().reshape(nrows, ncols) > 0)
        bad_rows = bad.any(axis=1)
        for i in np.flatnonzero(bad_rows):
            j = int(np.flatnonzero(bad[i])[0])
            warns.add(int(nos[i]), "bad-number", f"{what[j]!r}: {cells[i * ncols + j]!r} is not a number")
        return mat, ~bad_rows


def finish_frame(
    parts: list[pd.DataFrame], head: list[str], ts_ns: np.ndarray, boot: np.ndarray
) -> pd.DataFrame:
    """Concatenate chunk frames (with ``_rep``), add ``ts``/``since_boot`` from their report, order
    by line."""
    if not parts:
        return empty_frame(since_boot="bool")
    df = pd.concat(parts, ignore_index=True)
    rep = df.pop("_rep").to_numpy()
    ts = pd.to_datetime(ts_ns[rep], unit="ns", utc=True)
    df.insert(0, "ts", ts)
    df.insert(2, "since_boot", boot[rep])
    if not df["line_no"].is_monotonic_increasing:
        df = df.sort_values("line_no", kind="stable", ignore_index=True)
    first = [c for c in ["ts", "line_no", "since_boot", *head] if c in df.columns]
    rest = [c for c in df.columns if c not in first]
    return df[first + rest]


# ---------------------------------------------------------------------------------------------
# The streaming reader both parsers share
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Bucket:
    """Rows of one section shape (kind + header columns) waiting to be typed; ``segs`` holds
    ``(first line, row count, report)`` runs of consecutive rows."""

    kind: str  # mpstat: cpu, intr, irq, skip; iostat: dev, cpu
    cols: tuple[str, ...]
    lead: int = 0  # mpstat: tokens before the CPU column (1 for 24 h / epoch, 2 for AM/PM)
    device_last: bool = False  # iostat -h of sysstat 12: ``Device`` is the last column
    rows: list[str] = field(default_factory=list)
    segs: list[tuple[int, int, int]] = field(default_factory=list)


#: A frame to build: name -> (bucket kind, leading columns in order, columns and dtypes of the frame
#: when the member has no such rows).
Shapes = dict[str, tuple[str, list[str], dict[str, str]]]


class SysstatReader:
    """A sysstat parser's state between lines: banners, markers, reports, the open section and the
    buckets of rows waiting to be typed. A parser subclasses it with ``line`` (every line its hot
    loop does not append as a row) and ``to_frame`` (type one bucket), and drives it::

        st = Reader(member)
        rest = st.lines(stream)
        for no, raw in rest:
            if <raw is a plain row of st.cur>: st.cur_rows.append(raw) ...
            else: st.line(no, raw)
        return st.result(FORMAT, clock, shapes)
    """

    tool = "sysstat"
    kinds: tuple[str, ...] = ()
    #: bucket kind -> key of ``meta["columns"]``
    seen_as: dict[str, str] = {}

    def __init__(self, member: str) -> None:
        self.member = member
        self.warns = LineWarnings()
        self.banners: list[Banner] = []
        self.reports: list[Report] = []
        self.markers: list[TsMarker] = []
        self.buckets: dict[tuple, Bucket] = {}
        self.parts: dict[str, list[pd.DataFrame]] = {k: [] for k in self.kinds}
        self.columns_seen: dict[str, list[str]] = {}
        self.unknown: set[str] = set()
        self.cur: Bucket | None = None
        self.cur_rows: list[str] = []
        self.seg_no = 0
        self.seg_len = 0
        self.rep = -1
        self.fresh: TsMarker | None = None  # a marker no report has taken yet
        self.run = -1  # index of the banner in force
        self.started = False
        self.pending = 0
        self.decimal_comma = False
        self.host: str | None = None
        self.other_hosts: dict[str, int] = {}

    def line(self, no: int, raw: str) -> None:
        raise NotImplementedError

    def to_frame(self, b: Bucket) -> list[tuple[str, pd.DataFrame]]:
        raise NotImplementedError

    def lines(self, stream: Iterable[str]) -> Iterator[tuple[int, str]]:
        """Read the first non-blank line of ``stream`` (``line``) and return the numbered lines after
        it, each ending in ``\\n``, without the prefix every line carries (judged on that first line:
        ``host: `` of pdsh/clush, or a space); lines of other pdsh hosts are counted in
        ``other_hosts`` and skipped. Leading blank lines are dropped."""
        it = enumerate(with_newlines(stream), start=1)
        for no, raw in it:
            if raw.strip():
                prefix, self.host = line_prefix(raw)
                self.line(no, raw[len(prefix) :])
                return self._unprefixed(it, prefix) if prefix else it
        return iter(())

    def _unprefixed(self, it: Iterator[tuple[int, str]], prefix: str) -> Iterator[tuple[int, str]]:
        plen = len(prefix)
        for no, raw in it:
            if raw.startswith(prefix):
                yield no, raw[plen:]
            elif self.host is None:
                yield no, raw
            else:
                h = raw.split(":", 1)[0]
                self.other_hosts[h] = self.other_hosts.get(h, 0) + 1
                self.gap(no)

    def marker(self, mk: TsMarker) -> None:
        self.markers.append(mk)
        self.fresh = mk
        self.started = True

    def banner(self, b: Banner) -> None:
        self.banners.append(b)
        self.run = len(self.banners) - 1
        self.started = True

    def context_line(self, s: str, no: int) -> bool:
        """Record ``s`` when it is a ``TS``/``zzz`` marker (``marker``) or a sysstat banner
        (``banner``); False for any other line."""
        c = s[:1]
        if c in ("T", "z"):
            mk = parse_marker(s)
            if mk is not None:
                self.marker(mk)
                return True
        if c == "L":
            b = parse_banner(s, no)
            if b is not None:
                self.banner(b)
                return True
        return False

    def new_report(self, no: int, **kw: object) -> Report:
        """A report (sample) starting at line ``no``; it takes the marker seen since the last one."""
        r = Report(self.run, no, self.fresh, **kw)
        self.reports.append(r)
        self.rep = len(self.reports) - 1
        self.fresh = None
        return r

    def open(self, bucket: Bucket, no: int) -> None:
        """Rows of ``bucket`` follow the header at line ``no``."""
        self.cur = bucket
        self.cur_rows = bucket.rows
        self.seg_no, self.seg_len = no + 1, len(bucket.rows)

    def cut(self, no: int) -> None:
        """The rows of the open section before line ``no`` form a run; the next run starts at ``no``."""
        cur = self.cur
        n = len(cur.rows) - self.seg_len
        if n:
            cur.segs.append((self.seg_no, n, self.rep))
            self.pending += n
        self.seg_no, self.seg_len = no, len(cur.rows)

    def close(self) -> None:
        """End the open section's run of rows, flushing when enough rows wait."""
        if self.cur is not None:
            self.cut(0)
        self.cur = None
        self.cur_rows = []
        if self.pending >= FLUSH_ROWS:
            self.flush()

    def gap(self, no: int) -> None:
        """A line of another pdsh host inside a section: rows resume after it."""
        if self.cur is not None:
            self.cut(no + 1)

    def check_columns(self, no: int, cols: Iterable[str], known: Callable[[str], bool]) -> None:
        """Warn once per column the parser does not know (it is kept under ``safe_name``)."""
        for col in cols:
            if not known(col) and col not in self.unknown:
                self.unknown.add(col)
                self.warns.add(no, "unknown-column", f"column {col!r} kept as {safe_name(col)!r}")

    def flush(self) -> None:
        """Type every pending bucket (``to_frame``) into ``parts`` and empty it."""
        for b in self.buckets.values():
            if b.rows and b.kind != "skip":
                key = " ".join(b.cols)
                seen = self.columns_seen.setdefault(self.seen_as.get(b.kind, b.kind), [])
                if key not in seen:
                    seen.append(key)
                self.decimal_comma = self.decimal_comma or "," in b.rows[0]
                for kind, df in self.to_frame(b):
                    if len(df):
                        self.parts[kind].append(df)
            b.rows.clear()
            b.segs.clear()
        self.pending = 0

    def locale_clues(self, order: str | None) -> list[str]:
        """What the capture shows of the locale it ran in: decimal comma, 12 h times, date form."""
        clues = []
        if self.decimal_comma:
            clues.append("decimal comma")
        times = [r.tod or r.stamp or "" for r in self.reports[:3]]
        if any(t[-2:].upper() in ("AM", "PM") for t in times):
            clues.append("12 h AM/PM times")
        raw = self.banners[0].date_raw if self.banners else ""
        if _DATE_DOT.match(raw):
            clues.append("DD.MM.YYYY dates")
        elif _DATE_SLASH.match(raw) and order == "DMY":
            clues.append("DD/MM/YYYY dates")
        elif _DATE_ISO.match(raw):
            clues.append("ISO dates")
        return clues

    def result(self, fmt: str, clock: ClockHints, shapes: Shapes) -> ParsedSource:
        """Close the member: type what waits, time the reports, build the frames (the first
        non-empty one first) and the meta."""
        self.close()
        self.flush()
        warnings = self.warns.finish()
        if self.other_hosts:
            names = ", ".join(sorted(self.other_hosts))
            dropped = sum(self.other_hosts.values())
            warnings.append(
                ParseWarning(0, "other-hosts", f"kept host {self.host!r}; dropped {dropped} lines of {names}")
            )
        reports = self.reports
        if not reports:
            warnings.append(ParseWarning(0, "empty", f"no {self.tool} report in the member"))
        tr = resolve_times(reports, self.banners, clock, all_markers=self.markers)
        ts_ns = tr.ts_ns if len(tr.ts_ns) else np.zeros(1, dtype="int64")
        boot = np.array([r.since_boot for r in reports] or [False], dtype=bool)
        frames = {
            name: finish_frame(self.parts[kind], head, ts_ns, boot)
            if self.parts[kind]
            else empty_frame(since_boot="bool", **empty)
            for name, (kind, head, empty) in shapes.items()
        }
        nonempty = [k for k, v in frames.items() if len(v)]
        if nonempty:
            frames = {
                nonempty[0]: frames[nonempty[0]],
                **{k: v for k, v in frames.items() if k != nonempty[0]},
            }
        meta: dict[str, object] = {"tool": self.tool, **tr.meta}
        if self.banners:
            b = self.banners[0]
            meta.update(host=b.host, kernel=b.kernel, ncpu=b.ncpu)
        if self.host is not None:
            meta["pdsh_host"] = self.host
        meta["columns"] = self.columns_seen
        return ParsedSource(
            format=fmt,
            member=self.member,
            frames=frames,
            clock=tr.clock,
            warnings=tr.warnings + warnings,
            meta=meta,
            ts_is_local=tr.ts_is_local,
        )
