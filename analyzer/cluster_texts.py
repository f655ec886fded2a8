"""The words of the cross-host rules (analyzer/cluster.py, analyzer/cluster_nodes.py), as data.

Each ``RuleTexts`` is filled from the numbers its rule measured (``str.format`` fields); the rule
keys are in ``CLUSTER_KEYS`` so the catalogue (``analyzer.catalogue``) lists them with the others.
"""

from __future__ import annotations

from analyzer.texts import RuleTexts

REPLICATION_SOURCES = (
    "MariaDB Knowledge Base, SHOW REPLICA STATUS (Seconds_Behind_Master, Read/Exec_Master_Log_Pos)",
    "MariaDB Knowledge Base, Parallel Replication (slave_parallel_threads)",
    "FINDINGS.md, cross-host rows",
)
GALERA_SOURCES = (
    "Galera Cluster documentation, Flow Control and Galera Status Variables",
    "Percona, Galera Flow Control in Percona XtraDB Cluster",
    "FINDINGS.md, cross-host rows",
)

LAG_TEXTS = RuleTexts(
    title="{replica} is {lag:.0f} s behind {source}, which writes {writes}",
    explanation=(
        "{replica} replicates from {source} ({how}). Its Seconds_Behind_Master went from {first_lag:.0f} s to "
        "{lag:.0f} s ({growth:+.2f} s per second of capture) while {source} wrote {writes} in the same "
        "minutes; {applied}. Slave_SQL_Running {sql_running}; {parallel}. {settings}"
    ),
    recommendation=(
        "The replica applies slower than the source writes. Let more threads apply (MariaDB\n"
        "slave_parallel_threads with slave_parallel_mode=optimistic; MySQL replica_parallel_workers), make\n"
        "each commit cheaper on the replica (innodb_flush_log_at_trx_commit and sync_binlog on a replica\n"
        "that can be rebuilt), or spread the source's write bursts; check the replica's disk (iostat w_await)."
    ),
    caveats=(
        (
            "Seconds_Behind_Master compares event timestamps with the replica's clock: a clock offset between "
            "the hosts shifts it by that much."
        ),
        "The source's rate is its mysqladmin counters' mean in the replica's snapshots' minutes.",
    ),
    sources=REPLICATION_SOURCES,
    disproof="If the lag falls during the capture, the replica is catching up: the source's burst is over.",
    confidence="SHOW SLAVE STATUS of {replica} and mysqladmin counters of {source}, same minutes",
)

STOPPED_TEXTS = RuleTexts(
    title="{replica}'s {thread} thread stopped: {error}",
    explanation=(
        "{replica} replicates from {source} ({how}); its {thread} thread is not running and stopped at "
        "{position} of the source's binlog with: {error}. Meanwhile {source} wrote {writes}: every second "
        "widens the gap."
    ),
    recommendation=(
        "Read the error before restarting: a duplicate key (1062) or missing row (1032) means the\n"
        "replica's data differs from the source's (a write made on the replica, or a skipped event).\n"
        "Fix the row, or rebuild the replica; SET GLOBAL sql_slave_skip_counter only hides the drift.\n"
        "Then START SLAVE and watch Seconds_Behind_Master fall."
    ),
    caveats=("Only the snapshots of this capture: the thread may have stopped long before.",),
    sources=REPLICATION_SOURCES,
    disproof="Slave_SQL_Running Yes in a later snapshot: replication resumed.",
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
    disproof="wsrep_flow_control_sent not growing on any node: the pauses came from elsewhere (a node outside the case).",
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
    sources=("sysstat iostat(1) (w_await), procps vmstat(8) (r)", "FINDINGS.md, cross-host rows"),
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
        "A cluster with one writer node by design (to avoid certification conflicts) is imbalanced on purpose.",
    ),
    sources=("MariaDB Knowledge Base, Server Status Variables (Questions)", "FINDINGS.md, cross-host rows"),
    disproof="The share evens out over a longer capture.",
    confidence="mysqladmin Questions of {n_nodes} nodes",
)

#: The cross-host rule keys and their texts, for the catalogue.
CLUSTER_KEYS: dict[str, RuleTexts] = {
    "replica-lag-source": LAG_TEXTS,
    "replica-stopped": STOPPED_TEXTS,
    "galera-flow-control": FLOW_TEXTS,
    "host-stall-holds-others": STALL_TEXTS,
    "load-imbalance": IMBALANCE_TEXTS,
}
