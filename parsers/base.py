"""Types every parser shares: the parse result, its warnings and errors, clock hints and TS markers.

A parser module (``parsers/<format>.py``) exposes ``FORMAT``, ``sniff(head)`` and
``parse(stream, *, member, clock) -> ParsedSource``. ``stream`` is any iterable of text lines
(``io.TextIOBase`` or a list of ``str``, each line with or without its ``\\n``). Every frame of the
result carries a ``ts`` column of dtype ``datetime64[ns, UTC]`` and a ``line_no`` column (1-based
line of the member where the row starts; multi-line rows add ``line_end``).

Time provenance (DESIGN.md, "Time: the hard part") is one of the ``Clock`` values. Parsers whose
timestamps are the server's wall clock with no zone (mpstat time-of-day, pt-stalk file-name prefix,
vmstat ``-t``) set ``ParsedSource.ts_is_local``: their ``ts`` holds local wall-clock time labelled
UTC, and the bundle step shifts it once the server's UTC offset is known (``utc_offset_from_ts``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: Offsets are whole quarter hours everywhere on Earth (UTC+5:45, UTC+12:45 ...); rounding the
#: difference between a TS marker's epoch and its wall-clock part to 15 min absorbs the few
#: hundred milliseconds between the two ``date`` calls that pt-stalk makes.
OFFSET_QUANTUM_S = 15 * 60


class Clock(enum.StrEnum):
    """How a source's timestamps were obtained, best first."""

    TS_MARKER = "ts-marker"  # `TS <epoch> ...` lines written by pt-stalk or the collector
    PER_LINE = "per-line"  # a timestamp on each row (vmstat -t, iostat -t, mpstat -U epoch)
    HEADER_TIME = "header+time-of-day"  # sysstat header date + row time of day
    INFERRED = "inferred"  # a start time (pt-stalk prefix, manifest) plus the interval


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """A tolerated oddity: ``line_no`` is 1-based in the member (0 when it concerns the whole member)."""

    line_no: int
    code: str
    message: str

    def as_dict(self) -> dict[str, object]:
        return {"line": self.line_no, "code": self.code, "message": self.message}


class ParseError(ValueError):
    """The input is not this format, or a structural assumption broke at ``line_no``.

    The message names the member and the line: ``vmstat.txt line 412: expected 17 columns, found 9``.
    """

    def __init__(self, member: str, line_no: int, line: str, reason: str) -> None:
        self.member = member
        self.line_no = line_no
        self.line = line.rstrip("\n")[:200]
        self.reason = reason
        super().__init__(f"{member} line {line_no}: {reason}")


@dataclass(frozen=True, slots=True)
class ClockHints:
    """What the bundle knows about time before a member is parsed.

    ``start_local``: naive wall-clock start of the capture on the server (pt-stalk file-name prefix
    ``2026_04_21_16_51_41``, the collector manifest's start), or None.
    ``interval_s``: seconds between samples when the layout says so (pt-stalk runs its tools at 1 s).
    ``utc_offset_s``: the server's offset (local = UTC + offset) when already known, else None.
    """

    start_local: pd.Timestamp | None = None
    interval_s: float | None = None
    utc_offset_s: int | None = None


@dataclass(slots=True)
class ParsedSource:
    """The result of parsing one member.

    ``frames``: name -> DataFrame; the first one is the source's main series (its sample count and
    window are what the case page shows). ``meta``: version clues and facts for the case header
    (``tool``, ``version``, ``columns``, ``locale``, ``host``, ``ncpu``, ``utc_offset_s``...).
    """

    format: str
    member: str
    frames: dict[str, pd.DataFrame]
    clock: Clock
    warnings: list[ParseWarning] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)
    ts_is_local: bool = False

    @property
    def main(self) -> pd.DataFrame:
        return next(iter(self.frames.values()))

    @property
    def samples(self) -> int:
        """Distinct timestamps in the main frame (one per vmstat line, per processlist snapshot ...)."""
        main = self.main
        return int(main["ts"].nunique()) if len(main) else 0

    @property
    def start(self) -> pd.Timestamp | None:
        main = self.main
        return main["ts"].min() if len(main) else None

    @property
    def end(self) -> pd.Timestamp | None:
        main = self.main
        return main["ts"].max() if len(main) else None

    def shift(self, seconds: float) -> None:
        """Move every ``ts`` by ``-seconds`` (local wall clock -> UTC when ``seconds`` is the offset)."""
        delta = pd.Timedelta(seconds=seconds)
        for frame in self.frames.values():
            if "ts" in frame:
                frame["ts"] = frame["ts"] - delta
        self.ts_is_local = False


# ---------------------------------------------------------------------------------------------
# TS markers: `TS 1776790303.009325313 2026-04-21 16:51:43` (pt-stalk 2.x/3.x), `TS 1330030800`
# (pt-diskstats), `TS 1298492455.06 2011-02-23T15:20:55` (ISO with T), written before each snapshot.
# ---------------------------------------------------------------------------------------------
TS_LINE = re.compile(
    r"^TS\s+(?P<epoch>\d{9,11}(?:\.\d+)?)"
    r"(?:\s+(?P<wall>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?))?\s*$"
)


@dataclass(frozen=True, slots=True)
class TsMarker:
    """A snapshot marker: ``utc`` from a TS epoch (None for OSWatcher ``zzz``); ``wall`` the server's
    naive wall clock when the line carries one."""

    utc: pd.Timestamp | None
    wall: pd.Timestamp | None

    @property
    def ts(self) -> pd.Timestamp:
        """UTC when known, else the wall clock labelled UTC (the caller sets ``ts_is_local``)."""
        return self.utc if self.utc is not None else self.wall.tz_localize("UTC")

    @property
    def utc_offset_s(self) -> int | None:
        """Server offset in seconds (local = UTC + offset), rounded to 15 min; None without wall clock."""
        if self.wall is None or self.utc is None:
            return None
        diff = (self.wall - self.utc.tz_localize(None)).total_seconds()
        return int(round(diff / OFFSET_QUANTUM_S) * OFFSET_QUANTUM_S)


def parse_ts_line(line: str) -> TsMarker | None:
    """Read a ``TS`` marker line; None when ``line`` is not one.

    >>> m = parse_ts_line("TS 1776790303.009325313 2026-04-21 16:51:43")
    >>> str(m.utc), m.utc_offset_s
    ('2026-04-21 16:51:43.009325313+00:00', 0)
    >>> parse_ts_line("TS 1330030800").wall is None
    True
    """
    m = TS_LINE.match(line.strip())
    if not m:
        return None
    epoch = m.group("epoch")
    whole, _, frac = epoch.partition(".")
    ns = int(whole) * 1_000_000_000 + (int((frac + "000000000")[:9]) if frac else 0)
    utc = pd.Timestamp(ns, unit="ns", tz="UTC")
    wall = pd.Timestamp(m.group("wall").replace("T", " ")) if m.group("wall") else None
    return TsMarker(utc=utc, wall=wall)


# OSWatcher writes `zzz ***Wed Feb 29 11:00:03 EST 2012` (or with no zone) before each snapshot of
# every osw* file: the server's wall clock, the zone abbreviation being unreliable (EST vs EDT vs none).
ZZZ_LINE = re.compile(
    r"^zzz\s+\*{3}\s*(?:\w{3}\s+)?(?P<mon>\w{3})\s+(?P<day>\d{1,2})\s+(?P<time>\d{2}:\d{2}:\d{2})"
    r"(?:\s+[A-Z]{1,6}[+-]?\d*)?\s+(?P<year>\d{4})"
)


def parse_zzz_line(line: str) -> TsMarker | None:
    """Read an OSWatcher ``zzz ***`` marker: wall clock only (``utc`` is None).

    >>> str(parse_zzz_line("zzz ***Wed Feb 29 11:00:03 EST 2012").wall)
    '2012-02-29 11:00:03'
    """
    m = ZZZ_LINE.match(line.strip())
    if not m:
        return None
    try:
        wall = pd.to_datetime(f"{m['day']} {m['mon']} {m['year']} {m['time']}", format="%d %b %Y %H:%M:%S")
    except ValueError:
        return None
    return TsMarker(utc=None, wall=wall)


def parse_marker(line: str) -> TsMarker | None:
    """A ``TS`` or ``zzz`` snapshot marker, whichever ``line`` is; None otherwise."""
    if line.startswith("TS"):
        return parse_ts_line(line)
    if line.startswith("zzz"):
        return parse_zzz_line(line)
    return None


def iter_lines(stream: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Yield ``(line_no, line)`` with 1-based numbers and the trailing newline / CR removed."""
    for no, line in enumerate(stream, start=1):
        yield no, line.rstrip("\r\n")


def to_number(values: pd.Series | list[str], *, member: str, column: str, line_nos: np.ndarray) -> pd.Series:
    """Convert a column of number strings to float64, accepting decimal commas (``0,56`` -> 0.56).

    A cell that is neither a number nor empty raises ``ParseError`` with its line number: a value that
    does not parse is never silently NaN.
    """
    s = pd.Series(values, dtype="object").astype("string")
    has_comma = s.str.contains(",", regex=False).fillna(False)
    if has_comma.any():
        s = s.where(~has_comma, s.str.replace(",", ".", regex=False))
    out = pd.to_numeric(s, errors="coerce")
    bad = out.isna() & s.notna() & (s.str.len() > 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ParseError(
            member, int(line_nos[i]), str(s.iloc[i]), f"column {column!r}: {s.iloc[i]!r} is not a number"
        )
    return out.astype("float64")
