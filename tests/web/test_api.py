"""The JSON API on real ingests: the example pt-stalk bundle (tests/fixtures/bundles) and a second,
vmstat-only capture, ingested once for the module through the same service functions as the worker.
Every endpoint, its errors, and its access rule (a case outside ``cases_for(user)`` answers 404)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.files import File
from django.test import Client, override_settings

from analyzer.findings import severity_rank
from tests.web.conftest import EXAMPLE_BUNDLE, VMSTAT, make_tar
from web.cases import selectors, services
from web.ingest import tasks
from web.models import Case, CaseStatus

pytestmark = pytest.mark.django_db

EXAMPLE_KEYS = {
    "active-sessions-overload",
    "cpu-saturation",
    "same-query-pileup",
    "tcp-retransmits",
    "tmp-table-churn",
}
#: The statement the example's 64 sysbench sessions repeat (tests/fixtures/bundles/README.md).
EXAMPLE_FINGERPRINT = "select grp, count(*), sum(n) from casebook_load.t group by grp order by ?"


def _ingest(path: Path, title: str) -> Case:
    with path.open("rb") as fh:
        case = services.case_create(
            user=None, file=File(fh), original_name=path.name, title=title, enqueue=False
        )
    tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    assert case.status == CaseStatus.READY, case.failure_reason
    return case


@pytest.fixture(scope="module")
def cases(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[dict[str, Case]]:
    """Two ready cases, committed for the whole module and deleted after it."""
    tmp = tmp_path_factory.mktemp("api")
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=tmp / "media"):
        made = {
            "example": _ingest(EXAMPLE_BUNDLE, "example: tmp tables"),
            "vmstat": _ingest(make_tar(tmp / "v.tgz", {"vmstat.txt": VMSTAT.encode()}), "quiet host"),
        }
        yield made
        Case.objects.filter(pk__in=[c.pk for c in made.values()]).delete()


@pytest.fixture
def api(api_client: Client) -> Client:
    return api_client


def _case_urls(case_id: int) -> list[str]:
    return [
        f"/api/cases/{case_id}/",
        f"/api/cases/{case_id}/status/",
        f"/api/cases/{case_id}/findings/",
        f"/api/cases/{case_id}/series/",
        f"/api/cases/{case_id}/moment/?at=2026-11-22T12:31:00Z",
        f"/api/compare/?base={case_id}&other={case_id}",
    ]


def test_the_report_is_the_document_of_analyze_json(api: Client, cases) -> None:
    case = cases["example"]
    report = api.get(f"/api/cases/{case.pk}/").json()
    assert report == json.loads(json.dumps(selectors.case_report(case=case)))
    assert {f["key"] for f in report["findings"]} == EXAMPLE_KEYS
    assert report["ncpu"] == 2 and report["window"] == ["2026-11-22T12:30:43Z", "2026-11-22T12:31:23Z"]


def test_the_verdict_names_the_reports_own_findings(api: Client, cases) -> None:
    case = cases["example"]
    report = api.get(f"/api/cases/{case.pk}/").json()
    verdict = report["verdict"]
    assert verdict["state"] == "problem" and case.root_cause_key == "tmp-table-churn"
    assert verdict["root_cause"] == next(f for f in report["findings"] if f["key"] == "tmp-table-churn")
    assert [f["key"] for f in verdict["chain"]][0] == "tmp-table-churn"
    for name in ("chain", "explains", "also_found"):
        assert all(f in report["findings"] for f in verdict[name]), name
    assert all({"cause", "effect", "join", "sentence", "evidence"} == set(li) for li in verdict["links"])
    assert verdict["fix"] == verdict["root_cause"]["recommendation"]
    assert set(verdict["coverage"]) == {"evaluated", "not_evaluated", "failed", "missing"}


def test_a_case_analysed_before_verdicts_were_kept_serves_none(api: Client, cases) -> None:
    case = cases["vmstat"]
    Case.objects.filter(pk=case.pk).update(verdict={})
    try:
        assert api.get(f"/api/cases/{case.pk}/").json()["verdict"] is None
    finally:
        Case.objects.filter(pk=case.pk).update(verdict=case.verdict)


def test_the_status_of_a_ready_case(api: Client, cases) -> None:
    status = api.get(f"/api/cases/{cases['example'].pk}/status/").json()
    assert (status["status"], status["ready"], status["progress"], status["processing"]) == (
        "ready",
        True,
        100,
        False,
    )


def test_findings_come_most_severe_first_with_their_evidence(api: Client, cases) -> None:
    body = api.get(f"/api/cases/{cases['example'].pk}/findings/").json()
    severities = [f["severity"] for f in body["findings"]]
    assert severities == sorted(severities, key=severity_rank)
    assert severities.count("critical") == 2 and len(severities) == len(EXAMPLE_KEYS)
    tmp = next(f for f in body["findings"] if f["key"] == "tmp-table-churn")
    assert any(e["series"].startswith("mysqladmin.Created_tmp") for e in tmp["evidence"])
    assert all(e["member"].startswith("ptstalk-mariadb-tmptables/") for e in tmp["evidence"] if e["member"])


def test_series_are_listed_with_their_point_counts(api: Client, cases) -> None:
    body = api.get(f"/api/cases/{cases['example'].pk}/series/").json()
    by_name = {s["name"]: s for s in body["series"]}
    assert by_name["vmstat.r"]["points"] >= 19 and "data" not in by_name["vmstat.r"]
    assert by_name["vmstat.r"]["first"].startswith("2026-11-22T12:30:4")


def test_series_points_are_read_in_a_range_and_downsampled(api: Client, cases) -> None:
    url = f"/api/cases/{cases['example'].pk}/series/"
    whole = api.get(url, {"name": ["vmstat.r", "vmstat.id", "no.such"]}).json()["series"]
    assert [s["name"] for s in whole] == ["vmstat.id", "vmstat.r"]
    r = whole[1]["data"]
    assert len(r) == whole[1]["points"] and max(v for _, v in r) >= 19
    start, end = r[2][0], r[6][0]
    iso = [datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat() for ms in (start, end)]
    window = api.get(url, {"name": "vmstat.r", "start": iso[0], "end": iso[1]}).json()["series"][0]["data"]
    assert [t for t, _ in window] == [t for t, _ in r[2:7]]
    few = api.get(url, {"name": "vmstat.r", "max_points": 10}).json()["series"][0]["data"]
    assert len(few) <= 10 and max(v for _, v in few) == max(v for _, v in r)  # the peak is kept


def test_a_moment_shows_the_sessions_and_threads_then(api: Client, cases) -> None:
    body = api.get(f"/api/cases/{cases['example'].pk}/moment/", {"at": "2026-11-22T12:31:00Z"}).json()
    assert body["at"] == int(datetime(2026, 11, 22, 12, 31, tzinfo=UTC).timestamp() * 1000)
    rows = body["processlist"]["rows"]
    assert body["processlist"]["active"] == sum(bool(s["active"]) for s in rows) > 40
    assert any(s["fingerprint"] == EXAMPLE_FINGERPRINT for s in rows)
    assert body["raw"] is not None


def test_a_moment_needs_a_time(api: Client, cases) -> None:
    answer = api.get(f"/api/cases/{cases['example'].pk}/moment/", {"at": "yesterday-ish"})
    assert answer.status_code == 400
    assert answer.json()["message"] == "The request is not valid." and "at" in answer.json()["extra"]


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1969-12-31T23:59:59Z"])
def test_a_moment_outside_1970_to_9999_is_400(api: Client, cases, at: str) -> None:
    # Found by the schemathesis run: a window around year 1 overflowed datetime (a 500).
    answer = api.get(f"/api/cases/{cases['example'].pk}/moment/", {"at": at})
    assert answer.status_code == 400 and answer.json()["extra"]["at"][0].startswith(
        "Must lie between 1970-01-01"
    )


def test_cases_are_listed_page_by_page(api: Client, cases) -> None:
    first = api.get("/api/cases/", {"page_size": 1}).json()
    assert first["count"] == 2 and first["previous"] is None
    assert [c["id"] for c in first["results"]] == [cases["vmstat"].pk]  # newest first
    second = api.get(first["next"]).json()
    assert [c["id"] for c in second["results"]] == [cases["example"].pk] and second["next"] is None
    assert set(second["results"][0]["finding_keys"]) == EXAMPLE_KEYS


def test_a_page_past_the_last_is_404(api: Client, cases) -> None:
    answer = api.get("/api/cases/", {"page": 9})
    assert answer.status_code == 404 and answer.json() == {"message": "Invalid page.", "extra": {}}


def test_cases_are_searched_by_finding_key_and_fingerprint(api: Client, cases) -> None:
    for q in ("tmp-table-churn", "casebook_load.t group by"):
        found = api.get("/api/cases/", {"q": q}).json()
        assert [c["id"] for c in found["results"]] == [cases["example"].pk], q


def test_compare_says_what_disappeared_and_which_queries_are_gone(api: Client, cases) -> None:
    before, after = cases["example"], cases["vmstat"]
    body = api.get("/api/compare/", {"base": before.pk, "other": after.pk}).json()
    assert body["base"]["id"] == before.pk and body["other"]["title"] == "quiet host"
    assert {f["key"] for f in body["findings"]["disappeared"]} == EXAMPLE_KEYS
    assert body["findings"]["appeared"] == [] and body["findings"]["changed_severity"] == []
    assert EXAMPLE_FINGERPRINT in body["fingerprints"]["gone"] and body["fingerprints"]["new"] == []


def test_compare_the_other_way_round_says_what_appeared(api: Client, cases) -> None:
    body = api.get("/api/compare/", {"base": cases["vmstat"].pk, "other": cases["example"].pk}).json()
    assert [f["severity"] for f in body["findings"]["appeared"]][:2] == ["critical", "critical"]
    assert body["fingerprints"]["new"][0] == EXAMPLE_FINGERPRINT


def test_compare_needs_two_case_ids(api: Client, cases) -> None:
    answer = api.get("/api/compare/", {"base": cases["example"].pk})
    assert answer.status_code == 400 and "other" in answer.json()["extra"]


@pytest.mark.parametrize("index", range(6))
def test_a_case_the_user_may_not_see_is_404_on_every_endpoint(
    api: Client, cases, monkeypatch, index: int
) -> None:
    hidden = cases["example"]
    visible_only = selectors.cases_for

    def cases_for(user):  # the team rule: here, every case but the hidden one
        return visible_only(user).exclude(pk=hidden.pk)

    monkeypatch.setattr(selectors, "cases_for", cases_for)
    url = _case_urls(hidden.pk)[index]
    answer = api.get(url)
    assert answer.status_code == 404, url
    assert answer.json() == {"message": "No Case matches the given query.", "extra": {}}
    listed = api.get("/api/cases/").json()
    assert hidden.pk not in [c["id"] for c in listed["results"]] and listed["count"] == 1


@pytest.mark.parametrize("index", range(6))
def test_an_unknown_case_is_404(api: Client, cases, index: int) -> None:
    assert api.get(_case_urls(999_999)[index]).status_code == 404


@pytest.mark.parametrize("index", range(6))
def test_every_endpoint_needs_a_token(client: Client, cases, index: int) -> None:
    assert client.get(_case_urls(cases["example"].pk)[index]).status_code == 401


def test_an_unknown_api_path_is_a_json_404(api: Client) -> None:
    answer = api.get("/api/cases/-3/\r\nx/")
    assert answer.status_code == 404 and answer.json()["message"].startswith("No such API endpoint")
