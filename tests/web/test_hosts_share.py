"""A redacted share link of a case of several hosts leaks no host name of any host (issue 22): not
in the page's HTML, the charts' JSON and CSV (legends, host panels, the host list), the moment of
each host (its raw lines and banners), the report, the findings, the status."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.web.conftest import EXAMPLE_BUNDLE, ingest_ready
from tests.web.hosts import CAPTURED, add_host
from web.models import Case, SampleIndex, Source
from web.sharing import services as shares
from web.sharing.redaction.redactor import REDACT_ALL, Choices

pytestmark = pytest.mark.django_db

NO_REDACTION = Choices(literals=False, hosts=False, users=False, schemas=False)


@pytest.fixture
def two_hosts() -> Case:
    return add_host(ingest_ready(EXAMPLE_BUNDLE), "db-b", first_name="db-a")


def _urls(case: Case, base: str) -> list[str]:
    times = sorted(
        {
            round(ts.timestamp() * 1000)
            for ts in SampleIndex.objects.filter(case=case).values_list("ts", flat=True)
        }
    )
    picked = times[:: max(1, len(times) // 6)]
    zoom = f"?start={times[0] + 2000}&end={times[-1] - 2000}"
    return [
        base,
        f"{base}status.json",
        f"{base}timeline.json",
        f"{base}timeline.json{zoom}&charts=cpu~1,runqueue,processlist",
        f"{base}timeline.csv",
        f"{base}report.json",
        f"{base}findings.json",
        f"{base}findings.csv",
        *(f"{base}moment.json?t={t}&host={h}" for t in picked for h in (0, 1)),
        *(f"{base}moment.json?t={t}" for t in picked[:2]),
    ]


def _served(urls: list[str]) -> str:
    client, out = Client(), []
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        out.append(response.content.decode("utf-8"))
    return "\n".join(out).lower()


def test_a_redacted_link_leaks_no_host_name_of_any_host(two_hosts: Case) -> None:
    captured = CAPTURED[two_hosts.pk]
    # Names under 3 characters are kept by every link (the example's host is "vm": in "vmstat" too).
    names = {"db-a", "db-b"} | ({captured.lower()} if len(captured) >= 3 else set())
    served = _served(
        _urls(two_hosts, shares.share_create(case=two_hosts, user=None, choices=REDACT_ALL).path)
    )
    assert [n for n in names if n in served] == []
    # Still the two hosts' case: their pseudonyms, each host's panel and moment, db-b's members.
    assert "server-1" in served and "server-2" in served
    assert '"host": "server-' in served or '"host":"server-' in served


def test_the_same_link_unredacted_serves_every_host_name(two_hosts: Case) -> None:
    """The search above can fail: without redaction each name is served (page, charts, moments)."""
    served = _served(
        _urls(two_hosts, shares.share_create(case=two_hosts, user=None, choices=NO_REDACTION).path)
    )
    assert "db-a" in served and "db-b" in served
    # Each host's moment: its own members' raw lines.
    assert '"member": "db-b/' in served and '"member": "ptstalk-mariadb-tmptables/' in served
    assert Source.objects.filter(case=two_hosts, host="db-b").exists()


def test_the_vocabulary_holds_every_host(two_hosts: Case) -> None:
    names = shares.server_names_of(two_hosts)
    assert {"db-a", "db-b", CAPTURED[two_hosts.pk].lower()} <= set(names)
    assert "db-a, db-b" not in names


def test_the_links_charts_csv_names_each_host(two_hosts: Case) -> None:
    base = shares.share_create(case=two_hosts, user=None, choices=NO_REDACTION).path
    rows = Client().get(f"{base}timeline.csv").content.decode().splitlines()
    cpu = {r.split(",")[1] for r in rows[1:] if r.startswith("CPU (vmstat)")}
    assert {"db-a · us", "db-b · us"} <= cpu
    run = {r.split(",")[1] for r in rows[1:] if r.startswith('"Run queue') or r.startswith("Run queue")}
    assert {"db-a · r", "db-b · r"} <= run
