"""Resolutions: a case closed with what fixed it, found again through similar cases built from real
captures (tests/fixtures/loads: MariaDB 10.11 idle, and 64 sessions churning on-disk temporary tables),
through search, the open/closed filter, the API; and the team's ticket links on the case page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client

from tests.web.history import ingest, load_bundle
from web.cases import services
from web.history import similar
from web.models import AuditAction, AuditEvent, Case, Team, default_team_id

FIX = "Moved **tmpdir** to tmpfs and raised `tmp_table_size`.\n\n<script>alert(1)</script>"


@pytest.fixture
def cases(db, tmp_path: Path) -> dict[str, Case]:
    return {
        "fixed": ingest(load_bundle(tmp_path, "tmptables-64", "fixed"), title="first", customer="ACME"),
        "new": ingest(load_bundle(tmp_path, "tmptables-64", "new"), title="second", customer="Globex"),
        "idle": ingest(load_bundle(tmp_path, "idle", "idle"), title="quiet"),
        "foreign": ingest(
            load_bundle(tmp_path, "tmptables-64", "foreign"),
            title="theirs",
            team=Team.objects.get_or_create(name="Other")[0],
        ),
    }


def _close(client: Client, case: Case, text: str = FIX, category: str = "configuration") -> None:
    response = client.post(f"/cases/{case.pk}/close/", {"resolution": text, "category": category})
    assert response.status_code == 302


def test_the_next_similar_case_shows_how_the_first_was_fixed(cases, engineer_client: Client) -> None:
    fixed, new = cases["fixed"], cases["new"]
    assert fixed.wait_channels and fixed.fingerprints, "the capture must carry what cases are compared by"
    _close(engineer_client, fixed)
    fixed.refresh_from_db()
    assert fixed.closed_at and fixed.resolution_category == "configuration"
    page = engineer_client.get(f"/cases/{new.pk}/").content.decode()
    verdict = page[page.index('id="verdict"') : page.index('id="findings"')]
    assert f"Case {fixed.pk}</a> (ACME): same " in verdict
    assert "fixed: Moved tmpdir to tmpfs and raised tmp_table_size." in verdict
    past = page[page.index('id="past-resolutions"') :]
    assert "<strong>tmpdir</strong>" in past and "<script>alert" not in page
    [row] = similar.past_resolutions(case=new, candidates=Case.objects.filter(team_id=default_team_id()))
    assert row["id"] == fixed.pk and "wait channel" in row["same"] and "quer" in row["same"]
    assert row["sentence"].startswith(f"Case {fixed.pk} (ACME): same ")
    # a case of another team is never offered, nor is a case without the same signs
    services.case_close(
        case_id=cases["foreign"].pk, user=None, resolution="their secret fix", category="query"
    )
    assert "their secret fix" not in engineer_client.get(f"/cases/{new.pk}/").content.decode()
    idle_page = engineer_client.get(f"/cases/{cases['idle'].pk}/").content.decode()
    if not set(cases["idle"].finding_keys) & set(fixed.finding_keys):
        assert 'id="past-resolutions"' not in idle_page
    # reopened: no longer offered as a fix
    assert engineer_client.post(f"/cases/{fixed.pk}/reopen/").status_code == 302
    assert 'id="past-resolutions"' not in engineer_client.get(f"/cases/{new.pk}/").content.decode()
    actions = list(AuditEvent.objects.filter(case_id=fixed.pk).values_list("action", flat=True))
    assert AuditAction.CASE_CLOSED in actions and AuditAction.CASE_REOPENED in actions


def test_the_best_match_comes_first(cases, engineer_client: Client) -> None:
    _close(engineer_client, cases["idle"], "Nothing was wrong: the capture was taken at night.", "other")
    _close(engineer_client, cases["fixed"])
    rows = similar.past_resolutions(
        case=cases["new"], candidates=Case.objects.filter(team_id=default_team_id())
    )
    assert rows[0]["id"] == cases["fixed"].pk
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)


def test_search_and_the_open_closed_filter_find_resolutions(cases, engineer_client: Client) -> None:
    _close(engineer_client, cases["fixed"])

    def listed(query: str) -> set[int]:
        html = engineer_client.get(f"/cases/?{query}").content.decode()
        return {int(i) for i in re.findall(r'href="/cases/(\d+)/"', html)}

    assert listed("q=tmpfs") == {cases["fixed"].pk}
    assert listed("state=closed") == {cases["fixed"].pk}
    assert listed("state=open") == {cases["new"].pk, cases["idle"].pk}


def test_the_api_closes_reads_and_reopens(cases, api_client: Client) -> None:
    case = cases["new"]
    url = f"/api/cases/{case.pk}/resolution/"
    assert api_client.get(url).status_code == 404
    bad = api_client.post(
        url, json.dumps({"text": "x", "category": "magic"}), content_type="application/json"
    )
    assert bad.status_code == 400
    ok = api_client.post(
        url,
        json.dumps({"text": "Index on orders(created)", "category": "query"}),
        content_type="application/json",
    )
    assert ok.status_code == 200 and ok.json()["category"] == "query"
    status = api_client.get(f"/api/cases/{case.pk}/status/").json()
    assert status["resolution"]["text"] == "Index on orders(created)"
    assert api_client.delete(url).status_code == 204
    assert api_client.get(f"/api/cases/{case.pk}/status/").json()["resolution"] is None
    other = api_client.post(
        f"/api/cases/{cases['foreign'].pk}/resolution/",
        json.dumps({"text": "x", "category": "query"}),
        content_type="application/json",
    )
    assert other.status_code == 404


def test_the_ticket_is_a_link_under_the_team_template(cases, engineer_client: Client) -> None:
    case = cases["new"]
    team = case.team
    team.ticket_url_template = "https://tickets.example.com/browse/{ticket}"
    team.save()
    Case.objects.filter(pk=case.pk).update(ticket='ZD-1"><script>x</script>')
    page = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    assert 'href="https://tickets.example.com/browse/ZD-1%22%3E%3Cscript%3Ex%3C%2Fscript%3E"' in page
    assert "<script>x</script>" not in page and "ZD-1&quot;&gt;&lt;script&gt;" in page
    team.ticket_url_template = ""
    team.save()
    assert 'id="meta-ticket-link"' not in engineer_client.get(f"/cases/{case.pk}/").content.decode()


def test_what_two_cases_share_reads_as_words() -> None:
    reasons = [
        {"kind": "fingerprints", "shared": ["select a", "select b"]},
        {"kind": "wait_channels", "shared": ["do_unlinkat"]},
        {"kind": "finding_keys", "shared": ["same-query-pileup", "tmp-table-churn"]},
    ]
    assert (
        similar.same_words(reasons)
        == "same-query-pileup/tmp-table-churn, wait channel do_unlinkat and 2 queries"
    )
    assert similar.same_words(reasons[:1]) == "2 queries"
    assert similar.resolution_summary("\n## Moved **tmpdir** to `tmpfs`\nmore") == "Moved tmpdir to tmpfs"
    assert similar.resolution_summary("1. Raised tmp_table_size") == "Raised tmp_table_size"
