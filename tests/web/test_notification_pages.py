"""The pages of notifications: a team admin adds a webhook (its secret shown once), sends a test
through a real Celery worker to a receiver on loopback and reads the delivery log; sets the ticket
link template; a user turns the ready/failed mail off. Another team's admin gets 404."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.web.receivers import Receiver, wait_for
from web.accounts import teams
from web.models import (
    AuditAction,
    AuditEvent,
    NotificationPreference,
    Team,
    Webhook,
    WebhookDelivery,
    default_team_id,
)


def _admin(name: str, team: Team) -> Client:
    user = get_user_model().objects.create_user(name, password="x" * 20, email=f"{name}@example.com")
    teams.member_add(team=team, user=user, admin=True)
    client = Client()
    client.force_login(user)
    return client


def test_an_admin_adds_a_webhook_sends_a_test_and_reads_the_log(celery_worker, settings) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = True
    team = Team.objects.get(pk=default_team_id())
    client = _admin("tess", team)
    receiver = Receiver([])
    try:
        response = client.post(
            f"/teams/{team.pk}/webhooks/",
            {"name": "oncall", "url": receiver.url, "on_ready": "on", "send_hosts": "on"},
        )
        assert response.status_code == 302
        hook = Webhook.objects.get(team=team)
        assert (hook.on_ready, hook.on_failed, hook.send_hosts) == (True, False, True)
        page = client.get(f"/teams/{team.pk}/").content.decode()
        assert hook.secret in page and "url-secret" not in page  # the URL's query may be a token
        again = client.get(f"/teams/{team.pk}/").content.decode()
        assert hook.secret not in again
        assert client.post(f"/teams/{team.pk}/webhooks/{hook.pk}/test/").status_code == 302
        wait_for(lambda: WebhookDelivery.objects.filter(webhook=hook).exists(), timeout=60)
        [(headers, _)] = receiver.requests
        assert headers["X-Casebook-Event"] == "test"
        log = client.get(f"/teams/{team.pk}/").content.decode()
        assert re.search(r"<td>test</td><td>–</td><td>1</td><td>200</td>", log)
    finally:
        receiver.close()
    detail = AuditEvent.objects.get(action=AuditAction.WEBHOOK_ADDED).detail
    assert hook.secret not in str(detail) and "url-secret" not in str(detail)


def test_a_private_url_is_refused_and_another_team_answers_404(db, settings) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = False
    team = Team.objects.get(pk=default_team_id())
    client = _admin("tess", team)
    response = client.post(f"/teams/{team.pk}/webhooks/", {"url": "http://127.0.0.1:9/x"}, follow=True)
    assert "non-public address" in response.content.decode() and not Webhook.objects.exists()
    other = Team.objects.create(name="Other")
    assert client.post(f"/teams/{other.pk}/webhooks/", {"url": "https://example.com/"}).status_code == 404
    assert client.post(f"/teams/{other.pk}/ticket-template/", {"ticket_url_template": "x"}).status_code == 404


def test_the_ticket_template_is_checked_and_audited(db) -> None:
    team = Team.objects.get(pk=default_team_id())
    client = _admin("tess", team)
    client.post(f"/teams/{team.pk}/ticket-template/", {"ticket_url_template": "javascript:x({ticket})"})
    team.refresh_from_db()
    assert team.ticket_url_template == ""
    client.post(
        f"/teams/{team.pk}/ticket-template/", {"ticket_url_template": "https://t.example.com/{ticket}"}
    )
    team.refresh_from_db()
    assert team.ticket_url_template == "https://t.example.com/{ticket}"
    assert AuditEvent.objects.filter(action=AuditAction.TICKET_TEMPLATE_SET).count() == 1


def test_a_user_turns_the_mail_off_and_on(engineer_client: Client, engineer) -> None:
    assert 'id="email-case-done" checked' in engineer_client.get("/settings/").content.decode()
    engineer_client.post("/settings/notifications/", {})
    assert NotificationPreference.objects.get(user=engineer).email_case_done is False
    assert 'id="email-case-done" checked' not in engineer_client.get("/settings/").content.decode()
    engineer_client.post("/settings/notifications/", {"email_case_done": "on"})
    assert NotificationPreference.objects.get(user=engineer).email_case_done is True


@pytest.mark.parametrize("path", ["/settings/notifications/"])
def test_anonymous_is_sent_to_login(client: Client, path: str, db) -> None:
    assert client.post(path).status_code == 302
    assert not NotificationPreference.objects.exists()
