"""Parse a pt-mysql-summary report (one MySQL server) into its version, key variables and replication role.

Accepts:
    pt-mysql-summary's standard output (percona-toolkit 2.2 to 3.x), as a support bundle carries it
    beside a pt-stalk collection (``pt-mysql-summary.out``) or on its own; MySQL, Percona Server and
    MariaDB (whose 10.x servers have no ``innodb_version``, so the tool leaves its InnoDB section
    empty); a source (``# Slave Hosts`` rows as ``\\G``, a ``# Binary Logging`` section), a replica,
    a Galera node (``# Percona XtraDB Cluster``); a report cut short (warned).

Sample input (pt-mysql-summary 3.2.1, MariaDB 10.11.19, a source,
tests/fixtures/summaries/pt-mysql-summary-3.2.1_mariadb-10.11_source.out)::

    # Percona Toolkit MySQL Summary Report #######################
                  System time | 2026-12-07 02:15:52 UTC (local TZ: UTC +0000)
    # Slave Hosts ################################################
    *************************** 1. row ***************************
    Server_id: 2
         Host: 127.0.0.1
    # Report On Port 3317 ########################################
                     Hostname | vm
                      Version | 10.11.19-MariaDB-0+deb12u1-log Debian 12
                  Replication | Is not a slave, has 1 slaves connected
    # Table cache ################################################
                         Size | 64
    # Binary Logging #############################################
                binlog_format | ROW
                  sync_binlog | 1

Output:
    frame ``untimed``: empty (a report is no sample). Every other frame has ``ts`` (NaT) and
    ``line_no`` (int64, the line of the value):

    - ``server_facts``: every ``name | value`` line: ``section``, ``name``, ``value`` (str, as printed);
    - ``server_variables``: the server variables the report prints, by their variable name:
      ``name``, ``value`` (str: sizes in bytes, as rounded by pt's ``shorten``; else as printed),
      ``shown`` (as printed), ``section`` (``VARIABLES`` maps each label to its variable);
    - ``server_sessions``: the Processlist tables' rows: ``command``, ``user``, ``host``, ``db``,
      ``state`` (only the table's own column set), ``count``, ``working``, ``sum_time_s``,
      ``max_time_s`` (float64);
    - ``server_replicas``: the Slave Hosts rows: ``server_id``, ``host``, ``port``.

    ``meta``: ``host`` (Hostname), ``version``, ``version_comment``, ``port``, ``report_time`` (UTC,
    ISO 8601), ``local_tz``; ``role`` (``source``, ``replica`` or ``none``), ``role_line``,
    ``replicas`` (replicas connected); ``summary_variables`` (name -> value) and
    ``variable_lines`` (name -> line): what ``analyzer.timeline`` reads when the bundle has no
    ``-variables``.

Warnings: ``truncated`` (no ``# The End ###`` section); ``odd-line`` (a Processlist row without its
four numbers).

Errors: ``ParseError`` (whole member) when the first non-blank line is not the report's header.

>>> src = parse(["# Percona Toolkit MySQL Summary Report ######", "# Report On Port 3306 ####",
...              "                  Version | 8.0.36 MySQL Community Server - GPL",
...              "              Replication | Is a slave, has 2 slaves connected",
...              "# Table cache ####", "                     Size | 4000", "# The End ####"],
...             member="pt-mysql-summary.out", clock=ClockHints())
>>> src.meta["version"], src.meta["role"], src.meta["replicas"], src.meta["summary_variables"]["table_open_cache"]
('8.0.36', 'replica', 2, '4000')
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from parsers._summary import (
    Section,
    end_warnings,
    facts_frame,
    report_time,
    sections,
    size_bytes,
    sniff_header,
    untimed,
)
from parsers._summary import source as summary_source
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "pt_mysql_summary"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

HEADER = "Percona Toolkit MySQL Summary Report"
#: The server section's title: ``# Report On Port 3306 ###``.
REPORT_ON = re.compile(r"^Report On Port (?P<port>\d+)$")
#: (section, label) -> (variable, is a size ``shorten`` rounded): the server variables the report
#: prints (pt-mysql-summary 3.2.1: ``get_var <variable>`` behind each label). The section of the
#: server's own facts is ``REPORT``.
REPORT = "Report On Port"
VARIABLES: dict[tuple[str, str], tuple[str, bool]] = {
    (REPORT, "Hostname"): ("hostname", False),
    (REPORT, "Datadir"): ("datadir", False),
    ("Table cache", "Size"): ("table_open_cache", False),
    ("Query cache", "query_cache_type"): ("query_cache_type", False),
    ("Query cache", "Size"): ("query_cache_size", True),
    ("MyISAM", "Key Cache"): ("key_buffer_size", True),
    ("Security", "Old Passwords"): ("old_passwords", False),
    ("Binary Logging", "binlog_format"): ("binlog_format", False),
    ("Binary Logging", "expire_logs_days"): ("expire_logs_days", False),
    ("Binary Logging", "sync_binlog"): ("sync_binlog", False),
    ("Binary Logging", "server_id"): ("server_id", False),
    ("Percona XtraDB Cluster", "Cluster Name"): ("wsrep_cluster_name", False),
    ("Percona XtraDB Cluster", "Cluster Address"): ("wsrep_cluster_address", False),
    ("Percona XtraDB Cluster", "Node Name"): ("wsrep_node_name", False),
    ("Percona XtraDB Cluster", "SST Method"): ("wsrep_sst_method", False),
    ("Percona XtraDB Cluster", "Slave Threads"): ("wsrep_slave_threads", False),
    ("Percona XtraDB Cluster", "wsrep_on"): ("wsrep_on", False),
    ("InnoDB", "Version"): ("innodb_version", False),
    ("InnoDB", "Buffer Pool Size"): ("innodb_buffer_pool_size", True),
    ("InnoDB", "File Per Table"): ("innodb_file_per_table", False),
    ("InnoDB", "Log Buffer Size"): ("innodb_log_buffer_size", True),
    ("InnoDB", "Flush Method"): ("innodb_flush_method", False),
    ("InnoDB", "Flush Log At Commit"): ("innodb_flush_log_at_trx_commit", False),
    ("InnoDB", "XA Support"): ("innodb_support_xa", False),
    ("InnoDB", "Checksums"): ("innodb_checksums", False),
    ("InnoDB", "Doublewrite"): ("innodb_doublewrite", False),
    ("InnoDB", "I/O Capacity"): ("innodb_io_capacity", False),
    ("InnoDB", "Thread Concurrency"): ("innodb_thread_concurrency", False),
    ("InnoDB", "Concurrency Tickets"): ("innodb_concurrency_tickets", False),
    ("InnoDB", "Commit Concurrency"): ("innodb_commit_concurrency", False),
    ("InnoDB", "Txn Isolation Level"): ("tx_isolation", False),
    ("InnoDB", "Adaptive Flushing"): ("innodb_adaptive_flushing", False),
    ("InnoDB", "Adaptive Checkpoint"): ("innodb_adaptive_checkpoint", False),
}
#: Noteworthy Variables prints these under their own names (the sizes ``shorten``ed).
NOTEWORTHY = (
    "default_storage_engine",
    "flush_time",
    "init_connect",
    "init_file",
    "sql_mode",
    "log",
    "log_error",
    "log_warnings",
    "log_slow_queries",
    "log_queries_not_using_indexes",
    "log_slave_updates",
)
NOTEWORTHY_SIZES = (
    "join_buffer_size",
    "sort_buffer_size",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "max_heap_table_size",
    "tmp_table_size",
    "max_allowed_packet",
    "thread_stack",
)
#: What ``shorten`` prints for a variable the server does not have (an empty value, precision 2).
ABSENT_SIZE = "0.00"
_REPLICATION = re.compile(r"^Is (?P<not>not )?a slave, has (?P<replicas>\d+) slaves? connected")
_LOG_FILES = re.compile(r"^(?P<files>\d+) \* (?P<size>\S+) = ")
_IO_THREADS = re.compile(r"^(?P<read>\d+) (?P<write>\d+)$")
_PROCESSLIST_KINDS = {"Command": "command", "User": "user", "Host": "host", "db": "db", "State": "state"}
_PROCESSLIST_HEADER = re.compile(
    r"^  (?P<kind>Command|User|Host|db|State) +COUNT\(\*\) +Working +SUM\(Time\) +MAX\(Time\)$"
)
_PROCESSLIST_ROW = re.compile(
    r"^  (?P<value>.*?) +(?P<count>\d+) +(?P<working>\d+) +(?P<sum>\d+) +(?P<max>\d+)\s*$"
)
_VERTICAL = re.compile(r"^\s*(?P<name>\w+): (?P<value>.*)$")


def sniff(head: list[str]) -> bool:
    """True when the first non-blank line is pt-mysql-summary's ``# Percona Toolkit MySQL Summary Report
    ###``."""
    return sniff_header(head, HEADER)


def _section_key(title: str) -> str:
    return REPORT if REPORT_ON.match(title) else title


def _variables(found: list[Section]) -> list[tuple[object, ...]]:
    """``(line_no, name, value, shown, section)`` of every server variable the report prints."""
    rows: list[tuple[object, ...]] = []

    def add(no: int, name: str, value: str, shown: str, section: str) -> None:
        rows.append((no, name, value, shown, section))

    for section in found:
        key = _section_key(section.title)
        for no, label, shown in section.facts():
            if (key, label) in VARIABLES:
                name, sized = VARIABLES[(key, label)]
                value = shown
                if sized:
                    number = size_bytes(shown)
                    value = "" if number is None else str(number)
                if value:
                    add(no, name, value, shown, section.title)
            elif key == "Noteworthy Variables" and label in NOTEWORTHY and shown:
                add(no, label, shown, shown, section.title)
            elif key == "Noteworthy Variables" and label in NOTEWORTHY_SIZES and shown != ABSENT_SIZE:
                if (number := size_bytes(shown)) is not None:
                    add(no, label, str(number), shown, section.title)
            elif (key, label) == ("Noteworthy Variables", "Auto-Inc Incr/Offset") and "/" in shown:
                incr, offset = shown.split("/", 1)
                add(no, "auto_increment_increment", incr, shown, section.title)
                add(no, "auto_increment_offset", offset, shown, section.title)
            elif (key, label) == (REPORT, "Version") and shown:
                version, _, comment = shown.partition(" ")
                add(no, "version", version, shown, section.title)
                if comment:
                    add(no, "version_comment", comment, shown, section.title)
            elif (key, label) == ("InnoDB", "Log File Size") and (m := _LOG_FILES.match(shown)):
                add(no, "innodb_log_files_in_group", m["files"], shown, section.title)
                if (number := size_bytes(m["size"])) is not None:
                    add(no, "innodb_log_file_size", str(number), shown, section.title)
            elif (key, label) == ("InnoDB", "R/W I/O Threads") and (m := _IO_THREADS.match(shown)):
                add(no, "innodb_read_io_threads", m["read"], shown, section.title)
                add(no, "innodb_write_io_threads", m["write"], shown, section.title)
        if key == REPORT and (m := REPORT_ON.match(section.title)):
            add(section.line_no, "port", m["port"], m["port"], section.title)
        if key == "Binary Logging" and any(True for _ in section.facts()):
            # the section's body is printed only when SHOW MASTER LOGS or STATUS answers: binary log on
            add(section.lines[0][0] if section.lines else section.line_no, "log_bin", "ON", "", section.title)
    return rows


def _sessions(section: Section, warnings: list[ParseWarning]) -> list[tuple[object, ...]]:
    """Rows of the Processlist section's five tables (by Command, User, Host, db and State)."""
    rows: list[tuple[object, ...]] = []
    kind = None
    for no, text in section.lines:
        header = _PROCESSLIST_HEADER.match(text)
        if header:
            kind = _PROCESSLIST_KINDS[header["kind"]]
            continue
        if not text.strip() or text.lstrip().startswith("---") or kind is None:
            continue
        m = _PROCESSLIST_ROW.match(text)
        if m is None:
            warnings.append(ParseWarning(no, "odd-line", f"not a processlist row: {text[:80]!r}"))
            continue
        value = None if m["value"] == "NULL" else m["value"]  # a session without a schema
        cells = {k: (value if k == kind else None) for k in _PROCESSLIST_KINDS.values()}
        rows.append((no, *cells.values(), *(float(m[k]) for k in ("count", "working", "sum", "max"))))
    return rows


def _replicas(section: Section) -> list[tuple[object, ...]]:
    """Rows of the Slave Hosts section (SHOW SLAVE HOSTS as ``\\G`` records)."""
    rows: list[tuple[object, ...]] = []
    record: dict[str, tuple[int, str]] = {}
    for no, text in [*section.lines, (0, "*** end")]:
        if text.startswith("***"):
            if record:
                first = min(n for n, _ in record.values())
                rows.append((first, *(record.get(k, (0, None))[1] for k in ("Server_id", "Host", "Port"))))
            record = {}
        elif m := _VERTICAL.match(text):
            record[m["name"]] = (no, m["value"].strip())
    return rows


def _role(found: list[Section]) -> tuple[str, int | None, int]:
    """(role, its line, replicas connected) from ``Replication | Is [not ]a slave, has N slaves
    connected``."""
    for section in found:
        for no, label, value in section.facts():
            if label == "Replication" and (m := _REPLICATION.match(value)):
                replicas = int(m["replicas"])
                role = "replica" if not m["not"] else "source" if replicas else "none"
                return role, no, replicas
    return "none", None, 0


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a pt-mysql-summary report (lines of text); see the module docstring."""
    found = sections(stream, member=member, header=HEADER)
    warnings = end_warnings(found)
    variables = untimed(_variables(found), ("name", "value", "shown", "section"))
    session_rows = [r for s in found if s.title == "Processlist" for r in _sessions(s, warnings)]
    sessions = untimed(
        session_rows,
        ("command", "user", "host", "db", "state", "count", "working", "sum_time_s", "max_time_s"),
    )
    numbers = ["count", "working", "sum_time_s", "max_time_s"]
    sessions[numbers] = sessions[numbers].astype("float64")
    replica_rows = [r for s in found if s.title == "Slave Hosts" for r in _replicas(s)]
    replicas = untimed(replica_rows, ("server_id", "host", "port"))
    values = dict(zip(variables["name"], variables["value"], strict=True))
    lines = {n: int(v) for n, v in zip(variables["name"], variables["line_no"], strict=True)}
    role, role_line, connected = _role(found)
    system = next((v for _, label, v in found[0].facts() if label == "System time"), "")
    when, zone = report_time(system)
    meta: dict[str, object] = {
        "summary_variables": values,
        "variable_lines": lines,
        "role": role,
        "role_line": role_line,
        "replicas": connected,
        "report_time": when,
        "local_tz": zone,
        "variant": _variant(values, role),
    }
    meta.update({k: values[k] for k in ("version", "version_comment", "port") if k in values})
    if values.get("hostname"):
        meta["host"] = values["hostname"]
    frames = {
        "server_facts": facts_frame(found),
        "server_variables": variables,
        "server_sessions": sessions,
        "server_replicas": replicas,
    }
    return summary_source(FORMAT, member, frames, warnings, meta)


def _variant(values: dict[str, str], role: str) -> str:
    """``pt-mysql-summary, MariaDB 10.11.19, source``."""
    version = values.get("version", "")
    comment = values.get("version_comment", "")
    if "MariaDB" in version:
        server = f"MariaDB {version.split('-')[0]}"
    elif "Percona" in comment:
        server = f"Percona Server {version}"
    else:
        server = f"MySQL {version}" if version else "server version unknown"
    return f"pt-mysql-summary, {server}, {role if role != 'none' else 'no replication'}"


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py): the
# account it ran as (``User | root@127.0.0.1``), the Processlist tables' users, client hosts and
# schemas, its replicas (Slave Hosts); the server's own name is collected from ``meta["host"]``.
SENSITIVE = Sensitive(
    users=("server_sessions.user",),
    hosts=("server_sessions.host",),
    schemas=("server_sessions.db",),
    servers=("server_replicas.host",),
    line_patterns=(re.compile(r"^ +User \| (?P<user>[^@\s]+)@(?P<host>\S+)"),),
    words=("mysql",),
)
