"""A capture cut at a line end inside its last block: told by the block, for the block formats.

A member whose last line has no line end was cut short (``parsers.damage.truncation_warning``). One
cut exactly at a line end looks whole line by line; a format made of blocks (a snapshot of rows per
sample: iostat, mpstat, /proc/interrupts, meminfo, mysqladmin, a processlist, ps ...) still tells
it by its last block: a header, a record's start or a marker with nothing after it, fewer rows than
every block before it, a processlist record without its last field. ``truncated_block`` says so
with a ``truncated`` warning (parsers/ingest/pieces.py asks it of every member's last piece).

Plain Python, NumPy and pandas: parse processes import it without Django.
"""

from __future__ import annotations

import re

import numpy as np

from parsers import registry
from parsers.base import Blocks, ParsedSource, ParseWarning, count_newlines
from parsers.damage import quote

#: The last block of a format of ``Blocks.VARYING_ROWS`` (processes, threads) is said cut only when it
#: has less than this share of the smallest block before it (a cut mid-block loses half of it, on
#: average; processes that end, a few). A processlist's sessions come and go too (a last snapshot of
#: one session after snapshots of five is a whole one): its last record is looked at instead
#: (``Blocks.RECORDS``, ``_record_cut``).
VARIABLE_BLOCK_SHARE = 0.6
#: Words that start a block's header line, once a leading time of day (or sysstat's ``Average:``)
#: is set aside: iostat
#: (``Device``, ``avg-cpu:``), mpstat and /proc/interrupts (``CPU``, ``CPU0``), ps and top
#: (``PID``, ``UID``, ``USER``, ``F``); besides, a processlist's record (``***...*** N. row ***...***``)
#: and a table's top border or header (mysqladmin's ``| Variable_name | Value |``).
HEADER_WORDS = frozenset({"Device", "Device:", "avg-cpu:", "CPU", "CPU0", "PID", "UID", "USER", "F"})
_TIME_OF_DAY = re.compile(r"^(?:\d{1,2}:\d{2}:\d{2}(?:\s+[AP]M)?|Average:)\s+")
_RECORD = re.compile(r"^\*{5,} \d+\. row \*{5,}$")
_RECORDS = re.compile(r"^\*{5,} \d+\. row \*{5,}$", re.M)
_FIELD = re.compile(r"^\s*(\w+): ", re.M)


def _content_end(text: str, end: int) -> int:
    """The length of ``text[:end].rstrip()``, found from the end without copying the text (a piece of
    several MB)."""
    window = 256
    while end:
        start = max(end - window, 0)
        kept = len(text[start:end].rstrip())
        if kept:
            return start + kept
        end, window = start, window * 4
    return 0


def _last_line(text: str, end: int | None = None) -> str:
    """The last line of ``text[:end]`` that is not blank, stripped (an empty string when there is none)."""
    end = _content_end(text, len(text) if end is None else end)
    return text[text.rfind("\n", 0, end) + 1 : end].strip()


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of ``pattern`` (of one line, anchored at its start) in ``text``, searched in
    windows from the end that grow."""
    window = 1 << 16
    while True:
        start = max(len(text) - window, 0)
        match = None
        for match in pattern.finditer(text, start):  # noqa: B007 - the last one is kept
            pass
        if match is not None or not start:
            return match
        window *= 4


def truncated_block(source: ParsedSource, text: str) -> ParseWarning | None:
    """A ``truncated`` warning when ``text`` (the last piece of a member of a format made of blocks,
    ``FormatTraits.blocks``, which ends with a whole line, parsed as ``source``; line numbers of ``text``) was
    cut at a line end inside its last block: its last line is a header or a snapshot marker with no
    row after it, or the rows of its last sample in the main frame are fewer than those of every
    sample before it (of at least two; for ``Blocks.VARYING_ROWS``, fewer than
    ``VARIABLE_BLOCK_SHARE`` of the fewest, with no warning about a line of it and no table's
    bottom border after it); a processlist, when its last record lacks the last
    field of its first one (``_record_cut``); an iostat, when its last sample has its CPU report
    and no device (``_devices_missing``). None when nothing says so (a cut between two blocks,
    or between two records, looks like a shorter capture)."""
    blocks = registry.traits(source.format).blocks
    if blocks is Blocks.NONE:
        return None
    lines = count_newlines(text) + (0 if text.endswith("\n") else 1)
    last = _last_line(text)
    words = _TIME_OF_DAY.sub("", last).split()
    before = _last_line(text, _content_end(text, len(text)) - len(last))
    header = bool(words) and (words[0] in HEADER_WORDS or words[:2] == ["|", "Variable_name"])
    table_top = last.startswith("+-") and before.startswith("+-")  # a table's bottom, then the next one's top
    if last.startswith(("TS ", "zzz ")) or _RECORD.match(last) or header or table_top:
        return ParseWarning(
            lines,
            "truncated",
            f"the member ends with line {lines} {quote(last)}, a block's start with nothing after it: "
            "the capture was cut short in its last block",
        )
    if blocks is Blocks.RECORDS:
        return _record_cut(text, lines)
    if last.startswith("+-"):  # a table's bottom border: the last table is whole
        return None
    if blocks is Blocks.DEVICES:
        return _devices_missing(source, lines)
    return _fewer_rows(source, lines, varying=blocks is Blocks.VARYING_ROWS)


def _fewer_rows(source: ParsedSource, lines: int, *, varying: bool) -> ParseWarning | None:
    """The row count rule of ``truncated_block``: the last sample of the main frame has fewer rows
    than each one before it (see there)."""
    frame = next((f for f in source.frames.values() if "ts" in f and len(f)), None)
    if frame is None or frame["ts"].hasnans:
        return None
    ts = frame["ts"].to_numpy(dtype="datetime64[ns]").view("int64")
    starts = np.flatnonzero(np.r_[True, ts[1:] != ts[:-1]])
    sizes = np.diff(np.r_[starts, len(ts)])
    if len(sizes) < 3:
        return None
    fewest = int(sizes[:-1].min())
    limit = fewest * VARIABLE_BLOCK_SHARE if varying else fewest
    if sizes[-1] >= limit:
        return None
    line = int(frame["line_no"].iloc[starts[-1]]) if "line_no" in frame else lines
    if any(w.line_no >= line for w in source.warnings):  # a damaged line in the block: its rows explained
        return None
    return ParseWarning(
        line,
        "truncated",
        f"the last block (from line {line}) has {int(sizes[-1]):,} rows where each block before it has "
        f"at least {fewest:,}: the capture was cut short in its last block",
    )


def _record_cut(text: str, lines: int) -> ParseWarning | None:
    """A ``truncated`` warning when the last ``\\G`` record of a processlist ``text`` lacks the last
    field its first record has (``Info``, ``Progress`` ...: the fields of SHOW FULL PROCESSLIST come in
    one order); a statement over several lines does not count as fields."""
    head, tail = _RECORDS.search(text), _last_match(_RECORDS, text)
    if head is None or tail is None or tail.start() == head.start():
        return None
    records = [head.end(), tail.end()]
    first = _FIELD.findall(text, records[0], text.find("\n***", records[0]) + 1 or len(text))
    last = _FIELD.findall(text, records[-1])
    if not first or first[-1] in last:
        return None
    line = text.count("\n", 0, records[-1]) + 1
    return ParseWarning(
        line,
        "truncated",
        f"the last record (line {line}) ends after its {last[-1] if last else 'header'} field, without "
        f"{first[-1]}: the capture was cut short in its last block",
    )


def _devices_missing(source: ParsedSource, lines: int) -> ParseWarning | None:
    """A ``truncated`` warning when an iostat's last sample has its ``avg-cpu`` report (the
    ``iostat_cpu`` frame) but no device row (the ``iostat`` frame ends at an earlier time): cut
    after its CPU values, before its devices. Otherwise the row count rule of ``truncated_block``."""
    devices, cpu = source.frames.get("iostat"), source.frames.get("iostat_cpu")
    if devices is None or cpu is None or not len(devices) or not len(cpu) or "ts" not in cpu:
        return _fewer_rows(source, lines, varying=False)
    if cpu["ts"].max() <= devices["ts"].max():
        return _fewer_rows(source, lines, varying=False)
    line = int(cpu["line_no"].iloc[-1]) if "line_no" in cpu else lines
    return ParseWarning(
        line,
        "truncated",
        f"the last sample (line {line}) has its CPU report and no device: the capture was cut short in "
        "its last block",
    )
