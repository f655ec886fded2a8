"""Who replicates from whom among a case's hosts, read from each host's own capture.

A replica's SHOW SLAVE STATUS (``replica_status``: ``source_host`` = Master_Host, ``source_port`` =
Master_Port, ``source_server_id`` = Master_Server_Id) names its source; the source is the host of the
case whose SHOW GLOBAL VARIABLES (``Timeline.variables``) match, tried in this order:

1. Master_Server_Id = ``server_id`` (unique in a replication topology: the server refuses a source
   with its own id);
2. Master_Host = the host's name, ``report_host`` or ``hostname`` (case-insensitive), and
   Master_Port = ``port`` when both are known;
3. Master_Host a loopback address (127.0.0.1, ::1, localhost) and Master_Port = ``port``: servers
   sharing one machine.

A Galera node is a host whose variables say ``wsrep_on`` ON or whose status carries wsrep counters.
Sources: MariaDB Knowledge Base, "SHOW REPLICA STATUS" and "server_id".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from analyzer.detect import variable, variable_number
from analyzer.timeline.timeline import Timeline

#: How far behind a replica is lagging (Seconds_Behind_Master), for the replica's own rule
#: (analyzer/rules/replication.py) and the cross-host one (analyzer/cluster/rules.py).
LAG_S = 60.0  # a minute behind: reads from the replica see data a minute old
LAG_CRITICAL_S = 600.0  # ten minutes: failover to it would lose or wait for that much

#: A lag that grows this fast (s of lag per s of capture) with LAG_GROWING_MIN_S reached counts as
#: falling behind even under LAG_S: a 20-s capture of a replica that loses a second a second.
LAG_GROWTH_S_PER_S = 0.3
LAG_GROWING_MIN_S = 10.0

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def lag_growth(rs: pd.DataFrame) -> tuple[float, bool]:
    """How fast Seconds_Behind_Master grew over the snapshots ``rs`` (s of lag per s of capture) and
    whether the replica falls behind: the growth is LAG_GROWTH_S_PER_S or more and the lag reached
    LAG_GROWING_MIN_S. (0.0, False) with fewer than two known lags."""
    rs = rs.sort_values("ts")
    lag = rs["seconds_behind"].dropna()
    if len(lag) < 2:
        return 0.0, False
    dt = (rs.loc[lag.index[-1], "ts"] - rs.loc[lag.index[0], "ts"]).total_seconds() or 1.0
    growth = (float(lag.iloc[-1]) - float(lag.iloc[0])) / dt
    return growth, growth >= LAG_GROWTH_S_PER_S and float(lag.max()) >= LAG_GROWING_MIN_S


@dataclass(frozen=True)
class Link:
    """One replication channel between two hosts of the case: ``replica`` replicates from ``source``
    (host names); ``channel`` the connection name ('' for the default); ``how`` the clue that matched
    (``"Master_Server_Id 1 = server_id of db-a"``); ``rows`` the replica's SHOW SLAVE STATUS rows of
    that channel (a ``replica_status`` frame)."""

    replica: str
    source: str
    channel: str
    how: str
    rows: pd.DataFrame


def _number(value: object) -> float | None:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if pd.isna(out) else out


def find_source(
    timelines: Mapping[str, Timeline], replica: str, host: str, port: float | None, server_id: float | None
) -> tuple[str, str] | None:
    """The host among ``timelines`` (other than ``replica``) that is the source named by Master_Host
    ``host``, Master_Port ``port`` and Master_Server_Id ``server_id``, with the clue that matched
    (module docstring order); None when no host matches."""
    others = [(name, tl) for name, tl in timelines.items() if name != replica]
    if server_id is not None:
        for name, tl in others:
            if variable_number(tl, "server_id") == server_id:
                return name, f"Master_Server_Id {server_id:.0f} = server_id of {name}"
    wanted = (host or "").strip().lower()
    for name, tl in others:
        names = {name.lower()} | {str(variable(tl, v) or "").lower() for v in ("report_host", "hostname")}
        own_port = variable_number(tl, "port")
        if wanted and wanted in names and (port is None or own_port is None or own_port == port):
            return name, f"Master_Host {host!r} = {name}" + (f", Master_Port {port:.0f}" if port else "")
    if wanted in LOOPBACK and port is not None:
        for name, tl in others:
            if variable_number(tl, "port") == port:
                return name, f"Master_Host {host} and Master_Port {port:.0f} = port of {name} (one machine)"
    return None


def replication_links(timelines: Mapping[str, Timeline]) -> list[Link]:
    """Every replication channel whose source is among ``timelines``, in host order (a replica whose
    source is not in the case gives no link)."""
    links = []
    for name, tl in timelines.items():
        rs = tl.frame("replica_status")
        if not len(rs) or "source_host" not in rs:
            continue
        channels = rs["channel"].fillna("") if "channel" in rs else pd.Series("", index=rs.index)
        for channel, rows in rs.groupby(channels, sort=False):
            last = rows.sort_values("ts").iloc[-1]
            found = find_source(
                timelines,
                name,
                str(last.get("source_host") or ""),
                _number(last.get("source_port")),
                _number(last.get("source_server_id")),
            )
            if found is not None:
                links.append(Link(name, found[0], str(channel), found[1], rows))
    return links


def parallel_workers(tl: Timeline) -> str:
    """The replica's applier threads in words: ``"slave_parallel_threads 0 (one SQL thread)"``, from
    ``slave_parallel_threads`` (MariaDB), ``replica_parallel_workers`` / ``slave_parallel_workers``
    (MySQL); ``"parallel apply unknown"`` when the capture has none of them."""
    for name in ("slave_parallel_threads", "replica_parallel_workers", "slave_parallel_workers"):
        value = variable_number(tl, name)
        if value is not None:
            return f"{name} {value:.0f}" + (" (one SQL thread applies every event)" if value <= 1 else "")
    return "parallel apply unknown"


def is_galera(tl: Timeline) -> bool:
    """True when the host is a Galera node: ``wsrep_on`` ON, or wsrep status counters in its capture."""
    if str(variable(tl, "wsrep_on") or "").upper() == "ON":
        return True
    ma = tl.frame("mysqladmin")
    return bool(len(ma)) and "variable" in ma and bool((ma["variable"] == "wsrep_last_committed").any())


#: Server settings that change how fast a server applies or commits writes: a node (or replica) set
#: apart from the others by one of them is the first place to look when it falls behind.
APPLY_SETTINGS = (
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "innodb_flush_method",
    "innodb_buffer_pool_size",
    "innodb_io_capacity",
    "wsrep_slave_threads",
    "slave_parallel_threads",
    "replica_parallel_workers",
    "log_slave_updates",
    "innodb_doublewrite",
)


def differing_settings(tl: Timeline, others: list[Timeline]) -> list[tuple[str, str, str]]:
    """The APPLY_SETTINGS on which the host (``tl``) differs from every other host while those agree
    among themselves: (name, the host's value, the others' value), e.g. ``("sync_binlog", "1", "0")``;
    settings missing on any host are skipped. Read from each host's SHOW GLOBAL VARIABLES
    (``Timeline.variables``)."""
    out = []
    for name in APPLY_SETTINGS:
        mine = variable(tl, name)
        theirs = {variable(o, name) for o in others}
        if mine is None or None in theirs or len(theirs) != 1:
            continue
        (value,) = theirs
        if str(value) != str(mine):
            out.append((name, str(mine), str(value)))
    return out


def settings_phrase(name: str, found: list[tuple[str, str, str]], whose: str) -> str:
    """``found`` (``differing_settings``) as a sentence: ``"db-b's settings differ from its source's:
    sync_binlog 1 (vs 0)."``; '' when nothing differs."""
    if not found:
        return ""
    return (
        f"{name}'s settings differ from {whose}: " + "; ".join(f"{n} {m} (vs {o})" for n, m, o in found) + "."
    )
