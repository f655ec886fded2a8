"""Parse ``SHOW ENGINE INNODB MUTEX`` (pt-stalk ``-mutex-status1``/``-mutex-status2``): InnoDB latch waits.

Accepts:
    ``mysql -e`` batch output, header ``Type Name Status``; MySQL 5.7/8.0 and Percona Server
    (``rwlock: dict0dict.cc:2570 waits=77``; ``sum rwlock: buf0buf.cc:877 waits=2296`` for the sum of a
    latch's instances), MySQL 5.5/5.6 (``&dict->mutex os_waits=5``; ``spins=..,waits=..,calls=..``
    with innodb_status_output_locks); ``TS`` markers when present.

Sample input (pt-stalk 3.7.1 ``-mutex-status1``, Percona Server 8.0.42)::

    Type	Name	Status
    InnoDB	rwlock: dict0dict.cc:2570	waits=77
    InnoDB	rwlock: btr0sea.cc:211	waits=5
    InnoDB	sum rwlock: buf0buf.cc:877	waits=2296

Output:
    frame ``innodb_mutex`` (one row per latch line): ``ts`` datetime64[ns, UTC] (the marker's, else NaT;
    ``ts_source``), ``line_no`` int64, ``type`` str (``InnoDB``), ``name`` str (``rwlock:
    dict0dict.cc:2570``), ``waits`` int64 (``waits`` or ``os_waits``: OS waits since startup).
    ``meta["top"]``: the latches (file:line) with the most waits, summed over their lines.

Warnings: ``odd-line`` (a row whose status has no ``waits=``).

Errors: ``ParseError`` (member, line) when the first meaningful line is not the ``Type Name Status`` header.

Source: MySQL 8.4 Reference Manual, SHOW ENGINE (``SHOW ENGINE INNODB MUTEX``); pt-stalk ``collect()``.

>>> src = parse(["Type\\tName\\tStatus", "InnoDB\\trwlock: btr0sea.cc:211\\twaits=5"], member="m", clock=ClockHints())
>>> src.frames["innodb_mutex"][["name", "waits"]].values.tolist()
[['rwlock: btr0sea.cc:211', 5]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from parsers._snapshots import read_table
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseError, ParseWarning
from parsers.sensitive import SERVER

FORMAT = "mutex_status"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

_WAITS = re.compile(r"(?:^|,)\s*(?:os_)?waits=(\d+)")
#: Latches named in ``meta["top"]``.
TOP_LATCHES = 5


def sniff(head: list[str]) -> bool:
    """True when a head line is ``Type<TAB>Name<TAB>Status`` and the next names an engine."""
    return any(line == "Type\tName\tStatus" for line in head)


def _meta(frame: pd.DataFrame, markers: int) -> dict[str, object]:
    latch = frame["name"].str.replace(r"^(?:sum )?\w+: ", "", regex=True)
    top = frame.groupby(latch)["waits"].sum().sort_values(ascending=False).head(TOP_LATCHES)
    return {
        "variant": f"SHOW ENGINE INNODB MUTEX, {len(frame)} latch lines",
        "top": {str(k): int(v) for k, v in top.items()},
    }


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read SHOW ENGINE INNODB MUTEX into the ``innodb_mutex`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    header = False

    def row(no: int, text: str, line: str) -> tuple[tuple[object, ...], ...]:
        nonlocal header
        if text == "Type\tName\tStatus" or line.split() == ["Type", "Name", "Status"]:
            header = True
            return ()
        if not header:
            raise ParseError(member, no, line, "not SHOW ENGINE INNODB MUTEX: expected 'Type Name Status'")
        fields = line.split("\t")
        m = _WAITS.search(fields[-1]) if len(fields) == 3 else None
        if m is None:
            warnings.append(ParseWarning(no, "odd-line", f"no waits= in: {line[:80]!r}"))
            return ()
        return ((fields[0], fields[1], int(m[1])),)

    # pt-stalk runs it at the start and at the end of a collection (``-mutex-status1``/``2``), both
    # named with the start: without a marker the listing's time is unknown (NaT), not the start's.
    return read_table(
        stream,
        fmt=FORMAT,
        member=member,
        clock=ClockHints(),
        frame="innodb_mutex",
        columns={"type": "object", "name": "object", "waits": "int64"},
        row=row,
        meta=_meta,
        warnings=warnings,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SERVER  # numbers and names of the server only
