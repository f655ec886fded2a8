"""The browsable API docs (Swagger UI from drf-spectacular-sidecar) under the strict CSP: every asset
is served by Casebook itself, and the page renders every operation in headless Chromium without a
single CSP violation or script error."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from django.test import Client

from tests.web.test_api_schema import OPERATIONS
from tests.web.test_browser import browser  # noqa: F401 - the shared Chromium fixture

#: Swagger UI breaks long paths with it.
ZERO_WIDTH_SPACE = "\u200b"


@pytest.mark.django_db
def test_every_asset_of_the_docs_page_is_local(client: Client) -> None:
    page = client.get("/api/docs/")
    assert page.status_code == 200 and "script-src 'self'" in page["Content-Security-Policy"]
    html = page.content.decode()
    assert "<style" not in html and not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)  # nothing inline
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(assets) >= 5
    for url in assets:
        assert not urlparse(url).netloc, url  # same origin
        answer = client.get(url.replace("&amp;", "&"))
        assert answer.status_code == 200, url
        if url.endswith(".js") or "script" in url:
            assert "javascript" in answer["Content-Type"], url


@pytest.mark.browser
def test_the_docs_page_renders_every_operation_under_the_csp(live_server, browser) -> None:  # noqa: F811
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None)
    foreign: list[str] = []
    page.on("request", lambda r: foreign.append(r.url) if not r.url.startswith(live_server.url) else None)

    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    shown = {
        f"{m} {p.replace(ZERO_WIDTH_SPACE, '')}"
        for m, p in zip(
            page.locator(".opblock-summary-method").all_inner_texts(),
            page.locator(".opblock-summary-path").all_inner_texts(),
            strict=True,
        )
    }
    assert shown == set(OPERATIONS)
    assert page.locator(".swagger-ui .auth-wrapper .authorize").count() == 1  # where the token goes
    assert not problems, problems
    assert not foreign, foreign
