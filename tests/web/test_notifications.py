"""Notifications of a finished case: the ready mail through a real SMTP server on loopback
(aiosmtpd) sent by a real Celery worker; team webhooks delivered to a receiver on loopback, signed,
retried after a 500; the URL checks; ticket links."""

from __future__ import annotations

import asyncio
import email
import hashlib
import hmac
import json
import time
from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth import get_user_model
from django.core.files import File

from tests.web.conftest import BUNDLES, EXAMPLE_BUNDLE
from tests.web.receivers import Receiver, free_port, wait_for
from web.cases import services as case_services
from web.ingest import tasks as ingest_tasks
from web.models import Case, CaseStatus, Team, Webhook, WebhookDelivery, default_team_id
from web.notifications import services, tickets, webhooks
from web.notifications import tasks as notify_tasks


class _Inbox:
    """aiosmtpd handler keeping each message received (envelope recipients, parsed message)."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], email.message.Message]] = []

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: ANN001, N802 - aiosmtpd's hook
        self.messages.append((list(envelope.rcpt_tos), email.message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def smtp(settings) -> Iterator[_Inbox]:
    """A real SMTP server on loopback; Django's SMTP backend pointed at it."""
    inbox = _Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = False
    try:
        yield inbox
    finally:
        controller.stop()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver([500])
    yield r
    r.close()


def _upload(user, path=EXAMPLE_BUNDLE, *, enqueue: bool = True) -> Case:  # noqa: ANN001
    with path.open("rb") as fh:
        return case_services.case_create(user=user, file=File(fh), original_name=path.name, enqueue=enqueue)


def _hook(team: Team, url: str, **kw: object) -> tuple[Webhook, str]:
    secret = "s3cret-" + "x" * 20
    hook = Webhook.objects.create(team=team, name="ops", url=url, secret=secret, **kw)
    return hook, secret


def _check_signature(headers: dict[str, str], body: bytes, secret: str) -> dict:
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Casebook-Signature"], expected)
    payload = json.loads(body)
    assert headers["X-Casebook-Timestamp"] == str(payload["timestamp"])
    assert abs(time.time() - payload["timestamp"]) < 300
    return payload


def test_the_uploader_gets_the_ready_mail_and_the_webhook_is_retried_through_the_worker(
    celery_worker, smtp: _Inbox, receiver: Receiver, settings
) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = True
    settings.CASEBOOK_WEBHOOK_BACKOFF_S = 0.5
    user = get_user_model().objects.create_user("carol", email="carol@example.com", password="x" * 20)
    team = Team.objects.get(pk=default_team_id())
    team.members.add(user)
    hook, secret = _hook(team, receiver.url)
    case = _upload(user)
    wait_for(lambda: smtp.messages and len(receiver.requests) >= 2)
    case.refresh_from_db()
    assert case.status == CaseStatus.READY, case.failure_reason
    [(to, msg)] = smtp.messages
    assert to == ["carol@example.com"]
    verdict = case.findings.order_by("position").first().title
    assert msg["Subject"] == f"Casebook: case {case.pk} is ready: {verdict}"
    assert f"/cases/{case.pk}/" in msg.get_payload()
    # the webhook: a 500 first, then the same delivery again, signed, with the case's verdict
    (h1, b1), (h2, b2) = receiver.requests[:2]
    p1, p2 = _check_signature(h1, b1, secret), _check_signature(h2, b2, secret)
    assert h1["X-Casebook-Delivery"] == h2["X-Casebook-Delivery"] == p2["delivery"]
    assert p2["event"] == "case.ready" and h2["X-Casebook-Event"] == "case.ready"
    assert p2["case"]["id"] == case.pk and p2["case"]["verdict"] == verdict
    assert p2["case"]["url"].endswith(f"/cases/{case.pk}/")
    assert p2["case"]["severity"] in ("critical", "warning", "info")
    assert p2["case"]["hosts"] == webhooks.host_names(case) and p2["case"]["hosts"]
    assert p1["case"] == p2["case"]
    log = list(WebhookDelivery.objects.filter(webhook=hook).order_by("attempt"))
    assert [(d.attempt, d.status_code) for d in log] == [(1, 500), (2, 200)]
    assert all(d.duration_ms is not None for d in log)


def test_no_mail_for_a_user_who_turned_it_off(smtp: _Inbox, db, django_capture_on_commit_callbacks) -> None:
    user = get_user_model().objects.create_user("dave", email="dave@example.com", password="x" * 20)
    Team.objects.get(pk=default_team_id()).members.add(user)
    case = _upload(user, enqueue=False)
    ingest_tasks.case_ingest(case_id=case.pk)
    assert notify_tasks.case_email_task(case.pk) == 1
    services.set_email_case_done(user=user, on=False)
    assert notify_tasks.case_email_task(case.pk) == 0
    assert len(smtp.messages) == 1


def test_a_failed_case_mails_its_reason(smtp: _Inbox, db, tmp_path) -> None:
    user = get_user_model().objects.create_user("erin", email="erin@example.com", password="x" * 20)
    Team.objects.get(pk=default_team_id()).members.add(user)
    junk = tmp_path / "notes.txt"
    junk.write_text("nothing a parser knows\n")
    case = _upload(user, junk, enqueue=False)
    ingest_tasks.case_ingest(case_id=case.pk)
    case.refresh_from_db()
    assert case.status == CaseStatus.FAILED
    assert notify_tasks.case_email_task(case.pk) == 1
    [(_, msg)] = smtp.messages
    assert msg["Subject"].startswith(f"Casebook: case {case.pk} failed")
    assert "Reason:" in msg.get_payload()


def test_hosts_are_left_out_when_the_team_says_so(db) -> None:
    case = _upload(None, BUNDLES / "overlap-tmp.tar.gz", enqueue=False)
    ingest_tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    hook, _ = _hook(case.team, "https://hooks.example.com/x", send_hosts=False)
    payload = webhooks.case_payload(webhook=hook, case=case, event="case.ready", delivery="d", now=1)
    assert "hosts" not in payload["case"]
    assert case.host and case.host not in json.dumps(payload)
    hook.send_hosts = True
    assert webhooks.case_payload(webhook=hook, case=case, event="case.ready", delivery="d", now=1)["case"][
        "hosts"
    ]


def test_a_4xx_is_not_retried_and_a_refused_url_is_logged_without_its_secret(db, settings) -> None:
    r = Receiver([404])
    try:
        settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = True
        team = Team.objects.get(pk=default_team_id())
        hook, _ = _hook(team, r.url)
        assert webhooks.deliver(webhook=hook, case=None, event="test", delivery="t1", attempt=1) is False
        settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = False
        assert webhooks.deliver(webhook=hook, case=None, event="test", delivery="t2", attempt=1) is False
    finally:
        r.close()
    first, second = WebhookDelivery.objects.filter(webhook=hook).order_by("id")
    assert first.status_code == 404 and "not retried" in first.error
    assert second.status_code is None and "non-public" in second.error
    assert "url-secret" not in second.error and len(r.requests) == 1


def test_an_unreachable_receiver_is_retried_and_logged_by_origin(db, settings, monkeypatch) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = True
    settings.CASEBOOK_WEBHOOK_TIMEOUT_S = 2
    hook, _ = _hook(Team.objects.get(pk=default_team_id()), f"http://127.0.0.1:{free_port()}/x?key=abc")
    assert webhooks.deliver(webhook=hook, case=None, event="test", delivery="t", attempt=1) is True
    row = WebhookDelivery.objects.get(webhook=hook)
    assert row.status_code is None and "ConnectionError" in row.error and "key=abc" not in row.error
    monkeypatch.setattr(webhooks, "KEEP_DELIVERIES", 2)
    for attempt in (2, 3, 4):
        webhooks.deliver(webhook=hook, case=None, event="test", delivery="t", attempt=attempt)
    kept = WebhookDelivery.objects.filter(webhook=hook).order_by("attempt").values_list("attempt", flat=True)
    assert list(kept) == [3, 4]


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "javascript:alert(1)",
        "https://user:pw@example.com/x",
        "http://127.0.0.1/x",
        "http://[::1]/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/x",
        "https://exa mple.com/",
        "",
    ],
)
def test_webhook_urls_that_are_refused(url: str, settings) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(webhooks.WebhookUrlError):
        webhooks.check_url(url)


def test_the_backoff_doubles(settings) -> None:
    settings.CASEBOOK_WEBHOOK_BACKOFF_S = 30
    assert [webhooks.backoff_s(a) for a in (1, 2, 3, 4)] == [30, 60, 120, 240]


def test_the_signature_is_hmac_sha256_of_the_raw_body() -> None:
    body = webhooks.encode({"b": 1, "a": "é"})
    assert body == '{"a":"é","b":1}'.encode()
    assert webhooks.sign("k", body) == "sha256=" + hmac.new(b"k", body, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("ticket", "url"),
    [
        ("ZD-4711", "https://tickets.example.com/browse/ZD-4711"),
        ("../../admin?x=1#y", "https://tickets.example.com/browse/..%2F..%2Fadmin%3Fx%3D1%23y"),
        ('"><script>', "https://tickets.example.com/browse/%22%3E%3Cscript%3E"),
        ("", None),
    ],
)
def test_ticket_links_encode_the_ticket(ticket: str, url: str | None) -> None:
    assert tickets.ticket_url("https://tickets.example.com/browse/{ticket}", ticket) == url


@pytest.mark.parametrize(
    "template",
    [
        "javascript:alert('{ticket}')",
        "https://x.example.com/",
        "//x.example.com/{ticket}",
        "https://a:b@x/{ticket}",
    ],
)
def test_ticket_templates_that_are_refused(template: str) -> None:
    with pytest.raises(tickets.TicketTemplateError):
        tickets.check_template(template)
    assert tickets.ticket_url(template, "T-1") is None


def test_the_smtp_fixture_really_listens(smtp: _Inbox, settings) -> None:
    # guards the end-to-end test above against a backend that never talks SMTP
    import smtplib

    with smtplib.SMTP(settings.EMAIL_HOST, settings.EMAIL_PORT, timeout=5) as s:
        s.sendmail("a@example.com", ["b@example.com"], "Subject: x\r\n\r\nbody")
    assert smtp.messages[0][0] == ["b@example.com"]
    assert asyncio.get_event_loop_policy() is not None


def test_an_ingest_hands_its_end_to_the_notification_task_after_commit(
    db, tmp_path, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    sent: list[tuple] = []
    monkeypatch.setattr(notify_tasks.case_finished_task, "delay", lambda *a: sent.append(a))
    case = _upload(None, enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        ingest_tasks.case_ingest(case_id=case.pk)
    assert sent == [(case.pk, CaseStatus.READY)]
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"\x1f\x8b not really gzip")
    failed = _upload(None, junk, enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        ingest_tasks.case_ingest(case_id=failed.pk)
    assert Case.objects.get(pk=failed.pk).status == CaseStatus.FAILED
    assert sent[-1] == (failed.pk, CaseStatus.FAILED)


def test_a_broker_down_does_not_stop_the_ingest(
    db, monkeypatch, django_capture_on_commit_callbacks, caplog
) -> None:
    import kombu.exceptions

    def down(*args: object) -> None:
        raise kombu.exceptions.OperationalError("Redis is down")

    monkeypatch.setattr(notify_tasks.case_finished_task, "delay", down)
    case = _upload(None, enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        ingest_tasks.case_ingest(case_id=case.pk)
    assert Case.objects.get(pk=case.pk).status == CaseStatus.READY
    assert "notifications not queued" in caplog.text


def test_the_mail_goes_to_each_uploader_once_and_only_to_active_addresses(db) -> None:
    from web.models import AddedUpload
    from web.notifications import emails

    User = get_user_model()
    first = User.objects.create_user("fay", email="fay@example.com", password="x" * 20)
    second = User.objects.create_user("gus", email="gus@example.com", password="x" * 20)
    gone = User.objects.create_user("hal", email="hal@example.com", password="x" * 20, is_active=False)
    mute = User.objects.create_user("ida", email="ida@example.com", password="x" * 20)
    for u in (first, second, gone, mute):
        Team.objects.get(pk=default_team_id()).members.add(u)
    case = _upload(first, enqueue=False)
    for u in (second, gone, mute, first):
        AddedUpload.objects.create(
            case=case, file="bundles/x.tar.gz", original_name="x", size=1, sha256="0" * 64, uploaded_by=u
        )
    services.set_email_case_done(user=mute, on=False)
    assert emails.recipients(case) == ["fay@example.com", "gus@example.com"]
    Case.objects.filter(pk=case.pk).update(
        title="two\nlines\r\nBcc: evil@example.com", status=CaseStatus.FAILED, failure_reason="x"
    )
    subject, _ = emails.message_text(Case.objects.get(pk=case.pk))
    assert "\n" not in subject and "\r" not in subject
