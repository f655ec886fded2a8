"""Personal API tokens: made, listed and revoked on the user's settings page; only their hash is kept.

A token is ``cb_`` followed by 43 URL-safe characters (32 random bytes from ``secrets``: 256 bits). The
database keeps its SHA-256 (hex) and its first characters; the token itself is returned once, by
``api_token_create``, and never again. ``web/accounts/authentication.py`` looks a presented token up by its
hash.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from web.models import ApiToken

#: What every token starts with: tells a Casebook token apart in a script or a secret scanner.
TOKEN_PREFIX = "cb_"
#: Random bytes of a token (256 bits: far beyond guessing).
TOKEN_BYTES = 32
#: Characters of the token kept in clear to tell tokens apart in the list (prefix + 6 random).
SHOWN_CHARS = len(TOKEN_PREFIX) + 6
#: ``last_used_at`` is written at most this often per token: not one write per API request.
LAST_USED_RESOLUTION = timedelta(minutes=1)
#: Tokens one user may hold at once (revoked ones not counted).
MAX_ACTIVE_TOKENS = 20


class TokenLimitError(Exception):
    """The user already holds ``MAX_ACTIVE_TOKENS`` active tokens."""


def token_sha256(token: str) -> str:
    """The hex SHA-256 of the token's UTF-8 bytes: what is stored and looked up."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@transaction.atomic
def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """Make a token for ``user`` named ``name`` (stripped, at most 100 characters; "API token" when
    blank). Returns the row and the token itself, which is not stored and cannot be shown again.
    Raises ``TokenLimitError`` when the user already holds ``MAX_ACTIVE_TOKENS`` active tokens."""
    if api_tokens_for(user=user).filter(revoked_at__isnull=True).count() >= MAX_ACTIVE_TOKENS:
        raise TokenLimitError(
            f"You already have {MAX_ACTIVE_TOKENS} active tokens: revoke one you no longer use first."
        )
    token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
    row = ApiToken.objects.create(
        user=user,
        name=(name or "").strip()[:100] or "API token",
        key_sha256=token_sha256(token),
        prefix=token[:SHOWN_CHARS],
    )
    return row, token


def api_token_revoke(*, user, token_id: int) -> bool:
    """Revoke ``user``'s token ``token_id`` from now on; False when the user has no such active token
    (someone else's token is never touched)."""
    return bool(
        ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def api_tokens_for(*, user) -> QuerySet[ApiToken]:
    """The user's tokens, newest first, revoked ones included (with ``revoked_at``)."""
    return ApiToken.objects.filter(user=user).select_related("user")


def token_row(token: ApiToken) -> dict[str, object]:
    """A token as the token tables list it (templates/account/_tokens.html): name, owner, shown
    prefix, made, last used, revoked (None while active). Never the hash."""
    return {
        "id": token.pk,
        "name": token.name,
        "owner": token.user.get_username(),
        "prefix": token.prefix,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
        "revoked_at": token.revoked_at,
    }


def api_token_user(*, token: str) -> tuple[object, ApiToken] | None:
    """The active user and token row a presented token belongs to, or None (unknown, revoked, or its
    user inactive). Stamps ``last_used_at`` (at most once a ``LAST_USED_RESOLUTION``)."""
    row = (
        ApiToken.objects.select_related("user")
        .filter(key_sha256=token_sha256(token), revoked_at__isnull=True)
        .first()
    )
    if row is None or not row.user.is_active:
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
        row.last_used_at = now
    return row.user, row
