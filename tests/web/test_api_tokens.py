"""Personal API tokens: made on the settings page and shown once, stored as a SHA-256, revoked; the
API refuses a wrong, revoked or absent token and the login password over basic auth."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.test import Client

from web.accounts import services as api_tokens
from web.models import ApiToken

pytestmark = pytest.mark.django_db

TOKEN_RE = re.compile(r'id="new-token-value">(cb_[A-Za-z0-9_-]{43})<')


def _make_token(client: Client, name: str = "nightly upload") -> str:
    """A token made on the settings page: shown in the answer to the POST itself, kept by no cache."""
    answer = client.post("/settings/tokens/", {"name": name})
    assert answer.status_code == 201 and "no-store" in answer["Cache-Control"]
    (token,) = TOKEN_RE.findall(answer.content.decode())
    return token


def _bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def test_a_new_token_is_shown_once(engineer_client: Client) -> None:
    token = _make_token(engineer_client)
    again = engineer_client.get("/settings/").content.decode()
    assert token not in again and not TOKEN_RE.search(again)
    assert token[:9] in again  # the list names it by its first characters


@pytest.mark.parametrize(
    "engine",
    [
        "django.contrib.sessions.backends.db",
        "django.contrib.sessions.backends.cache",
        "django.contrib.sessions.backends.cached_db",
    ],
)
def test_a_new_token_is_never_in_the_session_store(engineer, settings, redis_client, engine: str) -> None:
    """Whatever holds the sessions (their table, the cache on Redis), the token made is in none of it:
    not while its page is shown, not after."""
    settings.SESSION_ENGINE = engine
    client = Client()
    client.force_login(engineer)
    token = _make_token(client)
    client.get("/settings/")
    rows = [row.session_data + json.dumps(row.get_decoded()) for row in Session.objects.all()]
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    cached = [redis_client.get(key) or b"" for key in redis_client.scan_iter(match=f"{prefix}:*", count=1000)]
    assert (engine.endswith(".cache") or rows) and (
        engine.endswith(".db") or any(b"_auth_user_id" in v for v in cached)
    )
    assert [r for r in rows if token in r] == [] and [v for v in cached if token.encode() in v] == []
    assert ApiToken.objects.get(user=engineer).prefix == token[:9]


def test_only_the_sha256_of_a_token_is_stored(engineer_client: Client, engineer) -> None:
    token = _make_token(engineer_client)
    (row,) = ApiToken.objects.filter(user=engineer).values()
    assert row["key_sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert row["prefix"] == token[:9] and row["name"] == "nightly upload"
    assert not any(token in str(value) for value in row.values())


def test_a_token_opens_the_api_as_its_user(engineer_client: Client, engineer) -> None:
    token = _make_token(engineer_client)
    answer = Client().get("/api/cases/", **_bearer(token))
    assert answer.status_code == 200 and answer.json()["count"] == 0
    assert ApiToken.objects.get(user=engineer).last_used_at is not None


def test_a_revoked_token_is_refused(engineer_client: Client, engineer) -> None:
    token = _make_token(engineer_client)
    row = ApiToken.objects.get(user=engineer)
    assert engineer_client.post(f"/settings/tokens/{row.pk}/revoke/").status_code == 302
    answer = Client().get("/api/cases/", **_bearer(token))
    assert answer.status_code == 401
    assert answer.json() == {"message": "Invalid or revoked API token.", "extra": {}}
    assert "revoked" in engineer_client.get("/settings/").content.decode()


def test_an_unknown_token_is_401_with_a_bearer_challenge(client: Client) -> None:
    answer = client.get("/api/cases/", **_bearer("cb_" + "x" * 43))
    assert answer.status_code == 401 and answer["WWW-Authenticate"] == "Bearer"


def test_no_token_is_401(client: Client) -> None:
    answer = client.get("/api/cases/")
    assert answer.status_code == 401 and answer.json()["message"].startswith("Authentication credentials")


def test_a_malformed_authorization_header_is_401(client: Client) -> None:
    assert client.get("/api/cases/", HTTP_AUTHORIZATION="Bearer two words").status_code == 401


def test_basic_auth_with_the_login_password_is_refused(client: Client, engineer) -> None:
    basic = base64.b64encode(b"alice:correct horse battery").decode()
    answer = client.get("/api/cases/", HTTP_AUTHORIZATION=f"Basic {basic}")
    assert answer.status_code == 401 and answer["WWW-Authenticate"] == "Bearer"
    assert answer.json()["message"].startswith("HTTP basic auth is not accepted: make an API token")


def test_the_token_of_a_deactivated_user_is_refused(engineer_client: Client, engineer) -> None:
    token = _make_token(engineer_client)
    get_user_model().objects.filter(pk=engineer.pk).update(is_active=False)
    assert Client().get("/api/cases/", **_bearer(token)).status_code == 401


def test_one_cannot_revoke_another_users_token(engineer_client: Client, other_engineer) -> None:
    row, token = api_tokens.api_token_create(user=other_engineer, name="bob's")
    engineer_client.post(f"/settings/tokens/{row.pk}/revoke/")
    assert ApiToken.objects.get(pk=row.pk).revoked_at is None
    assert Client().get("/api/cases/", **_bearer(token)).status_code == 200


def test_the_settings_page_lists_only_ones_own_tokens(engineer_client: Client, other_engineer) -> None:
    api_tokens.api_token_create(user=other_engineer, name="bob's script")
    _make_token(engineer_client, name="alice's script")
    page = engineer_client.get("/settings/").content.decode()
    assert "alice&#x27;s script" in page and "bob" not in page


def test_a_token_needs_a_name(engineer_client: Client, engineer) -> None:
    answer = engineer_client.post("/settings/tokens/", {"name": ""})
    assert answer.status_code == 400 and not ApiToken.objects.filter(user=engineer).exists()


def test_active_tokens_are_capped(engineer) -> None:
    for n in range(api_tokens.MAX_ACTIVE_TOKENS):
        api_tokens.api_token_create(user=engineer, name=f"t{n}")
    with pytest.raises(api_tokens.TokenLimitError):
        api_tokens.api_token_create(user=engineer, name="one too many")


def test_the_settings_page_needs_a_login(client: Client) -> None:
    answer = client.get("/settings/")
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_a_session_post_without_csrf_is_refused(engineer) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(engineer)
    assert browser.post("/settings/tokens/", {"name": "x"}).status_code == 403
    assert browser.post("/api/cases/", {}).status_code == 403


def test_the_command_prints_a_working_token(engineer) -> None:
    out = io.StringIO()
    call_command("create_api_token", "alice", "--name", "ci", stdout=out)
    token = out.getvalue().strip()
    assert re.fullmatch(r"cb_[A-Za-z0-9_-]{43}", token)
    assert ApiToken.objects.get(user=engineer).name == "ci"
    assert Client().get("/api/cases/", **_bearer(token)).status_code == 200


def test_the_command_refuses_an_unknown_user(db) -> None:
    with pytest.raises(CommandError, match="no active user 'nobody'"):
        call_command("create_api_token", "nobody")
