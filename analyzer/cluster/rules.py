"""Cross-host rules: findings that need the timelines of several servers of one case.

``cross_host_findings(timelines)`` takes each host's ``Timeline`` by ``Host.name`` (the case's first
host first) and returns the findings that involve more than one of them, each with ``hosts`` set
(the cause first) and ``host`` None. The engine (``analyzer.engine.run_hosts``) calls it after it
ran every host's own rules; a one-host case never reaches it.

The rules (keys, in ``CLUSTER_RULES`` order) and what they read of each host:

- ``replica-lag-source``: a replica's SHOW SLAVE STATUS (``replica_status``: Seconds_Behind_Master,
  Read/Exec_Master_Log_Pos) against its source's write rate in the same minutes (``mysqladmin``:
  Com_insert/update/delete, Innodb_rows_inserted/updated/deleted, Binlog_bytes_written per second),
  explained by its cause (``analyzer.cluster.replica_causes.lag_cause``: a local lock, DDL, a table without a
  key, one large transaction, the I/O thread, commit cost, single-threaded apply, a delay), whose
  fix is the recommendation and whose culprit is the finding's.
- ``replica-stopped``: a replica whose SQL or I/O thread stopped (Last_SQL_Error / Last_IO_Error)
  while its source kept writing.
- ``galera-flow-control``: Galera's wsrep_flow_control_sent, wsrep_flow_control_paused_ns (or the
  gauge wsrep_flow_control_paused), wsrep_local_recv_queue(_avg) of every node: the node that sent
  flow control is the slow one; the others were paused.
- ``galera-node-behind``: a Galera node that is not Synced (wsrep_local_state: Donor/Desynced,
  Joining, Joined) or whose wsrep_local_recv_queue grows, sending no flow control, while another node
  commits (wsrep_last_committed): its cause from wsrep_desync_count and the states
  (``analyzer.cluster.galera_states``), and every node's state, queues, flow control and certification
  failures.
- ``galera-write-conflicts``: Galera nodes whose transactions fail certification or are aborted by an
  applier (wsrep_local_cert_failures, wsrep_local_bf_aborts per second), with the tables written on
  more than one node (``analyzer.cluster.certification``).
- ``semisync-ack-wait``: a semi-synchronous source whose commits wait for an acknowledgement, and its
  replica in the bundle that does not give it (``analyzer.cluster.semisync``).
- ``host-stall-holds-others``: one host's disk (iostat w_await) or CPU (vmstat r per CPU) saturated
  while the others are not, and the others wait for it (Galera nodes paused by the flow control it sent).
- ``load-imbalance``: one peer node (Galera, or servers that do not replicate from one another)
  takes most of the statements (Questions per second).

The source of a replica is found among the hosts (``analyzer.cluster.topology``) by Master_Server_Id against
``server_id``, then Master_Host / Master_Port against ``report_host``, ``hostname``, the host's name
and ``port``. Every rule compares the same minutes only (a source's rate is read in its replica's
snapshots' minutes; imbalance over the minutes every capture holds). A rule whose inputs are absent on
the hosts gives no finding; nothing is raised for missing inputs (the engine records an exception as
``RuleFailed`` for the cross-host rules as a whole). Sources: MariaDB Knowledge Base, "SHOW REPLICA STATUS",
"Galera Cluster Status Variables", "Flow Control in Galera Cluster"; Percona, "Galera Flow Control in Percona
XtraDB Cluster".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from analyzer.cluster import topology
from analyzer.cluster.certification import galera_write_conflicts
from analyzer.cluster.galera_states import galera_node_behind
from analyzer.cluster.nodes import cross, galera_flow_control, host_stall_holds_others, load_imbalance
from analyzer.cluster.replica_causes import LagCause, lag_cause, stopped_fix
from analyzer.cluster.semisync import semisync_ack_wait
from analyzer.cluster.texts import LAG_TEXTS, STOPPED_SEMISYNC, STOPPED_TEXTS
from analyzer.cluster.topology import LAG_CRITICAL_S, LAG_S
from analyzer.detect import cite, span, status
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import replication

WRITE_COMMANDS = ("Com_insert", "Com_update", "Com_delete")
ROW_COUNTERS = ("Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted")


def cross_host_findings(timelines: Mapping[str, Timeline]) -> list[Finding]:
    """The cross-host findings of ``timelines`` (host name -> that host's timeline, two or more; the
    first host first). Each finding has ``host`` None and ``hosts`` the servers it involves, the
    cause first. Fewer than two timelines: no finding."""
    if len(timelines) < 2:
        return []
    links = topology.replication_links(timelines)
    out: list[Finding] = []
    for link in links:
        found = replica_stopped(timelines, link) or replica_lag_source(timelines, link)
        if found is not None:
            out.append(found)
    peers = (
        host_stall_holds_others,
        galera_flow_control,
        galera_node_behind,
        galera_write_conflicts,
        semisync_ack_wait,
    ) + (() if links else (load_imbalance,))
    for rule in peers:
        found = rule(timelines)
        if found is not None:
            out.append(found)
    return out


def _in(rows: pd.DataFrame, windows: list[Window], slack_s: float = 2.0) -> pd.DataFrame:
    """The rows of ``rows`` (a ``ts`` column) inside any of ``windows``, ``slack_s`` either side."""
    if not len(rows) or not windows:
        return rows.iloc[0:0]
    slack = pd.Timedelta(seconds=slack_s)
    keep = pd.Series(False, index=rows.index)
    for w in windows:
        keep |= (rows["ts"] >= w.start - slack) & (rows["ts"] <= w.end + slack)
    return rows[keep.to_numpy()]


def rate(tl: Timeline, names: tuple[str, ...], windows: list[Window]) -> tuple[float | None, pd.DataFrame]:
    """Sum over ``names`` (mysqladmin counters of STATUS_KEPT) of each one's mean per-second rate in
    ``windows``, and the rows it read (for evidence); (None, empty) when no counter has a rate there."""
    total, seen, cited = 0.0, False, []
    for name in names:
        rows = _in(status(tl, name).dropna(subset=["per_s"]), windows)
        if len(rows):
            total += float(rows["per_s"].mean())
            seen = True
            cited.append(rows)
    return (total if seen else None), (pd.concat(cited) if cited else pd.DataFrame())


def write_rate_evidence(tl: Timeline, windows: list[Window]) -> tuple[dict[str, float], list[Evidence]]:
    """A source's write rate in ``windows``: ``statements`` (Com_insert+update+delete per s), ``rows``
    (Innodb_rows_inserted+updated+deleted per s), ``binlog`` (Binlog_bytes_written, bytes per s), each
    when its counters are in the capture, with evidence lines of its mysqladmin member."""
    numbers: dict[str, float] = {}
    evidence: list[Evidence] = []
    for key, names, label, unit in (
        ("statements", WRITE_COMMANDS, "Com_insert+Com_update+Com_delete", "/s"),
        ("rows", ROW_COUNTERS, "Innodb_rows_inserted+updated+deleted", "rows/s"),
        ("binlog", ("Binlog_bytes_written",), "Binlog_bytes_written", "bytes/s"),
    ):
        value, rows = rate(tl, names, windows)
        if value is not None:
            numbers[key] = value
            evidence.append(cite(tl, label, round(value, 1), unit, f"mysqladmin.{names[0]}", rows))
    return numbers, evidence


def write_phrase(numbers: Mapping[str, float]) -> str:
    """The write rate in words: ``"1,234 write statements/s, 5,678 rows/s, binlog 812 KiB/s"``."""
    parts = []
    if "statements" in numbers:
        parts.append(f"{numbers['statements']:,.0f} write statements/s")
    if "rows" in numbers:
        parts.append(f"{numbers['rows']:,.0f} rows changed/s")
    if "binlog" in numbers:
        parts.append(f"binlog {numbers['binlog'] / 1024:,.0f} KiB/s")
    return ", ".join(parts) if parts else "nothing its capture of those minutes shows (no write counters)"


def _position_rate(rows: pd.DataFrame, column: str) -> float | None:
    """Bytes per second a replica position column moved over ``rows`` (same binlog file only)."""
    rows = rows.dropna(subset=[column])
    if len(rows) < 2 or rows["source_log_file"].nunique() != 1:
        return None
    dt = (rows["ts"].iloc[-1] - rows["ts"].iloc[0]).total_seconds()
    return (float(rows[column].iloc[-1]) - float(rows[column].iloc[0])) / dt if dt > 0 else None


def position_evidence(
    replica: Timeline, rs: pd.DataFrame, *, read: float | None, applied: float | None
) -> list[Evidence]:
    """Evidence of how fast the replica applied (Exec_Master_Log_Pos) and received
    (Read_Master_Log_Pos) the source's binlog, bytes/s, for the rates that are known."""
    out = []
    for value, label, column in (
        (applied, "Exec_Master_Log_Pos growth", "exec_source_log_pos"),
        (read, "Read_Master_Log_Pos growth", "read_source_log_pos"),
    ):
        if value is not None:
            out.append(cite(replica, label, round(value), "bytes/s", f"replica_status.{column}", rs))
    return out


def replica_lag_source(timelines: Mapping[str, Timeline], link: topology.Link) -> Finding | None:
    """``replica-lag-source``: the replica of ``link`` is LAG_S behind (or falls behind: the lag grows
    ``topology.LAG_GROWTH_S_PER_S`` and reaches ``LAG_GROWING_MIN_S``) while its source writes; cites the
    source's write rate and binlog growth in the same minutes, and the replica's read and apply rates
    (bytes/s). None when the source's capture has no write counters in the replica's snapshots' minutes."""
    replica, source = timelines[link.replica], timelines[link.source]
    rs = link.rows.sort_values("ts")
    lag = rs["seconds_behind"].dropna()
    if len(lag) < 2:
        return None
    lagging = rs[(rs["seconds_behind"] >= LAG_S).fillna(False)]
    growth, growing = topology.lag_growth(rs)
    if len(lagging) < 2 and not growing:
        return None
    windows = span(rs)
    numbers, evidence = write_rate_evidence(source, windows)
    if not numbers:  # the source's capture holds other minutes: nothing to explain the lag with
        return None
    read = _position_rate(rs, "read_source_log_pos")
    applied = _position_rate(rs, "exec_source_log_pos")
    evidence += [
        cite(
            replica, "Seconds_Behind_Master (max)", float(lag.max()), "s", "replica_status.seconds_behind", rs
        ),
        cite(replica, "lag change per second", round(growth, 2), "s/s", "replica_status.seconds_behind", rs),
    ]
    evidence += position_evidence(replica, rs, read=read, applied=applied)
    settings = topology.differing_settings(replica, [source])
    evidence += [Evidence(f"variable {n}", mine, "", "variables") for n, mine, _ in settings]
    cause = lag_cause(replica, rs, source_binlog=numbers.get("binlog"), received=read)
    evidence = [*cause.evidence, *evidence]
    apply_phrase = (
        f"its SQL thread applied {applied / 1024:,.0f} KiB/s of the source's binlog"
        + (f" while its I/O thread received {read / 1024:,.0f} KiB/s" if read is not None else "")
        if applied is not None
        else "its apply rate is unknown (no Exec_Master_Log_Pos)"
    )
    threads = str(link.rows["sql_running"].iloc[-1]) if "sql_running" in link.rows else "?"
    finding = LAG_TEXTS.finding(
        "replica-lag-source",
        lag_severity(float(lag.max()), cause),
        windows,
        evidence,
        replica=link.replica,
        source=link.source,
        how=link.how,
        lag=float(lag.max()),
        first_lag=float(lag.iloc[0]),
        growth=growth,
        writes=write_phrase(numbers),
        applied=apply_phrase,
        sql_running=threads,
        parallel=topology.parallel_workers(replica),
        settings=topology.settings_phrase(link.replica, settings, "its source's"),
        cause=cause.title,
        cause_explanation=cause.explanation,
        fix=cause.fix,
    )
    return cross(
        replace(finding, culprit=cause.culprit, subjects=cause.subjects), [link.source, link.replica]
    )


def lag_severity(lag_s: float, cause: LagCause) -> Severity:
    """Info for a lag asked for (MASTER_DELAY), critical from LAG_CRITICAL_S, else warning."""
    if cause.intentional:
        return Severity.INFO
    return Severity.CRITICAL if lag_s >= LAG_CRITICAL_S else Severity.WARNING


def replica_stopped(timelines: Mapping[str, Timeline], link: topology.Link) -> Finding | None:
    """``replica-stopped``: the replica's SQL or I/O thread is not running in the capture (its last
    snapshot says No); names Last_SQL_Error / Last_IO_Error and the source's write rate meanwhile,
    which is how fast the gap grows."""
    rs = link.rows.sort_values("ts")
    last = rs.iloc[-1]
    sql_no = str(last.get("sql_running")) == "No"
    io_no = str(last.get("io_running")) == "No"
    if not (sql_no or io_no):
        return None
    replica, source = timelines[link.replica], timelines[link.source]
    error = str((last.get("last_sql_error") if sql_no else last.get("last_io_error")) or "").strip()
    windows = span(rs)
    numbers, evidence = write_rate_evidence(source, windows)
    column = "sql_running" if sql_no else "io_running"
    stopped = rs[(rs[column].astype("string") == "No").fillna(False).to_numpy(dtype=bool)]
    evidence.insert(
        0,
        cite(
            replica,
            "Slave_IO_Running / Slave_SQL_Running",
            f"{last.get('io_running')} / {last.get('sql_running')}",
            "",
            f"replica_status.{column}",
            stopped,
        ),
    )
    # the I/O thread still receives: the unapplied backlog grows this fast
    evidence += position_evidence(replica, rs, read=_position_rate(rs, "read_source_log_pos"), applied=None)
    if error:
        evidence.insert(
            1,
            cite(
                replica,
                "Last_SQL_Error" if sql_no else "Last_IO_Error",
                error[:300],
                "",
                f"replica_status.last_{'sql' if sql_no else 'io'}_error",
                stopped,
            ),
        )
    errno = last.get("last_sql_errno" if sql_no else "last_io_errno")
    errno = float(errno) if errno is not None and pd.notna(errno) and errno else None
    fix = stopped_fix(last, link.replica) + (STOPPED_SEMISYNC if replication.enabled(source) else "")
    finding = STOPPED_TEXTS.finding(
        "replica-stopped",
        Severity.CRITICAL,
        windows,
        evidence,
        replica=link.replica,
        source=link.source,
        how=link.how,
        thread="SQL" if sql_no else "I/O",
        on_error=f" on error {errno:.0f}" if errno else "",
        error=error[:300] or "no error (stopped by hand or by a tool: STOP SLAVE)",
        fix=fix.format(source=link.source),
        writes=write_phrase(numbers),
        position=f"{last.get('source_log_file')}:{last.get('exec_source_log_pos'):.0f}"
        if pd.notna(last.get("exec_source_log_pos"))
        else "unknown",
    )
    return cross(finding, [link.replica, link.source])


#: The cross-host rules by key, with what each reads on the hosts it involves (for the catalogue).
CLUSTER_RULES = {
    "replica-lag-source": (replica_lag_source, ("replica_status", "mysqladmin")),
    "replica-stopped": (replica_stopped, ("replica_status", "mysqladmin")),
    "galera-flow-control": (galera_flow_control, ("mysqladmin",)),
    "host-stall-holds-others": (host_stall_holds_others, ("iostat", "vmstat", "ncpu")),
    "load-imbalance": (load_imbalance, ("mysqladmin",)),
    "galera-node-behind": (galera_node_behind, ("mysqladmin",)),
    "galera-write-conflicts": (galera_write_conflicts, ("mysqladmin", "processlist")),
    "semisync-ack-wait": (semisync_ack_wait, ("processlist", "mysqladmin", "replica_status")),
}

__all__ = [
    "cross_host_findings",
    "galera_write_conflicts",
    "galera_flow_control",
    "galera_node_behind",
    "host_stall_holds_others",
    "load_imbalance",
    "replica_lag_source",
    "replica_stopped",
    "semisync_ack_wait",
]
