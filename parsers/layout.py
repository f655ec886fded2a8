"""What a member's place in the bundle says about it: pt-stalk, OSWatcher and Casebook collector layouts.

The format of a member is always detected from its content; the layout only adds what the content
cannot say: the start time of a pt-stalk collection (its file-name prefix is the server's wall clock
when the collection started), the sampling interval, and the members that hold context in plain
text (``-hostname``, the collector's ``manifest.txt``).

pt-stalk (percona-toolkit, bin/pt-stalk ``collect()``) names files ``<prefix>-<suffix>`` with prefix
``date +%Y_%m_%d_%H_%M_%S`` and runs vmstat, iostat and mpstat at ``--sleep-collect`` (1 s).
OSWatcher writes ``archive/osw<tool>/<host>_<tool>_YY.MM.DD.HHMM.dat`` with ``zzz`` markers inside.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

import pandas as pd

from parsers.base import ParsedSource

PTSTALK_NAME = re.compile(r"^(?P<prefix>\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2})-(?P<suffix>[A-Za-z0-9_.-]+)$")
OSWATCHER_NAME = re.compile(
    r"_(?P<yy>\d{2})\.(?P<mm>\d{2})\.(?P<dd>\d{2})\.(?P<hh>\d{2})(?P<mi>\d{2})\.dat(?:\.\w+)?$"
)
#: pt-stalk's default --sleep-collect, the interval of its vmstat/iostat/mpstat runs.
PTSTALK_INTERVAL_S = 1.0
#: pt-stalk's -vmstat-overall is `vmstat $OPT_RUN_TIME 2`: its second line averages the whole run,
#: --run-time, 30 s by default.
PTSTALK_RUN_TIME_S = 30.0
COLLECTOR_MANIFEST = "manifest.txt"


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a member sits: ``layout`` (``pt-stalk``, ``oswatcher``, ``collector`` or ``loose``),
    its pt-stalk ``prefix``/``suffix``, and the naive wall-clock ``start_local`` its name implies."""

    layout: str
    start_local: pd.Timestamp | None = None
    interval_s: float | None = None
    prefix: str | None = None
    suffix: str | None = None


def place(name: str) -> Placement:
    """Read what the member's path says.

    >>> p = place("pt/2026_04_21_16_51_41-vmstat")
    >>> p.layout, str(p.start_local), p.suffix
    ('pt-stalk', '2026-04-21 16:51:41', 'vmstat')
    >>> place("archive/oswvmstat/db1_vmstat_12.02.29.1100.dat").layout
    'oswatcher'
    >>> place("notes.txt").layout
    'loose'
    """
    base = posixpath.basename(name)
    m = PTSTALK_NAME.match(base)
    if m:
        start = pd.to_datetime(m["prefix"], format="%Y_%m_%d_%H_%M_%S", errors="coerce")
        return Placement(
            "pt-stalk",
            start_local=None if pd.isna(start) else start,
            interval_s=PTSTALK_RUN_TIME_S if m["suffix"] == "vmstat-overall" else PTSTALK_INTERVAL_S,
            prefix=m["prefix"],
            suffix=m["suffix"],
        )
    m = OSWATCHER_NAME.search(base)
    if m and "osw" in name.lower():
        start = pd.to_datetime(f"20{m['yy']}-{m['mm']}-{m['dd']} {m['hh']}:{m['mi']}", errors="coerce")
        return Placement("oswatcher", start_local=None if pd.isna(start) else start)
    if base == COLLECTOR_MANIFEST:
        return Placement("collector")
    return Placement("loose")


def read_manifest(text: str) -> dict[str, str]:
    """Parse the collector's ``manifest.txt`` (``key: value`` lines) into a dict.

    >>> read_manifest("casebook_collector: 1\\nhostname: db1\\nutc_offset: +0200\\n")["utc_offset"]
    '+0200'
    """
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def offset_from_z(value: str) -> int | None:
    """``date +%z`` (``+0200``, ``-0530``) -> seconds east of UTC; None when malformed.

    >>> offset_from_z("+0545"), offset_from_z("-0300"), offset_from_z("CET")
    (20700, -10800, None)
    """
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", value.strip())
    if not m:
        return None
    seconds = int(m[2]) * 3600 + int(m[3]) * 60
    return seconds if m[1] == "+" else -seconds


#: Directory names that say nothing of a host (a bundle's own folders).
GENERIC_DIRS = frozenset({"logs", "log", "var", "mysql", "mysqld", "tmp", "errors", "error", "notes", "data"})
_DIR_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


def error_log_dirs(sources: list[ParsedSource]) -> None:
    """Several nodes' error logs side by side, one per directory (``db-a/mysqld.err``,
    ``db-b/mysqld.err``): each loose ``mysqld_errorlog`` source that names no host yet gets its
    directory's name as ``meta["host"]`` (with ``meta["host_origin"]``), when two or more sibling
    directories each hold one and their names could be host names. One directory alone, or a
    generic name (``logs/``, ``notes/``), names nothing. In place.

    >>> from parsers.base import Clock, ParsedSource
    >>> logs = [ParsedSource("mysqld_errorlog", f"b/{h}/mysqld.err", {}, Clock.PER_LINE) for h in ("db-a", "db-b")]
    >>> error_log_dirs(logs); [s.meta["host"] for s in logs]
    ['db-a', 'db-b']
    """
    logs = [
        s
        for s in sources
        if s.format == "mysqld_errorlog" and not s.meta.get("host") and place(s.member).layout == "loose"
    ]
    dirs = {posixpath.dirname(s.member) for s in logs}
    parents = {posixpath.dirname(d) for d in dirs if d}
    names = {posixpath.basename(d) for d in dirs}
    if len(dirs) < 2 or len(parents) != 1 or len(names) != len(dirs):
        return
    if any(not _DIR_HOST.match(n) or n.lower() in GENERIC_DIRS for n in names):
        return
    for s in logs:
        d = posixpath.basename(posixpath.dirname(s.member))
        s.meta["host"] = d
        s.meta["host_origin"] = (
            f"its directory {d}/ (one error log per sibling directory: a directory per node)"
        )
