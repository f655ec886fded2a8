"""Parse pt-stalk's ``-output`` member (the log of one collection) for its loop start and end times.

Accepts:
    pt-stalk 2.2 to 3.7 ``<prefix>-output``: lines written by its ``log`` function, each prefixed
    with ``date +%F-%T | tr ':-' '_'`` (``2026_04_21_16_51_42 Loop start: TS 1776790302.611835653
    2026-04-21 16:51:42``), mixed with whatever the collectors printed on stderr (``mysqladmin``
    help text, ``ERROR 1146 ...``, ``./pt-stalk: line 881: lsof: command not found``), which is
    ignored. ``Loop start:``/``Loop end:`` lines with or without the ``TS`` part.

Sample input (pt-stalk 3.7.1 ``-output``)::

    ./pt-stalk: line 881: lsof: command not found
    2026_04_21_16_51_42 The MySQL error log seems to be /var/log/mysqld.log
    /bin/mysqladmin  Ver 8.0.42-33 for Linux on x86_64 (Percona Server (GPL), Release 33, Revision 9dc49998)
    2026_04_21_16_51_42 Loop start: TS 1776790302.611835653 2026-04-21 16:51:42
    2026_04_21_16_52_12 Loop end: TS 1776790332.081880744 2026-04-21 16:52:12
    2026_04_21_16_52_12 Waiting up to 30 seconds for subprocesses to finish...

Output:
    frame ``ptstalk_output``: empty (``ts`` datetime64[ns, UTC], ``line_no`` int64): a context source.
    ``meta["loop_starts"]`` / ``meta["loop_ends"]``: the server's wall-clock times, ISO strings
    (``2026-04-21T16:51:42``), from the ``TS`` part or else from the log prefix;
    ``meta["loop_starts_utc"]``: ISO UTC times from the ``TS`` epochs; ``meta["utc_offset_s"]``: the
    server's UTC offset (seconds, local = UTC + offset) from the first ``TS`` part that has both.
    ``clock``: ``ts-marker`` when a ``TS`` part was read, else ``inferred``.
    ``meta["errors"]``: how many lines the collectors printed as errors (``ERROR 1146 ...``, ``...:
    command not found``, ``Can't connect ...``, pt-stalk's own ``Too many open tables``);
    ``meta["first_errors"]``: the first ``FIRST_ERRORS`` of them (``line N: text``); both in ``variant``.

Warnings:
    ``odd-line``: a ``Loop start``/``Loop end`` line whose time cannot be read.

Errors:
    ``ParseError`` (line 1) when the member has lines but none carries pt-stalk's log prefix.

>>> src = parse(["2026_04_21_16_51_42 Loop start: TS 1776790302.611835653 2026-04-21 16:51:42"],
...             member="o", clock=ClockHints())
>>> src.meta["loop_starts"], src.meta["utc_offset_s"]
(['2026-04-21T16:51:42'], 0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from parsers.base import (
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    parse_ts_line,
)
from parsers.sensitive import Sensitive

FORMAT = "ptstalk_output"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

#: pt-stalk's ``ts()``: ``date +%F-%T | tr ':-' '_'`` then the message.
_LOG = re.compile(r"^(?P<prefix>\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}) (?P<msg>.*)$")
_LOOP = re.compile(r"^Loop (?P<what>start|end):?\s*(?P<ts>TS .*)?$")
#: What a collector printed on stderr when it failed (mysql/mysqladmin client errors, a missing tool).
_ERROR = re.compile(
    r"^ERROR \d+|command not found|Can't connect|unable to |Too many open tables|error:", re.I
)
#: Error lines quoted in ``meta`` (the case page shows them with the source).
FIRST_ERRORS = 3
#: Messages pt-stalk's collect() logs early in every run; one of them in the head makes the sniff.
_KNOWN = (
    "Loop start",
    "Loop end",
    "The MySQL error log seems to be",
    "Could not find the MySQL error log",
    "Waiting up to",
    "Performance Schema instrumentation is disabled",
    "Removing empty file",
)


def sniff(head: list[str]) -> bool:
    """True when a head line is a pt-stalk log line (``YYYY_MM_DD_HH_MM_SS <known message>``)."""
    for line in head:
        m = _LOG.match(line)
        if m and m["msg"].startswith(_KNOWN):
            return True
    return False


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a pt-stalk ``-output`` log (lines of text): loop times in ``meta``, empty main frame.

    Raises ``ParseError`` when no line carries pt-stalk's log prefix.
    """
    warnings: list[ParseWarning] = []
    found = {"start": [], "end": []}
    starts_utc: list[str] = []
    offset: int | None = None
    logged = False
    lines_read = 0
    errors: list[str] = []
    for no, raw in enumerate(stream, start=1):
        lines_read = no
        m = _LOG.match(raw.rstrip("\r\n")) if raw[:1].isdigit() else None
        text = m["msg"] if m is not None else raw.strip()
        if _ERROR.search(text):
            errors.append(f"line {no}: {text[:160]}")
        if m is None:
            continue
        logged = True
        loop = _LOOP.match(m["msg"])
        if loop is None:
            continue
        wall: pd.Timestamp | None = None
        if loop["ts"]:
            marker = parse_ts_line(loop["ts"])
            if marker is None:
                warnings.append(ParseWarning(no, "odd-line", f"unreadable TS part: {loop['ts'][:80]!r}"))
            else:
                wall = marker.wall
                if loop["what"] == "start":
                    starts_utc.append(marker.utc.tz_convert(None).isoformat())
                if offset is None:
                    offset = marker.utc_offset_s
        if wall is None:
            wall = pd.to_datetime(m["prefix"], format="%Y_%m_%d_%H_%M_%S")
        found[loop["what"]].append(wall.isoformat())
    if lines_read and not logged:
        raise ParseError(member, 1, "", "no pt-stalk log line ('YYYY_MM_DD_HH_MM_SS message')")
    meta: dict[str, object] = {"loop_starts": found["start"], "loop_ends": found["end"]}
    if starts_utc:
        meta["loop_starts_utc"] = starts_utc
    if offset is not None:
        meta["utc_offset_s"] = offset
    loops = len(found["start"])
    meta["errors"] = len(errors)
    meta["first_errors"] = errors[:FIRST_ERRORS]
    meta["variant"] = f"pt-stalk -output, {loops} loop{'s' if loops != 1 else ''}, " + (
        "Loop lines with TS epochs" if starts_utc else "no TS on Loop lines (pt-stalk < 3)"
    )
    if errors:
        meta["variant"] += f"; {len(errors)} collector error line(s), first: {errors[0][:80]}"
    frame = pd.DataFrame(
        {"ts": pd.Series([], dtype="datetime64[ns, UTC]"), "line_no": pd.Series([], dtype="int64")}
    )
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={FORMAT: frame},
        clock=Clock.TS_MARKER if starts_utc else Clock.INFERRED,
        warnings=warnings,
        meta=meta,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(words=("linux", "mysql"))  # numbers, and names of the system and the server
