"""Views: access (404 for what one may not see), upload, status, timeline, headers."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files import File
from django.test import Client

from tests.web.conftest import PROCESSLIST_NO_TS, VMSTAT, make_tar
from web.cases import services
from web.ingest import tasks
from web.models import Case
from web.timeline import charts
from web.timeline.charts import VERSION as TIMELINE_VERSION

pytestmark = pytest.mark.django_db


def _ingest_tar(tmp_path: Path, members: dict[str, bytes]) -> Case:
    with make_tar(tmp_path / "b.tgz", members).open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name="b.tgz", enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    return Case.objects.get(pk=case.pk)


@pytest.fixture
def ready_case(tmp_path: Path) -> Case:
    path = make_tar(
        tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode(), "junk.bin": b"\x00\x01"}
    )
    with path.open("rb") as fh:
        case = services.case_create(
            user=None, file=File(fh), original_name="<script>x</script>.tgz", enqueue=False
        )
    tasks.case_ingest(case_id=case.pk)
    return Case.objects.get(pk=case.pk)


def test_anonymous_visitors_are_sent_to_the_login_page(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_anonymous_visitors_get_404_for_case_data(client: Client, ready_case: Case) -> None:
    assert client.get(f"/cases/{ready_case.pk}/status.json").status_code == 404
    assert client.get(f"/cases/{ready_case.pk}/timeline.json").status_code == 404
    assert client.get(f"/cases/{ready_case.pk}/bundle/").status_code == 404


def test_an_unknown_case_is_404(engineer_client: Client) -> None:
    assert engineer_client.get("/cases/999999/").status_code == 404


def test_the_case_list_shows_cases_newest_first(engineer_client: Client, ready_case: Case) -> None:
    response = engineer_client.get("/")
    assert response.status_code == 200
    assert [c["id"] for c in response.context["cases"]] == [ready_case.pk]


def test_the_case_page_escapes_names_from_the_upload(engineer_client: Client, ready_case: Case) -> None:
    response = engineer_client.get(f"/cases/{ready_case.pk}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "<script>x</script>" not in body
    assert "&lt;script&gt;" in body
    assert "junk.bin" in body  # a member not used is listed with its reason


def test_pages_carry_a_strict_content_security_policy(engineer_client: Client, ready_case: Case) -> None:
    csp = engineer_client.get(f"/cases/{ready_case.pk}/")["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp


def test_upload_returns_201_with_the_status_url(
    engineer_client: Client, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    with path.open("rb") as fh, django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = engineer_client.post(
            "/cases/create/", {"title": "ticket 42", "bundle": fh}, HTTP_ACCEPT="application/json"
        )
    assert response.status_code == 201
    body = response.json()
    assert body["status_url"] == f"/cases/{body['id']}/status.json"
    assert len(callbacks) == 1  # the ingest is enqueued once, after commit
    status = engineer_client.get(body["status_url"]).json()
    assert (status["status"], status["label"]) == ("queued", "Queued")


def test_upload_without_a_file_is_a_400_with_a_message(engineer_client: Client) -> None:
    response = engineer_client.post("/cases/create/", {"title": "x"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400
    assert response.json()["extra"]["bundle"][0]["code"] == "required"


def test_the_timeline_gives_chart_specs_on_one_axis(engineer_client: Client, ready_case: Case) -> None:
    body = engineer_client.get(f"/cases/{ready_case.pk}/timeline.json").json()
    charts = {c["id"]: c for c in body["charts"]}
    assert [s["label"] for s in charts["cpu"]["series"]] == ["us", "sy", "wa", "st", "id"]
    assert charts["cpu"]["stacked"] is True
    runqueue = charts["runqueue"]
    # 16:51:42 UTC (since-boot line at :41 left out), r = 1; every series of a chart on its times
    assert (runqueue["t"][0], runqueue["series"][0]["v"][0]) == (1776790302000, 1)
    assert all(len(s["v"]) == len(runqueue["t"]) for s in runqueue["series"])
    assert charts["cpu"]["section"] == "cpu" and body["version"] == TIMELINE_VERSION
    assert [s["id"] for s in body["sections"]][:3] == ["cpu", "memory", "disk"]


def test_the_timeline_rereads_a_zoomed_range(engineer_client: Client, ready_case: Case) -> None:
    url = f"/cases/{ready_case.pk}/timeline.json"
    zoomed = engineer_client.get(url, {"start": 1776790303000, "end": 1776790303000}).json()
    runqueue = next(c for c in zoomed["charts"] if c["id"] == "runqueue")
    assert (runqueue["t"], runqueue["series"][0]["v"]) == ([1776790303000], [1])  # only 16:51:43
    only = engineer_client.get(
        url, {"start": 1776790303000, "end": 1776790309000, "charts": "runqueue"}
    ).json()
    assert [c["id"] for c in only["charts"]] == ["runqueue"]
    assert engineer_client.get(url, {"start": "yesterday"}).status_code == 400
    # A number beyond the years a datetime holds is refused too, not a server error.
    assert engineer_client.get(url, {"end": "1e300"}).status_code == 400
    assert engineer_client.get(f"/cases/{ready_case.pk}/series.csv", {"start": "-1e20"}).status_code == 400


def test_the_original_bundle_downloads_byte_for_byte(engineer_client: Client, ready_case: Case) -> None:
    response = engineer_client.get(f"/cases/{ready_case.pk}/bundle/")
    with ready_case.upload.file.open("rb") as kept:
        assert b"".join(response.streaming_content) == kept.read()


def test_reanalyze_requeues_a_ready_case(
    engineer_client: Client, ready_case: Case, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = engineer_client.post(f"/cases/{ready_case.pk}/reanalyze/")
    assert response.status_code == 302
    ready_case.refresh_from_db()
    assert ready_case.status == "queued"


def test_the_api_answers_the_browser_session_too(engineer_client: Client, ready_case: Case) -> None:
    listed = engineer_client.get("/api/cases/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == ready_case.pk
    report = engineer_client.get(f"/api/cases/{ready_case.pk}/").json()
    assert report["sources"][0]["format"] == "vmstat"
    assert report["not_used"][0]["member"] == "junk.bin"


def test_the_collector_downloads_from_the_upload_page(engineer_client: Client) -> None:
    page = engineer_client.get("/cases/new/").content.decode()
    assert 'href="/collect.sh"' in page
    response = engineer_client.get("/collect.sh")
    body = b"".join(response.streaming_content)
    assert body.startswith(b"#!/bin/sh\n# collect.sh - Casebook collector")
    assert response["Content-Disposition"] == 'attachment; filename="collect.sh"'


def test_the_whole_timeline_is_served_from_the_overview_built_at_ingest(
    engineer_client: Client, ready_case: Case
) -> None:
    url = f"/cases/{ready_case.pk}/timeline.json"
    assert engineer_client.get(url).json() == ready_case.charts_overview
    Case.objects.filter(pk=ready_case.pk).update(charts_overview=None)
    assert engineer_client.get(url).json() == ready_case.charts_overview  # the same, read live


def test_past_cases_are_found_by_query_fingerprint_and_wchan(engineer_client: Client, tmp_path: Path) -> None:
    ps = (
        "TS 1776790301.000000000 2026-04-21 16:51:41\n"
        "    PID     TID    PPID USER     STAT %CPU COMMAND         WCHAN\n"
        "   1208    1301       1 mysql    D     0.5 mariadbd        do_unlinkat\n"
    )
    processlist = "TS 1776790301.000000000 2026-04-21 16:51:41\n" + PROCESSLIST_NO_TS
    path = make_tar(
        tmp_path / "b.tgz", {"ps-threads.txt": ps.encode(), "processlist.txt": processlist.encode()}
    )
    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name="b.tgz", enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    for q in ("orders where id = ?", "do_unlinkat"):
        found = [c["id"] for c in engineer_client.get("/", {"q": q}).context["cases"]]
        assert found == [case.pk], q
    assert engineer_client.get("/", {"q": "futex_wait"}).context["cases"] == []


def test_a_long_series_is_downsampled_and_keeps_its_peak(engineer_client: Client, tmp_path: Path) -> None:
    # 3 hours of vmstat at 1 s, r = 1 but one 1-second spike to 97: more points than a chart draws.
    lines = [
        f" {97 if i == 7_000 else 1}  0      0 {104555712 + i * 7919 % 99991} 10433708 236731536    0    0"
        f"     0 {43336 + i % 977} {42713 + i * 31 % 4099} {85374 + i * 17 % 8191}  4  7 87  2  0\n"
        for i in range(10_800)
    ]
    text = VMSTAT.splitlines(keepends=True)[:3] + lines
    case = _ingest_tar(tmp_path, {"2026_04_21_16_51_41-vmstat": "".join(text).encode()})
    assert case.status == "ready", list(case.not_used.values_list("reason", flat=True))
    runqueue = next(c for c in case.charts_overview["charts"] if c["id"] == "runqueue")
    assert len(runqueue["t"]) <= charts.OVERVIEW_POINTS and max(runqueue["series"][0]["v"]) == 97
    assert runqueue["t"][0] == 1776790302000 and runqueue["t"][-1] == 1776790302000 + 10_799_000
    # Zoomed on 10 minutes around the spike: read again at full detail, every second.
    url = f"/cases/{case.pk}/timeline.json"
    lo, hi = 1776790302000 + 6_700_000, 1776790302000 + 7_300_000
    zoomed = next(
        c
        for c in engineer_client.get(url, {"start": lo, "end": hi}).json()["charts"]
        if c["id"] == "runqueue"
    )
    assert zoomed["t"] == list(range(lo, hi + 1, 1000)) and max(zoomed["series"][0]["v"]) == 97


def test_the_sources_table_says_what_each_capture_became(engineer_client: Client, tmp_path: Path) -> None:
    """pt-stalk's -vmstat beside a `vmstat -t` of the same minute: the page shows the role column with
    the reason of each member."""
    from tests.analyzer.captures import vmstat_rows_text
    from tests.analyzer.test_primary import BOOT, SATURATED, START, vmstat_t_text

    prefix = f"{START:%Y_%m_%d_%H_%M_%S}"
    case = _ingest_tar(
        tmp_path,
        {
            f"{prefix}-vmstat": vmstat_rows_text([BOOT] + SATURATED).encode(),
            "vmstat-t.txt": vmstat_t_text([BOOT] + SATURATED, START).encode(),
        },
    )
    assert dict(case.sources.values_list("member", "role")) == {
        f"{prefix}-vmstat": "overlap",
        "vmstat-t.txt": "primary",
    }
    page = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    assert '<th scope="col">Role</th>' in page
    assert "badge--overlap" in page and "badge--primary" in page
    assert "vmstat-t.txt covers the same minutes at 1 s with per-line times" in page
