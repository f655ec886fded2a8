"""Counting requests in Django's cache (Redis, shared by every web process) to throttle them: the
password reset (per client address and per account) and the share links' bad tokens
(web/share_views.py).

A count is a fixed window: the first hit makes the key with the window as its lifetime, later hits
increment it. While Redis cannot be reached nothing is counted and nothing is refused (the site keeps
working through a Redis outage, as the rest of the web does); a warning says so.
"""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm
from django.core.cache import cache
from redis.exceptions import RedisError

from web.clients import client_ip

log = logging.getLogger(__name__)


def hit(key: str, window_s: int) -> int:
    """Count one hit of ``key`` in a window of ``window_s`` seconds; the count so far, this hit
    included (0 when Redis cannot be reached)."""
    try:
        if cache.add(key, 1, timeout=window_s):
            return 1
        try:
            return int(cache.incr(key))
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=window_s)
            return 1
    except RedisError:
        log.warning(
            "throttle: a hit was not counted (Redis unreachable)", extra={"throttle": key.split(":")[0]}
        )
        return 0


def count(key: str) -> int:
    """Hits of ``key`` in its current window (0 when none, or when Redis cannot be reached)."""
    try:
        return int(cache.get(key) or 0)
    except RedisError:
        log.warning(
            "throttle: a count cannot be read (Redis unreachable)", extra={"throttle": key.split(":")[0]}
        )
        return 0


def _account_key(email: str) -> str:
    # The address itself is not kept in Redis: its SHA-256 (lower-cased) names the count.
    return "reset-account:" + hashlib.sha256(email.strip().lower().encode("utf-8")).hexdigest()


def reset_allowed(*, address: str, email: str) -> bool:
    """Count one password-reset request from ``address`` for ``email``; False when either is over
    its limit within the window (``CASEBOOK_RESET_LIMIT_PER_ADDRESS``, ``CASEBOOK_RESET_LIMIT_PER_ACCOUNT``
    per ``CASEBOOK_RESET_WINDOW`` seconds)."""
    window = settings.CASEBOOK_RESET_WINDOW
    by_address = hit(f"reset-address:{address}", window)
    by_account = hit(_account_key(email), window)
    return (
        by_address <= settings.CASEBOOK_RESET_LIMIT_PER_ADDRESS
        and by_account <= settings.CASEBOOK_RESET_LIMIT_PER_ACCOUNT
    )


class ThrottledPasswordResetForm(PasswordResetForm):
    """Django's password-reset form, throttled: over a limit the request is answered exactly as any
    other (the "check your mail" page: nothing tells whether the account exists or was throttled),
    but no mail is sent. Django passes the request to ``save``."""

    def save(self, *args, request=None, **kwargs) -> None:  # noqa: ANN002, ANN003, ANN001
        address = client_ip(request) if request is not None else ""
        if not reset_allowed(address=address, email=self.cleaned_data["email"]):
            log.warning("password reset throttled: no mail sent", extra={"reason": "throttled"})
            return
        super().save(*args, request=request, **kwargs)
