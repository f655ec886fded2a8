"""Access control, as a table: every view, JSON endpoint and API call that touches a case, for an
engineer of the case's team, an engineer of another team, a team admin of another team, a site admin
who is no member of the team, and an anonymous visitor; the Django admin's pages for every role
(site admins only); the team admin's pages (that team's admins only); the answers to a team
invitation (its invitee only).

What a user may not see answers 404 (never 403, which would confirm the case exists); an anonymous
visitor of a page is sent to the login page, and the API asks him to authenticate (401/403 before any
case is looked up). Rows for share-link holders are added where share links are built.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLResolver, get_resolver

from analyzer.isotime import iso_utc
from tests.web.conftest import VMSTAT, make_tar
from web.accounts import invitations, teams
from web.cases import selectors, services
from web.ingest import tasks
from web.models import Case, Team, TeamInvitation, default_team_id
from web.sharing import services as shares

pytestmark = pytest.mark.django_db


def _case_routes() -> list[str]:
    """Every route of the URLconf that names a case (``case_id``), as a URL template with ``{id}`` for
    the case and ``{share}``, ``{team}``, ``{fmt}`` for the other parts: read from the URLconf, so a
    new case endpoint is in this table the moment it is routed."""
    found: list[str] = []

    def walk(patterns: list, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif "<int:case_id>" in (route := prefix + str(p.pattern)):
                found.append("/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: "{" + PARTS[m[1]] + "}", route))

    walk(get_resolver().url_patterns, "")
    return found


#: The URL part each route parameter takes.
PARTS = {"case_id": "id", "share_id": "share", "team_id": "team", "fmt": "fmt"}
CASE_ROUTES = _case_routes()
#: A query string the route needs to answer its normal answer (the rest take none).
QUERIES = {
    "/cases/{id}/moment.json": "?t={t}",
    "/api/cases/{id}/moment/": "?at={at}",
    "/cases/{id}/shares/{share}/preview/moment.json": "?t={t}",
    "/cases/{id}/compare/": "?with={id}",
    "/cases/{id}/compare.json": "?with={id}",
}
#: The team engineer's answer where it is not a success (2xx or a redirect).
ENGINEER_ANSWERS = {
    "/api/cases/{id}/bundles/": {400},  # no bundle: 400 naming the field
    "/cases/{id}/shares/": {400},  # the new-link form posted without its fields
    "/api/cases/{id}/resolution/": {404},  # an open case has no resolution yet
    "/cases/{id}/shares/{share}/preview/bundle/": {404},  # the link does not hand out the bundle
    "/teams/{team}/cases/{id}/shares/revoke/": {404},  # the team admin's page: not an engineer's
}
#: What an anonymous visitor gets: a page sends him to log in, the API asks him to authenticate,
#: any other URL answers 404.
ANONYMOUS_PAGES = {"/cases/{id}/", "/cases/{id}/compare/", "/cases/{id}/events/"}


def test_the_table_holds_every_case_route() -> None:
    """The routes come from the URLconf: pages, JSON, CSV, the API, share previews, the team's page."""
    assert len(CASE_ROUTES) >= 38, CASE_ROUTES
    assert {"/cases/{id}/", "/api/cases/{id}/", "/cases/{id}/shares/{share}/preview/"} <= set(CASE_ROUTES)
    assert set(QUERIES) | set(ENGINEER_ANSWERS) | ANONYMOUS_PAGES <= set(CASE_ROUTES)


@pytest.fixture
def case(tmp_path: Path, private_queue: str) -> Case:
    """A ready case of the default team (the team of ``engineer``; ``other_engineer`` is not in it)."""
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        made = services.case_create(user=None, file=File(fh), original_name="b.tgz", enqueue=False)
    tasks.case_ingest(case_id=made.pk)
    return Case.objects.get(pk=made.pk)


@pytest.fixture
def share(case: Case, engineer):  # noqa: ANN001, ANN201 - a user; the share made
    return shares.share_create(case=case, user=engineer).share


def _call(client: Client, template: str, case: Case, share):  # noqa: ANN001, ANN202 - a Share; a response
    """GET the route; a route that takes only POST (405) is posted a small form instead."""
    start = case.window_start
    parts = {"id": case.pk, "t": int(start.timestamp() * 1000), "at": iso_utc(start), "team": case.team_id}
    url = (template + QUERIES.get(template, "")).format(**parts, share=share.pk, fmt="json")
    response = client.get(url)
    if response.status_code == 405:
        response = client.post(url, {"customer": "Acme", "notes": "x"})
    return response


@pytest.mark.parametrize("template", CASE_ROUTES)
def test_an_engineer_of_the_team_reaches_the_case(
    engineer_client: Client, case: Case, share, template: str
) -> None:
    status = _call(engineer_client, template, case, share).status_code
    assert status in ENGINEER_ANSWERS.get(template, {200, 201, 302}), (template, status)


def _refused(client: Client, case: Case, share) -> dict[str, int]:  # noqa: ANN001 - a Share
    """The routes that did not answer 404 to ``client``: with their status. Nobody refused changes
    anything, so one case serves every route."""
    answers = {t: _call(client, t, case, share).status_code for t in CASE_ROUTES}
    return {t: status for t, status in answers.items() if status != 404}


def test_an_engineer_of_another_team_gets_404(other_client: Client, case: Case, share) -> None:
    assert _refused(other_client, case, share) == {}


def test_a_team_admin_of_another_team_gets_404(other_admin_client: Client, case: Case, share) -> None:
    assert _refused(other_admin_client, case, share) == {}


def test_a_site_admin_outside_the_team_gets_404_outside_the_admin(
    site_admin_client: Client, case: Case, share
) -> None:
    assert _refused(site_admin_client, case, share) == {}


def test_an_anonymous_visitor_gets_nothing(client: Client, case: Case, share) -> None:
    wrong = {}
    for template in CASE_ROUTES:
        response = _call(client, template, case, share)
        to_login = response.status_code == 302 and response["Location"].startswith("/accounts/login/")
        if template.startswith("/api/"):
            ok = response.status_code in (401, 403)
        elif template in ANONYMOUS_PAGES:
            ok = to_login
        else:
            ok = response.status_code == 404 or to_login
        if not ok:
            wrong[template] = response.status_code
    assert not wrong, wrong


#: The Django admin's pages, a case's among them: for site admins only.
ADMIN_URLS = [
    "/admin/",
    "/admin/web/case/",
    "/admin/web/case/{id}/change/",
    "/admin/web/team/",
    "/admin/web/team/{team}/change/",
    "/admin/auth/user/",
    "/admin/web/auditevent/",
    "/admin/web/teaminvitation/",
    "/admin/axes/accessattempt/",
]


@pytest.fixture
def team_admin(db):
    """An admin of the default team (the case's team): a member who manages it, no site admin."""
    user = get_user_model().objects.create_user("tess", password="correct horse battery")
    teams.member_add(team=Team.objects.get(pk=default_team_id()), user=user, admin=True)
    return user


@pytest.fixture
def other_admin_client(db) -> Client:
    """An admin of another team ("Other"), with is_staff on: still no admin page, no case of ours."""
    user = get_user_model().objects.create_user("olga", password="correct horse battery", is_staff=True)
    teams.member_add(team=Team.objects.get_or_create(name="Other")[0], user=user, admin=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def site_admin_client(db) -> Client:
    """A site admin (Django superuser) who is a member of no team."""
    user = get_user_model().objects.create_superuser("root", password="correct horse battery")
    client = Client()
    client.force_login(user)
    return client


def _logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("template", ADMIN_URLS)
def test_the_admin_is_for_site_admins_only(
    engineer_client: Client,
    other_client: Client,
    other_admin_client: Client,
    team_admin,
    site_admin_client: Client,
    client: Client,
    case: Case,
    template: str,
) -> None:
    case.title = "Team Default's secret outage"
    case.save(update_fields=["title"])
    url = template.format(id=case.pk, team=case.team_id)
    for refused in (engineer_client, other_client, other_admin_client, _logged_in(team_admin), client):
        response = refused.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url
        page = refused.get(response["Location"])
        assert b"secret outage" not in page.content
    response = site_admin_client.get(url)
    assert response.status_code == 200, url
    if "/case/" in template:
        assert b"secret outage" in response.content


#: (method, URL template) of the team admin's pages and the team's trail: that team's admins only.
TEAM_ENDPOINTS = [
    ("get", "/teams/{team}/"),
    ("get", "/teams/{team}/events.csv"),
    ("get", "/api/events/?team={team}"),
    ("post", "/teams/{team}/invitations/"),
    ("post", "/teams/{team}/invitations/{invitation}/withdraw/"),
    ("post", "/teams/{team}/members/{member}/remove/"),
    ("post", "/teams/{team}/shares/{share}/revoke/"),
    ("post", "/teams/{team}/cases/{id}/shares/revoke/"),
    ("post", "/teams/{team}/tokens/{token}/revoke/"),
]


@pytest.mark.parametrize(("method", "template"), TEAM_ENDPOINTS)
def test_the_team_pages_are_for_that_teams_admins_only(
    engineer,
    engineer_client: Client,
    other_client: Client,
    other_admin_client: Client,
    team_admin,
    site_admin_client: Client,
    client: Client,
    case: Case,
    method: str,
    template: str,
) -> None:
    from web.accounts.services import api_token_create

    share = shares.share_create(case=case, user=engineer)
    token = api_token_create(user=engineer, name="script")[0]
    invitee = get_user_model().objects.create_user("ivan", password="correct horse battery")
    invitation = _invite(case.team, invitee, team_admin)
    url = template.format(
        team=case.team_id,
        id=case.pk,
        member=engineer.pk,
        share=share.share.pk,
        token=token.pk,
        invitation=invitation.pk,
    )
    for refused in (engineer_client, other_client, other_admin_client, site_admin_client):
        response = getattr(refused, method)(url, {"name": "bob"} if method == "post" else None)
        assert response.status_code == 404, url
    anonymous = getattr(client, method)(url)
    assert anonymous.status_code in ((401, 403) if url.startswith("/api/") else (302,))
    # Nothing was changed by them.
    share.share.refresh_from_db()
    token.refresh_from_db()
    assert share.share.revoked_at is None and token.revoked_at is None
    assert set(case.team.members.values_list("username", flat=True)) == {"alice", "tess"}
    assert list(TeamInvitation.objects.values_list("user__username", "state")) == [("ivan", "pending")]
    allowed = getattr(_logged_in(team_admin), method)(url, {"name": "bob"} if method == "post" else None)
    assert allowed.status_code == (200 if method == "get" else 302), url


def _invite(team: Team, user, admin) -> TeamInvitation:  # noqa: ANN001
    """A pending invitation of ``user`` to ``team`` by its ``admin`` (the service, as the team page)."""
    from django.test import RequestFactory

    request = RequestFactory().post("/")
    request.user = admin
    return invitations.invitation_create(team=team, name=user.get_username(), request=request)


#: The invitee's answers on his settings page.
INVITATION_ENDPOINTS = [
    "/settings/invitations/{invitation}/accept/",
    "/settings/invitations/{invitation}/decline/",
]


@pytest.mark.parametrize("template", INVITATION_ENDPOINTS)
def test_an_invitation_is_answered_by_its_invitee_only(
    engineer_client: Client,
    other_client: Client,
    other_admin_client: Client,
    team_admin,
    site_admin_client: Client,
    client: Client,
    case: Case,
    template: str,
) -> None:
    invitee = get_user_model().objects.create_user("ivan", password="correct horse battery")
    invitation = _invite(case.team, invitee, team_admin)
    url = template.format(invitation=invitation.pk)
    for refused in (
        engineer_client,
        other_client,
        other_admin_client,
        _logged_in(team_admin),
        site_admin_client,
    ):
        assert refused.post(url).status_code == 404, url
    anonymous = client.post(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    invitation.refresh_from_db()
    assert invitation.state == "pending" and not case.team.members.filter(pk=invitee.pk).exists()
    assert _logged_in(invitee).post(url).status_code == 302
    invitation.refresh_from_db()
    assert invitation.state == ("accepted" if "accept" in template else "declined")
    assert case.team.members.filter(pk=invitee.pk).exists() == ("accept" in template)
    assert _logged_in(invitee).post(url).status_code == 404  # answered once


def test_nothing_was_changed_by_those_who_may_not(other_client: Client, client: Client, case: Case) -> None:
    for c in (other_client, client):
        c.post(f"/cases/{case.pk}/details/", {"customer": "Mallory"})
        c.post(f"/cases/{case.pk}/reanalyze/")
        c.post(f"/cases/{case.pk}/bundles/", {"bundle": SimpleUploadedFile("x.tgz", b"not a bundle")})
        c.post(f"/api/cases/{case.pk}/bundles/", {"bundle": SimpleUploadedFile("x.tgz", b"not a bundle")})
    case.refresh_from_db()
    assert case.customer == "" and case.status == "ready"
    assert not case.added_uploads.exists()


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


#: The team's trends: the page and the API (JSON and CSV), for all the user's teams or one.
TRENDS_URLS = ["/trends/", "/api/trends/", "/api/trends/?export=csv"]


def _trend_cases(response) -> int:
    """How many cases the trends answer counts (page, JSON or CSV)."""
    if response["Content-Type"].startswith("text/csv"):
        rows = response.content.decode().splitlines()[1:]
        return sum(int(row.split(",")[2]) for row in rows)
    data = (
        response.json()
        if response["Content-Type"].startswith("application/json")
        else response.context["data"]
    )
    return sum(b["cases"] for b in data["buckets"])


@pytest.mark.parametrize("url", TRENDS_URLS)
def test_the_trends_count_only_the_teams_cases(
    engineer_client: Client,
    other_client: Client,
    other_admin_client: Client,
    site_admin_client: Client,
    team_admin,
    client: Client,
    case: Case,
    url: str,
) -> None:
    team = f"{'&' if '?' in url else '?'}team={case.team_id}"
    for member in (engineer_client, _logged_in(team_admin)):
        assert _trend_cases(member.get(url)) == 1 and _trend_cases(member.get(url + team)) == 1
    for outsider in (other_client, other_admin_client, site_admin_client):
        assert _trend_cases(outsider.get(url)) == 0
        assert outsider.get(url + team).status_code == 404  # another team's trends: as if it did not exist
    anonymous = client.get(url + team)
    if url.startswith("/api/"):
        assert anonymous.status_code in (401, 403)
    else:
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def test_a_share_link_never_shows_the_trends(client: Client, engineer, case: Case) -> None:
    link = shares.share_create(case=case, user=engineer)
    page = client.get(link.path)
    assert page.status_code == 200 and b"/trends/" not in page.content
    for url in TRENDS_URLS:  # the link's holder is no engineer: the trends ask for a login
        assert client.get(url).status_code in (302, 401, 403)
