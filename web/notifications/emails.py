"""The e-mail that says a case is ready or failed, to whoever uploaded its bundles: the case's
``created_by`` (for a case from a customer's upload link, the engineer who made the link) and the
uploader of each further bundle (``AddedUpload.uploaded_by``). Sent through Django's mail and the
``CASEBOOK_EMAIL_*`` settings; one message per recipient (no one sees the others' addresses); a
user who turned it off in their settings (``NotificationPreference.email_case_done``), an inactive
account or one with no address gets none. The subject is one line whatever the case's title holds.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection

from web.models import AddedUpload, Case, CaseStatus, Finding, NotificationPreference

#: Longest subject (characters).
MAX_SUBJECT_CHARS = 180


def recipients(case: Case) -> list[str]:
    """The addresses to tell about ``case``: uploaders with an address, active, mail not turned off."""
    ids = {case.created_by_id} | set(
        AddedUpload.objects.filter(case=case, uploaded_by__isnull=False).values_list("uploaded_by", flat=True)
    )
    ids.discard(None)
    off = set(
        NotificationPreference.objects.filter(user_id__in=ids, email_case_done=False).values_list(
            "user_id", flat=True
        )
    )
    users = get_user_model().objects.filter(pk__in=ids - off, is_active=True).exclude(email="")
    return sorted({u.email for u in users})


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def message_text(case: Case) -> tuple[str, str]:
    """The subject and plain-text body of the mail about ``case`` (ready or failed)."""
    url = f"{settings.PUBLIC_URL}/cases/{case.pk}/"
    name = _one_line(case.title) or f"Case {case.pk}"
    if case.status == CaseStatus.FAILED:
        subject = f"Casebook: case {case.pk} failed: {name}"
        body = (
            f"The bundle of case {case.pk} ({name}) could not be analyzed.\n\nReason: {case.failure_reason}\n"
        )
    else:
        findings = list(
            Finding.objects.filter(case=case).order_by("position").values_list("severity", "title")[:5]
        )
        verdict = findings[0][1] if findings else "no finding"
        subject = f"Casebook: case {case.pk} is ready: {_one_line(verdict)}"
        lines = [f"The bundle of case {case.pk} ({name}) is analyzed.", ""]
        lines += [f"- [{sev}] {title}" for sev, title in findings] or ["No rule found a problem."]
        body = "\n".join(lines) + "\n"
    body += (
        f"\n{url}\n\nYou get this mail because you uploaded the bundle; turn it off at "
        f"{settings.PUBLIC_URL}/settings/\n"
    )
    return subject[:MAX_SUBJECT_CHARS], body


def send_case_done(case: Case) -> int:
    """Mail each recipient of ``case`` (``recipients``); how many were sent. SMTP errors raise (the
    task retries)."""
    to = recipients(case)
    if not to:
        return 0
    subject, body = message_text(case)
    with get_connection() as connection:
        return (
            connection.send_messages(
                [
                    EmailMessage(subject, body, settings.DEFAULT_FROM_EMAIL, [addr], connection=connection)
                    for addr in to
                ]
            )
            or 0
        )
