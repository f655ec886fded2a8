"""In headless Chromium: an engineer shares a case, and a fresh browser context with no login opens
the link on a phone-sized viewport (390 x 844): findings, drawn charts and the moment panel, no
sideways scrolling, nothing of the engineers' pages.

Debian's chromium driven by Playwright, as in tests/web/test_browser.py (its ``browser`` fixture).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.core.files import File

from tests.web.browser_steps import log_in, page_errors
from tests.web.conftest import EXAMPLE_BUNDLE
from tests.web.test_browser import browser  # noqa: F401 - the fixture
from web.cases import services
from web.models import Case, CaseStatus

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
#: The elements whose right edge passes the viewport, widest first (what to mend when the test fails).
WIDEST = """() => [...document.querySelectorAll('body *')]
  .map(e => [e.tagName + (e.id ? '#' + e.id : '') + '.' + [...e.classList].join('.'), Math.round(e.getBoundingClientRect().right)])
  .filter(([, r]) => r > 390).sort((a, b) => b[1] - a[1]).slice(0, 15)"""
NO_SIDEWAYS_SCROLL = (
    "() => [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]"
)


def _ready_case(engineer) -> Case:
    """The example bundle ingested by the real Celery worker (as an upload is)."""
    with EXAMPLE_BUNDLE.open("rb") as fh:
        case = services.case_create(user=engineer, file=File(fh), original_name=EXAMPLE_BUNDLE.name)
    deadline = time.monotonic() + 120
    while case.status not in (CaseStatus.READY, CaseStatus.FAILED) and time.monotonic() < deadline:
        time.sleep(0.5)
        case.refresh_from_db()
    assert case.status == CaseStatus.READY, case.failure_reason or case.status
    return case


def test_a_customer_opens_a_shared_case_on_a_phone(
    live_server,
    celery_worker,
    engineer,
    browser,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    case = _ready_case(engineer)

    engineer_page = browser.new_page(viewport={"width": 1400, "height": 1000})
    log_in(engineer_page, live_server.url, f"/cases/{case.pk}/")
    engineer_page.click("#shares > summary")
    engineer_page.fill("#share-label", "customer on the phone")
    engineer_page.click("#share-create")
    url = engineer_page.locator("#share-url").input_value()
    assert url.startswith(f"{live_server.url}/s/")

    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)  # no cookies: no login
    page = context.new_page()
    errors = page_errors(page)
    page.goto(url)
    page.wait_for_selector("#findings .finding", timeout=30_000)
    page.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length >= 3", timeout=30_000)
    assert page.locator("#redaction-report").is_visible()
    assert page.locator("#reanalyze-form, #share-form, .topbar__nav").count() == 0
    doc, body, inner = page.evaluate(NO_SIDEWAYS_SCROLL)
    assert doc == body == inner == PHONE["width"], (doc, body, inner, page.evaluate(WIDEST))

    page.screenshot(path=str(tmp_path / "shared-phone-top.png"))

    # A tap on a chart opens the moment panel; still no sideways scrolling.
    canvas = page.locator("#chart-processlist canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.6)
    page.wait_for_selector("#moment-processlist tbody tr", timeout=30_000)
    assert "sbtest" not in page.locator("#moment").inner_text()  # the schema, redacted
    doc, body, inner = page.evaluate(NO_SIDEWAYS_SCROLL)
    page.screenshot(path=str(tmp_path / "shared-phone.png"), full_page=True)
    assert doc == body == inner == PHONE["width"], (doc, body, inner)
    assert not [e for e in errors if "Content Security Policy" in e or "Uncaught" in e], errors
    context.close()
