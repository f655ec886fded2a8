"""Findings name their culprit on real captures of this machine (tests/fixtures/bundles/culprit-*.tar.gz,
made by scripts/make_culprit_bundles.sh against a scratch MariaDB 10.11 with pt-stalk 3.2.1; the
README of that folder says what each holds).

- rowlock: session 5 (app) updated order 42 in an open transaction and went idle; 20 sessions wait
  for that row (``-lock-waits``, ``-transactions``).
- mdl: session 119 (app) read ``orders`` in an open transaction and went idle; ``ALTER TABLE orders``
  (session 120) waits for the metadata lock, and 8 SELECTs queue behind it.
- ftwrl: ``mariadb-dump --lock-all-tables`` holds FLUSH TABLES WITH READ LOCK while its output pipe is
  full (session 220 reads ``items``); 6 INSERTs wait for the backup lock.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from analyzer import engine
from analyzer.findings import Finding, Severity
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import read_bundle

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"


@cache
def _outcome(shape: str) -> engine.Outcome:
    bundle = read_bundle(BUNDLES / f"culprit-{shape}.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    out = engine.run(tl)
    assert out.failed == []
    return out


def _findings(shape: str) -> dict[str, Finding]:
    return {f.key: f for f in _outcome(shape).findings}


def _causes(out: engine.Outcome, key: str) -> list[str]:
    """The keys of the findings a link shows explaining ``key``."""
    return [li.cause[0] for li in out.links if li.effect[0] == key]


def test_a_row_lock_pile_up_names_the_idle_transaction_that_blocks_it() -> None:
    found = _findings("rowlock")
    waits, trx = found["lock-waits"], found["long-transaction"]
    for f in (waits, trx):
        c = f.culprit
        assert (c.kind, c.id, c.user, c.host, c.statement, c.blocks) == (
            "session",
            "5",
            "app",
            "localhost",
            "idle in transaction",
            20,
        )
        assert c.since.isoformat() == "2026-11-27T15:52:47+00:00"  # trx_started of transaction 29
        members = {e.member.rsplit("-", 1)[-1] for e in c.evidence if e.member}
        assert members >= {"waits", "processlist", "transactions"}  # -lock-waits, the session, its trx
    assert "behind session 5 app@localhost" in waits.title
    assert "KILL 5;" in waits.recommendation and "KILL 5;" in trx.recommendation
    # 15 s old, far under the "few minutes" of long-transaction: it fires because it blocks 20 sessions
    assert trx.title.startswith("Session 5 (app@localhost) idle in transaction for 15 s")
    assert "1 row(s) locked, 1 modified" in trx.explanation
    assert trx.severity is Severity.CRITICAL
    # cause before consequence: the transaction explains the waits, which explain the crowd
    out = _outcome("rowlock")
    assert _causes(out, "lock-waits") == ["long-transaction"]
    assert _causes(out, "active-sessions-overload") == ["lock-waits"]
    assert out.verdict.root_cause.key == "long-transaction"
    # the chain ends at the worst symptom: the 20 sessions waiting for session 5's row (the waits
    # finding names the same holder); the crowd is explained too
    assert [f.key for f in out.verdict.chain] == ["long-transaction", "lock-waits", "sessions-waiting"]
    assert [f.key for f in out.verdict.explains] == [
        "lock-waits",
        "sessions-waiting",
        "active-sessions-overload",
    ]


def test_a_ddl_waiting_for_a_metadata_lock_names_the_open_transaction_ahead_of_it() -> None:
    found = _findings("mdl")
    waits = found["lock-waits"]
    c = waits.culprit
    assert (c.kind, c.id, c.user, c.statement, c.blocks) == (
        "session",
        "119",
        "app",
        "idle in transaction",
        9,
    )
    labels = {e.label: e.value for e in c.evidence}
    assert labels["DDL waiting: session 120"] == "alter table orders add column note varchar(?)"
    assert "metadata lock" in waits.explanation and "KILL 119;" in waits.recommendation
    assert found["long-transaction"].culprit.id == "119"
    assert _causes(_outcome("mdl"), "lock-waits") == ["long-transaction"]


def test_writers_waiting_for_the_backup_lock_name_the_dump_that_holds_it() -> None:
    found = _findings("ftwrl")
    waits = found["lock-waits"]
    c = waits.culprit
    assert (c.kind, c.id, c.user, c.blocks) == ("session", "220", "app", 6)
    assert c.statement.startswith("select /*!? sql_no_cache */")  # how a dump reads a table
    labels = {e.label: e.value for e in c.evidence}
    assert str(labels["backup client in ps"]).startswith("mariadb-dump PID ")
    assert "global read / backup lock" in waits.explanation and "KILL 220;" in waits.recommendation
    assert "long-transaction" not in found  # the dump's snapshot is not the lock it holds


@pytest.mark.parametrize("shape", ["rowlock", "mdl", "ftwrl"])
def test_every_culprit_evidence_points_at_raw_lines(shape: str) -> None:
    for f in _findings(shape).values():
        if f.culprit is not None:
            assert f.culprit.evidence and all(e.member and e.lines for e in f.culprit.evidence), f.key


def test_cpu_taken_by_another_process_while_mysql_idles_names_it_not_cpu_bound() -> None:
    """stress-ng --cpu 2 ran while MariaDB idled (culprit-cpuhog): top names its workers (cut to
    ``stress-ng+``, completed from ps), MySQL's own share is near zero, so "the server is CPU-bound"
    must not stand."""
    sat = _findings("cpuhog")["cpu-saturation"]
    assert "not MySQL" in sat.title and "CPU-bound in this window" not in sat.explanation
    c = sat.culprit
    assert (c.kind, c.statement) == ("process", "stress-ng-cpu") and int(c.id) > 1
    assert sat.title.startswith("CPU saturated by stress-ng-cpu (2 processes") and f"PID {c.id}" in sat.title
    values = {e.label: e.value for e in sat.evidence}
    assert values["mysqld/mariadbd %CPU (mean per top iteration)"] < 5
    assert values["other processes %CPU (mean per top iteration)"] > 100  # of 200 on 2 CPUs
    assert all(e.member.endswith("-top") and e.lines for e in c.evidence)


def test_a_disk_taken_by_another_process_while_mysql_idles_names_the_process() -> None:
    """fio with an fsync per 4 KiB write (culprit-diskhog) while MariaDB idled: the disk is busy,
    fio sits in state D in top, MySQL has no active session: io-consumer names fio, and no finding
    calls the server I/O-bound or CPU-bound."""
    found = _findings("diskhog")
    io = found["io-consumer"]
    c = io.culprit
    assert (c.kind, c.statement) == ("process", "fio") and int(c.id) > 1
    assert io.title.startswith(f"Disk vda busy with fio (PID {c.id}), not MySQL")
    assert "MySQL was quiet (0 active sessions" in io.explanation
    assert all(e.member.endswith("-top") and e.lines for e in c.evidence)
    assert "cpu-saturation" not in found and "disk-saturation" not in found
    values = {e.label: e.value for e in io.evidence}
    assert values["writes per second (median)"] > 1000


def test_dd_readers_saturating_the_disk_rank_before_the_saturation() -> None:
    """overlap-io: 48 dd readers saturate vda; io-consumer names dd and explains disk-saturation."""
    bundle = read_bundle(BUNDLES / "overlap-io.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    out = engine.run(tl)
    found = {f.key: f for f in out.findings}
    assert found["io-consumer"].culprit.statement == "dd"
    # the collector's per-thread ps (state and wchan) names where they wait
    assert "(wait channel iomap_dio_rw)" in found["io-consumer"].explanation
    assert any(e.series == "ps_threads.state" and e.lines for e in found["io-consumer"].culprit.evidence)
    assert [(li.cause[0], li.join) for li in out.links if li.effect[0] == "disk-saturation"] == [
        ("io-consumer", "device")
    ]
    assert out.verdict.root_cause.key == "io-consumer"


def test_mysqld_taking_the_cpus_stays_cpu_bound() -> None:
    """The example bundle (64 sessions of one GROUP BY on 2 CPUs): mariadbd takes the CPUs."""
    bundle = read_bundle(BUNDLES / "ptstalk-mariadb-tmptables.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    [sat] = [f for f in engine.run(tl).findings if f.key == "cpu-saturation"]
    assert "not MySQL" not in sat.title and sat.culprit is None


def test_commits_queued_on_the_fsync_blame_the_flush_setting() -> None:
    """overlap-commit (sysbench oltp_write_only with direct readers slowing each fsync): MariaDB's
    default innodb_flush_log_at_trx_commit = 1 is the setting behind the queue."""
    bundle = read_bundle(BUNDLES / "overlap-commit.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    [commit] = [f for f in engine.run(tl).findings if f.key == "commit-serialization"]
    c = commit.culprit
    assert (c.kind, c.id, c.statement) == ("setting", "innodb_flush_log_at_trx_commit", "1")
    assert commit.explanation.startswith(
        "Setting: innodb_flush_log_at_trx_commit = 1: the fsync of each commit (sync_binlog = "
    )
    assert commit.title.endswith("(innodb_flush_log_at_trx_commit = 1)")
    assert c.evidence[0].series == "variables"


def test_performance_schema_names_the_metadata_lock_holder(tmp_path: Path) -> None:
    """-ps-locks-transactions (tests/fixtures/ps-locks): session 5 holds SHARED_READ on shop.orders
    GRANTED while the ALTER of session 6 waits with EXCLUSIVE PENDING."""
    from analyzer.evidence import blockers
    from tests.bundles import make_tar

    folder = BUNDLES.parent / "ps-locks"
    members = {f"c/{p.name}": p.read_bytes() for p in folder.iterdir() if p.name != "README.md"}
    bundle = read_bundle(make_tar(tmp_path / "pslocks.tar.gz", members))
    assert {s.format for s in bundle.sources} == {"ps_locks", "processlist"}
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    locks = tl.frame("pfs_metadata_locks")
    assert locks["ts"].nunique() == 3 and set(locks["lock_status"]) == {"GRANTED", "PENDING"}
    b = blockers.metadata_lock_blocker(tl)
    assert (b.thread, b.user, b.statement, b.blocks) == (5, "app", "idle in transaction", 1)
    assert b.waiter == "alter table orders add column note varchar(?)"
    [pfs] = [e for e in b.evidence if e.series == "pfs_metadata_locks.lock_status"]
    assert pfs.label == "session 5 holds the lock (performance_schema.metadata_locks)"
    assert pfs.value == "SHARED_READ on TABLE shop.orders" and pfs.member.endswith("-ps-locks-transactions")


def test_full_scans_name_the_statement_the_sessions_ran() -> None:
    """culprit-fullscan: 4 sessions repeat a LIKE '%y%' count over shop.items (200,000 rows, no index):
    the counters show the scans, the processlist the statement."""
    scans = _findings("fullscan")["full-scans"]
    c = scans.culprit
    assert (c.kind, c.id) == ("statement", "select count(*) from items where pad like ?")
    assert scans.title.endswith("by select count(*) from items where pad like ? (100 % of active sessions)")
    assert scans.explanation.startswith("The statement the active sessions ran most in the window is select")
    [share] = c.evidence
    assert share.value == 100.0 and share.member.endswith("-processlist") and share.lines


def test_no_io_consumer_while_mysql_works() -> None:
    """overlap-commit: vda is busy and 16 dd readers sit in state D (ps-threads, iomap_dio_rw), but
    32 MariaDB sessions commit at the same time: MySQL is not quiet, so dd is not blamed for the disk
    (commit-serialization tells that story)."""
    bundle = read_bundle(BUNDLES / "overlap-commit.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    out = engine.run(tl, only=("io-consumer",))
    assert not out.failed and out.findings == []


def _without_d_state(keep: tuple[str, ...]) -> Timeline:
    """culprit-diskhog as a capture of asynchronous direct I/O would show it: no process ever in state D
    (top and ps say S instead), and of the other processes only those named in ``keep``."""
    bundle = read_bundle(BUNDLES / "culprit-diskhog.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    top = tl.frames["top_procs"]
    top = top[top["command"].astype("string").isin(("mariadbd",) + keep).fillna(False)]
    tl.frames["top_procs"] = top.assign(state=top["state"].astype("string").replace("D", "S"))
    ps = tl.frames["ps_threads"]
    tl.frames["ps_threads"] = ps.assign(state=ps["state"].astype("string").replace("D", "S"))
    return tl


def test_a_cpu_busy_process_without_d_state_or_its_own_io_is_never_the_disks_consumer() -> None:
    """Asynchronous direct I/O (fio --ioengine=libaio --direct=1) never sleeps in state D: with fio
    busy on CPU, no thread in state D and no per-process I/O (pidstat -d, /proc/PID/io), the busy
    device while MySQL idles is reported with its consumer not shown. fio, the busiest process by
    CPU, is not named: CPU says nothing of I/O."""
    io = engine.run(_without_d_state(("fio",)), only=("io-consumer",)).findings[0]
    assert io.culprit is None
    assert io.title == "Disk vda busy, not MySQL: 31,870 I/O per second; the consumer is not shown"
    assert "fio" not in io.title + io.explanation
    assert "pidstat -d 1 5" in io.recommendation and "/proc/<PID>/io" in io.recommendation
    assert io.subjects == (("device", "vda"),)


def test_a_busy_disk_with_no_other_process_busy_names_no_one() -> None:
    assert engine.run(_without_d_state(()), only=("io-consumer",)).findings == []
