"""The answers every URL under ``/u/<token>/`` shares: the one 404 of an unknown, expired, revoked or
used-up link (the same status and body for each), and the guess limit: a client address that asked
for ``CASEBOOK_SHARE_GUESS_LIMIT`` bad tokens within ``CASEBOOK_SHARE_GUESS_WINDOW`` seconds gets 429
on every ``/u/`` URL until then (counted in Django's cache on Redis, as for share links)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from web.accounts import throttles
from web.clients import client_ip


def private(response: HttpResponse) -> HttpResponse:
    """``response`` kept by no cache, indexed by no robot, sent as no referrer."""
    response["X-Robots-Tag"] = "noindex, nofollow, noarchive"
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store, private"
    return response


def not_found() -> HttpResponse:
    """The one answer to a link that takes no upload, whatever the reason."""
    return private(HttpResponse(render_to_string("uploads/not_found.html"), status=404))


def _key(request: HttpRequest) -> str:
    return f"upload-link-misses:{client_ip(request)}"


def guard(request: HttpRequest) -> HttpResponse | None:
    """A 429 when this client asked for too many bad tokens lately, else None."""
    if throttles.count(_key(request)) < settings.CASEBOOK_SHARE_GUESS_LIMIT:
        return None
    response = HttpResponse("Too many requests for unknown links; try again later.\n", status=429)
    response["Retry-After"] = str(settings.CASEBOOK_SHARE_GUESS_WINDOW)
    response["Content-Type"] = "text/plain; charset=utf-8"
    return private(response)


def miss(request: HttpRequest) -> HttpResponse:
    """Count a bad token for this client and answer ``not_found``."""
    throttles.hit(_key(request), settings.CASEBOOK_SHARE_GUESS_WINDOW)
    return not_found()
