"""analyzer/grouping.py: findings that share a root cause are grouped, not shown as unrelated alarms."""

from __future__ import annotations

import pandas as pd

from analyzer import engine
from analyzer.findings import Finding, Severity, Window
from analyzer.grouping import EXPLAINS, group
from tests.analyzer.captures import seed000_timeline, seed001_timeline

T0 = pd.Timestamp("2026-04-21 16:51:41", tz="UTC")


def _finding(key: str, start_s: int = 0, end_s: int = 10) -> Finding:
    return Finding(
        key=key,
        severity=Severity.WARNING,
        title=f"title of {key}",
        explanation=f"{key} explained.",
        windows=(Window(T0 + pd.Timedelta(seconds=start_s), T0 + pd.Timedelta(seconds=end_s)),),
        evidence=(),
        recommendation="",
    )


def test_seed_000_groups_load_pileup_and_idle_cpus_under_the_temporary_tables() -> None:
    out = engine.run(seed000_timeline())
    by_key = {f.key: f for f in out.findings}
    assert set(by_key) == {
        "tmp-table-churn", "load-from-uninterruptible-threads", "same-query-pileup",
        "active-sessions-overload", "iowait-understates-io",
    }  # fmt: skip
    root = by_key["tmp-table-churn"]
    assert root.related == (
        "active-sessions-overload",
        "load-from-uninterruptible-threads",
        "iowait-understates-io",
        "same-query-pileup",
    )  # fmt: skip  (the engine's order: most severe first)
    for key in (
        "load-from-uninterruptible-threads",
        "same-query-pileup",
        "iowait-understates-io",
        "active-sessions-overload",
    ):
        assert by_key[key].related[0] == "tmp-table-churn"
    assert "Root cause: Temporary tables on disk: 217 sessions creating/removing them, by select " in (
        by_key["load-from-uninterruptible-threads"].explanation
    )
    assert root.culprit is not None and root.culprit.kind == "statement"  # the query that builds them
    assert "This root cause also explains: " in root.explanation


def test_seed_001_groups_the_idle_cpus_under_commit_serialization() -> None:
    out = engine.run(seed001_timeline())
    by_key = {f.key: f for f in out.findings}
    assert set(by_key) == {"commit-serialization", "iowait-understates-io", "active-sessions-overload"}
    assert by_key["iowait-understates-io"].related == ("commit-serialization",)
    assert by_key["active-sessions-overload"].related == ("commit-serialization",)
    assert set(by_key["commit-serialization"].related) == {
        "iowait-understates-io",
        "active-sessions-overload",
    }


def test_findings_in_windows_far_apart_are_not_grouped() -> None:
    findings = [_finding("tmp-table-churn", 0, 10), _finding("load-from-uninterruptible-threads", 600, 700)]
    assert group(findings) == findings


def test_findings_with_no_link_are_returned_unchanged() -> None:
    findings = [_finding("swap-activity"), _finding("cpu-steal")]
    assert group(findings) == findings


def test_a_chain_names_the_direct_explainer_and_the_root() -> None:
    findings = [_finding("tmp-table-churn"), _finding("same-query-pileup"), _finding("cpu-saturation")]
    cpu = {f.key: f for f in group(findings)}["cpu-saturation"]
    assert cpu.related == ("tmp-table-churn", "same-query-pileup")
    assert "Explained by title of same-query-pileup (same-query-pileup)" in cpu.explanation
    assert "grouped under title of tmp-table-churn (tmp-table-churn)" in cpu.explanation


def test_the_first_listed_root_wins_when_two_could_explain() -> None:
    findings = [_finding("lock-waits"), _finding("commit-serialization"), _finding("iowait-understates-io")]
    iowait = {f.key: f for f in group(findings)}["iowait-understates-io"]
    assert iowait.related == ("commit-serialization",)


def test_the_links_have_no_cycle() -> None:
    edges: dict[str, set[str]] = {}
    for link in EXPLAINS:
        edges.setdefault(link.root, set()).add(link.explained)

    def reaches(start: str, target: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(
            n == target or (n not in seen and reaches(n, target, seen | {n})) for n in edges.get(start, ())
        )

    assert not [key for key in edges if reaches(key, key)]


def test_the_cause_comes_before_the_lock_waits_it_makes() -> None:
    """Issue 23: deadlocks over the lock waits they cause; the blocking transaction over its pile-up."""
    for cause in ("innodb-deadlock", "long-transaction"):
        findings = [_finding("lock-waits"), _finding(cause), _finding("active-sessions-overload")]
        by_key = {f.key: f for f in group(findings)}
        assert by_key["lock-waits"].related[0] == cause
        assert by_key["active-sessions-overload"].related[:2] == (cause, "lock-waits")
        assert set(by_key[cause].related) == {"lock-waits", "active-sessions-overload"}
