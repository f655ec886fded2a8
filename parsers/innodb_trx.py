"""Parse pt-stalk ``-transactions``: ``information_schema.INNODB_TRX`` snapshots (and, from pt-stalk
3.2, the ``INNODB_LOCKS`` and ``INNODB_LOCK_WAITS`` rows that follow them).

Accepts:
    ``mysql -e "SELECT SQL_NO_CACHE * FROM INFORMATION_SCHEMA.INNODB_TRX ORDER BY trx_id\\G"``
    output, with a ``TS`` marker before each snapshot (pt-stalk 3.5+) or without (pt-stalk 3.2:
    a row 1 of INNODB_TRX starts a snapshot, timed from the collection start plus 1 s each);
    MySQL 5.6/5.7/8.0/8.4, Percona Server (``trx_schedule_weight`` 8.0.20+), MariaDB 10.x/11.x
    (``trx_mysql_thread_id`` as in MySQL; ``INNODB_LOCKS`` still present). Multi-line ``trx_query``.

Sample input (pt-stalk 3.7.1 ``-transactions``, Percona Server 8.0.42)::

    TS 1776790303.009325313 2026-04-21 16:51:43
    *************************** 1. row ***************************
                        trx_id: 68943
                     trx_state: RUNNING
                   trx_started: 2026-04-21 16:51:42
         trx_requested_lock_id: NULL
              trx_wait_started: NULL
           trx_mysql_thread_id: 1112
                     trx_query: UPDATE sbtest3 SET k=k+1 WHERE id=792023
           trx_operation_state: starting index read
              trx_lock_structs: 1
               trx_rows_locked: 0
             trx_rows_modified: 0

Output:
    ``innodb_trx`` (one row per transaction per snapshot): ``ts`` datetime64[ns, UTC] (the
    snapshot's marker), ``line_no``/``line_end`` int64, ``trx_id`` string, ``state`` string
    (RUNNING, LOCK WAIT, ROLLING BACK, COMMITTING), ``active_s`` float64 (seconds since
    ``trx_started``, on the server's wall clock of the snapshot; NaN without one), ``wait_s``
    float64 (seconds since ``trx_wait_started``; NaN when not waiting), ``thread_id`` float64
    (processlist Id), ``query`` string, ``operation`` string, ``lock_structs``, ``rows_locked``,
    ``rows_modified``, ``tables_locked`` float64, ``isolation`` string.
    ``innodb_lock_waits_raw``: ``requesting_trx_id``, ``blocking_trx_id`` (strings) per snapshot.
    ``meta``: ``snapshots``, ``variant``.

Warnings: ``assumed-interval``, ``no-start-time``, ``client-message``, ``stray-line``.

Errors: ``ParseError`` (member and line) when the first meaningful line is not a ``\\G`` row or a
marker, or when a counter column holds something other than a number or NULL.

>>> src = parse(["TS 1776790303.0 2026-04-21 16:51:43", "*************************** 1. row ***",
...   "             trx_id: 68943", "          trx_state: RUNNING",
...   "        trx_started: 2026-04-21 16:50:43", "trx_mysql_thread_id: 1112"], member="t", clock=ClockHints())
>>> src.main[["trx_id", "active_s"]].values.tolist()
[['68943', 60.0]]
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers import _vertical
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "innodb_trx"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=True)

_COLUMNS = {
    "trx_id": (("trx_id",), "str"),
    "state": (("trx_state",), "str"),
    "thread_id": (("trx_mysql_thread_id",), "float"),
    "query": (("trx_query",), "str"),
    "operation": (("trx_operation_state",), "str"),
    "lock_structs": (("trx_lock_structs",), "float"),
    "rows_locked": (("trx_rows_locked",), "float"),
    "rows_modified": (("trx_rows_modified",), "float"),
    "tables_locked": (("trx_tables_locked",), "float"),
    "isolation": (("trx_isolation_level",), "str"),
}
_NUMBERS = (
    "trx_mysql_thread_id",
    "trx_lock_structs",
    "trx_rows_locked",
    "trx_rows_modified",
    "trx_tables_locked",
)
_WAIT_COLUMNS = {
    "requesting_trx_id": (("requesting_trx_id",), "str"),
    "blocking_trx_id": (("blocking_trx_id",), "str"),
}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a ``\\G`` row of INNODB_TRX (``trx_id:`` then ``trx_state:``), or
    of pt-stalk 3.2's INNODB_LOCKS / INNODB_LOCK_WAITS (``lock_trx_id:``, ``requesting_trx_id:``)
    with no pt-stalk ``-lock-waits`` key (``who_blocks``, ``waiting_trx_id``)."""
    keys = {line.split(":", 1)[0].strip() for line in head if ":" in line}
    if keys & {"who_blocks", "waiting_trx_id"}:
        return False
    row = any(_vertical.ROW_HEADER.match(line) for line in head)
    return row and ({"trx_id", "trx_state"} <= keys or "lock_trx_id" in keys or "requesting_trx_id" in keys)


def _seconds_since(values: pd.Series, walls: list[pd.Timestamp | None]) -> np.ndarray:
    stamps = pd.to_datetime(values, errors="coerce", format="%Y-%m-%d %H:%M:%S")
    wall = pd.to_datetime(pd.Series(walls, dtype="object"))
    return (wall - stamps).dt.total_seconds().to_numpy(dtype="float64", na_value=np.nan)


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read INNODB_TRX snapshots (lines of text) into ``innodb_trx``; see the module docstring."""
    warnings: list[ParseWarning] = []
    v = _vertical.read(stream, member=member, clock=clock, warnings=warnings, what="INNODB_TRX \\G output")
    trx = [r for r in v.records if "trx_id" in r.values]
    waits = [r for r in v.records if "requesting_trx_id" in r.values]
    _vertical.number_check(v, trx, _NUMBERS, member)
    main = _vertical.frame(v, trx, _COLUMNS)
    walls = [_vertical.wall_of(v, r.snapshot) for r in trx]
    started = pd.Series([r.values.get("trx_started") for r in trx], dtype="object")
    waited = pd.Series([r.values.get("trx_wait_started") for r in trx], dtype="object")
    main.insert(5, "active_s", _seconds_since(started, walls))
    main.insert(6, "wait_s", _seconds_since(waited, walls))
    frames = {"innodb_trx": main, "innodb_lock_waits_raw": _vertical.frame(v, waits, _WAIT_COLUMNS)}
    extra = (
        " with INNODB_LOCKS/LOCK_WAITS (pt-stalk 3.2)"
        if any("lock_trx_id" in r.values for r in v.records)
        else ""
    )
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames=frames,
        clock=v.clock,
        warnings=warnings,
        meta={
            "snapshots": v.snapshots,
            "variant": f"INNODB_TRX \\G, {len(trx)} transaction rows in {v.snapshots} snapshots{extra}",
            **({"utc_offset_s": v.utc_offset_s} if v.utc_offset_s is not None else {}),
        },
        ts_is_local=v.ts_is_local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    statements=("innodb_trx.query",),
    statement_fields=frozenset({"trx_query"}),
)
