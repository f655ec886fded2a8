"""In a browser: an engineer closes a case with a resolution, and the next similar case shows in its
verdict how the first was fixed; no console error, no horizontal overflow at 390 px and 1,440 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.web.browser_steps import log_in, page_errors
from tests.web.history import ingest, load_bundle
from tests.web.test_browser import browser  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [390, 1440])
def test_a_resolution_reaches_the_next_similar_case(
    live_server,
    engineer,
    browser,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    width: int,
) -> None:
    first = ingest(load_bundle(tmp_path, "tmptables-64", "first"), title="first", customer="ACME")
    second = ingest(load_bundle(tmp_path, "tmptables-64", "second"), title="second")
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors = page_errors(page)
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/cases/{first.pk}/")
    page.locator("#case-resolution summary").click()
    page.fill("#case-close-form textarea[name=resolution]", "Moved **tmpdir** to tmpfs.")
    page.select_option("#case-close-form select[name=category]", "configuration")
    page.locator("#case-close-form button[type=submit]").click()
    page.wait_for_selector("#case-closed-badge")
    assert page.locator("#resolution-text strong").inner_text() == "tmpdir"
    page.goto(f"{live_server.url}/cases/{second.pk}/")
    fixed = page.locator("#verdict-fixed-before")
    assert f"Case {first.pk}" in fixed.inner_text() and "Moved tmpdir to tmpfs." in fixed.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    if os.environ.get("CASEBOOK_SHOTS"):
        page.locator("#verdict").screenshot(path=f"{os.environ['CASEBOOK_SHOTS']}/verdict-{width}.png")
        page.goto(f"{live_server.url}/cases/{first.pk}/")
        page.locator("#case-resolution").screenshot(
            path=f"{os.environ['CASEBOOK_SHOTS']}/resolution-{width}.png"
        )
    assert not errors, errors


@pytest.mark.parametrize("width", [390, 1440])
def test_the_team_page_adds_a_webhook_and_shows_its_log(
    live_server,
    engineer,
    browser,  # noqa: F811 - the fixture imported above
    settings,
    width: int,
) -> None:
    from web.accounts import teams
    from web.models import Team, Webhook, WebhookDelivery, default_team_id

    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = True
    team = Team.objects.get(pk=default_team_id())
    teams.member_add(team=team, user=engineer, admin=True)
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors = page_errors(page)
    log_in(page, live_server.url, f"/teams/{team.pk}/")
    page.fill("#webhook-add-form input[name=name]", "oncall")
    page.fill(
        "#webhook-add-form input[name=url]",
        "http://127.0.0.1:9/hooks/T000/B000/very-long-secret-path-xxxxxxxx",
    )
    page.locator("#webhook-add-form button[type=submit]").click()
    page.wait_for_selector("#new-webhook-secret")
    hook = Webhook.objects.get(team=team)
    assert hook.secret in page.locator("#new-webhook-secret").inner_text()
    WebhookDelivery.objects.create(
        webhook=hook,
        delivery="d" * 32,
        event="case.ready",
        case_id=1,
        attempt=1,
        status_code=500,
        duration_ms=12,
    )
    page.reload()
    assert "very-long-secret-path" not in page.content() and hook.secret not in page.content()
    assert page.locator(".webhook-log tbody tr").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    if os.environ.get("CASEBOOK_SHOTS"):
        page.locator("#team-webhooks").screenshot(path=f"{os.environ['CASEBOOK_SHOTS']}/webhooks-{width}.png")
    assert not errors, errors
