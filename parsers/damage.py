"""Damaged members: what is recognised, how each damage is said, and how the good lines are kept.

Uploads arrive damaged: a capture cut short by a full disk or a killed collector, NUL bytes left by
a crash, a rerun appending to the same file, a broken or enormous line, a file saved as UTF-16.
This module is the one place that deals with it for every format, around each format's own
``parse`` (parsers/ingest/pieces.py calls it on every piece, wherever the piece is parsed):

- ``transcode_utf16``: a member starting with a UTF-16 byte-order mark is read as UTF-16.
- ``clip_long_lines``: a line longer than ``max_line_chars(fmt)`` is cut there (``long-line``):
  no parser then holds an array sized by the longest line times the rows.
- ``parse_salvaging``: a line that makes the parser fail is dropped (``bad-line``, naming the line
  and the parser's reason) and the rest parsed again, up to ``MAX_DROPPED_LINES``; past that the
  lines before the first bad one are kept (``cut``).
- ``check_source``: rows whose time repeats or goes back (a capture written twice, blocks out of
  order) are dropped, keeping the first copy (``repeated-times``); rows dated in the future are
  dropped (``future-time``); rows beyond a jump of the clock of weeks are dropped, the longest
  stretch kept (``time-jump``); values that cannot be (a negative counter, a percentage over 100)
  become missing (``impossible-value``). Such values never reach a rule.
- ``truncation_warning``: a member whose last line has no line end was cut short (``truncated``);
  one cut at a line end inside its last block is told by parsers/truncation.py.
- ``segments`` and ``LineCutter``: the same for a member too long to hold, read as a stream: lines
  cut at the same length, never read whole; NUL bytes and a last line without its end said.
- ``pg_safe``: text (and JSON made of text) that PostgreSQL can store: NUL written as a visible
  ``\\x00``, lone surrogates as U+FFFD.

Plain Python, NumPy and pandas: parse processes import it without Django.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

import numpy as np
import pandas as pd

from parsers import registry
from parsers.base import ParsedSource, ParseError, ParseWarning, lines_of

#: The longest line any parser is given (64 KiB of characters): an SQL statement in a processlist
#: may be that long; a longer line is garbage or a binary blob, and is cut.
MAX_LINE_CHARS = 64 << 10
#: Characters kept of a line of a format that declares ``short_lines`` (``parsers.base.FormatTraits``):
#: more than 4 KiB of a short table of numbers is garbage (the widest real line, /proc/interrupts of
#: 1,024 CPUs, is not in such a format).
SHORT_LINE_CHARS = 4 << 10
#: Lines dropped from one piece before giving up on reading it line by line: each drop costs one
#: more parse of the piece.
MAX_DROPPED_LINES = 20
#: Lines a repeat of a member's start must hold to be taken for a second copy of the member (a last
#: line equal to the first, a header written again at the end, is not one).
MIN_COPY_LINES = 3
#: Characters compared first when a member's first line comes again (a header repeated every screen
#: is followed by other rows): the whole rest is compared only when these match.
COMPARE_FIRST_CHARS = 4096
#: Characters of a damaged line quoted in a warning.
QUOTE_CHARS = 80
#: A row dated more than this after the upload was read is in the future: a clock or a byte gone wrong.
FUTURE_SLACK = pd.Timedelta(days=1)
#: Column names of percentages (vmstat us/sy/id/wa/st, sysstat %-columns read as ``*_pct``).
PERCENT_COLUMNS = re.compile(r"(?:_pct|^(?:us|sy|id|wa|st|gu))$")
#: Numeric columns that may be negative (none of the captures' counters or gauges may).
SIGNED_COLUMNS = frozenset({"line_no", "line_end", "snapshot", "delta", "rate"})


#: Server variables that are sizes, counts or limits: a negative value cannot be (MySQL and MariaDB
#: reference manuals, "Server System Variables": each has a minimum of 0 or 1). ``max_user_connections``
#: is not among them (MariaDB allows -1).
NON_NEGATIVE_VARIABLES = frozenset(
    {
        "max_connections", "open_files_limit", "table_open_cache", "table_definition_cache",
        "thread_cache_size", "innodb_buffer_pool_size", "innodb_log_file_size", "max_allowed_packet",
        "tmp_table_size", "max_heap_table_size", "sort_buffer_size", "join_buffer_size",
        "innodb_io_capacity", "innodb_io_capacity_max", "innodb_thread_concurrency", "thread_pool_size",
        "long_query_time", "wait_timeout", "key_buffer_size", "query_cache_size", "innodb_log_buffer_size",
        "innodb_open_files", "max_prepared_stmt_count", "back_log", "thread_stack",
    }
)  # fmt: skip


#: The warning codes that say a member is damaged (the case report lists them per member).
DAMAGE_CODES = frozenset(
    {
        "truncated", "nul-bytes", "bad-line", "cut", "long-line", "written-twice", "repeated-times",
        "future-time", "impossible-value", "not-utf8", "time-jump",
    }
)  # fmt: skip


def damage_said(warnings: list[dict[str, object]]) -> list[dict[str, object]]:
    """The warnings (``ParseWarning.as_dict`` shapes) among ``warnings`` that say a damage."""
    return [w for w in warnings if w.get("code") in DAMAGE_CODES]


def max_line_chars(fmt: str) -> int:
    """The longest line the parser of ``fmt`` is given (``SHORT_LINE_CHARS`` or ``MAX_LINE_CHARS``)."""
    return SHORT_LINE_CHARS if registry.traits(fmt).short_lines else MAX_LINE_CHARS


def quote(line: str) -> str:
    """A damaged line as a warning quotes it: at most ``QUOTE_CHARS`` characters, NUL and other
    control characters written as escapes (``repr``)."""
    line = line.rstrip("\n")
    return repr(line[:QUOTE_CHARS]) + (" ..." if len(line) > QUOTE_CHARS else "")


#: The byte-order marks of UTF-16 (little- and big-endian).
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def transcode_utf16(data: bytes) -> bytes | None:
    """``data`` as UTF-8 when it starts with a UTF-16 byte-order mark (``FF FE`` or ``FE FF``: a
    capture saved by a Windows editor), else None."""
    if data[:2] in UTF16_BOMS:
        return data.decode("utf-16", "replace").encode("utf-8")
    return None


def clip_long_lines(text: str, fmt: str, data: bytes | None = None) -> tuple[str, list[ParseWarning]]:
    """``text`` with every line longer than ``max_line_chars(fmt)`` cut to that length, and one
    ``long-line`` warning per cut line (line numbers of ``text``, 1-based). ``data``: ``text`` as
    the UTF-8 bytes it was decoded from, when at hand (a line has at least as many bytes as
    characters, so the lengths are measured on the bytes, with NumPy, and only a member with a
    long line is looked at line by line)."""
    limit = max_line_chars(fmt)
    if len(text) <= limit or _lines_shorter(text, limit):
        return text, []
    raw = np.frombuffer(data if data is not None else text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    if int(np.diff(ends, prepend=-1, append=len(raw)).max()) - 1 <= limit:
        return text, []
    warnings: list[ParseWarning] = []
    lines = lines_of(text)
    for i, line in enumerate(lines):
        if len(line.rstrip("\n")) > limit:
            warnings.append(
                ParseWarning(
                    i + 1,
                    "long-line",
                    (
                        f"line {i + 1} is {len(line.rstrip(chr(10))):,} characters long: cut to the first "
                        f"{limit:,}"
                    ),
                )
            )
            lines[i] = line[:limit] + ("\n" if line.endswith("\n") else "")
    return ("".join(lines), warnings) if warnings else (text, [])


def _lines_shorter(text: str, limit: int) -> bool:
    r"""Whether every line of ``text`` is shorter than ``limit`` characters, known without cutting it
    into lines: when each aligned stretch of ``limit // 2`` characters holds a line end, two line
    ends (and the text's ends) are less than ``limit`` apart. One ``str.find`` per stretch, each
    stopping at the stretch's first line end: a few microseconds for a piece of the usual shape.
    False means "perhaps not": the caller measures the lines.

    >>> _lines_shorter("ab\ncd\nef\n", 6), _lines_shorter("abcdefgh\n", 6)
    (True, False)
    """
    step = max(1, limit // 2)
    find = text.find
    return all(find("\n", at, at + step) >= 0 for at in range(0, len(text) - step + 1, step))


#: Characters a text stream is read at a time, at most (``segments``): any line a parser is given
#: whole (``MAX_LINE_CHARS`` and its line end) comes in one; a longer one in several, never whole.
SEGMENT_CHARS = MAX_LINE_CHARS + 2


def segments(stream: TextIO) -> Iterator[str]:
    """The text of ``stream`` (a text file: universal newlines applied) line by line, a line of more
    than ``SEGMENT_CHARS`` characters cut in several parts (``readline(SEGMENT_CHARS)``): a garbage
    line of a GB without a line end is never held whole. ``LineCutter`` puts the lines together."""
    return iter(functools.partial(stream.readline, SEGMENT_CHARS), "")


class LineCutter:
    """The lines of a member read as a stream (too long to hold: parsers/ingest/bundle.py), from its
    ``segments`` (perhaps through a tee that keeps the text as uploaded), for the format ``fmt``'s
    parser: each line longer than ``max_line_chars(fmt)`` cut there, as ``clip_long_lines`` cuts
    the lines of a piece. Iterate once; ``warnings`` then holds what was said, with line numbers of
    the member (1-based): ``long-line`` for each cut line, ``nul-bytes`` (the first line with NUL,
    the count), ``truncated`` when the last line has no line end. What is held at once is one kept
    line (at most the limit) and one segment, whatever the longest line."""

    def __init__(self, parts: Iterable[str], fmt: str) -> None:
        self.parts = parts
        self.limit = max_line_chars(fmt)
        self.warnings: list[ParseWarning] = []

    def __iter__(self) -> Iterator[str]:
        limit, line_no, nuls, first_nul = self.limit, 0, 0, 0
        head: list[str] = []  # the kept start of a line that came in several segments
        kept = length = 0
        for part in self.parts:
            if not head and len(part) <= limit + 1 and part.endswith("\n"):  # nearly every line
                line_no += 1
                if "\x00" in part:
                    nuls += part.count("\x00")
                    first_nul = first_nul or line_no
                yield part
                continue
            length += len(part)
            if kept < limit:
                head.append(part[: limit - kept])
                kept += len(head[-1])
            if "\x00" in part:
                nuls += part.count("\x00")
                first_nul = first_nul or line_no + 1
            if not part.endswith("\n"):
                continue
            line_no += 1
            yield self._line(head, line_no, length - 1, ended=True)
            head, kept, length = [], 0, 0
        if head:  # the last line has no line end: the member was cut short
            line_no += 1
            yield self._line(head, line_no, length, ended=False)
            self.warnings.append(
                ParseWarning(
                    line_no,
                    "truncated",
                    f"the member ends in the middle of line {line_no}: the capture was cut short there",
                )
            )
        if nuls:
            self.warnings.append(
                ParseWarning(
                    first_nul, "nul-bytes", f"{nuls:,} NUL bytes, the first on line {first_nul}: read as text"
                )
            )

    def _line(self, head: list[str], line_no: int, length: int, *, ended: bool) -> str:
        """A line that came in several segments, cut to the limit (said) when it is longer."""
        line = "".join(head).rstrip("\n")
        if length > self.limit:
            self.warnings.append(
                ParseWarning(
                    line_no,
                    "long-line",
                    f"line {line_no} is {length:,} characters long: cut to the first {self.limit:,}",
                )
            )
            line = line[: self.limit]
        return line + "\n" if ended else line


def nul_warning(text: str) -> list[ParseWarning]:
    """One ``nul-bytes`` warning naming the first line of ``text`` that holds NUL bytes (a crash
    while the file was written), or none."""
    at = text.find("\x00")
    if at < 0:
        return []
    line = text.count("\n", 0, at) + 1
    return [
        ParseWarning(
            line, "nul-bytes", f"{text.count(chr(0)):,} NUL bytes, the first on line {line}: read as text"
        )
    ]


def drop_second_copy(text: str) -> tuple[str, list[ParseWarning]]:
    """``text`` (a whole member) without a second copy of itself: when the member's first line
    comes again at a line start and everything from there repeats the member's start (a rerun
    appending to the same file, perhaps cut short), the copy is dropped with a ``written-twice``
    warning."""
    start = len(text) - len(text.lstrip())
    start = text.rfind("\n", 0, start) + 1  # the first line that is not blank
    end = text.find("\n", start)
    if end < 0 or end == start:
        return text, []
    first = text[start : end + 1]
    at = text.find("\n" + first, end)
    while at >= 0:
        size = len(text) - at - 1
        probe = min(size, COMPARE_FIRST_CHARS)  # most repeats of the first line differ soon after it
        if (
            text[at + 1 : at + 1 + probe] == text[start : start + probe]
            and text.startswith(copy := text[at + 1 :], start)
            and copy.count("\n") >= MIN_COPY_LINES
        ):
            line = text.count("\n", 0, at + 1) + 1
            return text[: at + 1], [
                ParseWarning(
                    line,
                    "written-twice",
                    f"from line {line} on the member repeats its own first {copy.count(chr(10)):,} lines "
                    "(written twice): the copy is not read",
                )
            ]
        at = text.find("\n" + first, at + 1)
    return text, []


def _renumber(source: ParsedSource, kept: np.ndarray) -> ParsedSource:
    """Line numbers of ``source`` (parsed from the kept lines only) put back to the lines they were
    (``kept``: 1-based numbers of the kept lines, ascending)."""

    def back(values: np.ndarray) -> np.ndarray:
        idx = np.clip(values.astype("int64") - 1, 0, len(kept) - 1)
        return np.where(values > 0, kept[idx], values)

    for frame in source.frames.values():
        for column in ("line_no", "line_end"):
            if column in frame and frame[column].dtype.kind in "iu" and len(frame):
                frame[column] = back(frame[column].to_numpy())
    source.warnings = [
        ParseWarning(int(back(np.array([w.line_no]))[0]) if w.line_no else 0, w.code, w.message)
        for w in source.warnings
    ]
    return source


def _first_failing(parse: Callable[[list[str]], ParsedSource], lines: list[str]) -> int | None:
    """The 1-based number of the line whose reading makes ``parse`` fail with an error other than
    ``ParseError`` (the shortest failing prefix, by halving); None when no prefix fails so."""

    def fails(n: int) -> bool:
        try:
            parse(lines[:n])
        except ParseError:
            return False
        except Exception:  # noqa: BLE001 - the failure being located
            return True
        return False

    low, high = 0, len(lines)
    if not fails(high):
        return None
    while high - low > 1:
        mid = (low + high) // 2
        if fails(mid):
            high = mid
        else:
            low = mid
    return high


def parse_salvaging(
    parse: Callable[[list[str]], ParsedSource], text: str, *, member: str, error: Exception | None = None
) -> ParsedSource:
    """``parse(lines)`` of ``text``'s lines; when it fails, the line at fault is dropped with a
    ``bad-line`` warning (the line the ``ParseError`` names, else the first line whose reading
    fails) and the rest is parsed again, up to ``MAX_DROPPED_LINES`` times. Past that, or when
    no line is at fault, the lines before the first bad one are parsed, with a ``cut`` warning.
    Line numbers in the result are those of ``text``. Raises the first error when nothing can be
    read (the member is then not used, with that error's reason). ``error``: the error of a
    first reading already made (then ``text`` is not parsed whole again)."""
    lines = lines_of(text)
    if error is None:
        try:
            return parse(lines)
        except Exception as exc:  # noqa: BLE001 - salvaged below, else raised again
            error = exc
    if isinstance(error, ParseError) and error.whole:
        raise error
    first_error = error
    kept = np.arange(1, len(lines) + 1, dtype=np.int64)
    dropped: list[ParseWarning] = []
    for _ in range(MAX_DROPPED_LINES):
        at = error.line_no if isinstance(error, ParseError) else _first_failing(parse, lines)
        if at is None or not 1 <= at <= len(lines):
            break
        original = int(kept[at - 1])
        reason = error.reason if isinstance(error, ParseError) else f"{type(error).__name__}: {error}"
        dropped.append(
            ParseWarning(
                original, "bad-line", f"line {original} dropped: {reason[:200]}: {quote(lines[at - 1])}"
            )
        )
        del lines[at - 1]
        kept = np.delete(kept, at - 1)
        if not lines:
            break
        try:
            parsed = parse(lines)
        except Exception as exc:  # noqa: BLE001 - the next line at fault
            if isinstance(exc, ParseError) and exc.whole:
                raise first_error from None
            error = exc
            continue
        parsed = _renumber(parsed, kept)
        parsed.warnings[:0] = dropped
        return parsed
    return _keep_head(parse, lines_of(text), first_error, member=member)


def _keep_head(
    parse: Callable[[list[str]], ParsedSource], lines: list[str], error: Exception, *, member: str
) -> ParsedSource:
    """The lines before the first one at fault, parsed, with a ``cut`` warning; raises ``error``
    when they give nothing."""
    at = error.line_no if isinstance(error, ParseError) else _first_failing(parse, lines)
    if not at or at <= 1:
        if at and not isinstance(error, ParseError):  # the reason names the line the parser failed on
            raise ParseError(member, at, lines[at - 1], f"{type(error).__name__}: {error}") from error
        raise error
    try:
        parsed = parse(lines[: at - 1])
    except Exception:  # noqa: BLE001 - nothing before it reads either
        raise error from None
    reason = error.reason if isinstance(error, ParseError) else f"{type(error).__name__}: {error}"
    parsed.warnings.append(
        ParseWarning(at, "cut", f"the rest of {member} from line {at} was not read: {reason[:200]}")
    )
    return parsed


def truncation_warning(data: bytes, first_line: int) -> ParseWarning | None:
    """A ``truncated`` warning when ``data`` (the last piece of a member, starting at line
    ``first_line``) does not end with a line end: the capture was cut short mid-line."""
    if not data or data.endswith(b"\n"):
        return None
    line = first_line + data.count(b"\n")
    return ParseWarning(
        line, "truncated", f"the member ends in the middle of line {line}: the capture was cut short there"
    )


def _runs_kept(ts: np.ndarray) -> np.ndarray:
    """For rows in file order with times ``ts`` (int64): True for the rows of each run of equal
    times whose time is later than every run before it (the first copy of a capture written twice,
    the blocks in order)."""
    if not len(ts):
        return np.ones(0, dtype=bool)
    start = np.r_[True, ts[1:] != ts[:-1]]
    run_ts = ts[start]
    before = np.maximum.accumulate(np.r_[np.iinfo(np.int64).min, run_ts[:-1]])
    keep_run = run_ts > before
    return keep_run[np.cumsum(start) - 1]


def check_source(
    source: ParsedSource,
    *,
    now: pd.Timestamp | None = None,
    values: bool = True,
    only: str | None = None,
    jumps: bool = True,
) -> None:
    """Refuse, in place, what cannot be in ``source`` (times in UTC), each with one warning:
    rows of repeated or backwards times (``repeated-times``: the first copy kept), rows after
    ``now`` + ``FUTURE_SLACK`` (``future-time``), rows on the far side of a jump of the clock
    (``time-jump``, ``jumped_rows``: the longest stretch kept), negative values and percentages
    over 100 in numeric columns (``impossible-value``: made missing). ``values=False``: the times
    only (for the joined pieces of a member, whose frames may be reduced already). ``only``: that
    frame alone. ``jumps=False``: no jump is looked for (a piece of a member, which sees only part
    of the member's stretches: the joined member is checked)."""
    now = now if now is not None else pd.Timestamp.now(tz="UTC")
    if values:
        _refuse_negative_variables(source)
    for name, frame in list(source.frames.items()):
        if only is not None and name != only:
            continue
        times = frame["ts"] if "ts" in frame else None
        if times is None or not len(frame) or times.dtype.kind != "M":
            continue
        ts = times.to_numpy(dtype="datetime64[ns]").view("int64")
        keep = np.ones(len(frame), dtype=bool)
        ascending = _ascending(ts)
        if not ascending and not (ts == NAT).any():
            in_order = _runs_kept(ts)
            if not in_order.all():
                said = (
                    f"{name}: {int((~in_order).sum()):,} rows from line {{line}} repeat times already read "
                )
                _say(
                    source,
                    frame,
                    ~in_order,
                    "repeated-times",
                    said + "or go back in time (written twice, or out of order): the first copy is kept",
                )
                keep &= in_order
        latest = int(ts[-1] if ascending else ts.max())  # NaT, the least int64, is never in the future
        if latest > (now + FUTURE_SLACK).value:
            future = ts > (now + FUTURE_SLACK).value
            when = pd.Timestamp(int(ts[future][0]), tz="UTC")
            _say(
                source,
                frame,
                future,
                "future-time",
                f"{name}: {int(future.sum()):,} rows from line "
                f"{{line}} "
                f"are dated after today ({when:%Y-%m-%d %H:%M:%S} UTC): not used",
            )
            keep &= ~future
        if jumps and (jumped := jumped_rows(_marked(ts, keep))) is not None:
            outside, message = jumped
            _say(source, frame, outside & keep, "time-jump", f"{name}: {message}")
            keep &= ~outside
        if not keep.all():
            frame = frame[keep].reset_index(drop=True)
        source.frames[name] = _refuse_impossible(source, name, frame) if values else frame


#: NaT as ``int64`` nanoseconds.
NAT = np.iinfo(np.int64).min


def _ascending(ts: np.ndarray) -> bool:
    """Whether ``ts`` (int64) never goes down: one NumPy comparison, several times faster than
    pandas' ``is_monotonic_increasing`` on a piece's hundreds of thousands of times."""
    return bool((ts[1:] >= ts[:-1]).all())


def _marked(ts: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``ts`` (int64 nanoseconds) with the rows not in ``keep`` marked ``iinfo(int64).min``, as
    ``jumped_rows`` reads them: ``ts`` itself, not a copy, when every row is kept (a joined day of
    /proc/interrupts: 9.4 M times, 72 MiB)."""
    return ts if keep.all() else np.where(keep, ts, np.iinfo(np.int64).min)


#: A gap between two sample times of a member is a jump of its clock when it is this many times
#: the member's usual interval (the median gap) ...
JUMP_FACTOR = 1000
#: ... and at least this long (a collector paused for a few minutes is not a jump) ...
JUMP_MIN = pd.Timedelta(hours=1)
#: ... and the member's window is this many times longer than its samples at their usual interval
#: (a day of ``sar`` at 10 minutes with the machine down for hours stays whole).
STRETCH_FACTOR = 10


def jumped_rows(ts: np.ndarray) -> tuple[np.ndarray, str] | None:
    """The rows to refuse of a member whose clock jumps, and what to say, or None.

    ``ts``: the rows' times (int64 nanoseconds, in file order, ascending once repeated times are
    dropped; ``iinfo(int64).min`` marks rows already refused). A capture written twice weeks
    apart, or whose clock was set wrong, holds stretches of samples at their usual interval
    separated by gaps of weeks: its window would stretch over those weeks (six weeks for a few
    hours of samples), and every other source would look like a dot in it. A gap of more than
    ``JUMP_FACTOR`` times the median gap and ``JUMP_MIN``, in a member whose window is more than
    ``STRETCH_FACTOR`` times its samples at that interval, cuts the member into stretches; the
    stretch of the most samples is kept (the first of equals), the rows of the others refused."""
    valid = ts != np.iinfo(np.int64).min
    times = ts[valid] if not valid.all() else ts
    if len(times) < 3 or int(times.max()) - int(times.min()) <= JUMP_MIN.value:
        return None  # most captures: nothing to sort
    # the distinct times, without a gap per row (a day of /proc/interrupts: 9.4 M rows, 8,640 times)
    if (times[1:] >= times[:-1]).all():  # in time order, as check_source leaves them: no sort
        times = times[np.r_[True, times[1:] != times[:-1]]]
    else:
        times = np.unique(times)
    if len(times) < 3:
        return None
    gaps = np.diff(times)
    usual = int(np.median(gaps))
    span = int(times[-1] - times[0])
    if usual <= 0 or span <= STRETCH_FACTOR * len(times) * usual:
        return None
    cut = np.flatnonzero(gaps > max(JUMP_FACTOR * usual, JUMP_MIN.value))
    if not len(cut):
        return None
    bounds = np.r_[0, cut + 1, len(times)]
    sizes = np.diff(bounds)
    best = int(np.argmax(sizes))
    low, high = times[bounds[best]], times[bounds[best + 1] - 1]
    outside = valid & ((ts < low) | (ts > high))
    first = cut[0]
    stamp = "%Y-%m-%d %H:%M:%S"
    message = (
        f"the times jump from {pd.Timestamp(int(times[first]), tz='UTC'):{stamp}} to "
        f"{pd.Timestamp(int(times[first + 1]), tz='UTC'):{stamp}} UTC at line {{line}} "
        f"({len(cut)} jump{'s' if len(cut) > 1 else ''} of the clock, {len(times):,} samples about "
        f"{pd.Timedelta(usual)} apart over {pd.Timedelta(span).days:,} days: written twice, or a clock set "
        f"wrong); only {pd.Timestamp(int(low), tz='UTC'):{stamp}} to "
        f"{pd.Timestamp(int(high), tz='UTC'):{stamp}} "
        f"UTC is used, {int(outside.sum()):,} rows outside it are not"
    )
    return outside, message


def _refuse_negative_variables(source: ParsedSource) -> None:
    """Negative values of ``NON_NEGATIVE_VARIABLES`` in ``meta["variables"]`` removed, each with an
    ``impossible-value`` warning (a negative ``max_connections`` would read as a limit reached)."""
    variables = source.meta.get("variables")
    if not isinstance(variables, dict):
        return
    for name in NON_NEGATIVE_VARIABLES & variables.keys():
        value = str(variables[name]).strip()
        if value.startswith("-") and value[1:].replace(".", "", 1).isdigit():
            del variables[name]
            source.warnings.append(
                ParseWarning(0, "impossible-value", f"variable {name} = {value} cannot be negative: not used")
            )


def _say(source: ParsedSource, frame: pd.DataFrame, rows: np.ndarray, code: str, message: str) -> None:
    """One ``code`` warning about the ``rows`` (a mask) of ``frame``, at the first one's line, which
    ``message`` names where it says ``{line}``."""
    first = _first_line(frame, rows)
    source.warnings.append(ParseWarning(first, code, message.replace("{line}", str(first))))


def _first_line(frame: pd.DataFrame, mask: np.ndarray) -> int:
    if "line_no" not in frame or not mask.any():
        return 0
    return int(frame["line_no"].to_numpy()[np.flatnonzero(mask)[0]])


def _refuse_impossible(source: ParsedSource, name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Negative values, and percentages over 100, of ``frame``'s float columns made missing, with
    an ``impossible-value`` warning per column."""
    changed: dict[str, pd.Series] = {}
    traits = registry.traits(source.format)
    if not traits.unsigned:
        return frame
    for column, dtype in frame.dtypes.items():
        if column in SIGNED_COLUMNS or dtype.kind != "f" or not len(frame):
            continue
        values = frame[column]
        array = values.to_numpy()
        bad = array < 0
        what = "negative"
        if traits.capped_pct and PERCENT_COLUMNS.search(str(column)):
            bad |= array > 100.0 + 1e-6
            what = "negative or over 100 %"
        if bad.any():
            _say(
                source,
                frame,
                bad,
                "impossible-value",
                f"{name}.{column}: {int(bad.sum()):,} values {what} "
                f"(first at line {{line}}: {array[bad][0]:g}) cannot be: not used",
            )
            changed[column] = values.mask(bad)
    if changed:
        frame = frame.assign(**changed)
    return frame


_SURROGATES = re.compile("[\ud800-\udfff]")


def pg_safe(value: Any) -> Any:
    """``value`` (a str, or lists and dicts of them) as PostgreSQL can store it in a text or JSON
    column: NUL (which neither can hold) written as the visible ``\\x00``, lone surrogates (not
    UTF-8) as U+FFFD. Other values are returned as they are.

    >>> pg_safe({"a\\x00": ["x\\x00y", 1]})
    {'a\\\\x00': ['x\\\\x00y', 1]}
    """
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "\\x00")
        if not value.isascii():
            value = _SURROGATES.sub("\ufffd", value)
        return value
    if isinstance(value, list | tuple):
        return [pg_safe(v) for v in value]
    if isinstance(value, dict):
        return {pg_safe(k): pg_safe(v) for k, v in value.items()}
    return value
