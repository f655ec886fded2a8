"""Parse NUMA allocation counters (pt-stalk ``-numastat``) per node, with their rates.

Accepts:
    pt-stalk 3.5+ ``-numastat``: after each ``TS`` marker, a ``nodeN`` line then that node's
    ``/sys/devices/system/node/nodeN/numastat`` (``numa_hit 15058776462``); and the ``numastat``
    command's default table (numactl 2.x: a ``node0 node1 ...`` header, then ``numa_hit`` ... rows,
    one column per node), with or without markers.

Sample input (pt-stalk 3.7.1 ``-numastat``, two nodes)::

    TS 1776790303.009325313 2026-04-21 16:51:43
    node0
    numa_hit 15058776462
    numa_miss 0
    numa_foreign 34
    node1
    numa_hit 8749416504
    numa_miss 34

Output:
    frame ``numastat`` (one row per node and counter per snapshot): ``ts`` datetime64[ns, UTC]
    (``ts_source``), ``line_no`` int64, ``node`` int64, ``field`` str (``numa_hit``, ``numa_miss``,
    ``numa_foreign``, ``interleave_hit``, ``local_node``, ``other_node``), ``value`` float64 (pages
    since boot), ``per_s`` float64 (per second since the node's previous snapshot; NaN on the first).

Warnings: ``odd-line`` (a line that is neither ``nodeN``, ``name number`` nor a table row).

Errors: ``ParseError`` (member, line) when a counter comes before any node is named.

Source: numastat(8), numactl 2.0; kernel Documentation/admin-guide/numastat.rst.

>>> src = parse(["TS 1000000000", "node0", "numa_miss 5", "TS 1000000002", "node0", "numa_miss 25"],
...             member="n", clock=ClockHints())
>>> src.frames["numastat"][["node", "field", "per_s"]].values.tolist()[-1]
[0, 'numa_miss', 10.0]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers._snapshots import read_table
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseError, ParseWarning
from parsers.sensitive import SYSTEM

FORMAT = "numastat"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

_NODE = re.compile(r"^node(\d+)$")
_ROW = re.compile(r"^([a-z_]+)\s+(\d+(?:\.\d+)?)$")
_TABLE_HEAD = re.compile(r"^\s+node\d+(\s+node\d+)*\s*$")


def sniff(head: list[str]) -> bool:
    """True when the head has a ``nodeN`` line followed by ``numa_hit``, or a numastat table header."""
    for i, line in enumerate(head[:-1]):
        if _NODE.match(line.strip()) and head[i + 1].startswith("numa_hit"):
            return True
        if _TABLE_HEAD.match(line) and head[i + 1].startswith("numa_hit"):
            return True
    return False


def _rates(frame: pd.DataFrame) -> pd.DataFrame:
    """``per_s``: each counter's increase per second since the snapshot before (NaN for the first,
    or when it went back)."""
    frame = frame.sort_values(["node", "field", "ts"], kind="stable")
    step = frame.groupby(["node", "field"])["value"].diff()
    secs = frame.groupby(["node", "field"])["ts"].diff().dt.total_seconds()
    frame["per_s"] = np.where((secs > 0) & (step >= 0), step / secs, np.nan)
    return frame.sort_values(["ts", "line_no"], kind="stable").reset_index(drop=True)


def _meta(frame: pd.DataFrame, markers: int) -> dict[str, object]:
    return {"variant": f"numastat, {frame['node'].nunique()} nodes, {max(markers, 1)} snapshots"}


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read numastat snapshots into the ``numastat`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    node: int | None = None
    table: list[int] | None = None

    def row(no: int, text: str, line: str) -> list[tuple[object, ...]]:
        nonlocal node, table
        if m := _NODE.match(text):
            node, table = int(m[1]), None
            return []
        if _TABLE_HEAD.match(line):
            table = [int(t[4:]) for t in text.split()]
            return []
        if table is not None:
            fields = text.split()
            if len(fields) == len(table) + 1 and all(re.fullmatch(r"\d+(?:\.\d+)?", f) for f in fields[1:]):
                return [(n, fields[0], float(v)) for n, v in zip(table, fields[1:], strict=True)]
        m = _ROW.match(text)
        if m is None:
            warnings.append(ParseWarning(no, "odd-line", f"not a numastat line: {line[:80]!r}"))
            return []
        if node is None:
            raise ParseError(member, no, line, "not pt-stalk -numastat: a counter before any 'nodeN' line")
        return [(node, m[1], float(m[2]))]

    return read_table(
        stream,
        fmt=FORMAT,
        member=member,
        clock=clock,
        frame="numastat",
        columns={"node": "int64", "field": "object", "value": "float64"},
        row=row,
        meta=_meta,
        warnings=warnings,
        finish=_rates,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
