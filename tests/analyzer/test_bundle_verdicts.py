"""The verdict of every fixture bundle (tests/fixtures/bundles/*.tar.gz), and of the real pt-stalk
collections in ../shared/samples when that folder exists: its root cause (or healthy), and every
finding of the bundle kept (the verdict places each one, none is lost).

Each bundle is read and its hosts analysed as the ingest does (one timeline per host, then the
cross-host rules, then the links and the verdict: ``engine.run_hosts``).
"""

from __future__ import annotations

import tarfile
from functools import cache
from pathlib import Path

import pytest

from analyzer import engine
from analyzer.reasoning.verdict import HEALTHY_HEADLINE
from analyzer.timeline.timeline import Timeline, reduce_piece
from parsers.ingest.bundle import read_bundle

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"

#: bundle -> the root cause's key (None: healthy). Why, for the ones a reader may question:
#: cluster-healthy: both nodes' CPUs are saturated by the benchmark that made the cluster busy;
#: cluster-lag-delay: the replica is behind on purpose (MASTER_DELAY, info), the shared CPUs are not;
#: culprit-fullscan: pytest (another process) took the CPUs while the scans ran, and top says so;
#: culprit-tablecache: the table cache full of 64 tables is the cause; the saturated CPU, a measure
#: with no culprit of its own, ranks after it; ptstalk-mariadb-fullfs-crash: the crash (signal 11)
#: is the critical event; the full file system is not shown to cause it (no "No space left" line);
#: slowlog-fullscan: the slow log's one statement (99 % of its time) explains the crowd and the scans.
ROOTS: dict[str, str | None] = {
    "cluster-galera": "galera-flow-control",
    "cluster-galera-desync": "galera-node-behind",
    "cluster-healthy": "cpu-saturation",
    "cluster-lag-bigtrx": "replica-lag-source",
    "cluster-lag-ddl": "replica-lag-source",
    "cluster-lag-delay": "cpu-saturation",
    "cluster-lag-lock": "long-transaction",
    "cluster-lag-mdl": "replica-lag-source",
    "cluster-lag-nokey": "replica-lag-source",
    "cluster-replica-lag": "replica-lag-source",
    "cluster-replica-stopped": "replica-stopped",
    "culprit-cpuhog": "cpu-saturation",
    "culprit-diskhog": "io-consumer",
    "culprit-ftwrl": "lock-waits",
    "culprit-fullscan": "cpu-saturation",
    "culprit-mdl": "long-transaction",
    "culprit-rowlock": "long-transaction",
    "culprit-tablecache": "table-cache-full",
    "overlap-commit": "commit-serialization",
    "overlap-cpu": "cpu-saturation",
    "overlap-io": "io-consumer",
    "overlap-tmp": "tmp-table-churn",
    "ptstalk-mariadb-fullfs-crash": "mysqld-errors",
    "ptstalk-mariadb-tmptables": "tmp-table-churn",
    "slowlog-fullscan": "slow-log-top-statement",
    # The staged wait incidents (waits-*): their root cause;
    # tests/analyzer/test_staged_verdicts.py pins the verdict a senior engineer reaches
    # (tests/analyzer/staged.py).
    "waits-conn-leak": "connection-saturation",
    "waits-ddl-long-read": "lock-waits",
    "waits-deadlock-storm": "innodb-deadlock",
    "waits-galera-ftwrl": "galera-node-behind",
    "waits-galera-multiwriter": "galera-write-conflicts",
    # session 8 holds the table by elimination (the only client session not waiting, idle since before
    # the first wait: analyzer/waits/elimination.py), read by the one metadata-lock reader
    # (analyzer/waits/holders/locks.py::metadata_holder) that lock-waits and sessions-waiting share
    "waits-lock-tables": "lock-waits",
    "waits-max-user-conn": "user-connection-limit",
    "waits-open-files": "table-cache-full",
    "waits-purge-readview": "purge-lag",
    "waits-semisync-ack": "semisync-ack-wait",
    # the pool's thread group held by session 8's statement (analyzer/waits/holders/pool.py); the busy CPUs a
    # symptom
    "waits-thread-pool": "thread-pool-wait",
    "waits-tmpdir-full": "filesystem-full",
    "waits-user-lock": "sessions-waiting",
}

#: The findings (key, host) of every bundle, as they were before causes were joined by links: the
#: links and the verdict add no finding and lose none. ``sessions-waiting`` (analyzer/rules/waits.py)
#: is informational: it adds a finding where sessions queue for one resource, never a root cause.
#: ``galera-write-conflicts`` on cluster-galera and cluster-galera-desync: sysbench writes the same
#: tables on db-a and db-c, and their wsrep_local_cert_failures / bf_aborts grow (0.4-19 and 1.4-29 a
#: second): a real multi-writer conflict, found beside the flow control and the desync it does not cause.
FINDINGS: dict[str, set[tuple[str, str | None]]] = {
    "cluster-galera": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("cpu-saturation", "db-c"),
                       ("galera-flow-control", None), ("galera-write-conflicts", None), ("sessions-waiting", "db-a"),
                       ("sessions-waiting", "db-b"), ("sessions-waiting", "db-c")},
    "cluster-galera-desync": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("cpu-saturation", "db-c"),
                              ("galera-node-behind", None), ("galera-write-conflicts", None), ("innodb-deadlock", "db-a"),
                              ("innodb-deadlock", "db-c")},
    "cluster-healthy": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b")},
    "cluster-lag-bigtrx": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("replica-lag", "db-b"),
                           ("replica-lag-source", None)},
    "cluster-lag-ddl": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("full-scans", "db-b"),
                        ("log-waits", "db-b"), ("replica-lag", "db-b"), ("replica-lag-source", None)},
    "cluster-lag-delay": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("replica-lag", "db-b"),
                          ("replica-lag-source", None)},
    "cluster-lag-lock": {("long-transaction", "db-b"), ("replica-lag", "db-b"), ("replica-lag-source", None)},
    "cluster-lag-mdl": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("replica-lag", "db-b"),
                        ("replica-lag-source", None)},
    "cluster-lag-nokey": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("full-scans", "db-b"),
                          ("replica-lag", "db-b"), ("replica-lag-source", None)},
    "cluster-replica-lag": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("replica-lag", "db-b"),
                            ("replica-lag-source", None)},
    "cluster-replica-stopped": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("replica-lag", "db-b"),
                                ("replica-stopped", None)},
    "culprit-cpuhog": {("cpu-saturation", "vm")},
    "culprit-diskhog": {("io-consumer", "vm")},
    "culprit-ftwrl": {("lock-waits", "vm"), ("sessions-waiting", "vm")},
    "culprit-fullscan": {("cpu-saturation", "vm"), ("full-scans", "vm")},
    "culprit-mdl": {("active-sessions-overload", "vm"), ("cpu-saturation", "vm"), ("lock-waits", "vm"),
                    ("long-transaction", "vm"), ("sessions-waiting", "vm")},
    "culprit-rowlock": {("active-sessions-overload", "vm"), ("lock-waits", "vm"), ("long-transaction", "vm"),
                        ("sessions-waiting", "vm")},
    "culprit-tablecache": {("cpu-saturation", "vm"), ("table-cache-full", "vm")},
    "overlap-commit": {("active-sessions-overload", "vm"), ("commit-serialization", "vm"),
                       ("load-from-uninterruptible-threads", "vm")},
    "overlap-cpu": {("cpu-saturation", "vm")},
    "overlap-io": {("cpu-saturation", "vm"), ("disk-saturation", "vm"), ("io-consumer", "vm")},
    "overlap-tmp": {("active-sessions-overload", "vm"), ("cpu-saturation", "vm"), ("same-query-pileup", "vm"),
                    ("tmp-table-churn", "vm")},
    "ptstalk-mariadb-fullfs-crash": {("client-connection-storm", "vm"), ("filesystem-full", "vm"),
                                     ("kernel-settings", "vm"), ("mysqld-errors", "vm")},
    "ptstalk-mariadb-tmptables": {("active-sessions-overload", "vm"), ("cpu-saturation", "vm"),
                                  ("same-query-pileup", "vm"), ("tcp-retransmits", "vm"), ("tmp-table-churn", "vm")},
    "slowlog-fullscan": {("active-sessions-overload", "vm"), ("cpu-saturation", "vm"), ("full-scans", "vm"),
                         ("slow-log-top-statement", "vm")},
    # waits-*: their findings (tests/analyzer/test_staged_verdicts.py pins the holder and the fix)
    "waits-conn-leak": {("aborted-connections", "db-a"), ("connection-saturation", "db-a"), ("cpu-saturation", "db-a")},
    "waits-ddl-long-read": {("active-sessions-overload", "db-a"), ("cpu-saturation", "db-a"), ("full-scans", "db-a"),
                            ("lock-waits", "db-a"), ("sessions-waiting", "db-a")},
    "waits-deadlock-storm": {("active-sessions-overload", "db-a"), ("cpu-saturation", "db-a"),
                             ("innodb-deadlock", "db-a"), ("lock-waits", "db-a"), ("sessions-waiting", "db-a")},
    "waits-galera-ftwrl": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("cpu-saturation", "db-c"),
                           ("galera-node-behind", None), ("load-imbalance", None), ("lock-waits", "db-b"),
                           ("sessions-waiting", "db-b")},
    "waits-galera-multiwriter": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"),
                                 ("cpu-saturation", "db-c"), ("galera-write-conflicts", None),
                                 ("innodb-deadlock", "db-a"), ("innodb-deadlock", "db-c"),
                                 ("lock-waits", "db-a"), ("sessions-waiting", "db-a")},
    "waits-lock-tables": {("active-sessions-overload", "db-a"), ("cpu-saturation", "db-a"), ("lock-waits", "db-a"),
                          ("sessions-waiting", "db-a")},
    "waits-max-user-conn": {("aborted-connections", "db-a"), ("cpu-saturation", "db-a"),
                            ("user-connection-limit", "db-a")},
    "waits-open-files": {("cpu-saturation", "db-a"), ("table-cache-full", "db-a")},
    "waits-purge-readview": {("cpu-saturation", "db-a"), ("innodb-deadlock", "db-a"), ("purge-lag", "db-a")},
    "waits-semisync-ack": {("cpu-saturation", "db-a"), ("cpu-saturation", "db-b"), ("replica-lag", "db-b"),
                           ("replica-stopped", None), ("semisync-ack-wait", None),
                           ("sessions-waiting", "db-a")},
    "waits-thread-pool": {("cpu-saturation", "db-a"), ("thread-pool-wait", "db-a")},
    "waits-tmpdir-full": {("cpu-saturation", "db-a"), ("filesystem-full", "db-a")},
    "waits-user-lock": {("cpu-saturation", "db-a"), ("sessions-waiting", "db-a")},
}  # fmt: skip

#: The real collections of ../shared/samples, read in place: directory -> root key (None: healthy).
SAMPLE_ROOTS: dict[str, str | None] = {
    "My-gather/pt-stalk/example1": None,
    "My-gather/pt-stalk/example2": "innodb-pending-io",
    "percona-toolkit/pt-secure-collect": None,
}


def _analyse(path: Path) -> engine.Outcome:
    """The bundle at ``path`` through the rules as the ingest runs them (a timeline per host, each
    piece reduced as the worker reduces it: ``reduce_piece``, the idle sessions counted by account)."""
    bundle = read_bundle(path, reduce=reduce_piece)
    if not bundle.hosts:
        return engine.run_hosts(
            {"": Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu, host=bundle.host)}
        )
    return engine.run_hosts(
        {
            h.name: Timeline.from_sources(
                h.sources(bundle),
                ncpu=h.ncpu,
                host=h.name if bundle.host is not None else None,
                utc_offset_s=h.utc_offset_s,
            )
            for h in bundle.hosts
        }
    )


@cache
def _bundle(name: str) -> engine.Outcome:
    return _analyse(BUNDLES / f"{name}.tar.gz")


def test_every_fixture_bundle_has_its_root_pinned() -> None:
    assert {p.name.removesuffix(".tar.gz") for p in BUNDLES.glob("*.tar.gz")} == set(ROOTS)


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_the_verdict_of_each_bundle_names_its_root_cause(name: str) -> None:
    verdict = _bundle(name).verdict
    root = verdict.root_cause.key if verdict.root_cause else None
    assert root == ROOTS[name], verdict.headline
    assert verdict.state == ("healthy" if root is None else "problem")


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_no_finding_is_lost_and_the_verdict_places_each_once(name: str) -> None:
    out = _bundle(name)
    assert {(f.key, f.host) for f in out.findings} == FINDINGS[name]
    v = out.verdict
    placed = ([v.root_cause] if v.root_cause else []) + list(v.explains) + list(v.also_found)
    assert sorted((f.key, f.host) for f in placed) == sorted((f.key, f.host) for f in out.findings)
    # every explained finding is the effect of a link from the root cause's tree
    tree = {(f.key, f.host) for f in [v.root_cause, *v.explains] if f}
    effects = {li.effect for li in out.links if li.cause in tree}
    assert {(f.key, f.host) for f in v.explains} <= effects
    assert not any(
        li.cause in tree and li.effect == (f.key, f.host) for f in v.also_found for li in out.links
    )


def test_the_chain_of_the_example_runs_from_the_temporary_tables_through_the_crowd_to_the_cpus() -> None:
    v = _bundle("ptstalk-mariadb-tmptables").verdict
    assert [f.key for f in v.chain] == [
        "tmp-table-churn",
        "same-query-pileup",
        "active-sessions-overload",
        "cpu-saturation",
    ]
    assert {f.key for f in v.explains} == {
        "same-query-pileup",
        "active-sessions-overload",
        "cpu-saturation",
        "tcp-retransmits",
    }
    assert v.fix == v.root_cause.recommendation and "tmpdir" in v.fix


def test_a_symptom_with_no_cause_shown_says_so_in_its_fix() -> None:
    v = _bundle("overlap-cpu").verdict
    assert v.root_cause.key == "cpu-saturation" and v.root_cause.culprit is None and not v.explains
    assert v.fix.startswith("The capture shows no cause for this finding")


def _collection(tmp_path: Path, rel: str) -> Path:
    """The sample directory ``rel`` as a tarball (the parsers read archives; the sample stays in place)."""
    path = tmp_path / (Path(rel).name + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        tar.add(SAMPLES / rel, arcname=Path(rel).name)
    return path


@pytest.mark.parametrize("rel", sorted(SAMPLE_ROOTS))
def test_the_verdict_of_each_real_sample_collection(rel: str, tmp_path: Path) -> None:
    if not (SAMPLES / rel).is_dir():
        pytest.skip(f"{SAMPLES / rel} is absent")
    v = _analyse(_collection(tmp_path, rel)).verdict
    assert (v.root_cause.key if v.root_cause else None) == SAMPLE_ROOTS[rel], v.headline
    if SAMPLE_ROOTS[rel] is None:
        assert (v.state, v.headline) == ("healthy", HEALTHY_HEADLINE)
