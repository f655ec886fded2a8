"""What pt-summary and pt-mysql-summary reports share: ``# Title ####`` sections, ``name | value``
lines, the report's own time and pt's shortened sizes (``shorten``: ``16M``, ``128.0M``, ``3,2G``).

Both tools print a section header as ``# <title> `` padded with ``#`` to 60 columns, and a fact as its
name right-aligned to 12 columns (wider when the name is), `` | `` and the value (``name_val`` in
percona-toolkit 3.2.1's ``report_formatting`` package). Plain Python: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pandas as pd

from parsers.base import Clock, ParsedSource, ParseError, ParseWarning, empty_frame

#: A section header: ``# Processor ##################################################``.
SECTION = re.compile(r"^# (?P<title>\S.*?) ?#{3,}\s*$")
#: A fact: ``  Processors | physical = 1, cores = 2``; the name has no ``|`` and is not a table cell.
NAME_VAL = re.compile(r"^\s*(?P<name>[^|\s][^|]*?) \| ?(?P<value>.*)$")
#: The last section of a whole report.
END = "The End"
#: The report's time, as both tools print it (``date -u``): ``2026-12-07 02:13:09 UTC (local TZ: UTC +0000)``.
REPORT_TIME = re.compile(
    r"^(?P<utc>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) UTC\b(?: \(local TZ: (?P<zone>[^)]*)\))?"
)
#: A size as ``shorten`` prints it: a number (a decimal comma in some locales) and a 1024-based unit.
SIZE = re.compile(r"^(?P<number>\d+(?:[.,]\d+)?)(?P<unit>[kKMGTP]?)$")
UNITS = {"": 1, "k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


@dataclass(slots=True)
class Section:
    """One ``# title ###`` section: its header's line number and its lines as ``(line_no, text)``."""

    title: str
    line_no: int
    lines: list[tuple[int, str]] = field(default_factory=list)

    def facts(self) -> Iterator[tuple[int, str, str]]:
        """``(line_no, name, value)`` of each ``name | value`` line, the value's trailing blanks cut."""
        for no, text in self.lines:
            m = NAME_VAL.match(text)
            if m:
                yield no, m["name"].strip(), m["value"].rstrip()


def sections(stream: Iterable[str], *, member: str, header: str) -> list[Section]:
    """The sections of a report whose first non-blank line is the section ``header``.

    Raises ``ParseError`` (whole member) at the first non-blank line when it is not that header."""
    out: list[Section] = []
    for no, raw in enumerate(stream, start=1):
        line = raw.rstrip("\r\n")
        m = SECTION.match(line)
        if not out:
            if not line.strip():
                continue
            if not m or m["title"] != header:
                raise ParseError(member, no, line, f"not a report: expected '# {header} ###'", whole=True)
        if m:
            out.append(Section(m["title"], no))
        else:
            out[-1].lines.append((no, line))
    if not out:
        raise ParseError(member, 1, "", f"empty: no '# {header} ###' line", whole=True)
    return out


def sniff_header(head: list[str], header: str) -> bool:
    """Whether the first non-blank line of ``head`` is the section ``header``."""
    for line in head:
        if line.strip():
            m = SECTION.match(line.rstrip())
            return bool(m) and m["title"] == header
    return False


def report_time(value: str) -> tuple[str | None, str | None]:
    """(UTC time as ISO 8601 with ``Z``, the local zone as printed) of a ``Date`` / ``System time``
    value; (None, None) when it is not one.

    >>> report_time("2026-12-07 02:13:09 UTC (local TZ: CET +0100)")
    ('2026-12-07T02:13:09Z', 'CET +0100')
    """
    m = REPORT_TIME.match(value)
    if not m:
        return None, None
    return m["utc"].replace(" ", "T") + "Z", m["zone"]


def size_bytes(text: str) -> int | None:
    """Bytes of a size as pt's ``shorten`` prints it (rounded at its precision); None when ``text`` is not
    one.

    >>> size_bytes("256k"), size_bytes("128.0M"), size_bytes("3,2G"), size_bytes("64"), size_bytes("ON")
    (262144, 134217728, 3435973837, 64, None)
    """
    m = SIZE.match(text.strip())
    if not m:
        return None
    return round(float(m["number"].replace(",", ".")) * UNITS[m["unit"]])


def end_warnings(found: list[Section]) -> list[ParseWarning]:
    """A ``truncated`` warning when the report lacks its ``# The End ###`` section (cut short)."""
    if found and found[-1].title == END:
        return []
    last = found[-1].lines[-1][0] if found and found[-1].lines else (found[-1].line_no if found else 0)
    return [
        ParseWarning(last, "truncated", f"no '# {END} ###' section: the report was cut after line {last}")
    ]


def facts_frame(found: list[Section], skip: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every ``name | value`` line of the report (sections named in ``skip`` aside) as rows:
    ``ts`` (NaT: a report is no sample), ``line_no``, ``section``, ``name``, ``value``."""
    rows = [(no, s.title, name, value) for s in found if s.title not in skip for no, name, value in s.facts()]
    return untimed(rows, ("section", "name", "value"))


def untimed(rows: list[tuple[object, ...]], columns: tuple[str, ...]) -> pd.DataFrame:
    """``rows`` (``line_no`` first, then ``columns``) as a frame with a ``ts`` of NaT."""
    frame = pd.DataFrame(rows, columns=["line_no", *columns])
    if not len(frame):
        return empty_frame(**{c: "object" for c in columns})
    frame.insert(0, "ts", pd.Series(pd.NaT, index=frame.index, dtype="datetime64[ns, UTC]"))
    return frame.astype({"line_no": "int64"})


def source(
    fmt: str,
    member: str,
    frames: dict[str, pd.DataFrame],
    warnings: list[ParseWarning],
    meta: dict[str, object],
) -> ParsedSource:
    """The parsed report: an empty first frame (``untimed``: a report has no samples, so it widens
    no window and overlaps nothing), then ``frames``; its facts in ``meta``."""
    return ParsedSource(
        format=fmt,
        member=member,
        frames={"untimed": empty_frame(), **frames},
        clock=Clock.INFERRED,
        warnings=warnings,
        meta=meta,
    )
