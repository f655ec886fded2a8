"""The case page, its timeline JSON, moments and exports for a case of several hosts (issue 22).

The two-host case is the real example bundle ingested for real, then given a second host ``db-b``
(tests/web/hosts.py: its rows copied, its series halved, its raw lines naming it).
"""

from __future__ import annotations

import pytest

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
        ("db-a", "db-a · r"), ("db-a", "db-a · b"), ("db-b", "db-b · r"), ("db-b", "db-b · b")
    ]  # fmt: skip
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
