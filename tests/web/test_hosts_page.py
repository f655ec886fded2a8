"""The case page, its timeline JSON, moments and exports for a case of several hosts (issue 22).

The two-host case is the real example bundle ingested for real, then given a second host ``db-b``
(tests/web/hosts.py: its rows copied, its series halved, its raw lines naming it).
"""

from __future__ import annotations

import re

import pytest
from django.contrib.postgres.search import SearchQuery

from tests.web.conftest import EXAMPLE_BUNDLE, ingest_ready
from tests.web.hosts import add_host
from web.models import Case
from web.timeline import charts

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_hosts() -> Case:
    return add_host(ingest_ready(EXAMPLE_BUNDLE), "db-b", first_name="db-a")


def test_one_host_case_has_no_host_fields() -> None:
    case = ingest_ready(EXAMPLE_BUNDLE)
    data = charts.timeline_charts(case=case)
    assert data["hosts"] == []
    assert all("host" not in c and "hosts" not in c for c in data["charts"])
    assert all("host" not in s for c in data["charts"] if c["kind"] == "line" for s in c["series"])
    assert all("host" not in w for w in data["windows"])


def test_overlaid_chart_has_a_series_per_host(two_hosts: Case) -> None:
    data = charts.timeline_charts(case=two_hosts)
    assert data["hosts"] == ["db-a", "db-b"]
    run = next(c for c in data["charts"] if c["id"] == "runqueue")
    assert [(s["host"], s["label"]) for s in run["series"]] == [
        ("db-a", "db-a · r"),
        ("db-a", "db-a · b"),
        ("db-b", "db-b · r"),
        ("db-b", "db-b · b"),
    ]
    a_r, _, b_r, _ = (s["v"] for s in run["series"])
    # db-b's values are db-a's halved: two lines on one time axis, not one host's.
    pairs = [(a, b) for a, b in zip(a_r, b_r, strict=True) if a is not None and b is not None and a]
    assert pairs and all(b == pytest.approx(a / 2, rel=1e-3) for a, b in pairs)
    history = next(c for c in data["charts"] if c["id"] == "innodb-history")
    assert [s["label"] for s in history["series"]] == ["db-a", "db-b"]  # one metric: legend by host


def test_stacked_and_heatmap_charts_are_small_multiples(two_hosts: Case) -> None:
    data = charts.timeline_charts(case=two_hosts)
    cpu = [c for c in data["charts"] if c.get("chart") == "cpu"]
    assert [(c["id"], c["host"]) for c in cpu] == [("cpu~0", "db-a"), ("cpu~1", "db-b")]
    heat = [c["host"] for c in data["charts"] if c.get("chart") == "heat-cpu"]
    assert heat == ["db-a", "db-b"]


def test_a_chart_made_at_ingest_becomes_its_hosts_panel(two_hosts: Case) -> None:
    grid = {"id": "heat-irq-cpu", "section": "interrupts", "title": "IRQ x CPU", "kind": "grid", "v": []}
    extra = [{**grid, "host": "db-a"}, {**grid, "host": "db-b"}]
    data = charts.timeline_charts(case=two_hosts, extra=extra)
    panels = [(c["id"], c["chart"], c["host"]) for c in data["charts"] if c["kind"] == "grid"]
    assert panels == [("heat-irq-cpu~0", "heat-irq-cpu", "db-a"), ("heat-irq-cpu~1", "heat-irq-cpu", "db-b")]


def test_zoomed_read_by_panel_id_reads_each_host(two_hosts: Case) -> None:
    whole = charts.timeline_charts(case=two_hosts)
    run = next(c for c in whole["charts"] if c["id"] == "runqueue")
    from datetime import UTC, datetime

    lo, hi = run["t"][2], run["t"][-3]
    start = datetime.fromtimestamp(lo / 1000, tz=UTC)
    end = datetime.fromtimestamp(hi / 1000, tz=UTC)
    zoomed = charts.timeline_charts(case=two_hosts, start=start, end=end, chart_ids=["cpu~1", "runqueue"])
    assert {c["id"] for c in zoomed["charts"]} == {"cpu~0", "cpu~1", "runqueue"}
    z = next(c for c in zoomed["charts"] if c["id"] == "runqueue")
    assert lo <= z["t"][0] and z["t"][-1] <= hi
    assert {s["host"] for s in z["series"]} == {"db-a", "db-b"}


def test_small_multiples_beyond_four_hosts() -> None:
    case = ingest_ready(EXAMPLE_BUNDLE)
    case = add_host(case, "db-b", first_name="db-a")
    for name in ("db-c", "db-d", "db-e"):
        case = add_host(case, name)
    data = charts.timeline_charts(case=case)
    assert data["hosts"] == ["db-a", "db-b", "db-c", "db-d", "db-e"]
    run = [c["host"] for c in data["charts"] if c.get("chart") == "runqueue"]
    assert run == data["hosts"]
    assert case.host == "db-a, db-b, db-c, db-d, db-e"


def test_windows_name_their_hosts(two_hosts: Case) -> None:
    data = charts.timeline_charts(case=two_hosts)
    cross = [w for w in data["windows"] if w["key"] == "cluster.stall_holds_others"]
    assert cross and cross[0]["host"] == "" and cross[0]["hosts"] == ["db-b", "db-a"]
    assert {w["host"] for w in data["windows"]} >= {"db-a", "db-b"}


# ------------------------------------------------------------------------------ the page's context
def test_sources_are_grouped_by_host_with_their_clock(two_hosts: Case) -> None:
    from web.cases import selectors

    context = selectors.case_detail_context(case=two_hosts)
    hosts = context["hosts"]
    assert [h["name"] for h in hosts] == ["db-a", "db-b"]
    assert all(s["host"] == "db-b" and s["member"].startswith("db-b/") for s in hosts[1]["sources"])
    assert len(hosts[0]["sources"]) == len(hosts[1]["sources"]) > 0
    assert hosts[1]["offset_s"] == 0.4 and hosts[1]["ncpu"] == 2 * hosts[0]["ncpu"]
    cross = [f for f in context["findings"] if f["hosts"]]
    assert cross and cross[0]["host"] is None and cross[0]["hosts"] == ["db-b", "db-a"]


def test_the_page_shows_each_host_and_escapes_its_name(engineer_client, two_hosts: Case) -> None:
    from web.models import Host

    Host.objects.filter(case=two_hosts, name="db-b").update(name_origin="<b>banner</b> of db-b")
    html = engineer_client.get(f"/cases/{two_hosts.pk}/").content.decode()
    assert 'id="host-0"' in html and 'id="host-1"' in html
    assert "&lt;b&gt;banner&lt;/b&gt; of db-b" in html and "<b>banner</b>" not in html
    assert html.count('class="badge badge--host mono"') == two_hosts.findings.exclude(host="").count()
    assert "shown, not applied" in html
    # A key found on both hosts is two cards with ids of their own (no host name in an id).
    ids = re.findall(r'<details class="finding[^"]*" id="([^"]+)"', html)
    assert len(ids) == two_hosts.findings.count() and len(set(ids)) == len(ids)
    assert not [i for i in ids if "db-" in i]
    # db-b's card links its related keys to db-b's cards.
    from web.cases import selectors

    for f in selectors.findings_for_case(case=two_hosts):
        for r in f["related_links"]:
            target = next(
                g for g in selectors.findings_for_case(case=two_hosts) if g["anchor"] == r["anchor"]
            )
            assert target["key"] == r["key"] and (target["host"] == f["host"] or f["host"] is None)


def test_a_one_host_page_has_no_host_groups(engineer_client) -> None:
    case = ingest_ready(EXAMPLE_BUNDLE)
    html = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    assert 'id="hosts"' not in html and "badge--host" not in html and 'id="sources-table"' in html


# ------------------------------------------------------------------------------ moments per host
def test_the_moment_of_one_host_reads_only_its_members(engineer_client, two_hosts: Case) -> None:
    run = next(c for c in charts.timeline_charts(case=two_hosts)["charts"] if c["id"] == "runqueue")
    t = run["t"][len(run["t"]) // 2]
    url = f"/cases/{two_hosts.pk}/moment.json?t={t}"
    a = engineer_client.get(f"{url}&host=0").json()
    b = engineer_client.get(f"{url}&host=1").json()
    assert a["host"] == "db-a" and b["host"] == "db-b"
    assert a["raw"]["sources"] and not any(s["member"].startswith("db-b/") for s in a["raw"]["sources"])
    assert b["raw"]["sources"] and all(s["member"].startswith("db-b/") for s in b["raw"]["sources"])
    assert all(r["member"].startswith("db-b/") for r in b["processlist"]["rows"])
    assert engineer_client.get(f"{url}&host=2").status_code == 400
    assert engineer_client.get(f"{url}&host=x").status_code == 400


def test_the_series_csv_has_a_host_column(engineer_client, two_hosts: Case) -> None:
    body = b"".join(
        engineer_client.get(f"/cases/{two_hosts.pk}/series.csv?charts=runqueue").streaming_content
    )
    lines = body.decode().splitlines()
    assert lines[0] == "time_utc,host,series,value"
    assert {line.split(",")[1] for line in lines[1:]} == {"db-a", "db-b"}


# ------------------------------------------------------------------------------ compare, search
def test_compare_two_hosts_of_one_case(engineer_client, two_hosts: Case) -> None:
    data = engineer_client.get(f"/cases/{two_hosts.pk}/compare.json?host=0&with={two_hosts.pk}.1").json()
    assert (data["a"]["host"], data["b"]["host"]) == ("db-a", "db-b")
    assert data["a"]["label"] == f"#{two_hosts.pk} db-a"
    # The same capture on both hosts: the same findings; db-b's metrics are db-a's halved.
    assert data["findings"]["appeared"] == [] and data["findings"]["disappeared"] == []
    assert data["fingerprints"]["kept"] and not data["fingerprints"]["new"]
    r = next(m for m in data["metrics"] if m["name"] == "vmstat.r")
    assert r["b"]["median"] == pytest.approx(r["a"]["median"] / 2)
    assert r["change"]["median_pct"] == pytest.approx(-50)
    page = engineer_client.get(
        f"/cases/{two_hosts.pk}/compare/?host=0&with={two_hosts.pk}.1"
    ).content.decode()
    assert f'value="{two_hosts.pk}.1" selected' in page and "median #" in page
    assert engineer_client.get(f"/cases/{two_hosts.pk}/compare.json?with={two_hosts.pk}.7").status_code == 404


def test_compare_a_host_with_another_case(engineer_client, two_hosts: Case) -> None:
    other = ingest_ready(EXAMPLE_BUNDLE)
    data = engineer_client.get(f"/cases/{two_hosts.pk}/compare.json?host=1&with={other.pk}").json()
    assert data["a"]["one_host"] and data["a"]["host"] == "db-b" and not data["b"]["one_host"]
    r = next(m for m in data["metrics"] if m["name"] == "vmstat.r")
    assert r["a"]["median"] == pytest.approx(r["b"]["median"] / 2)


def test_the_api_compares_two_hosts(api_client, two_hosts: Case) -> None:
    ok = api_client.get(f"/api/compare/?base={two_hosts.pk}&other={two_hosts.pk}&base_host=0&other_host=1")
    assert ok.status_code == 200, ok.content
    body = ok.json()
    assert (body["base"]["host"], body["other"]["host"]) == ("db-a", "db-b")
    bad = api_client.get(f"/api/compare/?base={two_hosts.pk}&other={two_hosts.pk}&other_host=5")
    assert bad.status_code == 400


def test_search_finds_a_case_by_any_of_its_hosts(engineer_client, two_hosts: Case) -> None:
    from web.history import search

    for text in ("db-a", "db-b", "db-b ", "DB-B"):
        assert two_hosts in search.search(Case.objects.all(), text), text
    # The full-text document holds every host's name, not only the substring match.
    assert Case.objects.filter(pk=two_hosts.pk, search_vector=SearchQuery("db-b", config="simple")).exists()
    page = engineer_client.get("/cases/?q=db-b").content.decode()
    assert f"/cases/{two_hosts.pk}/" in page


def test_similar_cases_list_a_case_of_several_hosts(engineer_client, two_hosts: Case) -> None:
    from web.history import similar

    other = ingest_ready(EXAMPLE_BUNDLE)
    found = similar.similar_cases(case=other, candidates=Case.objects.all())
    assert [s["host"] for s in found if s["id"] == two_hosts.pk] == ["db-a, db-b"]
    html = engineer_client.get(f"/cases/{other.pk}/").content.decode()
    assert "db-a, db-b" in html


def test_the_verdict_names_each_finding_on_its_own_host(two_hosts: Case) -> None:
    from web.cases import selectors

    verdict = selectors.case_detail_context(case=two_hosts)["verdict"]
    # The stored verdict names db-a's findings: db-b's copies of the same keys are other findings.
    assert verdict["root_cause"]["host"] == "db-a"
    listed = [
        (f["host"], f["key"]) for f in [verdict["root_cause"], *verdict["explains"], *verdict["also_found"]]
    ]
    assert len(listed) == len(set(listed)) and {h for h, _ in listed} == {"db-a"}
    assert len(listed) == two_hosts.findings.filter(host="db-a").count()


def test_the_api_moment_of_one_host(api_client, two_hosts: Case) -> None:
    from datetime import UTC, datetime

    run = next(c for c in charts.timeline_charts(case=two_hosts)["charts"] if c["id"] == "runqueue")
    at = datetime.fromtimestamp(run["t"][len(run["t"]) // 2] / 1000, tz=UTC).isoformat()
    url = f"/api/cases/{two_hosts.pk}/moment/"
    body = api_client.get(url, {"at": at, "host": 1}).json()
    assert body["host"] == "db-b" and all(s["member"].startswith("db-b/") for s in body["raw"]["sources"])
    assert api_client.get(url, {"at": at, "host": 9}).status_code == 400
