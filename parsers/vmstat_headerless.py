"""Parse ``vmstat -w -t`` rows pasted without their two header lines (a ticket note, a chat message).

Accepts:
    rows of procps-ng ``vmstat -w -t`` (or ``-t``) with no ``procs ---memory---`` / ``r b swpd``
    header: 17 numbers (procps-ng 3: ``r b swpd free buff cache si so bi bo in cs us sy id wa st``) or
    18 (procps-ng 4 adds ``gu``), then ``YYYY-MM-DD HH:MM:SS``; prose or ``#`` lines around them
    are skipped with a warning each (as the vmstat parser does).

Sample input (procps-ng 4.0.2 ``vmstat -w -t 1 3``, header lines left out by whoever pasted it)::

       8    0            0     17401652        39652      5464328    0    0  2055  6475  590 1482  72  11  16   0   0   0 2026-11-25 17:54:50
      11    0            0     17401652        39652      5464328    0    0 11900    44 1468 7525  87  13   0   0   0   0 2026-11-25 17:54:51

Output: the ``vmstat`` frame of ``parsers.vmstat`` (``FORMAT`` of the result is ``vmstat``), times
read as the server's wall clock (``ts_is_local``: the header that names the zone is missing).
Warnings: ``no-header`` (the columns assumed), and those of ``parsers.vmstat``.
Errors: ``ParseError`` from ``parsers.vmstat`` (member and line, numbered as in the member).

>>> src = parse(["   8    0   0  17401652  39652  5464328    0    0  2055  6475  590 1482  72  11  16   0   0   0 "
...              "2026-11-25 17:54:50"], member="note", clock=ClockHints())
>>> src.format, src.main[["line_no", "r", "us"]].values.tolist(), src.warnings[0].code
('vmstat', [[1, 8, 72]], 'no-header')
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from parsers import vmstat
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import SYSTEM

FORMAT = "vmstat_headerless"
TRAITS = FormatTraits(short_lines=True, unsigned=True, capped_pct=True, blocks=Blocks.NONE, markers=False)

_ROW = re.compile(r"^\s*\d+(?:\s+\d+){16,17}\s+\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}:\d{2}\s*$")
#: The two header lines procps-ng prints for ``vmstat -w -t``; the zone name is not known ("LOCAL").
_BANNER = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- -------cpu------- -----timestamp-----"
)
_COLUMNS = {
    17: " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st   LOCAL",
    18: " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st gu   LOCAL",
}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds two or more ``vmstat -t`` rows and no vmstat header."""
    return sum(1 for line in head if _ROW.match(line)) >= 2 and not vmstat.sniff(head)


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """The rows parsed by ``parsers.vmstat`` under the header they were printed with; line numbers
    are the member's. Raises ``ParseError`` as ``parsers.vmstat`` does."""
    lines = [line.rstrip("\r\n") for line in stream]
    first = next((line for line in lines if _ROW.match(line)), "")
    numbers = len(first.split()) - 2
    header = [_BANNER, _COLUMNS.get(numbers, _COLUMNS[18])]
    source = vmstat.parse([*header, *lines], member=member, clock=clock)
    frames = {}
    for name, frame in source.frames.items():
        frame = frame.copy()
        if "line_no" in frame:
            frame["line_no"] = frame["line_no"] - len(header)
        frames[name] = frame
    columns = _COLUMNS.get(numbers, _COLUMNS[18]).split()[:-1]
    warnings = [
        ParseWarning(
            0,
            "no-header",
            (
                f"no vmstat header: the {numbers} columns of vmstat -w -t assumed "
                f"({' '.join(columns)}, date, time), times read as the server's local "
                "time"
            ),
        ),
        *(dataclasses.replace(w, line_no=max(w.line_no - len(header), 0)) for w in source.warnings),
    ]
    meta = {**source.meta, "variant": f"{source.meta.get('variant', 'vmstat')}, pasted without its header"}
    return dataclasses.replace(source, format="vmstat", frames=frames, warnings=warnings, meta=meta)


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
