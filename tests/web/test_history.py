"""Team history on cases built from real captures: search, filters, pages, similar cases, comparison,
details and notes, duplicate uploads."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from analyzer.findings import severity_rank
from tests.web.history import example_case, ingest, load_bundle
from web.cases import selectors
from web.history import compare, similar
from web.history.search import CaseFilters
from web.models import Case, CaseStatus, Team
from web.timeline.series import series_arrays

pytestmark = pytest.mark.django_db

DISTINCT = "select distinct note from t where id between ? and ?"


@pytest.fixture(scope="module")
def history(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[dict[str, Case]]:
    """Three cases of the default team (idle, the temporary-table load, the example bundle) and one of
    another team ("Elsewhere") with the same load; ingested once for the module, committed, and
    deleted at its end (each test runs in a transaction rolled back after it)."""
    tmp_path = tmp_path_factory.mktemp("history")
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=tmp_path / "media"):
        cases = _history(tmp_path)
        yield cases
        Case.objects.filter(pk__in=[c.pk for c in cases.values()]).delete()
        Team.objects.filter(name="Elsewhere").delete()


def _history(tmp_path: Path) -> dict[str, Case]:
    other = Team.objects.create(name="Elsewhere")
    return {
        "idle": ingest(load_bundle(tmp_path, "idle", "idle"), title="quiet night", customer="Initech"),
        "tmp": ingest(
            load_bundle(tmp_path, "tmptables-64", "tmp"),
            title="slow reports",
            customer="Acme Corp",
            ticket="ZD-4711",
            tags=["tmpdir", "reports"],
            notes="Customer says reports **stall** at 9:00.",
        ),
        "example": example_case(title="example", customer="Acme Corp"),
        "foreign": ingest(load_bundle(tmp_path, "tmptables-64", "foreign"), title="their case", team=other),
    }


def _ids(engineer, **filters: object) -> list[int]:
    return [c.pk for c in selectors.case_list(user=engineer, filters=CaseFilters(**filters))]  # type: ignore[arg-type]


def test_an_ingest_keeps_what_a_case_is_found_by(history: dict[str, Case]) -> None:
    tmp = history["tmp"]
    # (sessions-waiting: the wait model's informational finding, 64 sessions in temporary tables)
    assert tmp.finding_keys == ["same-query-pileup", "sessions-waiting", "tmp-table-churn"]
    assert tmp.fingerprints == [DISTINCT]
    assert "do_unlinkat" in tmp.wait_channels
    assert history["idle"].finding_keys == [] and history["idle"].fingerprints == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tmp-table-churn", {"tmp", "example"}),  # a finding key
        ("do_unlinkat", {"tmp"}),  # a wait channel of D-state threads
        ("select distinct note", {"tmp"}),  # words of a fingerprint
        (DISTINCT, {"tmp"}),  # a whole fingerprint pasted
        ("group by grp", {"example"}),
        ("4711", {"tmp"}),  # trigram word similarity on the ticket
        ("acme", {"tmp", "example"}),  # the customer
        ("stall", {"tmp"}),  # the notes
        ("reports -stall", set()),  # web search syntax: a word excluded
        ("nothing-like-this", set()),
    ],
)
def test_search_finds_a_past_case_by_what_was_seen(
    history: dict[str, Case], engineer, text: str, expected: set[str]
) -> None:
    names = {v: k for k, v in ((k, c.pk) for k, c in history.items())}
    assert {names[i] for i in _ids(engineer, q=text)} == expected


def test_search_never_reaches_another_teams_cases(history: dict[str, Case], other_engineer) -> None:
    assert _ids(other_engineer, q="do_unlinkat") == []  # bob's team "Other" has no case
    history["foreign"].team.members.add(other_engineer)
    assert _ids(other_engineer, q="do_unlinkat") == [history["foreign"].pk]


def test_host_is_found_by_trigram_similarity(history: dict[str, Case], engineer) -> None:
    Case.objects.filter(pk=history["idle"].pk).update(host="db-prod-3.example.com")
    assert _ids(engineer, q="db-prod-3") == [history["idle"].pk]
    assert _ids(engineer, host="prod-3") == [history["idle"].pk]
    assert _ids(engineer, q="db-prod-3.exmple.com") == [history["idle"].pk]  # a typo: similar, not a part


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"finding_key": "tmp-table-churn"}, {"tmp", "example"}),
        ({"severity": "critical"}, {"tmp", "example"}),
        ({"finding_key": "tmp-table-churn", "severity": "critical"}, {"tmp"}),
        ({"finding_key": "tmp-table-churn", "severity": "warning"}, {"example"}),
        ({"customer": "acme corp"}, {"tmp", "example"}),
        ({"tag": "tmpdir"}, {"tmp"}),
        ({"status": "ready"}, {"idle", "tmp", "example"}),
        ({"status": "failed"}, set()),
        ({"date_from": date(2026, 11, 22), "date_to": date(2026, 11, 22)}, {"idle", "tmp", "example"}),
        ({"date_from": date(2026, 11, 23)}, set()),
        ({"date_to": date(2026, 11, 21)}, set()),
    ],
)
def test_the_case_list_filters(history: dict[str, Case], engineer, filters: dict, expected: set[str]) -> None:
    names = {c.pk: k for k, c in history.items()}
    assert {names[i] for i in _ids(engineer, **filters)} == expected


def test_the_case_list_sorts(history: dict[str, Case], engineer) -> None:
    newest = [history[k].pk for k in ("example", "tmp", "idle")]
    assert _ids(engineer) == newest
    assert _ids(engineer, sort="created") == newest[::-1]
    by_capture = sorted(("idle", "tmp", "example"), key=lambda k: history[k].window_start)
    assert _ids(engineer, sort="captured") == [history[k].pk for k in by_capture]


def _paging_client() -> tuple[Client, Team]:
    """A client signed in as an engineer of a team of its own (no other case in sight)."""
    user = get_user_model().objects.create_user("pager", password="correct horse battery")
    team = Team.objects.create(name="Paging")
    team.members.add(user)
    client = Client()
    client.force_login(user)
    return client, team


def test_the_case_list_pages_and_keeps_its_filters() -> None:
    engineer_client, team = _paging_client()
    Case.objects.bulk_create(
        Case(
            title=f"case {i}",
            team=team,
            customer="Acme" if i % 2 else "Initech",
            status=CaseStatus.FAILED,
            failure_reason="x",
        )
        for i in range(130)
    )
    first = engineer_client.get("/", {"customer": "Acme"})
    assert first.context["page"].paginator.count == 65 and len(first.context["cases"]) == 50
    assert 'href="?customer=Acme&amp;page=2"' in first.content.decode()
    second = engineer_client.get("/", {"customer": "Acme", "page": 2})
    assert len(second.context["cases"]) == 15
    assert {c["customer"] for c in second.context["cases"]} == {"Acme"}


def test_the_api_list_pages() -> None:
    engineer_client, team = _paging_client()
    Case.objects.bulk_create(Case(title=f"case {i}", team=team) for i in range(260))
    page = engineer_client.get("/api/cases/", {"page_size": 100, "page": 3}).json()
    assert page["count"] == 260 and len(page["results"]) == 60 and page["next"] is None
    assert engineer_client.get("/api/cases/").json()["next"].endswith("page=2")


def test_similar_cases_share_findings_wait_channels_and_fingerprints(
    history: dict[str, Case], engineer
) -> None:
    found = similar.similar_cases(case=history["example"], candidates=selectors.cases_for(engineer))
    assert [s["id"] for s in found] == [history["tmp"].pk]  # idle shares nothing, foreign is another team's
    reasons = {r["kind"]: r for r in found[0]["reasons"]}
    assert reasons["finding_keys"]["shared"] == ["same-query-pileup", "tmp-table-churn"]
    either = len(set(history["example"].finding_keys) | set(history["tmp"].finding_keys))
    # "2 of N": N the case's own findings; the score's share is of either case's
    assert reasons["finding_keys"]["label"] == f"2 of {len(history['example'].finding_keys)} findings shared"
    assert found[0]["score"] == round(0.25 * 2 / either, 3)  # rounded to 3 places, as served


def test_a_shared_fingerprint_and_wait_channel_rank_first(
    history: dict[str, Case], engineer, tmp_path: Path
) -> None:
    again = ingest(load_bundle(tmp_path, "tmptables-64", "again"), title="same load, later")
    found = similar.similar_cases(case=history["tmp"], candidates=selectors.cases_for(engineer))
    assert [s["id"] for s in found] == [again.pk, history["example"].pk]
    assert found[0]["score"] == pytest.approx(1.0)
    kinds = {r["kind"]: r["shared"] for r in found[0]["reasons"]}
    assert kinds["fingerprints"] == [DISTINCT] and "do_unlinkat" in kinds["wait_channels"]


def test_the_case_page_shows_similar_cases_and_the_details(
    history: dict[str, Case], engineer_client: Client
) -> None:
    body = engineer_client.get(f"/cases/{history['tmp'].pk}/").content.decode()
    assert f'data-case-id="{history["example"].pk}"' in body
    assert f"2 of {len(history['tmp'].finding_keys)} findings shared" in body
    assert "<strong>stall</strong>" in body and "ZD-4711" in body and "Acme Corp" in body
    assert f'href="/cases/{history["tmp"].pk}/compare/?with={history["example"].pk}"' in body


def test_notes_are_rendered_without_script(history: dict[str, Case], engineer_client: Client) -> None:
    url = f"/cases/{history['idle'].pk}/details/"
    notes = "# Call\n<script>alert(1)</script><img src=x onerror=alert(2)> [x](javascript:alert(3))"
    response = engineer_client.post(
        url, {"customer": "Initech", "ticket": "T-1", "tags": "a, b, A", "notes": notes}
    )
    assert response.status_code == 302
    case = Case.objects.get(pk=history["idle"].pk)
    assert case.tags == ["a", "b"] and case.ticket == "T-1"
    body = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    rendered = body[body.index('id="meta-notes"') : body.index("</div>", body.index('id="meta-notes"'))]
    assert "<h1>Call</h1>" in rendered
    for bad in ("<script", "<img", "onerror", "javascript:"):
        assert bad not in rendered
    assert "<script>alert(1)" not in body  # the form shows the source escaped
    assert [
        c.pk for c in selectors.case_list(user=case.team.members.first(), filters=CaseFilters(q="T-1"))
    ] == [case.pk]


def test_comparison_of_an_idle_capture_and_a_loaded_one(history: dict[str, Case]) -> None:
    idle, tmp = history["idle"], history["tmp"]
    result = compare.compare(idle, tmp, ["vmstat.r", "vmstat.cs", "processlist.active"])
    appeared = result["findings"]["appeared"]  # most severe first
    assert sorted(f["key"] for f in appeared) == ["same-query-pileup", "sessions-waiting", "tmp-table-churn"]
    assert [f["severity"] for f in appeared] == sorted((f["severity"] for f in appeared), key=severity_rank)
    assert result["findings"]["disappeared"] == [] and result["findings"]["changed_severity"] == []
    assert result["fingerprints"]["new"] == [DISTINCT] and result["fingerprints"]["gone"] == []
    by_name = {m["name"]: m for m in result["metrics"]}
    _, values = series_arrays(case=tmp, names=["processlist.active"])["processlist.active"]
    active = by_name["processlist.active"]
    assert active["b"]["median"] == pytest.approx(float(np.median(values)))
    assert active["b"]["p95"] == pytest.approx(float(np.percentile(values, 95)))
    assert active["change"]["median"] == pytest.approx(active["b"]["median"] - active["a"]["median"])
    assert active["b"]["median"] > 50 > active["a"]["median"]  # 64 sessions against an idle server
    for side in ("a", "b"):  # seconds since each capture's start
        xs = [x for x, _ in by_name["vmstat.r"][side]["points"]]
        assert 0 <= xs[0] < 2 and xs == sorted(xs) and xs[-1] < 30


def test_comparison_shows_changed_severities(history: dict[str, Case]) -> None:
    result = compare.compare(history["example"], history["tmp"])
    changed = result["findings"]["changed_severity"]
    assert changed == [
        {
            "key": "tmp-table-churn",
            "title": changed[0]["title"],
            "before": "warning",
            "after": "critical",
            "direction": "worse",
        }
    ]
    assert [f["key"] for f in result["findings"]["disappeared"]] == [
        "active-sessions-overload",
        "cpu-saturation",
        "tcp-retransmits",
    ]
    assert [f["key"] for f in result["findings"]["unchanged"]] == ["same-query-pileup"]
    assert DISTINCT in result["fingerprints"]["new"]
    # The load's query is gone; the collector's own SHOW and information_schema reads are never counted.
    assert result["fingerprints"]["gone"] == [
        "select grp, count(*), sum(n) from casebook_load.t group by grp order by ?"
    ]


def test_the_compare_page_draws_from_local_assets(history: dict[str, Case], engineer_client: Client) -> None:
    url = f"/cases/{history['idle'].pk}/compare/"
    response = engineer_client.get(url, {"with": history["tmp"].pk, "metric": ["vmstat.r", "vmstat.us"]})
    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-change="appeared"' in body and 'id="compare-metrics-data"' in body
    assert "js/pages/case_compare.js" in body and "<script>" not in body.replace(
        '<script type="application/json"', ""
    )
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    data = engineer_client.get(f"{url[:-1]}.json", {"with": history["tmp"].pk}).json()
    assert {m["name"] for m in data["metrics"]} >= {"vmstat.r", "vmstat.us"}


def _upload(client: Client, path: Path, **extra: object):
    with path.open("rb") as fh:
        return client.post("/cases/create/", {"bundle": fh, **extra}, HTTP_ACCEPT="application/json")


def test_an_upload_of_the_same_bytes_links_to_the_earlier_case(
    engineer_client: Client, tmp_path: Path, private_queue: str
) -> None:
    bundle = load_bundle(tmp_path, "idle", "idle")
    first = _upload(engineer_client, bundle)
    assert first.status_code == 201
    again = _upload(engineer_client, bundle)
    assert again.status_code == 409
    assert again.json()["extra"]["duplicate_of"][0]["url"] == first.json()["url"]
    anyway = _upload(engineer_client, bundle, allow_duplicate="on")
    assert anyway.status_code == 201 and anyway.json()["id"] != first.json()["id"]
    page = engineer_client.get(anyway.json()["url"]).content.decode()
    assert 'id="same-bytes"' in page and f'href="{first.json()["url"]}"' in page


def test_the_same_bytes_of_another_team_are_not_revealed(
    engineer_client: Client, other_client: Client, tmp_path: Path, private_queue: str
) -> None:
    bundle = load_bundle(tmp_path, "idle", "idle")
    assert _upload(engineer_client, bundle).status_code == 201
    assert _upload(other_client, bundle).status_code == 201


def test_the_api_upload_says_which_cases_had_the_same_bytes(
    engineer_client: Client, tmp_path: Path, private_queue: str
) -> None:
    bundle = load_bundle(tmp_path, "idle", "idle")
    with bundle.open("rb") as fh:
        first = engineer_client.post("/api/cases/", {"bundle": fh}).json()
    with bundle.open("rb") as fh:
        second = engineer_client.post("/api/cases/", {"bundle": fh}).json()
    assert first["duplicate_of"] == [] and [c["id"] for c in second["duplicate_of"]] == [first["id"]]


def test_a_search_keeps_the_filters_chosen(engineer_client: Client, history: dict[str, Case]) -> None:
    body = engineer_client.get("/", {"customer": "Acme Corp", "severity": "critical"}).content.decode()
    form = body[body.index('id="case-search"') : body.index("</form>", body.index('id="case-search"'))]
    assert '<input type="hidden" name="customer" value="Acme Corp">' in form
    assert '<input type="hidden" name="severity" value="critical">' in form


def test_invalid_details_are_refused_with_the_reason(
    engineer_client: Client, history: dict[str, Case]
) -> None:
    response = engineer_client.post(f"/cases/{history['idle'].pk}/details/", {"ticket": "x" * 101})
    assert response.status_code == 400
    assert "at most 100 characters" in response.content.decode()
    assert Case.objects.get(pk=history["idle"].pk).ticket == ""
