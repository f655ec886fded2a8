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
from web.cases import services
from web.cases.verdicts import expand_verdict
from web.ingest import tasks
from web.models import Case, SeriesLevel
from web.timeline import levels

pytestmark = pytest.mark.django_db


def _finding(key: str, severity: str = "warning", host: str | None = "db1") -> dict[str, object]:
    return {
        "key": key,
        "severity": severity,
        "title": f"title of {key}",
        "host": host,
        "anchor": f"finding-{key}",
    }


STORED = {
    "state": "problem",
    "headline": "title of tmp-table-churn; culprit: x",
    "root_cause": {"key": "tmp-table-churn", "host": "db1"},
    "chain": [{"key": "tmp-table-churn", "host": "db1"}, {"key": "active-sessions-overload", "host": "db1"}],
    "explains": [{"key": "active-sessions-overload", "host": "db1"}],
    "also_found": [{"key": "lock-waits", "host": "db1"}, {"key": "gone", "host": "db1"}],
    "links": [
        {
            "cause": {"key": "tmp-table-churn", "host": "db1"},
            "effect": {"key": "active-sessions-overload", "host": "db1"},
            "join": "session",
            "sentence": "the crowd runs the statement",
            "evidence": [],
        }
    ],
    "fix": "move tmpdir",
}


def test_the_stored_verdict_names_the_very_findings_of_the_document() -> None:
    findings = [
        _finding("active-sessions-overload", "critical"),
        _finding("lock-waits"),
        _finding("tmp-table-churn"),
    ]
    verdict = expand_verdict(STORED, findings)
    assert verdict["root_cause"] is findings[2]
    assert [f["key"] for f in verdict["chain"]] == ["tmp-table-churn", "active-sessions-overload"]
    assert verdict["explains"][0] is findings[0]
    # a reference to a finding the document does not hold is dropped, never served as a bare reference
    assert verdict["also_found"] == [findings[1]]
    assert "explained" not in verdict


def test_the_same_key_on_another_host_is_another_finding() -> None:
    findings = [_finding("tmp-table-churn", host="db2"), _finding("tmp-table-churn")]
    assert expand_verdict(STORED, findings)["root_cause"] is findings[1]


def test_the_page_gets_each_explained_finding_with_its_link_sentence() -> None:
    findings = [_finding("active-sessions-overload"), _finding("tmp-table-churn")]
    verdict = expand_verdict(STORED, findings, page=True)
    assert verdict["explained"] == [{"finding": findings[0], "because": "the crowd runs the statement"}]
    assert verdict["headline_rest"] == "; culprit: x"
    # an expanded verdict expands again onto another list (a share link's redacted findings)
    redacted = [{**f, "title": "redacted"} for f in findings]
    assert expand_verdict(verdict, redacted)["root_cause"] is redacted[1]


def test_a_case_analysed_before_verdicts_were_kept_has_none() -> None:
    assert expand_verdict({}, [_finding("lock-waits")]) is None


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
    assert (
        f"No problem found in this capture: {evaluated} rules evaluated, {n_missing} not evaluated for "
        "lack of "
    ) in page


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


def test_the_page_shows_the_chain_the_links_and_the_fix(engineer_client: Client, example_case: Case) -> None:
    page = engineer_client.get(f"/cases/{example_case.pk}/").content.decode()
    verdict = page[page.index('id="verdict"') : page.index('id="findings"')]
    assert 'class="verdict__root" href="#finding-tmp-table-churn"' in verdict
    chain = verdict[
        verdict.index('id="verdict-chain"') : verdict.index("</ol>", verdict.index('id="verdict-chain"'))
    ]
    assert (
        chain.index("tmp-table-churn")
        < chain.index("same-query-pileup")
        < chain.index("active-sessions-overload")
    )
    assert "are sessions running the statement the cause names" in verdict  # a link's sentence
    assert 'id="verdict-fix"' in verdict and "tmpdir" in verdict


def test_a_case_analysed_before_verdicts_were_kept_asks_for_a_reanalysis(
    engineer_client: Client, example_case: Case
) -> None:
    Case.objects.filter(pk=example_case.pk).update(verdict={})
    page = engineer_client.get(f"/cases/{example_case.pk}/").content.decode()
    assert "analysed before verdicts were kept: re-analyze it" in page
