"""Why a replica is behind (analyzer/cluster/replica_causes.py), on real captures of each cause made on this
machine by scripts/make_cluster_bundles.sh (tests/fixtures/bundles/README.md, "Replica lag by its
cause"): db-a a MariaDB 10.11 source, db-b its replica (one SQL thread, nothing synced at commit),
pt-stalk 3.2.1 on both at once. The cross-host finding (``replica-lag-source``) and, when the replica's
capture is alone, its own ``replica-lag`` give the cause's title, fix and culprit.
"""

from __future__ import annotations

import dataclasses

import pytest

from analyzer import engine
from analyzer.cluster.replica_causes import lag_cause
from analyzer.cluster.rules import cross_host_findings
from analyzer.findings import Finding, Severity
from analyzer.timeline.timeline import Timeline
from tests.analyzer.test_cluster import timelines


def lag_finding(shape: str) -> Finding:
    (f,) = [f for f in cross_host_findings(timelines(shape)) if f.key == "replica-lag-source"]
    return f


def test_a_local_session_idle_in_transaction_that_holds_the_rows_is_named_with_its_kill() -> None:
    f = lag_finding("lag-lock")
    # -lock-waits: waiting_thread 10 (db-b's Slave_SQL, system user) blocked by thread 11 (app, Sleep)
    assert f.title.startswith(
        "db-b is 32 s behind db-a: its SQL thread waits for a row lock held by session 11 app@localhost, "
        "idle in transaction for 33 s"
    )
    assert f.explanation.startswith("The replica's SQL thread (thread 10) waits in -lock-waits")
    assert f.recommendation.startswith("KILL 11; on the replica ends that session")
    c = f.culprit
    assert (c.kind, c.id) == ("session", "11")
    assert f"{c.user}@{c.host}: {c.statement}" == "app@localhost: idle in transaction"
    first = f.evidence[0]
    assert first.label == "the replica's SQL thread 10 waits for a row lock"
    assert first.member == "lag-lock/db-b/2026_11_28_13_26_05-lock-waits"
    assert f.severity is Severity.WARNING
    cause = lag_cause(timelines("lag-lock")["db-b"], timelines("lag-lock")["db-b"].frame("replica_status"))
    assert (cause.key, cause.threads) == ("local-lock", (10,))


def test_an_intentional_delay_is_info_and_says_so_on_both_rules() -> None:
    f = lag_finding("lag-delay")
    # CHANGE MASTER TO MASTER_DELAY=70: every snapshot says SQL_Delay 70, Seconds_Behind_Master 70 and
    # "Waiting until MASTER_DELAY seconds after master executed event"
    assert f.title == "db-b is 70 s behind db-a: on purpose, MASTER_DELAY 70 s"
    assert f.severity is Severity.INFO
    assert f.recommendation.startswith("Nothing to fix while the lag stays near the delay.")
    assert (f.culprit.kind, f.culprit.id, f.culprit.statement) == ("setting", "MASTER_DELAY", "70")
    # the replica's own rule, without its source in the case, says the same
    (own,) = engine.run(timelines("lag-delay")["db-b"], only=("replica-lag",)).findings
    assert own.title == "Replica 70 s behind its source: on purpose, MASTER_DELAY 70 s"
    assert own.severity is Severity.INFO and own.culprit == f.culprit


def test_the_verdict_of_a_replica_blocked_by_a_local_session_is_that_session() -> None:
    out = engine.run_hosts(timelines("lag-lock"))
    # -lock-waits on db-b: the waiter, thread 10, is the SQL thread; the blocker, session 11, is the
    # long transaction's culprit: the long transaction explains the lag
    (li,) = [li for li in out.links if li.effect == ("replica-lag-source", None)]
    assert (li.cause, li.join) == (("long-transaction", "db-b"), "thread")
    assert "thread 10, is the replica's SQL thread" in li.sentence and "session 11" in li.sentence
    assert li.evidence[0].member == "lag-lock/db-b/2026_11_28_13_26_05-lock-waits"
    v = out.verdict
    assert (v.root_cause.key, v.root_cause.host) == ("long-transaction", "db-b")
    assert [f.key for f in v.chain] == ["long-transaction", "replica-lag-source"]


def test_the_verdict_of_row_events_without_a_key_is_the_lag_and_it_explains_the_scans() -> None:
    out = engine.run_hosts(timelines("lag-nokey"))
    (li,) = [
        li for li in out.links if li.effect == ("full-scans", "db-b") and li.cause[0] == "replica-lag-source"
    ]
    assert (li.cause, li.join) == (("replica-lag-source", None), "thread")
    assert "Delete_rows_log_event::find_row() in 100% of the snapshots" in li.sentence
    v = out.verdict
    assert (v.root_cause.key, v.root_cause.host) == ("replica-lag-source", None)
    assert "sb.nokey" in v.root_cause.title
    assert ("full-scans", "db-b") in [(f.key, f.host) for f in v.explains]


def test_the_verdict_of_a_stopped_replica_carries_its_error() -> None:
    v = engine.run_hosts(timelines("replica-stopped")).verdict
    assert v.root_cause.key == "replica-stopped"
    assert v.headline.startswith("db-b's SQL thread stopped on error 1062: Could not execute Write_rows_v1")


def test_the_sql_threads_table_copy_explains_the_replicas_scans_and_redo_waits() -> None:
    out = engine.run_hosts(timelines("lag-ddl"))
    effects = {li.effect for li in out.links if li.cause == ("replica-lag-source", None)}
    assert effects == {("full-scans", "db-b"), ("log-waits", "db-b")}


def test_the_scans_of_row_events_without_a_key_are_the_replicas_and_the_source_is_idle() -> None:
    f = lag_finding("lag-nokey")
    scans = {e.label: e for e in f.evidence}["Handler_read_rnd_next (median)"]
    assert scans.value > 1_000_000 and scans.member.startswith("lag-nokey/db-b/")
    assert "db-a wrote 0 write statements/s" in f.explanation


def test_the_still_position_of_a_large_transaction_is_cited_from_the_slave_status() -> None:
    still = lag_finding("lag-bigtrx").evidence[0]
    assert (still.label, still.member) == (
        "Exec_Master_Log_Pos unchanged",
        "lag-bigtrx/db-b/2026_11_28_13_48_21-slave-status",
    )


#: shape, the cause's key, title, a phrase of the explanation, the fix's start, the culprit (kind, id)
CAUSES = [
    # db-a deleted 10,000 rows of sb.nokey (50,000 rows, no index) in one statement: every snapshot of db-b's
    # SQL thread says Delete_rows_log_event::find_row() while Handler_read_rnd_next runs at 2-5 M/s
    ("lag-nokey", "no-key",
     ("db-b is 30 s behind db-a: row events on table sb.nokey without a usable key, Handler_read_rnd_next "
      "2.4 M rows/s"),
     "Delete_rows_log_event::find_row() in 100 % of the snapshots",
     "Add a primary key (or a unique not-null index) to table sb.nokey", ("statement", "table sb.nokey")),
    # db-a updated 600,000 rows of sb.big (primary key) in one statement; db-b (5 % of a CPU) applies it: its
    # Exec_Master_Log_Pos stays at 82149881 while Read_Master_Log_Pos reaches 238808142
    ("lag-bigtrx", "large-transaction",
     ("db-b is 28 s behind db-a: its SQL thread is inside one large transaction, 259,081 rows changed so far "
     "(Exec_Master_Log_Pos still for 11 s)"),
     "Exec_Master_Log_Pos stayed at db-a-bin.000001:82149881", "Wait for it to commit", ("transaction", "66")),
    # db-b's Slave_SQL row: "Waiting for table metadata lock" on the source's ALTER TABLE sb.sbtest1 in all 15
    # snapshots; session 11 (report) read sb.sbtest1 in a transaction and sleeps (-transactions)
    ("lag-mdl", "local-mdl",
     ("db-b is 29 s behind db-a: its SQL thread waits for a metadata lock held by session 11 "
       "report@localhost, "
     "idle in transaction for 30 s, transaction open 29 s"),
     "The replica's SQL thread waits for a table metadata lock to apply alter table",
     "KILL 11; on the replica ends that session's transaction and the DDL goes on.", ("session", "11")),
    # every snapshot of db-b's Slave_SQL row: Info "ALTER TABLE sb.big ADD COLUMN ..., ALGORITHM=COPY",
    # State "copy to tmp table" then "Enabling keys"; Exec_Master_Log_Pos still; db-a idle
    ("lag-ddl", "ddl", ("db-b is 22 s behind db-a: its SQL thread applies DDL on sb.big (Enabling keys, "
                        "running 21 s)"),
     "a schema change the source ran is replayed on the replica", "Wait for the ALTER to finish",
     ("statement", "alter table sb.big add column note varchar(?) ?, algorithm=copy")),
]  # fmt: skip


@pytest.mark.parametrize("shape,key,title,explains,fix,culprit", CAUSES, ids=[c[0] for c in CAUSES])
def test_each_cause_gives_its_title_fix_culprit_and_the_root_cause(
    shape: str, key: str, title: str, explains: str, fix: str, culprit: tuple[str, str]
) -> None:
    f = lag_finding(shape)
    assert f.title == title
    assert explains in f.explanation
    assert f.recommendation.startswith(fix)
    assert f.culprit is not None and (f.culprit.kind, f.culprit.id) == culprit
    tl = timelines(shape)["db-b"]
    assert lag_cause(tl, tl.frame("replica_status")).key == key
    assert engine.run_hosts(timelines(shape)).verdict.root_cause.key == "replica-lag-source"


def _with_variables(shape: str, **values: str) -> Timeline:
    """db-b's timeline of ``shape`` with some of its SHOW GLOBAL VARIABLES set otherwise."""
    tl = timelines(shape)["db-b"]
    return dataclasses.replace(tl, variables={**tl.variables, **values})


def test_the_replica_that_syncs_at_commit_shows_its_device_latency() -> None:
    # cluster-replica-lag: db-b's Slave_SQL row in State Commit in 19 of 20 snapshots, redo and binlog
    # synced at every commit (O_DSYNC: the fsync counters stand still)
    tl = timelines("replica-lag")["db-b"]
    cause = lag_cause(tl, tl.frame("replica_status"))
    assert cause.key == "commit-cost"
    assert (
        "Its busiest device, " in cause.explanation
        and "ms per write (iostat w_await, median)" in cause.explanation
    )


def test_one_busy_sql_thread_without_synced_commits_is_single_threaded_apply() -> None:
    # the same capture, read as if db-b synced nothing at commit: one busy SQL thread is what is left
    tl = _with_variables("replica-lag", innodb_flush_log_at_trx_commit="2", sync_binlog="0")
    cause = lag_cause(tl, tl.frame("replica_status"))
    assert cause.key == "single-thread"
    assert (
        cause.title == "one SQL thread applies what the source writes in parallel (slave_parallel_threads 0)"
    )
    assert cause.fix.startswith("Let more threads apply: MariaDB slave_parallel_threads=4..16")
    # with parallel apply configured and nothing else shown, the cause is unknown, and the text says so
    tl = _with_variables(
        "replica-lag", innodb_flush_log_at_trx_commit="2", sync_binlog="0", slave_parallel_threads="8"
    )
    cause = lag_cause(tl, tl.frame("replica_status"))
    assert (cause.key, cause.title, cause.culprit) == ("unknown", "no cause shown in the capture", None)
    assert cause.fix.startswith("No cause is shown in this capture, so only the general checks apply")


def test_an_idle_sql_thread_and_a_reconnecting_io_thread_put_the_lag_in_the_transfer() -> None:
    # cluster-healthy's db-b, its Slave_SQL row read as having applied all it received (the State MariaDB
    # shows then) and its I/O thread as reconnecting
    tl = timelines("healthy")["db-b"]
    pl = tl.frame("processlist")
    sql = (pl["command"].astype("string") == "Slave_SQL").fillna(False).to_numpy()
    state = pl["state"].astype("string").mask(sql, "Slave has read all relay log; waiting for more updates")
    tl = dataclasses.replace(
        tl, frames={**tl.frames, "processlist": pl.assign(state=state.astype("category"))}
    )
    rs = tl.frame("replica_status").assign(
        io_running="Connecting", io_state="Reconnecting after a failed master event read"
    )
    cause = lag_cause(tl, rs, source_binlog=113_000.0, received=20_000.0)
    assert cause.key == "io-thread"
    assert cause.title == (
        "its I/O thread is behind (Slave_IO_Running Connecting, Reconnecting after a failed master event "
        "read)"
    )
    assert "receives 20 KiB/s of the 110 KiB/s the source writes" in cause.explanation
    # the same replica with its I/O thread running and keeping up: no transfer problem
    assert (
        lag_cause(tl, tl.frame("replica_status"), source_binlog=113_000.0, received=112_000.0).key
        != "io-thread"
    )


def test_the_replicas_capture_alone_names_the_cause_of_a_growing_lag_and_its_verdict() -> None:
    # db-b's pt-stalk collection only (its source not in the case): 18 s to 32 s behind, growing
    out = engine.run(timelines("lag-lock")["db-b"])
    (lag,) = [f for f in out.findings if f.key == "replica-lag"]
    assert lag.title == (
        "Replica 32 s behind its source: its SQL thread waits for a row lock held by session 11 "
        "app@localhost, idle in transaction for 33 s, transaction open 32 s"
    )
    assert lag.recommendation.startswith("KILL 11;") and lag.culprit.id == "11"
    assert out.verdict.root_cause.key == "long-transaction"
    assert [f.key for f in out.verdict.chain] == ["long-transaction", "replica-lag"]


def test_a_lag_finding_carries_the_sql_thread_and_the_ddl_as_its_subjects() -> None:
    assert ("session", "10") in lag_finding("lag-lock").subjects
    ddl = lag_finding("lag-ddl").subjects
    assert ("statement", "alter table sb.big add column note varchar(?) ?, algorithm=copy") in ddl
