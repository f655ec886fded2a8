"""Galera nodes' own states (analyzer/cluster/galera_states.py) on real captures of three MariaDB 10.11 Galera
nodes made on this machine by scripts/make_cluster_bundles.sh (tests/fixtures/bundles/README.md):

- cluster-galera-desync: on db-b a session holds FLUSH TABLES WITH READ LOCK (db-b desyncs: state 2,
  Donor/Desynced, wsrep_desync_count 1) while db-a and db-c write: db-b's receive queue grows.
- cluster-galera: db-b's disk throttled, Synced, sending flow control: the cluster waits for it, so it
  is the flow-control finding, not this one.
"""

from __future__ import annotations

from analyzer import engine
from analyzer.cluster.galera_states import galera_node_behind, node
from analyzer.cluster.rules import cross_host_findings
from analyzer.findings import Severity
from tests.analyzer.test_cluster import timelines, with_iostat


def test_a_desynced_node_that_falls_behind_while_the_others_write_is_named_with_its_cause() -> None:
    f = galera_node_behind(timelines("galera-desync"))
    assert f is not None and f.hosts == ("db-b", "db-a", "db-c")
    assert f.title == (
        "db-b is Donor/Desynced and 20,141 write-sets behind while db-a and db-c write on: desynced "
        "(wsrep_desync_count 1: wsrep_desync=ON, FLUSH TABLES WITH READ LOCK or a backup lock on it)"
    )
    assert f.severity is Severity.WARNING
    assert (f.culprit.kind, f.culprit.id) == ("host", "db-b")
    # every node explained: state, queues, flow control, paused share, certification failures, desync
    assert (
        "db-b Donor/Desynced, receive queue up to 20141, send queue up to 0, flow control sent 0"
        in f.explanation
    )
    assert (
        "db-a Synced, receive queue up to 9" in f.explanation
        and "certification failures +195" in f.explanation
    )
    by_label = {e.label: e for e in f.evidence}
    assert by_label["wsrep_desync_count (max)"].member.startswith("galera-desync/db-b/")
    assert by_label["db-c wsrep_last_committed (growth)"].value > 10_000
    assert f.recommendation.startswith("End what holds db-b out of sync")


def test_each_nodes_state_is_read_over_the_capture() -> None:
    tls = timelines("galera-desync")
    b = node("db-b", tls["db-b"])
    assert (b.states, b.desync, b.sent) == (("Donor/Desynced",), 1.0, 0.0)
    assert b.recv_first < 10_000 < b.recv_max
    assert node("db-a", tls["db-a"]).states == ("Synced",)


def test_a_synced_node_that_sends_flow_control_is_not_behind_on_its_own() -> None:
    found = {f.key for f in cross_host_findings(timelines("galera"))}
    assert "galera-flow-control" in found and "galera-node-behind" not in found
    assert galera_node_behind({"db-a": timelines("galera-desync")["db-a"]}) is None


def test_the_node_whose_own_disk_stalls_is_joined_to_the_flow_control_it_sent() -> None:
    tls = dict(timelines("galera"))
    tls["db-b"] = with_iostat(tls["db-b"], 80.0)  # db-b alone waits 80 ms per write on vda
    out = engine.run_hosts(tls)
    joined = {(li.cause, li.effect): li for li in out.links if li.join == "galera"}
    li = joined[(("disk-saturation", "db-b"), ("galera-flow-control", None))]
    assert li.sentence.startswith("db-b, the node that sent flow control and held db-a, db-c back")
    # the same disk on every node (one machine): no node is singled out, no link
    same = {h: with_iostat(tl, 80.0) for h, tl in timelines("galera").items()}
    assert not [li for li in engine.run_hosts(same).links if li.join == "galera"]


def test_the_verdict_of_a_desynced_node_is_that_node() -> None:
    v = engine.run_hosts(timelines("galera-desync")).verdict
    # three nodes on one 2-CPU machine are CPU-saturated alike: the node out of sync is the cause named
    assert (v.root_cause.key, v.root_cause.hosts[0]) == ("galera-node-behind", "db-b")
