"""The counter catalogue: the SHOW GLOBAL STATUS counters and gauges that measure waits, as data.

Each ``Counter`` gives a status variable's meaning, its unit (``per second``: a counter since
start-up, read as a rate between two samples, as ``parsers/mysqladmin.py`` computes ``per_s``;
``gauge``: a reading, ``parsers._mysqladmin_rates.GAUGES``), the rate or level that is abnormal and
why, the servers that have it and the manual page. ``resource`` (an extension of the agreed shape)
names the ``Resource`` the counter measures, so that a finding about sessions waiting for it can
quote the counter's rate beside them (deadlocks per second beside row-lock waits).

MySQL 8.0+ has no ``Innodb_deadlocks`` status variable: its deadlock count is
INFORMATION_SCHEMA.INNODB_METRICS ``lock_deadlocks`` (enabled by default), listed here under that
name. Sources: MySQL 8.4 Reference Manual, "Server Status Variables", "InnoDB INFORMATION_SCHEMA
Metrics Table"; MariaDB Server documentation, "Server Status Variables", "InnoDB Status Variables",
"Semisynchronous Replication Plugin Status Variables"; MariaDB Galera Cluster, "Galera Cluster
Status Variables".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyzer.detect import status
from analyzer.findings import Window
from analyzer.timeline.timeline import Timeline
from analyzer.waits.model import Resource

R = Resource
RATE = "per second"
GAUGE = "gauge"
UNITS = (RATE, GAUGE)
BOTH = frozenset({"mysql", "mariadb"})
MYSQL = frozenset({"mysql"})
MARIADB = frozenset({"mariadb"})

MY_STATUS = "https://dev.mysql.com/doc/refman/8.4/en/server-status-variables.html"
MY_METRICS = "https://dev.mysql.com/doc/refman/8.4/en/innodb-information-schema-metrics-table.html"
MY_SEMISYNC = "https://dev.mysql.com/doc/refman/8.4/en/replication-semisync-monitoring.html"
_V = "https://mariadb.com/docs/server/ha-and-performance/optimization-and-tuning/system-variables/"
MDB_STATUS = _V + "server-status-variables"
MDB_INNODB = _V + "innodb-status-variables"
MDB_SEMISYNC = _V + "semisynchronous-replication-plugin-status-variables"
MDB_THREADPOOL = (
    "https://mariadb.com/docs/server/ha-and-performance/optimization-and-tuning/buffers-caches-and-threads/"
    "thread-pool/thread-pool-system-status-variables"
)
MDB_GALERA = "https://mariadb.com/docs/galera-cluster/reference/galera-cluster-status-variables"


@dataclass(frozen=True, slots=True)
class Counter:
    """One status variable: ``name`` as the server spells it; ``meaning`` in our words; ``unit`` one
    of ``UNITS``; ``abnormal``: the rate or level that is abnormal and why; ``servers``; ``source``
    (the manual page); ``resource``: the wait it measures, None when it measures none."""

    name: str
    meaning: str
    unit: str
    abnormal: str
    servers: frozenset[str]
    source: str
    resource: Resource | None = None

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"unit {self.unit!r} of {self.name} is not one of {UNITS}")
        if not self.source.startswith("https://"):
            raise ValueError(f"source {self.source!r} of {self.name} is not a page a reader can open")


def _family(
    source: str, servers: frozenset[str], rows: tuple[tuple[str, str, str, str, Resource | None], ...]
) -> tuple[Counter, ...]:
    """The counters of one manual page: ``(name, unit, meaning, abnormal, resource)`` rows."""
    return tuple(Counter(n, m, u, a, servers, source, r) for n, u, m, a, r in rows)


# fmt: off
_GALERA = _family(MDB_GALERA, MARIADB, (
    ("wsrep_local_cert_failures", RATE, "local transactions that failed certification and rolled back",
     "any sustained rate: two nodes write the same rows; each failure is a rolled-back commit", R.GALERA_CERTIFICATION),
    ("wsrep_local_bf_aborts", RATE, "local transactions aborted by an applier's write-set (brute force)",
     "any sustained rate: writes on this node conflict with writes replicated from another", R.GALERA_CERTIFICATION),
    ("wsrep_local_replays", RATE, "transactions replayed after a brute-force abort",
     "a sustained rate: conflicting writes across nodes", R.GALERA_CERTIFICATION),
    ("wsrep_cert_deps_distance", GAUGE, "average seqno distance of write-sets that could apply in parallel",
     "a guide for wsrep_slave_threads, not an alarm: appliers beyond it cannot run in parallel", None),
    ("wsrep_flow_control_paused", GAUGE, ("share of time replication was paused by flow control since the "
                                          "last FLUSH STATUS"),
     "above 0.1 (10 %): the cluster waits for its slowest node", R.GALERA_FLOW_CONTROL),
    ("wsrep_flow_control_paused_ns", RATE, "nanoseconds spent paused by flow control",
     "a rate near 1e9 ns/s: the cluster is paused most of the time", R.GALERA_FLOW_CONTROL),
    ("wsrep_flow_control_sent", RATE, ("FC_PAUSE messages this node sent (its receive queue passed "
                                       "gcs.fc_limit)"),
     "a sustained rate: this node is the one the cluster waits for", R.GALERA_FLOW_CONTROL),
    ("wsrep_flow_control_recv", RATE, ("FC_PAUSE messages this node received (sent by any node, itself "
                                       "included)"),
     "a sustained rate: the cluster is throttled by some node", R.GALERA_FLOW_CONTROL),
    ("wsrep_local_recv_queue", GAUGE, "write-sets received and waiting to be applied",
     "above gcs.fc_limit (16 by default): flow control starts; growing: the node cannot keep up", R.GALERA_FLOW_CONTROL),
    ("wsrep_local_recv_queue_avg", GAUGE, "average receive queue since the last status query",
     "noticeably above 0: the node is overloaded and throttles replication", R.GALERA_FLOW_CONTROL),
    ("wsrep_local_send_queue", GAUGE, "write-sets waiting to be sent",
     "growing: network throughput or flow control holds this node's commits", R.GALERA_FLOW_CONTROL),
    ("wsrep_local_send_queue_avg", GAUGE, "average send queue since the last status query",
     "noticeably above 0: network throughput or replication throttling", R.GALERA_FLOW_CONTROL),
    ("wsrep_apply_waits", RATE, "times an applier waited for an earlier write-set to be applied",
     "a rate near the applied rate: apply order serialises the appliers", R.GALERA_FLOW_CONTROL),
    ("wsrep_local_state", GAUGE, "the node's state (1 Joining, 2 Donor/Desynced, 3 Joined, 4 Synced)",
     "anything but 4: the node is not Synced (desynced, donor or joining)", None),
    ("wsrep_desync_count", GAUGE, ("operations holding the node desynced (wsrep_desync, FTWRL, backup "
                                   "locks, donor)"),
     "above 0: something desynced the node; its reads may be stale", R.GLOBAL_READ_LOCK),
    ("wsrep_cluster_size", GAUGE, "nodes in the cluster",
     "below the expected count: a node left", None),
    ("wsrep_local_commits", RATE, "local transactions committed on this node",
     "the write rate: non-zero on several nodes means several writers", None),
    ("wsrep_received", RATE, "write-sets received from other nodes", "the replicated write rate", None),
    ("wsrep_replicated", RATE, "write-sets replicated to other nodes", "the local write rate", None),
    ("wsrep_last_committed", RATE, "seqno of the last committed transaction", ("a rate of 0 under load: "
                                                                               "applying stalled"), None),
    ("wsrep_local_state_comment", GAUGE, ("the node's state in words (Joining, Donor/Desynced, Joined, "
                                          "Synced)"),
     "anything but Synced: the node is not Synced", None),
    ("wsrep_cluster_status", GAUGE, "the component this node belongs to (Primary, non-Primary, Disconnected)",
     "anything but Primary: the node lost quorum and refuses queries", None),
    ("wsrep_ready", GAUGE, "whether the node accepts queries (ON/OFF)", ("OFF: every query fails with "
                                                                         "ER_UNKNOWN_COM_ERROR"), None),
    ("wsrep_connected", GAUGE, "whether the node has a network connection to the cluster (ON/OFF)",
     "OFF: the node is alone", None),
    ("wsrep_flow_control_active", GAUGE, "whether flow control is in effect now (true/false)",
     "true in many samples: the cluster is paused", R.GALERA_FLOW_CONTROL),
    ("wsrep_evs_delayed", GAUGE, "nodes this node sees as delayed (uuid:address list)",
     "any entry: a node's network is slow or lossy; the cluster waits for it", R.GALERA_FLOW_CONTROL),
    ("wsrep_open_transactions", GAUGE, "local transactions open on this node (Galera 4)",
     "growing under writes on several nodes: more transactions that may conflict", None),
))

_SEMISYNC = _family(MY_STATUS, MYSQL, (
    ("Rpl_semi_sync_source_status", GAUGE, ("whether semi-synchronous replication is on at the source "
                                            "(ON/OFF)"),
     "OFF while configured on: the source fell back to asynchronous after rpl_semi_sync_source_timeout", R.REPLICA_ACK),
    ("Rpl_semi_sync_source_clients", GAUGE, "semi-synchronous replicas connected",
     "fewer than rpl_semi_sync_source_wait_for_replica_count: commits wait for the timeout", R.REPLICA_ACK),
    ("Rpl_semi_sync_source_no_tx", RATE, "commits not acknowledged by a replica in time",
     "any rate: commits waited for the timeout and went asynchronous", R.REPLICA_ACK),
    ("Rpl_semi_sync_source_yes_tx", RATE, "commits acknowledged by a replica", ("a drop to 0 under writes: "
                                                                                "acknowledgements stopped"), R.REPLICA_ACK),
    ("Rpl_semi_sync_source_wait_sessions", GAUGE, "sessions waiting for a replica's acknowledgement",
     "sustained above 0: commits wait for the replicas", R.REPLICA_ACK),
    ("Rpl_semi_sync_source_net_avg_wait_time", GAUGE, "average microseconds waited for a replica's reply",
     "growing: the network or the replica slows every commit", R.REPLICA_ACK),
    ("Rpl_semi_sync_source_tx_avg_wait_time", GAUGE, ("average microseconds a commit waited for its "
                                                      "acknowledgement"),
     "a large share of commit latency: the replicas set the write rate", R.REPLICA_ACK),
    ("Rpl_semi_sync_replica_status", GAUGE, "whether this replica acknowledges as semi-synchronous (ON/OFF)",
     "OFF on the replica a source counts on: the source's commits wait", R.REPLICA_ACK),
)) + _family(MDB_SEMISYNC, BOTH, (
    ("Rpl_semi_sync_master_status", GAUGE, ("whether semi-synchronous replication is on at the source "
                                            "(ON/OFF)"),
     "OFF while configured on: the source fell back to asynchronous after rpl_semi_sync_master_timeout", R.REPLICA_ACK),
    ("Rpl_semi_sync_master_clients", GAUGE, "semi-synchronous replicas connected",
     "0 while semi-sync is on: every commit waits for the timeout", R.REPLICA_ACK),
    ("Rpl_semi_sync_master_no_tx", RATE, "commits not acknowledged by a replica in time",
     "any rate: commits waited for the timeout and went asynchronous", R.REPLICA_ACK),
    ("Rpl_semi_sync_master_yes_tx", RATE, "commits acknowledged by a replica", ("a drop to 0 under writes: "
                                                                                "acknowledgements stopped"), R.REPLICA_ACK),
    ("Rpl_semi_sync_master_wait_sessions", GAUGE, "sessions waiting for a replica's acknowledgement",
     "sustained above 0: commits wait for the replicas", R.REPLICA_ACK),
    ("Rpl_semi_sync_master_net_avg_wait_time", GAUGE, "average microseconds waited for a replica's reply",
     "growing: the network or the replica slows every commit", R.REPLICA_ACK),
    ("Rpl_semi_sync_master_tx_avg_wait_time", GAUGE, ("average microseconds a commit waited for its "
                                                      "acknowledgement"),
     "a large share of commit latency: the replicas set the write rate", R.REPLICA_ACK),
    ("Rpl_semi_sync_master_get_ack", RATE, "acknowledgements the source received from its replicas",
     "0 while commits wait: no replica acknowledges", R.REPLICA_ACK),
    ("Rpl_semi_sync_slave_status", GAUGE, "whether this replica acknowledges as semi-synchronous (ON/OFF)",
     "OFF on the replica a source counts on: the source's commits wait", R.REPLICA_ACK),
))

_CONNECTIONS = _family(MY_STATUS, BOTH, (
    ("Aborted_clients", RATE, ("connections dropped without a proper close (client died, wait_timeout, "
                               "max_allowed_packet)"),
     "a sustained rate: the application leaks or kills connections, or the network drops them", R.CLIENT),
    ("Aborted_connects", RATE, ("failed connection attempts (bad password, no privilege, bad packets, "
                                "connect_timeout)"),
     "a sustained rate: clients cannot log in (credentials, max_connections, network)", R.CLIENT),
    ("Aborted_connects_preauth", RATE, "connection attempts aborted before authentication (MySQL 8.0.29+)",
     "a sustained rate: clients or probes open TCP connections and drop them", R.CLIENT),
    ("Connection_errors_accept", RATE, "errors in accept() on the listening port", ("any: the server cannot "
                                                                                    "accept connections"), R.CLIENT),
    ("Connection_errors_internal", RATE, "connections refused by an internal error (no memory, no thread)",
     "any: the server is out of a resource", None),
    ("Connection_errors_max_connections", RATE, "connections refused because max_connections was reached",
     "any: every connection slot is held (by busy or idle sessions)", R.CLIENT),
    ("Connection_errors_peer_address", RATE, "errors looking up a client's address", ("any: network or "
                                                                                      "resolver trouble"), R.CLIENT),
    ("Connection_errors_select", RATE, "errors in select()/poll() on the listening port", ("any: the server "
                                                                                           "cannot accept "
                                                                                           "connections"), R.CLIENT),
    ("Connection_errors_tcpwrap", RATE, "connections refused by libwrap", "any: a host is denied", R.CLIENT),
    ("Connections", RATE, "connection attempts, successful or not", ("a rate far above the usual: a "
                                                                     "connection storm (no pool)"), None),
    ("Threads_connected", GAUGE, "open connections", "near max_connections: new connections will be refused", None),
    ("Threads_running", GAUGE, "threads not sleeping (running a statement or waiting in one)",
     "above a few per CPU: statements queue for CPUs or locks", R.CPU),
    ("Threads_created", RATE, "threads created to handle connections", ("a sustained rate: "
                                                                        "thread_cache_size too small for "
                                                                        "the connection churn"), None),
    ("Max_used_connections", GAUGE, "the most connections open at once since start-up", ("equal to "
                                                                                         "max_connections: "
                                                                                         "the limit was "
                                                                                         "reached"), None),
))

_LOCKS = _family(MY_STATUS, BOTH, (
    ("Innodb_row_lock_current_waits", GAUGE, "row-lock waits in progress", ("sustained above 0: "
                                                                            "transactions queue behind row "
                                                                            "locks"), R.ROW_LOCK),
    ("Innodb_row_lock_waits", RATE, "row-lock waits started", "a sustained rate: contention on hot rows", R.ROW_LOCK),
    ("Innodb_row_lock_time", RATE, "milliseconds spent waiting for row locks", ("a rate near 1000 x "
                                                                                "sessions: sessions spend "
                                                                                "their time waiting"), R.ROW_LOCK),
    ("Innodb_row_lock_time_avg", GAUGE, "average row-lock wait (ms)", ("above a few hundred ms: long lock "
                                                                       "holders"), R.ROW_LOCK),
    ("Innodb_row_lock_time_max", GAUGE, "longest row-lock wait (ms)", ("near innodb_lock_wait_timeout x "
                                                                       "1000: waits time out"), R.ROW_LOCK),
    ("Table_locks_waited", RATE, "table-level lock requests that had to wait", ("a sustained rate: "
                                                                                "table-lock contention "
                                                                                "(MyISAM, LOCK TABLES)"), R.TABLE_LOCK),
    ("Table_locks_immediate", RATE, "table-level lock requests granted at once", ("the base of "
                                                                                  "Table_locks_waited's "
                                                                                  "share"), R.TABLE_LOCK),
)) + _family(MDB_INNODB, MARIADB, (
    ("Innodb_deadlocks", RATE, "InnoDB deadlocks detected", ("any sustained rate: transactions lock rows in "
                                                             "opposite orders; each rolls one back"), R.ROW_LOCK),
)) + _family(MY_METRICS, MYSQL, (
    ("lock_deadlocks", RATE, ("InnoDB deadlocks detected (INFORMATION_SCHEMA.INNODB_METRICS; MySQL has no "
                              "status variable)"),
     "any sustained rate: transactions lock rows in opposite orders", R.ROW_LOCK),
    ("lock_timeouts", RATE, "row-lock waits that reached innodb_lock_wait_timeout (INNODB_METRICS)",
     "any: a holder kept its locks longer than the timeout", R.ROW_LOCK),
))

_CACHES = _family(MY_STATUS, BOTH, (
    ("Table_open_cache_misses", RATE, "table opens not served by the table cache", ("a sustained rate with "
                                                                                    "overflows: "
                                                                                    "table_open_cache too "
                                                                                    "small"), R.TABLE_CACHE),
    ("Table_open_cache_overflows", RATE, "table cache entries evicted because the cache was full", ("a "
                                                                                                    "sustained rate: table_open_cache too small"), R.TABLE_CACHE),
    ("Opened_tables", RATE, "tables opened (not found in the table cache)", ("a sustained rate: tables "
                                                                             "reopened instead of cached"), R.TABLE_CACHE),
    ("Open_tables", GAUGE, "tables open in the cache", "equal to table_open_cache: the cache is full", R.TABLE_CACHE),
    ("Opened_table_definitions", RATE, "table definitions cached", ("a sustained rate: "
                                                                    "table_definition_cache too small"), R.TABLE_CACHE),
    ("Open_files", GAUGE, "files open by the server (not InnoDB's)", ("near open_files_limit: opens will "
                                                                      "fail"), R.TABLE_CACHE),
    ("Binlog_cache_disk_use", RATE, "transactions whose binary log cache spilled to a temporary file",
     "a sustained share of Binlog_cache_use: binlog_cache_size too small for the transactions", R.LOG_FLUSH),
    ("Binlog_stmt_cache_disk_use", RATE, ("non-transactional statements whose binary log cache spilled to a "
                                          "temporary file"),
     "a sustained rate: binlog_stmt_cache_size too small", R.LOG_FLUSH),
    ("Binlog_cache_use", RATE, "transactions that used the binary log cache", ("the base of "
                                                                               "Binlog_cache_disk_use's "
                                                                               "share"), None),
    ("Created_tmp_disk_tables", RATE, "internal temporary tables created on disk",
     "a sustained rate: queries spill to disk (tmp_table_size, BLOB columns)", None),
    ("Created_tmp_tables", RATE, "internal temporary tables created", ("the base of "
                                                                       "Created_tmp_disk_tables' share"), None),
    ("Select_full_join", RATE, "joins that scanned a table without an index",
     "any sustained rate: a join lacks an index", None),
    ("Sort_merge_passes", RATE, "merge passes of sorts that did not fit sort_buffer_size",
     "a sustained rate: large sorts spill to disk", None),
    ("Qcache_lowmem_prunes", RATE, "query cache entries pruned for lack of memory",
     "a sustained rate: the query cache churns under its lock", R.QUERY_CACHE),
))

_IO = _family(MY_STATUS, BOTH, (
    ("Innodb_log_waits", RATE, "times a write waited for room in the redo log buffer",
     "any sustained rate: innodb_log_buffer_size too small for the write rate", R.LOG_FLUSH),
    ("Innodb_os_log_fsyncs", RATE, "fsync() calls on the redo log", ("near the commit rate with high "
                                                                     "latency: commits wait for the disk"), R.LOG_FLUSH),
    ("Innodb_os_log_pending_writes", GAUGE, "redo log writes in progress", ("sustained above 0: the redo "
                                                                            "log's disk is slow"), R.LOG_FLUSH),
    ("Innodb_os_log_pending_fsyncs", GAUGE, "redo log fsyncs in progress", ("sustained above 0: the redo "
                                                                            "log's disk is slow"), R.LOG_FLUSH),
    ("Innodb_data_pending_fsyncs", GAUGE, "fsyncs of data files in progress", ("sustained above 0: the data "
                                                                               "files' disk is slow"), R.DISK_IO),
    ("Innodb_data_fsyncs", RATE, "fsync() calls on InnoDB files", "the disk's sync load", R.DISK_IO),
    ("Innodb_buffer_pool_wait_free", RATE, "waits for a free page in the buffer pool",
     "any sustained rate: page cleaning cannot keep up; reads wait for flushes", R.DISK_IO),
    ("Innodb_buffer_pool_reads", RATE, "page reads that went to disk", ("a sustained share of read requests "
                                                                        "above 1 %: the working set does "
                                                                        "not fit"), R.DISK_IO),
    ("Innodb_buffer_pool_read_requests", RATE, "logical page reads", ("the base of "
                                                                      "Innodb_buffer_pool_reads' share"), None),
    ("Innodb_history_list_length", GAUGE, ("undo log records not yet purged (MariaDB status; MySQL shows it "
                                           "in the monitor)"),
     "growing: an old read view holds purge back", None),
))

_THREADPOOL = _family(MDB_THREADPOOL, MARIADB, (
    ("Threadpool_threads", GAUGE, "threads in the thread pool (MariaDB, Percona Server)",
     "near thread_pool_max_threads: the pool cannot grow; new statements queue", R.CPU),
    ("Threadpool_idle_threads", GAUGE, "pool threads with nothing to do",
     "0 while Threads_running is high: every pool thread is busy or blocked; statements queue", R.CPU),
))

_STATEMENTS = _family(MY_STATUS, BOTH, (
    ("Slow_queries", RATE, "statements that took longer than long_query_time",
     "a rate above the usual: statements slow down (waits, scans, a saturated host)", None),
    ("Select_scan", RATE, "joins whose first table was scanned in full",
     "a sustained rate with Handler_read_rnd_next high: queries scan tables", None),
    ("Select_range_check", RATE, "joins without keys that check key usage after each row",
     "any sustained rate: a join lacks an index", None),
    ("Select_full_range_join", RATE, "joins that used a range search on a reference table",
     "a sustained rate: joins read ranges instead of keys", None),
    ("Handler_read_rnd_next", RATE, "rows read by a table scan (the next row of a data file)",
     "a sustained rate of 100,000 rows/s or more: table scans", None),
    ("Created_tmp_files", RATE, "temporary files created (sorts, binary log caches, temporary tables)",
     "a sustained rate: work spills to tmpdir", R.DISK_IO),
    ("Opened_files", RATE, "files opened with my_open() (not InnoDB's)", ("a sustained rate: tables or "
                                                                          "temporary files reopened"), R.TABLE_CACHE),
)) + _family(MY_STATUS, MYSQL, (
    ("Max_execution_time_exceeded", RATE, "SELECTs stopped by max_execution_time",
     "any: statements run longer than the application allows", None),
)) + _family(MDB_STATUS, MARIADB, (
    ("Max_statement_time_exceeded", RATE, "statements stopped by max_statement_time",
     "any: statements run longer than the application allows", None),
))

#: The catalogue, by family.
COUNTERS: tuple[Counter, ...] = (
    *_GALERA, *_SEMISYNC, *_CONNECTIONS, *_LOCKS, *_CACHES, *_IO, *_THREADPOOL, *_STATEMENTS
)
# fmt: on

#: The families as the generated docs group them.
FAMILIES: dict[str, tuple[Counter, ...]] = {
    "Galera (wsrep_*)": _GALERA,
    "Semi-synchronous replication (Rpl_semi_sync_*)": _SEMISYNC,
    "Connections (Connection_errors_*, Aborted_*, Threads_*)": _CONNECTIONS,
    "Locks and deadlocks": _LOCKS,
    "Caches, temporary tables and sorts": _CACHES,
    "Redo log, fsync and buffer pool": _IO,
    "Thread pool (Threadpool_*)": _THREADPOOL,
    "Statements, scans and timeouts": _STATEMENTS,
}


def counter(name: str) -> Counter | None:
    """The catalogue's entry for status variable ``name`` (as the server spells it), or None.

    >>> counter("wsrep_local_cert_failures").unit
    'per second'
    """
    return _BY_NAME.get(name)


_BY_NAME = {c.name: c for c in COUNTERS}


def of_resource(resource: Resource) -> tuple[Counter, ...]:
    """The counters that measure waits for ``resource``, in catalogue order."""
    return tuple(c for c in COUNTERS if c.resource is resource)


@dataclass(frozen=True, slots=True)
class Rate:
    """A counter's rate over a window: ``per_s`` (its growth / ``seconds``), ``growth`` (how much it
    grew, resets and restarts left out), ``seconds`` (the time its samples cover), ``samples`` (rows
    read) and ``rows`` (those rows, for evidence: ``analyzer.detect.cite``)."""

    name: str
    per_s: float
    growth: float
    seconds: float
    samples: int
    rows: pd.DataFrame

    def words(self) -> str:
        """``"45.2 per second (6,522 in 144 s)"``: the rate as a finding quotes it."""
        per_s = f"{self.per_s:,.1f}" if self.per_s < 100 else f"{self.per_s:,.0f}"
        return f"{per_s} per second ({self.growth:,.0f} in {self.seconds:,.0f} s)"


def rate_of(name: str, rows: pd.DataFrame, windows: Sequence[Window] = ()) -> Rate | None:
    """The rate of counter ``name`` over ``windows`` (all its rows when empty) from its ``mysqladmin``
    rows (``analyzer.detect.status``: ``ts``, ``value``, optionally ``member``).

    Per run (``member``: one pt-stalk collection), the growth is the sum of the non-negative steps of
    ``value`` (a restart or FLUSH STATUS is no growth) and the seconds the first to the last sample;
    the rate is the runs' growth over their seconds. None for a gauge (``unit`` not per second), or
    with fewer than two samples, or no time between them. Raises ValueError for a name the catalogue
    does not know (a rate of an unknown variable is a guess).

    >>> ts = pd.to_datetime(["2026-01-01 00:00:00", "2026-01-01 00:00:10"], utc=True)
    >>> rate_of("Innodb_deadlocks", pd.DataFrame({"ts": ts, "value": [100.0, 550.0]})).per_s
    45.0
    """
    known = counter(name)
    if known is None:
        raise ValueError(f"{name} is not in the counter catalogue")
    if known.unit != RATE or not len(rows):
        return None
    rows = rows.dropna(subset=["value"])
    if windows:
        keep = np.zeros(len(rows), dtype=bool)
        for w in windows:
            keep |= ((rows["ts"] >= w.start) & (rows["ts"] <= w.end)).to_numpy(dtype=bool)
        rows = rows[keep]
    total, seconds = 0.0, 0.0
    runs = rows.groupby("member", observed=True, sort=False) if "member" in rows else [(None, rows)]
    for _, run in runs:
        run = run.sort_values("ts")
        if len(run) < 2:
            continue
        steps = run["value"].diff()
        total += float(steps[steps > 0].sum())
        seconds += (run["ts"].iloc[-1] - run["ts"].iloc[0]).total_seconds()
    if seconds <= 0:
        return None
    return Rate(name, total / seconds, total, seconds, len(rows), rows)


def rate(tl: Timeline, name: str, windows: Sequence[Window] = ()) -> Rate | None:
    """``rate_of`` counter ``name`` read from ``tl``'s ``mysqladmin`` frame (None when the capture
    lacks it). The timeline keeps only ``STATUS_KEPT`` variables: ValueError for another name."""
    return rate_of(name, status(tl, name), windows)
