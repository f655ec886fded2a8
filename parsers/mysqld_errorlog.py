"""Parse the mysqld error log (pt-stalk ``-log_error``, MySQL Shell's ``.error_log``, a loose ``*.err``)
into the events that matter: crashes, restarts, assertion failures, ``[ERROR]`` lines, InnoDB long
semaphore waits, "Too many connections" and replication errors.

Accepts:
    MySQL 8.0/8.4 (``2026-04-21T16:02:21.044888Z 0 [ERROR] [MY-012574] [InnoDB] ...``, UTC ``Z`` or a
    ``+02:00`` offset with ``log_timestamps=SYSTEM``); MySQL 5.7 (``2026-04-21T16:02:21.044888Z 0
    [Note] ...``); MySQL 5.6 and MariaDB 10.x (``2026-11-27 15:53:53 0 [Note] ...``, the server's wall
    clock); the old ``YYMMDD HH:MM:SS`` prefix (MySQL 5.5, mysqld_safe, MariaDB's signal handler:
    ``261127 15:53:58 [ERROR] /usr/sbin/mysqld got signal 11 ;``). Lines without a time (a crash's
    stack trace, ``Version: ...``, InnoDB monitor text) belong to the event before them.

Sample input (pt-stalk 3.2.1 ``-log_error``, MariaDB 10.11.19, ``kill -SEGV`` then a restart)::

    2026-11-27 15:53:57 34 [Warning] Aborted connection 34 to db: 'unconnected' user: 'unauthenticated' host: 'localhost' (This connection closed normally without authentication)
    261127 15:53:58 [ERROR] /usr/sbin/mysqld got signal 11 ;
    Sorry, we probably made a mistake, and this is a bug.
    2026-11-27 15:54:00 0 [Note] InnoDB: Starting crash recovery from checkpoint LSN=44404
    2026-11-27 15:54:00 0 [Note] /usr/sbin/mysqld: ready for connections.
    Version: '10.11.19-MariaDB-0+deb12u1-log'  socket: '/tmp/hmembers/run/mysqld.sock'  port: 33461  Debian 12

Output:
    frame ``mysqld_errors`` (one row per event of a kind in ``KINDS``; notes and warnings of no such
    kind are only counted): ``ts`` datetime64[ns, UTC] (``ts_source`` ``line``), ``line_no`` and
    ``line_end`` int64 (the event's first and last line, continuation lines included), ``prio`` str
    (``ERROR``, ``Warning``, ``Note``, ``System``; empty when the line has none), ``kind`` str (one of
    ``KINDS``), ``code`` str (``MY-013183`` or empty), ``signal`` float64 (the signal of a crash, else
    NaN), ``message`` str (the first line's message, at most ``MESSAGE_CHARS`` characters).
    ``meta["counts"]``: events per kind; ``meta["lines_by_prio"]``: timed lines per priority;
    ``meta["aborted_connections"]``: ``Aborted connection`` warnings.
    Times are UTC for ``Z``/offset lines, else the server's wall clock (``ts_is_local``).

Warnings: ``no-time`` (lines before the first timed line, kept as nothing).

Errors: ``ParseError`` (member, line) when no line in the first ``SNIFF_LINES`` has an error log prefix.

Source: MySQL 8.4 Reference Manual, "The Error Log" (error log message format); MariaDB
Knowledge Base, "Error Log"; MySQL 5.7 Reference Manual, ``log_timestamps``.

>>> src = parse(["2026-04-21T16:02:21.342170Z 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections.",
...              "2026-04-21T16:05:00.000000Z 12 [ERROR] [MY-010045] [Server] Too many connections"],
...             member="e", clock=ClockHints())
>>> src.main[["kind", "prio", "code"]].values.tolist()
[['ready', 'System', 'MY-010931'], ['too-many-connections', 'ERROR', 'MY-010045']]
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers._snapshots import ts_column
from parsers.base import Blocks, Clock, ClockHints, FormatTraits, ParsedSource, ParseError, ParseWarning
from parsers.layout import place
from parsers.sensitive import Sensitive

FORMAT = "mysqld_errorlog"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

#: A first line is looked for this far before the member is refused.
SNIFF_LINES = 200
MESSAGE_CHARS = 300

#: MySQL 5.7+: ISO time with ``Z`` or an offset, thread id, [prio], then (8.0) [code] [subsystem].
_ISO = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?P<tz>Z|[+-]\d{2}:?\d{2})?\s+(?P<thread>\d+)\s+"
    r"\[(?P<prio>[A-Za-z]+)\](?:\s+\[(?P<code>MY-\d+)\]\s+\[(?P<sub>[A-Za-z]+)\])?\s?(?P<msg>.*)$"
)
#: MySQL 5.6, MariaDB 10.x: wall-clock time, thread id, [prio].
_SPACE = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2} {1,2}\d{1,2}:\d{2}:\d{2})\s+(?:(?P<thread>\d+)\s+)?"
    r"(?:\[(?P<prio>[A-Za-z]+)\]\s?)?(?P<msg>.*)$"
)
#: MySQL 5.5, mysqld_safe, MariaDB's fatal signal handler: ``YYMMDD HH:MM:SS``.
_SHORT = re.compile(r"^(?P<ts>\d{6}\s+\d{1,2}:\d{2}:\d{2})\s+(?:\[(?P<prio>[A-Za-z]+)\]\s?)?(?P<msg>.*)$")

#: Event kinds, tested in this order on the event's text (first line plus its continuation lines);
#: each with the words of MySQL's and MariaDB's messages.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "crash",
        re.compile(r"got signal \d+|got exception|mysqld got signal|Fatal signal|terminated by signal", re.I),
    ),
    ("assertion", re.compile(r"Assertion failure|Failing assertion|assertion failed|Assertion `", re.I)),
    (
        "semaphore",
        re.compile(
            r"semaphore wait|has waited at .* seconds the semaphore|innodb_fatal_semaphore_wait_threshold",
            re.I,
        ),
    ),
    # Galera (MariaDB ``WSREP:`` and MySQL/PXC 8.0 ``[Galera]``/``[WSREP]`` lines; galera/gcs/src/gcs.cpp,
    # gcs_group.cpp, galera/src/replicator_smm.cpp): cluster membership and state, all ``[Note]``.
    (
        "wsrep-non-primary",
        re.compile(
            r"Received NON-PRIMARY|non-Primary, number of nodes|New COMPONENT: primary = no|"
            r"view_id\(NON_PRIM|no longer primary|is not primary",
            re.I,
        ),
    ),
    (
        "wsrep-sst",
        re.compile(
            r"SST/IST|State transfer required|requested state transfer|State transfer (?:to|from) .* "
            r"complete|"
            r"SST (?:complete|succeeded|failed|request)|IST (?:received|receiver|sender)|Will never "
            r"receive state|"
            r"selected .* as (?:a )?donor|Shifting \w+ -> (?:DONOR|JOINER)",
            re.I,
        ),
    ),
    (
        "wsrep-flow-control",
        re.compile(r"Flow-control interval|FC_STOP|FC_CONT|flow control|fc_limit changed", re.I),
    ),
    (
        "wsrep-state",
        re.compile(
            r"Shifting [A-Z_/]+ -> [A-Z_/]+|Server status change \w+ -> \w+|Restored state \w+ -> \w+|"
            r"synced with group|Synchronized with group|New cluster view|declaring node with index \d+ "
            r"suspected|"
            r"suspecting node|forgetting [0-9a-f]{8}|declaring [0-9a-f-]+ at .* inactive",
            re.I,
        ),
    ),
    ("too-many-connections", re.compile(r"Too many connections|max_connections.*reached", re.I)),
    (
        "replication",
        re.compile(
            (
                r"\[Repl\]|Slave SQL|Slave I/O|Replica SQL|Replica I/O|Error_code: ?MY-|relay log|Error "
                r"reading packet from server"
            ),
            re.I,
        ),
    ),
    (
        "crash-recovery",
        re.compile(
            r"Starting crash recovery|Recovering after a crash|database was not shut ?down normally", re.I
        ),
    ),
    (
        "start",
        re.compile(
            (
                r"Starting MariaDB|starting as process|mysqld_safe Starting|mysqld restarted|mysqld_safe "
                r"mysqld from pid file"
            ),
            re.I,
        ),
    ),
    ("ready", re.compile(r"^(?!X Plugin).*ready for connections", re.I)),
    (
        "shutdown",
        re.compile(
            r"Shutdown complete|Normal shutdown|Received SHUTDOWN|mysqld_safe mysqld from pid file .* ended",
            re.I,
        ),
    ),
)
#: Kinds kept only when the line is an error or warning (replication notes are routine).
_NEEDS_PROBLEM = {"replication", "too-many-connections"}
_SIGNAL = re.compile(r"signal (\d+)", re.I)
_ABORTED = "Aborted connection"


#: A Galera node's log named after the node (percona-toolkit's pt-galera-log-explainer test logs:
#: ``node1.log``, ``node2.2.log``, ``node1.20230315.log``).
_NODE_FILE = re.compile(r"^(?P<host>node\d+)(?:\.[\w-]+)*\.(?:log|err)$", re.I)
#: mysqld's default error log is ``<host_name>.err`` in the data directory (log_error unset).
_HOST_ERR = re.compile(r"^(?P<host>[A-Za-z0-9][A-Za-z0-9_.-]{0,62})\.err$")
#: Error log names that say nothing of the host.
GENERIC_NAMES = frozenset(
    {
        "mysqld",
        "mysql",
        "mariadb",
        "mariadbd",
        "error",
        "errors",
        "mysql-error",
        "mysqld-error",
        "mariadb-error",
        "log_error",
        "server",
        "mysqld.log",
        "log",
        "db",
        "localhost",
    }
)


def host_of_name(member: str) -> tuple[str, str] | None:
    """(host, reason) a loose error log's file name gives: ``node<N>`` of a Galera node's log, or the
    ``<host_name>.err`` mysqld names its log by default; None for a generic name (``mysqld.err``,
    ``error.log``) and for members of a pt-stalk or OSWatcher collection (their collection names the host).

    >>> host_of_name("galera/node2.2.log"), host_of_name("db-b.err"), host_of_name("notes/mysqld.err")
    (('node2', 'file name node2.2.log (a Galera node log named after its node)'), ('db-b', "file name db-b.err (mysqld's default log name: <host_name>.err)"), None)
    """
    if place(member).layout != "loose":
        return None
    base = posixpath.basename(member)
    m = _NODE_FILE.match(base)
    if m:
        return m["host"], f"file name {base} (a Galera node log named after its node)"
    m = _HOST_ERR.match(base)
    if m and m["host"].lower() not in GENERIC_NAMES:
        return m["host"], f"file name {base} (mysqld's default log name: <host_name>.err)"
    return None


def kind_of(body: str, prio: str) -> str | None:
    """The event kind of an error log entry (its text, continuation lines included, and its
    priority as written: ``ERROR``, ``Warning``, ``Note``, ``System``, or empty), or None for an
    entry of no kind. Replication and connection messages count only as errors or warnings; Galera's
    cluster events only below ``ERROR`` (an ``[ERROR]`` about SST stays an ``error``).

    >>> kind_of("WSREP: Received NON-PRIMARY.", "Note"), kind_of("SST script aborted with error 32", "ERROR")
    ('wsrep-non-primary', 'error')
    """
    problem = prio in ("ERROR", "Error", "Warning", "")
    for kind, pattern in KINDS:
        if kind in _NEEDS_PROBLEM and not problem:
            continue
        if kind.startswith("wsrep-") and prio.upper() == "ERROR":
            continue
        if pattern.search(body):
            return kind
    return "error" if prio.upper() == "ERROR" else None


def _first(line: str) -> re.Match[str] | None:
    if not line[:1].isdigit():
        return None
    return _ISO.match(line) or _SPACE.match(line) or _SHORT.match(line)


def sniff(head: list[str]) -> bool:
    """True when a head line has an error log prefix and a ``[Note]``/``[Warning]``/``[ERROR]``/
    ``[System]`` priority or names mysqld, InnoDB or mysqld_safe."""
    for line in head:
        m = _first(line)
        if m is None:
            continue
        if m["prio"] in ("Note", "Warning", "ERROR", "System", "Error") or re.search(
            r"mysqld|mariadbd|InnoDB|mysqld_safe", m["msg"]
        ):
            return True
    return False


def _time(m: re.Match[str]) -> tuple[pd.Timestamp, bool]:
    """The line's time and whether it is UTC (``Z`` or an offset) rather than the wall clock."""
    raw = m["ts"]
    if m.re is _SHORT:
        return pd.to_datetime(" ".join(raw.split()), format="%y%m%d %H:%M:%S"), False
    if m.re is _ISO and m.groupdict().get("tz"):
        return pd.Timestamp(raw + ("+00:00" if m["tz"] == "Z" else m["tz"])).tz_convert("UTC").tz_localize(
            None
        ), True
    return pd.Timestamp(" ".join(raw.split())), False


class _Log:
    """What ``parse`` gathers line by line: the events (a timed line and the untimed lines after
    it, up to 40), the lines by priority, aborted connections, the time flavours seen."""

    def __init__(self, member: str) -> None:
        self.member = member
        self.events: list[dict[str, object]] = []
        self.by_prio: Counter[str] = Counter()
        self.aborted = 0
        self.utc_lines = self.local_lines = 0
        self.current: dict[str, object] | None = None
        self.text: list[str] = []
        self.untimed = 0
        self.seen = 0

    def close(self) -> None:
        """The event being read is done: kept when its text names a kind (``kind_of``)."""
        current = self.current
        if current is None:
            return
        body = " ".join(self.text)
        kind = kind_of(body, str(current["prio"]))
        if kind is not None:
            sig = _SIGNAL.search(body) if kind == "crash" else None
            self.events.append({**current, "kind": kind, "signal": float(sig.group(1)) if sig else np.nan})

    def line(self, no: int, line: str) -> None:
        """Line ``no``: a timed line opens an event (an aborted connection is only counted); an
        untimed one continues the event, or, before any, is counted (past ``SNIFF_LINES`` of them
        without a timed line: ``ParseError``)."""
        m = _first(line)
        if m is None:
            if self.current is not None:
                self.current["line_end"] = no
                if len(self.text) < 40:
                    self.text.append(line)
            elif line.strip():
                self.untimed += 1
                if self.untimed > SNIFF_LINES and not self.seen:
                    raise ParseError(
                        self.member, 1, "", "not a mysqld error log: no line starts with its time prefix"
                    )
            return
        self.close()
        self.seen += 1
        ts, is_utc = _time(m)
        self.utc_lines += is_utc
        self.local_lines += not is_utc
        prio = m["prio"] or ""
        self.by_prio[prio or "(none)"] += 1
        msg = m["msg"]
        if msg.startswith(_ABORTED):
            self.aborted += 1
            self.current, self.text = None, []
            return
        self.current = {
            "ts": ts,
            "line_no": no,
            "line_end": no,
            "prio": prio,
            "code": (m.groupdict().get("code") or ""),
            "message": msg[:MESSAGE_CHARS],
        }
        self.text = [msg]


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read an error log into the ``mysqld_errors`` frame; see the module docstring."""
    log = _Log(member)
    for no, raw in enumerate(stream, start=1):
        log.line(no, raw.rstrip("\r\n"))
    log.close()
    if not log.seen and log.untimed:
        raise ParseError(member, 1, "", "not a mysqld error log: no line starts with its time prefix")
    warnings: list[ParseWarning] = []
    if log.untimed and log.seen:
        warnings.append(
            ParseWarning(1, "no-time", f"{log.untimed} lines before the first timed line were skipped")
        )
    columns = ["ts", "line_no", "line_end", "prio", "kind", "code", "signal", "message"]
    frame = pd.DataFrame(log.events, columns=columns)
    frame["ts"] = ts_column([pd.Timestamp(t).tz_localize("UTC") for t in frame["ts"]])
    frame = frame.astype({"line_no": "int64", "line_end": "int64", "signal": "float64"})
    frame.insert(1, "ts_source", "line")
    flavour = (
        "MySQL 5.7+ (ISO times with a zone)"
        if log.utc_lines >= log.local_lines and log.utc_lines
        else "MariaDB / MySQL 5.6 (wall-clock times)"
    )
    meta: dict[str, object] = {
        "variant": f"mysqld error log, {flavour}, {log.seen} timed lines, {len(frame)} events",
        "counts": dict(Counter(frame["kind"])),
        "lines_by_prio": dict(log.by_prio),
        "aborted_connections": log.aborted,
    }
    named = host_of_name(member)
    if named is not None:
        meta["host"], meta["host_origin"] = named
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"mysqld_errors": frame},
        clock=Clock.PER_LINE,
        warnings=warnings,
        meta=meta,
        ts_is_local=log.local_lines > log.utc_lines,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    line_patterns=(
        re.compile(r"to db: '(?P<schema>[^']*)' user: '(?P<user>[^']*)' host: '(?P<host>[^']*)'"),
        re.compile(r"\bfor user '(?P<user>[^']*)'@'(?P<host>[^']*)'(?:.*? to database '(?P<schema>[^']*)')?"),
        re.compile(r"\bDefault database: '(?P<schema>[^']*)'"),
        # A crash report's statement, an applier's failed statement, a duplicate key's value.
        re.compile(r"\bQuery \(\w+\): (?P<statement>.*)"),
        re.compile(r"\bQuery: '(?P<statement>.*)'"),
        re.compile(r"\bDuplicate entry '(?P<literal>.*?)' for key"),
    ),
)
