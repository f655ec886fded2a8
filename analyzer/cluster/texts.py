"""The words of the cross-host rules (analyzer/cluster/rules.py, analyzer/cluster/nodes.py), as data.

Each ``RuleTexts`` is filled from the numbers its rule measured (``str.format`` fields); the rule
keys are in ``CLUSTER_KEYS`` so the catalogue (``analyzer.catalogue``) lists them with the others.
"""

from __future__ import annotations

from analyzer.texts import RuleTexts

REPLICATION_SOURCES = (
    (
        "MariaDB Knowledge Base, SHOW REPLICA STATUS (Seconds_Behind_Master, Read/Exec_Master_Log_Pos, "
        "SQL_Delay)"
    ),
    "MariaDB Knowledge Base, Replication Thread States (Slave SQL thread states)",
    "MariaDB Knowledge Base, Parallel Replication (slave_parallel_threads); Delayed Replication",
    "MySQL 8.4 Reference Manual, 19.2.3 Replication Threads; 19.4.11 Delayed Replication",
)
GALERA_SOURCES = (
    "Galera Cluster documentation, Flow Control and Galera Status Variables",
    "Percona, Galera Flow Control in Percona XtraDB Cluster",
    "MariaDB Knowledge Base, Galera Cluster Status Variables",
)

LAG_TEXTS = RuleTexts(
    title="{replica} is {lag:.0f} s behind {source}: {cause}",
    explanation=(
        "{cause_explanation} {replica} replicates from {source} ({how}). Its Seconds_Behind_Master went from "
        "{first_lag:.0f} s to {lag:.0f} s ({growth:+.2f} s per second of capture) while {source} wrote "
        "{writes} "
        "in the same minutes; {applied}. Slave_SQL_Running {sql_running}; {parallel}. {settings}"
    ),
    recommendation="{fix}",
    caveats=(
        (
            "Seconds_Behind_Master compares event timestamps with the replica's clock: a clock offset "
            "between "
            "the hosts shifts it by that much."
        ),
        "The source's rate is its mysqladmin counters' mean in the replica's snapshots' minutes.",
    ),
    sources=REPLICATION_SOURCES,
    disproof="If the lag falls during the capture, the replica is catching up: the source's burst is over.",
    confidence="SHOW SLAVE STATUS of {replica} and mysqladmin counters of {source}, same minutes",
)

#: The fix of a stopped replication thread, by thread and error (``replica_stopped`` picks one):
#: a data error of the SQL thread (1062 duplicate key, 1032 missing row), another SQL error, an I/O
#: thread that stopped on an error, and one stopped with none (STOP SLAVE IO_THREAD, by hand or by
#: a tool: the manuals' "SHOW REPLICA STATUS" leaves Last_IO_Error empty then).
STOPPED_FIXES = {
    "sql-data": (
        "Read the error before restarting: a duplicate key (1062) or missing row (1032) means the\n"
        "replica's data differs from the source's (a write made on the replica, or a skipped event).\n"
        "Fix the row, or rebuild the replica; SET GLOBAL sql_slave_skip_counter only hides the drift.\n"
        "Then START SLAVE and watch Seconds_Behind_Master fall."
    ),
    "sql": (
        "Fix what Last_SQL_Error names (a missing table or database, a DDL the replica cannot apply, a\n"
        "full disk), then START SLAVE SQL_THREAD and watch Seconds_Behind_Master fall."
    ),
    "io": (
        "Fix what Last_IO_Error names: the source unreachable or refusing the replication user\n"
        "(2003, 1045: network, credentials, the source down), or the binary log the replica asks for\n"
        "already purged on the source (1236: re-point or rebuild the replica). Then START SLAVE IO_THREAD."
    ),
    "io-by-hand": (
        "The I/O thread stopped without an error: someone or a tool ran STOP SLAVE IO_THREAD (the\n"
        "replica's error log says when). Start it again: START SLAVE IO_THREAD on {replica}, and find\n"
        "who stops it. The SQL thread applies what it received; the source's newer events wait."
    ),
}
#: Added to the fix when the source waits for this replica's semi-synchronous acknowledgement.
STOPPED_SEMISYNC = (
    "\nWhile it is stopped, {source}'s commits wait for its acknowledgement until\n"
    "rpl_semi_sync_master_timeout (rpl_semi_sync_source_timeout) expires, then go on asynchronous."
)

STOPPED_TEXTS = RuleTexts(
    title="{replica}'s {thread} thread stopped{on_error}: {error}",
    explanation=(
        "{replica} replicates from {source} ({how}); its {thread} thread is not running and stopped at "
        "{position} of the source's binlog with: {error}. Meanwhile {source} wrote {writes}: every second "
        "widens the gap."
    ),
    recommendation="{fix}",
    caveats=("Only the snapshots of this capture: the thread may have stopped long before.",),
    sources=REPLICATION_SOURCES,
    disproof="Slave_SQL_Running and Slave_IO_Running Yes in a later snapshot: replication resumed.",
    confidence="SHOW SLAVE STATUS of {replica}; mysqladmin counters of {source}",
)

FLOW_TEXTS = RuleTexts(
    title="{cause}; it sent flow control; {others} {were} paused {paused:.0f} % of the time",
    explanation=(
        "Galera lets no node fall more than gcs.fc_limit write-sets behind: {sender}'s receive queue "
        "(wsrep_local_recv_queue) reached {queue:.0f} ({queue_avg}) and it sent {sent:.0f} flow-control "
        "message(s) (wsrep_flow_control_sent) in the capture, which paused replication on every node. "
        "Paused share of time per node (wsrep_flow_control_paused_ns): {per_node}. {settings}"
    ),
    recommendation=(
        "The cluster commits at the pace of its slowest node. Find what slows {sender} (its disk,\n"
        "CPU, a long query or lock on it, a backup), move reads or backups off it, or remove it from the\n"
        "cluster while it recovers; raising gcs.fc_limit only delays the pause. More applier threads\n"
        "(wsrep_slave_threads) help when its CPUs are idle."
    ),
    caveats=(
        (
            "wsrep_flow_control_paused_ns is summed from the node's start; the share is its growth between "
            "samples, per second."
        ),
    ),
    sources=GALERA_SOURCES,
    disproof=(
        "wsrep_flow_control_sent not growing on any node: the pauses came from elsewhere (a node "
        "outside the case)."
    ),
    confidence="wsrep status counters of {n_nodes} nodes",
)

STALL_TEXTS = RuleTexts(
    title="{stalled}'s {what} stalled ({measure}) while {others} {wait}",
    explanation=("{stalled}: {measure_long}. The other hosts: {others_measure}. {wait_long}"),
    recommendation=(
        "Treat {stalled} first: the others wait for it. Find what saturates its {what} (the host's own\n"
        "findings name the process or query), and move work off it until it recovers."
    ),
    caveats=(
        (
            "Hosts sharing one machine or one storage array see one another's load: compare the devices each "
            "host's datadir is on."
        ),
    ),
    sources=(
        "sysstat iostat(1) (w_await), procps vmstat(8) (r)",
        "Galera Cluster documentation, Flow Control",
    ),
    disproof="The others' waits (paused share, lag) stay the same when the host's stall ends.",
    confidence="iostat / vmstat of every host, same minutes",
)

IMBALANCE_TEXTS = RuleTexts(
    title="{busiest} takes {share:.0f} % of the cluster's statements",
    explanation=(
        "Statements per second (Questions) in the same minutes: {per_node}. The busiest node, {busiest}, "
        "takes {share:.0f} % of {total:,.0f}/s; the others idle while it saturates first."
    ),
    recommendation=(
        "Spread the clients: the load balancer or the application's connection string should send\n"
        "reads (and, on Galera, writes to disjoint rows) to every node."
    ),
    caveats=(
        (
            "A cluster with one writer node by design (to avoid certification conflicts) is imbalanced on "
            "purpose."
        ),
    ),
    sources=("MariaDB Knowledge Base, Server Status Variables (Questions)",),
    disproof="The share evens out over a longer capture.",
    confidence="mysqladmin Questions of {n_nodes} nodes",
)

#: The fix of a node out of sync, when the bundle does not show what holds it.
GALERA_NODE_FIX = (
    "End what holds {node} out of sync: a FLUSH TABLES WITH READ LOCK or backup session on it\n"
    "(find it in its processlist and KILL it, or let the backup finish), SET GLOBAL wsrep_desync=OFF,\n"
    "or let the state transfer finish. Send no traffic to a node that is not Synced (the proxy's\n"
    "health check should read wsrep_local_state_comment)."
)
#: ... and when it shows the session holding the global read or backup lock that desynced it.
GALERA_NODE_HOLDER_FIX = (
    "{node}'s global read lock is held by {holder} ({shown_by}). {holder_fix}\n"
    "Or run UNLOCK TABLES in it (it took FLUSH TABLES WITH READ LOCK or a backup lock).\n"
    "If it is a backup, let it finish or run it on a node that takes no traffic. Send no traffic to a\n"
    "node that is not Synced (the proxy's health check should read wsrep_local_state_comment)."
)

GALERA_NODE_TEXTS = RuleTexts(
    title="{node} is {state} and {queue:,.0f} write-sets behind while {others} {write} on: {cause}",
    explanation=(
        "{node} sends no flow control, so the cluster does not wait for it: {others} committed "
        "{committed:,.0f} write-sets in the capture while {node}'s receive queue (wsrep_local_recv_queue) "
        "reached {queue:,.0f}. {node} is {cause}. Reads on {node} see old data until it catches up, and a "
        "node that falls further behind than its peers' gcache needs a full state transfer. Per node: "
        "{per_node}."
    ),
    recommendation="{fix}",
    caveats=(
        "wsrep_local_state is sampled once a second: a state held for less than a second may not show.",
    ),
    sources=GALERA_SOURCES + ("Galera Cluster documentation, Node State Changes",),
    disproof="The receive queue falls back to 0 and the node reports Synced again: it has caught up.",
    confidence="wsrep status of {n_nodes} nodes, same minutes",
)

SEMISYNC_SOURCES = (
    "MySQL 8.4 Reference Manual, 19.4.10 Semisynchronous Replication; Semisynchronous Replication Monitoring",
    (
        "MariaDB Server documentation, Semisynchronous Replication (rpl_semi_sync_master_timeout, status "
        "variables)"
    ),
)

SEMISYNC_TEXTS = RuleTexts(
    title="{source}'s commits wait for replica acknowledgement (semi-sync): {holder}",
    explanation=(
        "{source} is a semi-synchronous source: each commit waits until a semi-synchronous replica "
        "acknowledges it, or until rpl_semi_sync_master_timeout ({timeout}) expires and the source goes on "
        "asynchronous. In the capture {contention}. {replicas}"
    ),
    recommendation="{fix}",
    caveats=(
        (
            "A replica outside the bundle may be the one that should acknowledge: the finding names the "
            "replicas whose captures the bundle holds."
        ),
    ),
    sources=SEMISYNC_SOURCES + REPLICATION_SOURCES[:1],
    disproof=(
        "Rpl_semi_sync_master_clients back above 0 and no session waiting for an ACK: a replica acknowledges."
    ),
    confidence="processlist and Rpl_semi_sync_* counters of {source}; SHOW SLAVE STATUS of its replicas",
)

CERT_SOURCES = (
    "MariaDB Galera Cluster documentation, Galera Cluster Status Variables (wsrep_local_cert_failures)",
    "Galera Cluster documentation, Certification-Based Replication; Multi-Master Conflicts",
)

CERT_TEXTS = RuleTexts(
    title="Galera certification conflicts: {per_node_short}; {tables}",
    explanation=(
        "{writers} write at the same time, and their transactions touch the same rows: a transaction "
        "whose write-set conflicts with one another node committed first fails certification "
        "(wsrep_local_cert_failures) or is aborted by the applier (brute force, wsrep_local_bf_aborts), "
        "and the "
        "client gets a deadlock error (1213) for a commit it thought done. Per node: {per_node}. {written}"
    ),
    recommendation=(
        "Write to one node: send the writes of {tables_short}, made on {writers} now, to one of them\n"
        "(one writer in the proxy: ProxySQL or MaxScale with one writer host group, HAProxy with one\n"
        "active backend), keeping the others for reads, or partition the writes so no two nodes change\n"
        "the same rows. The application must retry a transaction that fails with a deadlock error (1213)."
    ),
    caveats=(
        (
            "The tables are read from the statements the processlists and the InnoDB transaction lists show "
            "at the snapshots: a table written between them is not named."
        ),
    ),
    sources=CERT_SOURCES,
    disproof="wsrep_local_cert_failures and wsrep_local_bf_aborts stand still: the nodes no longer conflict.",
    confidence="wsrep counters of {n_nodes} nodes, same minutes; their processlists",
)

#: The cross-host rule keys and their texts, for the catalogue.
CLUSTER_KEYS: dict[str, RuleTexts] = {
    "replica-lag-source": LAG_TEXTS,
    "replica-stopped": STOPPED_TEXTS,
    "galera-flow-control": FLOW_TEXTS,
    "host-stall-holds-others": STALL_TEXTS,
    "load-imbalance": IMBALANCE_TEXTS,
    "galera-node-behind": GALERA_NODE_TEXTS,
    "semisync-ack-wait": SEMISYNC_TEXTS,
    "galera-write-conflicts": CERT_TEXTS,
}

#: Why a replica is behind (analyzer/cluster/replica_causes.py): per cause, the phrase of the title (after
#: "db-b is 40 s behind db-a: "), the sentence of the explanation, and the fix of that cause.
CAUSE_TEXTS: dict[str, tuple[str, str, str]] = {
    "delay": (
        "on purpose, MASTER_DELAY {delay:.0f} s",
        (
            "The replica is configured to apply each event {delay:.0f} s after the source wrote it "
            "(SQL_Delay "
            "{delay:.0f} s, CHANGE MASTER TO MASTER_DELAY): the lag is the delay asked for."
        ),
        (
            "Nothing to fix while the lag stays near the delay. To apply everything now:\n"
            "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY=0; START SLAVE; (MySQL: STOP REPLICA;\n"
            "CHANGE REPLICATION SOURCE TO SOURCE_DELAY=0; START REPLICA). Never fail over to a delayed "
            "replica."
        ),
    ),
    "local-lock": (
        "its SQL thread waits for a row lock held by {blocker}",
        (
            "The replica's SQL thread (thread {thread}) waits in -lock-waits for a row lock held by a local "
            "session: {blocker}. Nothing is applied until that session ends its transaction."
        ),
        (
            "{kill} on the replica ends that session (its transaction is rolled back) and the SQL thread "
            "goes on.\n"
            "Then find why an application writes on a replica and leaves its transaction open: set\n"
            "read_only=ON on replicas (MySQL: super_read_only=ON) so that only replication writes there."
        ),
    ),
    "local-mdl": (
        "its SQL thread waits for a metadata lock held by {blocker}",
        (
            "The replica's SQL thread waits for a table metadata lock to apply {statement}: a local session "
            "has a transaction open on the table ({blocker}), and the DDL cannot start until it ends; every "
            "later event waits behind the DDL."
        ),
        (
            "{kill} on the replica ends that session's transaction and the DDL goes on. Then find why a\n"
            "session keeps a transaction open on a replica (a report left in a transaction, autocommit "
            "off);\n"
            "lock_wait_timeout bounds how long the SQL thread waits before it retries."
        ),
    ),
    "ddl": (
        "its SQL thread applies DDL on {table} ({state}, running {running})",
        (
            "The replica's SQL thread runs {statement} (State {state}, {running}): a schema change the "
            "source "
            "ran is replayed on the replica, and every later event waits until it ends."
        ),
        (
            "Wait for the ALTER to finish, or stop it on the source side next time: run schema changes "
            "with an\n"
            "online tool (pt-online-schema-change, gh-ost) that copies in small transactions; MariaDB 10.8+\n"
            "binlog_alter_two_phase=ON starts the ALTER on replicas when the source starts it."
        ),
    ),
    "no-key": (
        "row events on {table} without a usable key, Handler_read_rnd_next {rate_words}",
        (
            "The replica's SQL thread was in {state} in {share:.0f} % of the snapshots while the replica "
            "read "
            "{rate:,.0f} rows/s by table scan (Handler_read_rnd_next): with row-based replication, each row "
            "changed on a table without a primary key or usable index costs the replica a full scan of "
            "{table}."
        ),
        (
            "Add a primary key (or a unique not-null index) to {table} on the source; it replicates to the\n"
            "replica. MariaDB: innodb_force_primary_key=ON refuses new tables without one (MySQL:\n"
            "sql_require_primary_key=ON). Until then, change such tables in small batches."
        ),
    ),
    "large-transaction": (
        (
            "its SQL thread is inside one large transaction{rows} (Exec_Master_Log_Pos still for {seconds:.0f} "
            "s)"
        ),
        (
            "Exec_Master_Log_Pos stayed at {position} for {seconds:.0f} s while the I/O thread received "
            "more: "
            "the SQL thread is inside one transaction (State {state}){changed}. The replica moves on only "
            "when "
            "it commits."
        ),
        (
            "Wait for it to commit (a kill on the replica would restart it from the beginning). On the "
            "source,\n"
            "split batch jobs into transactions of a few thousand rows (a loop over key ranges, "
            "pt-archiver),\n"
            "so that replicas apply them as they come."
        ),
    ),
    "io-thread": (
        "its I/O thread is behind (Slave_IO_Running {io_running}, {io_state})",
        (
            "The SQL thread has applied everything it received; the I/O thread receives {received} of the "
            "{written} the source writes to its binlog (Slave_IO_State {io_state}): the lag is in the "
            "transfer."
        ),
        (
            "Check the network between replica and source (latency, drops, bandwidth) and the source's "
            "load;\n"
            "slave_compressed_protocol=ON (MySQL: replica_compressed_protocol) helps a slow link. A stopped\n"
            "I/O thread: read Last_IO_Error before START SLAVE IO_THREAD."
        ),
    ),
    "commit-cost": (
        "each applied transaction waits for its commit ({settings})",
        (
            "The replica's SQL thread was in its commit step in {share:.0f} % of the snapshots while the "
            "replica "
            "syncs to disk at every commit ({settings}).{fsyncs} One thread applying one transaction at a "
            "time "
            "pays a disk sync for each."
        ),
        (
            "On a replica that can be rebuilt, sync less: innodb_flush_log_at_trx_commit=2 and "
            "sync_binlog=0\n"
            "(a crash loses up to a second of applied transactions, which the replica fetches again when it\n"
            "uses GTIDs with crash-safe positions). Or let commits group: parallel apply\n"
            "(slave_parallel_threads with slave_parallel_mode=optimistic; MySQL replica_parallel_workers).\n"
            "Check the log device's write latency (iostat w_await)."
        ),
    ),
    "single-thread": (
        "one SQL thread applies what the source writes in parallel ({name} {workers:.0f})",
        (
            "{name} is {workers:.0f}: one thread applies every event, busy in {busy:.0f} % of the snapshots, "
            "while the source commits from many sessions at once."
        ),
        (
            "Let more threads apply: MariaDB slave_parallel_threads=4..16 with "
            "slave_parallel_mode=optimistic\n"
            "(STOP SLAVE SQL_THREAD first); MySQL replica_parallel_workers with\n"
            "replica_parallel_type=LOGICAL_CLOCK and replica_preserve_commit_order=ON."
        ),
    ),
    "unknown": (
        "no cause shown in the capture",
        (
            "The capture shows no cause: no lock wait of the SQL thread, no DDL or table scan, no delay, "
            "and its "
            "I/O thread keeps up."
        ),
        (
            "No cause is shown in this capture, so only the general checks apply: the SQL thread's State "
            "over\n"
            "time (SHOW PROCESSLIST), its lock waits (information_schema.innodb_lock_waits), the source's\n"
            "large transactions, parallel apply (slave_parallel_threads; replica_parallel_workers) and the\n"
            "replica's commit settings. Capture with pt-stalk while the lag grows."
        ),
    ),
}
