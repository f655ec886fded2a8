"""``semisync-ack-wait``: a semi-synchronous source whose commits wait for an acknowledgement, and the
replica of the bundle that does not give it.

The source's side is the holder reader ``analyzer.waits.holders.replication.replica_ack``'s figures
(sessions in ``Waiting for semi-sync ACK from slave`` / ``... from replica``, Rpl_semi_sync_master_clients,
_wait_sessions, _no_tx as a rate). The replicas are the hosts of the case that replicate from it
(``analyzer.cluster.topology.replication_links``); the one holding the commits is, in this order:

1. a replica whose I/O thread is not running (Slave_IO_Running not Yes in its last snapshot): it
   receives nothing, so it acknowledges nothing; its Last_IO_Error says why, or, empty, that it was
   stopped by hand (STOP SLAVE IO_THREAD);
2. a replica that does not acknowledge as semi-synchronous (rpl_semi_sync_slave_enabled /
   rpl_semi_sync_replica_enabled OFF in its -variables).

Neither shown: the finding says which replicas were read and that none shows why. Sources: MySQL 8.4
Reference Manual, 19.4.10 "Semisynchronous Replication"; MariaDB Server documentation,
"Semisynchronous Replication".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from analyzer.cluster import topology
from analyzer.cluster.nodes import cross
from analyzer.cluster.texts import SEMISYNC_TEXTS
from analyzer.detect import cite, span, variable
from analyzer.findings import Culprit, Evidence, Finding, Severity
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import replication
from analyzer.waits.read import waits

#: A replica's semi-sync switch (MariaDB and MySQL before 8.0.26, then MySQL 8.0.26+).
REPLICA_ENABLED = ("rpl_semi_sync_slave_enabled", "rpl_semi_sync_replica_enabled")
#: The words of an ACK wait in a State (``Waiting for semi-sync ACK from slave``, ``... replica connection``).
ACK_STATE_WORDS = "semi-sync"
#: Commits wait in this many snapshots or more: critical (every write of the source waits).
CRITICAL_SNAPSHOTS = 2


def _shows_ack_states(tl: Timeline) -> bool:
    pl = tl.frame("processlist")
    if not len(pl) or "state" not in pl:
        return False
    return bool(pl["state"].astype("string").str.contains(ACK_STATE_WORDS, regex=False).fillna(False).any())


def _replica_semisync(tl: Timeline) -> bool | None:
    """The replica acknowledges as semi-synchronous (True), does not (False), or its -variables do not say."""
    for name in REPLICA_ENABLED:
        raw = variable(tl, name)
        if raw not in (None, ""):
            return str(raw).upper() in ("ON", "1")
    return None


def _io(link: topology.Link) -> tuple[str, str, pd.DataFrame]:
    """The replica's Slave_IO_Running in its last snapshot, its Last_IO_Error (errno and text, '' for
    none) and its rows."""
    rs = link.rows.sort_values("ts")
    last = rs.iloc[-1]
    error = str(last.get("last_io_error") or "").strip()
    errno = last.get("last_io_errno")
    if error and errno is not None and pd.notna(errno) and errno:
        error = f"error {errno:.0f}: {error}"
    return str(last.get("io_running")), error[:300], rs


def _holder(
    timelines: Mapping[str, Timeline], links: list[topology.Link]
) -> tuple[str, str, str, list[Evidence]] | None:
    """The replica holding the source's commits (module docstring): (name, the phrase, its fix, evidence)."""
    for link in links:
        io, error, rs = _io(link)
        if io != "Yes" and _replica_semisync(timelines[link.replica]) is not False:
            why = f"Last_IO_Error {error}" if error else "no error: stopped by hand (STOP SLAVE IO_THREAD)"
            ev = [cite(timelines[link.replica], "Slave_IO_Running", io, "", "replica_status.io_running", rs)]
            if error:
                ev.append(
                    cite(
                        timelines[link.replica],
                        "Last_IO_Error",
                        error,
                        "",
                        "replica_status.last_io_error",
                        rs,
                    )
                )
            fix = (
                f"Bring {link.replica}'s I/O thread back: "
                + (f"fix what its Last_IO_Error says ({error}), then " if error else "")
                + f"START SLAVE IO_THREAD on {link.replica} (START REPLICA IO_THREAD on MySQL 8.0.22+)"
                + ("" if error else ", and find who or what stopped it (its error log says when)")
                + "."
            )
            return link.replica, f"{link.replica}, its replica, stopped its I/O thread ({why})", fix, ev
    for link in links:
        if _replica_semisync(timelines[link.replica]) is False:
            ev = [Evidence(f"variable {REPLICA_ENABLED[0]} of {link.replica}", "OFF", "", "variables")]
            fix = (
                f"Turn semi-sync on at {link.replica} (SET GLOBAL rpl_semi_sync_slave_enabled=ON, then\n"
                "STOP SLAVE IO_THREAD; START SLAVE IO_THREAD so it reconnects as semi-synchronous)."
            )
            return (
                link.replica,
                f"{link.replica}, its replica, does not acknowledge (semi-sync off on it)",
                fix,
                ev,
            )
    return None


def semisync_ack_wait(timelines: Mapping[str, Timeline]) -> Finding | None:
    """``semisync-ack-wait``: a host that is a semi-synchronous source (or shows sessions in a semi-sync
    ACK state) whose commits wait (``replication.waiting_for_ack``), with the replica of the bundle
    that holds them (module docstring) as culprit (kind ``host``). None when no source waits."""
    links = topology.replication_links(timelines)
    for name, tl in timelines.items():
        if not (replication.enabled(tl) or _shows_ack_states(tl)):
            continue
        figures = replication.ack_figures(tl, waits(tl))
        if not replication.waiting_for_ack(figures):
            continue
        mine = [link for link in links if link.source == name]
        found = _holder(timelines, mine)
        timeout = replication.timeout_words(tl)
        after = (
            f"\nUntil a replica acknowledges, each commit on {name} waits rpl_semi_sync_master_timeout "
            f"({timeout}) and {name} then goes on asynchronous (Rpl_semi_sync_master_status OFF) until a "
            "replica catches up: a shorter timeout bounds the wait, and commits are then on no replica."
        )
        replicas = "; ".join(
            f"{link.replica}: Slave_IO_Running {_io(link)[0]}, semi-sync "
            f"{ {True: 'on', False: 'off', None: 'unknown'}[_replica_semisync(timelines[link.replica])] }"
            for link in mine
        )
        evidence: list[Evidence] = list(figures["evidence"])  # type: ignore[call-overload]
        if found is not None:
            evidence = [*found[3], *evidence]
        rows = figures["rows"]
        snapshots = rows["ts"].nunique() if len(rows) else 0  # type: ignore[union-attr]
        finding = SEMISYNC_TEXTS.finding(
            "semisync-ack-wait",
            Severity.CRITICAL if snapshots >= CRITICAL_SNAPSHOTS else Severity.WARNING,
            span(rows) or span(replication.counter_rows(tl, replication.WAIT_SESSIONS)),  # type: ignore[arg-type]
            evidence,
            related=("replica-stopped",),
            source=name,
            holder=found[1] if found else "no replica of the bundle shows why",
            timeout=timeout,
            contention=replication.ack_contention(tl, figures),
            replicas=f"Its replicas in the bundle: {replicas}."
            if mine
            else "No replica of it is in the bundle.",
            fix=(found[2] if found else replication.ACK_FIX.format(timeout=timeout)) + after,
        )
        if found is None:
            return cross(finding, [name])
        culprit = Culprit(kind="host", id=found[0], statement=found[1], evidence=tuple(found[3]))
        return cross(replace(finding, culprit=culprit), [found[0], name])
    return None
