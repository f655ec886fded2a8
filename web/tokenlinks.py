"""Links by token: what share links (``/s/<token>/``, web/sharing/) and upload links (``/u/<token>/``,
web/uploads/) have in common.

- A token is ``secrets.token_urlsafe(TOKEN_BYTES)`` (256 bits); only its SHA-256 is stored
  (``token_hash``), so a link's URL exists only in the answer that made it.
- ``live(model, token)``: the rows of a link model (``token_sha256``, ``revoked_at``, ``expires_at``)
  that ``token`` opens: not revoked, not expired. Unknown, expired and revoked tokens are not told
  apart, and each kind of link answers all three with one and the same 404 (``Guard.not_found``).
- ``Guard``: the guess limit. A client address that asked for ``CASEBOOK_SHARE_GUESS_LIMIT`` bad tokens
  within ``CASEBOOK_SHARE_GUESS_WINDOW`` seconds gets 429 on every URL of that kind of link until then
  (counted in Django's cache on Redis, so every web process agrees; not applied while Redis is away:
  links keep working through an outage, as the rest of the web does).
- ``private``: every answer under a link is kept by no cache, indexed by no robot, sent as no referrer.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone

from web import throttles
from web.clients import client_ip

#: Token bytes: 32 random bytes (256 bits), 43 URL-safe characters.
TOKEN_BYTES = 32
#: A longer "token" is no token of ours: looked up as none.
MAX_TOKEN_CHARS = 200


def new_token() -> str:
    """A fresh token (shown once; store ``token_hash`` of it)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    """The stored form of a token: SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def live(model: type[Model], token: str) -> QuerySet:
    """The rows of ``model`` whose link ``token`` opens now: its hash, not revoked, not expired."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return model.objects.none()
    return model.objects.filter(
        token_sha256=token_hash(token), revoked_at__isnull=True, expires_at__gt=timezone.now()
    )


def private(response: HttpResponse) -> HttpResponse:
    """``response`` kept by no cache, indexed by no robot, sent as no referrer."""
    response["X-Robots-Tag"] = "noindex, nofollow, noarchive"
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store, private"
    return response


@dataclass(frozen=True)
class Guard:
    """The one 404 of one kind of link (``template``) and its guess limit, counted per client under
    ``scope`` (the cache key ``<scope>:<client address>``)."""

    scope: str
    template: str

    def not_found(self) -> HttpResponse:
        """The one answer to a token that opens nothing, whatever the reason."""
        return private(HttpResponse(render_to_string(self.template), status=404))

    def refused(self, request: HttpRequest) -> HttpResponse | None:
        """A 429 when this client asked for too many bad tokens lately, else None."""
        if throttles.count(self._key(request)) < settings.CASEBOOK_SHARE_GUESS_LIMIT:
            return None
        response = HttpResponse("Too many requests for unknown links; try again later.\n", status=429)
        response["Retry-After"] = str(settings.CASEBOOK_SHARE_GUESS_WINDOW)
        response["Content-Type"] = "text/plain; charset=utf-8"
        return private(response)

    def miss(self, request: HttpRequest) -> HttpResponse:
        """Count a bad token for this client and answer ``not_found``."""
        throttles.hit(self._key(request), settings.CASEBOOK_SHARE_GUESS_WINDOW)
        return self.not_found()

    def _key(self, request: HttpRequest) -> str:
        return f"{self.scope}:{client_ip(request)}"


SHARE_LINKS = Guard("share-misses", "shares/not_found.html")
UPLOAD_LINKS = Guard("upload-link-misses", "uploads/not_found.html")
