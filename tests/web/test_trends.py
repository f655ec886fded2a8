"""The trends (web/trends/): counts per week and day, root causes, repeat customers, time to ready
and to close, computed in PostgreSQL; the API, its CSV and errors; the page, whose numbers, tables and
links agree with the API on a generated history; the case list's filters the links use."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta
from html import unescape

import numpy as np
import pytest
from django.test import Client
from django.utils import timezone

from tests.web.trends_history import generated_history
from web.models import Case, CaseStatus, Team, default_team_id

pytestmark = pytest.mark.django_db

JUNE = "since=2026-06-01&until=2026-06-14"


def _case(team: Team, created: str, **fields: object) -> Case:
    """A case of ``team`` uploaded at ``created`` (ISO, UTC); ``ready_h``/``closed_h``: hours after it."""
    at = datetime.fromisoformat(created).replace(tzinfo=UTC)
    ready_h, closed_h = fields.pop("ready_h", None), fields.pop("closed_h", None)
    case = Case.objects.create(team=team, status=fields.pop("status", CaseStatus.READY), **fields)
    case.created_at = at
    case.ingested_at = at + timedelta(hours=ready_h) if ready_h is not None else None
    case.closed_at = at + timedelta(hours=closed_h) if closed_h is not None else None
    case.save(update_fields=["created_at", "ingested_at", "closed_at"])
    return case


@pytest.fixture
def june(engineer) -> dict[str, Case]:
    """Two weeks of June 2026 (Mondays the 1st and the 8th) and cases outside them."""
    team = Team.objects.get(pk=default_team_id())
    other = Team.objects.get_or_create(name="Other")[0]
    churn = "tmp-table-churn"
    return {
        "a": _case(team, "2026-06-01T10:00", ready_h=2, closed_h=10, root_cause_key=churn, customer="Acme"),
        "b": _case(team, "2026-06-03T12:00", ready_h=4, root_cause_key=churn, customer="ACME"),
        "c": _case(team, "2026-06-05T23:59", status=CaseStatus.FAILED, failure_reason="no capture"),
        "d": _case(
            team,
            "2026-06-08T00:00",
            ready_h=1,
            closed_h=20,
            root_cause_key="disk-saturation",
            customer="Globex",
        ),
        "later": _case(team, "2026-06-15T00:00", ready_h=1, root_cause_key=churn, customer="Acme"),
        "theirs": _case(other, "2026-06-02T00:00", ready_h=1, root_cause_key=churn, customer="Acme"),
    }


def test_the_weeks_count_status_state_causes_and_hours(engineer_client: Client, june) -> None:
    data = engineer_client.get(f"/api/trends/?{JUNE}").json()
    assert (data["since"], data["until"], data["by"], data["team"]) == (
        "2026-06-01",
        "2026-06-14",
        "week",
        None,
    )
    first, second = data["buckets"]
    assert first == {
        "start": "2026-06-01",
        "end": "2026-06-07",
        "cases": 3,
        "ready": 2,
        "failed": 1,
        "open": 2,
        "closed": 1,
        "root_causes": {"tmp-table-churn": 2},
        # percentile_cont interpolates: 2 h and 4 h give a median of 3 h and a 90th percentile of 3.8 h.
        "hours_to_ready_p50": 3.0,
        "hours_to_ready_p90": 3.8,
        "hours_to_close_p50": 10.0,
        "hours_to_close_p90": 10.0,
    }
    assert (
        second["start"] == "2026-06-08"
        and second["cases"] == 1
        and second["root_causes"] == {"disk-saturation": 1}
    )
    assert (second["hours_to_ready_p50"], second["hours_to_close_p90"]) == (1.0, 20.0)
    # Acme and ACME are one customer; Globex's single case and the other team's Acme case are not counted.
    assert data["repeat_customers"] == [
        {
            "customer": "Acme",
            "root_cause": "tmp-table-churn",
            "cases": 2,
            "last_seen": "2026-06-03T12:00:00Z",
            "case_ids": [june["b"].pk, june["a"].pk],
            "url": "/cases/?uploaded_from=2026-06-01&uploaded_to=2026-06-14&customer=Acme&root_cause=tmp-table-churn",
        }
    ]


def test_a_range_that_cuts_a_week_and_days(engineer_client: Client, june) -> None:
    weeks = engineer_client.get("/api/trends/?since=2026-06-03&until=2026-06-09").json()["buckets"]
    assert [(b["start"], b["end"], b["cases"]) for b in weeks] == [
        ("2026-06-03", "2026-06-07", 2),
        ("2026-06-08", "2026-06-09", 1),
    ]
    days = engineer_client.get("/api/trends/?since=2026-06-01&until=2026-06-08&by=day").json()["buckets"]
    assert [b["cases"] for b in days] == [1, 0, 1, 0, 1, 0, 0, 1]
    assert days[1] == {
        "start": "2026-06-02",
        "end": "2026-06-02",
        "cases": 0,
        "ready": 0,
        "failed": 0,
        "open": 0,
        "closed": 0,
        "root_causes": {},
        "hours_to_ready_p50": None,
        "hours_to_ready_p90": None,
        "hours_to_close_p50": None,
        "hours_to_close_p90": None,
    }


def test_the_default_range_is_the_last_13_weeks(engineer_client: Client, engineer) -> None:
    data = engineer_client.get("/api/trends/").json()
    today = timezone.now().date()
    assert data["until"] == today.isoformat() and len(data["buckets"]) == 13
    assert data["buckets"][0]["start"] == (today - timedelta(days=today.weekday(), weeks=12)).isoformat()
    assert len(engineer_client.get("/api/trends/?weeks=52").json()["buckets"]) == 52


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("since=2026-06-10&until=2026-06-01", "until is before since"),
        ("since=2020-01-01&until=2026-06-01", "longer than"),
        ("since=2025-01-01&until=2026-06-01&by=day", "choose weeks"),
        ("by=month", "by"),
        ("weeks=7", "weeks"),
        ("since=yesterday", "since"),
        ("since=9999-12-30&until=9999-12-31", "years from now"),
    ],
)
def test_a_range_that_cannot_be_served_is_a_400_saying_why(
    engineer_client: Client, query: str, words: str
) -> None:
    response = engineer_client.get(f"/api/trends/?{query}")
    assert response.status_code == 400
    assert words in json.dumps(response.json())


def test_the_csv_has_the_same_numbers(engineer_client: Client, june) -> None:
    response = engineer_client.get(f"/api/trends/?{JUNE}&export=csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["start"] for r in rows] == ["2026-06-01", "2026-06-08"]
    assert rows[0]["cases"] == "3" and rows[0]["hours_to_ready_p90"] == "3.8"
    assert rows[0]["root_cause:tmp-table-churn"] == "2" and rows[0]["root_cause:disk-saturation"] == "0"
    repeat = engineer_client.get(f"/api/trends/?{JUNE}&export=csv&table=repeat_customers").content.decode()
    assert repeat.splitlines() == [
        "customer,root_cause,cases,last_seen,case_ids",
        f"Acme,tmp-table-churn,2,2026-06-03T12:00:00Z,{june['b'].pk} {june['a'].pk}",
    ]


def test_a_team_filter_and_another_teams_trends(
    engineer_client: Client, other_client: Client, other_engineer, june
) -> None:
    mine, theirs = Team.objects.get(pk=default_team_id()), Team.objects.get(name="Other")
    assert engineer_client.get(f"/api/trends/?{JUNE}&team={mine.pk}").json()["buckets"][0]["cases"] == 3
    assert engineer_client.get(f"/api/trends/?{JUNE}&team={theirs.pk}").status_code == 404
    assert engineer_client.get(f"/trends/?{JUNE}&team={theirs.pk}").status_code == 404
    assert other_client.get(f"/api/trends/?{JUNE}").json()["buckets"][0]["cases"] == 1  # their own case only


def _expected(cases: list[Case], start: datetime, end: datetime) -> dict[str, object]:
    """A bucket's numbers computed here, in Python, from the cases themselves."""
    inside = [c for c in cases if start <= c.created_at < end]
    ready = [(c.ingested_at - c.created_at).total_seconds() / 3600 for c in inside if c.status == "ready"]
    closed = [(c.closed_at - c.created_at).total_seconds() / 3600 for c in inside if c.closed_at]
    causes: dict[str, int] = {}
    for c in inside:
        if c.root_cause_key:
            causes[c.root_cause_key] = causes.get(c.root_cause_key, 0) + 1

    def pct(values: list[float], q: int) -> float | None:
        return round(float(np.percentile(values, q)), 2) if values else None  # linear, as percentile_cont

    return {
        "cases": len(inside),
        "ready": sum(c.status == "ready" for c in inside),
        "failed": sum(c.status == "failed" for c in inside),
        "open": sum(c.closed_at is None for c in inside),
        "closed": len(closed),
        "root_causes": causes,
        "hours_to_ready_p50": pct(ready, 50),
        "hours_to_ready_p90": pct(ready, 90),
        "hours_to_close_p50": pct(closed, 50),
        "hours_to_close_p90": pct(closed, 90),
    }


def _cells(html: str, table_id: str) -> list[list[str]]:
    """The text of each body row's cells of the table ``table_id``."""
    body = re.search(rf'id="{table_id}".*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_the_page_and_the_api_agree_on_a_generated_history(engineer_client: Client, other_engineer) -> None:
    now = timezone.now()
    cases = generated_history(Team.objects.get(pk=default_team_id()), now=now, weeks=13, cases=240)
    generated_history(Team.objects.get(name="Other"), now=now, weeks=13, cases=60, seed=8)  # never counted
    api = engineer_client.get("/api/trends/?weeks=13").json()
    page = engineer_client.get("/trends/?weeks=13")
    assert page.status_code == 200
    html = page.content.decode()
    shown = json.loads(
        re.search(r'id="trends-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    )
    assert shown["trends"] == api  # the charts draw the API's numbers

    # The API's numbers are the cases' own, bucket by bucket.
    assert sum(b["cases"] for b in api["buckets"]) == 240
    for b in api["buckets"]:
        start = datetime.fromisoformat(b["start"]).replace(tzinfo=UTC)
        end = datetime.fromisoformat(b["end"]).replace(tzinfo=UTC) + timedelta(days=1)
        assert {k: v for k, v in b.items() if k not in ("start", "end")} == _expected(cases, start, end), b[
            "start"
        ]

    # The tables under the charts say the same numbers.
    table = _cells(html, "trend-cases-table")
    assert [row[1:] for row in table] == [
        [str(b[k]) for k in ("cases", "ready", "failed", "open", "closed")] for b in api["buckets"]
    ]
    hours = _cells(html, "trend-hours-table")
    assert [row[1] for row in hours] == [
        f"{b['hours_to_ready_p50']:.2f}" if b["hours_to_ready_p50"] is not None else "–"
        for b in api["buckets"]
    ]
    causes = _links(html, "trend-causes-table")
    assert [{text.split(": ")[0]: int(text.split(": ")[1]) for text, _ in row} for row in causes] == [
        b["root_causes"] for b in api["buckets"]
    ]
    repeat = _cells(html, "trend-repeat-table")
    assert [(r[0], r[1], int(r[2])) for r in repeat] == [
        (c["customer"], c["root_cause"], c["cases"]) for c in api["repeat_customers"]
    ]
    assert api["repeat_customers"] and all(c["cases"] >= 2 for c in api["repeat_customers"])

    # Every link leads to the case list showing as many cases as the number it is on (one bucket in 3).
    counts = _links(html, "trend-cases-table")
    for b, row, cause_row in list(zip(api["buckets"], counts, causes, strict=True))[::3]:
        for (text, url), field in zip(row, ("cases", "ready", "failed", "open", "closed"), strict=True):
            assert _listed(engineer_client, url) == int(text) == b[field], (b["start"], field)
        for text, url in cause_row:
            assert _listed(engineer_client, url) == int(text.split(": ")[1])
    for row in api["repeat_customers"][:5]:
        assert _listed(engineer_client, row["url"]) == row["cases"]


def _links(html: str, table_id: str) -> list[list[tuple[str, str]]]:
    """(text, URL) of the links of each body row of the table ``table_id``."""
    body = re.search(rf'id="{table_id}".*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [
        [(text, unescape(href)) for href, text in re.findall(r'<a href="([^"]+)">(.*?)</a>', row)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def _listed(client: Client, url: str) -> int:
    """How many cases the case list at ``url`` says it shows, and the same count through the API."""
    html = client.get(url).content.decode()
    count = int(re.search(r'id="case-count">(\d+) case', html).group(1))
    api = client.get(url.replace("/cases/?", "/api/cases/?")).json()["count"]
    assert api == count, url
    return count


def test_the_page_offers_the_ranges_and_the_teams(engineer_client: Client, engineer) -> None:
    Team.objects.get_or_create(name="Second")[0].members.add(engineer)
    html = engineer_client.get("/trends/").content.decode()
    assert all(f'value="{w}"' in html for w in (4, 13, 52))
    assert "all my teams" in html and ">Second<" in html and ">Other<" not in html
    assert 'href="/trends/" aria-current="page"' in html  # the nav's entry
    bad = engineer_client.get("/trends/?since=2026-06-10&until=2026-06-01")
    assert bad.status_code == 400 and "until is before since" in bad.content.decode()


def test_the_case_list_filters_by_root_cause_upload_days_and_team(engineer_client: Client, june) -> None:
    def ids(query: str) -> set[int]:
        return {c["id"] for c in engineer_client.get(f"/api/cases/?{query}&page_size=200").json()["results"]}

    assert ids("root_cause=tmp-table-churn") == {june["a"].pk, june["b"].pk, june["later"].pk}
    assert ids("uploaded_from=2026-06-03&uploaded_to=2026-06-08") == {
        june["b"].pk,
        june["c"].pk,
        june["d"].pk,
    }
    assert ids(f"team={default_team_id()}") == {c.pk for k, c in june.items() if k != "theirs"}
    assert ids(f"team={june['theirs'].team_id}") == set()
    page = engineer_client.get("/cases/?root_cause=disk-saturation&uploaded_to=2026-06-30")
    assert [c["id"] for c in page.context["cases"]] == [june["d"].pk]
