"""analyzer/reasoning/links.py and analyzer/reasoning/joins/: a finding explains another only when the bundle
shows the join (the same sessions, statement, device, process or server), never because their windows overlap.

Every join is tested twice on findings whose windows are the same: once where the bundle joins them,
once where the ids differ, which must give no link.
"""

from __future__ import annotations

import pandas as pd
import pytest

from analyzer.findings import Culprit, Evidence, Finding, Link, Severity, Window
from analyzer.reasoning import links
from analyzer.reasoning.joins import host, sessions
from tests.analyzer.captures import processlist_text, timeline

T0 = pd.Timestamp("2026-04-21 16:51:40", tz="UTC")
SAME_WINDOW = (Window(T0, T0 + pd.Timedelta(seconds=30)),)


def _finding(
    key: str, *, host: str | None = "db1", culprit: Culprit | None = None, subjects=(), **kw
) -> Finding:
    return Finding(
        key=key,
        severity=kw.pop("severity", Severity.WARNING),
        title=kw.pop("title", f"title of {key}"),
        explanation="",
        windows=SAME_WINDOW,
        evidence=kw.pop("evidence", ()),
        recommendation=f"fix {key}",
        culprit=culprit,
        host=host,
        subjects=tuple(subjects),
        **kw,
    )


def _ctx(snapshot: list[tuple[str, str, int, str, str]], n: int = 3) -> links.JoinContext:
    """Three processlist snapshots of ``snapshot`` (sessions Id 1001, 1002, ... in order) on host db1;
    no processlist at all when ``snapshot`` is empty."""
    return links.JoinContext({"db1": timeline(pl=processlist_text([snapshot] * n) if snapshot else None)})


def _session(sid: str) -> Culprit:
    return Culprit(kind="session", id=sid, user="app", host="localhost", statement="idle in transaction")


def _statement(fp: str) -> Culprit:
    return Culprit(kind="statement", id=fp, statement=fp)


def test_the_open_transaction_explains_the_waits_only_when_it_is_their_blocker() -> None:
    trx = _finding("long-transaction", culprit=_session("5"))
    joined = sessions.blocker_is_the_session(trx, _finding("lock-waits", culprit=_session("5")), _ctx([]))
    assert joined is not None and joined.join == "session" and "session 5" in joined.sentence
    assert (
        sessions.blocker_is_the_session(trx, _finding("lock-waits", culprit=_session("6")), _ctx([])) is None
    )


def test_the_same_session_id_on_another_host_is_another_session() -> None:
    trx = _finding("long-transaction", culprit=_session("5"))
    other = _finding("lock-waits", host="db2", culprit=_session("5"))
    assert sessions.blocker_is_the_session(trx, other, _ctx([])) is None


WAITING = [("app", "Query", 12, "Waiting for table metadata lock", "select * from shop.orders")] * 8
RUNNING = [("app", "Query", 0, "Sending data", "select * from shop.orders where id = 1")] * 8
COMMITTING = [("app", "Query", 0, "Waiting for handler commit", "COMMIT")] * 8
OTHERS = [("app", "Query", 0, "Sending data", "update shop.stock set n = n - 1 where id = 7")] * 2


def test_the_lock_waits_explain_the_crowd_when_the_crowd_is_the_waiters() -> None:
    waits, crowd = _finding("lock-waits"), _finding("active-sessions-overload")
    joined = sessions.waiters_are_the_crowd(waits, crowd, _ctx(WAITING + OTHERS))
    assert joined is not None and joined.effect == ("active-sessions-overload", "db1")
    assert "80% of the active sessions" in joined.sentence and "1001" in joined.sentence
    assert sessions.waiters_are_the_crowd(waits, crowd, _ctx(RUNNING + OTHERS)) is None


def test_commits_explain_the_crowd_only_when_it_is_committing() -> None:
    commits, crowd = _finding("commit-serialization"), _finding("active-sessions-overload")
    assert sessions.committers_are_the_crowd(commits, crowd, _ctx(COMMITTING + OTHERS)) is not None
    assert sessions.committers_are_the_crowd(commits, crowd, _ctx(RUNNING + OTHERS)) is None


def test_a_statement_explains_the_crowd_that_runs_it_not_another_statement() -> None:
    fp = "select * from shop.orders where id = ?"
    pileup = _finding("same-query-pileup", culprit=_statement(fp))
    crowd = _finding("active-sessions-overload")
    assert sessions.statement_is_the_crowd(pileup, crowd, _ctx(RUNNING + OTHERS)) is not None
    other = _finding("same-query-pileup", culprit=_statement("select * from shop.items where sku = ?"))
    assert sessions.statement_is_the_crowd(other, crowd, _ctx(RUNNING + OTHERS)) is None
    # two findings naming two statements are never joined, whatever the crowd runs
    tmp = _finding("tmp-table-churn", culprit=_statement("select grp, count(*) from shop.t group by grp"))
    assert sessions.statement_is_the_crowd(tmp, pileup, _ctx(RUNNING + OTHERS)) is None


def test_buffer_pool_misses_explain_a_crowd_of_reads_not_a_crowd_of_writes() -> None:
    reads = (
        Evidence("Innodb_buffer_pool_reads per second", 900.0, "/s", "mysqladmin.Innodb_buffer_pool_reads"),
    )
    misses = _finding(
        "buffer-pool-misses", culprit=Culprit(kind="setting", id="innodb_buffer_pool_size"), evidence=reads
    )
    fp = "select * from shop.orders where id = ?"
    pileup = _finding("same-query-pileup", culprit=_statement(fp))
    assert sessions.misses_are_the_crowds_reads(misses, pileup, _ctx(RUNNING + OTHERS)) is not None
    writes = [("app", "Query", 0, "Updating", "update shop.orders set n = 1 where id = 3")] * 8
    assert sessions.misses_are_the_crowds_reads(misses, pileup, _ctx(writes + OTHERS)) is None
    # a few reads from disk a second cannot be what ten sessions wait on
    few = (Evidence("Innodb_buffer_pool_reads per second", 5.0, "/s", "mysqladmin.Innodb_buffer_pool_reads"),)
    rare = _finding("buffer-pool-misses", culprit=misses.culprit, evidence=few)
    assert sessions.misses_are_the_crowds_reads(rare, pileup, _ctx(RUNNING + OTHERS)) is None


def test_mysqld_does_not_explain_cpus_another_process_takes() -> None:
    hog = Culprit(kind="process", id="4242", statement="stress-ng-cpu")
    sat = _finding("cpu-saturation", culprit=hog)
    assert sessions.mysqld_takes_the_cpu(_finding("active-sessions-overload"), sat, _ctx(RUNNING)) is None


def test_a_process_explains_the_saturation_of_its_own_device_only() -> None:
    fio = _finding(
        "io-consumer",
        culprit=Culprit(kind="process", id="981", statement="fio"),
        subjects=[("device", "vda")],
    )
    joined = host.same_device(fio, _finding("disk-saturation", subjects=[("device", "vda")]), _ctx([]))
    assert (
        joined is not None
        and joined.join == "device"
        and "vda" in joined.sentence
        and "981" in joined.sentence
    )
    assert host.same_device(fio, _finding("disk-saturation", subjects=[("device", "sdb")]), _ctx([])) is None


def test_host_counters_join_findings_of_one_server_only() -> None:
    cpu = _finding("cpu-saturation")
    assert host.same_server_counter(cpu, _finding("context-switch-storm"), _ctx([])).join == "host"
    assert host.same_server_counter(cpu, _finding("context-switch-storm", host="db2"), _ctx([])) is None


def test_find_links_runs_the_registry_and_keeps_no_cycle() -> None:
    trx = _finding("long-transaction", culprit=_session("5"))
    waits = _finding("lock-waits", culprit=_session("5"))
    crowd = _finding("active-sessions-overload")
    found = links.find_links(
        [crowd, waits, trx], {"db1": timeline(pl=processlist_text([WAITING + OTHERS] * 3))}
    )
    assert [(li.cause[0], li.effect[0]) for li in found.links] == [
        ("long-transaction", "lock-waits"),
        ("lock-waits", "active-sessions-overload"),
    ]
    assert found.failed == {}


def test_a_join_that_raises_is_recorded_and_the_others_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(cause: Finding, effect: Finding, ctx: links.JoinContext) -> Link | None:
        raise KeyError("column")

    registry = {("long-transaction", "lock-waits"): [broken, sessions.blocker_is_the_session]}
    monkeypatch.setattr(links, "_JOINS", registry)
    found = links.find_links(
        [_finding("long-transaction", culprit=_session("5")), _finding("lock-waits", culprit=_session("5"))],
        {},
    )
    assert found.failed == {"long-transaction->lock-waits": "KeyError: 'column'"}
    assert len(found.links) == 1


def test_every_registered_join_names_two_keys_and_documented_functions() -> None:
    for (cause, effect), fns in links.registered().items():
        assert cause != effect
        assert all(fn.__doc__ for fn in fns), (cause, effect)


def _replica(waiting: int) -> links.JoinContext:
    """A replica whose processlist has the SQL thread (Id 1001, system user) and an idle app session
    (Id 1002), and -lock-waits rows of thread ``waiting`` waiting behind 1002."""
    snapshot = [
        ("system user", "Slave_SQL", 30, "Update_rows_log_event::find_row(-1)", "NULL"),
        ("app", "Sleep", 40, "", "NULL"),
        ("app", "Query", 12, "Updating", "update shop.orders set n = n + 1 where id = 42"),
    ]
    tl = timeline(pl=processlist_text([snapshot] * 3))
    ts = tl.frame("processlist")["ts"].drop_duplicates()
    tl.frames["lock_waits"] = pd.DataFrame({"ts": ts, "waiting_thread": waiting, "blocking_thread": 1002})
    return links.JoinContext({"db1": tl})


def test_a_local_transaction_explains_replica_lag_when_the_sql_thread_waits_behind_it() -> None:
    trx = _finding("long-transaction", culprit=_session("1002"))
    lag = _finding("replica-lag")
    joined = sessions.sql_thread_is_the_waiter(trx, lag, _replica(waiting=1001))
    assert joined is not None and joined.join == "thread"
    assert (
        "thread 1001, is the replication SQL thread" in joined.sentence and "session 1002" in joined.sentence
    )
    # an application session waiting behind the same blocker says nothing about the replica's lag
    assert sessions.sql_thread_is_the_waiter(trx, lag, _replica(waiting=1003)) is None
