"""The host's header on the case page: its pt-summary and pt-mysql-summary facts (web/cases/summaries.py,
templates/cases/_host_summary.html), for a case of one host and of two, on an engineer's page and a
redacted share link; and the settings a rule reads from the report when the bundle has no -variables.

The bundle is the real culprit-tablecache capture without its ``-variables``, with the real reports of
tests/fixtures/summaries/ beside its collection (the source's report: table_open_cache 64).
"""

from __future__ import annotations

import html
import io
import tarfile
from pathlib import Path

import pytest

from tests.web.browser_steps import log_in, settled_scroll_width
from tests.web.conftest import ingest_ready
from tests.web.hosts import add_host
from tests.web.test_browser import browser  # noqa: F401 - the shared Chromium fixture
from tests.web.test_case_page import ARTIFACTS
from web.models import Case, Finding
from web.sharing import services as shares

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPORTS = {
    "tablecache/pt-summary.out": FIXTURES / "summaries" / "pt-summary-3.2.1_debian12.out",
    "tablecache/pt-mysql-summary.out": FIXTURES
    / "summaries"
    / "pt-mysql-summary-3.2.1_mariadb-10.11_source.out",
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("summaries") / "tablecache-summaries.tar.gz"
    with (
        tarfile.open(FIXTURES / "bundles" / "culprit-tablecache.tar.gz") as src,
        tarfile.open(path, "w:gz") as out,
    ):
        for member in src.getmembers():
            if member.isfile() and not member.name.endswith("-variables"):
                out.addfile(member, src.extractfile(member))
        for name, report in REPORTS.items():
            data = report.read_bytes()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    return path


def _page(client, case: Case) -> str:
    response = client.get(f"/cases/{case.pk}/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_the_one_hosts_header_shows_its_hardware_and_server(engineer_client, bundle: Path) -> None:
    page = _page(engineer_client, ingest_ready(bundle))
    header = page[page.index('id="host-summary-0"') : page.index('id="sources-title"')]
    for shown in (
        "AMD EPYC · 1 socket, 2 cores, 2 threads",
        "23.5G, swap 0.0 (0.0 used)",
        "6.18.44-fc-v1300 · Debian GNU/Linux 12 (bookworm) (bookworm)",
        "No RAID controller detected",
        "vda (mq-deadline, queue 256)",
        "10.11.19-MariaDB-0+deb12u1-log (Debian 12)",
        "source, 1 replica connected",
        'title="tablecache/pt-summary.out, line 15"',
        "tablecache/pt-mysql-summary.out",
    ):
        assert shown in header, shown
    # file systems without the kernel's own, once each; the key variables with their lines
    assert header.count('<td class="mono">/dev/shm</td>') == 1 and "devtmpfs" not in header
    assert '<td class="mono">table_open_cache</td><td class="mono">64</td><td class="num">160</td>' in header


def test_the_setting_a_rule_reads_comes_from_the_report_and_says_so(bundle: Path) -> None:
    case = ingest_ready(bundle)
    finding = Finding.objects.get(case=case, key="table-cache-full")
    assert finding.title.endswith("(table_open_cache = 64)")
    [setting] = [e for e in finding.evidence if e["label"] == "variable table_open_cache"]
    assert (setting["member"], setting["lines"]) == ("tablecache/pt-mysql-summary.out", [160, 160])


def test_each_host_of_a_case_of_two_has_its_header(engineer_client, bundle: Path) -> None:
    case = add_host(ingest_ready(bundle), "db-b", first_name="db-a")
    page = _page(engineer_client, case)
    for index in (0, 1):
        block = page[page.index(f'id="host-{index}"') :]
        block = block[: block.index("</section>")]
        assert f'id="host-summary-{index}"' in block and "source, 1 replica connected" in block
    assert 'id="host-summary-0"' not in page[: page.index('id="hosts"')]  # not also under Capture's facts


def test_a_redacted_link_rebuilds_the_header_from_the_reports_words(client, bundle: Path) -> None:
    case = ingest_ready(bundle)
    made = shares.share_create(case=case, user=None)
    page = html.unescape(client.get(made.path).content.decode())
    header = page[page.index('id="host-summary-0"') : page.index('id="sources-title"')]
    assert "source, 1 replica connected" in header and "2 cores, 2 threads" in header
    assert "/tmp/sumrepl" not in page and "vm" not in header.split()


@pytest.mark.browser
def test_the_headers_fit_a_laptop_and_a_phone(browser, live_server, engineer, bundle: Path) -> None:  # noqa: F811
    """Chromium at 1,440 and 390 px, the file systems and key variables opened: no sideways scrolling;
    screenshots of the first host's header in ``ARTIFACTS``/host-summary (one host, then two)."""
    out = ARTIFACTS / "host-summary"
    out.mkdir(parents=True, exist_ok=True)
    one = ingest_ready(bundle)
    two = add_host(ingest_ready(bundle), "db-b", first_name="db-a")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    log_in(page, live_server.url)
    for label, case in (("one", one), ("two", two)):
        page.goto(f"{live_server.url}/cases/{case.pk}/")
        page.wait_for_selector(".host-summary")
        page.evaluate(
            "() => document.querySelectorAll('.host-summary__more').forEach(d => { d.open = true; })"
        )
        for width in (1440, 390):
            page.set_viewport_size({"width": width, "height": 900})
            assert settled_scroll_width(page, width) == width, (label, width)
            page.locator(".host-summary").first.screenshot(path=str(out / f"{label}-{width}.png"))
    context.close()
