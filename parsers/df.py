"""Parse ``df`` output (pt-stalk ``-df`` and ``-disk-space``) into per-mount space and inode use.

Accepts:
    ``df -k`` and ``df -P -k`` (header ``1K-blocks``/``1024-blocks``, ``Use%``/``Capacity``), ``df -h``
    (sizes with a K/M/G/T/P suffix, powers of 1024), ``df -i`` (``Inodes IUsed IFree IUse%``), with
    ``TS`` markers before each run (pt-stalk ``-df``: ``(echo $ts; df -k)`` every second) or a single
    run without them (pt-stalk ``-disk-space``: ``df -P -k $dest``); a file system name too long for
    its column printed alone on its line with the numbers on the next (GNU df without ``-P``); mount
    points with spaces; ``-`` for a count the file system does not keep (inodes of btrfs).

Sample input (pt-stalk 3.2.1 ``-df``, GNU coreutils 9.1)::

    TS 1795794782.915004006 2026-11-27 15:53:02
    Filesystem              1K-blocks     Used Available Use% Mounted on
    /dev/vda                264212084 25127164  81263748  24% /
    tmpfs                      131072   124524      6548  96% /tmp/hmembers/fs

Output:
    frame ``df`` (one row per mount per run): ``ts`` datetime64[ns, UTC] (the marker's, else the
    capture start, else NaT), ``ts_source`` (``marker`` or ``inferred``), ``line_no`` int64,
    ``filesystem`` str, ``mount`` str, ``size_kib``/``used_kib``/``avail_kib`` float64 (KiB; NaN in a
    ``df -i`` run), ``use_pct`` float64 (df's own rounded-up percentage), ``inodes``/``inodes_used``/
    ``inodes_free`` float64 and ``inodes_use_pct`` float64 (NaN in a space run or where df prints ``-``).

Warnings: ``odd-line`` (a row that does not have five fields after its file system name).

Errors: ``ParseError`` (member, line) when the first meaningful line is not a df header.

Source: df(1), GNU coreutils 9.1; POSIX ``df -P`` output format.

>>> src = parse(["Filesystem 1024-blocks Used Available Capacity Mounted on",
...              "tmpfs 131072 124524 6548 96% /var/lib/mysql"], member="d", clock=ClockHints())
>>> src.frames["df"][["mount", "use_pct", "avail_kib"]].values.tolist()
[['/var/lib/mysql', 96.0, 6548.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers._snapshots import read_table
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseError, ParseWarning
from parsers.sensitive import SYSTEM

FORMAT = "df"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

HEADER = re.compile(
    r"^Filesystem\s+(?P<size>1K-blocks|1024-blocks|512-blocks|Size|Inodes|\d+[KMGT]?-blocks)\s+"
    r"(?:Used|IUsed)\s+(?:Avail|Available|IFree)\s+(?:Use%|Capacity|IUse%)\s+Mounted on\s*$"
)
#: ``df -h`` suffixes, powers of 1024 (GNU df; ``-H`` powers of 1000 are not told apart from them).
_SUFFIX = {"": 1.0, "K": 1.0, "M": 1024.0, "G": 1024.0**2, "T": 1024.0**3, "P": 1024.0**4}
_SIZE = re.compile(r"^(?P<n>\d+(?:[.,]\d+)?)(?P<s>[KMGTP]?)i?$")
SPACE_COLUMNS = ("size_kib", "used_kib", "avail_kib", "use_pct")
INODE_COLUMNS = ("inodes", "inodes_used", "inodes_free", "inodes_use_pct")


def sniff(head: list[str]) -> bool:
    """True when a head line is a df header (``Filesystem 1K-blocks Used Available Use% Mounted on``)."""
    return any(HEADER.match(line.strip()) for line in head)


def _block_kib(kind: str) -> float:
    """KiB per count of a df size column: ``1K-blocks`` 1, ``512-blocks`` 0.5, ``1M-blocks`` 1024;
    ``Size`` (``-h``) and ``Inodes`` 1 (their numbers carry a suffix or are counts)."""
    m = re.match(r"^(\d+)([KMGT]?)-blocks$", kind)
    if m is None:
        return 1.0
    return int(m[1]) * (_SUFFIX[m[2]] if m[2] else 1 / 1024)


def _number(token: str, unit: float) -> float:
    """A df count in KiB (or inodes when ``unit`` is 1): ``-`` is NaN; ``1.5G`` read with its suffix.
    Raises ValueError on anything else."""
    if token == "-":
        return np.nan
    m = _SIZE.match(token)
    if m is None:
        raise ValueError(token)
    return float(m["n"].replace(",", ".")) * (_SUFFIX[m["s"]] if m["s"] else unit)


def _meta(frame: pd.DataFrame, markers: int) -> dict[str, object]:
    runs = max(markers, 1 if len(frame) else 0)
    return {"variant": f"df, {runs} run{'s' if runs != 1 else ''}, {frame['mount'].nunique()} mounts"}


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read df runs into the ``df`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    header: re.Match[str] | None = None
    pending: str | None = None  # a file system name alone on its line

    def row(no: int, text: str, line: str) -> tuple[tuple[object, ...], ...]:
        nonlocal header, pending
        if (m := HEADER.match(text)) is not None:
            header, pending = m, None
            return ()
        if header is None:
            raise ParseError(
                member, no, line, "not df output: expected the header 'Filesystem ... Mounted on'"
            )
        fields = text.split()
        if len(fields) == 1 and pending is None:
            pending = fields[0]
            return ()
        if pending is not None:
            fields, pending = [pending, *fields], None
        if len(fields) < 6 or not fields[4].endswith("%") and fields[4] != "-":
            warnings.append(ParseWarning(no, "odd-line", f"not a df row: {line[:80]!r}"))
            return ()
        inodes = header["size"] == "Inodes"
        try:
            numbers = [_number(t, 1.0 if inodes else _block_kib(header["size"])) for t in fields[1:4]]
            pct = np.nan if fields[4] == "-" else float(fields[4].rstrip("%"))
        except ValueError:
            warnings.append(ParseWarning(no, "odd-line", f"a df count is not a number: {line[:80]!r}"))
            return ()
        none = [np.nan] * 4
        values = [*none, *numbers, pct] if inodes else [*numbers, pct, *none]
        return ((fields[0], " ".join(fields[5:]), *values),)

    columns = {
        "filesystem": "object",
        "mount": "object",
        **dict.fromkeys((*SPACE_COLUMNS, *INODE_COLUMNS), "float64"),
    }
    return read_table(
        stream,
        fmt=FORMAT,
        member=member,
        clock=clock,
        frame="df",
        columns=columns,
        row=row,
        meta=_meta,
        warnings=warnings,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
