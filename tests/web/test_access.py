"""Access control, as a table: every view, JSON endpoint and API call that touches a case, for an
engineer of the case's team, an engineer of another team, and an anonymous visitor.

What a user may not see answers 404 (never 403, which would confirm the case exists); an anonymous
visitor of a page is sent to the login page, and the API asks him to authenticate (401/403 before any
case is looked up). Rows for share-link holders are added where share links are built.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files import File
from django.test import Client

from tests.web.conftest import VMSTAT, make_tar
from web.cases import selectors, services
from web.ingest import tasks
from web.models import Case

pytestmark = pytest.mark.django_db

#: (method, URL template, the team engineer's status) for every endpoint that names a case.
CASE_ENDPOINTS = [
    ("get", "/cases/{id}/", 200),
    ("get", "/cases/{id}/status.json", 200),
    ("get", "/cases/{id}/timeline.json", 200),
    ("get", "/cases/{id}/moment.json?t={t}", 200),
    ("get", "/cases/{id}/bundle/", 200),
    ("get", "/cases/{id}/compare/", 200),
    ("get", "/cases/{id}/compare/?with={id}", 200),
    ("get", "/cases/{id}/compare.json?with={id}", 200),
    ("post", "/cases/{id}/details/", 302),
    ("post", "/cases/{id}/reanalyze/", 302),
    ("get", "/api/cases/{id}/", 200),
]
#: What an anonymous visitor gets: pages send him to log in, data answers 404, the API 401/403.
ANONYMOUS = {"/cases/{id}/": {302}, "/cases/{id}/compare/": {302}, "/cases/{id}/compare/?with={id}": {302}}


@pytest.fixture
def case(tmp_path: Path, private_queue: str) -> Case:
    """A ready case of the default team (the team of ``engineer``; ``other_engineer`` is not in it)."""
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        made = services.case_create(user=None, file=File(fh), original_name="b.tgz", enqueue=False)
    tasks.case_ingest(case_id=made.pk)
    return Case.objects.get(pk=made.pk)


def _call(client: Client, method: str, template: str, case: Case):
    url = template.format(id=case.pk, t=int(case.window_start.timestamp() * 1000))
    if method == "post":
        return client.post(url, {"customer": "Acme", "notes": "x"})
    return client.get(url)


@pytest.mark.parametrize(("method", "template", "expected"), CASE_ENDPOINTS)
def test_an_engineer_of_the_team_reaches_the_case(
    engineer_client: Client, case: Case, method: str, template: str, expected: int
) -> None:
    assert _call(engineer_client, method, template, case).status_code == expected


@pytest.mark.parametrize(("method", "template", "expected"), CASE_ENDPOINTS)
def test_an_engineer_of_another_team_gets_404(
    other_client: Client, case: Case, method: str, template: str, expected: int
) -> None:
    assert _call(other_client, method, template, case).status_code == 404


@pytest.mark.parametrize(("method", "template", "expected"), CASE_ENDPOINTS)
def test_an_anonymous_visitor_gets_nothing(
    client: Client, case: Case, method: str, template: str, expected: int
) -> None:
    response = _call(client, method, template, case)
    if template.startswith("/api/"):
        assert response.status_code in (401, 403)
    else:
        assert response.status_code in ANONYMOUS.get(template, {404})
    if response.status_code == 302:
        assert response["Location"].startswith("/accounts/login/")


def test_nothing_was_changed_by_those_who_may_not(other_client: Client, client: Client, case: Case) -> None:
    for c in (other_client, client):
        c.post(f"/cases/{case.pk}/details/", {"customer": "Mallory"})
        c.post(f"/cases/{case.pk}/reanalyze/")
    case.refresh_from_db()
    assert case.customer == "" and case.status == "ready"


def test_comparing_with_a_case_of_another_team_is_404(
    engineer_client: Client, other_engineer, case: Case
) -> None:
    theirs = Case.objects.create(title="theirs", team=other_engineer.teams.get())
    assert engineer_client.get(f"/cases/{case.pk}/compare/?with={theirs.pk}").status_code == 404
    assert engineer_client.get(f"/cases/{case.pk}/compare.json?with={theirs.pk}").status_code == 404


@pytest.mark.parametrize("url", ["/", "/cases/", "/api/cases/", "/api/cases/?status=ready"])
def test_lists_show_only_the_teams_cases(
    engineer_client: Client, other_client: Client, case: Case, url: str
) -> None:
    mine = engineer_client.get(url)
    theirs = other_client.get(url)
    if url.startswith("/api/"):
        assert [c["id"] for c in mine.json()["results"]] == [case.pk]
        assert theirs.json() == {"count": 0, "next": None, "previous": None, "results": []}
    else:
        assert [c["id"] for c in mine.context["cases"]] == [case.pk]
        assert theirs.context["cases"] == []


def test_cases_for_is_the_rule(engineer, other_engineer, case: Case) -> None:
    from django.contrib.auth.models import AnonymousUser

    assert list(selectors.cases_for(engineer)) == [case]
    assert list(selectors.cases_for(other_engineer)) == []
    assert list(selectors.cases_for(AnonymousUser())) == []
    assert list(selectors.cases_for(None)) == []
    engineer.is_active = False
    assert list(selectors.cases_for(engineer)) == []


def test_a_case_made_by_an_engineer_goes_to_the_engineers_team(
    other_client: Client, other_engineer, tmp_path: Path, private_queue: str
) -> None:
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        made = other_client.post("/cases/create/", {"bundle": fh}, HTTP_ACCEPT="application/json").json()
    assert Case.objects.get(pk=made["id"]).team.name == "Other"


def test_an_engineer_cannot_upload_into_a_team_not_his(
    other_client: Client, engineer, tmp_path: Path, private_queue: str
) -> None:
    team = engineer.teams.get()
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        response = other_client.post(
            "/cases/create/", {"bundle": fh, "team": team.pk}, HTTP_ACCEPT="application/json"
        )
    assert response.status_code == 400 and not Case.objects.filter(team=team).exists()


def test_a_login_in_no_team_sees_nothing_and_cannot_upload(db, tmp_path: Path, case: Case) -> None:
    from django.contrib.auth import get_user_model

    loner = get_user_model().objects.create_user("loner", password="correct horse battery")
    client = Client()
    client.force_login(loner)
    assert client.get(f"/cases/{case.pk}/").status_code == 404
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        response = client.post("/cases/create/", {"bundle": fh}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and "no team" in response.json()["message"]
