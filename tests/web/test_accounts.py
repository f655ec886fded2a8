"""Accounts: login throttling (django-axes), password change and reset by e-mail, the admin's user
and team management, ``create_engineer --team`` and ``analyze --team``."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.test import Client

from web.models import DEFAULT_TEAM_NAME, Team

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def _login(client: Client, username: str, password: str, addr: str = "10.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=addr)


def test_a_good_password_logs_in(engineer) -> None:
    response = _login(Client(), "alice", PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/"


def test_repeated_failed_logins_lock_the_login_out(engineer, settings) -> None:
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(client, "alice", "wrong").status_code == 200  # the form again, with its error
    locked = _login(client, "alice", "wrong")
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    # Locked: even the right password is refused now, from that address.
    assert _login(client, "alice", PASSWORD).status_code == 429
    # Another address, or another login from the same address, is not locked.
    assert _login(Client(), "alice", PASSWORD, addr="10.0.0.2").status_code == 302
    get_user_model().objects.create_user("carol", password=PASSWORD)
    assert _login(Client(), "carol", PASSWORD).status_code == 302


def test_a_success_resets_the_failure_count(engineer, settings) -> None:
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "alice", "wrong")
    assert _login(client, "alice", PASSWORD).status_code == 302
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _login(Client(), "alice", "wrong").status_code == 200


def test_the_api_basic_auth_is_throttled_too(engineer, settings) -> None:
    import base64

    def basic(password: str) -> str:
        return "Basic " + base64.b64encode(f"alice:{password}".encode()).decode()

    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.get("/api/cases/", HTTP_AUTHORIZATION=basic("wrong"), REMOTE_ADDR="10.0.0.9")
    assert (
        client.get("/api/cases/", HTTP_AUTHORIZATION=basic(PASSWORD), REMOTE_ADDR="10.0.0.9").status_code
        != 200
    )


def test_a_password_is_reset_by_e_mail(engineer) -> None:
    engineer.email = "alice@example.com"
    engineer.save()
    client = Client()
    assert client.post("/accounts/password_reset/", {"email": "alice@example.com"}).status_code == 302
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["alice@example.com"]
    link = re.search(r"https?://[^/]+(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    form = client.get(link, follow=True)
    assert b"password-reset-confirm-form" in form.content
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a new long phrase 42", "new_password2": "a new long phrase 42"},
    )
    assert done.status_code == 302
    assert _login(Client(), "alice", "a new long phrase 42").status_code == 302


def test_an_unknown_address_sends_no_mail_and_says_the_same(db) -> None:
    response = Client().post("/accounts/password_reset/", {"email": "nobody@example.com"})
    assert response.status_code == 302 and mail.outbox == []


def test_an_engineer_changes_the_password(engineer_client: Client) -> None:
    page = engineer_client.get("/accounts/password_change/")
    assert page.status_code == 200 and b"password-change-form" in page.content
    response = engineer_client.post(
        "/accounts/password_change/",
        {
            "old_password": PASSWORD,
            "new_password1": "another long phrase 7",
            "new_password2": "another long phrase 7",
        },
    )
    assert response.status_code == 302
    assert _login(Client(), "alice", "another long phrase 7").status_code == 302


def test_the_password_change_page_needs_a_login(client: Client) -> None:
    assert client.get("/accounts/password_change/")["Location"].startswith("/accounts/login/")


def test_create_engineer_joins_the_default_team(db, monkeypatch) -> None:
    monkeypatch.setenv("CASEBOOK_ADMIN_USER", "dave")
    monkeypatch.setenv("CASEBOOK_ADMIN_PASSWORD", PASSWORD)
    call_command("create_engineer", stdout=StringIO())
    assert list(Team.objects.filter(members__username="dave").values_list("name", flat=True)) == [
        DEFAULT_TEAM_NAME
    ]


def test_create_engineer_with_team_makes_the_team_and_joins_it(db, monkeypatch) -> None:
    monkeypatch.setenv("CASEBOOK_ADMIN_USER", "erin")
    monkeypatch.setenv("CASEBOOK_ADMIN_PASSWORD", PASSWORD)
    out = StringIO()
    call_command("create_engineer", "--team", "Support EU", stdout=out)
    assert "created team 'Support EU'" in out.getvalue()
    call_command("create_engineer", "--team", "Support US", stdout=out)  # an existing login joins too
    names = set(Team.objects.filter(members__username="erin").values_list("name", flat=True))
    assert names == {"Support EU", "Support US"}


def test_the_admin_manages_users_and_teams(db) -> None:
    admin = get_user_model().objects.create_superuser("root", password=PASSWORD)
    team = Team.objects.create(name="Support EU")
    client = Client()
    client.force_login(admin)
    assert client.get("/admin/web/team/").status_code == 200
    assert client.get(f"/admin/web/team/{team.pk}/change/").status_code == 200
    assert client.get(f"/admin/auth/user/{admin.pk}/change/").status_code == 200
    assert client.get("/admin/web/case/").status_code == 200
    assert client.get("/admin/axes/accessattempt/").status_code == 200


def test_a_case_edited_in_the_admin_is_found_by_its_new_details(db) -> None:
    from web.cases import selectors
    from web.history.search import CaseFilters
    from web.models import Case

    admin = get_user_model().objects.create_superuser("root", password=PASSWORD)
    team = Team.objects.create(name="Support EU")
    team.members.add(admin)
    case = Case.objects.create(title="slow", team=team)
    client = Client()
    client.force_login(admin)
    response = client.post(
        f"/admin/web/case/{case.pk}/change/",
        {"title": "slow", "team": team.pk, "customer": "Initech", "ticket": "ZD-9", "tags": "", "notes": ""},
    )
    assert response.status_code == 302, response.content[:2000]
    assert [c.pk for c in selectors.case_list(user=admin, filters=CaseFilters(q="initech"))] == [case.pk]
