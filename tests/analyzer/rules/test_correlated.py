"""Correlated-source rules (analyzer/rules/correlated.py): load from D-state threads (seed 000), commits
serialised with idle CPUs (seed 001), idle + iowait read as available CPU (seed 001)."""

from __future__ import annotations

import pytest

from analyzer import engine
from analyzer.findings import NotEvaluated, Severity
from tests.analyzer.captures import (
    FIRST_MYSQLD_TID,
    SEED000_QUERY,
    SEED001_VMSTAT,
    load_timeline,
    mysql_timeline,
    pfs_threads_frame,
    processlist_text,
    ps_elo_text,
    seed000_timeline,
    seed001_timeline,
    vmstat_text,
)

BOOT = (2, 0, 3, 3, 94, 0)
IDLE_VM = [BOOT] + [(0, 0, 1, 1, 98, 0)] * 10


def _values(finding) -> dict:
    return {e.label: e.value for e in finding.evidence}


def _one(tl, key: str):
    out = engine.run(tl, only=(key,))
    assert out.failed == []
    return out


# load-from-uninterruptible-threads -----------------------------------------------------------------


def test_seed_000_load_from_d_threads_in_unlinkat() -> None:
    [finding] = _one(seed000_timeline(), "load-from-uninterruptible-threads").findings
    values = _values(finding)
    assert values["threads in D state (max)"] == 552
    assert values["threads in D state (median)"] == 547
    assert values["of them mysqld/mariadbd threads (at the max)"] == 552
    wchan_label = next(label for label in values if label.startswith("mysqld threads in D in wchan unlinkat"))
    assert values[wchan_label] == 552
    assert "deleting files" in wchan_label
    assert values["at the same moment"] == (
        "552 mysqld threads in D state in unlinkat while 635 sessions were active "
        "(412 in 'Sending data', 217 in 'removing tmp table', 6 in 'statistics')"
    )
    assert values["idle id (mean)"] == 45.0
    assert values["blocked b (max)"] == 2.0
    assert finding.severity is Severity.CRITICAL  # median 547 >= 4 x 14 CPUs
    assert "vmstat b and wa stayed low" in finding.explanation
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (43, 47)
    d_evidence = next(e for e in finding.evidence if e.label == "threads in D state (max)")
    assert d_evidence.member == "ps-threads.txt"
    assert d_evidence.lines == (1304, 1855)  # the third snapshot: 552 D + 12 R + 90 S + 3 kworker lines


def test_vmstat_b_alone_fires_when_there_is_no_thread_listing() -> None:
    rows = [BOOT] + [(3, 20, 10, 5, 45, 40)] * 6
    [finding] = _one(mysql_timeline(vm=vmstat_text(rows)), "load-from-uninterruptible-threads").findings
    assert _values(finding)["blocked b (max)"] == 20
    assert finding.confidence.startswith("vmstat b agree")


def test_the_pfs_join_names_the_sessions_behind_the_d_threads() -> None:
    sessions = [("app", "Query", 0, "removing tmp table", SEED000_QUERY.format(n=k)) for k in range(12)]
    pfs = pfs_threads_frame(
        [(FIRST_MYSQLD_TID + k, 1001 + k, "thread/sql/one_connection", None, None) for k in range(12)]
    )
    tl = mysql_timeline(
        vm=vmstat_text([BOOT] + [(2, 0, 20, 10, 70, 0)] * 6),
        pl=processlist_text([sessions] * 4),
        ps_text=ps_elo_text([[(12, "Dl", "mysqld", "do_unlinkat")]] * 4),
        pfs=pfs,
    )
    [finding] = _one(tl, "load-from-uninterruptible-threads").findings
    values = _values(finding)
    assert values["sessions behind D threads in do_unlinkat"].startswith(
        "12 sessions in 'removing tmp table' running select d.id"
    )
    assert "performance_schema.threads" in finding.confidence


@pytest.mark.parametrize(
    ("vm_rows", "ps_kinds"),
    [
        pytest.param(
            IDLE_VM,
            [[(100, "Sl", "mysqld", "futex_do_wait")]] * 5,
            id=("idle healthy capture: cached threads in S"),
        ),
        pytest.param(IDLE_VM, [[(9, "Dl", "mysqld", "unlinkat")]] * 5, id="9 D threads: under 10"),
        pytest.param(
            [BOOT] + [(2, 0, 20, 10, 70, 0)] * 10,
            [[(30, "Dl", "mysqld", "unlinkat")]] * 2
            + [[(30, "Sl", "mysqld", "futex_do_wait")]]
            + [[(30, "Dl", "mysqld", "unlinkat")]] * 2,
            id="not 3 snapshots in a row",
        ),
        pytest.param(
            [BOOT] + [(40, 0, 80, 18, 2, 0)] * 10,
            [[(30, "Dl", "mysqld", "unlinkat")]] * 5,
            id="CPUs busy: idle + wait 2 %",
        ),
    ],
)
def test_load_rule_stays_silent(vm_rows, ps_kinds) -> None:
    tl = mysql_timeline(vm=vmstat_text(vm_rows), ps_text=ps_elo_text(ps_kinds))
    assert _one(tl, "load-from-uninterruptible-threads").findings == []


def test_the_d_threshold_follows_the_cpu_count() -> None:
    ps = ps_elo_text([[(20, "Dl", "mysqld", "unlinkat")]] * 5)
    vm = vmstat_text([BOOT] + [(2, 0, 20, 10, 70, 0)] * 8)
    assert (
        _one(mysql_timeline(vm=vm, ps_text=ps, ncpu=16), "load-from-uninterruptible-threads").findings != []
    )
    assert (
        _one(mysql_timeline(vm=vm, ps_text=ps, ncpu=32), "load-from-uninterruptible-threads").findings == []
    )


def test_the_real_mariadb_load_has_d_threads_but_busy_cpus_so_the_load_rule_is_silent() -> None:
    assert _one(load_timeline("tmptables-64"), "load-from-uninterruptible-threads").findings == []


def test_load_rule_needs_vmstat() -> None:
    out = _one(
        mysql_timeline(ps_text=ps_elo_text([[(30, "Dl", "mysqld", "unlinkat")]] * 5)),
        "load-from-uninterruptible-threads",
    )
    assert out.not_evaluated == [NotEvaluated("load-from-uninterruptible-threads", ("vmstat",))]


# commit-serialization ------------------------------------------------------------------------------


def test_seed_001_commits_queue_while_cpus_are_idle() -> None:
    [finding] = _one(seed001_timeline(), "commit-serialization").findings
    values = _values(finding)
    assert values["sessions in the commit phase (max)"] == 56
    assert values["their share of active sessions (max)"] == 87.5  # 56 of 64 sysbench sessions
    assert values["'Info COMMIT, State (none)'"] == 280  # 56 x 5 snapshots
    assert values["idle id (mean)"] == 45.5
    assert values["iowait wa (mean)"] == 5.8
    assert values["variable innodb_flush_log_at_trx_commit"] == "1"
    assert finding.severity is Severity.CRITICAL
    assert "iowait only 6 %" in finding.explanation
    assert "innodb_flush_log_at_trx_commit = 2" in finding.recommendation
    assert "power" in finding.recommendation  # the durability trade-off is spelled out


@pytest.mark.parametrize(
    "state",
    ["Waiting for handler commit", "query end", "starting"],
)
def test_commit_phase_states_of_mysql_8_and_5_7_count(state: str) -> None:
    info = "COMMIT" if state == "starting" else "UPDATE sbtest1 SET k=k+1 WHERE id=5"
    rows = [("sb", "Query", 0, state, info)] * 20 + [("sb", "Query", 0, "Sending data", "SELECT 1")] * 10
    tl = mysql_timeline(vm=vmstat_text(SEED001_VMSTAT), pl=processlist_text([rows] * 4), ncpu=2)
    [finding] = _one(tl, "commit-serialization").findings
    assert _values(finding)["sessions in the commit phase (max)"] == 20


def test_relaxed_durability_changes_the_recommendation() -> None:
    tl = mysql_timeline(
        vm=vmstat_text(SEED001_VMSTAT),
        pl=processlist_text([[("root", "Execute", 0, "NULL", "COMMIT")] * 30] * 4),
        variables={"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0"},
        ncpu=2,
    )
    [finding] = _one(tl, "commit-serialization").findings
    assert finding.recommendation.startswith("Durability is already relaxed")


@pytest.mark.parametrize(
    ("commit", "vm_rows"),
    [
        pytest.param(0, IDLE_VM, id="idle healthy capture"),
        pytest.param(7, SEED001_VMSTAT, id="7 sessions at commit: group commit"),
        pytest.param(56, [BOOT] + [(60, 0, 85, 13, 2, 0)] * 10, id="CPUs busy: idle + wait 2 %"),
    ],
)
def test_commit_rule_stays_silent(commit: int, vm_rows) -> None:
    assert _one(seed001_timeline(commit=commit, vm_rows=vm_rows), "commit-serialization").findings == []


def test_commit_rule_needs_vmstat() -> None:
    out = _one(
        mysql_timeline(pl=processlist_text([[("root", "Execute", 0, "NULL", "COMMIT")] * 30] * 4)),
        "commit-serialization",
    )
    assert out.not_evaluated == [NotEvaluated("commit-serialization", ("vmstat",))]


# iowait-understates-io -----------------------------------------------------------------------------


def test_seed_001_idle_plus_iowait_with_64_sessions_on_2_cpus() -> None:
    [finding] = _one(seed001_timeline(), "iowait-understates-io").findings
    values = _values(finding)
    assert values["idle id (mean)"] == 45.5
    assert values["iowait wa (mean)"] == 5.8
    assert values["idle + iowait (mean)"] == 51.2
    assert values["active sessions (median)"] == 64
    assert values["CPUs"] == 2
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (
        42,
        49,
    )  # vmstat samples with a processlist within 2 s
    assert finding.confidence.startswith("vmstat + processlist agree")


@pytest.mark.parametrize(
    ("vm_rows", "sessions"),
    [
        pytest.param(IDLE_VM, 2, id="idle healthy capture"),
        pytest.param([BOOT] + [(3, 0, 50, 10, 40, 0)] * 10, 7, id="7 active on 4 CPUs: under 2 x"),
        pytest.param([BOOT] + [(30, 0, 65, 10, 25, 0)] * 10, 64, id="busy CPUs: 25 % idle"),
        # a disk-bound load (like 4 x dd oflag=direct measured here): r+b 9 >= 2 x 4 CPUs, but iowait shows
        # the waits
        pytest.param(
            [BOOT] + [(5, 4, 2, 15, 1, 82)] * 10, 2, id="iowait 82 %, idle 1 %: nothing understated"
        ),
    ],
)
def test_iowait_rule_stays_silent(vm_rows, sessions: int) -> None:
    pl = processlist_text([[("app", "Query", 0, "Sending data", "SELECT 1")] * sessions] * 8)
    assert (
        _one(mysql_timeline(vm=vmstat_text(vm_rows), pl=pl, ncpu=4), "iowait-understates-io").findings == []
    )


def test_iowait_rule_needs_ncpu() -> None:
    out = _one(mysql_timeline(vm=vmstat_text(SEED001_VMSTAT), ncpu=None), "iowait-understates-io")
    assert out.not_evaluated == [NotEvaluated("iowait-understates-io", ("ncpu",))]


def test_nothing_cross_source_fires_on_the_real_idle_capture() -> None:
    out = engine.run(
        load_timeline("idle"),
        only=("load-from-uninterruptible-threads", "commit-serialization", "iowait-understates-io"),
    )
    assert out.findings == []
    assert out.not_evaluated == []


# --- calibration: the commit queue scales with the host -------------------------------------------


def _commit_capture(committing: int, others: int, ncpu: int, snapshots: int = 8):
    rows = [("app", "Execute", 0, "NULL", "COMMIT")] * committing
    rows += [("app", "Execute", 0, "statistics", f"SELECT c FROM sbtest WHERE id={i}") for i in range(others)]
    rows += [("app", "Sleep", 3, "", "NULL")] * 20
    vm = vmstat_text([(1, 0, 30, 10, 55, 5)] * (snapshots + 2))
    return mysql_timeline(vm=vm, pl=processlist_text([rows] * snapshots), ncpu=ncpu)


@pytest.mark.parametrize(
    ("committing", "others", "ncpu", "fires"),
    [
        pytest.param(14, 30, 64, False, id="14 committing on 64 CPUs: ordinary group commit"),
        pytest.param(40, 60, 64, False, id="40 of 100 on 64 CPUs: fewer than one per core"),
        pytest.param(70, 60, 64, True, id="70 of 130 on 64 CPUs: a queue"),
        pytest.param(14, 30, 2, True, id="the same 14 on 2 CPUs: a queue"),
    ],
)
def test_the_commit_queue_is_read_against_the_cpu_count(
    committing: int, others: int, ncpu: int, fires: bool
) -> None:
    out = _one(_commit_capture(committing, others, ncpu), "commit-serialization")
    assert bool(out.findings) is fires


def test_commits_for_3_seconds_are_not_a_queue_unless_extreme() -> None:
    quiet = [("app", "Execute", 0, "statistics", f"SELECT c FROM sbtest WHERE id={i}") for i in range(30)]
    burst = [("app", "Execute", 0, "NULL", "COMMIT")] * 14 + quiet
    extreme = [("app", "Execute", 0, "NULL", "COMMIT")] * 60 + quiet[:5]
    vm = vmstat_text([(1, 0, 30, 10, 55, 5)] * 14)
    short = mysql_timeline(vm=vm, pl=processlist_text([quiet] * 4 + [burst] * 3 + [quiet] * 5), ncpu=2)
    assert _one(short, "commit-serialization").findings == []
    strong = mysql_timeline(vm=vm, pl=processlist_text([quiet] * 4 + [extreme] * 3 + [quiet] * 5), ncpu=2)
    [finding] = _one(strong, "commit-serialization").findings
    assert (
        "shorter than 5 s kept because 80% or more of the active sessions were committing"
        in finding.confidence
    )
