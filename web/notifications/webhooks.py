"""Team webhooks: the JSON payload of a finished case, its HMAC-SHA256 signature, and one delivery
attempt with its line in the delivery log (``WebhookDelivery``). docs/notifications.md documents the
payload and how a receiver checks it.

Signature: ``X-Casebook-Signature: sha256=<hex>``, the HMAC-SHA256 under the webhook's secret of the
raw request body, exactly as sent. ``X-Casebook-Timestamp`` (Unix seconds) repeats the body's
``timestamp``, which the signature covers: a receiver refuses a body older than a few minutes (a
replay), and ``X-Casebook-Delivery`` (the same on each retry of one event) lets it drop a duplicate.

The URL is an admin's but treated as hostile: http(s) only, no credentials in it, no redirect
followed, a timeout (``CASEBOOK_WEBHOOK_TIMEOUT_S``) on connecting and on reading, the answer's
body never read (only its status line and headers), and unless ``CASEBOOK_WEBHOOK_ALLOW_PRIVATE`` no loopback,
private, link-local or otherwise non-global address, nor an IPv6 address carrying one
(web/notifications/addresses.py): checked when the URL is saved, and on each attempt on the very
address the connection is made to, resolved then. A URL may itself be a secret (a Slack or Teams
incoming-webhook URL): logs and pages name only its scheme and host (``url_origin``); the secret is never
logged nor shown again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from urllib.parse import urlsplit

import requests
from django.conf import settings

from web.models import Case, CaseStatus, Finding, Webhook, WebhookDelivery
from web.notifications import addresses

log = logging.getLogger(__name__)

#: Events a webhook may be sent: a case became ready, a case failed, and the admin's "send test".
EVENT_READY, EVENT_FAILED, EVENT_TEST = "case.ready", "case.failed", "test"
#: A receiver's answers that are retried: it is down or overloaded; any other 4xx is final.
RETRY_STATUSES = frozenset({408, 425, 429})
USER_AGENT = "Casebook-Webhook/1"
#: Lines of the delivery log kept per webhook (older ones are deleted as new ones are written).
KEEP_DELIVERIES = 200


class WebhookUrlError(ValueError):
    """A webhook URL that may not be used; the message says why (never the URL's secret parts)."""


def url_origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: what logs and pages show of a URL (its path and query may
    carry a token)."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def check_url(url: str, *, resolve: bool = True) -> str:
    """``url`` stripped if a webhook may POST to it, else ``WebhookUrlError``: http(s), a host, no user
    name or password, no whitespace; with ``resolve``, every address the host resolves to is global
    (unless ``CASEBOOK_WEBHOOK_ALLOW_PRIVATE``)."""
    url = (url or "").strip()
    if not url or len(url) > 500 or any(c.isspace() or ord(c) < 32 for c in url):
        raise WebhookUrlError("Give an http:// or https:// URL of at most 500 characters, without spaces.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookUrlError("The URL cannot be read.") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookUrlError("Only http:// and https:// URLs with a host are allowed.")
    if parts.username or parts.password:
        raise WebhookUrlError("The URL must not carry a user name or password: sign with the secret instead.")
    if resolve:
        try:
            addresses.checked_address(parts.hostname, port or (443 if parts.scheme == "https" else 80))
        except addresses.AddressRefused as exc:
            raise WebhookUrlError(str(exc)) from exc
    return url


def host_names(case: Case) -> list[str]:
    """The host names of ``case``: its Host rows in order, else ``Case.host`` split on ", "."""
    names = list(case.hosts.order_by("position").values_list("name", flat=True))
    return names or [h for h in (case.host or "").split(", ") if h]


def case_payload(*, webhook: Webhook, case: Case | None, event: str, delivery: str, now: int) -> dict:
    """The JSON-ready payload of ``event`` for ``case`` (None: the "send test" payload of a made-up
    case) as ``webhook`` is set (``send_hosts``). ``now``: Unix seconds, signed with the body."""
    if case is None:
        info = {
            "id": 0,
            "url": f"{settings.PUBLIC_URL}/cases/0/",
            "title": "Test delivery",
            "status": "ready",
            "customer": "",
            "ticket": "",
            "team": webhook.team.name,
            "verdict": "Test delivery from Casebook: no case",
            "severity": "info",
            "findings": 0,
            "failure_reason": "",
            "hosts": ["db-test-1.example.com"],
        }
    else:
        first = Finding.objects.filter(case=case).order_by("position").only("title", "severity").first()
        info = {
            "id": case.pk,
            "url": f"{settings.PUBLIC_URL}/cases/{case.pk}/",
            "title": case.title or f"Case {case.pk}",
            "status": case.status,
            "customer": case.customer,
            "ticket": case.ticket,
            "team": case.team.name,
            "verdict": first.title if first else ("No finding" if case.status == CaseStatus.READY else ""),
            "severity": first.severity if first else "",
            "findings": Finding.objects.filter(case=case).count(),
            "failure_reason": case.failure_reason[:500],
            "hosts": host_names(case),
        }
    if not webhook.send_hosts:
        info.pop("hosts")
    state = "failed" if info["status"] == CaseStatus.FAILED else "is ready"
    summary = info["verdict"] or info["failure_reason"]
    text = f"Case {info['id']} ({info['customer'] or info['team']}) {state}: {summary} <{info['url']}>"
    return {"event": event, "delivery": delivery, "timestamp": now, "case": info, "text": text}


def sign(secret: str, body: bytes) -> str:
    """``sha256=<hex>``: the HMAC-SHA256 of ``body`` under ``secret`` (UTF-8)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def encode(payload: dict) -> bytes:
    """The body as sent: compact JSON, UTF-8, keys sorted."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def deliver(*, webhook: Webhook, case: Case | None, event: str, delivery: str, attempt: int) -> bool:
    """POST the payload once to ``webhook.url`` and log the attempt; True when it should be retried
    (no answer, a timeout, a 5xx, 408/425/429), False when it was delivered (2xx) or will not be (a
    refused URL, any other answer)."""
    now = int(time.time())
    body = encode(case_payload(webhook=webhook, case=case, event=event, delivery=delivery, now=now))
    row = WebhookDelivery(
        webhook=webhook, delivery=delivery, event=event, case_id=case.pk if case else None, attempt=attempt
    )
    started = time.monotonic()
    retry = False
    try:
        check_url(webhook.url, resolve=False)  # resolved and checked where the connection is made
        response = addresses.pinned_session().post(
            webhook.url,
            data=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "X-Casebook-Event": event,
                "X-Casebook-Delivery": delivery,
                "X-Casebook-Timestamp": str(now),
                "X-Casebook-Signature": sign(webhook.secret, body),
            },
            timeout=(settings.CASEBOOK_WEBHOOK_TIMEOUT_S, settings.CASEBOOK_WEBHOOK_TIMEOUT_S),
            allow_redirects=False,
            stream=True,
        )
        response.close()  # only the status counts: the body is never read (a slow or huge one costs nothing)
        row.status_code = response.status_code
        retry = response.status_code >= 500 or response.status_code in RETRY_STATUSES
        if not 200 <= response.status_code < 300 and not retry:
            row.error = f"answered {response.status_code}; not retried"
    except (WebhookUrlError, addresses.AddressRefused) as exc:
        row.error = str(exc)[:300]
    except requests.RequestException as exc:
        # The exception's text may quote the whole URL: keep its kind and the origin only.
        row.error = f"{type(exc).__name__} on {url_origin(webhook.url)}"[:300]
        retry = True
    row.duration_ms = int((time.monotonic() - started) * 1000)
    row.save()
    old = WebhookDelivery.objects.filter(webhook=webhook).order_by("-at", "-id")[KEEP_DELIVERIES:]
    WebhookDelivery.objects.filter(pk__in=list(old.values_list("pk", flat=True))).delete()
    log.info(
        "webhook %s (%s) %s attempt %s: %s %s",
        webhook.pk,
        url_origin(webhook.url),
        event,
        attempt,
        row.status_code,
        row.error,
    )
    return retry


def backoff_s(attempt: int) -> float:
    """Seconds before the retry that follows attempt ``attempt`` (1-based): the base, doubled each time."""
    return float(settings.CASEBOOK_WEBHOOK_BACKOFF_S) * 2 ** (attempt - 1)
