"""``analyzer.engine.run_hosts``: every rule per host, each finding naming its host, then the
cross-host rules for two hosts or more (issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import engine
from analyzer.findings import Finding, Severity
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import read_bundle
from tests.multihost import PTSTALK, collection, hosts_tarball, renamed, with_cpus, write_tar


@pytest.fixture(scope="module")
def timelines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Timeline]:
    path = hosts_tarball(tmp_path_factory.mktemp("hosts") / "two.tgz", ["db-a", "db-b"])
    b = read_bundle(path)
    return {h.name: Timeline.from_sources(h.sources(b), ncpu=h.ncpu, host=h.name) for h in b.hosts}


def test_each_host_gets_the_findings_it_gets_alone(timelines: dict[str, Timeline]) -> None:
    alone = engine.run(Timeline.from_sources(read_bundle(PTSTALK).sources, ncpu=2, host="vm"))
    out = engine.run_hosts(timelines)
    for name in ("db-a", "db-b"):
        mine = [f for f in out.findings if f.host == name]
        assert sorted(f.key for f in mine) == sorted(f.key for f in alone.findings)
        assert all(f.hosts == () for f in mine)
        assert {n.key for n in out.not_evaluated if n.host == name} == {n.key for n in alone.not_evaluated}
    ranks = [f.severity.rank for f in out.findings]
    assert ranks == sorted(ranks)  # most severe first, across hosts
    assert out.findings[0].severity == alone.findings[0].severity


def test_the_cross_host_rules_run_for_two_hosts_and_a_failure_is_recorded(
    timelines: dict[str, Timeline], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    cross = Finding(
        key="flow-control-from-one-node",
        severity=Severity.CRITICAL,
        title="db-b sent flow control",
        explanation="",
        windows=(),
        evidence=(),
        recommendation="",
        hosts=("db-b", "db-a"),
    )

    def found(tls):  # noqa: ANN001, ANN202 - cluster.cross_host_findings's signature
        seen.append(list(tls))
        return [cross]

    monkeypatch.setattr(engine, "cross_host_findings", found)
    out = engine.run_hosts(timelines)
    assert seen == [["db-a", "db-b"]]
    assert cross in out.findings and cross.host is None
    engine.run_hosts({"db-a": timelines["db-a"]})
    assert len(seen) == 1  # one host: never across hosts

    def broken(tls):  # noqa: ANN001, ANN202
        raise ValueError("no wsrep counters")

    monkeypatch.setattr(engine, "cross_host_findings", broken)
    out = engine.run_hosts(timelines)
    assert [(f.key, f.host) for f in out.failed] == [(engine.CROSS_HOST_KEY, None)]
    assert {f.host for f in out.findings} == {"db-a", "db-b"}


def test_each_rule_is_calibrated_to_its_own_host(tmp_path: Path) -> None:
    """The same load on db-a (2 CPUs) and on db-b (64 CPUs, its /proc/stat says): the run queue of 19
    saturates db-a only; what does not depend on the CPUs is found on both."""
    files = {}
    for host in ("db-a", "db-b"):
        for name, data in renamed(collection(), host).items():
            if host == "db-b" and name.endswith("-procstat"):
                data = with_cpus(data, 64)
            files[f"incident/{host}/{name}"] = data
    b = read_bundle(write_tar(tmp_path / "calibrated.tgz", files))
    assert [(h.name, h.ncpu) for h in b.hosts] == [("db-a", 2), ("db-b", 64)]
    out = engine.run_hosts(
        {h.name: Timeline.from_sources(h.sources(b), ncpu=h.ncpu, host=h.name) for h in b.hosts}
    )
    keys = {name: {f.key for f in out.findings if f.host == name} for name in ("db-a", "db-b")}
    assert {"cpu-saturation", "active-sessions-overload"} <= keys["db-a"]
    assert not {"cpu-saturation", "active-sessions-overload"} & keys["db-b"]
    assert "tmp-table-churn" in keys["db-a"] & keys["db-b"]
