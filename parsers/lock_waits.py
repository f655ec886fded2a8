"""Parse pt-stalk ``-lock-waits``: who blocks whom in InnoDB, from INFORMATION_SCHEMA.INNODB_LOCK_WAITS.

Accepts:
    the two ``\\G`` queries pt-stalk runs every second (pt-stalk 3.x ``lock_waits()``): the summary
    (``who_blocks``, ``idle_in_trx``, ``max_wait_time``, ``num_waiters``) and the detail
    (``waiting_trx_id``, ``waiting_thread``, ``wait_time``, ``waiting_query``, ``waiting_table_lock``,
    ``blocking_trx_id``, ``blocking_thread``, ``blocking_host``, ``blocking_port``, ``idle_in_trx``,
    ``blocking_query``), with a ``TS`` marker before each snapshot or without (snapshots then start
    at each row 1 of the summary, timed from the collection start plus 1 s each). MySQL 5.6/5.7,
    Percona Server, MariaDB 10.x/11.x (which keep INNODB_LOCK_WAITS); MySQL 8.0 has no such table, so
    pt-stalk writes no ``-lock-waits`` there.

Sample input (pt-stalk 3.2.1 ``-lock-waits``, MariaDB 10.11, two sessions on one row)::

    *************************** 1. row ***************************
       who_blocks: thread 41 from localhost:50514
      idle_in_trx: 12
    max_wait_time: 3
      num_waiters: 1
    *************************** 1. row ***************************
        waiting_trx_id: 1082
        waiting_thread: 42
             wait_time: 3
         waiting_query: UPDATE t SET v = v + 1 WHERE id = 1

Output:
    ``lock_waits`` (one row per waiting transaction per snapshot): ``ts`` datetime64[ns, UTC],
    ``line_no``/``line_end`` int64, ``waiting_thread`` float64, ``wait_s`` float64 (seconds),
    ``waiting_query`` string, ``waiting_table`` string, ``blocking_thread`` float64,
    ``blocking_host`` string, ``idle_in_trx_s`` float64 (seconds the blocker has been idle in
    its transaction, 0 when it runs a statement), ``blocking_query`` string.
    ``lock_waits_summary``: ``who_blocks`` string, ``idle_in_trx_s``, ``max_wait_s``,
    ``num_waiters`` float64. ``meta``: ``snapshots``, ``variant``.

Warnings: ``assumed-interval``, ``no-start-time``, ``client-message``, ``stray-line``.

Errors: ``ParseError`` (member and line) when the first meaningful line is neither a ``\\G`` row nor
a marker, or a number column holds text.

>>> import pandas as pd
>>> src = parse(["*************************** 1. row ***", "waiting_trx_id: 9", "waiting_thread: 42",
...   "     wait_time: 3"], member="l", clock=ClockHints(start_local=pd.Timestamp("2026-11-25 10:00:00")))
>>> src.main[["waiting_thread", "wait_s"]].values.tolist()
[[42.0, 3.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from parsers import _vertical
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "lock_waits"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=True)

_DETAIL = {
    "waiting_thread": (("waiting_thread",), "float"),
    "wait_s": (("wait_time",), "float"),
    "waiting_query": (("waiting_query",), "str"),
    "waiting_table": (("waiting_table_lock",), "str"),
    "blocking_thread": (("blocking_thread",), "float"),
    "blocking_host": (("blocking_host",), "str"),
    "idle_in_trx_s": (("idle_in_trx",), "float"),
    "blocking_query": (("blocking_query",), "str"),
}
_SUMMARY = {
    "who_blocks": (("who_blocks",), "str"),
    "idle_in_trx_s": (("idle_in_trx",), "float"),
    "max_wait_s": (("max_wait_time",), "float"),
    "num_waiters": (("num_waiters",), "float"),
}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a ``\\G`` row with pt-stalk's lock-wait keys (``who_blocks`` or
    ``waiting_trx_id``)."""
    keys = {line.split(":", 1)[0].strip() for line in head if ":" in line}
    return any(_vertical.ROW_HEADER.match(line) for line in head) and bool(
        keys & {"who_blocks", "waiting_trx_id"}
    )


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read pt-stalk ``-lock-waits`` (lines of text) into ``lock_waits``; see the module docstring."""
    warnings: list[ParseWarning] = []
    v = _vertical.read(stream, member=member, clock=clock, warnings=warnings, what="lock-waits \\G output")
    detail = [r for r in v.records if "waiting_trx_id" in r.values]
    summary = [r for r in v.records if "who_blocks" in r.values]
    _vertical.number_check(
        v, detail, ("waiting_thread", "wait_time", "blocking_thread", "idle_in_trx"), member
    )
    _vertical.number_check(v, summary, ("idle_in_trx", "max_wait_time", "num_waiters"), member)
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={
            "lock_waits": _vertical.frame(v, detail, _DETAIL),
            "lock_waits_summary": _vertical.frame(v, summary, _SUMMARY),
        },
        clock=v.clock,
        warnings=warnings,
        meta={
            "snapshots": v.snapshots,
            "variant": f"pt-stalk lock_waits \\G, {len(detail)} waits in {v.snapshots} snapshots",
        },
        ts_is_local=v.ts_is_local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    statements=("lock_waits.waiting_query", "lock_waits.blocking_query"),
    hosts=("lock_waits.blocking_host",),
    statement_fields=frozenset({"waiting_query", "blocking_query"}),
    line_patterns=(
        re.compile(r"waiting_table_lock: `(?P<schema>[^`]+)`"),
        re.compile(r"who_blocks: thread \d+ from (?P<host>\[[^\]]+\]|[^\s:]+)"),
    ),
)
