"""What the case page reads besides its HTML (issue 12): the verdict, the levels of detail behind
zoomed charts, and the downloads (findings as JSON and CSV, series as CSV for a range)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.files import File
from django.test import Client

from tests.web.conftest import EXAMPLE_BUNDLE, VMSTAT, make_tar
from web.cases import selectors, services
from web.ingest import tasks
from web.models import Case, SeriesLevel
from web.timeline import levels

pytestmark = pytest.mark.django_db


def _finding(key: str, severity: str = "warning", related: tuple[str, ...] = ()) -> dict[str, object]:
    return {
        "key": key,
        "severity": severity,
        "title": f"title of {key}",
        "summary": f"What {key} means. A second sentence.",
        "windows": [["2026-04-21T16:51:42Z", "2026-04-21T16:52:00Z"]],
        "confidence": "two sources agree",
        "disproof": f"check {key}",
        "related": list(related),
    }


def test_the_verdict_names_the_finding_the_others_name_as_their_cause() -> None:
    findings = [
        _finding("active-sessions-overload", "critical", ("tmp-table-churn",)),
        _finding("cpu-saturation", "critical", ("tmp-table-churn", "same-query-pileup")),
        _finding("lock-waits", "critical"),
        _finding("tmp-table-churn", "warning", ("active-sessions-overload", "cpu-saturation")),
    ]
    verdict = selectors.verdict(findings=findings, not_evaluated=[], rules_run=17)
    assert verdict["root"]["key"] == "tmp-table-churn"
    assert [f["key"] for f in verdict["explains"]] == ["active-sessions-overload", "cpu-saturation"]
    assert [f["key"] for f in verdict["others"]] == ["lock-waits"]
    assert verdict["sentence"] == "What tmp-table-churn means."
    assert verdict["when"] == ["2026-04-21T16:51:42Z", "2026-04-21T16:52:00Z"]
    assert verdict["check"] == "check tmp-table-churn"


def test_without_a_group_the_most_severe_finding_leads() -> None:
    findings = [_finding("lock-waits", "critical"), _finding("swap-activity", "warning")]
    verdict = selectors.verdict(findings=findings, not_evaluated=[], rules_run=17)
    assert verdict["root"]["key"] == "lock-waits" and verdict["explains"] == []


def test_no_finding_is_a_verdict_too() -> None:
    not_evaluated = [
        {"key": "lock-waits", "reason": "needs processlist", "outcome": "not_evaluated"},
        {"key": "cpu-steal", "reason": "needs vmstat and mpstat_cpu", "outcome": "not_evaluated"},
        {"key": "swap-activity", "reason": "ValueError: boom", "outcome": "failed"},
    ]
    verdict = selectors.verdict(findings=[], not_evaluated=not_evaluated, rules_run=17)
    assert verdict["root"] is None
    assert (verdict["evaluated"], verdict["not_evaluated"], verdict["failed"]) == (14, 2, 1)
    assert verdict["missing"] == ["mpstat_cpu", "processlist", "vmstat"]


def test_a_page_without_findings_says_how_many_rules_looked(engineer_client: Client, tmp_path: Path) -> None:
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name="b.tgz", enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    page = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    n_missing = case.rule_results.filter(outcome="not_evaluated").count()
    assert n_missing > 0
    evaluated = len(case.rule_versions) - n_missing
    assert f"No finding: {evaluated} rules evaluated, {n_missing} not evaluated for lack of " in page


def test_min_max_levels_keep_peaks_and_shared_times() -> None:
    ts = np.arange(0, 100_000, dtype="int64") * 1_000_000
    a = np.sin(np.arange(100_000) / 500.0)
    a[77_777] = 50.0
    b = np.cos(np.arange(100_000) / 300.0)
    la, lb = levels.levels_of(ts, a), levels.levels_of(ts, b)
    assert [len(t) for _, t, _ in la][-1] <= levels.COARSEST_POINTS
    for (_, ta, va), (_, tb, _) in zip(la, lb, strict=True):
        assert (ta == tb).all()  # series sampled together keep common times at every level
        assert va.max() == 50.0  # the one-sample peak survives every level


@pytest.fixture
def example_case() -> Case:
    with EXAMPLE_BUNDLE.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name="example.tgz", enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    return Case.objects.get(pk=case.pk)


def test_a_range_read_takes_only_the_points_of_the_range(example_case: Case) -> None:
    name = "vmstat.r"
    whole = SeriesLevel.objects.get(case=example_case, name=name, level=0)
    ts = np.frombuffer(bytes(whole.ts), dtype="<i8")
    lo, hi = int(ts[5]), int(ts[9])
    got = levels.read_range(example_case.pk, [name], lo, hi, 100)[name]
    assert got[0].tolist() == ts[5:10].tolist()
    assert levels.read_range(example_case.pk, [name], None, None, 100)[name][0].tolist() == ts.tolist()
    assert levels.read_range(example_case.pk, [name], int(ts[-1]) + 1, None, 100) == {}


def test_findings_download_as_json_and_csv(engineer_client: Client, example_case: Case) -> None:
    keys = sorted(example_case.findings.values_list("key", flat=True))
    response = engineer_client.get(f"/cases/{example_case.pk}/findings.json")
    assert response["Content-Disposition"] == f'attachment; filename="case-{example_case.pk}-findings.json"'
    body = json.loads(response.content)
    assert sorted(f["key"] for f in body["findings"]) == keys
    response = engineer_client.get(f"/cases/{example_case.pk}/findings.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert sorted(r["key"] for r in rows) == keys
    assert all(r["windows"] and r["evidence"] for r in rows)
    assert engineer_client.get(f"/cases/{example_case.pk}/findings.xml").status_code == 404


def test_series_download_as_csv_for_the_visible_range(engineer_client: Client, example_case: Case) -> None:
    url = f"/cases/{example_case.pk}/series.csv"
    start_ms = int(example_case.window_start.timestamp() * 1000) + 10_000
    end_ms = start_ms + 5_000
    response = engineer_client.get(url, {"start": start_ms, "end": end_ms, "charts": "runqueue"})
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert {r["series"] for r in rows} == {"vmstat.r", "vmstat.b"}
    assert len([r for r in rows if r["series"] == "vmstat.r"]) == 6  # 1 s samples, both ends included
    assert all(r["time_utc"].endswith("Z") for r in rows)
    assert engineer_client.get(url, {"start": "soon"}).status_code == 400


def test_the_page_links_its_downloads_and_keeps_engineer_controls_together(
    engineer_client: Client, example_case: Case
) -> None:
    page = engineer_client.get(f"/cases/{example_case.pk}/").content.decode()
    assert f'href="/cases/{example_case.pk}/findings.csv"' in page
    head = page.split('id="engineer-actions"', 1)[1].split("</div>", 1)[0]
    assert "Re-analyze" in head and "Download bundle" in head
    assert page.index('id="verdict"') < page.index('id="findings"') < page.index('id="timeline"')


def test_a_chart_of_many_series_reaches_both_ends_of_the_capture() -> None:
    from web.timeline.charts import MIN_POINTS_PER_SERIES, OVERVIEW_POINTS, pick_points

    rng = np.random.default_rng(5)
    t = np.arange(3600, dtype="int64") * 1_000_000 + 1_776_780_000_000_000  # an hour at 1 s, in µs
    columns = [rng.random(len(t)) * 100 for _ in range(10)]  # ten busiest CPUs, max and median
    assert 10 * MIN_POINTS_PER_SERIES > OVERVIEW_POINTS  # their picks together exceed the budget
    idx = pick_points(t, columns, OVERVIEW_POINTS)
    assert len(idx) == OVERVIEW_POINTS and (np.diff(idx) > 0).all()
    assert idx[0] == 0 and idx[-1] == len(t) - 1  # the last minutes are drawn too
    assert np.diff(t[idx]).max() <= 60_000_000  # and no stretch of more than a minute is left out
