"""Several Galera nodes' error logs in one bundle: each read with its node as host (the file name),
its WSREP lines as events. The logs are excerpts of percona-toolkit's pt-galera-log-explainer test
logs (tests/fixtures/galera-logs/README.md)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pandas as pd
import pytest

from parsers import mysqld_errorlog
from parsers.base import ClockHints
from parsers.ingest.bundle import read_bundle

LOGS = Path(__file__).parent.parent / "fixtures" / "galera-logs" / "upgrade"


def parse(name: str):
    return mysqld_errorlog.parse((LOGS / name).open(), member=f"logs/{name}", clock=ClockHints())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    path = tmp_path_factory.mktemp("galera") / "cluster-logs.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for n in (1, 2, 3):
            tar.add(LOGS / f"node{n}.log", arcname=f"cluster-logs/node{n}.log")
    return read_bundle(path)


def test_each_node_its_own_host(bundle):
    assert [(s.member, s.meta["host"]) for s in bundle.sources] == [
        ("cluster-logs/node1.log", "node1"),
        ("cluster-logs/node2.log", "node2"),
        ("cluster-logs/node3.log", "node3"),
    ]
    assert all("Galera node log named after its node" in s.meta["host_origin"] for s in bundle.sources)


def test_state_transitions_sst_and_non_primary():
    ev = parse("node1.log").frames["mysqld_errors"]
    # node1 (PXC 8.0.28) joins: OPEN -> PRIMARY, asks for a state transfer, the SST script fails,
    # the node drops to non-primary and closes
    states = ev[ev["kind"] == "wsrep-state"]["message"].tolist()
    assert "Shifting OPEN -> PRIMARY (TO: 178226774)" in states[1]
    sst = ev[ev["kind"] == "wsrep-sst"]
    assert any(
        "requested state transfer" in m and "Selected 0.0 (node3)(SYNCED) as donor" in m
        for m in sst["message"]
    )
    assert any("Shifting PRIMARY -> JOINER" in m for m in sst["message"])
    non_primary = ev[ev["kind"] == "wsrep-non-primary"]
    # first the view printed over several lines (view_id(NON_PRIM,...) on its second), then gcs's line
    assert str(non_primary["ts"].iloc[0]) == "2023-03-12 19:36:48.590013+00:00"
    assert non_primary["message"].iloc[0] == "Current view of cluster as seen by this node"
    assert int(non_primary["line_end"].iloc[0]) - int(non_primary["line_no"].iloc[0]) == 13
    assert "Received NON-PRIMARY." in non_primary["message"].tolist()
    # the SST script's [ERROR] lines stay errors (the mysqld-errors rule reads them)
    errors = ev[ev["kind"] == "error"]["message"]
    assert errors.str.contains("SST script aborted with error 32").any()


def test_flow_control_and_mariadb_style_wsrep_lines():
    ev = parse("node2.log").frames["mysqld_errors"]  # PXC 5.7: "[Note] WSREP: ..." lines
    fc = ev[ev["kind"] == "wsrep-flow-control"]["message"].tolist()
    assert fc[0] == "WSREP: Flow-control interval: [173, 173]"
    assert ev[ev["kind"] == "wsrep-non-primary"]["message"].str.contains("Received NON-PRIMARY").any()
    synced = ev[ev["message"].str.contains("Shifting JOINED -> SYNCED", regex=False)]
    assert synced["kind"].tolist() == ["wsrep-state"] and str(synced["ts"].iloc[0]).startswith(
        "2023-03-12 07:24:14.789785"
    )
    assert (ev["kind"] == "ready").sum() == 1


def test_a_generic_or_collected_error_log_names_no_host():
    assert mysqld_errorlog.host_of_name("notes/mysqld.err") is None
    assert mysqld_errorlog.host_of_name("pt/2026_04_21_16_51_41-log_error") is None
    assert mysqld_errorlog.host_of_name("db-b.err") == (
        "db-b",
        "file name db-b.err (mysqld's default log name: <host_name>.err)",
    )
    one = mysqld_errorlog.parse(
        [
            (
                "2023-03-12T19:35:05.840743Z 0 [System] [MY-010116] [Server] "
                "/usr/sbin/mysqld starting as process 1"
            )
        ],
        member="error.log",
        clock=ClockHints(),
    )
    assert "host" not in one.meta and pd.notna(one.start)


def test_a_directory_per_node(tmp_path):
    """Generic log names (mysqld.err) in sibling directories: each directory is a node."""
    path = tmp_path / "two-nodes.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(LOGS / "node2.log", arcname="case-123/db-a/mysqld.err")
        tar.add(LOGS / "node3.log", arcname="case-123/db-b/mysqld.err")
        tar.add(LOGS / "node3.log", arcname="case-123/notes.err")  # a <host>.err name: its own host
    hosts = {s.member: s.meta.get("host") for s in read_bundle(path).sources}
    assert hosts == {
        "case-123/db-a/mysqld.err": "db-a",
        "case-123/db-b/mysqld.err": "db-b",
        "case-123/notes.err": "notes",
    }
    one = tmp_path / "one.tar.gz"
    with tarfile.open(one, "w:gz") as tar:
        tar.add(LOGS / "node2.log", arcname="case-123/logs/mysqld.err")
        tar.add(LOGS / "node3.log", arcname="case-123/db-b/mysqld.err")
    assert all("host" not in s.meta for s in read_bundle(one).sources)  # logs/ is no host name
