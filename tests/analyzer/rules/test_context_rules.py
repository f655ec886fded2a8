"""The InnoDB, kernel-counter, replication and status-counter rules on captures made here
(tests/fixtures/context: provoked on the local MariaDB and kernel, or edited to a loaded shape as
its README says), and on the real samples where they show the load. Each rule fires on its capture
and stays silent on the idle one; without its input it is not evaluated."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import engine
from analyzer.findings import Severity
from tests.analyzer.context_captures import SAMPLES, read

VARIABLES = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "variables"
    / "pt-stalk-3.2.1_mariadb-10.11_variables.txt"
)

IDLE = {
    "innodbstatus1": "mariadb-10.11_innodbstatus_idle.txt",
    "diskstats": "linux_diskstats.txt",
    "netstat_s": "linux_netstat_s_idle.txt",
    "procvmstat": "linux_procvmstat.txt",
    "slave-status": "mariadb-10.11_slave-status_not-replica.txt",
    "mysqladmin": "mariadb-10.11_mysqladmin_idle.txt",
    "variables": VARIABLES,
}
LONG_TRX = {
    "innodbstatus1": "mariadb-10.11_innodbstatus1_long-trx.txt",
    "innodbstatus2": "mariadb-10.11_innodbstatus2_long-trx.txt",
    "transactions": "mariadb-10.11_transactions_long-trx.txt",
    "lock-waits": "mariadb-10.11_lock-waits_long-trx.txt",
}
EDITED_INNODB = {
    "innodbstatus1": "mariadb-10.11_innodbstatus1_edited-loaded.txt",
    "innodbstatus2": "mariadb-10.11_innodbstatus2_edited-loaded.txt",
    "variables": VARIABLES,
}
NEW_RULES = (
    "innodb-semaphore-waits", "purge-lag", "long-transaction", "innodb-deadlock", "checkpoint-age-high",
    "innodb-pending-io", "listen-queue-overflow", "tcp-retransmits", "direct-reclaim-stalls", "replica-lag",
    "buffer-pool-misses", "log-waits", "binlog-cache-spills", "thread-cache-misses", "connection-saturation",
    "aborted-connections", "full-scans", "table-cache-full",
)  # fmt: skip

FIRING = [
    # key, members, severity, a title fragment worked out from the capture
    ("long-transaction", LONG_TRX, Severity.WARNING, "Transaction open for"),
    ("innodb-deadlock", {"innodbstatus1": "mariadb-10.11_innodbstatus1_deadlock.txt",
                         "innodbstatus2": "mariadb-10.11_innodbstatus2_deadlock.txt"}, Severity.WARNING, "during the capture"),
    ("listen-queue-overflow", {"netstat_s": "linux_netstat_s_listen-overflow.txt"}, Severity.WARNING, ("900 "
                                                                                                       "times")),
    ("replica-lag", {"slave-status": "mariadb-10.11_slave-status_replica-stopped.txt"}, Severity.CRITICAL, ("I/O thread stopped on error 1236: Got fatal error "
                                                                                                            "1236")),
    ("replica-lag", {"slave-status": "mariadb-10.11_slave-status_edited-lagging.txt"}, Severity.WARNING, "140 s behind"),
    ("aborted-connections", {"mysqladmin": "mariadb-10.11_mysqladmin_aborted-fullscan.txt"}, Severity.WARNING, ("Aborted "
                                                                                                                "connections")),
    ("full-scans", {"mysqladmin": "mariadb-10.11_mysqladmin_aborted-fullscan.txt"}, Severity.WARNING, ("100 "
                                                                                                       "% "
                                                                                                       "of "
                                                                                                       "row "
                                                                                                       "reads are table scans")),
    ("innodb-semaphore-waits", {"innodbstatus1": "mariadb-10.11_innodbstatus_edited-semaphores.txt"}, Severity.WARNING, ("4 threads waiting, up to 244 s, mostly on "
                                                                                                                         "adaptive hash index")),
    ("purge-lag", EDITED_INNODB, Severity.WARNING, "history list length 2,100,000"),
    ("checkpoint-age-high", EDITED_INNODB, Severity.CRITICAL, "Redo log 90 % full"),
    ("innodb-pending-io", EDITED_INNODB, Severity.WARNING, "17 operations at most"),
    ("direct-reclaim-stalls", {"procvmstat": "linux_procvmstat_edited-reclaim.txt"}, Severity.WARNING, "280 allocation stalls"),
    ("tcp-retransmits", {"netstat_s": "linux_netstat_s_edited-retransmits.txt"}, Severity.WARNING, ("4.8 % "
                                                                                                    "of "
                                                                                                    "segments sent")),
    ("buffer-pool-misses", {"mysqladmin": "mariadb-10.11_mysqladmin_edited-counters.txt"}, Severity.WARNING, ("4.0 % of page reads from "
                                                                                                              "disk")),
    ("log-waits", {"mysqladmin": "mariadb-10.11_mysqladmin_edited-counters.txt"}, Severity.WARNING, ("log "
                                                                                                     "buffer filled 63 times")),
    ("binlog-cache-spills", {"mysqladmin": "mariadb-10.11_mysqladmin_edited-counters.txt"}, Severity.WARNING, ("40 % of "
                                                                                                               "transactions")),
    ("thread-cache-misses", {"mysqladmin": "mariadb-10.11_mysqladmin_edited-counters.txt"}, Severity.WARNING, ("60.0 threads created per "
                                                                                                               "second")),
    ("connection-saturation", {"mysqladmin": "mariadb-10.11_mysqladmin_edited-counters.txt", "variables": VARIABLES}, Severity.WARNING, "140 of max_connections 151 (93 %)"),
]  # fmt: skip


@pytest.mark.parametrize(
    "key,members,severity,title", FIRING, ids=[f"{row[0]}-{i}" for i, row in enumerate(FIRING)]
)
def test_the_rule_fires_on_its_capture(
    tmp_path: Path, key: str, members: dict, severity: Severity, title: str
) -> None:
    _, tl = read(tmp_path, members)
    out = engine.run(tl, only=(key,))
    assert not out.failed and not out.not_evaluated
    [finding] = [f for f in out.findings if f.key == key]
    assert finding.severity == severity
    assert title in finding.title
    assert finding.windows and finding.evidence and finding.recommendation
    assert all(e.member for e in finding.evidence if e.lines is not None)


def test_every_new_rule_is_silent_on_the_idle_capture(tmp_path: Path) -> None:
    bundle, tl = read(tmp_path, IDLE)
    assert not bundle.not_used
    out = engine.run(tl, only=NEW_RULES)
    assert not out.failed
    assert [f.key for f in out.findings] == []
    # every rule ran except replica-lag: the idle server is not a replica (no row to judge)
    assert [n.key for n in out.not_evaluated] == ["replica-lag"]


def test_a_rule_without_its_input_is_not_evaluated(tmp_path: Path) -> None:
    _, tl = read(tmp_path, {"netstat_s": "linux_netstat_s_idle.txt"})
    out = engine.run(tl, only=("purge-lag", "full-scans", "long-transaction", "direct-reclaim-stalls"))
    assert {n.key: n.reason for n in out.not_evaluated} == {
        "purge-lag": "needs innodb_status",
        "full-scans": "needs mysqladmin",
        "long-transaction": "needs innodb_status or innodb_trx",
        "direct-reclaim-stalls": "needs procvmstat",
    }


def test_counter_rules_show_their_formula_and_numbers(tmp_path: Path) -> None:
    _, tl = read(tmp_path, {"mysqladmin": "mariadb-10.11_mysqladmin_edited-counters.txt"})
    [f] = engine.run(tl, only=("buffer-pool-misses",)).findings
    # the edit adds 2,000 reads and 50,000 requests per border, three borders per 1 s table
    assert (
        "Formula: Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests = 6,000/s / 150,000/s = 4.00 %"
        in f.explanation
    )
    values = {e.label: e.value for e in f.evidence}
    assert values["reads / read_requests"] == 4.0


def test_the_long_transaction_names_its_thread_and_statement(tmp_path: Path) -> None:
    _, tl = read(tmp_path, LONG_TRX)
    [f] = engine.run(tl, only=("long-transaction",)).findings
    seconds = next(e.value for e in f.evidence if e.label == "seconds active (longest)")
    assert 180 <= seconds <= 210
    assert "SELECT SLEEP(" in f.explanation


def test_the_deadlock_evidence_has_both_statements(tmp_path: Path) -> None:
    _, tl = read(
        tmp_path,
        {
            "innodbstatus1": "mariadb-10.11_innodbstatus1_deadlock.txt",
            "innodbstatus2": "mariadb-10.11_innodbstatus2_deadlock.txt",
        },
    )
    [f] = engine.run(tl, only=("innodb-deadlock",)).findings
    statements = [e.value for e in f.evidence if e.label.endswith("statement")]
    assert statements == [
        "UPDATE test.casebook_ctx_rows SET v = v + 1 WHERE id = 1",
        "UPDATE test.casebook_ctx_rows SET v = v + 1 WHERE id = 2",
    ]


def test_an_old_deadlock_alone_is_only_information(tmp_path: Path) -> None:
    _, tl = read(tmp_path, {"innodbstatus1": "mariadb-10.11_innodbstatus2_deadlock.txt"})
    [f] = engine.run(tl, only=("innodb-deadlock",)).findings
    assert f.severity == Severity.INFO and "just before the capture" in f.title


@pytest.mark.samples
def test_disk_saturation_from_diskstats_alone(tmp_path: Path) -> None:
    path = SAMPLES / "percona-toolkit/pt-diskstats/diskstats-001.txt"
    if not path.exists():
        pytest.skip("../shared/samples is absent")
    bundle, tl = read(tmp_path, {"diskstats": path})
    assert "iostat" not in {s.format for s in bundle.sources}
    [f] = engine.run(tl, only=("disk-saturation",)).findings
    assert f.title.startswith("Disk cciss/c0d1 saturated")


@pytest.mark.samples
def test_real_percona_8_0_load_gives_pending_io_and_no_semaphore_finding(tmp_path: Path) -> None:
    base = SAMPLES / "My-gather/pt-stalk/example2"
    if not base.exists():
        pytest.skip("../shared/samples is absent")
    members = {
        s: base / f"2026_04_21_16_51_41-{s}" for s in ("innodbstatus1", "innodbstatus2", "transactions")
    }
    _, tl = read(tmp_path, members)
    keys = [f.key for f in engine.run(tl, only=NEW_RULES).findings]
    assert keys == ["innodb-pending-io"]  # 0-second latch waits and a 1 s transaction are not findings


@pytest.mark.parametrize(
    ("key", "setting"),
    [
        ("buffer-pool-misses", "innodb_buffer_pool_size"),
        ("log-waits", "innodb_log_buffer_size"),
        ("thread-cache-misses", "thread_cache_size"),
        ("connection-saturation", "max_connections"),
        ("checkpoint-age-high", "innodb_log_file_size"),
    ],
)
def test_the_setting_behind_a_finding_is_named_in_its_title_and_first_sentence(
    tmp_path: Path, key: str, setting: str
) -> None:
    """The counters and InnoDB status edited to a loaded shape, with MariaDB 10.11's real -variables:
    the setting that explains each finding leads its explanation and ends its title (issue 23)."""
    members = {"mysqladmin": "mariadb-10.11_mysqladmin_edited-counters.txt", **EDITED_INNODB}
    _, tl = read(tmp_path, members)
    [f] = engine.run(tl, only=(key,)).findings
    value = tl.variables[setting]
    assert f.explanation.startswith(f"Setting: {setting} = {value}")
    assert f.title.endswith(")") and f"({setting} = " in f.title
    assert (f.culprit.kind, f.culprit.id, f.culprit.statement) == ("setting", setting, value)


def test_tmp_table_settings_open_the_tmp_table_finding() -> None:
    """The example bundle's -variables: tmp_table_size and max_heap_table_size lead the explanation."""
    from analyzer.timeline.timeline import Timeline
    from parsers.ingest.bundle import read_bundle

    bundle = read_bundle(
        Path(__file__).resolve().parents[2] / "fixtures/bundles/ptstalk-mariadb-tmptables.tar.gz"
    )
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    [f] = engine.run(tl, only=("tmp-table-churn",)).findings
    assert f.explanation.startswith("Settings: tmp_table_size = 16777216, max_heap_table_size = 16777216: ")
