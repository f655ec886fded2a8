"""Parse ``/proc/slabinfo`` snapshots (pt-stalk ``-slabinfo``) into the size of each kernel slab cache.

Accepts:
    ``slabinfo - version: 2.1`` (kernels since 2.6.x, SLUB and SLAB) after ``TS`` markers (pt-stalk:
    ``(echo $ts; cat /proc/slabinfo)`` every second) or a single snapshot; the ``# name`` header line.

Sample input (pt-stalk 3.2.1 ``-slabinfo``, kernel 6.x)::

    TS 1795794782.915004006 2026-11-27 15:53:02
    slabinfo - version: 2.1
    # name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>
    dentry            189588 190323    192   21    1 : tunables    0    0    0 : slabdata   9063   9063      0

Output:
    frame ``slabinfo`` (one row per cache per snapshot): ``ts`` datetime64[ns, UTC] (``ts_source``),
    ``line_no`` int64, ``cache`` category, ``active_objs`` and ``num_objs`` int64, ``objsize_b``
    int64 (bytes), ``size_kib`` float64 (``num_slabs`` x ``pagesperslab`` x the page size, 4 KiB).

Warnings: ``odd-line`` (a row without the ``: slabdata`` part or with a field that is not a number).

Errors: ``ParseError`` (member, line) when the first meaningful line is not ``slabinfo - version``.

Source: slabinfo(5); kernel mm/slab_common.c (``print_slabinfo_header``).

>>> src = parse(["slabinfo - version: 2.1",
...   "dentry 189588 190323 192 21 1 : tunables 0 0 0 : slabdata 9063 9063 0"], member="s", clock=ClockHints())
>>> src.main[["cache", "num_objs", "size_kib"]].values.tolist()
[['dentry', 190323, 36252.0]]
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from parsers._snapshots import Snapshots, ts_column
from parsers.base import ClockHints, ParsedSource, ParseError, ParseWarning

FORMAT = "slabinfo"

#: slabinfo(5) counts slabs in pages; x86-64 and arm64 (4 K kernels) pages are 4 KiB.
PAGE_KIB = 4.0


def sniff(head: list[str]) -> bool:
    """True when a head line is ``slabinfo - version: N``."""
    return any(line.startswith("slabinfo - version:") for line in head)


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read slabinfo snapshots into the ``slabinfo`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    snaps = Snapshots(stream, clock)
    rows: list[tuple[object, ...]] = []
    started = False
    for no, ts, line in snaps:
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("slabinfo - version:"):
            started = True
            continue
        if not started:
            raise ParseError(member, no, line, "not /proc/slabinfo: expected 'slabinfo - version: 2.1'")
        head, _, rest = line.partition(": tunables")
        fields = head.split()
        slabdata = rest.partition(": slabdata")[2].split()
        try:
            active, num, size, _, pages = (int(x) for x in fields[1:6])
            slabs = int(slabdata[1])
        except (ValueError, IndexError):
            warnings.append(ParseWarning(no, "odd-line", f"not a slabinfo row: {line[:80]!r}"))
            continue
        rows.append((ts, no, fields[0], active, num, size, slabs * pages * PAGE_KIB))
    frame = pd.DataFrame(
        rows, columns=["ts", "line_no", "cache", "active_objs", "num_objs", "objsize_b", "size_kib"]
    )
    frame["ts"] = ts_column(list(frame["ts"]))
    frame = frame.astype({"line_no": "int64", "cache": "category", "active_objs": "int64",
                          "num_objs": "int64", "objsize_b": "int64", "size_kib": "float64"})  # fmt: skip
    frame.insert(1, "ts_source", "marker" if snaps.snapshots else "inferred")
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"slabinfo": frame},
        clock=snaps.clock,
        warnings=warnings,
        meta={
            "variant": f"/proc/slabinfo, {max(snaps.snapshots, 1)} snapshots, {frame['cache'].nunique()} caches"
        },
        ts_is_local=snaps.ts_is_local,
    )
