"""The case page of a case of several hosts in headless Chromium (issue 22): the hosts on one time
axis, a host filter, small multiples, the moment per host, sources grouped by host, findings naming
their host, and no sideways scrolling at 1,440 and 390 px. Screenshots are kept under
``CASEBOOK_TEST_ARTIFACTS`` (default ``var/test-artifacts``)/hosts.

The cases are the real example bundle ingested for real, given more hosts by tests/web/hosts.py.
"""

from __future__ import annotations

import pytest

from tests.web.browser_steps import log_in, page_errors, settled_scroll_width
from tests.web.conftest import EXAMPLE_BUNDLE, ingest_ready
from tests.web.hosts import add_host
from tests.web.test_browser import browser  # noqa: F401 - the shared Chromium fixture
from tests.web.test_case_page import ARTIFACTS, AXE, WIDE, X_RANGES, _open_case, _scroll_width

pytestmark = pytest.mark.browser

DATASET_HOSTS = """(id) => { const c = Object.values(Chart.instances).find(c => c.canvas.closest('#chart-' + id));
  return c.data.datasets.map((d, i) => [d.host, d.label, c.isDatasetVisible(i)]); }"""


def test_a_two_host_case_page(live_server, engineer, browser) -> None:  # noqa: F811
    case = add_host(ingest_ready(EXAMPLE_BUNDLE), "db-b", first_name="db-a")
    out = ARTIFACTS / "hosts"
    out.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors = page_errors(page)
    log_in(page, live_server.url)
    _open_case(page, live_server.url, case)

    # One time axis: every time chart, whichever host it draws, spans the same range.
    ranges = page.evaluate(X_RANGES)
    assert len({tuple(r) for r in ranges}) == 1, ranges
    # A chart of one metric: one series per host, coloured by host; stacked charts: one panel per host.
    run = page.evaluate(DATASET_HOSTS, "runqueue")
    assert [h for h, _, _ in run] == ["db-a", "db-a", "db-b", "db-b"]
    assert page.locator("#chart-cpu\\~0 .chart__host").inner_text() == "db-a"
    assert page.locator("#chart-cpu\\~1 .chart__host").inner_text() == "db-b"

    # The host filter hides a host's series and panels, and shows them again.
    chips = page.locator("#host-filter .host-chip")
    assert chips.all_inner_texts() == ["db-a", "db-b"]
    chips.nth(1).locator("input").uncheck()
    assert [v for h, _, v in page.evaluate(DATASET_HOSTS, "runqueue")] == [True, True, False, False]
    assert page.locator("#chart-cpu\\~1").is_hidden() and page.locator("#chart-cpu\\~0").is_visible()
    chips.nth(1).locator("input").check()
    assert page.locator("#chart-cpu\\~1").is_visible()

    # Sources grouped by host with each host's facts and clock; findings show their host.
    assert page.locator("#host-0 .host-block__title").inner_text().startswith("db-a")
    assert "db-b/" in page.locator("#host-1 table").inner_text()
    assert "shown, not applied" in page.locator("#host-1 .facts").inner_text()
    assert page.locator("#findings .badge--host").count() == case.findings.count()
    assert page.locator("#findings .badge--cross").inner_text() == "db-b → db-a"

    # A click on db-b's panel shows db-b's moment: its host chosen, its members' raw lines.
    canvas = page.locator("#chart-cpu\\~1 canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    with page.expect_response(lambda r: "moment.json" in r.url and "host=1" in r.url) as moment:
        page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.6)
    assert moment.value.status == 200
    page.wait_for_selector("#moment-raw .raw-source", timeout=30_000)
    assert page.locator("#moment-host").input_value() == "1"
    raw = page.locator("#moment-raw").inner_text()
    assert "db-b/" in raw or "db-b" in raw
    page.locator("#moment").screenshot(path=str(out / "moment-db-b.png"))
    # The selector switches the panel to the other host.
    with page.expect_response(lambda r: "moment.json" in r.url and "host=0" in r.url):
        page.select_option("#moment-host", "0")

    # No sideways scrolling at a laptop and a phone width, findings open.
    page.evaluate("() => document.querySelectorAll('details.finding').forEach(d => { d.open = true; })")
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert settled_scroll_width(page, width) == width, (width, _scroll_width(page), page.evaluate(WIDE))
        page.screenshot(path=str(out / f"two-hosts-{width}.png"), full_page=True)
        for part in ("timeline", "capture", "findings", "chart-runqueue", "chart-cpu\\~1", "hosts"):
            name = part.replace("\\~", "-")
            page.locator(f"#{part}").screenshot(path=str(out / f"two-hosts-{name}-{width}.png"))
        for part in ("timeline", "host-1", "findings"):  # the top of each, as a reader first sees it
            top = page.evaluate(
                f"() => document.getElementById('{part}').getBoundingClientRect().top + scrollY"
            )
            clip = {"x": 0, "y": top, "width": width, "height": 900}
            page.screenshot(path=str(out / f"two-hosts-{part}-top-{width}.png"), full_page=True, clip=clip)
    assert not errors, errors


def test_five_hosts_are_small_multiples(live_server, engineer, browser) -> None:  # noqa: F811
    case = add_host(ingest_ready(EXAMPLE_BUNDLE), "db-b", first_name="db-a")
    for name in ("db-c", "db-d", "db-e"):
        case = add_host(case, name)
    out = ARTIFACTS / "hosts"
    out.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors = page_errors(page)
    log_in(page, live_server.url)
    _open_case(page, live_server.url, case)
    panels = page.evaluate(
        "() => [...document.querySelectorAll('figure.chart')].filter(f => "
        "f.dataset.chartId.startsWith('runqueue'))"
        ".map(f => f.dataset.host)"
    )
    assert panels == ["db-a", "db-b", "db-c", "db-d", "db-e"]
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert settled_scroll_width(page, width) == width, (width, _scroll_width(page), page.evaluate(WIDE))
        page.screenshot(path=str(out / f"five-hosts-{width}.png"), full_page=False)
    assert not errors, errors


def test_a_two_host_page_has_no_serious_axe_violation(live_server, engineer, browser) -> None:  # noqa: F811
    case = add_host(ingest_ready(EXAMPLE_BUNDLE), "db-b", first_name="db-a")
    context = browser.new_context(viewport={"width": 1440, "height": 900}, bypass_csp=True)
    page = context.new_page()
    log_in(page, live_server.url)
    _open_case(page, live_server.url, case)
    page.wait_for_selector("#host-filter .host-chip")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    )
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, serious
    context.close()
