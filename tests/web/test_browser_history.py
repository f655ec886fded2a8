"""In headless Chromium: an engineer edits a case's details, finds it by them, sees its similar case and
compares the two: the comparison's charts are drawn by Chart.js under the strict CSP."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.browser_steps import log_in, page_errors
from tests.web.history import ingest, load_bundle
from tests.web.test_browser import browser  # noqa: F401 - the fixture
from web.models import Case

pytestmark = pytest.mark.browser


@pytest.fixture
def cases(live_server, tmp_path: Path) -> tuple[Case, Case, Case]:
    """Three ready cases of the default team, ingested before the browser starts: the ORM is used
    outside Playwright's event loop, so that its connection is the test's own and closed with it."""
    return (
        ingest(load_bundle(tmp_path, "idle", "idle"), title="before the fix"),
        ingest(load_bundle(tmp_path, "tmptables-64", "tmp"), title="reports stall"),
        ingest(load_bundle(tmp_path, "tmptables-64", "again"), title="stall again"),
    )


def test_an_engineer_annotates_finds_and_compares_cases(
    live_server,
    engineer,
    cases: tuple[Case, Case, Case],
    browser,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    idle, loaded, again = cases
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = page_errors(page)
    log_in(page, live_server.url)

    page.goto(f"{live_server.url}/cases/{loaded.pk}/")
    page.click("#case-meta summary")
    page.fill("#id_customer", "Acme Corp")
    page.fill("#id_ticket", "ZD-4711")
    page.fill("#id_notes", "Reports **stall** at 9:00.")
    page.click("#case-details-form button[type=submit]")
    page.wait_for_selector("#meta-notes strong")
    assert page.locator("#meta-ticket").inner_text() == "ZD-4711"
    assert page.locator(f'#similar li[data-case-id="{again.pk}"]').count() == 1

    page.goto(f"{live_server.url}/")
    page.fill("#case-search-q", "4711")
    page.click("#case-search button[type=submit]")
    page.wait_for_selector("#case-table")
    assert page.locator("#case-table tbody tr").count() == 1
    assert page.locator(f'#case-table tr[data-case-id="{loaded.pk}"]').count() == 1

    page.goto(f"{live_server.url}/cases/{idle.pk}/")
    page.click("#compare-link")
    page.select_option("#compare-with", str(loaded.pk))
    page.click("#compare-form button[type=submit]")
    page.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length >= 3", timeout=30_000)
    drawn = page.evaluate(
        "() => Object.values(Chart.instances).map(c => c.data.datasets.map(d => d.data.length))"
    )
    assert all(a > 0 and b > 0 for a, b in drawn[:1]), drawn
    idle.refresh_from_db()
    loaded.refresh_from_db()
    appeared = set(loaded.finding_keys) - set(idle.finding_keys)
    assert appeared >= {"same-query-pileup", "tmp-table-churn"}, appeared
    assert page.locator('#compare-findings tr[data-change="appeared"]').count() == len(appeared)
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
    page.close()  # no request of the page's scripts left running into the live server's shutdown
    assert not errors, errors
