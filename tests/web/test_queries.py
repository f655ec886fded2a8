"""A slow log's classes stored with its case and read back (web/cases/queries.py): the report's
``queries`` (``analyze --json``, the API's report) are the parser's digest; the case API, the page's
``queries.json`` and a zoom window's sums of each class's minutes; another team's case answers 404.

The case is a slow log uploaded alone (tests/web/slowlogs.py: the MySQL 8.0 sample's entries moved
over ten minutes): ``GIFT``'s class in every minute, ``SPENT``'s in the first three only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.files import File
from django.test import Client, override_settings

from analyzer.statements.querydigest import queries
from parsers import slowlog
from parsers.base import ClockHints
from tests.web.conftest import VMSTAT, make_tar
from tests.web.slowlogs import FINGERPRINTS, GIFT, QUERY_TIME_S, RETURN, SPENT, slow_log
from web.cases import selectors, services
from web.ingest import tasks
from web.models import Case, CaseStatus, QueryClass, QueryMinute

pytestmark = pytest.mark.django_db

START = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
#: GIFT at 5 s past each of ten minutes, RETURN (GIFT's class) at 40 s past minute 2, SPENT at 30 s
#: past minutes 0 to 2.
ENTRIES = sorted(
    [(START + timedelta(minutes=m, seconds=5), GIFT) for m in range(10)]
    + [(START + timedelta(minutes=2, seconds=40), RETURN)]
    + [(START + timedelta(minutes=m, seconds=30), SPENT) for m in range(3)]
)
LOG = slow_log(ENTRIES)


def _ingest(path: Path) -> Case:
    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=path.name, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    assert case.status == CaseStatus.READY, case.failure_reason
    return case


@pytest.fixture(scope="module")
def cases(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[dict[str, Case]]:
    """A slow log's case and a vmstat capture's, committed for the module and deleted after it."""
    tmp = tmp_path_factory.mktemp("queries")
    log = tmp / "db1-slow.log"
    log.write_text(LOG)
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=tmp / "media"):
        made = {
            "slow": _ingest(log),
            "vmstat": _ingest(make_tar(tmp / "v.tgz", {"vmstat.txt": VMSTAT.encode()})),
        }
        yield made
        Case.objects.filter(pk__in=[c.pk for c in made.values()]).delete()


def _ms(at: datetime) -> int:
    return round(at.timestamp() * 1000)


def test_the_report_carries_the_parsers_digest_by_total_time(cases) -> None:
    case = cases["slow"]
    report = selectors.case_report(case=case)
    digest = queries(
        slowlog.parse(LOG.splitlines(True), member="m", clock=ClockHints()).frames["slowlog_classes"]
    )
    assert report["query_classes"] == 2
    assert [
        {k: v for k, v in q.items() if k not in ("host", "member")} for q in report["queries"]
    ] == json.loads(json.dumps(digest))
    assert [q["fingerprint"] for q in report["queries"]] == [FINGERPRINTS[GIFT], FINGERPRINTS[SPENT]]
    assert report["queries"][0]["member"] == "db1-slow.log"
    assert report["queries"][0]["count"] == 11


def test_each_class_is_stored_minute_by_minute(cases) -> None:
    case = cases["slow"]
    numbers = dict(QueryClass.objects.filter(case=case).values_list("fingerprint", "number"))
    spent = QueryMinute.objects.filter(case=case, number=numbers[FINGERPRINTS[SPENT]]).order_by("ts")
    assert [m.ts for m in spent] == [START + timedelta(minutes=m) for m in range(3)]
    minute_2 = QueryMinute.objects.get(
        case=case, number=numbers[FINGERPRINTS[GIFT]], ts=START + timedelta(minutes=2)
    )
    assert minute_2.queries == 2
    assert minute_2.query_time_s == pytest.approx(QUERY_TIME_S[GIFT] + QUERY_TIME_S[RETURN])
    assert minute_2.query_time_max_s == pytest.approx(QUERY_TIME_S[RETURN])


def test_the_api_gives_the_whole_log_with_a_sparkline_per_class(api_client: Client, cases) -> None:
    case = cases["slow"]
    answer = api_client.get(f"/api/cases/{case.pk}/queries/")
    assert answer.status_code == 200
    data = answer.json()
    report = {q["fingerprint"]: q for q in selectors.case_report(case=case)["queries"]}
    assert data["whole_log"] is True and data["classes"] == 2
    assert data["spark"] == {
        "start": "2026-12-07T01:00:00Z",
        "end": "2026-12-07T01:10:00Z",
        "points": 10,
        "unit": "s",
    }
    for q in data["queries"]:
        assert {k: v for k, v in q.items() if k not in ("number", "share_pct", "spark")} == report[
            q["fingerprint"]
        ]
        assert sum(q["spark"]) == pytest.approx(q["query_time_s"]["sum"])
    gift = data["queries"][0]
    assert gift["spark"][2] == pytest.approx(QUERY_TIME_S[GIFT] + QUERY_TIME_S[RETURN])
    assert gift["share_pct"] == pytest.approx(
        100 * gift["query_time_s"]["sum"] / data["query_time_s"], abs=0.01
    )


def test_a_window_sums_the_minutes_it_overlaps(api_client: Client, cases) -> None:
    """01:01:50-01:02:10 overlaps minutes 1 and 2 whole: GIFT twice, RETURN, SPENT twice."""
    case = cases["slow"]
    start, end = START + timedelta(minutes=1, seconds=50), START + timedelta(minutes=2, seconds=10)
    data = api_client.get(
        f"/api/cases/{case.pk}/queries/", {"start": start.isoformat(), "end": end.isoformat()}
    ).json()
    assert data["whole_log"] is False and data["classes"] == 2
    by_print = {q["fingerprint"]: q for q in data["queries"]}
    gift, spent = by_print[FINGERPRINTS[GIFT]], by_print[FINGERPRINTS[SPENT]]
    assert gift["count"] == 3 and spent["count"] == 2
    assert gift["query_time_s"]["sum"] == pytest.approx(2 * QUERY_TIME_S[GIFT] + QUERY_TIME_S[RETURN])
    assert gift["query_time_s"]["max"] == pytest.approx(QUERY_TIME_S[RETURN])
    whole = {q["fingerprint"]: q for q in selectors.case_report(case=case)["queries"]}
    assert gift["query_time_s"]["p95"] == whole[FINGERPRINTS[GIFT]]["query_time_s"]["p95"]  # the whole log's
    assert (gift["first_seen"], gift["last_seen"]) == ("2026-12-07T01:01:00Z", "2026-12-07T01:02:59.999999Z")
    assert "extras" not in gift


def test_a_window_after_the_last_spent_has_one_class_and_the_page_json_agrees(
    api_client: Client, engineer_client: Client, cases
) -> None:
    case = cases["slow"]
    start, end = START + timedelta(minutes=5), START + timedelta(minutes=9)
    api = api_client.get(
        f"/api/cases/{case.pk}/queries/", {"start": start.isoformat(), "end": end.isoformat()}
    ).json()
    page = engineer_client.get(
        f"/cases/{case.pk}/queries.json", {"start": _ms(start), "end": _ms(end)}
    ).json()
    assert api == page
    assert [q["fingerprint"] for q in api["queries"]] == [FINGERPRINTS[GIFT]] and api["classes"] == 1
    # minutes 5 to 8: the minute from 01:09:00 starts where the window ends
    assert api["queries"][0]["count"] == 4 and api["queries"][0]["share_pct"] == 100.0
    assert api["spark"]["points"] == 4 and sum(api["queries"][0]["spark"]) == pytest.approx(
        4 * QUERY_TIME_S[GIFT]
    )


def test_limit_bounds_the_classes_sent_not_those_counted(api_client: Client, cases) -> None:
    data = api_client.get(f"/api/cases/{cases['slow'].pk}/queries/", {"limit": 1}).json()
    assert len(data["queries"]) == 1 and data["classes"] == 2
    assert api_client.get(f"/api/cases/{cases['slow'].pk}/queries/", {"limit": 501}).status_code == 400
    assert api_client.get(f"/api/cases/{cases['slow'].pk}/queries/", {"start": "noon"}).status_code == 400


def test_a_case_without_a_slow_log_has_no_class(api_client: Client, engineer_client: Client, cases) -> None:
    case = cases["vmstat"]
    data = api_client.get(f"/api/cases/{case.pk}/queries/").json()
    assert (data["classes"], data["queries"], data["spark"]["points"]) == (0, [], 0)
    assert selectors.case_report(case=case)["queries"] == []
    assert 'id="queries"' not in engineer_client.get(f"/cases/{case.pk}/").content.decode()


def test_the_case_page_has_the_queries_section(engineer_client: Client, cases) -> None:
    html = engineer_client.get(f"/cases/{cases['slow'].pk}/").content.decode()
    assert f'data-queries-url="/cases/{cases["slow"].pk}/queries.json"' in html


def test_another_teams_case_answers_404(other_client: Client, cases) -> None:
    case = cases["slow"]
    assert other_client.get(f"/api/cases/{case.pk}/queries/").status_code == 404
    assert other_client.get(f"/cases/{case.pk}/queries.json").status_code == 404
