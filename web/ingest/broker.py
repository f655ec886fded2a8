"""The broker as the web and the sweeper see it: is it up, and since when (Redis ``INFO``).

Celery talks to the broker for tasks; this module only asks Redis about itself, with short timeouts,
for the readiness endpoint and for the sweeper (a message sent before the broker's last start was
lost with it: Redis keeps nothing on disk here).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.utils import timezone

log = logging.getLogger(__name__)

#: Seconds to connect to or hear back from Redis before it counts as down.
TIMEOUT_S = 2.0

_clients: dict[str, redis.Redis] = {}


def _client() -> redis.Redis:
    url = settings.CELERY_BROKER_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT_S, socket_timeout=TIMEOUT_S)
    return _clients[url]


def ping() -> None:
    """Raise ``redis.RedisError`` (or ``OSError``) when the broker does not answer."""
    _client().ping()


def started_at() -> datetime | None:
    """When the broker (re)started, from its uptime; None when it cannot be asked."""
    try:
        uptime_s = int(_client().info("server")["uptime_in_seconds"])
    except (redis.RedisError, OSError, KeyError, ValueError) as exc:
        log.warning("broker uptime unknown: %s", exc)
        return None
    return timezone.now() - timedelta(seconds=uptime_s)
