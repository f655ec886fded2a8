"""Parse ``sysctl -a`` output (pt-stalk ``-sysctl``) into the kernel's settings, name -> value.

Accepts:
    procps-ng ``sysctl -a`` (``vm.swappiness = 60``; values with tabs, ``net.ipv4.tcp_rmem = 4096
    131072 6291456``; empty values ``kernel.domainname = (none)``) and ``sysctl -a -N``-less variants
    with ``name: value`` (BSD style); ``TS`` markers when present; ``sysctl: permission denied``
    lines (a non-root run) are skipped with a warning.

Sample input (pt-stalk 3.2.1 ``-sysctl``, procps-ng 4.0.2, kernel 6.x)::

    vm.dirty_background_ratio = 10
    vm.dirty_ratio = 20
    vm.swappiness = 60
    net.core.somaxconn = 4096

Output:
    frame ``sysctl`` (one row per setting): ``ts`` datetime64[ns, UTC] (the marker's, else the capture
    start, else NaT; ``ts_source``), ``line_no`` int64, ``name`` str, ``value`` str (as printed,
    whitespace runs kept as one space). ``meta["settings"]``: the values of ``WATCHED`` found.

Warnings: ``odd-line`` (a line that is not ``name = value``).

Errors: ``ParseError`` (member, line) when the first meaningful line is not ``name = value``.

Source: sysctl(8), procps-ng; kernel Documentation/admin-guide/sysctl/vm.rst and net.rst.

>>> src = parse(["vm.swappiness = 60", "net.ipv4.tcp_rmem = 4096\\t131072\\t6291456"], member="s", clock=ClockHints())
>>> src.frames["sysctl"][["name", "value"]].values.tolist()
[['vm.swappiness', '60'], ['net.ipv4.tcp_rmem', '4096 131072 6291456']]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from parsers._snapshots import read_table
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseError, ParseWarning
from parsers.sensitive import SYSTEM

FORMAT = "sysctl"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

_ROW = re.compile(r"^(?P<name>[A-Za-z0-9_][\w\-/]*(?:\.[\w\-/@:]+)+)\s*(?:=|:)\s?(?P<value>.*)$")
#: Settings the kernel-settings rule reads (lifted into ``meta`` for the case page).
WATCHED = (
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "vm.overcommit_memory",
    "vm.zone_reclaim_mode",
)
_KNOWN_PREFIXES = ("kernel.", "vm.", "net.", "fs.")


def sniff(head: list[str]) -> bool:
    """True when at least five head lines are ``name = value`` with a ``kernel.``/``vm.``/``net.``/``fs.``
    name."""
    hits = [m for line in head if (m := _ROW.match(line.strip())) and " = " in line]
    return len(hits) >= 5 and any(m["name"].startswith(_KNOWN_PREFIXES) for m in hits)


def _meta(frame: pd.DataFrame, markers: int) -> dict[str, object]:
    last = dict(zip(frame["name"], frame["value"], strict=True))
    return {
        "variant": f"sysctl -a, {len(last)} settings",
        "settings": {k: last[k] for k in WATCHED if k in last},
    }


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read ``sysctl -a`` into the ``sysctl`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    read = 0

    def row(no: int, text: str, line: str) -> tuple[tuple[object, ...], ...]:
        nonlocal read
        if text.startswith(("#", ";")):
            return ()
        m = _ROW.match(text)
        if m is None:
            if not read and not text.startswith("sysctl:"):
                raise ParseError(member, no, line, "not sysctl output: expected 'name = value'")
            warnings.append(ParseWarning(no, "odd-line", f"not 'name = value': {line[:80]!r}"))
            return ()
        read += 1
        return ((m["name"], " ".join(m["value"].split())),)

    return read_table(
        stream,
        fmt=FORMAT,
        member=member,
        clock=clock,
        frame="sysctl",
        columns={"name": "object", "value": "object"},
        row=row,
        meta=_meta,
        warnings=warnings,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
