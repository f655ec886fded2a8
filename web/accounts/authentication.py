"""API authentication: a personal token in ``Authorization: Bearer <token>`` (web/accounts/services.py).

HTTP basic auth with the login password is not accepted: a script holds a token that can be revoked
on its own, never the password. DRF's ``TokenAuthentication`` parses the header; the lookup is by the
token's SHA-256, since the token itself is not stored.
"""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header

from web.accounts.services import api_token_user

#: The answer to a request that sends the login password (HTTP basic auth).
BASIC_REFUSED = (
    "HTTP basic auth is not accepted: make an API token on your settings page (/settings/) and send "
    "'Authorization: Bearer <token>'."
)


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Bearer cb_...``. An unknown, revoked or malformed token is a 401 (DRF answers
    401 with ``WWW-Authenticate: Bearer`` because this class comes first in the settings)."""

    keyword = "Bearer"

    def authenticate(self, request):  # noqa: ANN001, ANN201 - DRF's signature
        """A basic-auth header gets a 401 that says what to send instead (scripts written for the
        password); anything else is DRF's token parsing."""
        if get_authorization_header(request).split(b" ", 1)[0].lower() == b"basic":
            raise exceptions.AuthenticationFailed(BASIC_REFUSED)
        return super().authenticate(request)

    def authenticate_credentials(self, key: str):  # noqa: ANN201 - DRF's (user, auth) pair
        found = api_token_user(token=key)
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        return found
