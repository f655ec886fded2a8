"""same-query-pileup: one fast query run by most active sessions at once (seed 000)."""

from __future__ import annotations

import pytest

from analyzer import engine
from analyzer.findings import NotEvaluated
from tests.analyzer.captures import processlist_text, timeline, vmstat_text

PILE_QUERY = "SELECT p.id, p.name FROM products p WHERE p.category_id = {n} AND p.active = 1 LIMIT 20"
FINGERPRINT = "select p.id, p.name from products p where p.category_id = ? and p.active = ? limit ?"
OWN = ("root", "Query", 0, "starting", "SHOW FULL PROCESSLIST")
DAEMON = ("event_scheduler", "Daemon", 2962, "Waiting on empty queue", "NULL")


def _snapshot(same: int, other: int, *, time_s: int = 0, state: str = "Sending data") -> list:
    rows = [DAEMON, OWN]
    rows += [("app", "Query", time_s, state, PILE_QUERY.format(n=i % 17)) for i in range(same)]
    # the other work is spread over three statement shapes, none of them dominant
    rows += [
        (
            "app",
            "Query",
            0,
            "updating",
            f"UPDATE {('carts', 'orders', 'users')[i % 3]} SET v = {i} WHERE id = {i}",
        )
        for i in range(other)
    ]
    rows += [("app", "Sleep", 3, "", "NULL") for _ in range(10)]
    return rows


def _run(snapshots):
    return engine.run(timeline(pl=processlist_text(snapshots)), only=("same-query-pileup",))


def test_it_fires_when_one_fingerprint_is_most_active_sessions() -> None:
    out = _run([_snapshot(70, 20)] * 4)
    [finding] = out.findings
    values = {e.label: e.value for e in finding.evidence}
    assert values["query fingerprint"] == FINGERPRINT
    assert values["sessions running it (max)"] == 70
    assert values["active sessions (max)"] == 90  # Sleep, Daemon and our own SHOW PROCESSLIST excluded
    assert values["share of active sessions (max)"] == pytest.approx(77.8, abs=0.1)
    assert values["State 'Sending data'"] == 280
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (43, 46)


@pytest.mark.parametrize(
    "snapshots",
    [
        pytest.param([_snapshot(0, 5)] * 5, id="idle healthy capture"),
        pytest.param([_snapshot(15, 2)] * 5, id="fewer than 20 sessions"),
        pytest.param([_snapshot(60, 70)] * 5, id="under half of the active sessions"),
        pytest.param([_snapshot(70, 10, time_s=30)] * 5, id="slow queries, not a fast pile-up"),
        pytest.param(
            [_snapshot(70, 10), _snapshot(70, 10), _snapshot(0, 10), _snapshot(70, 10)],
            id="not 5 s in a row",
        ),
    ],
)
def test_it_stays_silent(snapshots) -> None:
    assert _run(snapshots).findings == []


def test_missing_processlist_gives_not_evaluated() -> None:
    tl = timeline(vm=vmstat_text([(1, 0, 1, 1, 98, 0)] * 3))
    out = engine.run(tl, only=("same-query-pileup",))
    assert out.not_evaluated == [NotEvaluated("same-query-pileup", ("processlist",))]


# =============================================================================================
# tmp-table-churn, table-cache-contention, active-sessions-overload, long-running-queries,
# lock-waits (seed 000 and the classic checks), and the real MariaDB load of tests/fixtures/loads.
# =============================================================================================

from analyzer.findings import Severity  # noqa: E402
from tests.analyzer.captures import (  # noqa: E402
    SEED000_QUERY,
    load_timeline,
    mysql_timeline,
    mysqladmin_ext_text,
    ps_elo_text,
    seed000_timeline,
    seed001_timeline,
)


def _values(finding) -> dict:
    return {e.label: e.value for e in finding.evidence}


def _only(tl, key: str):
    out = engine.run(tl, only=(key,))
    assert out.failed == []
    return out


def _sessions(**states: int) -> list:
    """Active sessions of one snapshot by State (keyword = State with _ for spaces), plus the own query."""
    rows = [OWN, DAEMON]
    for state, count in states.items():
        rows += [
            ("app", "Query", 0, state.replace("_", " "), SEED000_QUERY.format(n=k)) for k in range(count)
        ]
    return rows


def _counters(disk: float, every: float) -> str:
    return mysqladmin_ext_text(
        6, per_s={"Created_tmp_disk_tables": disk, "Created_tmp_tables": every, "Questions": 50}
    )


# tmp-table-churn ---------------------------------------------------------------------------------


def test_seed_000_tmp_table_churn_joins_states_counters_and_unlinkat_threads() -> None:
    [finding] = _only(seed000_timeline(), "tmp-table-churn").findings
    values = _values(finding)
    assert values["sessions in temporary-table states (max)"] == 217
    assert values["their share of active sessions (max)"] == 34.2  # 217 of 635
    assert values["Created_tmp_disk_tables per second (median)"] == 4000.0
    assert values["on-disk share of Created_tmp_tables (median)"] == 99.8  # 4000 of 4010
    assert values["mysqld threads in D state creating/deleting files (max)"] == 552
    assert (
        values["at the same moment"]
        == "552 mysqld threads in D state (unlinkat 552) while 217 in 'removing tmp table'"
    )
    assert values["query building them"].endswith("where e.proceso_id = ?")
    assert values["variable tmpdir"] == "/srv/mysqldata/tmp"
    assert finding.severity is Severity.CRITICAL  # joined with >= 14 D threads in file deletion
    assert "mount -t tmpfs -o size=3072M tmpfs /srv/mysqldata/tmpram" in finding.recommendation
    assert finding.confidence.startswith("processlist states + status counters + ps wait channels agree")


def test_states_alone_fire_as_a_warning() -> None:
    tl = mysql_timeline(pl=processlist_text([_sessions(removing_tmp_table=12, Sending_data=30)] * 4))
    [finding] = _only(tl, "tmp-table-churn").findings
    assert _values(finding)["sessions in temporary-table states (max)"] == 12
    assert finding.severity is Severity.WARNING


def test_mariadb_sending_data_with_high_counters_fires_from_the_counters() -> None:
    tl = mysql_timeline(pl=processlist_text([_sessions(Sending_data=40)] * 4), mysqladmin=_counters(400, 410))
    [finding] = _only(tl, "tmp-table-churn").findings
    values = _values(finding)
    assert values["Created_tmp_disk_tables per second (median)"] == 400.0
    assert values["most common query among active sessions"].startswith("select d.id as d__id")
    assert finding.title.startswith("400 on-disk temporary tables per second, by select d.id as d__id")
    assert finding.culprit.kind == "statement" and finding.culprit.id.startswith("select d.id as d__id")


@pytest.mark.parametrize(
    ("snapshot", "counters"),
    [
        pytest.param(
            _sessions(Sending_data=5),
            _counters(0, 3),
            id="idle healthy capture: the collector's own 3 tmp tables/s",
        ),
        pytest.param(_sessions(Sending_data=40), _counters(19, 19), id="19 on-disk/s: under 20"),
        pytest.param(_sessions(Sending_data=40), _counters(100, 500), id="100 on-disk/s but 20 % of all"),
        pytest.param(_sessions(removing_tmp_table=4, Sending_data=2), None, id="4 sessions in tmp states"),
        pytest.param(_sessions(removing_tmp_table=10, Sending_data=60), None, id="10 of 70 active: 14 %"),
        pytest.param(
            _sessions(Copy_to_tmp_table=30), None, id="ALTER TABLE copy is not an internal tmp table"
        ),
    ],
)
def test_tmp_table_churn_stays_silent(snapshot, counters) -> None:
    tl = mysql_timeline(pl=processlist_text([snapshot] * 4), mysqladmin=counters)
    assert _only(tl, "tmp-table-churn").findings == []


def test_tmp_table_churn_needs_the_processlist() -> None:
    out = _only(mysql_timeline(mysqladmin=_counters(400, 410)), "tmp-table-churn")
    assert out.not_evaluated == [NotEvaluated("tmp-table-churn", ("processlist",))]


def test_the_real_mariadb_tmp_table_load_fires_from_counters_and_wait_channels() -> None:
    [finding] = _only(load_timeline("tmptables-64"), "tmp-table-churn").findings
    values = _values(finding)
    assert values["Created_tmp_disk_tables per second (median)"] == 1444.6
    assert values["on-disk share of Created_tmp_tables (median)"] == 99.9
    assert values["mysqld threads in D state creating/deleting files (max)"] == 23
    assert values["at the same moment"] == (
        "23 mysqld threads in D state (do_unlinkat 14, path_openat 9) while 14 in 'Removing tmp table'"
    )
    assert values["query building them"] == "select distinct note from t where id between ? and ?"
    assert finding.severity is Severity.CRITICAL


# table-cache-contention --------------------------------------------------------------------------


def test_seed_000_opening_and_closing_tables_after_the_tmpdir_fix() -> None:
    snapshot = _sessions(Opening_tables=69, closing_tables=45, Sending_data=433, removing_tmp_table=160)
    tl = mysql_timeline(pl=processlist_text([snapshot] * 4), variables={"table_open_cache": "2000"})
    [finding] = _only(tl, "table-cache-contention").findings
    values = _values(finding)
    assert values["sessions opening/closing tables (max)"] == 114
    assert values["their share of active sessions (max)"] == 16.1  # 114 of 707
    assert values["variable table_open_cache"] == "2000"
    assert "SET GLOBAL table_open_cache = 8000;" in finding.recommendation


@pytest.mark.parametrize(
    "snapshot",
    [
        pytest.param(_sessions(Sending_data=3), id="idle healthy capture"),
        pytest.param(_sessions(Opening_tables=9, Sending_data=10), id="9 sessions"),
        pytest.param(_sessions(Opening_tables=20, Sending_data=400), id="20 of 420: 5 %"),
    ],
)
def test_table_cache_contention_stays_silent(snapshot) -> None:
    assert _only(mysql_timeline(pl=processlist_text([snapshot] * 4)), "table-cache-contention").findings == []


# active-sessions-overload ------------------------------------------------------------------------


def test_active_sessions_overload_fires_at_four_per_cpu() -> None:
    tl = mysql_timeline(pl=processlist_text([_sessions(Sending_data=16)] * 4), ncpu=4)
    [finding] = _only(tl, "active-sessions-overload").findings
    values = _values(finding)
    assert values["active sessions (max)"] == 16  # the own SHOW PROCESSLIST and the Daemon do not count
    assert values["active sessions per CPU (median)"] == 4.0
    assert finding.severity is Severity.WARNING


def test_seed_001_overload_is_critical_at_32_per_cpu() -> None:
    [finding] = _only(seed001_timeline(), "active-sessions-overload").findings
    assert _values(finding)["active sessions per CPU (median)"] == 32.0
    assert finding.severity is Severity.CRITICAL


@pytest.mark.parametrize(
    "snapshots",
    [
        pytest.param([_sessions(Sending_data=2)] * 4, id="idle healthy capture"),
        pytest.param([_sessions(Sending_data=15)] * 4, id="15 on 4 CPUs: under 4 x"),
        pytest.param(
            [_sessions(Sending_data=40)] * 2 + [_sessions(Sending_data=3)] + [_sessions(Sending_data=40)] * 2,
            id=("not 3 snapshots in a row"),
        ),
    ],
)
def test_active_sessions_overload_stays_silent(snapshots) -> None:
    assert (
        _only(mysql_timeline(pl=processlist_text(snapshots), ncpu=4), "active-sessions-overload").findings
        == []
    )


def test_active_sessions_overload_needs_ncpu() -> None:
    out = _only(
        mysql_timeline(pl=processlist_text([_sessions(Sending_data=40)] * 4), ncpu=None),
        "active-sessions-overload",
    )
    assert out.not_evaluated == [NotEvaluated("active-sessions-overload", ("ncpu",))]


# long-running-queries ----------------------------------------------------------------------------

REPORT = "SELECT customer_id, SUM(total) FROM orders WHERE created > '2026-01-01' GROUP BY customer_id"


def test_a_statement_running_for_minutes_fires() -> None:
    snapshots = [
        [OWN, ("app", "Query", 95 + i, "Sending data", REPORT), ("app", "Sleep", 4000, "", "NULL")]
        for i in range(3)
    ]
    [finding] = _only(mysql_timeline(pl=processlist_text(snapshots)), "long-running-queries").findings
    values = _values(finding)
    assert values["sessions running >= 60 s"] == 1
    assert values["longest Time"] == 97
    assert values["longest: session Id"] == 1002
    assert (
        values["longest: query"]
        == "select customer_id, sum(total) from orders where created > ? group by customer_id"
    )
    longest = next(e for e in finding.evidence if e.label == "longest Time")
    assert longest.lines == (67, 75)  # the third snapshot (lines 57-84): its second row


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([OWN, ("app", "Query", 1, "Sending data", "SELECT 1")], id="idle healthy capture"),
        pytest.param([OWN, ("app", "Query", 59, "Sending data", REPORT)], id="59 s"),
        pytest.param([OWN, ("app", "Sleep", 4000, "", "NULL"), DAEMON], id="idle connections and daemons"),
        pytest.param(
            [OWN, ("system user", "Query", 9000, "Slave has read all relay log", "NULL")],
            id="replication thread",
        ),
    ],
)
def test_long_running_queries_stays_silent(rows) -> None:
    assert _only(mysql_timeline(pl=processlist_text([rows] * 3)), "long-running-queries").findings == []


def test_a_time_that_does_not_track_the_statement_is_not_a_long_query() -> None:
    """Inside a temporary-table churn each session runs the GROUP BY again and again, fast; a Time of
    75 s in one snapshot that read 0 and 1 s in the snapshots around it, for the same statement,
    is not a statement that ran 75 s."""
    churn = "SELECT grp, COUNT(*), SUM(n) FROM t GROUP BY grp ORDER BY NULL"
    times = [0, 1, 75, 0, 1, 0]
    snapshots = [[OWN, ("app", "Query", t, "Removing tmp table", churn)] for t in times]
    assert _only(mysql_timeline(pl=processlist_text(snapshots)), "long-running-queries").findings == []


def test_a_capture_that_starts_mid_statement_takes_time_at_its_word() -> None:
    snapshots = [[OWN, ("app", "Query", 300 + i, "Sending data", REPORT)] for i in range(2)]
    [finding] = _only(mysql_timeline(pl=processlist_text(snapshots)), "long-running-queries").findings
    assert _values(finding)["longest Time"] == 301


# lock-waits --------------------------------------------------------------------------------------

ALTER = "ALTER TABLE orders ADD COLUMN note TEXT"


def test_sessions_queued_behind_a_metadata_lock_fire_and_name_the_blocker() -> None:
    snapshot = [
        OWN,
        ("app", "Query", 312, "Sending data", REPORT),
        ("dba", "Query", 40, "Waiting for table metadata lock", ALTER),
    ]
    snapshot += [
        ("app", "Query", 30, "Waiting for table metadata lock", "SELECT * FROM orders WHERE id = 7")
    ] * 5
    [finding] = _only(mysql_timeline(pl=processlist_text([snapshot] * 3)), "lock-waits").findings
    values = _values(finding)
    assert values["sessions waiting for a lock (max)"] == 6
    assert values["longest wait (Time)"] == 40
    assert values["State 'Waiting for table metadata lock'"] == 18
    # No transaction list: the statement on the DDL's table running since before the first wait holds
    # the table's metadata lock (a statement's metadata locks last until its transaction ends)
    culprit = finding.culprit
    assert (culprit.kind, culprit.id, culprit.user, culprit.blocks) == ("session", "1002", "app", 6)
    assert culprit.statement.startswith("select customer_id")
    assert "behind session 1002" in finding.title
    assert "KILL 1002;" in finding.recommendation
    assert values["DDL waiting: session 1003"] == "alter table orders add column note text"
    assert finding.severity is Severity.WARNING


def test_a_metadata_lock_whose_holder_the_bundle_does_not_show_names_no_culprit() -> None:
    """The oldest session not waiting runs on another table: nothing shows it holding the lock the
    ALTER waits for, so no session is named and no KILL is given."""
    snapshot = [
        OWN,
        ("app", "Query", 312, "Sending data", "SELECT COUNT(*) FROM invoices"),
        ("dba", "Query", 40, "Waiting for table metadata lock", ALTER),
    ]
    snapshot += [
        ("app", "Query", 30, "Waiting for table metadata lock", "SELECT * FROM orders WHERE id = 7")
    ] * 5
    [finding] = _only(mysql_timeline(pl=processlist_text([snapshot] * 3)), "lock-waits").findings
    assert finding.culprit is None
    assert "KILL 1002" not in finding.recommendation and "behind session" not in finding.title
    assert "does not show who holds the lock" in finding.explanation


def test_innodb_row_lock_waits_fire_from_the_status_counter() -> None:
    tl = mysql_timeline(
        pl=processlist_text([[OWN, ("app", "Query", 2, "updating", "UPDATE t SET v = 1 WHERE id = 1")]] * 4),
        mysqladmin=mysqladmin_ext_text(
            5, per_s={"Questions": 10}, gauges={"Innodb_row_lock_current_waits": 12}
        ),
    )
    [finding] = _only(tl, "lock-waits").findings
    assert _values(finding)["InnoDB row-lock waits now (max)"] == 12
    assert finding.severity is Severity.CRITICAL


@pytest.mark.parametrize(
    "snapshots",
    [
        pytest.param([[OWN, ("app", "Query", 0, "Sending data", "SELECT 1")]] * 3, id="idle healthy capture"),
        pytest.param(
            [[OWN, ("app", "Query", 5, "Waiting for table metadata lock", ALTER)]] * 3,
            id=("one waiter for 5 s"),
        ),
        pytest.param(
            [[OWN] + [("app", "Query", 1, "Waiting for table level lock", "UPDATE t SET v = 1")] * 4]
            + [[OWN]]
            + [[OWN] + [("app", "Query", 1, "Waiting for table level lock", ("UPDATE t SET v = 1"))] * 4],
            id="waits that cleared within a snapshot",
        ),
        pytest.param(
            [[OWN, ("app", "Query", 0, "System lock", "SELECT 1")] * 5] * 3, id=("System lock is not a wait")
        ),
    ],
)
def test_lock_waits_stays_silent(snapshots) -> None:
    assert _only(mysql_timeline(pl=processlist_text(snapshots)), "lock-waits").findings == []


# same-query-pileup and the real captures ---------------------------------------------------------


def test_sessions_at_commit_are_not_a_query_pileup() -> None:
    assert _only(seed001_timeline(), "same-query-pileup").findings == []


def test_the_real_mariadb_load_fires_the_pileup_with_its_fingerprint() -> None:
    [finding] = _only(load_timeline("tmptables-64"), "same-query-pileup").findings
    values = _values(finding)
    assert values["query fingerprint"] == "select distinct note from t where id between ? and ?"
    assert values["sessions running it (max)"] == 62


MYSQL_KEYS = (
    "same-query-pileup",
    "tmp-table-churn",
    "table-cache-contention",
    "active-sessions-overload",
    "long-running-queries",
    "lock-waits",
)


def test_nothing_fires_on_the_real_idle_mariadb_capture() -> None:
    out = engine.run(load_timeline("idle"), only=MYSQL_KEYS)
    assert out.findings == []
    assert out.failed == []


def test_the_real_load_fires_exactly_the_expected_mysql_rules() -> None:
    out = engine.run(load_timeline("tmptables-64"), only=MYSQL_KEYS)
    assert sorted(f.key for f in out.findings) == [
        "active-sessions-overload",
        "same-query-pileup",
        "tmp-table-churn",
    ]


def test_a_ps_listing_of_idle_cached_threads_does_not_strengthen_tmp_table_churn() -> None:
    tl = mysql_timeline(
        pl=processlist_text([_sessions(removing_tmp_table=12, Sending_data=30)] * 4),
        ps_text=ps_elo_text([[(100, "Sl", "mysqld", "futex_do_wait")]] * 4),
    )
    [finding] = _only(tl, "tmp-table-churn").findings
    assert finding.severity is Severity.WARNING
    assert "mysqld threads in D state creating/deleting files (max)" not in _values(finding)
