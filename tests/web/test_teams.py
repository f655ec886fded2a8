"""The team admin's page (web/accounts/teams.py, web/accounts/team_views.py): engineers invited by user name
or e-mail (members once they accept) and members removed, the team's live share links revoked one by one or a
case at a time, the members' API tokens revoked; nothing of another team touched; every change in the audit
trail."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from web.accounts import services as api_tokens
from web.accounts import teams
from web.models import AuditEvent, Case, ShareLink, Team, TeamInvitation, default_team_id
from web.sharing import services as shares

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


@pytest.fixture
def team() -> Team:
    return Team.objects.get(pk=default_team_id())


@pytest.fixture
def admin_client(team: Team) -> Client:
    tess = get_user_model().objects.create_user("tess", password=PASSWORD, email="tess@example.com")
    teams.member_add(team=team, user=tess, admin=True)
    client = Client()
    client.force_login(tess)
    return client


def test_the_user_menu_links_the_team_page_for_its_admins(
    admin_client: Client, engineer_client: Client, team: Team
) -> None:
    assert f'href="/teams/{team.pk}/"'.encode() in admin_client.get("/settings/").content
    assert b"/teams/" not in engineer_client.get("/settings/").content


def test_an_invited_engineer_is_a_member_only_once_he_accepts_and_is_removed(
    admin_client: Client, team: Team, engineer
) -> None:
    User = get_user_model()
    zoe = User.objects.create_user("zoe", password=PASSWORD, email="Zoe@Example.com")
    User.objects.create_user("yan", password=PASSWORD, email="yan.q@example.com")
    admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "zoe@example.com"})
    admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "yan"})
    response = admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "nobody"}, follow=True)
    assert b"No single active account" in response.content
    assert set(team.members.values_list("username", flat=True)) == {"alice", "tess"}
    page = admin_client.get(f"/teams/{team.pk}/")
    assert [i["invitee"] for i in page.context["invitations"]] == ["yan", "zoe@example.com"]
    assert b"yan.q@example.com" not in page.content.lower()  # an invitee's e-mail is not shown
    zoe_client = Client()
    zoe_client.force_login(zoe)
    invitation = TeamInvitation.objects.get(address="zoe@example.com", user=None)
    assert b"Team invitations (1)" in zoe_client.get("/cases/").content
    zoe_client.post(f"/settings/invitations/{invitation.pk}/accept/")
    assert b'id="invitations-link"' not in zoe_client.get("/cases/").content
    admin_client.post(f"/teams/{team.pk}/members/{engineer.pk}/remove/")
    assert set(team.members.values_list("username", flat=True)) == {"tess", "zoe"}
    page = admin_client.get(f"/teams/{team.pk}/")
    assert (
        b"zoe@example.com" in page.content.lower()
        and b'data-member-id="%d"' % engineer.pk not in page.content
    )
    events = [
        (action, detail.get("member"), detail.get("address"))
        for action, detail in AuditEvent.objects.filter(team_id=team.pk)
        .order_by("id")
        .values_list("action", "detail")
    ]
    assert events == [
        ("team.member_invited", None, "zoe@example.com"),
        ("team.member_invited", "yan", None),
        ("team.invitation_accepted", "zoe", "zoe@example.com"),
        ("team.member_removed", "alice", None),
    ]
    assert TeamInvitation.objects.get(pk=invitation.pk).user == zoe  # who answered, for the record


def test_an_invitation_never_names_an_account_outside_the_team(admin_client: Client, team: Team) -> None:
    """Invited by e-mail, an account of another team stays unnamed until it answers: the answer, the
    team page and the team's trail are the same as for an address no account holds."""
    wanda = get_user_model().objects.create_user("wanda", password=PASSWORD, email="W.Mills@example.com")
    Team.objects.create(name="Other").members.add(wanda)
    said = {}
    for address in ("w.mills@example.com", "nobody@example.com"):
        response = admin_client.post(f"/teams/{team.pk}/invitations/", {"name": address}, follow=True)
        said[address] = [str(m).replace(address, "<address>") for m in response.context["messages"]]
        assert response.status_code == 200 and b"wanda" not in response.content
    sent = (
        "Invitation sent to <address>: the account with that address sees it on its settings page, "
        "and is a member of Default once it accepts."
    )
    assert said["w.mills@example.com"] == said["nobody@example.com"] == [sent]
    page = admin_client.get(f"/teams/{team.pk}/")
    assert [i["invitee"] for i in page.context["invitations"]] == [
        "nobody@example.com",
        "w.mills@example.com",
    ]
    trail = b"".join(admin_client.get(f"/teams/{team.pk}/events.csv").streaming_content)
    assert b"wanda" not in page.content and b"wanda" not in trail
    assert list(TeamInvitation.objects.values_list("user", flat=True)) == [None, None]
    # Wanda sees hers on her settings page (her address in another case), and only hers.
    wanda_client = Client()
    wanda_client.force_login(wanda)
    mine = TeamInvitation.objects.get(address="w.mills@example.com")
    settings_page = wanda_client.get("/settings/")
    assert [i.pk for i in settings_page.context["invitations"]] == [mine.pk]
    assert wanda_client.post(f"/settings/invitations/{mine.pk}/accept/").status_code == 302
    assert team.members.filter(pk=wanda.pk).exists()


def test_an_address_a_member_holds_is_not_invited(admin_client: Client, team: Team, engineer) -> None:
    get_user_model().objects.filter(pk=engineer.pk).update(email="alice@example.com")
    response = admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "Alice@example.com"}, follow=True)
    assert b"A member of Default has the address Alice@example.com already." in response.content
    response = admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "not an@address"}, follow=True)
    assert b"is not an e-mail address" in response.content
    assert not TeamInvitation.objects.exists()


def test_the_teams_live_links_are_listed_and_revoked(admin_client: Client, team: Team, engineer) -> None:
    one = Case.objects.create(title="one", team=team)
    two = Case.objects.create(title="two", team=team)
    theirs = Case.objects.create(title="theirs", team=Team.objects.create(name="Other"))
    a = shares.share_create(case=one, user=engineer, label="for Acme").share
    b = shares.share_create(case=two, user=engineer).share
    c = shares.share_create(case=two, user=engineer).share
    expired = shares.share_create(case=one, user=engineer).share
    ShareLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    foreign = shares.share_create(case=theirs, user=None).share
    page = admin_client.get(f"/teams/{team.pk}/")
    listed = {s["id"] for s in page.context["shares"]}
    assert listed == {a.pk, b.pk, c.pk}
    assert next(s for s in page.context["shares"] if s["id"] == a.pk)["created_by"] == "alice"
    admin_client.post(f"/teams/{team.pk}/shares/{a.pk}/revoke/")
    admin_client.post(f"/teams/{team.pk}/cases/{two.pk}/shares/revoke/")
    admin_client.post(f"/teams/{team.pk}/shares/{foreign.pk}/revoke/")
    admin_client.post(f"/teams/{team.pk}/cases/{theirs.pk}/shares/revoke/")
    revoked = set(ShareLink.objects.filter(revoked_at__isnull=False).values_list("pk", flat=True))
    assert revoked == {a.pk, b.pk, c.pk}
    assert ShareLink.objects.get(pk=a.pk).revoked_by.username == "tess"
    assert AuditEvent.objects.filter(action="share.revoked", actor_name="tess").count() == 3


def test_the_members_tokens_are_listed_and_revoked(
    admin_client: Client, team: Team, engineer, other_engineer
) -> None:
    mine, _ = api_tokens.api_token_create(user=engineer, name="ci")
    theirs, _ = api_tokens.api_token_create(user=other_engineer, name="theirs")
    page = admin_client.get(f"/teams/{team.pk}/")
    assert [(t["name"], t["owner"]) for t in page.context["tokens"]] == [("ci", "alice")]
    admin_client.post(f"/teams/{team.pk}/tokens/{theirs.pk}/revoke/")
    admin_client.post(f"/teams/{team.pk}/tokens/{mine.pk}/revoke/")
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.revoked_at is not None and theirs.revoked_at is None
    event = AuditEvent.objects.get(action="token.revoked")
    assert (event.actor_name, event.detail["owner"], event.team_id) == ("tess", "alice", team.pk)
    csv_text = b"".join(admin_client.get(f"/teams/{team.pk}/events.csv").streaming_content).decode()
    assert "token.revoked" in csv_text


def test_an_invitation_withdrawn_or_expired_cannot_be_accepted(admin_client: Client, team: Team) -> None:
    User = get_user_model()
    zoe = User.objects.create_user("zoe", password=PASSWORD)
    yan = User.objects.create_user("yan", password=PASSWORD)
    for name in ("zoe", "yan"):
        admin_client.post(f"/teams/{team.pk}/invitations/", {"name": name})
    withdrawn, expired = zoe.team_invitations.get(), yan.team_invitations.get()
    assert admin_client.post(f"/teams/{team.pk}/invitations/{withdrawn.pk}/withdraw/").status_code == 302
    TeamInvitation.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert admin_client.get(f"/teams/{team.pk}/").context["invitations"] == []
    for user, invitation in ((zoe, withdrawn), (yan, expired)):
        client = Client()
        client.force_login(user)
        assert b"invitation-list" not in client.get("/settings/").content
        assert client.post(f"/settings/invitations/{invitation.pk}/accept/").status_code == 404
    assert set(team.members.values_list("username", flat=True)) == {"tess"}
    assert AuditEvent.objects.filter(action="team.invitation_withdrawn", actor_name="tess").count() == 1


def test_a_member_is_not_invited_and_a_second_invitation_replaces_the_first(
    admin_client: Client, team: Team, engineer
) -> None:
    response = admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "alice"}, follow=True)
    assert b"is a member of Default already" in response.content
    zoe = get_user_model().objects.create_user("zoe", password=PASSWORD)
    admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "zoe"})
    admin_client.post(f"/teams/{team.pk}/invitations/", {"name": "zoe"})
    assert sorted(zoe.team_invitations.values_list("state", flat=True)) == ["pending", "withdrawn"]
