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
>>> src.frames["netstat_conns"][["state", "server_port", "client", "sockets"]].values.tolist()
[['ESTABLISHED', 3306, '10.0.0.7', 2], ['LISTEN', 3306, '', 1]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers._snapshots import ChunkedRows, table_source
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource
from parsers.sensitive import Sensitive

FORMAT = "netstat"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

_TITLES = ("Active Internet connections", "Proto Recv-Q Send-Q", "Active UNIX domain sockets")


def sniff(head: list[str]) -> bool:
    """True when a head line is netstat's ``Proto Recv-Q Send-Q Local Address`` header."""
    return any(line.startswith("Proto Recv-Q Send-Q Local Address") for line in head)


#: A tcp row: local address and port, foreign address and port (``*`` when listening), state.
_ROW = re.compile(r"^tcp6?\s+\d+\s+\d+\s+(\S*):(\d+)\s+(\S*):(\d+|\*)\s+([A-Z_0-9]+)")
#: The same, over a chunk of text (one regex pass finds every row).
_ROW_M = re.compile(_ROW.pattern, re.M)
#: TCP ports are below this: a (snapshot, port) pair is ``snapshot * PORTS + port``.
PORTS = 65536


def _reduce(
    snap: np.ndarray, line_no: np.ndarray, groups: list[tuple[str, ...]], times: list[pd.Timestamp]
) -> pd.DataFrame:
    """Sockets of whole snapshots counted per (snapshot, state, server port, client, direction), in
    NumPy on integer keys: an hour of a busy server's sockets is millions of rows. ``groups``: the
    ``_ROW`` groups of each row (local host and port, foreign host and port, state)."""
    lhost, lport, fhost, fport, state = (np.asarray(c, dtype=object) for c in zip(*groups, strict=True))
    lport = lport.astype("int64")
    fport = np.where(fport == "*", "0", fport).astype("int64")
    state_codes, states = pd.factorize(state)
    listen = state == "LISTEN"
    # (snapshot, port) as one integer: is the other end a port this host listens on in that snapshot?
    listening = np.unique(snap[listen] * PORTS + lport[listen])
    l_in = np.isin(snap * PORTS + lport, listening) & ~listen
    f_in = np.isin(snap * PORTS + fport, listening) & ~listen & ~l_in
    inbound = listen | l_in
    server_port = np.where(inbound, lport, fport)
    client = np.where(listen, "", np.where(f_in, lhost, fhost))
    client_codes, clients = pd.factorize(client)
    clients = np.asarray(pd.Index(clients).str.removeprefix("::ffff:"), dtype=object)
    direction = (inbound | f_in).astype("int64")  # 1: in
    key = ((snap * len(states) + state_codes) * PORTS + server_port) * len(clients) + client_codes
    key = key * 2 + direction
    uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
    lines = np.minimum.reduceat(line_no[np.argsort(key, kind="stable")], np.r_[0, np.cumsum(counts)[:-1]])
    return pd.DataFrame(
        {
            "ts": [times[i] for i in snap[first]],
            "line_no": lines,
            "state": states[state_codes[first]],
            "server_port": server_port[first],
            "client": clients[client_codes[first]],
            "direction": np.where(direction[first] == 1, "in", "out"),
            "sockets": counts,
        }
    )


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["ts", "state", "server_port", "client"], kind="stable").reset_index(drop=True)


def _meta(frame: pd.DataFrame, markers: int) -> dict[str, object]:
    runs = max(markers, 1 if len(frame) else 0)
    return {"variant": f"netstat -ant, {runs} snapshot{'s' if runs != 1 else ''}"}


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read netstat snapshots into the ``netstat_conns`` frame; see the module docstring.

    Chunks of a few MB cut at markers; in each, the tcp rows are found by one regex pass and their
    snapshot and line by NumPy (``parsers._snapshots.ChunkedRows``), then counted per snapshot
    (``_reduce``)."""
    chunks = ChunkedRows(
        stream,
        clock,
        member=member,
        row=_ROW_M,
        what="netstat output: expected its header or a tcp row",
        is_row=lambda line: line.startswith("tcp"),
        count_rows=lambda text: text.count("\ntcp") + text.startswith("tcp"),
        head_ok=lambda line: line.startswith((*_TITLES, "udp", "unix", "raw")),
    )
    parts = [_reduce(m.snap, m.line_no, m.groups, chunks.times) for m in chunks]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["ts"])
    columns = {
        "state": "object",
        "server_port": "int64",
        "client": "object",
        "direction": "object",
        "sockets": "int64",
    }
    return table_source(
        table,
        fmt=FORMAT,
        member=member,
        frame="netstat_conns",
        columns=columns,
        timed=chunks,
        markers=chunks.markers,
        meta=_meta,
        warnings=chunks.warnings,
        finish=_sorted,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(words=("linux",), hosts=("netstat_conns.client",))
