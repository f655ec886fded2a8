"""Parse the ``<instance_id>.instance`` file of a MySQL Shell diagnostics collection: which server a
member's files come from, and its clock.

Written by ``collect_member_info`` (python/plugins/debug/collect_diagnostics.py of mysql/mysql-shell,
8.0.29+) from one query on the member (``select utc_timestamp(), now(), @@time_zone,
@@system_time_zone, cast(TIMEDIFF(NOW(), UTC_TIMESTAMP()) as char), @@hostname, @@port,
@@report_host, @@report_port, @@server_uuid, @@server_id, concat(@@version_comment, ' ', @@version)``);
Python's ``str()`` of each value, so an unset ``report_host`` is ``None``.

Sample input (``2.instance``)::

    Hostname: db2 (report_host=None)
    Port: 3306 (report_port=3306)
    Server UUID: 8a1f2a4e-ac6e-11ef-9d3b-525400a1b2c2
    Server ID: 2
    Connection Endpoint: root@db2:3306
    Version: MySQL Community Server - GPL 8.0.40
    UTC Time: 2026-11-27 13:02:10
    Local Time: 2026-11-27 14:02:10
    Time Zone: SYSTEM
    System Time Zone: CET
    Time Zone Offset: 01:00:00
    SYS Schema Version: 2.1.2
    PFS Enabled: 1
    Has InnoDB Cluster: True

Output: a context source (empty frame ``mysqlsh_instance``); ``meta``: ``host`` (``report_host`` when
set, else ``hostname``; ``:port`` added when the port is not 3306, so that sandboxes on one machine
stay apart) with ``host_origin``; ``hostname``, ``report_host``, ``port`` (int), ``server_id``,
``server_uuid``, ``version``; ``utc_offset_s`` (seconds east of UTC of the server's session clock,
from ``Time Zone Offset``, else ``Local Time`` minus ``UTC Time`` rounded to 15 min) and
``utc_offset_origin``;
``utc_time`` (ISO, the server's UTC clock when the file was written); ``instance`` (the
``<instance_id>.`` prefix, or None).

Errors: ``ParseError`` when the first line is not ``Hostname: <name> (report_host=...)``.

>>> src = parse(["Hostname: db2 (report_host=None)", "Port: 3306 (report_port=3306)",
...              "UTC Time: 2026-11-27 13:02:10", "Local Time: 2026-11-27 14:02:10",
...              "Time Zone Offset: 01:00:00"], member="d/2.instance", clock=ClockHints())
>>> src.meta["host"], src.meta["port"], src.meta["utc_offset_s"], src.meta["instance"]
('db2', 3306, 3600, '2')
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

import pandas as pd

from parsers.base import (
    OFFSET_QUANTUM_S,
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    empty_frame,
)
from parsers.sensitive import SERVER

FORMAT = "mysqlsh_instance"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

#: MySQL's default port: a host name alone when the server listens on it.
DEFAULT_PORT = 3306
_HOSTNAME = re.compile(r"^Hostname: (?P<host>\S*) \(report_host=(?P<report>[^)]*)\)\s*$")
_PORT = re.compile(r"^Port: (?P<port>\d+) \(report_port=(?P<report>[^)]*)\)\s*$")
_OFFSET = re.compile(r"^(?P<sign>-?)(?P<h>\d{1,3}):(?P<m>\d{2}):(?P<s>\d{2})")
_UNSET = ("", "None", "NULL")


def sniff(head: list[str]) -> bool:
    """True when the first two lines are MySQL Shell's ``Hostname: ... (report_host=...)`` and
    ``Port: ... (report_port=...)``."""
    return len(head) >= 2 and bool(_HOSTNAME.match(head[0])) and bool(_PORT.match(head[1]))


def host_name(hostname: str, report_host: str | None, port: int | None) -> str:
    """The name a member goes by: ``report_host`` when set (the name the cluster uses), else the
    ``hostname`` variable; ``:port`` added for a port other than 3306.

    >>> host_name("db2", None, 3306), host_name("sandbox", "None", 3320), host_name("h", "db-b", 3306)
    ('db2', 'sandbox:3320', 'db-b')
    """
    name = report_host if report_host and report_host not in _UNSET else hostname
    return name if port in (None, DEFAULT_PORT) else f"{name}:{port}"


def _offset(fields: dict[str, str]) -> int | None:
    m = _OFFSET.match(fields.get("Time Zone Offset", ""))
    if m:
        seconds = int(m["h"]) * 3600 + int(m["m"]) * 60 + int(m["s"])
        return -seconds if m["sign"] else seconds
    utc = pd.to_datetime(fields.get("UTC Time"), errors="coerce")
    local = pd.to_datetime(fields.get("Local Time"), errors="coerce")
    if pd.isna(utc) or pd.isna(local):
        return None
    return int(round((local - utc).total_seconds() / OFFSET_QUANTUM_S) * OFFSET_QUANTUM_S)


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a ``.instance`` file into ``meta`` (see the module docstring)."""
    fields: dict[str, str] = {}
    lines = [raw.rstrip("\r\n") for raw in stream]
    first = _HOSTNAME.match(lines[0]) if lines else None
    if first is None:
        raise ParseError(member, 1, lines[0] if lines else "", "not a MySQL Shell .instance file")
    for line in lines[2:]:
        key, sep, value = line.partition(": ")
        if sep:
            fields[key.strip()] = value.strip()
    port_m = _PORT.match(lines[1]) if len(lines) > 1 else None
    port = int(port_m["port"]) if port_m else None
    report = first["report"] if first["report"] not in _UNSET else None
    inst = re.match(r"^(\d+)\.instance$", posixpath.basename(member))
    host = host_name(first["host"], report, port)
    utc = pd.to_datetime(fields.get("UTC Time"), errors="coerce")
    meta: dict[str, object] = {
        "host": host,
        "host_origin": f"MySQL Shell {posixpath.basename(member)}: Hostname {first['host']}, "
        f"report_host {report or 'unset'}, Port {port}",
        "hostname": first["host"],
        "report_host": report,
        "port": port,
        "server_id": fields.get("Server ID"),
        "server_uuid": fields.get("Server UUID"),
        "version": fields.get("Version"),
        "utc_offset_s": _offset(fields),
        "utc_offset_origin": f"MySQL Shell {posixpath.basename(member)}: the server's Time Zone Offset "
        "(TIMEDIFF(NOW(), UTC_TIMESTAMP())), else Local Time minus UTC Time",
        "utc_time": None if pd.isna(utc) else utc.isoformat(),
        "instance": inst.group(1) if inst else None,
        "variant": f"MySQL Shell instance file ({fields.get('Version', 'version not given')})",
    }
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"mysqlsh_instance": empty_frame()},
        clock=Clock.INFERRED,
        meta=meta,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SERVER  # numbers and names of the server only
