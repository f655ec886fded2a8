"""The trends page in headless Chromium on a generated history: the three charts drew the API's numbers,
nothing scrolls sideways at 1,440 and 390 px, a click on a bar opens the case list filtered the same
way, the tables hold the numbers, axe-core finds no serious violation, and no CSP error. Screenshots
under ``CASEBOOK_TEST_ARTIFACTS`` (see tests/web/test_case_page.py)."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.web.browser_steps import log_in, page_errors
from tests.web.test_browser import browser  # noqa: F401 - the shared Chromium fixture
from tests.web.test_case_page import ARTIFACTS, AXE, WIDE, live_json
from tests.web.trends_history import generated_history
from web.models import Team, default_team_id

pytestmark = pytest.mark.browser

DRAWN = """() => Object.fromEntries(Object.values(Chart.instances)
  .map(c => [c.canvas.closest('figure').id, c.data.datasets.map(d => [d.label, d.data])]))"""


def _open(page, url: str) -> None:  # noqa: ANN001 - a Playwright Page
    page.goto(url)
    page.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length === 3", timeout=30_000)


def test_the_trends_page_draws_the_apis_numbers_and_links_them(live_server, engineer, browser) -> None:  # noqa: F811
    generated_history(Team.objects.get(pk=default_team_id()), now=timezone.now(), weeks=13, cases=150)
    out = ARTIFACTS / "trends"
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    errors = page_errors(page)
    log_in(page, live_server.url, "/trends/")
    _open(page, f"{live_server.url}/trends/")
    api = live_json(page, f"{live_server.url}/api/trends/")

    drawn = page.evaluate(DRAWN)
    cases = dict(drawn["trend-cases"])
    for field in ("ready", "failed", "open", "closed"):
        assert cases[field] == [b[field] for b in api["buckets"]], field
    causes = dict(drawn["trend-causes"])
    top = max(
        (k for b in api["buckets"] for k in b["root_causes"]),
        key=lambda k: sum(b["root_causes"].get(k, 0) for b in api["buckets"]),
    )
    assert causes[top] == [b["root_causes"].get(top, 0) for b in api["buckets"]]
    hours = dict(drawn["trend-hours"])
    assert hours["close, median"] == [b["hours_to_close_p50"] for b in api["buckets"]]

    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        # Chart.js follows its box on the next frames (a ResizeObserver): wait for the page to settle.
        settled = f"() => document.documentElement.scrollWidth === {width}"
        try:
            page.wait_for_function(settled, timeout=10_000)
        except PlaywrightTimeout:
            pytest.fail(f"sideways scrolling at {width} px: {page.evaluate(WIDE)}")
        page.screenshot(path=str(out / f"trends-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    _open(page, f"{live_server.url}/trends/")  # drawn afresh at this width

    # A click on the tallest "ready" bar opens the case list of that week's ready cases.
    index = max(range(len(api["buckets"])), key=lambda i: api["buckets"][i]["ready"])
    last = api["buckets"][index]
    point = page.evaluate(
        """(i) => { const c = Object.values(Chart.instances).find(c => c.canvas.closest('#trend-cases'));
                    c.canvas.scrollIntoView(); const bar = c.getDatasetMeta(0).data[i];
                    const r = c.canvas.getBoundingClientRect();
                    return [r.left + bar.x, r.top + (bar.y + bar.base) / 2]; }""",
        index,
    )
    page.mouse.click(*point)
    page.wait_for_url(re.compile(r".*/cases/\?.*status=ready.*"))
    assert f"uploaded_from={last['start']}" in page.url
    assert page.locator("#case-count").inner_text().startswith(f"{last['ready']} case")
    assert not [e for e in errors if "Content Security Policy" in e or "Uncaught" in e], errors
    context.close()

    # axe-core (injected: this one context bypasses the page's CSP), with the tables opened.
    axe_context = browser.new_context(viewport={"width": 390, "height": 900}, bypass_csp=True)
    page = axe_context.new_page()
    log_in(page, live_server.url, "/trends/")
    _open(page, f"{live_server.url}/trends/")
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    assert page.evaluate("() => document.documentElement.scrollWidth") == 390, page.evaluate(WIDE)
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    )
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, serious
    axe_context.close()
