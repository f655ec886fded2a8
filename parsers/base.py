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
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers.rawtext import NEWLINES_STRIDE, newlines

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

    def __init__(self, member: str, line_no: int, line: str, reason: str, *, whole: bool = False) -> None:
        self.member = member
        self.line_no = line_no
        self.line = line.rstrip("\n")[:200]
        self.reason = reason
        #: the member as a whole is refused (a capture the parser declines on purpose), not one
        #: damaged line: no line is dropped to read the rest (parsers/damage.py)
        self.whole = whole
        super().__init__(f"{member} line {line_no}: {reason}")

    def __reduce__(self) -> tuple[type[ParseError], tuple[str, int, str, str, bool]]:
        """Pickled with its fields (a parse's outcome travels between workers)."""
        return (_parse_error, (self.member, self.line_no, self.line, self.reason, self.whole))


def _parse_error(member: str, line_no: int, line: str, reason: str, whole: bool) -> ParseError:
    """A ``ParseError`` from its pickled fields."""
    return ParseError(member, line_no, line, reason, whole=whole)


@dataclass(frozen=True, slots=True)
class ClockHints:
    """What the bundle knows about time before a member is parsed.

    ``start_local``: naive wall-clock start of the capture on the server (pt-stalk file-name prefix
    ``2026_04_21_16_51_41``, the collector manifest's start), or None.
    ``interval_s``: seconds between samples when the layout says so (pt-stalk runs its tools at 1 s).
    ``utc_offset_s``: the server's offset (local = UTC + offset) when already known, else None.
    ``day``: the date the bundle itself gives for a capture whose rows have a time of day and no
    date (a sysstat report without its banner), as a naive midnight, and ``day_from``, the evidence
    it comes from in words (``the collector manifest's start``, ``the member's file time``,
    ``the upload's time``), said in the warning of a capture placed on it; None when there is none.
    """

    start_local: pd.Timestamp | None = None
    interval_s: float | None = None
    utc_offset_s: int | None = None
    day: pd.Timestamp | None = None
    day_from: str | None = None


class Blocks(enum.StrEnum):
    """How a capture of a format cut at a line end inside its last block is told (parsers/truncation.py)."""

    NONE = "none"  # not made of blocks of rows: a cut at a line end looks like a shorter capture
    ROWS = "rows"  # the same rows every sample (CPUs, devices, counters): a last block with fewer was cut
    VARYING_ROWS = "varying-rows"  # processes or threads, which come and go: a last block with far fewer
    RECORDS = "records"  # `\G` records (a processlist): the last record lacks the first one's last field
    DEVICES = "devices"  # iostat: a last report with its CPU part and no device


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatTraits:
    """What the damage checks and the piece cutter must know of a format, declared by its module as
    ``TRAITS = FormatTraits(...)`` right after ``FORMAT``; ``parsers/registry.py`` refuses at import a
    format module without it, so a new format cannot silently skip the checks.

    ``short_lines``: rows are short lines of numbers (vmstat, /proc files): a line longer than
    ``parsers.damage.SHORT_LINE_CHARS`` is garbage and is cut there (the parser holds lines in
    fixed-width arrays). ``unsigned``: numeric columns are counters, sizes, rates or shares of the
    system, none of which can be negative (a negative one is made missing; not ps or top, whose nice
    values and real-time priorities are negative, nor a processlist, where a replica's SQL thread
    shows a negative Time). ``capped_pct``: its percentage columns are shares of the machine or
    of one CPU, never over 100 (not a process's %CPU, over 100 on several CPUs, nor iostat's %util,
    over 100 on some devices). ``blocks``: how a cut
    inside its last block is told (``Blocks``). ``markers``: made of snapshots after ``TS``/``zzz``
    markers, so a long member is cut into pieces at them. ``large_pieces``: its parse gains from larger
    pieces (``parsers.ingest.cutting.LARGE_PIECE_FACTOR``). ``small_pieces``: its parse costs no more
    CPU per MB in pieces of ``parsers.ingest.cutting.SMALL_PIECE_BYTES``, which hold half the memory
    of larger ones while they are parsed: its members are always cut that small. ``timed_rows``: a word of the
    column header that says every row has its own time, so a long member is cut at line ends (vmstat's
    ``timestamp``); None when rows do not stand alone.
    """

    short_lines: bool
    unsigned: bool
    capped_pct: bool
    blocks: Blocks
    markers: bool
    large_pieces: bool = False
    small_pieces: bool = False
    timed_rows: str | None = None


@dataclass(slots=True)
class ParsedSource:
    """The result of parsing one member.

    ``frames``: name -> DataFrame; the first one is the source's main series (its sample count and
    window are what the case page shows). ``meta``: version clues and facts for the case header
    (``variant``: a short human string of the version and locale clues seen, always set; ``tool``,
    ``columns``, ``host``, ``ncpu``, ``utc_offset_s``...).
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


# ---------------------------------------------------------------------------------------------
# Streams: bounded chunks of whole lines (or whole records) with their first line number.
# ---------------------------------------------------------------------------------------------

#: Characters read per chunk: bounded memory, and large enough that pandas' per-call overhead
#: (~1 ms for read_csv) stays well under 1 % of the parse time.
CHUNK_CHARS = 4 << 20


#: Characters ``str.splitlines`` cuts at besides ``\n``; a member's lines end at ``\n`` only.
OTHER_LINE_ENDS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def cuts_at_newlines_only(text: str) -> bool:
    r"""True when ``str.splitlines`` would cut ``text`` only at ``\n`` (each test a memchr)."""
    return not any(end in text for end in OTHER_LINE_ENDS)


def first_of_snapshots(snaps: np.ndarray, seen: set[int]) -> np.ndarray:
    """For rows in file order (``snaps``: the snapshot of each): True at the first row of each
    snapshot that ``seen`` (the snapshots of earlier chunks of the same parse) does not hold; ``seen``
    then holds every snapshot of ``snaps``. A parser that counts rows rather than typing them keeps
    these, so that every snapshot keeps a row (``ps.parse(states=...)``, ``processlist.parse(idle=...)``).

    >>> seen = {0}
    >>> first_of_snapshots(np.array([0, 0, 1, 1, 2]), seen).tolist(), sorted(seen)
    ([False, False, True, False, True], [0, 1, 2])
    """
    first = np.ones(len(snaps), dtype=bool)
    first[1:] = snaps[1:] != snaps[:-1]
    at = np.flatnonzero(first)  # a snapshot's rows start at a change: only these are looked up
    new = snaps[at].tolist()
    first[at] = [s not in seen for s in new]
    seen.update(new)
    return first


def lines_of(text: str) -> list[str]:
    r"""``text`` cut into lines at ``\n`` only, each with its ``\n`` (a last line may lack it), as a
    member's lines are numbered: ``str.splitlines`` when that cuts the same, it is the fastest.

    >>> lines_of("a\fb\nc\n"), lines_of("a\nb")
    (['a\x0cb\n', 'c\n'], ['a\n', 'b'])
    """
    if cuts_at_newlines_only(text):
        return text.splitlines(keepends=True)
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # the text after the last "\n": a last line without one, or nothing
    return lines if lines[-1] else lines[:-1]


def with_newlines(stream: Iterable[str]) -> Iterator[str]:
    """``stream`` with every line ending in ``\\n`` (lists of bare strings are accepted too).

    >>> list(with_newlines(["a", "b\\n"]))
    ['a\\n', 'b\\n']
    """
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


#: Lines are batched by count (``size // LINE_CHARS_GUESS`` a batch) when the stream has no
#: ``read``: a typical capture line is 60-120 characters.
LINE_CHARS_GUESS = 64


def raw_blocks(stream: Iterable[str], size: int = CHUNK_CHARS) -> Iterator[str]:
    """``stream`` (a text file object, or lines with or without their newline) as blocks of about
    ``size`` characters. Blocks read from a file object may end mid-line; a batch of lines ends on a
    line end, every line ending in ``\\n`` (one is added where missing). A stream that holds its
    text whole (a piece of a member: ``parsers.ingest.pieces``) hands its own blocks of whole lines
    (``line_blocks(size)``), which ``text_chunks`` passes on without joining or cutting them again.

    >>> list(raw_blocks(["a\\n", "b"], size=128))
    ['a\\nb\\n']
    """
    line_blocks = getattr(stream, "line_blocks", None)
    if line_blocks is not None:
        yield from line_blocks(size)
        return
    read = getattr(stream, "read", None)
    if read is not None:
        while block := read(size):
            yield block
        return
    it = iter(stream)
    n = max(1, size // LINE_CHARS_GUESS)
    while batch := list(itertools.islice(it, n)):
        text = "".join(batch)
        if text.count("\n") != len(batch):  # lines given without (or with embedded) newlines
            text = "".join(line.rstrip("\r\n") + "\n" for line in batch)
        yield text


#: Lines per chunk for the parsers that cut lists of lines (a few MB of text): bounded memory on a
#: 1-hour capture, while per-chunk pandas overhead stays noise.
CHUNK_LINES = 200_000


def line_chunks(
    stream: Iterable[str], cut: Callable[[list[str]], int], size: int = CHUNK_LINES
) -> Iterator[tuple[int, list[str]]]:
    """``stream`` as ``(first_line_no, lines)`` chunks of about ``size`` lines (as given, newlines
    kept), each ending before index ``cut(lines)`` (the first line of the last record, which may be
    incomplete; 0: no boundary yet, read on). The last chunk holds the rest and is always yielded,
    possibly empty.

    >>> last_marker = lambda lines: max(i for i, x in enumerate(lines) if x.startswith("TS"))
    >>> list(line_chunks(["TS 1", "a", "TS 2", "b", "TS 3", "c"], last_marker, 2))
    [(1, ['TS 1', 'a']), (3, ['TS 2', 'b']), (5, ['TS 3', 'c'])]
    """
    buf: list[str] = []
    base = 1
    it = iter(stream)
    while more := list(itertools.islice(it, size)):
        buf.extend(more)
        if len(more) < size:
            break
        at = cut(buf)
        if at > 0:
            yield base, buf[:at]
            base += at
            del buf[:at]
    yield base, buf


def count_newlines(text: str) -> int:
    r"""The ``\n`` in ``text``. A long ASCII text (a capture's chunk, nearly always) is counted with
    NumPy on its bytes (``parsers.rawtext.newlines``): about twice as fast as ``str.count``.

    >>> count_newlines("a\nb\n" * 300_000), count_newlines("é\n")
    (600000, 1)
    """
    if len(text) < NEWLINES_STRIDE or not text.isascii():
        return text.count("\n")
    return newlines(np.frombuffer(text.encode("ascii"), dtype=np.uint8))


def cut_lines(text: str) -> int:
    """End of the last whole line of ``text`` (a ``cut`` for :func:`text_chunks`)."""
    return text.rfind("\n") + 1


def text_chunks(blocks: Iterable[str], cut: Callable[[str], int] = cut_lines) -> Iterator[tuple[int, str]]:
    """Re-cut raw text ``blocks`` into ``(first_line_no, text)`` chunks that end where ``cut`` says
    (the start of the last record it sees, or the end of the last whole line): every chunk holds whole
    records, ``\\n``-terminated, with ``\\r\\n`` turned into ``\\n``.

    >>> list(text_chunks(["a\\nb", "\\r\\nc"]))
    [(1, 'a\\n'), (2, 'b\\n'), (3, 'c\\n')]
    """
    line_no = 1
    for chunk in text_batches(blocks, cut):
        yield line_no, chunk
        line_no += count_newlines(chunk)


def text_batches(blocks: Iterable[str], cut: Callable[[str], int] = cut_lines) -> Iterator[str]:
    """The chunks of :func:`text_chunks` without their line numbers, for a parser that counts the
    lines of a chunk as it reads it (one pass less over the text)."""
    carry = ""
    for block in blocks:
        if not carry and cut is cut_lines and block.endswith("\n"):  # a batch of whole lines
            yield block.replace("\r\n", "\n") if "\r" in block else block
            continue
        text = carry + block
        pos = cut(text)
        if pos <= 0:
            carry = text
            continue
        chunk, carry = text[:pos], text[pos:]
        yield chunk.replace("\r\n", "\n") if "\r" in chunk else chunk
    if carry:
        carry = carry.replace("\r\n", "\n")
        yield carry if carry.endswith("\n") else carry + "\n"


# ---------------------------------------------------------------------------------------------
# Time when a member has no clock of its own: a start hint plus the interval, else the epoch.
# ---------------------------------------------------------------------------------------------

#: pt-stalk runs its collectors every second (``--sleep-collect 1``), as do vmstat(8) and sysstat
#: tools run with ``1`` as interval: assumed when neither the capture nor the layout says.
DEFAULT_INTERVAL_S = 1.0
_EPOCH = pd.Timestamp(0)


def start_or_epoch(
    clock: ClockHints,
    warnings: list[ParseWarning],
    message: str = "no TS marker and no start time: times count from 1970-01-01",
) -> pd.Timestamp:
    """``clock.start_local`` as a naive wall-clock Timestamp; without it the Unix epoch, with one
    ``no-start-time`` warning saying ``message`` (added once however often this is called)."""
    if clock.start_local is not None:
        start = pd.Timestamp(clock.start_local)
        return start.tz_convert("UTC").tz_localize(None) if start.tzinfo is not None else start
    if not any(w.code == "no-start-time" for w in warnings):
        warnings.append(ParseWarning(0, "no-start-time", message))
    return _EPOCH


def utc_offset(markers: Iterable[TsMarker | None]) -> int | None:
    """The server's UTC offset from the first marker that gives it (``TS`` with a wall clock), or None."""
    return next((m.utc_offset_s for m in markers if m is not None and m.utc_offset_s is not None), None)


@dataclass(frozen=True, slots=True)
class SnapshotTimes:
    """One timestamp per snapshot (``ts_ns``: int64 ns, UTC, or local wall clock labelled UTC when
    ``ts_is_local``), the ``clock`` they came from and the server's ``utc_offset_s`` when known."""

    ts_ns: np.ndarray
    clock: Clock
    ts_is_local: bool
    utc_offset_s: int | None

    @property
    def ts(self) -> pd.DatetimeIndex:
        return pd.DatetimeIndex(pd.to_datetime(self.ts_ns, unit="ns", utc=True)).as_unit("ns")


def snapshot_times(
    markers: list[TsMarker | None],
    clock: ClockHints,
    warnings: list[ParseWarning],
    *,
    interval_code: str | None = "no-interval",
) -> SnapshotTimes:
    """Time the snapshots of a member from the marker before each (None where there is none).

    Every snapshot marked: the markers (``Clock.TS_MARKER``). Some marked: an unmarked snapshot is the
    previous marked one plus its distance x ``clock.interval_s``; those before the first marker count
    back from it. None marked: ``clock.start_local`` + i x interval, else the epoch with a
    ``no-start-time`` warning (``Clock.INFERRED``, ``ts_is_local``). Without ``clock.interval_s`` and
    with several snapshots to place, ``DEFAULT_INTERVAL_S`` is assumed with an ``interval_code``
    warning (none when ``interval_code`` is None).
    """
    n = len(markers)
    marked = [i for i, m in enumerate(markers) if m is not None]
    if not n:  # nothing parsed: no time to infer, nothing to warn about
        return SnapshotTimes(np.zeros(0, dtype=np.int64), Clock.INFERRED, False, None)
    offset = utc_offset(markers)
    if len(marked) == n:
        ts = np.array([m.ts.value for m in markers], dtype=np.int64)
        return SnapshotTimes(ts, Clock.TS_MARKER, any(m.utc is None for m in markers), offset)
    interval = clock.interval_s
    if interval is None:
        interval = DEFAULT_INTERVAL_S
        if n > 1 and interval_code is not None:
            warnings.append(
                ParseWarning(0, interval_code, f"{n} snapshots and no interval: {interval:g} s assumed")
            )
    step = int(round(interval * 1_000_000_000))
    if marked:
        # index of the marker in force (the previous one; the first one for snapshots before it)
        idx = np.maximum.accumulate(np.where([m is not None for m in markers], np.arange(n), -1))
        idx = np.where(idx < 0, marked[0], idx)
        base = np.array([markers[i].ts.value for i in idx], dtype=np.int64)
        ts = base + (np.arange(n) - idx) * step
        local = any(m is not None and m.utc is None for m in markers)
        return SnapshotTimes(ts, Clock.TS_MARKER, local, offset)
    start = start_or_epoch(clock, warnings)
    return SnapshotTimes(start.value + np.arange(n, dtype=np.int64) * step, Clock.INFERRED, True, None)


def empty_frame(**columns: str) -> pd.DataFrame:
    """An empty frame with ``ts`` (UTC), ``line_no`` and ``columns`` (name=dtype), for a member
    without rows or a context-only source."""
    frame = {"ts": pd.Series([], dtype="datetime64[ns, UTC]"), "line_no": pd.Series([], dtype="int64")}
    frame.update({name: pd.Series([], dtype=dtype) for name, dtype in columns.items()})
    return pd.DataFrame(frame)


_NOT_NAME = re.compile(r"[^0-9A-Za-z]+")


def safe_name(col: str) -> str:
    """A frame column name for a tool's column the parser does not know: ``%foo`` -> ``foo_pct``,
    ``x/s`` -> ``x_per_s``, others snake_case (``c_`` before a leading digit).

    >>> safe_name("%wait"), safe_name("foo/s"), safe_name("Rows Read"), safe_name("2nd")
    ('wait_pct', 'foo_per_s', 'rows_read', 'c_2nd')
    """
    name, suffix = col, ""
    if name.startswith("%"):
        name, suffix = name[1:], "_pct"
    elif name.endswith("/s"):
        name, suffix = name[:-2], "_per_s"
    name = _NOT_NAME.sub("_", name).strip("_").lower() or "column"
    return ("c_" + name if name[0].isdigit() else name) + suffix


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
