"""Parse pt-stalk ``-slave-status``: SHOW SLAVE STATUS / SHOW REPLICA STATUS (vertical) snapshots.

Accepts:
    ``SHOW SLAVE STATUS\\G`` (MySQL 5.x, MariaDB 10.x/11.x, Percona Server 5.7/8.0),
    ``SHOW REPLICA STATUS\\G`` (MySQL 8.0.22+/8.4: ``Replica_IO_Running``,
    ``Seconds_Behind_Source``), ``SHOW ALL SLAVES STATUS\\G`` (MariaDB multi-source:
    ``Connection_name``); each snapshot after a ``TS`` marker or after pt-stalk's echoed
    ``SHOW SLAVE STATUS\\G`` line (then timed from the collection start plus 1 s each). The
    performance_schema replication tables pt-stalk adds on 5.7+ are skipped (the same facts). A
    server that is not a replica gives only the echoed statements: read as zero rows, ``meta``
    ``replica`` False.

Sample input (``mysql -e 'SHOW SLAVE STATUS\\G'``, MariaDB 10.11 replica)::

    *************************** 1. row ***************************
                    Slave_IO_State: Waiting for master to send event
                       Master_Host: 127.0.0.1
                  Slave_IO_Running: Yes
                 Slave_SQL_Running: Yes
             Seconds_Behind_Master: 0
           Slave_SQL_Running_State: Slave has read all relay log; waiting for more updates

Output:
    ``replica_status`` (one row per channel per snapshot): ``ts`` datetime64[ns, UTC], ``line_no``/
    ``line_end`` int64, ``channel`` string ('' for the default), ``source_host`` string,
    ``io_running``, ``sql_running`` string (Yes/No/Connecting), ``seconds_behind`` float64 (s; NaN
    for NULL: replication stopped or broken), ``sql_state`` string, ``last_io_error``,
    ``last_sql_error`` string, ``source_log_file`` string, ``read_source_log_pos``,
    ``exec_source_log_pos``, ``relay_log_space`` float64 (bytes), ``io_state`` string
    (Slave_IO_State), ``last_sql_errno``, ``last_io_errno`` float64, ``relay_source_log_file``
    string (Relay_Master_Log_File: the source binlog the SQL thread executes from), ``sql_delay``
    float64 (s, MASTER_DELAY), ``sql_remaining_delay`` float64 (s; NaN for NULL: not waiting on the
    delay). ``meta``: ``replica``, ``snapshots``, ``variant``.

Warnings: ``assumed-interval``, ``no-start-time``, ``client-message``, ``stray-line``.

Errors: ``ParseError`` (member and line) for a first meaningful line that is neither a statement
echo, a marker nor a ``\\G`` row, or a number column holding text.

>>> import pandas as pd
>>> src = parse(["SHOW SLAVE STATUS\\\\G", "", "*************************** 1. row ***",
...   "     Slave_IO_Running: Yes", "Seconds_Behind_Master: 12"], member="s",
...   clock=ClockHints(start_local=pd.Timestamp("2026-11-25 10:00:00")))
>>> src.main[["io_running", "seconds_behind"]].values.tolist()
[['Yes', 12.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from parsers import _vertical
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "slave_status"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=True)

_ECHO = re.compile(r"^\s*SHOW\s+(?:ALL\s+)?(?:SLAVES?|REPLICAS?)\s+STATUS", re.I)
_COLUMNS = {
    "channel": (("Channel_Name", "Channel_name", "Connection_name"), "str"),
    "source_host": (("Master_Host", "Source_Host"), "str"),
    "source_port": (("Master_Port", "Source_Port"), "float"),
    "source_server_id": (("Master_Server_Id", "Source_Server_Id"), "float"),
    "io_running": (("Slave_IO_Running", "Replica_IO_Running"), "str"),
    "sql_running": (("Slave_SQL_Running", "Replica_SQL_Running"), "str"),
    "seconds_behind": (("Seconds_Behind_Master", "Seconds_Behind_Source"), "float"),
    "sql_state": (("Slave_SQL_Running_State", "Replica_SQL_Running_State"), "str"),
    "last_io_error": (("Last_IO_Error",), "str"),
    "last_sql_error": (("Last_SQL_Error",), "str"),
    "source_log_file": (("Master_Log_File", "Source_Log_File"), "str"),
    "read_source_log_pos": (("Read_Master_Log_Pos", "Read_Source_Log_Pos"), "float"),
    "exec_source_log_pos": (("Exec_Master_Log_Pos", "Exec_Source_Log_Pos"), "float"),
    "relay_log_space": (("Relay_Log_Space",), "float"),
    "io_state": (("Slave_IO_State", "Replica_IO_State"), "str"),
    "last_sql_errno": (("Last_SQL_Errno",), "float"),
    "last_io_errno": (("Last_IO_Errno",), "float"),
    "relay_source_log_file": (("Relay_Master_Log_File", "Relay_Source_Log_File"), "str"),
    "sql_delay": (("SQL_Delay",), "float"),
    "sql_remaining_delay": (("SQL_Remaining_Delay",), "float"),
}
_NUMBERS = (
    "Seconds_Behind_Master",
    "Seconds_Behind_Source",
    "Read_Master_Log_Pos",
    "Read_Source_Log_Pos",
    "Exec_Master_Log_Pos",
    "Exec_Source_Log_Pos",
    "Master_Port",
    "Source_Port",
    "Master_Server_Id",
    "Source_Server_Id",
    "Last_SQL_Errno",
    "Last_IO_Errno",
    "SQL_Delay",
    "SQL_Remaining_Delay",
)


def sniff(head: list[str]) -> bool:
    """True when ``head`` echoes ``SHOW SLAVE|REPLICA STATUS`` or holds ``Slave_IO_Running`` /
    ``Replica_IO_Running`` / ``Slave_IO_State`` keys."""
    for line in head:
        if _ECHO.match(line):
            return True
        key = line.split(":", 1)[0].strip()
        if key in ("Slave_IO_State", "Replica_IO_State", "Slave_IO_Running", "Replica_IO_Running"):
            return True
    return False


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read SHOW SLAVE/REPLICA STATUS snapshots into ``replica_status``; see the module docstring."""
    warnings: list[ParseWarning] = []
    v = _vertical.read(
        stream,
        member=member,
        clock=clock,
        warnings=warnings,
        starts_snapshot=lambda line: bool(_ECHO.match(line)),
        what="SHOW SLAVE STATUS \\G output",
    )
    rows = [
        r
        for r in v.records
        if any(k in r.values for k in ("Slave_IO_Running", "Replica_IO_Running", "Seconds_Behind_Master"))
    ]
    _vertical.number_check(v, rows, _NUMBERS, member)
    main = _vertical.frame(v, rows, _COLUMNS)
    main["channel"] = main["channel"].fillna("")
    newer = any("Replica_IO_Running" in r.values for r in rows)
    kind = "SHOW REPLICA STATUS (8.0.22+)" if newer else "SHOW SLAVE STATUS"
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"replica_status": main},
        clock=v.clock,
        warnings=warnings,
        meta={
            "replica": bool(rows),
            "snapshots": v.snapshots,
            "variant": f"{kind} \\G, {v.snapshots} snapshots" + ("" if rows else ": not a replica (no rows)"),
        },
        ts_is_local=v.ts_is_local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    # An applier's error quotes the statement and the row that failed ("Duplicate entry '42'").
    statements=("replica_status.last_io_error", "replica_status.last_sql_error"),
    servers=("replica_status.source_host",),
    statement_fields=frozenset({"Last_Error", "Last_SQL_Error", "Last_IO_Error"}),
    line_patterns=(
        re.compile(r"\b(?:Master|Source)_User: (?P<user>\S+)"),
        re.compile(r"\bReplicate_(?:Do|Ignore|Wild_Do|Wild_Ignore)_(?:DB|Table): (?P<schema>\S+)"),
    ),
)
