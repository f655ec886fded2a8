"""The audit trail (web/audit.py): every action that changes or exposes a case is recorded, with the
client's network and browser family; it is append-only in PostgreSQL and outlives a deleted case;
engineers read it per case, team admins per team (pages, API, CSV)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files import File
from django.db import DatabaseError, transaction
from django.test import Client

from tests.web.conftest import VMSTAT, make_tar
from web.accounts import teams
from web.cases import services
from web.ingest import tasks
from web.models import AuditEvent, Case, ShareLink, Team, default_team_id

pytestmark = pytest.mark.django_db

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
CHROME = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


@pytest.fixture
def case(tmp_path: Path, engineer) -> Case:
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        made = services.case_create(user=engineer, file=File(fh), original_name="b.tgz", enqueue=False)
    tasks.case_ingest(case_id=made.pk)
    return Case.objects.get(pk=made.pk)


def _actions(**filters) -> list[str]:
    return list(AuditEvent.objects.filter(**filters).order_by("id").values_list("action", flat=True))


def test_the_trail_is_append_only_in_the_database() -> None:
    event = AuditEvent.objects.create(action="case.uploaded", actor_kind="user", actor_name="alice")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(actor_name="mallory")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).delete()
    assert AuditEvent.objects.get(pk=event.pk).actor_name == "alice"


def test_what_engineers_and_customers_do_is_recorded(
    case: Case, engineer_client: Client, client: Client, private_queue: str
) -> None:
    ua = {"HTTP_USER_AGENT": CHROME, "REMOTE_ADDR": "10.20.30.40"}
    engineer_client.post(
        f"/cases/{case.pk}/details/", {"title": "slow", "customer": "Acme", "notes": "x"}, **ua
    )
    assert engineer_client.get(f"/cases/{case.pk}/bundle/", **ua).status_code == 200
    made = engineer_client.post(
        f"/cases/{case.pk}/shares/", {"label": "Acme ops", "days": 3, "allow_bundle": "on"}
    )
    assert made.status_code == 201
    url = re.search(r'id="share-url" value="http://testserver([^"]+)"', made.content.decode()).group(1)
    share = ShareLink.objects.get(case=case)
    assert engineer_client.get(f"/cases/{case.pk}/shares/{share.pk}/preview/").status_code == 200
    customer = {"HTTP_USER_AGENT": FIREFOX, "REMOTE_ADDR": "203.0.113.77"}
    assert client.get(url, **customer).status_code == 200
    assert client.get(url + "bundle/", **customer).status_code == 200
    engineer_client.post(f"/cases/{case.pk}/shares/{share.pk}/revoke/")
    assert client.get(url, **customer).status_code == 404
    engineer_client.post(f"/cases/{case.pk}/reanalyze/")

    assert _actions(case_id=case.pk) == [
        "case.details_edited",
        "bundle.downloaded",
        "share.created",
        "share.previewed",
        "share.viewed",
        "bundle.downloaded",
        "share.revoked",
        "case.reanalyzed",
    ]
    edited = AuditEvent.objects.get(action="case.details_edited")
    assert (edited.actor_name, edited.client, edited.browser, edited.team_id) == (
        "alice",
        "10.20.30.0/24",
        "Chrome",
        case.team_id,
    )
    assert sorted(edited.detail["fields"]) == ["customer", "notes", "title"]
    viewed = AuditEvent.objects.get(action="share.viewed")
    assert (viewed.actor_kind, viewed.actor_name, viewed.share_id) == (
        "share link",
        f"share link #{share.pk}",
        share.pk,
    )
    assert (viewed.client, viewed.browser, viewed.actor_id) == ("203.0.113.0/24", "Firefox", None)
    downloaded = AuditEvent.objects.filter(action="bundle.downloaded").order_by("id").last()
    assert downloaded.actor_kind == "share link"
    created = AuditEvent.objects.get(action="share.created")
    assert created.detail["label"] == "Acme ops" and created.detail["allow_bundle"] is True
    # No token in any event.
    token = url.split("/")[2]
    assert not AuditEvent.objects.filter(detail__icontains=token).exists()
    assert token not in str(list(AuditEvent.objects.values()))


def test_an_upload_is_recorded(engineer_client: Client, tmp_path: Path, private_queue: str) -> None:
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh:
        made = engineer_client.post(
            "/cases/create/", {"bundle": fh}, HTTP_ACCEPT="application/json", HTTP_USER_AGENT="curl/8.5.0"
        ).json()
    (event,) = AuditEvent.objects.filter(case_id=made["id"])
    assert (event.action, event.actor_name, event.browser, event.detail) == (
        "case.uploaded",
        "alice",
        "curl",
        {"name": "b.tgz"},
    )


def test_a_deleted_case_keeps_its_trail(case: Case, engineer_client: Client) -> None:
    engineer_client.get(f"/cases/{case.pk}/bundle/")
    root = get_user_model().objects.create_superuser("root", password="correct horse battery")
    admin = Client()
    admin.force_login(root)
    assert admin.post(f"/admin/web/case/{case.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Case.objects.filter(pk=case.pk).exists()
    assert _actions(case_id=case.pk) == ["bundle.downloaded", "case.deleted"]
    assert AuditEvent.objects.get(action="case.deleted").actor_name == "root"


def test_tokens_and_logins_are_recorded_and_team_admins_read_them(
    engineer, engineer_client: Client, settings
) -> None:
    team = Team.objects.get(pk=default_team_id())
    engineer_client.post("/settings/tokens/", {"name": "ci"})
    token_id = engineer.api_tokens.get().pk
    engineer_client.post(f"/settings/tokens/{token_id}/revoke/")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        Client().post(
            "/accounts/login/",
            {"username": "alice", "password": "not-the-password-42"},
            REMOTE_ADDR="192.0.2.5",
        )
    recorded = _actions(team_id__isnull=True)
    assert recorded[:2] == ["token.created", "token.revoked"]
    # django-axes signals the lockout from within the last failure: both are there, in either order.
    assert sorted(recorded[2:]) == ["login.failed"] * settings.AXES_FAILURE_LIMIT + ["login.locked_out"]
    failed = AuditEvent.objects.filter(action="login.failed").first()
    assert failed.detail == {"username": "alice"} and failed.client == "192.0.2.0/24"
    assert not AuditEvent.objects.filter(detail__icontains="not-the-password-42").exists()

    tess = get_user_model().objects.create_user("tess", password="correct horse battery")
    teams.member_add(team=team, user=tess, admin=True)
    admin = Client()
    admin.force_login(tess)
    page = admin.get(f"/api/events/?team={team.pk}&page_size=5").json()
    assert page["count"] == 3 + settings.AXES_FAILURE_LIMIT and len(page["results"]) == 5
    assert page["results"][0]["action"].startswith("login.")
    assert {"token.created", "token.revoked"} <= {
        e["action"] for e in admin.get(f"/api/events/?team={team.pk}&page=2&page_size=5").json()["results"]
    }
    # An engineer of the team, not its admin, does not read the team's trail.
    assert engineer_client.get(f"/api/events/?team={team.pk}").status_code == 404
    assert engineer_client.get("/api/events/").status_code == 400


def test_the_trail_reads_as_pages_api_and_csv(case: Case, engineer_client: Client) -> None:
    evil = get_user_model().objects.create_user("=HYPERLINK(1)", password="correct horse battery")
    Team.objects.get(pk=default_team_id()).members.add(evil)
    mallory = Client()
    mallory.force_login(evil)
    mallory.get(f"/cases/{case.pk}/bundle/")
    engineer_client.get(f"/cases/{case.pk}/bundle/", HTTP_USER_AGENT=FIREFOX)
    page = engineer_client.get(f"/cases/{case.pk}/events/")
    assert page.status_code == 200 and page.content.count(b'data-action="bundle.downloaded"') == 2
    assert b"Audit trail" in engineer_client.get(f"/cases/{case.pk}/").content
    api = engineer_client.get(f"/api/cases/{case.pk}/events/").json()
    assert (
        api["count"] == 2
        and api["results"][0]["actor"] == "alice"
        and api["results"][0]["browser"] == "Firefox"
    )
    response = engineer_client.get(f"/cases/{case.pk}/events.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["actor"] for r in rows] == ["alice", "'=HYPERLINK(1)"]  # not a formula in a spreadsheet
    assert rows[0]["action"] == "bundle.downloaded" and rows[0]["case_id"] == str(case.pk)
