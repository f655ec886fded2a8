"""Health endpoints for orchestrators and load balancers, and a clear answer while the database is away.

- ``GET /healthz`` (liveness): 200 ``{"status": "ok"}`` while the process answers; touches nothing.
- ``GET /readyz`` (readiness): 200 when PostgreSQL answers ``SELECT 1`` and Redis answers ``PING``,
  else 503. The body names each check with its outcome, its error and its time in milliseconds only
  for a client on loopback (the orchestrator's probe on the host, an operator's curl) or a signed-in
  site admin; anyone else gets ``{"status": "ok"}`` or ``{"status": "unavailable"}`` (the errors
  name hosts, ports and database names).

Both are answered by ``HealthMiddleware``, first in the chain: no host check (probes use the pod's
address), no https redirect, no session, no login. ``DatabaseUnavailableMiddleware`` turns a lost
database connection in any view into a 503 that says so (JSON for the API and the JSON endpoints, a
plain page otherwise) with ``Retry-After``, instead of a bare server error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from importlib import import_module

import redis
from django.conf import settings
from django.contrib.auth import get_user
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from web.clients import client_ip, is_loopback
from web.faults import is_transient
from web.ingest import broker

log = logging.getLogger(__name__)

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
#: What the client is told to wait before trying again while the database is away.
RETRY_AFTER_S = 10


def _check(probe: Callable[[], None], errors: tuple[type[BaseException], ...]) -> dict[str, object]:
    started = time.perf_counter()
    try:
        probe()
    except errors as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300], "ms": _ms(started)}
    return {"ok": True, "ms": _ms(started)}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _database() -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        connection.close()  # the next request connects afresh
        raise


def readiness(*, details: bool = True) -> JsonResponse:
    """Whether this process can serve: the database and the broker answer; each check's outcome
    in the body when ``details``."""
    checks = {
        "database": _check(_database, (DatabaseError,)),
        "broker": _check(broker.ping, (redis.RedisError, OSError)),
    }
    ready = all(c["ok"] for c in checks.values())
    body: dict[str, object] = {"status": "ok" if ready else "unavailable"}
    if details:
        body["checks"] = checks
    response = JsonResponse(body, status=200 if ready else 503)
    response["Cache-Control"] = "no-store"
    return response


class HealthMiddleware:
    """Answers ``/healthz`` and ``/readyz`` (GET or HEAD) before anything else runs."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            if request.path == LIVENESS_PATH:
                response = JsonResponse({"status": "ok"})
                response["Cache-Control"] = "no-store"
                return response
            if request.path == READINESS_PATH:
                return readiness(details=may_see_details(request))
        return self.get_response(request)


def may_see_details(request: HttpRequest) -> bool:
    """Whether the client may read the checks' details: it is on loopback (``clients.client_ip``:
    behind a proxy, the address the proxy saw), or its session is a site admin's (read from the
    session cookie here: this middleware runs before the session and auth middleware). False when
    the session cannot be read (the database is away)."""
    if is_loopback(client_ip(request)):
        return True
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not key:
        return False
    try:
        request.session = import_module(settings.SESSION_ENGINE).SessionStore(key)
        user = get_user(request)
    except DatabaseError:
        connection.close()
        return False
    return bool(user.is_active and user.is_superuser)


class DatabaseUnavailableMiddleware:
    """A view that lost the database answers 503 with a message, not a server error."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_transient(exception):
            return None
        log.error("database unavailable: %s %s: %s", request.method, request.path, exception)
        connection.close()
        saved = "" if request.method in ("GET", "HEAD") else " Nothing was saved: send it again then."
        message = f"The database is unavailable right now; try again in a moment.{saved}"
        if _wants_json(request):
            response: HttpResponse = JsonResponse({"message": message, "extra": {}}, status=503)
        else:
            response = render(request, "unavailable.html", {"message": message}, status=503)
        response["Retry-After"] = str(RETRY_AFTER_S)
        return response


def _wants_json(request: HttpRequest) -> bool:
    return (
        "application/json" in request.headers.get("Accept", "")
        or request.path.endswith(".json")
        or request.path.startswith("/api/")
    )
