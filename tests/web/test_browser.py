"""End to end in headless Chromium: log in, upload a bundle, wait for ready, see findings and drawn charts.

Debian's chromium, driven by Playwright's Python package with its executable path; the web app runs
in pytest-django's live server and the ingest on a real Celery worker over the real Redis broker.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.web.browser_steps import log_in, page_errors
from tests.web.conftest import EXAMPLE_BUNDLE

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Playwright's sync API runs an event loop in this thread; the ORM calls of the fixtures are still sync.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = pytest.mark.browser


@pytest.fixture
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed (scripts/test installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


def test_an_engineer_uploads_a_bundle_and_sees_findings_and_charts(
    live_server, celery_worker, engineer, browser, tmp_path
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = page_errors(page)
    log_in(page, live_server.url)

    page.goto(f"{live_server.url}/cases/new/")
    page.set_input_files("#upload-form input[type=file]", str(EXAMPLE_BUNDLE))
    page.click("#upload-submit")
    page.wait_for_selector("#upload-progress", state="visible")
    # The status moves through the steps without a reload, then the page goes to the case.
    page.wait_for_url(f"{live_server.url}/cases/*/", timeout=120_000)

    page.wait_for_selector("#findings .finding", timeout=30_000)
    titles = page.locator("#findings .finding .finding__title").all_inner_texts()
    assert titles, "no finding shown"
    assert page.locator("#sources-table").inner_text().count("processlist") >= 1
    # Chart.js drew the charts: each canvas has a Chart instance with data points.
    page.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length >= 3", timeout=30_000)
    drawn = page.evaluate(
        "() => Object.values(Chart.instances).filter(c => c.canvas.closest('figure'))"
        ".map(c => [c.canvas.closest('figure').id, c.data.datasets.reduce((n, d) => n + d.data.length, 0)])"
    )
    charts = dict(drawn)
    assert charts["chart-cpu"] > 0 and charts["chart-runqueue"] > 0 and charts["chart-processlist"] > 0

    # A click (no drag) on a chart picks that moment: the panel shows the processlist snapshot
    # nearest to it, the thread snapshot and the raw lines, and the zoom is left alone.
    assert page.locator("#moment").is_hidden()
    canvas = page.locator("#chart-processlist canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    x_range = (
        "() => { const c = Object.values(Chart.instances)[0]; return [c.scales.x.min, c.scales.x.max]; }"
    )
    before = page.evaluate(x_range)
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.6)
    page.wait_for_selector("#moment-processlist tbody tr", timeout=30_000)
    assert page.locator("#moment-status").is_hidden()
    assert page.locator("#moment-time").inner_text().startswith("20")
    meta = page.locator("#moment-processlist [data-part=meta]").inner_text()
    assert meta.startswith("snapshot at ") and " session" in meta, meta
    assert page.locator("#moment-processlist tbody tr").count() >= 1
    assert "processlist" in page.locator("#moment-raw").inner_text()
    assert page.evaluate(x_range) == before
    page.locator("#moment").screenshot(path=str(tmp_path / "moment.png"))
    page.screenshot(path=str(tmp_path / "case.png"), full_page=True)
    assert not [e for e in errors if "Content Security Policy" in e or "Uncaught" in e], errors
