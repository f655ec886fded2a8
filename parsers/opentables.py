"""Parse ``SHOW OPEN TABLES`` (pt-stalk ``-opentables1``/``-opentables2``): the tables in the table cache.

Accepts:
    ``mysql -e 'SHOW OPEN TABLES'`` batch output (tab-separated, header ``Database Table In_use
    Name_locked``), MySQL 5.x/8.x, Percona Server and MariaDB; ``TS`` markers when present; the
    table form (``mysql -t``, ``| test | sbtest1 | 1 | 0 |``).

Sample input (pt-stalk 3.2.1 ``-opentables1``, MariaDB 10.11.19)::

    Database	Table	In_use	Name_locked
    mysql	db	0	0
    app	t	1	0

Output:
    frame ``open_tables`` (one row per table of a listing): ``ts`` datetime64[ns, UTC] (the marker's, else
    NaT: pt-stalk's two listings carry no time of their own; ``ts_source``), ``line_no`` int64, ``database``
    str, ``table`` str, ``in_use`` int64 (table locks or lock requests on it), ``name_locked`` int64 (0 or 1).
    ``meta["tables"]``, ``meta["in_use"]``: open tables of the last listing, and those in use.

Warnings: ``odd-line`` (a row without four fields or with counts that are not numbers).

Errors: ``ParseError`` (member, line) when the first meaningful line is not the header.

Source: MySQL 8.4 Reference Manual, SHOW OPEN TABLES; pt-stalk ``open_tables()``.

>>> src = parse(["Database\\tTable\\tIn_use\\tName_locked", "app\\tt\\t2\\t0"], member="o", clock=ClockHints())
>>> src.frames["open_tables"][["database", "table", "in_use"]].values.tolist()
[['app', 't', 2]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from parsers._snapshots import read_table
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseError, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "opentables"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

_HEADER = re.compile(r"^\|?\s*Database\s*\|?\s*Table\s*\|?\s*In_use\s*\|?\s*Name_locked\s*\|?$")


def sniff(head: list[str]) -> bool:
    """True when a head line is the ``Database Table In_use Name_locked`` header."""
    return any(_HEADER.match(line.strip()) for line in head)


def _meta(frame: pd.DataFrame, markers: int) -> dict[str, object]:
    return {
        "variant": f"SHOW OPEN TABLES, {len(frame)} tables",
        "tables": len(frame),
        "in_use": int((frame["in_use"] > 0).sum()),
    }


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read SHOW OPEN TABLES into the ``open_tables`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    header = False

    def row(no: int, text: str, line: str) -> tuple[tuple[object, ...], ...]:
        nonlocal header
        if text.startswith("+-"):
            return ()
        if _HEADER.match(text):
            header = True
            return ()
        if not header:
            raise ParseError(
                member, no, line, "not SHOW OPEN TABLES: expected 'Database Table In_use Name_locked'"
            )
        fields = [f.strip() for f in text.strip("|").split("|")] if text.startswith("|") else line.split("\t")
        try:
            db, table, in_use, locked = fields
            return ((db, table, int(in_use), int(locked)),)
        except ValueError:
            warnings.append(ParseWarning(no, "odd-line", f"not a SHOW OPEN TABLES row: {line[:80]!r}"))
            return ()

    # pt-stalk runs it at the start and at the end of a collection (``-opentables1``/``2``), both
    # named with the start: without a marker the listing's time is unknown (NaT), not the start's.
    return read_table(
        stream,
        fmt=FORMAT,
        member=member,
        clock=ClockHints(),
        frame="open_tables",
        columns={"database": "object", "table": "object", "in_use": "int64", "name_locked": "int64"},
        row=row,
        meta=_meta,
        warnings=warnings,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(words=("mysql",), schemas=("open_tables.database",))
