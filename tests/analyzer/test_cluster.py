"""Cross-host rules (analyzer/cluster/rules.py) on real captures of several servers made on this machine by
scripts/make_cluster_bundles.sh (tests/fixtures/bundles/README.md, "Clusters"): one tarball, a
directory per host, each a pt-stalk 3.2.1 collection of a scratch MariaDB 10.11 taken at the same time.

- cluster-replica-lag: db-a (server_id 1, port 3411) takes a 16-thread sysbench write load; db-b
  (server_id 2, one SQL thread, redo and binlog synced at every commit) replicates from it and falls
  behind from 13 s to 31 s in 20 s.
- cluster-replica-stopped: a row inserted on db-b first; the same key inserted on db-a stopped db-b's
  SQL thread on error 1062; then db-a takes a write load while db-b's I/O thread still receives it.
- cluster-healthy: the same pair under a light load (50 transactions/s): db-b keeps up.
- cluster-galera: three Galera nodes; db-b's disk is throttled (blkio cgroup), db-a and db-c take writes.

Each host's Timeline is built from its own directory's sources, as the engine's run_hosts does.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from analyzer.cluster import offsets, topology
from analyzer.cluster.rules import cross_host_findings, load_imbalance
from analyzer.findings import Finding, Severity
from analyzer.timeline.timeline import Timeline
from parsers import iostat
from parsers.base import ClockHints
from parsers.ingest.bundle import read_bundle
from tests.analyzer.captures import iostat_dx_text

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"


@cache
def timelines(shape: str) -> dict[str, Timeline]:
    """Host directory -> that host's Timeline, from tests/fixtures/bundles/cluster-SHAPE.tar.gz."""
    bundle = read_bundle(BUNDLES / f"cluster-{shape}.tar.gz")
    by_host: dict[str, list] = {}
    for source in bundle.sources:
        by_host.setdefault(source.member.split("/")[1], []).append(source)
    return {
        host: Timeline.from_sources(sources, ncpu=bundle.ncpu, host=host)
        for host, sources in sorted(by_host.items())
    }


def findings(shape: str) -> dict[str, Finding]:
    return {f.key: f for f in cross_host_findings(timelines(shape))}


def test_the_source_of_a_replica_is_found_by_its_server_id() -> None:
    (link,) = topology.replication_links(timelines("replica-lag"))
    assert (link.replica, link.source) == ("db-b", "db-a")
    assert link.how == "Master_Server_Id 1 = server_id of db-a"


def test_a_replica_that_syncs_every_applied_commit_lags_on_its_commit_cost() -> None:
    f = findings("replica-lag")["replica-lag-source"]
    assert (f.host, f.hosts) == (None, ("db-a", "db-b"))  # the cause first
    # the SQL thread is in its Commit state in 19 of 20 processlist snapshots, with redo and binlog synced
    assert f.title == (
        "db-b is 31 s behind db-a: each applied transaction waits for its commit "
        "(innodb_flush_log_at_trx_commit=1 and sync_binlog=1)"
    )
    assert f.explanation.startswith(
        "The replica's SQL thread was in its commit step in 95 % of the snapshots"
    )
    assert f.recommendation.startswith(
        "On a replica that can be rebuilt, sync less: innodb_flush_log_at_trx_commit=2"
    )
    assert (f.culprit.kind, f.culprit.id, f.culprit.statement) == (
        "setting",
        "innodb_flush_log_at_trx_commit",
        "1",
    )
    assert "6,862 write statements/s" in f.explanation
    assert "from 13 s to 31 s" in f.explanation and "slave_parallel_threads 0" in f.explanation
    by_label = {e.label: e for e in f.evidence}
    writes = by_label["Com_insert+Com_update+Com_delete"]
    assert writes.member == "replica-lag/db-a/2026_11_27_19_23_35-mysqladmin"  # the source's own lines
    assert writes.value > 5000 and writes.unit == "/s"
    binlog = by_label["Binlog_bytes_written"].value
    applied = by_label["Exec_Master_Log_Pos growth"].value
    received = by_label["Read_Master_Log_Pos growth"].value
    # the I/O thread keeps up with the source's binlog; the SQL thread applies a tenth of it
    assert abs(received - binlog) / binlog < 0.05
    assert applied < binlog / 5
    assert by_label["Seconds_Behind_Master (max)"].member.startswith("replica-lag/db-b/")
    # what sets the replica apart: it syncs redo and binlog at every commit, its source does not
    assert (
        "db-b's settings differ from its source's: innodb_flush_log_at_trx_commit 1 (vs 0); sync_binlog 1 "
        "(vs 0)"
    ) in f.explanation
    assert by_label["variable sync_binlog"].value == "1"
    assert f.severity is Severity.WARNING


def test_a_stopped_sql_thread_names_its_error_and_the_source_that_keeps_writing() -> None:
    found = findings("replica-stopped")
    assert "replica-lag-source" not in found  # one finding per link: the stop, not the lag before it
    f = found["replica-stopped"]
    assert (f.host, f.hosts, f.severity) == (None, ("db-b", "db-a"), Severity.CRITICAL)
    assert f.title.startswith(
        "db-b's SQL thread stopped on error 1062: Could not execute Write_rows_v1 event on table sb.sbtest1"
    )
    assert "Duplicate entry '20001' for key 'PRIMARY', Error_code: 1062" in f.title
    assert "stopped at db-a-bin.000001:3830057 " in f.explanation and "write statements/s" in f.explanation
    by_label = {e.label: e for e in f.evidence}
    assert by_label["Slave_IO_Running / Slave_SQL_Running"].value == "Yes / No"
    # the I/O thread still receives the source's binlog: the backlog grows as fast as db-a writes it
    received, written = by_label["Read_Master_Log_Pos growth"].value, by_label["Binlog_bytes_written"].value
    assert abs(received - written) / written < 0.1
    assert by_label["Com_insert+Com_update+Com_delete"].member.startswith("replica-stopped/db-a/")


def test_a_replica_that_keeps_up_with_its_source_gives_no_cross_host_finding() -> None:
    tls = timelines("healthy")
    assert [(link.replica, link.source) for link in topology.replication_links(tls)] == [("db-b", "db-a")]
    assert tls["db-b"].frame("replica_status")["seconds_behind"].max() <= 1
    assert cross_host_findings(tls) == []


def test_each_host_alone_or_two_healthy_hosts_give_no_cross_host_finding() -> None:
    tls = timelines("replica-lag")
    assert cross_host_findings({"db-a": tls["db-a"]}) == []
    # db-a of both captures: two sources, neither a replica of the other, neither stalled, traffic even
    healthy = {"db-a": tls["db-a"], "db-x": timelines("replica-stopped")["db-a"]}
    assert cross_host_findings(healthy) == []


def test_a_replica_whose_source_is_not_in_the_case_gives_no_link() -> None:
    tls = timelines("replica-lag")
    assert (
        topology.replication_links({"db-b": tls["db-b"], "other": timelines("replica-stopped")["db-b"]}) == []
    )


def test_replication_offsets_are_refused_when_the_write_rate_is_too_steady_to_tell() -> None:
    # 1-s samples of a steady sysbench load: shifting by a second fits nearly as well, so no estimate
    assert offsets.estimate_offsets(timelines("replica-lag")) == {}


def test_a_replication_offset_is_found_when_the_write_rate_varies() -> None:
    # db-a's real Binlog_bytes_written; db-b's positions made from it with a bursty rate, 2 s ahead
    tls = timelines("replica-lag")
    src = tls["db-a"]
    ma = src.frames["mysqladmin"]
    written = ma[ma["variable"] == "Binlog_bytes_written"].sort_values("ts")
    t = offsets._seconds(written["ts"])  # noqa: SLF001 - the test builds positions on the same clock
    rng = np.random.default_rng(7)
    steps = rng.choice([10_000.0, 400_000.0, 2_000_000.0], size=len(t))
    burst = written.assign(value=np.cumsum(steps))
    src2 = Timeline(frames={**src.frames, "mysqladmin": burst.reset_index(drop=True)}, ncpu=2)
    rows = pd.DataFrame(
        {
            "ts": written["ts"].to_numpy() + pd.Timedelta(seconds=2),
            "read_source_log_pos": np.cumsum(steps) + 12_345,
            "source_log_file": "db-a-bin.000001",
        }
    )
    est = offsets.replication_offset(tls["db-b"], rows, src2)
    assert est is not None and abs(est[0] - 2.0) < 0.1


def test_galera_names_the_node_that_sent_flow_control_and_how_long_the_others_were_paused() -> None:
    found = findings("galera")
    f = found["galera-flow-control"]
    assert (f.host, f.hosts) == (None, ("db-b", "db-a", "db-c"))  # the throttled node first
    # db-b's disk is throttled in a blkio cgroup, which iostat (the whole machine's) cannot show
    assert f.title == (
        "db-b fell behind (receive queue up to 36 write-sets); it sent flow control; "
        "db-a and db-c were paused 97 % of the time"
    )
    assert "db-a 98 % (sent 0), db-b 96 % (sent 40), db-c 97 % (sent 0)" in f.explanation
    assert f.explanation.endswith(
        "db-b's settings differ from the others': innodb_flush_log_at_trx_commit 1 (vs 0)."
    )
    by_label = {e.label: e for e in f.evidence}
    assert by_label["wsrep_flow_control_sent (growth)"].member == "galera/db-b/2026_11_27_19_29_53-mysqladmin"
    assert by_label["db-c paused by flow control"].member.startswith("galera/db-c/")
    assert f.severity is Severity.CRITICAL
    # one machine: the hosts' vmstat differ by sampling moment only; no host is named as stalled, and
    # db-a and db-c share the writes evenly; both write the sbtest tables, and conflict
    assert set(found) == {"galera-flow-control", "galera-write-conflicts"}


def with_iostat(tl: Timeline, w_await: float) -> Timeline:
    """``tl`` with an ``iostat -dx 1`` capture (sysstat 12.6 layout) whose vda writes wait ``w_await`` ms."""
    start = tl.frame("mysqladmin")["ts"].min().tz_convert(None)
    report = {"vda": {"w_s": 120.0, "wkB_s": 2400.0, "w_await": w_await, "aqu_sz": 9.0, "util": 99.0}}
    text = iostat_dx_text([report] * 21, ncpu=2)
    parsed = iostat.parse(text.splitlines(), member="db-b/iostat", clock=ClockHints(start_local=start))
    io = parsed.frames["iostat"].assign(member="db-b/iostat")
    return dataclasses.replace(tl, frames={**tl.frames, "iostat": io})


def test_a_node_whose_disk_stalls_alone_is_named_with_its_w_await() -> None:
    tls = dict(timelines("galera"))
    tls["db-b"] = with_iostat(tls["db-b"], 80.0)
    found = {f.key: f for f in cross_host_findings(tls)}
    flow = found["galera-flow-control"]
    assert flow.title.startswith(
        "db-b's disk stalled (w_await 80 ms on vda); it sent flow control; db-a and db-c"
    )
    assert flow.related == ("host-stall-holds-others",)
    stall = found["host-stall-holds-others"]
    assert stall.hosts == ("db-b", "db-a", "db-c")
    assert stall.title == "db-b's disk stalled (w_await 80 ms on vda) while db-a and db-c wait"
    assert "db-a paused by flow control 98 % of the time" in stall.explanation
    # the same stall on a node that sent no flow control holds nobody back
    tls = dict(timelines("galera"))
    tls["db-a"] = with_iostat(tls["db-a"], 80.0)
    assert "host-stall-holds-others" not in {f.key for f in cross_host_findings(tls)}


def test_load_imbalance_names_the_node_that_takes_most_statements() -> None:
    tls = timelines("galera")
    # db-a and db-c share the writes: no finding among the three; db-a against db-b (only pt-stalk's own
    # statements, about 15/s) is lopsided
    assert load_imbalance(tls) is None
    f = load_imbalance({"db-b": tls["db-b"], "db-a": tls["db-a"]})
    assert f is not None and f.hosts == ("db-a", "db-b")
    assert f.title.startswith("db-a takes 8") and "Questions" in f.explanation


def test_galera_seqno_gives_each_node_an_offset_against_the_first() -> None:
    est = offsets.estimate_offsets(timelines("galera"))
    assert est["db-a"] == (0.0, "reference clock (the case's first host)")
    # one machine, one clock: within the samples' second, plus db-b's apply delay (its queue of ~30)
    assert abs(est["db-c"][0]) <= 1.0 and 0.0 < est["db-b"][0] <= 2.0
    assert est["db-b"][1].startswith("same Galera seqno (wsrep_last_committed) on db-b and db-a")


def test_captures_of_different_minutes_are_not_compared() -> None:
    # db-b lagging at 19:23:35-19:23:54 against a db-a (server_id 1 too) captured at 19:24:30: the link is
    # found, but the source's write rate of the replica's minutes is unknown, so nothing is explained
    tls = {"db-a": timelines("replica-stopped")["db-a"], "db-b": timelines("replica-lag")["db-b"]}
    assert [(link.replica, link.source) for link in topology.replication_links(tls)] == [("db-b", "db-a")]
    assert cross_host_findings(tls) == []


def test_without_master_server_id_the_source_is_found_by_name_or_by_loopback_port() -> None:
    tls = timelines("replica-lag")
    # db-a's -variables: report_host db-a, hostname db-a, port 3411
    assert topology.find_source(tls, "db-b", "DB-A", None, None) == ("db-a", "Master_Host 'DB-A' = db-a")
    assert topology.find_source(tls, "db-b", "127.0.0.1", 3411.0, None) == (
        "db-a",
        "Master_Host 127.0.0.1 and Master_Port 3411 = port of db-a (one machine)",
    )
    assert topology.find_source(tls, "db-b", "127.0.0.1", 3306.0, None) is None
    assert topology.find_source(tls, "db-b", "db-a", 3306.0, None) is None  # the name, another port
    rows = tls["db-b"].frame("replica_status")
    assert rows[["source_host", "source_port", "source_server_id"]].iloc[0].tolist() == [
        "127.0.0.1",
        3411.0,
        1.0,
    ]
