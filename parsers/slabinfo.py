"""Parse ``/proc/slabinfo`` snapshots (pt-stalk ``-slabinfo``) into the size of each kernel slab cache.

Accepts:
    ``slabinfo - version: 2.1`` (kernels since 2.6.x, SLUB and SLAB) after ``TS`` markers (pt-stalk:
    ``(echo $ts; cat /proc/slabinfo)`` every second) or a single snapshot; the ``# name`` header line.

Sample input (pt-stalk 3.2.1 ``-slabinfo``, kernel 6.x)::

    TS 1795794782.915004006 2026-11-27 15:53:02
    slabinfo - version: 2.1
    # name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit>
    # <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>
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
>>> src.frames["slabinfo"][["cache", "num_objs", "size_kib"]].values.tolist()
[['dentry', 190323, 36252.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers._snapshots import TS_DTYPE, ChunkedRows, source_frames, ts_column
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource
from parsers.sensitive import SYSTEM

FORMAT = "slabinfo"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

#: slabinfo(5) counts slabs in pages; x86-64 and arm64 (4 K kernels) pages are 4 KiB.
PAGE_KIB = 4.0


def sniff(head: list[str]) -> bool:
    """True when a head line is ``slabinfo - version: N``."""
    return any(line.startswith("slabinfo - version:") for line in head)


#: A slab cache row: name, active objects, objects, object size, pages per slab, then the slab count.
_ROW = re.compile(
    r"^(?!slabinfo |# )(\S+)[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t]+\d+[ \t]+(\d+)[ \t]*:[ "
    r"\t]*tunables[^:\n]*:"
    r"[ \t]*slabdata[ \t]+\d+[ \t]+(\d+)",
    re.M,
)


def _is_row(line: str) -> bool:
    """A line that should be a cache row (the ``# name`` header has ``: slabdata`` too)."""
    return ": slabdata" in line and not line.startswith("#")


def _count_rows(text: str) -> int:
    headers = text.count("\n# name") + text.startswith("# name")
    return text.count(": slabdata") - headers


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read slabinfo snapshots into the ``slabinfo`` frame; see the module docstring.

    One regex pass per chunk of snapshots (``parsers._snapshots.ChunkedRows``), typed by NumPy."""
    chunks = ChunkedRows(
        stream,
        clock,
        member=member,
        row=_ROW,
        is_row=_is_row,
        count_rows=_count_rows,
        head_ok=lambda line: line.startswith(("slabinfo - version:", "# name")),
        what="/proc/slabinfo: expected 'slabinfo - version: 2.1'",
    )
    parts = []
    for m in chunks:
        name, active, num, size, pages, slabs = zip(*m.groups, strict=True)
        parts.append(
            pd.DataFrame(
                {
                    "snap": m.snap,
                    "line_no": m.line_no,
                    "cache": pd.Categorical(name),
                    "active_objs": np.asarray(active, dtype="int64"),
                    "num_objs": np.asarray(num, dtype="int64"),
                    "objsize_b": np.asarray(size, dtype="int64"),
                    "size_kib": np.asarray(slabs, dtype="float64")
                    * np.asarray(pages, dtype="float64")
                    * PAGE_KIB,
                }
            )
        )
    if parts:
        frame = pd.concat(parts, ignore_index=True)
        frame["cache"] = frame["cache"].astype("category")
        times = pd.Series(chunks.times, dtype=TS_DTYPE)
        frame.insert(0, "ts", times.iloc[frame.pop("snap").to_numpy()].reset_index(drop=True))
    else:
        frame = pd.DataFrame(
            {
                "ts": ts_column([]),
                "line_no": pd.Series([], dtype="int64"),
                "cache": pd.Categorical([]),
                "active_objs": pd.Series([], dtype="int64"),
                "num_objs": pd.Series([], dtype="int64"),
                "objsize_b": pd.Series([], dtype="int64"),
                "size_kib": pd.Series([], dtype="float64"),
            }
        )
    frame.insert(1, "ts_source", "marker" if chunks.markers else "inferred")
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames=source_frames("slabinfo", frame),
        clock=chunks.clock,
        warnings=chunks.warnings,
        meta={
            "variant": (
                f"/proc/slabinfo, {max(chunks.markers, 1)} snapshots, {frame['cache'].nunique()} caches"
            )
        },
        ts_is_local=chunks.ts_is_local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
