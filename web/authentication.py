"""API authentication: a personal token in ``Authorization: Bearer <token>`` (web/api_tokens.py).

HTTP basic auth with the login password is not accepted: a script holds a token that can be revoked
on its own, never the password. DRF's ``TokenAuthentication`` parses the header; the lookup is by the
token's SHA-256, since the token itself is not stored.
"""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from web.api_tokens import api_token_user


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Bearer cb_...``. An unknown, revoked or malformed token is a 401 (DRF answers
    401 with ``WWW-Authenticate: Bearer`` because this class comes first in the settings)."""

    keyword = "Bearer"

    def authenticate_credentials(self, key: str):  # noqa: ANN201 - DRF's (user, auth) pair
        found = api_token_user(token=key)
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        return found
