"""Membership by consent, tried on a running instance as an auditor would: a real gunicorn
(``scripts/start web``) on the test database, two teams (Red, Blue), a team admin of each, engineers
of each. The Red admin invites an engineer of Blue: nothing changes for him until he answers; he
declines, is invited again, accepts. The Red admin can neither answer for him nor, before he
accepts, see his e-mail or revoke his token; the Blue admin sees none of Red's engineers. An
engineer in both teams must name the team of every API upload (400 listing his teams otherwise).
The team's trail holds every step."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import requests
from django.contrib.auth import get_user_model

from tests.bundles import make_tar
from tests.web.conftest import VMSTAT, processes_on_test_db
from web.accounts import services as api_tokens
from web.accounts import teams
from web.models import ApiToken, Case, Team, TeamInvitation

PASSWORD = "correct horse battery staple"


def _people() -> dict[str, object]:
    User = get_user_model()
    red, blue = Team.objects.create(name="Red"), Team.objects.create(name="Blue")
    made: dict[str, object] = {"red": red, "blue": blue}
    for name, team, admin in (
        ("rita", red, True),
        ("rob", red, False),
        ("bea", blue, True),
        ("ben", blue, False),
    ):
        user = User.objects.create_user(name, password=PASSWORD, email=f"{name}@example.com")
        teams.member_add(team=team, user=user, admin=admin)  # a site admin's act, as create_engineer --team
        made[name] = user
    return made


def _post(
    session: requests.Session, base: str, path: str, data: dict[str, str] | None = None
) -> requests.Response:
    return session.post(
        f"{base}{path}",
        data={**(data or {}), "csrfmiddlewaretoken": session.cookies["csrftoken"]},
        headers={"Referer": f"{base}/"},
        allow_redirects=False,
        timeout=30,
    )


def _members(team: Team) -> set[str]:
    return set(team.members.values_list("username", flat=True))


def test_membership_is_by_consent_on_a_running_instance(
    transactional_db, tmp_path: Path, settings, redis_client
) -> None:
    people = _people()
    red, blue, ben = people["red"], people["blue"], people["ben"]
    ben_token_row, ben_token = api_tokens.api_token_create(user=ben, name="ben's script")
    rob_token_row, _ = api_tokens.api_token_create(user=people["rob"], name="rob's script")
    with processes_on_test_db(tmp_path, settings, redis_client) as stack:
        stack.run("migrate")
        stack.start_web()
        base = stack.base_url
        rita, bea, ben_web = (stack.login_session(name, PASSWORD) for name in ("rita", "bea", "ben"))

        # Rita (Red's admin) invites Ben (Blue) by e-mail: an invitation, no membership.
        assert (
            _post(rita, base, f"/teams/{red.pk}/invitations/", {"name": "BEN@example.com"}).status_code == 302
        )
        assert _members(red) == {"rita", "rob"}
        invitation = TeamInvitation.objects.get(address="BEN@example.com", user=None, team=red)
        page = rita.get(f"{base}/teams/{red.pk}/", timeout=30).text
        assert f'data-invitation-id="{invitation.pk}"' in page and "BEN@example.com" in page
        assert not re.search(r"\bben\b", page) and ben_token_row.prefix not in page  # nor his user name

        # Rita can neither answer for Ben nor revoke his token; Bea (Blue's admin) sees nothing of Red's.
        assert _post(rita, base, f"/settings/invitations/{invitation.pk}/accept/").status_code == 404
        assert rita.get(f"{base}/teams/{blue.pk}/", timeout=30).status_code == 404
        _post(rita, base, f"/teams/{red.pk}/tokens/{ben_token_row.pk}/revoke/")
        blue_page = bea.get(f"{base}/teams/{blue.pk}/", timeout=30).text
        assert "rob@example.com" not in blue_page and rob_token_row.prefix not in blue_page
        _post(bea, base, f"/teams/{blue.pk}/tokens/{rob_token_row.pk}/revoke/")
        assert _post(bea, base, f"/teams/{red.pk}/invitations/", {"name": "bea"}).status_code == 404
        assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()
        assert _members(red) == {"rita", "rob"}

        # Ben sees it on his settings page and declines; invited again, he accepts.
        assert f'data-invitation-id="{invitation.pk}"' in ben_web.get(f"{base}/settings/", timeout=30).text
        assert _post(ben_web, base, f"/settings/invitations/{invitation.pk}/decline/").status_code == 302
        assert _members(red) == {"rita", "rob"}
        _post(rita, base, f"/teams/{red.pk}/invitations/", {"name": "ben"})
        again = TeamInvitation.objects.get(user=ben, team=red, state="pending")
        assert _post(ben_web, base, f"/settings/invitations/{again.pk}/accept/").status_code == 302
        assert _members(red) == {"rita", "rob", "ben"} and _members(blue) == {"bea", "ben"}
        page = rita.get(f"{base}/teams/{red.pk}/", timeout=30).text
        assert "ben@example.com" in page and ben_token_row.prefix in page  # a member now, by his consent

        # In two teams, Ben names the team of every API upload.
        api = {"Authorization": f"Bearer {ben_token}"}
        bundle = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})

        def upload(**data: str) -> requests.Response:
            with bundle.open("rb") as fh:
                return requests.post(
                    f"{base}/api/cases/", headers=api, files={"bundle": ("b.tgz", fh)}, data=data, timeout=60
                )

        refused = upload()
        assert refused.status_code == 400
        assert refused.json()["extra"]["teams"] == [
            {"id": blue.pk, "name": "Blue"},
            {"id": red.pk, "name": "Red"},
        ]
        assert re.search(r"several teams \(Blue, Red\)", refused.json()["message"])
        assert not Case.objects.exists()
        made = upload(team=str(red.pk))
        assert made.status_code == 201 and Case.objects.get(pk=made.json()["id"]).team == red
        green = Team.objects.create(name="Green")
        assert upload(team=str(green.pk)).status_code == 400 and not Case.objects.filter(team=green).exists()

        # The team's trail holds every step, with who did it.
        trail = rita.get(f"{base}/teams/{red.pk}/events.csv", timeout=30).text
    rows = [(r["action"], r["actor"]) for r in csv.DictReader(io.StringIO(trail))]
    for step in (
        ("team.member_invited", "rita"),
        ("team.invitation_declined", "ben"),
        ("team.invitation_accepted", "ben"),
        ("case.uploaded", "ben"),
    ):
        assert step in rows, step
