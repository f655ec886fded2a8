"""analyzer/reasoning/verdict.py: the root cause chosen from the findings and the links the bundle shows."""

from __future__ import annotations

import pandas as pd

from analyzer.findings import Culprit, Finding, Link, NotEvaluated, RuleFailed, Severity, Window
from analyzer.reasoning.verdict import HEALTHY_HEADLINE, NO_CAUSE_SHOWN, coverage, decide, verdict_refs

T0 = pd.Timestamp("2026-04-21 16:51:40", tz="UTC")


def _f(
    key: str,
    severity: Severity = Severity.WARNING,
    *,
    culprit: Culprit | None = None,
    title: str = "",
    at: int = 0,
) -> Finding:
    return Finding(
        key=key,
        severity=severity,
        title=title or f"title of {key}",
        explanation="",
        windows=(Window(T0 + pd.Timedelta(seconds=at), T0 + pd.Timedelta(seconds=at + 20)),),
        evidence=(),
        recommendation=f"fix {key}",
        culprit=culprit,
        host="db1",
        disproof=f"check {key}",
        confidence="sure",
    )


def _link(cause: str, effect: str) -> Link:
    return Link((cause, "db1"), (effect, "db1"), "session", f"{cause} explains {effect}")


def test_the_root_is_the_cause_with_the_longest_chain_and_the_chain_ends_at_the_worst_symptom() -> None:
    tmp, pileup = _f("tmp-table-churn"), _f("same-query-pileup")
    crowd, cpu = _f("active-sessions-overload", Severity.CRITICAL), _f("cpu-saturation", Severity.CRITICAL)
    lock = _f("lock-waits", Severity.CRITICAL)
    links = [
        _link("tmp-table-churn", "same-query-pileup"),
        _link("same-query-pileup", "active-sessions-overload"),
        _link("active-sessions-overload", "cpu-saturation"),
    ]
    v = decide([crowd, cpu, lock, tmp, pileup], links)
    assert v.state == "problem" and v.root_cause is tmp
    assert [f.key for f in v.chain] == [
        "tmp-table-churn",
        "same-query-pileup",
        "active-sessions-overload",
        "cpu-saturation",
    ]
    # the lock waits overlap in time but no link joins them: also found, never explained
    assert [f.key for f in v.also_found] == ["lock-waits"]
    assert {f.key for f in v.explains} == {"same-query-pileup", "active-sessions-overload", "cpu-saturation"}
    assert v.fix == "fix tmp-table-churn" and v.check == "check tmp-table-churn"
    assert v.when == (T0, T0 + pd.Timedelta(seconds=20))


def test_an_old_info_event_never_beats_a_current_problem() -> None:
    deadlock = _f("innodb-deadlock", Severity.INFO, title="InnoDB deadlock just before the capture")
    fio = Culprit(kind="process", id="981", statement="fio")
    disk = _f("io-consumer", culprit=fio, title="Disk vda busy with fio (PID 981), not MySQL")
    v = decide([deadlock, disk], [])
    assert v.root_cause is disk and v.also_found == (deadlock,)


def test_a_setting_ranks_before_a_crowd_of_one_query_when_no_link_joins_them() -> None:
    pool = Culprit(kind="setting", id="innodb_buffer_pool_size", statement="134217728")
    misses = _f(
        "buffer-pool-misses", culprit=pool, title="Buffer pool misses: 28.0 % of page reads from disk"
    )
    pileup = _f(
        "same-query-pileup",
        culprit=Culprit(kind="statement", id="select ?"),
        title="32 sessions running the same fast query at once",
    )
    v = decide([pileup, misses], [])
    assert v.root_cause is misses
    assert v.headline == (
        "Buffer pool misses: 28.0 % of page reads from disk; the setting: innodb_buffer_pool_size = 134217728"
    )


def test_a_saturated_cpu_without_a_culprit_ranks_after_a_cause() -> None:
    cpu = _f("cpu-saturation", Severity.CRITICAL)
    cache = _f(
        "table-cache-full",
        culprit=Culprit(kind="setting", id="table_open_cache", statement="64"),
        title="Table cache full (table_open_cache = 64)",
    )
    v = decide([cpu, cache], [])
    assert v.root_cause is cache and v.headline == cache.title  # the title names the setting already


def test_the_headline_names_the_holder_of_the_lock_the_title_leaves_out() -> None:
    holder = Culprit(
        kind="session", id="812", user="backup", host="10.0.0.9", statement="flush tables with read lock"
    )
    waits = _f("lock-waits", Severity.CRITICAL, culprit=holder, title="30 sessions waiting for locks")
    v = decide([waits], [])
    assert v.headline == "30 sessions waiting for locks; held by session 812 (backup@10.0.0.9)"


def test_a_root_with_no_cause_shown_says_so_before_the_general_advice() -> None:
    v = decide([_f("cpu-saturation", Severity.CRITICAL)], [])
    assert v.fix == NO_CAUSE_SHOWN + "fix cpu-saturation"


def test_a_capture_without_a_warning_is_healthy_with_its_info_findings_below() -> None:
    note = _f("innodb-deadlock", Severity.INFO)
    v = decide(
        [note], [], coverage(10, [NotEvaluated("lock-waits", ("processlist",))], [RuleFailed("x", "E: e")])
    )
    assert (v.state, v.headline, v.root_cause, v.also_found) == ("healthy", HEALTHY_HEADLINE, None, (note,))
    assert (v.coverage.evaluated, v.coverage.not_evaluated, v.coverage.failed) == (8, 1, 1)
    assert v.coverage.missing == ("processlist",)


def test_the_stored_verdict_names_findings_by_key_and_host() -> None:
    tmp, pileup = _f("tmp-table-churn"), _f("same-query-pileup")
    refs = verdict_refs(decide([pileup, tmp], [_link("tmp-table-churn", "same-query-pileup")]))
    assert refs["root_cause"] == {"key": "tmp-table-churn", "host": "db1"}
    assert refs["chain"] == [
        {"key": "tmp-table-churn", "host": "db1"},
        {"key": "same-query-pileup", "host": "db1"},
    ]
    assert refs["links"][0]["sentence"] == "tmp-table-churn explains same-query-pileup"
    assert refs["when"] == ["2026-04-21T16:51:40.000000Z", "2026-04-21T16:52:00.000000Z"]
    assert set(refs) == {
        "state",
        "headline",
        "root_cause",
        "chain",
        "explains",
        "also_found",
        "links",
        "fix",
        "when",
        "confidence",
        "check",
        "coverage",
    }


def test_a_setting_is_the_culprit_only_when_no_holder_is_shown() -> None:
    # every connection slot held by one account's idle sessions: the account, not max_connections
    setting = _f(
        "max-connections",
        Severity.CRITICAL,
        culprit=Culprit(kind="setting", id="max_connections", statement="151"),
    )
    account = _f("sessions-waiting", culprit=Culprit(kind="account", id="app@10.0.0.7", blocks=151))
    v = decide([setting, account], [])
    assert v.root_cause is account and v.headline == "title of sessions-waiting; held by account app@10.0.0.7"
    assert not v.fix.startswith(NO_CAUSE_SHOWN)
    # without a holder the setting stays the culprit
    assert decide([setting, _f("sessions-waiting", Severity.INFO)], []).root_cause is setting


def test_a_shown_holder_is_the_root_cause_ahead_of_a_longer_chain_without_one() -> None:
    holder = _f("purge-lag", culprit=Culprit(kind="session", id="13", statement="idle in transaction"))
    cpu, crowd = _f("cpu-saturation", Severity.CRITICAL), _f("active-sessions-overload", Severity.CRITICAL)
    tmp = _f("tmp-table-churn")
    v = decide(
        [cpu, crowd, tmp, holder],
        [
            _link("tmp-table-churn", "active-sessions-overload"),
            _link("active-sessions-overload", "cpu-saturation"),
        ],
    )
    assert v.root_cause is holder and v.headline == "title of purge-lag; held by session 13"
    # an informational finding naming a session is no holder shown
    quiet = _f("sessions-waiting", Severity.INFO, culprit=Culprit(kind="session", id="5"))
    assert (
        decide([cpu, crowd, tmp, quiet], [_link("tmp-table-churn", "active-sessions-overload")]).root_cause
        is tmp
    )


def test_a_contention_shown_in_place_of_a_holder_is_a_cause_shown() -> None:
    from dataclasses import replace

    from analyzer.findings import Evidence
    from analyzer.reasoning.verdict import SHOWN_SERIES

    waits = _f("sessions-waiting")
    shown = replace(
        waits, evidence=(Evidence("instead of a holder", "contention among 6 sessions", "", SHOWN_SERIES),)
    )
    assert decide([waits], []).fix.startswith(NO_CAUSE_SHOWN)
    assert decide([shown], []).fix == "fix sessions-waiting"
