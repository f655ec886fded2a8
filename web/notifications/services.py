"""The writes of notifications: a finished case handed to the notification tasks after commit,
a team's webhooks made and removed, its ticket link template, a user's mail preference. Team
admin actions are audited (web/audit.py); the webhook's secret never goes into the trail or a log.
"""

from __future__ import annotations

import logging
import secrets
import uuid

from django.db import transaction

from web import audit
from web.faults import BROKER_ERRORS
from web.models import AuditAction, NotificationPreference, Team, Webhook
from web.notifications import tickets, webhooks

log = logging.getLogger(__name__)

#: Webhooks a team has at most.
MAX_WEBHOOKS = 20


def case_finished(*, case_id: int, status: str) -> None:
    """Tell the uploaders and the team's webhooks that ``case_id`` became ``status`` (ready or
    failed), once the current transaction commits (at once outside one). Only hands tasks to the
    broker: an unreachable broker is logged and the ingest goes on."""

    def send() -> None:
        from web.notifications import tasks  # the tasks import this module

        try:  # one message: with Redis down, the publish gives up after ~1.5 s (the publish retry policy)
            tasks.case_finished_task.delay(case_id, status)
        except BROKER_ERRORS as exc:
            log.warning("case %s: notifications not queued (%s)", case_id, exc, extra={"case_id": case_id})

    transaction.on_commit(send)


def webhook_create(
    *, team: Team, name: str, url: str, on_ready: bool, on_failed: bool, send_hosts: bool, request
) -> tuple[Webhook, str]:  # noqa: ANN001 - the admin's request
    """Add a webhook to ``team`` with a fresh secret (256 random bits, hex); returns the row and the
    secret, which the caller shows once. Raises ``WebhookUrlError`` for a URL that may not be used
    and ``ValueError`` past ``MAX_WEBHOOKS``."""
    url = webhooks.check_url(url)
    if team.webhooks.count() >= MAX_WEBHOOKS:
        raise ValueError(f"A team has at most {MAX_WEBHOOKS} webhooks.")
    secret = secrets.token_hex(32)
    hook = Webhook.objects.create(
        team=team,
        name=(name or "").strip()[:100] or webhooks.url_origin(url),
        url=url,
        secret=secret,
        on_ready=on_ready,
        on_failed=on_failed,
        send_hosts=send_hosts,
        created_by=request.user,
    )
    audit.record(
        action=AuditAction.WEBHOOK_ADDED,
        request=request,
        team_id=team.pk,
        detail={"webhook": hook.pk, "name": hook.name, "origin": webhooks.url_origin(url)},
    )
    return hook, secret


def webhook_delete(*, team: Team, webhook_id: int, request) -> bool:  # noqa: ANN001
    """Remove the webhook ``webhook_id`` of ``team`` and its delivery log; False when there is none."""
    hook = team.webhooks.filter(pk=webhook_id).first()
    if hook is None:
        return False
    detail = {"webhook": hook.pk, "name": hook.name, "origin": webhooks.url_origin(hook.url)}
    hook.delete()
    audit.record(action=AuditAction.WEBHOOK_REMOVED, request=request, team_id=team.pk, detail=detail)
    return True


def webhook_send_test(*, team: Team, webhook_id: int, request) -> bool:  # noqa: ANN001, ARG001
    """Queue a test delivery to the webhook ``webhook_id`` of ``team``; False when there is none."""
    from web.notifications import tasks

    hook = team.webhooks.filter(pk=webhook_id).first()
    if hook is None:
        return False
    tasks.webhook_deliver_task.delay(hook.pk, None, webhooks.EVENT_TEST, uuid.uuid4().hex)
    return True


def team_set_ticket_template(*, team: Team, template: str, request) -> str:  # noqa: ANN001
    """Set the team's ticket URL template (``tickets.check_template``: raises ``TicketTemplateError``)."""
    template = tickets.check_template(template)
    if template != team.ticket_url_template:
        team.ticket_url_template = template
        team.save(update_fields=["ticket_url_template"])
        audit.record(
            action=AuditAction.TICKET_TEMPLATE_SET,
            request=request,
            team_id=team.pk,
            detail={"template": template},
        )
    return template


def set_email_case_done(*, user, on: bool) -> None:  # noqa: ANN001
    """Turn the ready/failed mail of ``user`` on or off."""
    NotificationPreference.objects.update_or_create(user=user, defaults={"email_case_done": on})


def email_case_done(user) -> bool:  # noqa: ANN001
    """Whether ``user`` gets the ready/failed mail (on unless turned off)."""
    pref = NotificationPreference.objects.filter(user=user).first()
    return pref is None or pref.email_case_done
