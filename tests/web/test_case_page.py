"""The case page in headless Chromium (issue 12), on a real capture and on a generated long one.

Each case is ingested for real (tasks.case_ingest on the test database) and served by pytest-django's
live server; Debian's chromium is driven by Playwright (see test_browser.py). Checked: the verdict
names the root-cause finding; every chart drew data; no sideways scrolling at 1,440, 1,024 and
390 px; a zoom on one chart moves the others and the zoomed range is read again in detail; a click
(and Enter on a focused chart) fills the moment panel; the time zone switch is remembered; axe-core
finds no serious or critical violation; printing to PDF puts the verdict on the first page. A case
with a slow log: its *Queries* table shows the classes with a sparkline each and follows a zoom.
Screenshots and the PDF are kept under ``CASEBOOK_TEST_ARTIFACTS`` (default ``var/test-artifacts``).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.files import File

from tests.web.browser_steps import log_in, page_errors, settle, settled_scroll_width
from tests.web.conftest import EXAMPLE_BUNDLE
from tests.web.slowlogs import GIFT, SPENT, slow_log
from tests.web.test_browser import browser  # noqa: F401 - the shared Chromium fixture
from web.cases import selectors, services
from web.ingest import tasks
from web.models import Case

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AXE = Path(__file__).resolve().parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
ARTIFACTS = Path(os.environ.get("CASEBOOK_TEST_ARTIFACTS", ROOT / "var" / "test-artifacts"))
#: The long capture: 4 hours at 10 s on a 16-CPU server, small enough to ingest in seconds here.
LONG_ARGS = ("--minutes", "240", "--interval", "10", "--cpus", "16", "--threads", "120", "--sessions", "40")
LONG_ARGS += ("--disks", "4", "--irqs", "12")
WIDTHS = (1440, 1024, 390)

ALL_CHARTS_DRAWN = """() => Object.values(Chart.instances)
  .filter(c => c.canvas.closest('figure.chart'))
  .map(c => [c.canvas.closest('figure').id, c.data.datasets.reduce((n, d) => n + d.data.length, 0)])"""
X_RANGES = """() => Object.values(Chart.instances)
  .filter(c => c.canvas.closest('figure.chart') && !c.canvas.closest('.chart--grid'))
  .map(c => [Math.round(c.scales.x.min), Math.round(c.scales.x.max)])"""


def _ingest(path: Path, name: str) -> Case:
    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=name, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    assert case.status == "ready", case.failure_reason
    return case


@pytest.fixture
def long_bundle(tmp_path: Path) -> Path:
    out = tmp_path / "long.tar.gz"
    subprocess.run(
        [sys.executable, "bench/generate_bundle.py", *LONG_ARGS, "--out", str(out), "--quiet"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


def _open_case(page, url: str, case: Case) -> None:
    page.goto(f"{url}/cases/{case.pk}/")
    page.wait_for_selector("#charts .chart canvas", timeout=30_000)
    page.wait_for_function("() => window.Chart && Object.keys(Chart.instances).length >= 3", timeout=30_000)


def _scroll_width(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth")


WIDE = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-wrap, pre'))
  .slice(0, 6).map(e => `${e.tagName}.${e.className}#${e.id} ${Math.round(e.getBoundingClientRect().right)}`)"""


def _check_case_page(browser, live_server, case: Case, label: str, root_key: str) -> None:  # noqa: F811
    out = ARTIFACTS / label
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    errors = page_errors(page)
    log_in(page, live_server.url)
    _open_case(page, live_server.url, case)

    # The verdict comes first and names the root cause.
    root = case.findings.get(key=root_key)
    assert page.locator("#verdict .verdict__root").inner_text() == root.title
    assert page.evaluate(
        "() => document.getElementById('verdict').getBoundingClientRect().top < window.innerHeight"
    )

    # Every chart the timeline JSON holds was drawn, with data.
    drawn = dict(page.evaluate(ALL_CHARTS_DRAWN))
    timeline = live_json(page, f"{live_server.url}/cases/{case.pk}/timeline.json")
    assert {f"chart-{c['id']}" for c in timeline["charts"]} == set(drawn), drawn
    assert all(n > 0 for n in drawn.values()), drawn
    assert {"chart-cpu", "chart-heat-cpu"} <= set(drawn)

    # No sideways scrolling at a laptop, a small laptop and a phone width.
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert settled_scroll_width(page, width) == width, (width, _scroll_width(page), page.evaluate(WIDE))
        page.screenshot(path=str(out / f"page-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    settle(page, 1440)

    # A drag across one chart zooms every time chart to the same range, and the range is read again.
    whole = page.evaluate(X_RANGES)
    assert len({tuple(r) for r in whole}) == 1
    canvas = page.locator("#chart-cpu canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    with page.expect_response(lambda r: "timeline.json?start=" in r.url, timeout=30_000) as detail:
        page.mouse.move(box["x"] + box["width"] * 0.40, box["y"] + box["height"] * 0.5)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.55, box["y"] + box["height"] * 0.5, steps=8)
        page.mouse.up()
    assert detail.value.status == 200
    zoomed = page.evaluate(X_RANGES)
    assert len({tuple(r) for r in zoomed}) == 1, zoomed
    (lo, hi), (wlo, whi) = zoomed[0], whole[0]
    assert wlo < lo < hi < whi and (hi - lo) < 0.5 * (whi - wlo)
    page.wait_for_function(f"() => ({ALL_CHARTS_DRAWN})().every(([, n]) => n > 0)")
    csv_link = page.get_attribute("#export-series-csv", "href")
    assert f"start={lo}" in csv_link.replace(f"start={lo - 1}", f"start={lo}") and "charts=" in csv_link
    page.click("#reset-zoom")

    # A drag across the overview strip sets the range of every chart.
    strip = page.locator("#overview canvas")
    strip.scroll_into_view_if_needed()
    sbox = strip.bounding_box()
    page.mouse.move(sbox["x"] + sbox["width"] * 0.6, sbox["y"] + sbox["height"] * 0.5)
    page.mouse.down()
    page.mouse.move(sbox["x"] + sbox["width"] * 0.8, sbox["y"] + sbox["height"] * 0.5, steps=8)
    page.mouse.up()
    page.wait_for_function(
        f"w => (r => r.length && r.every(x => x[0] === r[0][0] && x[1] === r[0][1]) && r[0][0] !== w[0])"
        f"(({X_RANGES})())",
        arg=whole[0],
    )
    brushed = page.evaluate(X_RANGES)
    assert len({tuple(r) for r in brushed}) == 1 and brushed[0] != whole[0], brushed
    assert wlo < brushed[0][0] < brushed[0][1] <= whi
    page.click("#reset-zoom")

    # "Show on charts" of a finding zooms every chart to its window and marks its charts.
    page.locator(f"#finding-{root_key} > summary").click()
    show = page.locator(f"#finding-{root_key} button[data-window-start]").first
    window_start = page.evaluate("(b) => Date.parse(b.dataset.windowStart)", show.element_handle())
    chart_ids = page.get_attribute(f"#finding-{root_key}", "data-chart-ids").split()
    show.click()
    marked = page.evaluate(
        "() => [...document.querySelectorAll('.chart.is-highlighted')].map(f => f.dataset.chartId)"
    )
    assert set(marked) == set(chart_ids) & set(c.removeprefix("chart-") for c in drawn), (marked, chart_ids)
    page.wait_for_function(
        f"([s, w]) => ({X_RANGES})().every(([lo, hi]) => lo <= s && s <= hi && hi - lo < w)",
        arg=[window_start, whi - wlo],
    )
    lo, hi = page.evaluate(X_RANGES)[0]
    assert lo <= window_start <= hi and hi - lo < whi - wlo
    page.locator(f"#finding-{root_key} > summary").click()
    page.click("#reset-zoom")

    # Each chart saves as a PNG.
    with page.expect_download() as png:
        page.click("#chart-cpu .chart__png")
    assert png.value.suggested_filename == "cpu.png"

    # A click on a chart fills the moment panel; so does Enter on a focused chart.
    target = page.locator(
        "#chart-processlist canvas" if drawn.get("chart-processlist") else "#chart-cpu canvas"
    )
    target.scroll_into_view_if_needed()
    tbox = target.bounding_box()
    page.mouse.click(tbox["x"] + tbox["width"] * 0.5, tbox["y"] + tbox["height"] * 0.6)
    page.wait_for_selector("#moment-raw .raw-source", timeout=30_000)
    assert page.locator("#moment-processlist tbody tr").count() >= 1
    first_time = page.locator("#moment-time").inner_text()
    page.locator("#moment").screenshot(path=str(out / "moment.png"))
    page.focus("#chart-cpu canvas")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    with page.expect_response(lambda r: "moment.json" in r.url):
        page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.getElementById('moment-time').textContent !== {first_time!r}")

    # Still no sideways scrolling with every finding open and the moment panel filled (long SQL).
    page.evaluate("() => document.querySelectorAll('details.finding').forEach(d => { d.open = true; })")
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        assert settled_scroll_width(page, width) == width, (
            "opened",
            width,
            _scroll_width(page),
            page.evaluate(WIDE),
        )
    page.locator("#findings").screenshot(path=str(out / "findings-open-1440.png"))
    page.evaluate("() => document.querySelectorAll('details.finding').forEach(d => { d.open = false; })")

    # A finding's evidence is two clicks from its raw lines: open it, click a raw-lines cell.
    page.locator(f"#finding-{root_key} > summary").click()
    link = page.locator(f"#finding-{root_key} .evidence-moment").first
    if link.count():
        with page.expect_response(lambda r: "moment.json" in r.url):
            link.click()
    page.locator(f"#finding-{root_key} > summary").click()

    # The time zone switch: UTC, remembered across visits.
    page.select_option("#zone-select", "viewer")
    page.reload()
    page.wait_for_selector("#charts .chart canvas")
    assert page.locator("#zone-select").input_value() == "viewer"
    assert "your time" in page.locator("#time-zone-note").inner_text()
    page.select_option("#zone-select", "server")

    # Print: the verdict is on the first page of the PDF.
    page.emulate_media(media="print")
    pdf = out / "case.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    first = subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Verdict" in first or "VERDICT" in first, first[:500]
    assert " ".join(root.title.split()[:3]) in " ".join(first.split()), first[:800]
    everything = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "Evidence" in everything or "EVIDENCE" in everything  # the findings print opened
    subprocess.run(
        ["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "2", str(pdf), str(out / "pdf-page")], check=True
    )
    page.emulate_media(media="screen")
    assert not [e for e in errors if "Content Security Policy" in e or "Uncaught" in e], errors
    context.close()

    # axe-core (injected, so this one context bypasses the page's CSP): no serious violation.
    axe_context = browser.new_context(viewport={"width": 1440, "height": 900}, bypass_csp=True)
    page = axe_context.new_page()
    log_in(page, live_server.url)
    _open_case(page, live_server.url, case)
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    )
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, serious
    axe_context.close()


def live_json(page, url: str) -> dict:
    return page.evaluate("async (u) => (await fetch(u, {credentials: 'same-origin'})).json()", url)


@pytest.fixture(autouse=True)
def _needs_poppler() -> None:
    if not shutil.which("pdftotext"):
        pytest.fail("poppler-utils is not installed (scripts/test installs it)")


def test_the_case_page_of_a_real_capture(live_server, engineer, browser) -> None:  # noqa: F811
    case = _ingest(EXAMPLE_BUNDLE, "ptstalk-mariadb-tmptables.tar.gz")
    # README, "The example bundle": the temporary tables are the root cause.
    verdict = selectors.case_detail_context(case=case)["verdict"]
    assert verdict["root_cause"]["key"] == case.root_cause_key == "tmp-table-churn"
    _check_case_page(browser, live_server, case, "real-capture", "tmp-table-churn")


def test_the_case_page_of_a_long_generated_capture(live_server, engineer, browser, long_bundle) -> None:  # noqa: F811
    case = _ingest(long_bundle, "long.tar.gz")
    # The root cause is the one stored at publication (analyzer/reasoning/verdict.py), a finding of the case.
    root_key = selectors.case_detail_context(case=case)["verdict"]["root_cause"]["key"]
    assert root_key == case.root_cause_key and case.findings.filter(key=root_key).exists()
    _check_case_page(browser, live_server, case, "long-capture", root_key)


#: The long capture's start (bench/generate_bundle.py's default) and the slow log beside it: GIFT's
#: class every minute of the 4 hours, SPENT's in the first hour, an administrator command (the
#: sample's ``Quit``) in the last 40 minutes.
LONG_START = datetime(2026, 4, 21, 14, 0, tzinfo=UTC)
QUIT = 2
ROWS = "() => document.querySelectorAll('#queries-table tbody tr').length"


def _with_slow_log(bundle: Path, out: Path) -> Path:
    """``bundle`` (a collector tarball of one directory) with a slow log added to its directory."""
    entries = [(LONG_START + timedelta(minutes=m, seconds=7), GIFT) for m in range(240)]
    entries += [(LONG_START + timedelta(minutes=m, seconds=31), SPENT) for m in range(60)]
    entries += [(LONG_START + timedelta(minutes=m, seconds=47), QUIT) for m in range(200, 240)]
    data = slow_log(sorted(entries)).encode()
    with tarfile.open(bundle) as src, tarfile.open(out, "w:gz") as dst:
        folder = src.getnames()[0].split("/")[0]
        for member in src.getmembers():
            dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        info = tarfile.TarInfo(f"{folder}/slow.log")
        info.size = len(data)
        dst.addfile(info, io.BytesIO(data))
    return out


def test_the_queries_table_of_a_slow_log_follows_the_zoom(
    live_server,
    engineer,
    browser,  # noqa: F811
    long_bundle,
    tmp_path,
) -> None:
    case = _ingest(_with_slow_log(long_bundle, tmp_path / "long-slow.tar.gz"), "long-slow.tar.gz")
    out = ARTIFACTS / "queries"
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    errors = page_errors(page)
    log_in(page, live_server.url)
    _open_case(page, live_server.url, case)

    # The whole log: its three classes, most query time first, each with its sparkline drawn.
    page.wait_for_function(f"() => ({ROWS})() === 3")
    first = page.locator("#queries-table tbody tr").first
    assert (
        first.locator(".queries__fingerprint").inner_text() == "select count(*) from orders where note like ?"
    )
    assert page.locator("#queries-table canvas.sparkline--query").count() == 3
    assert page.evaluate(
        "() => [...document.querySelectorAll('#queries-table canvas.sparkline--query')].every(c => "
        "c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some(v => v !== 0))"
    )
    assert page.locator("#queries-p95-head").text_content() == "p95"
    first.locator("summary").click()
    assert "'%gift%'" in first.locator(".queries__example").inner_text()
    page.locator("#queries").scroll_into_view_if_needed()
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert settled_scroll_width(page, width) == width, (width, _scroll_width(page), page.evaluate(WIDE))
        page.screenshot(path=str(out / f"page-{width}.png"), full_page=True)
        page.locator("#queries").screenshot(path=str(out / f"queries-{width}.png"))
    page.set_viewport_size({"width": 1440, "height": 900})
    settle(page, 1440)

    # A zoom on a chart to minutes about 96-132: only GIFT's class has entries there.
    canvas = page.locator("#chart-cpu canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    with page.expect_response(lambda r: "queries.json?start=" in r.url, timeout=30_000) as zoomed:
        page.mouse.move(box["x"] + box["width"] * 0.40, box["y"] + box["height"] * 0.5)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.55, box["y"] + box["height"] * 0.5, steps=8)
        page.mouse.up()
    assert zoomed.value.status == 200
    page.wait_for_function(f"() => ({ROWS})() === 1")
    window = zoomed.value.json()
    assert window["whole_log"] is False and window["classes"] == 1
    assert 20 < window["queries"][0]["count"] < 60  # one a minute, the minutes of the window
    assert page.locator("#queries-p95-head").text_content() == "p95 (whole log)"
    assert "1 class," in page.locator("#queries-range").inner_text()
    page.locator("#queries").scroll_into_view_if_needed()
    page.locator("#queries").screenshot(path=str(out / "queries-zoomed-1440.png"))

    # Back to the whole capture: the whole log again.
    page.click("#reset-zoom")
    page.wait_for_function(f"() => ({ROWS})() === 3")
    assert not [e for e in errors if "Content Security Policy" in e or "Uncaught" in e], errors
    context.close()
