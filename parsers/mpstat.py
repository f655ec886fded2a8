"""Parse ``mpstat`` (sysstat) output: per-CPU utilisation, interrupts per CPU and per IRQ.

Accepts:
    sysstat 7 through 12 output of ``mpstat``, ``-P ALL``, ``-I SUM -P ALL`` (``intr/s`` per CPU),
    ``-I CPU`` / ``-I SCPU`` (one wide column per hard / soft IRQ), ``-I ALL``, ``-A`` (several
    sections a report; ``NODE`` sections are skipped and counted in ``meta``), ``-T`` (``CORE SOCK
    NODE`` columns ignored), ``-N``; old and new column sets (``%user``/``%sys`` of sysstat 7,
    ``%gnice`` or not, the trailing ``intr/s`` column of sysstat 7-9, which also fills
    ``mpstat_intr``); time of day in 24 h or 12 h (``03:14:20 PM``), or epoch seconds (sysstat's
    ``expected.mpstat-U``); banner dates ``MM/DD/YYYY``, ``MM/DD/YY``, ``DD/MM/YYYY`` (decided from
    the values, else MM/DD with a warning), ``DD.MM.YYYY``, ``YYYY-MM-DD`` (``S_TIME_FORMAT=ISO``);
    decimal commas (``0,56``); ``Average:`` blocks (skipped: they are not samples); lines prefixed
    by ``host: `` (pdsh: the first host is kept) or by a space; ``TS``/``zzz`` markers before
    reports (pt-stalk, OSWatcher, the Casebook collector).

Sample input (``mpstat -P ALL 1 2``, sysstat 12.6.1)::

    Linux 6.18.44-fc-v769 (vm) \t11/22/26 \t_x86_64_\t(2 CPU)

    12:26:24     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
    12:26:25     all    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00  100.00
    12:26:25       0    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00  100.00
    12:26:25       1    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00  100.00

    Average:     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
    Average:     all    1.01    0.00    2.02    0.00    0.00    0.00    0.00    0.00    0.00   96.97

Output (every frame has ``ts`` datetime64[ns, UTC], ``line_no`` int64 and ``since_boot`` bool: the
report averages since boot, which mpstat prints when run without an interval, seen as a header time
equal to the row time; keep it out of rates):
    ``mpstat_cpu``: ``cpu`` int64 (-1 for ``all``); ``usr nice sys iowait irq soft steal guest
    gnice idle`` float64, percent of CPU time (only the columns the capture has).
    ``mpstat_intr``: ``cpu``, ``intr_per_s`` float64 (interrupts per second, ``-I SUM`` or the
    sysstat 7-9 trailing column).
    ``mpstat_irq``: ``cpu``, ``irq`` str as a pandas Categorical (column name without ``/s``:
    ``LOC``, ``24``, ``NET_RX``), ``kind`` Categorical (``hard`` or ``soft``), ``per_s`` float64
    (interrupts per second); one row per CPU and IRQ, so ``-I CPU`` on 64 CPUs is long.
    The first non-empty frame comes first (the main series).
    ``ts_source``: ``ParsedSource.clock``: ``ts-marker`` when every report follows its own ``TS``
    or ``zzz`` marker; ``per-line`` for epoch-second rows (true UTC); ``header+time-of-day`` for
    time of day on the banner date (midnight roll-over handled; ``ts_is_local``).
    ``meta``: ``tool``, ``host``, ``kernel``, ``ncpu``, ``sysstat_date`` (ISO), ``date_order``,
    ``columns``, ``node_sections_skipped``, ``utc_offset_s`` (from ``TS`` markers, when present).

Warnings: ``ambiguous-date`` (DD/MM vs MM/DD undecidable: MM/DD assumed), ``unknown-date``,
``other-hosts`` (pdsh lines of other hosts dropped), ``bad-row`` (wrong field count), ``bad-number``,
``unknown-column``, ``stray-line``, ``no-banner``, ``no-start-time``, ``assumed-interval``, ``empty``.

Errors: ``ParseError`` when the member's first meaningful line is neither a sysstat banner, a
marker nor an mpstat header.

Source: sysstat ``mpstat.c`` / ``man 1 mpstat`` (12.6); kernel ``include/linux/interrupt.h``
(softirq names).

>>> src = parse(
...     [
...         "Linux 6.18.44-fc-v769 (vm) \\t11/22/26 \\t_x86_64_\\t(2 CPU)",
...         "",
...         "12:26:24     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle",
...         "12:26:25     all    2.04    0.00    4.08    0.00    0.00    0.00    0.00    0.00    0.00   93.88",
...         "12:26:25       0    2.02    0.00    4.04    0.00    0.00    0.00    0.00    0.00    0.00   93.94",
...     ],
...     member="mpstat.txt",
...     clock=ClockHints(),
... )
>>> src.clock.value, str(src.start), src.main[["cpu", "usr", "idle"]].values.tolist()
('header+time-of-day', '2026-11-22 12:26:25+00:00', [[-1.0, 2.04, 93.88], [0.0, 2.02, 93.94]])
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
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
    parse_marker,
    to_number,
)

FORMAT = "mpstat"

# ---------------------------------------------------------------------------------------------
# Shared sysstat machinery (banner, dates, times, report clock); parsers/iostat.py imports it.
# ---------------------------------------------------------------------------------------------

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
_TOD = re.compile(r"^(\d{1,2}):(\d{2}):(\d{2})(?:\s*([AaPp][Mm]))?$")
_EPOCH = re.compile(r"^\d{9,11}$")

#: Two-digit years (``02/29/12``, sysstat 7): sysstat has existed since 1999, so 70-99 is 19xx.
TWO_DIGIT_YEAR_PIVOT = 70
#: A time of day that falls back by more than this is the next day (midnight roll-over); a smaller
#: step back is a DST fall-back or clock adjustment, which must not add a day.
ROLLOVER_MIN_BACKSTEP_S = 12 * 3600
#: Seconds between reports assumed when neither the capture nor the layout says (pt-stalk runs its
#: sysstat tools at 1 s).
DEFAULT_INTERVAL_S = 1.0
#: A date hint (marker wall clock, pt-stalk start) within this many days of a banner date picks its
#: day/month order.
DATE_HINT_TOLERANCE_DAYS = 1
#: Rows gathered before converting to typed columns: bounds memory on multi-GB members.
FLUSH_ROWS = 200_000
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
    last_marker: TsMarker | None
    since_marker: int
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
    if all(r.tod is not None and _EPOCH.match(r.tod) for r in reports):
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

    # 5. Nothing on the rows: a start plus the interval.
    interval = clock.interval_s
    if interval is None:
        interval = DEFAULT_INTERVAL_S
        warnings.append(
            ParseWarning(
                0,
                "assumed-interval",
                f"no times in the capture and no interval given: {interval:g} s assumed",
            )
        )
    step = int(round(interval * 1_000_000_000))
    local = True
    if any(r.last_marker is not None for r in reports):
        start = clock.start_local.value if clock.start_local is not None else 0
        local = any(r.last_marker is not None and r.last_marker.utc is None for r in reports)
        for i, r in enumerate(reports):
            if r.last_marker is not None:
                out[i] = r.last_marker.ts.value + r.since_marker * step
            else:
                out[i] = start + i * step
    elif clock.start_local is not None:
        out[:] = clock.start_local.value + np.arange(n, dtype="int64") * step
    else:
        local = False
        warnings.append(
            ParseWarning(
                0, "no-start-time", "no times, markers nor start time: samples placed from 1970-01-01"
            )
        )
        out[:] = np.arange(n, dtype="int64") * step
    return TimeResult(out, Clock.INFERRED, local, warnings, meta)


def safe_name(col: str) -> str:
    """A column name fit for a frame: ``%foo`` -> ``foo_pct``, ``x/s`` -> ``x_per_s``."""
    name = col
    suffix = ""
    if name.startswith("%"):
        name, suffix = name[1:], "_pct"
    elif name.endswith("/s"):
        name, suffix = name[:-2], "_per_s"
    name = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").lower() or "col"
    return name + suffix


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

    Of columns ``skip..ncols-1`` returns (the ``text_cols`` as object arrays, the others as one
    float64 matrix, ``all`` in ``all_col`` read as NaN); None when any row is odd (field count, a cell that is not a number),
    so the caller takes the careful row-by-row path. Decimal commas are read on purpose
    (``decimal=","``) when the first row shows them.
    """
    dec = "," if "," in rows[0] else "."
    try:
        df = pd.read_csv(
            io.StringIO("".join(rows)),
            sep=r"\s+",
            header=None,
            engine="c",
            keep_default_na=False,
            na_values={all_col: ["all"]} if all_col is not None else [],
            decimal=dec,
            dtype=dict.fromkeys(text_cols, str) or None,
        )
    except (ValueError, pd.errors.ParserError):
        return None
    if df.shape != (len(rows), ncols):
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


def with_newlines(stream: Iterable[str]) -> Iterator[str]:
    """``stream`` with every line ending in ``\\n`` (lists of bare strings are accepted too)."""
    it = iter(stream)
    for first in it:
        if first.endswith("\n"):
            yield first
            yield from it
        else:
            yield first + "\n"
            for line in it:
                yield line if line.endswith("\n") else line + "\n"
        return


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


#: Text and integer columns of the sysstat frames (every other column is float64).
_TEXT_COLUMNS = frozenset({"irq", "kind", "device"})
_INT_COLUMNS = frozenset({"cpu"})


def empty_frame(columns: list[str]) -> pd.DataFrame:
    """An empty frame with ``ts`` (UTC), ``line_no``, ``since_boot`` and ``columns``."""
    df = pd.DataFrame(
        {"ts": pd.Series([], dtype="datetime64[ns, UTC]"), "line_no": pd.Series([], dtype="int64")}
    )
    df["since_boot"] = pd.Series([], dtype="bool")
    for c in columns:
        dtype = "object" if c in _TEXT_COLUMNS else "int64" if c in _INT_COLUMNS else "float64"
        df[c] = pd.Series([], dtype=dtype)
    return df


def finish_frame(
    parts: list[pd.DataFrame], head: list[str], ts_ns: np.ndarray, boot: np.ndarray
) -> pd.DataFrame:
    """Concatenate chunk frames (with ``_rep``), add ``ts``/``since_boot`` from their report, order
    by line."""
    if not parts:
        return empty_frame([])
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
# mpstat
# ---------------------------------------------------------------------------------------------

#: mpstat's column spellings across sysstat 7-12 -> frame column (percent of CPU time).
COLUMN_MAP: dict[str, str] = {
    "%usr": "usr",
    "%user": "usr",  # sysstat 7-9.0
    "%nice": "nice",
    "%sys": "sys",
    "%system": "sys",
    "%iowait": "iowait",
    "%irq": "irq",
    "%soft": "soft",
    "%steal": "steal",
    "%guest": "guest",
    "%gnice": "gnice",
    "%idle": "idle",
}
CPU_COLUMNS = ["usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle"]
#: ``mpstat -T`` topology columns: not utilisation, ignored.
TOPOLOGY = frozenset({"CORE", "SOCK", "NODE"})
#: Kernel softirq names (``include/linux/interrupt.h`` softirq_to_name; BLOCK_IOPOLL before 4.4):
#: a per-IRQ section made of these is ``-I SCPU``.
SOFTIRQ_NAMES = frozenset(
    {
        "HI",
        "TIMER",
        "NET_TX",
        "NET_RX",
        "BLOCK",
        "BLOCK_IOPOLL",
        "IRQ_POLL",
        "TASKLET",
        "SCHED",
        "HRTIMER",
        "RCU",
    }
)
_INTR = "intr/s"


@dataclass(slots=True)
class _Bucket:
    """Rows of one section shape (kind + header columns) waiting to be typed; ``segs`` holds
    ``(first line, row count, report)`` runs of consecutive rows."""

    kind: str  # cpu, intr, irq, skip
    lead: int  # tokens before the CPU column (1 for 24 h / epoch, 2 for AM/PM)
    cols: tuple[str, ...]
    rows: list[str] = field(default_factory=list)
    segs: list[tuple[int, int, int]] = field(default_factory=list)


def sniff(head: list[str]) -> bool:
    """True when ``head`` has an mpstat header: ``CPU`` (or ``NODE``) followed by ``%usr``/``%user``/
    ``%idle`` or ``intr/s`` or per-IRQ ``N/s`` columns (after optional markers, banner, pdsh prefix).

    >>> sniff(["Linux 5.4 (h) \\t04/21/2026 \\t_x86_64_\\t(2 CPU)", "", "16:51:43  CPU  intr/s"])
    True
    >>> sniff(["avg-cpu:  %user   %nice %system %iowait  %steal   %idle"])
    False
    """
    for line in head:
        s = line.strip()
        m = HOST_PREFIX_RE.match(s)
        if m and ("CPU" in m["rest"] or "NODE" in m["rest"]):
            s = m["rest"]
        if "CPU" not in s and "NODE" not in s:
            continue
        toks = s.split()
        for i, t in enumerate(toks[:3]):
            if t in ("CPU", "NODE") and i + 1 < len(toks):
                if (
                    i
                    and tod_seconds(" ".join(toks[:i])) is None
                    and not _EPOCH.match(toks[0])
                    and toks[0] != "Average:"
                ):
                    break
                nxt = toks[i + 1]
                if nxt in ("%usr", "%user", "%idle", _INTR, "CORE") or (
                    nxt.endswith("/s") and len(toks) > i + 2
                ):
                    return True
    return False


def _header(s: str) -> tuple[int, str, list[str]] | None:
    """(lead, time text, columns) for an mpstat header line, or None."""
    toks = s.split()
    for i in range(min(3, len(toks))):
        if toks[i] in ("CPU", "NODE"):
            return i, " ".join(toks[:i]), toks[i:]
    return None


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Parse one mpstat member (any iterable of text lines) into ``mpstat_cpu``, ``mpstat_intr``
    and ``mpstat_irq`` (see the module docstring for columns and units).

    Raises ``ParseError`` when the member is not mpstat output.
    """
    st = _State(member)
    lines = with_newlines(stream)
    prefix, host = "", None
    other_hosts: dict[str, int] = {}
    nlines = 0
    for no, raw in enumerate(lines, start=1):
        nlines = no
        if raw.strip():
            prefix, host = line_prefix(raw)
            st.line(no, raw[len(prefix) :])
            break
    plen = len(prefix)
    # The hot loop: a data row of the open section is appended as is; everything else goes to
    # ``_State.line``. Rows are typed in bulk by ``_flush``.
    cur_rows = st.cur_rows
    for no, raw in enumerate(lines, start=nlines + 1):
        if plen:
            if raw.startswith(prefix):
                raw = raw[plen:]
            elif host is not None:
                h = raw.split(":", 1)[0]
                other_hosts[h] = other_hosts.get(h, 0) + 1
                st.gap(no)
                continue
        if st.cur is not None and "0" <= raw[:1] <= "9" and "CPU" not in raw and "NODE" not in raw:
            if raw[: st.tlen] != st.tod:  # a new time of day: maybe a new report (plain `mpstat 1`)
                st.row_time(no, raw)
            cur_rows.append(raw)
            continue
        st.line(no, raw)
        cur_rows = st.cur_rows
    st.close(0)
    _flush(st.buckets, st.parts, member, st.warns, st.columns_seen)
    warnings = st.warns.finish()
    if other_hosts:
        names = ", ".join(sorted(other_hosts))
        warnings.append(
            ParseWarning(
                0, "other-hosts", f"kept host {host!r}; dropped {sum(other_hosts.values())} lines of {names}"
            )
        )
    reports = st.reports
    if not reports:
        warnings.append(ParseWarning(0, "empty", "no mpstat report in the member"))
    tr = resolve_times(reports, st.banners, clock, all_markers=st.markers)
    warnings = tr.warnings + warnings
    ts_ns = tr.ts_ns if len(tr.ts_ns) else np.zeros(1, dtype="int64")
    boot = np.array([r.since_boot for r in reports] or [False], dtype=bool)
    shapes = {
        "mpstat_cpu": ("cpu", ["cpu", *CPU_COLUMNS]),
        "mpstat_intr": ("intr", ["cpu", "intr_per_s"]),
        "mpstat_irq": ("irq", ["cpu", "irq", "kind", "per_s"]),
    }
    frames = {
        name: finish_frame(st.parts[kind], cols, ts_ns, boot) if st.parts[kind] else empty_frame(cols)
        for name, (kind, cols) in shapes.items()
    }
    if not len(frames["mpstat_cpu"]):
        nonempty = [k for k, v in frames.items() if len(v)]
        if nonempty:
            frames = {
                nonempty[0]: frames[nonempty[0]],
                **{k: v for k, v in frames.items() if k != nonempty[0]},
            }
    meta: dict[str, object] = {"tool": "mpstat", **tr.meta}
    if st.banners:
        b = st.banners[0]
        meta.update(host=b.host, kernel=b.kernel, ncpu=b.ncpu)
    if host is not None:
        meta["pdsh_host"] = host
    meta["columns"] = st.columns_seen
    meta["node_sections_skipped"] = st.node_sections
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames=frames,
        clock=tr.clock,
        warnings=warnings,
        meta=meta,
        ts_is_local=tr.ts_is_local,
    )


class _State:
    """The reader's state between lines: open section, reports, markers, banners (slow path)."""

    def __init__(self, member: str) -> None:
        self.member = member
        self.warns = LineWarnings()
        self.banners: list[Banner] = []
        self.reports: list[Report] = []
        self.markers: list[TsMarker] = []
        self.buckets: dict[tuple, _Bucket] = {}
        self.parts: dict[str, list[pd.DataFrame]] = {"cpu": [], "intr": [], "irq": []}
        self.columns_seen: dict[str, list[str]] = {}
        self.unknown: set[str] = set()
        self.node_sections = 0
        self.cur: _Bucket | None = None
        self.cur_rows: list[str] = []
        self.seg_no = 0
        self.seg_len = 0
        self.tod: str | None = None  # time text of the rows being read
        self.tlen = 0  # its width: the header's time text
        self.header_time = ""
        self.rep = -1
        self.fresh: TsMarker | None = None
        self.last_marker: TsMarker | None = None
        self.since_marker = 0
        self.run = -1
        self.report_key: tuple | None = None
        self.started = False
        self.pending = 0

    def close(self, no: int) -> None:
        """End the open section's run of rows (at line ``no``), flushing when enough rows wait."""
        cur = self.cur
        if cur is not None:
            n = len(cur.rows) - self.seg_len
            if n:
                cur.segs.append((self.seg_no, n, self.rep))
                self.pending += n
        self.cur = None
        self.cur_rows = []
        if self.pending >= FLUSH_ROWS:
            _flush(self.buckets, self.parts, self.member, self.warns, self.columns_seen)
            self.pending = 0

    def gap(self, no: int) -> None:
        """A line of another pdsh host inside a section: rows resume after it."""
        cur = self.cur
        if cur is not None:
            n = len(cur.rows) - self.seg_len
            if n:
                cur.segs.append((self.seg_no, n, self.rep))
            self.seg_no, self.seg_len = no + 1, len(cur.rows)

    def open(self, bucket: _Bucket, no: int) -> None:
        self.cur = bucket
        self.cur_rows = bucket.rows
        self.seg_no, self.seg_len = no + 1, len(bucket.rows)
        self.tod = None

    def row_time(self, no: int, raw: str) -> None:
        """A row whose time differs from the previous row's: a new report unless it shares the run
        and time of the last one (``-A`` prints several sections per report)."""
        self.tod = tod = raw[: self.tlen]
        key = (self.run, tod)
        if key != self.report_key or self.fresh is not None:
            cur = self.cur
            n = len(cur.rows) - self.seg_len
            if n:
                cur.segs.append((self.seg_no, n, self.rep))
                self.pending += n
            self.seg_no, self.seg_len = no, len(cur.rows)
            self.report_key = key
            if self.fresh is None and self.last_marker is not None:
                self.since_marker += 1
            r = Report(self.run, no, self.fresh, self.last_marker, self.since_marker, tod=tod)
            r.since_boot = tod == self.header_time
            self.reports.append(r)
            self.fresh = None
            self.rep = len(self.reports) - 1

    def line(self, no: int, raw: str) -> None:
        """Every line but a plain data row: blank, Average, marker, banner, header, odd rows."""
        s = raw.strip()
        c = s[:1]
        if self.cur is not None and "0" <= c <= "9" and "CPU" not in s and "NODE" not in s:
            # A data row with a leading space (or other oddity the hot loop skipped).
            if s[: self.tlen] != self.tod:
                self.row_time(no, s)
            self.cur_rows.append(s + "\n")
            return
        self.close(no)
        if not s or s.startswith("Average"):
            return
        if c in ("T", "z"):
            mk = parse_marker(s)
            if mk is not None:
                self.markers.append(mk)
                self.fresh = self.last_marker = mk
                self.since_marker = 0
                self.report_key = None
                self.started = True
                return
        if c == "L":
            b = parse_banner(s, no)
            if b is not None:
                self.banners.append(b)
                self.run = len(self.banners) - 1
                self.report_key = None
                self.started = True
                return
        hdr = _header(s) if ("CPU" in s or "NODE" in s) else None
        if hdr is None:
            if not self.started:
                raise ParseError(
                    self.member, no, raw, "not mpstat output: expected a sysstat banner or an mpstat header"
                )
            self.warns.add(no, "stray-line", f"line not understood: {s[:60]!r}")
            return
        if not self.started:
            self.warns.add(
                no, "no-banner", "no sysstat banner before the first header: host, date and CPU count unknown"
            )
            self.started = True
        lead, self.header_time, toks = hdr
        self.tlen = len(self.header_time)
        cols = tuple(toks[1:])
        if toks[0] == "NODE":
            kind = "skip"
            self.node_sections += 1
        elif any(col in COLUMN_MAP for col in cols):
            kind = "cpu"
        elif cols == (_INTR,):
            kind = "intr"
        elif cols and all(col.endswith("/s") for col in cols):
            kind = "irq"
        else:
            kind = "skip"
            self.warns.add(no, "unknown-column", f"section with columns {' '.join(cols)[:60]!r} skipped")
        bkey = (kind, lead, cols)
        bucket = self.buckets.get(bkey)
        if bucket is None:
            bucket = self.buckets[bkey] = _Bucket(kind, lead, cols)
            if kind == "cpu":
                for col in cols:
                    if (
                        col not in COLUMN_MAP
                        and col not in TOPOLOGY
                        and col != _INTR
                        and col not in self.unknown
                    ):
                        self.unknown.add(col)
                        self.warns.add(no, "unknown-column", f"column {col!r} kept as {safe_name(col)!r}")
        self.open(bucket, no)


def _flush(
    buckets: dict[tuple, _Bucket],
    parts: dict[str, list[pd.DataFrame]],
    member: str,
    warns: LineWarnings,
    columns_seen: dict[str, list[str]],
) -> None:
    """Type every pending bucket into frames (``_to_frame``) and empty it."""
    for b in buckets.values():
        if b.rows and b.kind != "skip":
            key = " ".join(b.cols)
            columns_seen.setdefault(b.kind, [])
            if key not in columns_seen[b.kind]:
                columns_seen[b.kind].append(key)
            for kind, df in _to_frame(b, member, warns):
                if len(df):
                    parts[kind].append(df)
        b.rows.clear()
        b.segs.clear()


def _split(
    b: _Bucket, member: str, warns: LineWarnings
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cut a bucket's rows into (cpu, value matrix float64, line numbers, report ids).

    ``cpu`` is float64 from the fast path (``all`` as NaN) or text from the careful one. Values
    are the last ``n`` fields of a row (``-T`` rows of ``all`` leave CORE/SOCK/NODE blank). The
    fast path reads all rows with pandas; a bucket with any odd row is read row by row.
    """
    values_idx = [i for i, c in enumerate(b.cols) if c not in TOPOLOGY]
    nval = len(values_idx)
    ntop = len(b.cols) - nval
    nos, reps = line_numbers(b.segs)
    if len(nos) != len(b.rows):  # rows and their line numbers out of step: never expected
        raise ParseError(member, int(nos[0]) if len(nos) else 0, "", "internal: row count mismatch")
    if ntop == 0:
        fast = read_table(
            b.rows, b.lead + 1 + nval, skip=b.lead, text_cols=frozenset(range(b.lead)), all_col=b.lead
        )
        if fast is not None:
            mat = fast[1]
            return mat[:, 0], mat[:, 1:], nos, reps
    cpus: list[str] = []
    cells: list[str] = []
    keep: list[int] = []
    full = b.lead + 1 + len(b.cols)
    short = b.lead + 1 + nval
    for i, s in enumerate(b.rows):
        toks = s.split()
        if len(toks) != full and len(toks) != short:
            warns.add(int(nos[i]), "bad-row", f"expected {full} fields, found {len(toks)}")
            continue
        cpus.append(toks[b.lead])
        cells.extend(toks[len(toks) - nval :])
        keep.append(i)
    k = np.asarray(keep, dtype="int64")
    what = [b.cols[i] for i in values_idx]
    mat, good = to_floats(cells, len(keep), nval, nos[k], member, what, warns)
    return np.asarray(cpus, dtype=object)[good], mat[good], nos[k][good], reps[k][good]


def _cpu_numbers(cpu: np.ndarray, nos: np.ndarray, warns: LineWarnings) -> tuple[np.ndarray, np.ndarray]:
    """``all`` (or NaN from the fast path) -> -1, digits -> int; returns (cpu int64, good mask)
    warning about other text."""
    if cpu.dtype.kind == "f":
        return np.where(np.isnan(cpu), -1, cpu).astype("int64"), np.ones(len(cpu), dtype=bool)
    s = pd.Series(cpu, dtype="object")
    num = pd.to_numeric(s.where(s != "all", "-1"), errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    good = ~np.isnan(num)
    for i in np.flatnonzero(~good):
        warns.add(int(nos[i]), "bad-row", f"CPU {cpu[i]!r} is neither a number nor 'all'")
    return np.where(good, num, -2).astype("int64"), good


def _to_frame(b: _Bucket, member: str, warns: LineWarnings) -> list[tuple[str, pd.DataFrame]]:
    """Type one bucket: cpu sections -> ``cpu`` (+ ``intr`` from a trailing ``intr/s``), ``intr``,
    and per-IRQ sections -> long ``irq`` rows."""
    cpu_txt, mat, nos, reps = _split(b, member, warns)
    cpu, good = _cpu_numbers(cpu_txt, nos, warns)
    if not good.all():
        cpu, mat, nos, reps = cpu[good], mat[good], nos[good], reps[good]
    names = [c for c in b.cols if c not in TOPOLOGY]
    out: list[tuple[str, pd.DataFrame]] = []
    if b.kind == "cpu":
        data = {"_rep": reps, "line_no": nos, "cpu": cpu}
        intr = None
        for j, col in enumerate(names):
            if col == _INTR:
                intr = mat[:, j]
            else:
                data[COLUMN_MAP.get(col, safe_name(col))] = mat[:, j]
        out.append(("cpu", pd.DataFrame(data)))
        if intr is not None:
            out.append(("intr", pd.DataFrame({"_rep": reps, "line_no": nos, "cpu": cpu, "intr_per_s": intr})))
    elif b.kind == "intr":
        out.append(
            ("intr", pd.DataFrame({"_rep": reps, "line_no": nos, "cpu": cpu, "intr_per_s": mat[:, 0]}))
        )
    elif b.kind == "irq":
        irqs = [c[:-2] for c in names]
        kind = "soft" if all(i in SOFTIRQ_NAMES for i in irqs) else "hard"
        ncol = len(irqs)
        out.append(
            (
                "irq",
                pd.DataFrame(
                    {
                        "_rep": np.repeat(reps, ncol),
                        "line_no": np.repeat(nos, ncol),
                        "cpu": np.repeat(cpu, ncol),
                        "irq": pd.Categorical.from_codes(np.tile(np.arange(ncol), len(cpu)), categories=irqs),
                        "kind": pd.Categorical.from_codes(
                            np.zeros(len(cpu) * ncol, dtype="int8"), categories=[kind]
                        ),
                        "per_s": mat.reshape(-1),
                    }
                ),
            )
        )
    return out
