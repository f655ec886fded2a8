"""Who holds what a cluster waits for: a semi-sync source's commits (analyzer/cluster/semisync.py), Galera
nodes writing the same rows (analyzer/cluster/certification.py), a Galera node held out of sync by a
session's global read lock (analyzer/cluster/galera_states.py) and a replica's stopped I/O thread.

Read on the real cluster captures of tests/fixtures/bundles (scripts/make_cluster_bundles.sh), the
semi-sync shape made from cluster-replica-stopped's pair with the states and settings a semi-sync
source shows (the staged waits-semisync-ack bundle is a capture of it).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from analyzer.cluster.rules import cross_host_findings
from analyzer.findings import Culprit, Severity
from analyzer.timeline.timeline import Timeline
from analyzer.waits import holders as holders_pkg
from analyzer.waits.holders import Holding, replication
from analyzer.waits.model import Resource
from analyzer.waits.read import waits
from tests.analyzer.test_cluster import timelines


def _io_stopped_by_hand(tl: Timeline) -> Timeline:
    """The replica with its I/O thread stopped by hand (STOP SLAVE IO_THREAD: No, no error) and its SQL
    thread running, semi-sync on."""
    rs = tl.frame("replica_status").assign(
        io_running="No",
        sql_running="Yes",
        last_io_error="",
        last_io_errno=0.0,
        last_sql_error="",
        last_sql_errno=0.0,
    )
    variables = {**tl.variables, "rpl_semi_sync_slave_enabled": "ON"}
    return dataclasses.replace(tl, frames={**tl.frames, "replica_status": rs}, variables=variables)


def _semisync_source(tl: Timeline, waiting: int = 4) -> Timeline:
    """The source with semi-sync on and ``waiting`` of its client sessions in each snapshot committing
    in ``Waiting for semi-sync ACK from slave``."""
    pl = tl.frame("processlist")
    clients = pl[pl["user"].astype("string").ne("system user").fillna(True).to_numpy(dtype=bool)]
    picked = clients.groupby("ts").head(waiting).index
    state = pl["state"].astype(object).copy()
    state.loc[picked] = "Waiting for semi-sync ACK from slave"
    pl = pl.assign(
        state=state,
        command=pl["command"].astype(object).where(~pl.index.isin(picked), "Query"),
        active=pl["active"].where(~pl.index.isin(picked), True),
    )
    variables = {
        **tl.variables,
        "rpl_semi_sync_master_enabled": "ON",
        "rpl_semi_sync_master_timeout": "600000",
    }
    return dataclasses.replace(tl, frames={**tl.frames, "processlist": pl}, variables=variables)


@pytest.fixture(scope="module")
def semisync() -> dict[str, Timeline]:
    tls = timelines("replica-stopped")
    return {"db-a": _semisync_source(tls["db-a"]), "db-b": _io_stopped_by_hand(tls["db-b"])}


def test_a_semi_sync_source_waits_for_the_replica_whose_io_thread_stopped(semisync) -> None:
    found = {f.key: f for f in cross_host_findings(semisync)}
    f = found["semisync-ack-wait"]
    assert (f.hosts, f.severity) == (("db-b", "db-a"), Severity.CRITICAL)
    assert f.culprit is not None and (f.culprit.kind, f.culprit.id) == ("host", "db-b")
    assert f.title == (
        "db-a's commits wait for replica acknowledgement (semi-sync): db-b, its replica, stopped its I/O "
        "thread "
        "(no error: stopped by hand (STOP SLAVE IO_THREAD))"
    )
    assert "START SLAVE IO_THREAD on db-b" in f.recommendation
    assert "rpl_semi_sync_master_timeout (600,000 ms)" in f.recommendation
    by_label = {e.label: e for e in f.evidence}
    assert by_label["Slave_IO_Running"].value == "No"
    assert by_label["sessions in State 'Waiting for semi-sync ACK from slave' (max)"].value == 4


def test_an_io_thread_stopped_by_hand_is_not_given_the_fix_of_a_duplicate_key(semisync) -> None:
    f = {f.key: f for f in cross_host_findings(semisync)}["replica-stopped"]
    assert f.title == "db-b's I/O thread stopped: no error (stopped by hand or by a tool: STOP SLAVE)"
    assert "duplicate key" not in f.recommendation and "1062" not in f.recommendation
    assert "START SLAVE IO_THREAD on db-b" in f.recommendation
    assert "db-a's commits wait for its acknowledgement" in f.recommendation


def test_the_semi_sync_waits_are_the_root_cause_naming_the_replica(semisync) -> None:
    from analyzer import engine

    v = engine.run_hosts(semisync).verdict
    assert v.root_cause.key == "semisync-ack-wait", v.headline
    assert v.headline.startswith("db-a's commits wait for replica acknowledgement (semi-sync): db-b")


def test_the_source_alone_shows_its_waiters_and_no_holder(semisync) -> None:
    tl = semisync["db-a"]
    (h,) = replication.replica_ack(tl, waits(tl))
    assert (h.resource, h.holder, h.waiters) == (Resource.REPLICA_ACK, None, 4)
    assert "up to 4 sessions wait for a semi-sync ACK" in (h.contention or "")
    assert "rpl_semi_sync_master_timeout 600,000 ms" in (h.contention or "")
    # a source that is not semi-synchronous waits for nobody
    plain = timelines("replica-stopped")["db-a"]
    assert replication.replica_ack(plain, waits(plain)) == []


def test_a_stopped_sql_thread_keeps_the_duplicate_key_fix() -> None:
    f = {f.key: f for f in cross_host_findings(timelines("replica-stopped"))}["replica-stopped"]
    assert "duplicate key (1062)" in f.recommendation and "semi" not in f.recommendation


def test_two_galera_writers_of_the_same_table_are_named_with_their_conflict_rates() -> None:
    f = {f.key: f for f in cross_host_findings(timelines("galera-desync"))}["galera-write-conflicts"]
    assert f.hosts == ("db-c", "db-a") and f.severity is Severity.WARNING
    assert f.title.startswith(
        "Galera certification conflicts: db-c 18.6 certification failures/s and 28.6 "
        "brute-force aborts/s, db-a 13.9"
    )
    assert f.title.endswith("; sbtest1 written on db-a and db-c")
    assert f.recommendation.startswith(
        "Write to one node: send the writes of sbtest1, made on db-a and db-c now"
    )
    assert f.culprit is None  # no single holder: the two writers' sessions conflict
    by_label = {e.label: e for e in f.evidence}
    assert by_label["db-c wsrep_local_cert_failures (certification failures)"].unit == "/s"
    assert by_label["sbtest1 written on"].value == "db-a and db-c"


def test_a_node_desynced_by_a_global_read_lock_names_the_session_holding_it(monkeypatch) -> None:
    tls = timelines("galera-desync")
    holder = Culprit(
        kind="session", id="14", user="backup", host="localhost", statement="FLUSH TABLES WITH READ LOCK"
    )

    def reader(tl: Timeline, w: pd.DataFrame) -> list[Holding]:
        if tl is not tls["db-b"]:
            return []
        return [
            Holding(
                Resource.GLOBAL_READ_LOCK,
                tl.host,
                holder,
                "took the lock 14 s before the capture",
                held_s=14.0,
                fix="KILL 14 on db-b.",
            )
        ]

    monkeypatch.setitem(holders_pkg.READERS, Resource.GLOBAL_READ_LOCK, [(reader, True)])
    f = {f.key: f for f in cross_host_findings(tls)}["galera-node-behind"]
    assert f.culprit == holder
    assert f.title.endswith("held by session 14 backup@localhost")
    assert f.recommendation.startswith(
        "db-b's global read lock is held by session 14 backup@localhost (took the lock 14 s before the capture)"
    )
    assert "KILL 14 on db-b." in f.recommendation


def test_without_a_holder_shown_the_desynced_node_is_the_culprit(monkeypatch) -> None:
    monkeypatch.setitem(holders_pkg.READERS, Resource.GLOBAL_READ_LOCK, [])
    f = {f.key: f for f in cross_host_findings(timelines("galera-desync"))}["galera-node-behind"]
    assert f.culprit is not None and (f.culprit.kind, f.culprit.id) == ("host", "db-b")
    assert f.recommendation.startswith("End what holds db-b out of sync")


def test_the_replica_alone_gives_its_stopped_io_thread_the_same_fix(semisync) -> None:
    from analyzer.rules.replication import replica_lag

    f = replica_lag(semisync["db-b"])
    assert (
        f is not None
        and f.title == "Replica I/O thread stopped: no error (stopped by hand or by a tool: STOP SLAVE)"
    )
    assert "START SLAVE IO_THREAD on this replica" in f.recommendation and "1062" not in f.recommendation


#: The staged waits bundles (scripts/make_wait_bundles.sh).
STAGED = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"


def _staged(name: str):
    from tests.analyzer.test_bundle_verdicts import _analyse

    path = STAGED / f"{name}.tar.gz"
    return _analyse(path)


def test_the_staged_semi_sync_source_waits_for_its_replica_whose_io_thread_was_stopped() -> None:
    out = _staged("waits-semisync-ack")
    v = out.verdict
    assert v.root_cause.key == "semisync-ack-wait", v.headline
    assert (v.root_cause.culprit.kind, v.root_cause.culprit.id) == ("host", "db-b")
    assert v.headline == (
        "db-a's commits wait for replica acknowledgement (semi-sync): db-b, its replica, stopped its I/O "
        "thread "
        "(no error: stopped by hand (STOP SLAVE IO_THREAD))"
    )
    assert v.fix.startswith("Bring db-b's I/O thread back: START SLAVE IO_THREAD on db-b")
    assert "rpl_semi_sync_master_timeout (600,000 ms)" in v.fix
    stopped = next(f for f in out.findings if f.key == "replica-stopped")
    assert "1062" not in stopped.recommendation


def test_the_staged_galera_writers_of_the_same_rows_are_the_root_cause_with_no_single_holder() -> None:
    out = _staged("waits-galera-multiwriter")
    v = out.verdict
    assert v.root_cause.key == "galera-write-conflicts", v.headline
    assert v.root_cause.culprit is None and v.root_cause.severity is Severity.CRITICAL
    assert v.root_cause.hosts == ("db-c", "db-a")
    assert v.headline.startswith(
        "Galera certification conflicts: db-c 47.5 certification failures/s and "
        "150.9 "
        "brute-force aborts/s, db-a 29.8"
    )
    assert v.headline.endswith("; hot written on db-a and db-c")
    assert "Write to one node: send the writes of hot, made on db-a and db-c now" in v.fix


def test_a_galera_nodes_sessions_waiting_for_certification_have_its_conflict_rates_and_no_holder() -> None:
    tl = timelines("galera")["db-c"]
    (h,) = replication.certification(tl, waits(tl))
    assert (h.resource, h.holder, h.waiters) == (Resource.GALERA_CERTIFICATION, None, 4)
    assert h.contention == (
        "wsrep_local_cert_failures 1.9 per second (36 in 19 s); wsrep_local_bf_aborts 2.5 per second "
        "(48 in 19 s); its sessions write sbtest?"
    )
    assert h.fix.startswith("Write to one node")


def test_the_staged_galera_node_desynced_by_a_backup_is_named_with_its_state() -> None:
    v = _staged("waits-galera-ftwrl").verdict
    assert v.root_cause.key == "galera-node-behind", v.headline
    assert v.headline.startswith("db-b is Donor/Desynced and ")
    assert "FLUSH TABLES WITH READ LOCK" in v.fix
    # the holder is named once in the headline and once in the fix, with what shows it holding
    assert v.headline.endswith("its global read or backup lock is held by session 15 backup@127.0.0.1")
    assert v.fix.count("session 15 backup@127.0.0.1") == 1
    assert "(the only client session not waiting, idle since before the first wait" in v.fix
    # lock-waits and sessions-waiting on db-b name the same session 15 (analyzer/waits/holders/locks.py
    # global_holder): the node's finding explains both (analyzer/reasoning/joins/replication.py)
    assert {(f.key, f.host) for f in v.explains} >= {("lock-waits", "db-b"), ("sessions-waiting", "db-b")}
    assert all(
        f.culprit is not None and f.culprit.id == "15"
        for f in v.explains
        if f.key in ("lock-waits", "sessions-waiting")
    )
