"""In headless Chromium: an engineer makes an upload link on the engineers' page, then a fresh browser
context with no login opens it at 390 px and at 1,440 px, sends the example bundle in 64 KiB chunks
(tus-js-client), has its second chunk's request cut (``page.route`` aborts it: a broken connection),
resumes (HEAD for the offset, PATCH from there) and sees the case's status reach ``ready``; no
sideways scrolling on the phone, nothing of the case or of the engineers' pages.

Debian's chromium driven by Playwright, as in tests/web/test_browser.py (its ``browser`` fixture); the
live server is Django's, the worker a real Celery worker thread.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.web.browser_steps import log_in, page_errors
from tests.web.conftest import EXAMPLE_BUNDLE
from tests.web.test_browser import browser  # noqa: F401 - the fixture
from web.models import Case, LinkTransfer

pytestmark = pytest.mark.browser
CHUNK = 64 * 1024


@pytest.mark.parametrize("width", [390, 1440])
def test_a_customer_uploads_through_a_link_interrupted_and_resumed(
    live_server,
    celery_worker,
    engineer,
    settings,
    browser,  # noqa: F811 - the fixture imported above
    width: int,
) -> None:
    settings.CASEBOOK_UPLOAD_CHUNK_BYTES = CHUNK
    data = EXAMPLE_BUNDLE.read_bytes()
    assert len(data) > 2 * CHUNK  # three requests at least

    engineer_page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(engineer_page, live_server.url, "/upload-links/")
    engineer_page.fill("#id_customer", "ACME")
    engineer_page.fill("#id_ticket", "ZD-4711")
    engineer_page.click("#upload-link-form button[type=submit]")
    url = engineer_page.locator("#upload-link-url").input_value()
    assert url.startswith(f"{live_server.url}/u/")

    context = browser.new_context(viewport={"width": width, "height": 900})  # no cookies: no login
    page = context.new_page()
    errors = page_errors(page)
    seen: list[tuple[str, str]] = []
    cut: list[str] = []

    def watch(request) -> None:  # noqa: ANN001 - a Playwright Request
        if "/files/" in request.url:
            seen.append((request.method, request.headers.get("upload-offset", "")))

    def cut_second_chunk(route) -> None:  # noqa: ANN001 - a Playwright Route
        request = route.request
        if request.method == "PATCH" and request.headers.get("upload-offset") == str(CHUNK) and not cut:
            cut.append(request.url)
            route.abort("connectionreset")
        else:
            route.continue_()

    page.on("request", watch)
    page.route("**/files/**", cut_second_chunk)
    page.goto(url)
    assert page.locator(".topbar__nav, #upload-link-form").count() == 0
    page.set_input_files("#upload-file", str(EXAMPLE_BUNDLE))
    page.wait_for_function(
        (
            "() => ['ready', 'failed', "
            "'refused'].includes(document.getElementById('upload-status').dataset.status)"
        ),
        timeout=120_000,
    )
    assert page.locator("#upload-status").inner_text() == "ready"
    assert page.locator("#upload-progress").get_attribute("value") == "100"

    assert cut, "no request was cut"
    after_cut = seen[seen.index(("PATCH", str(CHUNK))) + 1 :]
    assert ("HEAD", "") in after_cut  # asked for the offset
    assert ("PATCH", str(CHUNK)) in after_cut  # and went on from the second chunk, not from 0
    assert ("PATCH", "0") not in after_cut
    transfer = LinkTransfer.objects.get()
    case = Case.objects.select_related("upload").get(pk=transfer.case_id)
    assert case.upload.sha256 == hashlib.sha256(data).hexdigest()
    assert (case.customer, case.ticket, case.created_by) == ("ACME", "ZD-4711", engineer)

    body = page.locator("body").inner_text()
    assert "ACME" not in body and "ZD-4711" not in body and case.host not in body  # the status only
    if width == 390:
        widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], widths
    assert [e for e in errors if "ERR_CONNECTION_RESET" not in e] == []  # only the cut itself
    context.close()
