"""web/history/compare.py: the pure comparison of two cases' findings and query fingerprints."""

from __future__ import annotations

import pytest

from web.history.compare import compare_cases, compare_findings, compare_fingerprints


def _f(key: str, severity: str, title: str = "") -> dict[str, str]:
    return {"key": key, "severity": severity, "title": title or key}


@pytest.mark.parametrize(
    ("base", "other", "part", "expected"),
    [
        ([], [_f("cpu-saturation", "critical")], "appeared", ["cpu-saturation"]),
        ([_f("swap-activity", "warning")], [], "disappeared", ["swap-activity"]),
        ([_f("lock-waits", "warning")], [_f("lock-waits", "critical")], "changed_severity", ["lock-waits"]),
        ([_f("lock-waits", "warning")], [_f("lock-waits", "warning")], "unchanged", ["lock-waits"]),
        ([], [], "appeared", []),
    ],
)
def test_findings_are_matched_by_key(base, other, part: str, expected: list[str]) -> None:
    assert [r["key"] for r in compare_findings(base, other)[part]] == expected


def test_a_severity_change_says_which_way() -> None:
    worse = compare_findings([_f("k", "info")], [_f("k", "critical")])["changed_severity"][0]
    better = compare_findings([_f("k", "critical")], [_f("k", "warning")])["changed_severity"][0]
    assert (worse["before"], worse["after"], worse["direction"]) == ("info", "critical", "worse")
    assert better["direction"] == "better"


def test_a_key_reported_twice_counts_at_its_worst() -> None:
    base = [_f("disk-saturation", "warning", "sdb"), _f("disk-saturation", "critical", "sda")]
    diff = compare_findings(base, [_f("disk-saturation", "critical", "sda")])
    assert diff["changed_severity"] == [] and diff["unchanged"][0]["severity"] == "critical"


def test_appeared_findings_come_most_severe_first() -> None:
    other = [_f("a-info", "info"), _f("b-warning", "warning"), _f("c-critical", "critical")]
    assert [r["key"] for r in compare_findings([], other)["appeared"]] == [
        "c-critical",
        "b-warning",
        "a-info",
    ]


def test_fingerprints_keep_each_cases_order_and_drop_repeats() -> None:
    diff = compare_fingerprints(["q1", "q2", "q2"], ["q3", "q1", "q3"])
    assert diff == {"new": ["q3"], "gone": ["q2"], "kept": ["q1"]}


def test_compare_cases_reads_findings_and_fingerprints() -> None:
    out = compare_cases(
        {"findings": [_f("x", "warning")], "fingerprints": ["select ?"], "id": 1},
        {"findings": [], "fingerprints": [], "id": 2},
    )
    assert out["findings"]["disappeared"][0]["key"] == "x" and out["fingerprints"]["gone"] == ["select ?"]
