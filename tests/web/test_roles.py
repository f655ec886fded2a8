"""Roles (issue 20): ``create_engineer`` makes engineers, ``--superuser`` a site admin and
``--team-admin`` a team admin; migration 0097 keeps the first account a site admin and makes the
others engineers; the password reset is throttled per address and per account (real Redis)."""

from __future__ import annotations

import uuid
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from web.models import Team

PASSWORD = "correct horse battery"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("flags", "superuser", "team_admin"),
    [((), False, False), (("--team-admin",), False, True), (("--superuser",), True, False)],
)
def test_create_engineer_makes_the_role_asked(monkeypatch, flags, superuser: bool, team_admin: bool) -> None:
    monkeypatch.setenv("CASEBOOK_ADMIN_USER", "dora")
    monkeypatch.setenv("CASEBOOK_ADMIN_PASSWORD", PASSWORD)
    out = StringIO()
    call_command("create_engineer", "--team", "Red", *flags, stdout=out)
    user = get_user_model().objects.get(username="dora")
    assert (user.is_superuser, user.is_staff) == (superuser, superuser)
    red = Team.objects.get(name="Red")
    assert red.members.filter(pk=user.pk).exists()
    assert red.admins.filter(pk=user.pk).exists() == team_admin
    role = "site admin" if superuser else "team admin" if team_admin else "engineer"
    assert f"created {role} login" in out.getvalue()


@pytest.mark.django_db
def test_an_existing_account_keeps_its_flags(monkeypatch) -> None:
    get_user_model().objects.create_user("eve", password=PASSWORD)
    monkeypatch.setenv("CASEBOOK_ADMIN_USER", "eve")
    call_command("create_engineer", "--superuser", "--team", "Blue", stdout=StringIO())
    eve = get_user_model().objects.get(username="eve")
    assert not eve.is_superuser and Team.objects.get(name="Blue").members.filter(pk=eve.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_the_roles_migration_keeps_the_first_account_a_site_admin() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("web", "0001_squashed_0096_finding_culprit")])
    User = get_user_model()
    # As create_engineer made them before: every account a superuser.
    first = User.objects.create_superuser("first", password=PASSWORD)
    second = User.objects.create_superuser("second", password=PASSWORD)
    third = User.objects.create_user("third", password=PASSWORD, is_staff=True)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    flags = dict(User.objects.values_list("username", "is_superuser"))
    staff = dict(User.objects.values_list("username", "is_staff"))
    assert flags == {"first": True, "second": False, "third": False}
    assert staff == {"first": True, "second": False, "third": False}
    assert first.pk < second.pk < third.pk


def _reset(address: str, email: str):
    return Client().post("/accounts/password_reset/", {"email": email}, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_password_reset_is_throttled_per_account(engineer, settings) -> None:
    engineer.email = f"alice-{uuid.uuid4().hex[:8]}@example.com"
    engineer.save()
    answers = [
        _reset(f"192.0.2.{n}", engineer.email) for n in range(settings.CASEBOOK_RESET_LIMIT_PER_ACCOUNT + 2)
    ]
    # Every answer is the same page; only the first LIMIT sent a mail.
    assert {(r.status_code, r["Location"]) for r in answers} == {(302, "/accounts/password_reset/done/")}
    assert len(mail.outbox) == settings.CASEBOOK_RESET_LIMIT_PER_ACCOUNT
    # Another account is not throttled by it.
    other = get_user_model().objects.create_user(
        "carol", password=PASSWORD, email=f"carol-{uuid.uuid4().hex[:8]}@example.com"
    )
    _reset("192.0.2.200", other.email)
    assert mail.outbox[-1].to == [other.email]


@pytest.mark.django_db
def test_password_reset_is_throttled_per_address(db, settings) -> None:
    settings.CASEBOOK_RESET_LIMIT_PER_ADDRESS = 4
    users = [
        get_user_model().objects.create_user(
            f"u{n}", password=PASSWORD, email=f"u{n}-{uuid.uuid4().hex[:8]}@example.com"
        )
        for n in range(6)
    ]
    for user in users:
        assert _reset("198.51.100.9", user.email).status_code == 302
    assert [m.to[0] for m in mail.outbox] == [u.email for u in users[:4]]
    assert _reset("198.51.100.10", users[5].email).status_code == 302  # another address: sent
    assert mail.outbox[-1].to == [users[5].email]
