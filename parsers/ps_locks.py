"""Parse pt-stalk ``-ps-locks-transactions``: performance_schema's metadata locks (who holds, who waits).

Accepts:
    the output of pt-stalk 3.x ``ps_locks_transactions()``: every second, four ``\\G`` queries each
    after its echoed statement (``select t.processlist_id, ml.* from performance_schema.metadata_locks
    ml join performance_schema.threads t ...``, then ``table_handles``, ``events_transactions_current``
    and ``events_transactions_history_long``), with or without ``TS`` markers; the collector's
    ``ps-locks.txt`` (scripts/collect.sh: every interval a ``TS`` line, the same metadata_locks
    statement echoed, its ``\\G`` rows); or the line ``Performance schema is not enabled``. MySQL
    5.7/8.0/8.4 and Percona Server (pt-stalk writes the member there), MariaDB 10.5+ (same table and
    columns). Only the metadata locks are read: each ``TS`` marker, else each echoed metadata_locks
    statement, starts a snapshot.

Sample input (pt-stalk 3.2.1's queries run against MariaDB 10.11.19, an ALTER waiting behind an
idle transaction; tests/fixtures/ps-locks/README.md)::

    select t.processlist_id, ml.* from performance_schema.metadata_locks ml join performance_schema.threads t on (ml.owner_thread_id=t.thread_id)\\G

    *************************** 1. row ***************************
           processlist_id: 5
              OBJECT_TYPE: TABLE
            OBJECT_SCHEMA: shop
              OBJECT_NAME: orders
                LOCK_TYPE: SHARED_READ
            LOCK_DURATION: TRANSACTION
              LOCK_STATUS: GRANTED

Output:
    ``pfs_metadata_locks`` (one row per lock per snapshot): ``ts`` datetime64[ns, UTC], ``line_no`` /
    ``line_end`` int64, ``processlist_id`` float64 (the session: what KILL takes), ``object_type``
    (TABLE, SCHEMA, GLOBAL, BACKUP, COMMIT ...), ``object_schema``, ``object_name``, ``lock_type``
    (SHARED_READ, EXCLUSIVE, SHARED_UPGRADABLE ...), ``lock_duration``, ``lock_status`` (GRANTED,
    PENDING, VICTIM ...) strings. ``meta``: ``snapshots``, ``variant``.

Warnings: ``assumed-interval``, ``no-start-time``, ``client-message``, ``stray-line``.

Errors: ``ParseError`` (member and line) when the first meaningful line is neither an echoed
statement, a ``\\G`` row nor a marker, or ``processlist_id`` holds text.

Source: MySQL 8.4 Reference Manual, "The metadata_locks Table"; pt-stalk 3.2.1 ``ps_locks_transactions``.
"""

from __future__ import annotations

from collections.abc import Iterable

from parsers import _vertical
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "ps_locks"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=True)
#: The echoed statement of the metadata-locks query (pt-stalk 3.x).
METADATA_LOCKS = "performance_schema.metadata_locks"
DISABLED = "Performance schema is not enabled"

_COLUMNS = {
    "processlist_id": (("processlist_id", "PROCESSLIST_ID"), "float"),
    "object_type": (("OBJECT_TYPE",), "str"),
    "object_schema": (("OBJECT_SCHEMA",), "str"),
    "object_name": (("OBJECT_NAME",), "str"),
    "lock_type": (("LOCK_TYPE",), "str"),
    "lock_duration": (("LOCK_DURATION",), "str"),
    "lock_status": (("LOCK_STATUS",), "str"),
}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds pt-stalk's echoed metadata_locks query, or a ``\\G`` row with
    ``LOCK_STATUS`` and ``OWNER_THREAD_ID``, or (alone) the line saying performance_schema is off."""
    if any(METADATA_LOCKS in line and line.lstrip().lower().startswith("select") for line in head):
        return True
    keys = {line.split(":", 1)[0].strip() for line in head if ":" in line}
    if {"LOCK_STATUS", "OWNER_THREAD_ID"} <= keys and any(_vertical.ROW_HEADER.match(line) for line in head):
        return True
    meaningful = [line.strip() for line in head if line.strip()]
    return meaningful[:1] == [DISABLED]


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read ``-ps-locks-transactions`` (lines of text) into ``pfs_metadata_locks``; see the module
    docstring."""
    warnings: list[ParseWarning] = []
    lines = (line for line in stream if line.strip() != DISABLED)
    v = _vertical.read(
        lines,
        member=member,
        clock=clock,
        warnings=warnings,
        starts_snapshot=lambda line: METADATA_LOCKS in line,
        what="performance_schema \\G output",
    )
    locks = [r for r in v.records if METADATA_LOCKS in r.statement or "LOCK_STATUS" in r.values]
    _vertical.number_check(v, locks, ("processlist_id",), member)
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"pfs_metadata_locks": _vertical.frame(v, locks, _COLUMNS)},
        clock=v.clock,
        warnings=warnings,
        meta={
            "snapshots": v.snapshots,
            "variant": (
                f"performance_schema.metadata_locks \\G, {len(locks)} metadata locks in {v.snapshots} snapshots"
            ),
        },
        ts_is_local=v.ts_is_local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(words=("mysql",), schemas=("pfs_metadata_locks.object_schema",))
