"""Parse ``netstat -antp`` snapshots (pt-stalk ``-netstat``) into TCP sockets counted per state,
server port and client host.

Accepts:
    net-tools ``netstat -ant``/``-antp``/``-antpW`` after ``TS`` markers (pt-stalk: ``(echo $ts;
    netstat -antp)`` every second) or a single run; ``tcp`` and ``tcp6`` rows; IPv6 and IPv4-mapped
    addresses (``::ffff:10.0.0.7:3306``); the ``PID/Program name`` column present or not.

Sample input (pt-stalk 3.2.1 ``-netstat``, net-tools 2.10)::

    TS 1795794782.915004006 2026-11-27 15:53:02
    Active Internet connections (servers and established)
    Proto Recv-Q Send-Q Local Address           Foreign Address         State       PID/Program name
    tcp        0      0 127.0.0.1:33461         0.0.0.0:*               LISTEN      22958/mysqld
    tcp        0      0 127.0.0.1:40120         127.0.0.1:33461         TIME_WAIT   -

Output:
    frame ``netstat_conns`` (one row per snapshot, state, server port and client): ``ts``
    datetime64[ns, UTC] (``ts_source``), ``line_no`` int64 (the first row of the group), ``state``
    str (``ESTABLISHED``, ``TIME_WAIT``, ``LISTEN`` ...), ``server_port`` int64, ``client`` str (the
    remote address of an inbound socket, the local one of a socket to a port this host listens on; empty
    for LISTEN), ``direction`` str (``in``: to a port listening here; ``out``: to another host),
    ``sockets`` int64. A connection between two local processes is seen from both ends (two rows).

Warnings: ``odd-line`` (a ``tcp`` row without its six fields).

Errors: ``ParseError`` (member, line) when the first meaningful line is neither a marker nor a
netstat title, header or ``tcp`` row.

Source: netstat(8), net-tools 2.10.

>>> src = parse(["Proto Recv-Q Send-Q Local Address Foreign Address State",
...   "tcp 0 0 0.0.0.0:3306 0.0.0.0:* LISTEN", "tcp 0 0 10.0.0.5:3306 10.0.0.7:51000 ESTABLISHED",
...   "tcp 0 0 10.0.0.5:3306 10.0.0.7:51002 ESTABLISHED"], member="n", clock=ClockHints())
>>> src.main[["state", "server_port", "client", "sockets"]].values.tolist()
[['ESTABLISHED', 3306, '10.0.0.7', 2], ['LISTEN', 3306, '', 1]]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import pandas as pd

from parsers._snapshots import Snapshots, ts_column
from parsers.base import ClockHints, ParsedSource, ParseError, ParseWarning

FORMAT = "netstat"

_TITLES = ("Active Internet connections", "Proto Recv-Q Send-Q", "Active UNIX domain sockets")


def sniff(head: list[str]) -> bool:
    """True when a head line is netstat's ``Proto Recv-Q Send-Q Local Address`` header."""
    return any(line.startswith("Proto Recv-Q Send-Q Local Address") for line in head)


def _split_addr(addr: str) -> tuple[str, str]:
    host, _, port = addr.rpartition(":")
    if host.startswith("::ffff:"):
        host = host[7:]
    return host, port


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read netstat snapshots into the ``netstat_conns`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    snaps = Snapshots(stream, clock)
    groups: list[dict[str, object]] = []
    pending: list[tuple[int, str, str, str, str, str]] = []  # rows of the current snapshot
    current_ts = None
    seen_tcp = False

    def flush(ts: pd.Timestamp) -> None:
        listening = {lp for _, st, _, lp, _, _ in pending if st == "LISTEN"}
        count: Counter[tuple[str, int, str, str]] = Counter()
        first: dict[tuple[str, int, str, str], int] = {}
        for no, state, lhost, lport, fhost, fport in pending:
            if state == "LISTEN":
                key = (state, lport, "", "in")
            elif lport in listening:
                key = (state, lport, fhost, "in")
            elif fport in listening:
                key = (state, fport, lhost, "in")
            else:
                key = (state, fport, fhost, "out")
            count[key] += 1
            first.setdefault(key, no)
        for key, n in count.items():
            groups.append({"ts": ts, "line_no": first[key], "state": key[0], "server_port": key[1],
                           "client": key[2], "direction": key[3], "sockets": n})  # fmt: skip
        pending.clear()

    for no, ts, line in snaps:
        if ts is not current_ts and pending:
            flush(current_ts)
        current_ts = ts
        if not line.strip():
            continue
        if line.startswith("tcp"):
            fields = line.split()
            if len(fields) < 6 or ":" not in fields[3] or ":" not in fields[4]:
                warnings.append(ParseWarning(no, "odd-line", f"not a netstat tcp row: {line[:80]!r}"))
                continue
            lhost, lport = _split_addr(fields[3])
            fhost, fport = _split_addr(fields[4])
            if not lport.isdigit() or not (fport.isdigit() or fport == "*"):
                warnings.append(ParseWarning(no, "odd-line", f"unreadable address: {line[:80]!r}"))
                continue
            pending.append((no, fields[5], lhost, int(lport), fhost, int(fport) if fport.isdigit() else 0))
            seen_tcp = True
            continue
        if line.startswith(_TITLES) or line.startswith(("udp", "unix", "raw")) or seen_tcp:
            continue
        raise ParseError(member, no, line, "not netstat output: expected its header or a tcp row")
    if pending:
        flush(current_ts)
    frame = pd.DataFrame(
        groups, columns=["ts", "line_no", "state", "server_port", "client", "direction", "sockets"]
    )
    frame["ts"] = ts_column(list(frame["ts"]))
    frame = frame.astype({"line_no": "int64", "server_port": "int64", "sockets": "int64"})
    frame = frame.sort_values(["ts", "state", "server_port", "client"], kind="stable").reset_index(drop=True)
    frame.insert(1, "ts_source", "marker" if snaps.snapshots else "inferred")
    runs = max(snaps.snapshots, 1 if len(frame) else 0)
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"netstat_conns": frame},
        clock=snaps.clock,
        warnings=warnings,
        meta={"variant": f"netstat -ant, {runs} snapshot{'s' if runs != 1 else ''}"},
        ts_is_local=snaps.ts_is_local,
    )
