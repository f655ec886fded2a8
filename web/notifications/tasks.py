"""The notification tasks: thin wrappers that take ids and call one service (emails.py,
webhooks.py). A webhook delivery is retried with exponential backoff (``webhooks.backoff_s``) up to
``CASEBOOK_WEBHOOK_ATTEMPTS``; a mail is retried a few times when the SMTP server cannot be reached.
"""

from __future__ import annotations

import smtplib
import uuid

from celery import shared_task
from django.conf import settings

from web.models import Case, CaseStatus, Webhook
from web.notifications import emails, webhooks


@shared_task(name="casebook.case_finished", ignore_result=True)
def case_finished_task(case_id: int, status: str) -> None:
    """A case became ready or failed: its webhooks' deliveries and its mail, each a task of its own
    (a mail retried never sends a webhook twice)."""
    case_webhooks_task(case_id, status)
    case_email_task.delay(case_id)


@shared_task(
    name="casebook.case_email",
    ignore_result=True,
    autoretry_for=(smtplib.SMTPException, OSError),
    retry_backoff=30,
    max_retries=4,
)
def case_email_task(case_id: int) -> int:
    case = Case.objects.filter(pk=case_id).select_related("created_by").first()
    if case is None or case.status not in (CaseStatus.READY, CaseStatus.FAILED):
        return 0
    return emails.send_case_done(case)


@shared_task(name="casebook.case_webhooks", ignore_result=True)
def case_webhooks_task(case_id: int, status: str) -> int:
    """One delivery task per webhook of the case's team that wants ``status``; how many."""
    case = Case.objects.filter(pk=case_id).only("team_id").first()
    if case is None:
        return 0
    hooks = Webhook.objects.filter(team_id=case.team_id)
    if status == CaseStatus.READY:
        hooks, event = hooks.filter(on_ready=True), webhooks.EVENT_READY
    elif status == CaseStatus.FAILED:
        hooks, event = hooks.filter(on_failed=True), webhooks.EVENT_FAILED
    else:
        return 0
    ids = list(hooks.values_list("pk", flat=True))
    for hook_id in ids:
        webhook_deliver_task.delay(hook_id, case_id, event, uuid.uuid4().hex)
    return len(ids)


@shared_task(bind=True, name="casebook.webhook_deliver", ignore_result=True, max_retries=None)
def webhook_deliver_task(self, webhook_id: int, case_id: int | None, event: str, delivery: str) -> None:  # noqa: ANN001
    hook = Webhook.objects.filter(pk=webhook_id).select_related("team").first()
    if hook is None:  # removed meanwhile
        return
    case = Case.objects.filter(pk=case_id).select_related("team").first() if case_id else None
    if case_id and case is None:
        return
    attempt = self.request.retries + 1
    retry = webhooks.deliver(webhook=hook, case=case, event=event, delivery=delivery, attempt=attempt)
    if retry and attempt < settings.CASEBOOK_WEBHOOK_ATTEMPTS:
        raise self.retry(countdown=webhooks.backoff_s(attempt))
