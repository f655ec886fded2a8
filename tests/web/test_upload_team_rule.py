"""The upload team rule (web/cases/services.py ``team_for_new_case``, ``case_upload``): an engineer in
one team uploads into it; one in several names the team on every upload, the page's and the API's
(400 listing his teams otherwise), an upload link's and ``manage.py analyze --user``'s; a team he is
not in is refused. Nothing is made by a refused upload."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from tests.web.conftest import VMSTAT, make_tar
from web.models import Case, Team, UploadLink

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_teams(engineer) -> tuple[Team, Team]:
    """``engineer`` (alice) in the default team and in "Blue"."""
    blue = Team.objects.create(name="Blue")
    blue.members.add(engineer)
    return blue, engineer.teams.get(name="Default")


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})


def _teams(two_teams: tuple[Team, Team]) -> list[dict[str, object]]:
    return [{"id": t.pk, "name": t.name} for t in two_teams]


def test_the_api_asks_a_member_of_several_teams_which(
    api_token: str, two_teams: tuple[Team, Team], bundle: Path, private_queue: str
) -> None:
    client = Client(HTTP_AUTHORIZATION=f"Bearer {api_token}")
    with bundle.open("rb") as fh:
        refused = client.post("/api/cases/", {"bundle": fh})
    assert refused.status_code == 400 and refused.json()["extra"] == {"teams": _teams(two_teams)}
    assert not Case.objects.exists()
    with bundle.open("rb") as fh:
        made = client.post("/api/cases/", {"bundle": fh, "team": two_teams[0].pk})
    assert made.status_code == 201 and Case.objects.get(pk=made.json()["id"]).team == two_teams[0]


def test_the_upload_page_asks_too_and_shows_a_select_without_default(
    engineer_client: Client, two_teams: tuple[Team, Team], bundle: Path, private_queue: str
) -> None:
    page = engineer_client.get("/cases/new/").content.decode()
    assert '<select name="team" id="upload-team" required><option value="">Choose the team</option>' in page
    with bundle.open("rb") as fh:
        refused = engineer_client.post("/cases/create/", {"bundle": fh}, HTTP_ACCEPT="application/json")
    assert refused.status_code == 400 and refused.json()["extra"] == {"teams": _teams(two_teams)}
    with bundle.open("rb") as fh:
        form = engineer_client.post("/cases/create/", {"bundle": fh})
    assert form.status_code == 400 and b"several teams (Blue, Default)" in form.content
    assert not Case.objects.exists()
    with bundle.open("rb") as fh:
        made = engineer_client.post("/cases/create/", {"bundle": fh, "team": two_teams[1].pk})
    assert made.status_code == 302 and Case.objects.get().team == two_teams[1]


def test_an_upload_link_is_made_for_a_named_team(
    engineer_client: Client, api_token: str, two_teams: tuple[Team, Team]
) -> None:
    api = Client(HTTP_AUTHORIZATION=f"Bearer {api_token}")
    refused = api.post("/api/upload-links/", {"days": 7, "uploads": 1}, content_type="application/json")
    assert refused.status_code == 400 and refused.json()["extra"] == {"teams": _teams(two_teams)}
    page = engineer_client.post("/upload-links/create/", {"days": 7, "uploads": 1, "max_size_mb": 10})
    assert page.status_code == 400 and "team" in page.context["form"].errors
    assert not UploadLink.objects.exists()
    assert (
        '<option value="" selected>Choose the team</option>'
        in engineer_client.get("/upload-links/").content.decode()
    )
    made = api.post(
        "/api/upload-links/",
        {"days": 7, "uploads": 1, "team": two_teams[0].pk},
        content_type="application/json",
    )
    assert made.status_code == 201 and UploadLink.objects.get().team == two_teams[0]


def test_analyze_uploads_as_a_user_under_the_same_rule(
    engineer, two_teams: tuple[Team, Team], bundle: Path
) -> None:
    with pytest.raises(CommandError, match=r"several teams \(Blue, Default\)"):
        call_command("analyze", str(bundle), "--json", "--sync", "--user", "alice", stdout=StringIO())
    with pytest.raises(CommandError, match="not a member of that team"):
        Team.objects.create(name="Green")
        call_command(
            "analyze", str(bundle), "--sync", "--user", "alice", "--team", "Green", stdout=StringIO()
        )
    assert not Case.objects.exists()
    out = StringIO()
    call_command("analyze", str(bundle), "--json", "--sync", "--user", "alice", "--team", "Blue", stdout=out)
    case = Case.objects.get(pk=json.loads(out.getvalue())["case"])
    assert case.team == two_teams[0] and case.created_by == engineer


def test_a_member_of_one_team_names_none(api_token: str, engineer, bundle: Path, private_queue: str) -> None:
    with bundle.open("rb") as fh:
        made = Client(HTTP_AUTHORIZATION=f"Bearer {api_token}").post("/api/cases/", {"bundle": fh})
    assert made.status_code == 201 and Case.objects.get().team.name == "Default"
