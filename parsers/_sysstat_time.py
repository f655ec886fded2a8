"""Dates and clocks of the sysstat parsers (``parsers/mpstat.py``, ``parsers/iostat.py``).

The sysstat banner (``Linux <kernel> (<host>) <date> _<arch>_ (<n> CPU)``) and its date forms
(``MM/DD/YY[YY]``, ``DD/MM/YYYY``, ``DD.MM.YYYY``, ISO), times of day (24 h, 12 h AM/PM, epoch
seconds), iostat ``-t`` stamps, the choice of a report clock (:func:`resolve_times`) and pdsh/clush
``host: `` prefixes. The streaming reader that uses them is ``parsers/_sysstat.py``.

Source: sysstat ``common.c`` (banner, ``S_TIME_FORMAT``), ``mpstat.c``, ``iostat.c`` (12.6).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers.base import Clock, ClockHints, ParseWarning, TsMarker, parse_marker, snapshot_times

#: ``Linux 5.14.0-611 (host) \t04/21/2026 \t_x86_64_\t(64 CPU)``; sysstat 7 stops after the date.
BANNER_RE = re.compile(
    r"^Linux\s+(?P<kernel>\S+)\s+\((?P<host>[^)]*)\)\s+(?P<date>\S+)"
    r"(?:\s+_(?P<arch>\S+)_)?(?:\s+\((?P<ncpu>\d+)\s+CPU\))?"
)
#: pdsh / clush write ``host: `` before every line of a remote command's output.
HOST_PREFIX_RE = re.compile(r"^(?P<host>[A-Za-z0-9][\w.-]*): (?P<rest>.*)$")
DATE_SLASH = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})$")
DATE_DOT = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{2}|\d{4})$")
DATE_ISO = re.compile(r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$")
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
        m = DATE_SLASH.match(raw)
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
    m = DATE_ISO.match(raw)
    if m:
        return _ymd(int(m[1]), int(m[2]), int(m[3]))
    m = DATE_DOT.match(raw)
    if m:
        return _ymd(_year(m[3]), int(m[2]), int(m[1]))
    m = DATE_SLASH.match(raw)
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
    time of day on the banner date with midnight roll-over (without a banner date: a marker's or the
    start's date, else ``clock.day``, the bundle's evidence of the date, said in a
    ``date-from-bundle`` warning, else 1970-01-01 with a ``no-start-time`` one); else inferred from
    the last marker, ``clock.start_local`` or the epoch, plus ``clock.interval_s`` per report.
    """
    meta: dict[str, object] = {}
    offset = next((mk.utc_offset_s for mk in all_markers if mk.utc_offset_s is not None), None)
    if offset is not None:
        meta["utc_offset_s"] = offset
    hints = [mk.wall for mk in all_markers if mk.wall is not None]
    if clock.start_local is not None:
        hints.append(clock.start_local)
    warnings: list[ParseWarning] = []
    order, dates = _banner_dates(reports, banners, hints, warnings, meta)
    if not reports:
        return TimeResult(np.zeros(0, dtype="int64"), Clock.HEADER_TIME, True, warnings, meta)
    if all(r.marker is not None for r in reports):  # 1. a marker right before every report
        out = np.array([r.marker.ts.value for r in reports], dtype="int64")
        return TimeResult(out, Clock.TS_MARKER, any(r.marker.utc is None for r in reports), warnings, meta)
    if all(r.tod is not None and EPOCH_RE.match(r.tod) for r in reports):  # 2. epoch seconds (mpstat -U)
        out = np.array([int(r.tod) * 1_000_000_000 for r in reports], dtype="int64")
        return TimeResult(out, Clock.PER_LINE, False, warnings, meta)
    stamps = [_STAMP_DT.match(r.stamp) if r.stamp else None for r in reports]
    if all(stamps):  # 3. iostat -t stamps with a date
        return _on_stamps(reports, stamps, order, warnings, meta)
    tods = [tod_seconds(raw) if (raw := _tod_of(r)) else None for r in reports]
    if all(t is not None for t in tods):  # 4. time of day on the banner date
        out = _on_dates(reports, tods, dates, hints[0].normalize() if hints else None, clock, warnings)
        return TimeResult(out, Clock.HEADER_TIME, True, warnings, meta)
    # 5. Nothing on the rows: the marker in force (or the start hint) plus the interval.
    st = snapshot_times([r.marker for r in reports], clock, warnings, interval_code="assumed-interval")
    return TimeResult(st.ts_ns, Clock.INFERRED, st.ts_is_local, warnings, meta)


def _banner_dates(
    reports: list[Report],
    banners: list[Banner],
    hints: list[pd.Timestamp],
    warnings: list[ParseWarning],
    meta: dict[str, object],
) -> tuple[str, list[pd.Timestamp | None]]:
    """The day/month order of the member's dates (banners and iostat stamps, told apart by the
    ``hints``' dates) and the date of each banner (None where not understood, with a warning)."""
    date_raws = [b.date_raw for b in banners]
    date_raws += [m["date"] for r in reports if r.stamp and (m := _STAMP_DT.match(r.stamp))]
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
    return order, dates


def _on_stamps(
    reports: list[Report],
    stamps: list[re.Match[str]],
    order: str,
    warnings: list[ParseWarning],
    meta: dict[str, object],
) -> TimeResult:
    """Times of iostat ``-t`` stamps with a date: UTC when every stamp carries an offset."""
    out = np.zeros(len(reports), dtype="int64")
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


def _tod_of(report: Report) -> str | None:
    """The time of day a report was printed with: its row time, else an iostat ``Time:`` stamp's."""
    if report.tod is None and report.stamp:
        m = _STAMP_TIME.match(report.stamp)
        return m["time"] if m else None
    return report.tod


def _on_dates(
    reports: list[Report],
    tods: list[int],
    dates: list[pd.Timestamp | None],
    hint_day: pd.Timestamp | None,
    clock: ClockHints,
    warnings: list[ParseWarning],
) -> np.ndarray:
    """Times of day (``tods``, seconds) on the date of each report's run (its banner's), rolling
    over midnight; a run without a banner date is put on ``hint_day`` (a marker's or the start's),
    else on ``clock.day`` with a ``date-from-bundle`` warning naming its evidence, else on
    1970-01-01 with a ``no-start-time`` warning."""
    day_of_run = [dates[r.run] if 0 <= r.run < len(dates) else None for r in reports]
    fallback = hint_day
    if fallback is None and any(d is None for d in day_of_run):
        line = next(r.line_no for r, d in zip(reports, day_of_run, strict=True) if d is None)
        if clock.day is not None:
            fallback = pd.Timestamp(clock.day).normalize()
            said = f"no banner date: times of day put on {fallback:%Y-%m-%d}, the date of {clock.day_from}"
            warnings.append(ParseWarning(line, "date-from-bundle", said))
        else:
            fallback = _EPOCH_DAY
            warnings.append(
                ParseWarning(line, "no-start-time", "no banner date nor hint: times put on 1970-01-01")
            )
    out = np.zeros(len(reports), dtype="int64")
    day_ns = 86_400 * 1_000_000_000
    prev_run, prev_tod, days = None, 0, 0
    for i, (r, sec) in enumerate(zip(reports, tods, strict=True)):
        if r.run != prev_run:
            prev_run, prev_tod, days = r.run, sec, 0
        elif sec < prev_tod - ROLLOVER_MIN_BACKSTEP_S:
            days += 1
        prev_tod = sec
        base = day_of_run[i] if day_of_run[i] is not None else fallback
        out[i] = base.value + days * day_ns + sec * 1_000_000_000
    return out
