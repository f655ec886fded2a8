"""Parse the query results of MySQL Shell's diagnostics collections (``util.debug.collectDiagnostics()``,
``collectHighLoadDiagnostics()``, ``collectSlowQueryDiagnostics()``, MySQL Shell 8.0.29+).

The zip holds one flat folder ``mysql-diagnostics-YYYYMMDD-HHMMSS/`` (named after the zip); with
``allMembers`` each member's files are prefixed ``<instance_id>.`` (the InnoDB Cluster metadata's
``instance_id``: ``1.SHOW_GLOBAL_STATUS.tsv``, ``2.global_variables.tsv``); the high-load mode adds
``diagnostics-raw/iteration-N.<query>.tsv`` per iteration. Every query result is written twice, as TSV
and as YAML, by ``dump_query`` (python/plugins/debug/sql_collector.py of mysql/mysql-shell), each
after the same comment header. Casebook reads the TSV; the YAML twin is listed as not used.

Sample input (``2.SHOW_GLOBAL_STATUS.tsv``; ``#<TAB>`` before each line of the query)::

    # Query:
    #	SHOW GLOBAL STATUS
    #
    # Started: 2026-11-27T14:02:11.482113
    # Execution Time: 0.0021 sec
    #
    # Variable_name	Value
    Aborted_clients	0
    Com_commit	18342

The writer: ``# Query:``, the query's lines each after ``#\\t``, ``#``, ``# Started: `` and
``datetime.now().isoformat()`` (the wall clock of the machine MySQL Shell ran on, naive, to the
microsecond: see ``parsers.mysqlsh_layout`` for how it is put on UTC), ``# Execution Time: ...``,
``#``, then ``# `` and the column labels joined by tabs, then one line per row: ``str(value)`` of
each column joined by tabs, ``NULL`` for SQL NULL. Values are not escaped: a value holding a newline
(a statement in ``Info``, the InnoDB monitor text in ``Status``) continues on the lines after its
row, which hold fewer tabs than a row has columns.

What each result becomes (the frames the other parsers give, so the rules read them alike):

=================================================  =============================================
``SHOW GLOBAL STATUS`` (``Variable_name Value``)   frame ``mysqladmin`` (as ``parsers.mysqladmin``:
                                                   ``variable``, ``value``, ``per_s``; one table)
``global variables`` (``name value [source]``)     ``meta["variables"]`` (as ``parsers.variables``)
``SHOW FULL PROCESSLIST``                          frame ``processlist`` (as ``parsers.processlist``)
``SHOW ENGINE INNODB STATUS`` (``Type Name Status``)  the ``innodb_status`` frames
``SHOW REPLICA STATUS`` / ``SHOW SLAVE STATUS``    frame ``replica_status`` (as ``parsers.slave_status``)
``information_schema.innodb_trx``                  frame ``innodb_trx`` (as ``parsers.innodb_trx``)
``performance_schema.error_log``                   frame ``mysqld_errors`` (as ``parsers.mysqld_errorlog``)
``performance_schema.replication_group_members``   frame ``group_members`` (MEMBER_* columns, lower case)
``performance_schema.replication_group_member_stats``  frame ``group_member_stats`` (COUNT_* numbers)
``performance_schema.replication_connection_status``  frame ``replication_connection_status``
``sys.metrics`` (``metrics.tsv``)                  ``meta["server_epoch"]``: ``UNIX_TIMESTAMP()``
=================================================  =============================================

Every row is stamped with the ``# Started:`` time (``ts_source`` ``started``; ``Clock.HEADER_TIME``,
``ts_is_local``), except the error log's rows, stamped with their own ``LOGGED`` time (the server's
session time zone). ``meta["mysqlsh"]``: ``instance`` (the ``<instance_id>.`` prefix, or None),
``query``, ``started`` (ISO), ``clock`` (``client``: the Started stamp, ``server``: LOGGED),
``iteration`` (high-load ``iteration-N``, or None). The host is set afterwards from the member's
``.instance`` file (``parsers.mysqlsh_layout``).

Errors: ``ParseError`` when the header is not MySQL Shell's; ``ParseError(whole=True)`` for a YAML
twin and for a result Casebook has no reader for (the reason names the query).

>>> src = parse(["# Query:", "#\\tSHOW GLOBAL STATUS", "#", "# Started: 2026-11-27T14:02:11.482113",
...              "# Execution Time: 0.0021 sec", "#", "# Variable_name\\tValue", "Com_commit\\t18342",
...              "Threads_running\\t7"], member="mysql-diagnostics-20261127-140210/2.SHOW_GLOBAL_STATUS.tsv",
...             clock=ClockHints())
>>> src.main[["variable", "value"]].values.tolist(), str(src.main.ts[0]), src.meta["mysqlsh"]["instance"]
([['Com_commit', 18342.0], ['Threads_running', 7.0]], '2026-11-27 14:02:11.482113+00:00', '2')
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers import innodb_status, innodb_trx, slave_status
from parsers import variables as variables_parser
from parsers.base import (
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    empty_frame,
)
from parsers.mysqld_errorlog import MESSAGE_CHARS
from parsers.mysqld_errorlog import kind_of as errorlog_kind
from parsers.sensitive import Sensitive

FORMAT = "mysqlsh"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

#: The prefix of a member collected with ``allMembers``: the InnoDB Cluster metadata's instance_id.
INSTANCE_PREFIX = re.compile(r"^(?P<id>\d+)\.")
#: High-load mode: ``diagnostics-raw/iteration-N.<query>.tsv``.
ITERATION = re.compile(r"(?:^|/)iteration-(?P<n>\d+)\.")
#: How MySQL Shell spells SQL NULL in a TSV cell.
NULL = "NULL"
_STARTED = re.compile(r"^# Started: (?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)\s*$")


@dataclass(slots=True)
class Result:
    """One query result: its header facts and rows (cells as text, None for NULL), each row with its
    first and last line in the member."""

    query: str = ""
    started: pd.Timestamp | None = None
    columns: list[str] = field(default_factory=list)
    rows: list[list[str | None]] = field(default_factory=list)
    lines: list[tuple[int, int]] = field(default_factory=list)
    yaml: bool = False
    header_end: int = 0


def is_header(lines: list[str]) -> bool:
    """True when ``lines`` (a member's first lines) open with MySQL Shell's ``# Query:`` header and
    carry its ``# Started:`` line."""
    return bool(lines) and lines[0].rstrip() == "# Query:" and any(_STARTED.match(ln) for ln in lines[:60])


def sniff(head: list[str]) -> bool:
    """True for a MySQL Shell query result (TSV or YAML) with the ``# Query:`` / ``# Started:`` header."""
    return is_header(head)


def read(stream: Iterable[str], member: str) -> Result:
    """The header and rows of a MySQL Shell TSV (``yaml`` True, and no rows, for a YAML twin).

    Values are not escaped: a row whose line holds fewer tabs than its columns need goes on over the
    next lines (a middle value holding newlines); once it has them, a line that does not start like
    a row (``ROW_STARTS``: a number for ``Id``, a time for ``LOGGED``...) continues its last cell.
    """
    out = Result()
    query: list[str] = []
    stage = "query"  # query -> header -> columns -> rows
    width = 0
    pending: list = []  # the row being read: its text, first line, last line
    for no, raw in enumerate(stream, start=1):
        line = raw.rstrip("\r\n")
        if stage == "query":
            if no == 1:
                if line.rstrip() != "# Query:":
                    raise ParseError(member, no, line, "not a MySQL Shell result: no '# Query:' header")
                continue
            if line.startswith("#\t"):
                query.append(line[2:])
                continue
            stage = "header"
        if stage == "header":
            m = _STARTED.match(line)
            if m:
                out.started = pd.Timestamp(m["ts"])
                continue
            if line.startswith("#") and "\t" not in line:
                continue
            out.header_end = no - 1
            if line.startswith("# "):
                out.columns = line[2:].split("\t")
                width = len(out.columns)
                stage = "rows"
                continue
            out.yaml = True
            break
        if line.startswith("# Warnings") or line.startswith("# Execution Time"):
            break
        if pending and pending[0].count("\t") < width - 1:  # a row still short of cells: a value went on
            pending[0] += "\n" + line
            pending[2] = no
        elif pending and not _starts_row(line, out.columns):  # the last cell of the row went on
            pending[0] += "\n" + line
            pending[2] = no
        else:
            if pending:
                _add_row(out, pending, width)
            pending = [line, no, no]
    if pending:
        _add_row(out, pending, width)
    if stage == "header":  # nothing after the header: an empty YAML document list
        out.yaml = True
    out.query = " ".join(q.strip() for q in query).strip()
    if out.started is None and not out.yaml:
        raise ParseError(member, 1, "# Query:", "MySQL Shell result without its '# Started:' line")
    return out


#: What the first cell of a row looks like, by its column: a line that does not start so continues
#: the row before (a value holding newlines). Other columns: any line with a full row's tabs.
ROW_STARTS = {
    "id": re.compile(r"^\d+\t"),
    "trx_id": re.compile(r"^\d+\t"),
    "logged": re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}"),
    "type": re.compile(r"^\w+\t"),
    "variable_name": re.compile(r"^[^\s\t]+\t"),
    "name": re.compile(r"^[A-Za-z_][\w.]*\t"),
}


def _starts_row(line: str, columns: list[str]) -> bool:
    """Whether ``line`` starts a new row of a result with ``columns``."""
    shape = ROW_STARTS.get(columns[0].lower()) if columns else None
    return bool(shape.match(line)) if shape is not None else line.count("\t") >= len(columns) - 1


def _add_row(out: Result, pending: list, width: int) -> None:
    """Cut a row's text (``pending``: text, first line, last line) into ``width`` cells; a short row
    (a damaged or cut member) is padded with empty cells."""
    cells: list[str | None] = list(str(pending[0]).split("\t", width - 1))
    cells += [""] * (width - len(cells))
    out.rows.append([None if c == NULL else c for c in cells])
    out.lines.append((int(pending[1]), int(pending[2])))


def _kind(res: Result) -> str | None:
    """Which reader a result needs, from its columns and query (None: none)."""
    cols = [c.lower() for c in res.columns]
    q = res.query.upper()
    if cols[:2] == ["variable_name", "value"] and "GLOBAL STATUS" in q:
        return "status"
    if cols[:2] == ["name", "value"] and "GLOBAL_VARIABLES" in q:
        return "variables"
    if cols[:2] == ["id", "user"] and "PROCESSLIST" in q:
        return "processlist"
    if cols == ["type", "name", "status"] and "INNODB STATUS" in q:
        return "innodb"
    if any(c in cols for c in ("replica_io_running", "slave_io_running")):
        return "replica"
    if "trx_id" in cols and "trx_started" in cols:
        return "trx"
    if "logged" in cols and "prio" in cols and "data" in cols:
        return "errorlog"
    if cols[:2] == ["variable_name", "variable_value"] and "SYS.METRICS" in q:
        return "metrics"
    for table in (
        "replication_group_member_stats",
        "replication_group_members",
        "replication_connection_status",
    ):
        if table.upper() in q:
            return table
    return None


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read one MySQL Shell TSV result into the frames of the module docstring."""
    res = read(stream, member)
    if res.yaml:
        raise ParseError(
            member,
            res.header_end + 1,
            "",
            "MySQL Shell YAML: the same rows as its .tsv twin, read there",
            whole=True,
        )
    kind = _kind(res)
    if kind is None:
        raise ParseError(
            member,
            1,
            "# Query:",
            (f"MySQL Shell result of {res.query[:120]!r}: not read by Casebook"),
            whole=True,
        )
    base = posixpath.basename(member)
    inst = INSTANCE_PREFIX.match(base)
    it = ITERATION.search(member)
    warnings: list[ParseWarning] = []
    meta: dict[str, object] = {
        "mysqlsh": {
            "instance": inst["id"] if inst else None,
            "query": res.query[:500],
            "started": res.started.isoformat() if res.started is not None else None,
            "clock": "server" if kind == "errorlog" else "client",
            "iteration": int(it["n"]) if it else None,
        }
    }
    frames = READERS[kind](res, member, warnings, meta)
    where = f", iteration {it['n']}" if it else ""
    meta["variant"] = f"MySQL Shell {res.query[:60]} (TSV, {len(res.rows)} rows{where})"
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames=frames,
        clock=Clock.HEADER_TIME,
        warnings=warnings,
        meta=meta,
        ts_is_local=True,
    )


def _ts(res: Result, n: int) -> pd.Series:
    stamp = pd.Timestamp(res.started).tz_localize("UTC") if res.started is not None else pd.NaT
    return pd.Series([stamp] * n, dtype="datetime64[ns, UTC]")


def _cells(res: Result, name: str) -> list[str | None]:
    i = [c.lower() for c in res.columns].index(name.lower())
    return [r[i] for r in res.rows]


def _status(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``SHOW GLOBAL STATUS``: numeric values as one mysqladmin table (strings go to
    ``meta["status_text"]``)."""
    names, values, lines, text = [], [], [], {}
    for (name, value), (first, _) in zip(((r[0], r[1]) for r in res.rows), res.lines, strict=True):
        try:
            number = float(value) if value not in (None, "") else np.nan
        except ValueError:
            text[str(name)] = str(value)[:200]
            continue
        names.append(name)
        values.append(number)
        lines.append(first)
    frame = pd.DataFrame(
        {
            "ts": _ts(res, len(names)),
            "line_no": pd.Series(lines, dtype="int64"),
            "variable": pd.Categorical(names),
            "value": pd.Series(values, dtype="float64"),
            "per_s": pd.Series(np.nan, index=range(len(names)), dtype="float64"),
        }
    )
    meta.update({"mode": "absolute", "tables": 1, "status_text": text})
    return {"mysqladmin": frame}


def _variables(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``global variables``: name -> value in ``meta["variables"]``, the header's facts lifted."""
    found = {str(r[0]): ("" if r[1] is None else str(r[1])) for r in res.rows if r[0]}
    meta["variables"] = found
    meta["snapshots"] = 1
    meta.update({k: found[k] for k in variables_parser.LIFTED if k in found})
    return {"variables": empty_frame()}


#: SHOW FULL PROCESSLIST's columns -> the processlist frame's (parsers.processlist).
PROCESSLIST_COLUMNS = {
    "id": "id",
    "user": "user",
    "host": "host",
    "db": "db",
    "command": "command",
    "time": "time_s",
    "state": "state",
    "info": "info",
}


def _processlist(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``SHOW FULL PROCESSLIST``: one snapshot of sessions, as ``parsers.processlist`` gives them."""
    n = len(res.rows)
    frame = pd.DataFrame(
        {
            "ts": _ts(res, n),
            "line_no": pd.Series([a for a, _ in res.lines], dtype="int64"),
            "line_end": pd.Series([b for _, b in res.lines], dtype="int64"),
            "snapshot": pd.Series(np.zeros(n, dtype="int64")),
        }
    )
    lower = [c.lower() for c in res.columns]
    for col, name in PROCESSLIST_COLUMNS.items():
        values = pd.Series(_cells(res, col) if col in lower else [None] * n, dtype="string")
        if name in ("id", "time_s"):
            frame[name] = pd.to_numeric(values, errors="coerce").astype("Int64")
        else:
            frame[name] = values
    frame["ts_source"] = "started"
    meta.update({"columns": res.columns, "layout": "tsv", "snapshots": 1, "tool": "MySQL Shell"})
    return {"processlist": frame}


def _innodb(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``SHOW ENGINE INNODB STATUS``: the ``Status`` text read by ``parsers.innodb_status``, its rows
    stamped with the Started time and numbered as the member's lines."""
    if not res.rows:
        raise ParseError(member, res.header_end + 1, "", "SHOW ENGINE INNODB STATUS returned no row")
    status = res.rows[0][2] or ""
    first = res.lines[0][0]  # the row's line: "InnoDB<TAB><TAB>" then the monitor text
    parsed = innodb_status.parse(status.split("\n"), member=member, clock=ClockHints())
    warnings.extend(parsed.warnings)
    meta.update({k: v for k, v in parsed.meta.items() if k != "variant"})
    for frame in parsed.frames.values():
        for col in ("line_no", "line_end"):
            if col in frame:
                frame[col] = frame[col] + first - 1
        if "ts" in frame:
            frame["ts"] = _ts(res, len(frame)).to_numpy()
    return parsed.frames


def vertical(res: Result, echo: str = "", *, one_line: bool = False) -> list[str]:
    """The rows of ``res`` as the ``\\G`` output of the ``mysql`` client prints them: keys
    right-aligned, after ``echo`` when given; a value's newlines kept as continuation lines, or
    made spaces with ``one_line``."""
    lines = [echo] if echo else []
    width = max((len(c) for c in res.columns), default=0)
    for i, row in enumerate(res.rows, start=1):
        lines.append(f"*************************** {i}. row ***************************")
        for col, v in zip(res.columns, row, strict=False):
            text = "NULL" if v is None else (v.replace("\n", " ") if one_line else v)
            lines += f"{col:>{width}}: {text}".split("\n")
    return lines


def _renumbered(res: Result, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (one row per result row, in order) stamped with Started and the rows' member lines."""
    n = len(frame)
    frame["ts"] = _ts(res, n).to_numpy()
    frame["line_no"] = np.array([a for a, _ in res.lines[:n]], dtype="int64")
    frame["line_end"] = np.array([b for _, b in res.lines[:n]], dtype="int64")
    return frame


def _replica(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``SHOW REPLICA STATUS`` / ``SHOW SLAVE STATUS``: each row (a channel) read by
    ``parsers.slave_status`` as the ``\\G`` output it would be."""
    lines = vertical(res, "SHOW REPLICA STATUS", one_line=True)
    parsed = slave_status.parse(lines, member=member, clock=ClockHints(start_local=res.started))
    meta.update({"replica": parsed.meta.get("replica", False), "snapshots": 1})
    return {"replica_status": _renumbered(res, parsed.frames["replica_status"])}


#: Columns of ``innodb_trx`` that count seconds on the server's wall clock up to the query (made
#: against the Started stamp here; ``parsers.mysqlsh_layout`` corrects them by the two clocks' gap).
SERVER_AGES = ("active_s", "wait_s")


def _trx(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``information_schema.innodb_trx``: read by ``parsers.innodb_trx``; ``active_s`` / ``wait_s``
    count from ``trx_started`` / ``trx_wait_started`` (the server's wall clock) to the Started stamp
    (MySQL Shell's wall clock), corrected afterwards when the two clocks differ."""
    parsed = innodb_trx.parse(vertical(res), member=member, clock=ClockHints(start_local=res.started))
    frame = _renumbered(res, parsed.frames["innodb_trx"])
    cols = [c.lower() for c in res.columns]
    for name, col in (("active_s", "trx_started"), ("wait_s", "trx_wait_started")):
        if col in cols:
            stamps = pd.to_datetime(pd.Series(_cells(res, col), dtype="object"), errors="coerce")
            age = pd.Timestamp(res.started) - stamps
            frame[name] = age.dt.total_seconds().to_numpy(dtype="float64", na_value=np.nan)
    meta["mysqlsh"]["server_ages"] = list(SERVER_AGES)  # type: ignore[index]
    meta["snapshots"] = 1
    return {"innodb_trx": frame}


def _errorlog(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``performance_schema.error_log`` (MySQL 8.0.22+: LOGGED, THREAD_ID, PRIO, ERROR_CODE,
    SUBSYSTEM, DATA): the events ``parsers.mysqld_errorlog`` keeps, stamped with LOGGED."""
    rows = []
    cols = {c.lower(): i for i, c in enumerate(res.columns)}
    for row, (first, last) in zip(res.rows, res.lines, strict=True):
        logged = pd.to_datetime(row[cols["logged"]], errors="coerce")
        if pd.isna(logged):
            warnings.append(ParseWarning(first, "bad-time", f"LOGGED {row[cols['logged']]!r} is not a time"))
            continue
        prio = row[cols["prio"]] or ""
        text = row[cols["data"]] or ""
        kind = errorlog_kind(text, prio)
        if kind:
            rows.append(
                {
                    "ts": logged,
                    "line_no": first,
                    "line_end": last,
                    "prio": prio,
                    "kind": kind,
                    "code": row[cols.get("error_code", 0)] or "",
                    "message": text[:MESSAGE_CHARS],
                }
            )
    frame = pd.DataFrame(rows, columns=["ts", "line_no", "line_end", "prio", "kind", "code", "message"])
    frame["ts"] = (
        pd.to_datetime(frame["ts"]).dt.tz_localize("UTC")
        if len(frame)
        else pd.Series([], dtype=("datetime64[ns, UTC]"))
    )
    frame = frame.astype({"line_no": "int64", "line_end": "int64"})
    frame.insert(1, "ts_source", "line")
    frame.insert(7, "signal", np.nan)
    meta["counts"] = {str(k): int(v) for k, v in frame["kind"].value_counts().items()}
    return {"mysqld_errors": frame}


def _metrics(
    res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
) -> dict[str, pd.DataFrame]:
    """``sys.metrics``: kept for its clock only, ``UNIX_TIMESTAMP()`` (the server's epoch when the
    query ran) in ``meta["server_epoch"]``, to be set beside the Started stamp of the same file."""
    for row in res.rows:
        if row[0] == "UNIX_TIMESTAMP()" and row[1]:
            try:
                meta["server_epoch"] = float(row[1])
            except ValueError:
                warnings.append(ParseWarning(0, "bad-number", f"UNIX_TIMESTAMP() {row[1]!r} is not a number"))
    return {"mysqlsh_metrics": empty_frame()}


def _table(name: str, numbers: tuple[str, ...]) -> object:
    """A reader for a performance_schema replication table: lower-case columns, ``numbers`` as float64."""

    def reader(
        res: Result, member: str, warnings: list[ParseWarning], meta: dict[str, object]
    ) -> dict[str, pd.DataFrame]:
        n = len(res.rows)
        frame = pd.DataFrame(
            {"ts": _ts(res, n), "line_no": pd.Series([a for a, _ in res.lines], dtype="int64")}
        )
        for i, col in enumerate(res.columns):
            values = pd.Series([r[i] for r in res.rows], dtype="string")
            low = col.lower()
            frame[low] = pd.to_numeric(values, errors="coerce") if low.startswith(numbers) else values
        return {name: frame}

    return reader


READERS = {
    "status": _status,
    "variables": _variables,
    "processlist": _processlist,
    "innodb": _innodb,
    "replica": _replica,
    "trx": _trx,
    "errorlog": _errorlog,
    "metrics": _metrics,
    "replication_group_member_stats": _table("group_member_stats", ("count_",)),
    "replication_group_members": _table("group_members", ("member_port",)),
    "replication_connection_status": _table("replication_connection_status", ("count_",)),
}

# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    statements=(
        "processlist.info",
        "innodb_transactions.query",
        "innodb_deadlock.query",
        "innodb_trx.query",
        "replica_status.last_io_error",
        "replica_status.last_sql_error",
    ),
    users=("processlist.user",),
    hosts=("processlist.host", "group_members.member_host"),
    servers=("replica_status.source_host",),
    schemas=("processlist.db",),
    clients=("innodb_transactions.client",),
    statement_fields=frozenset(
        {"Info", "trx_query", "Last_Error", "Last_SQL_Error", "Last_IO_Error", "Status", "DATA", "SQL_TEXT"}
    ),
    result_tables=True,
    result_columns=(("user", "Source_User"), ("user", "Master_User")),
)
