"""The case page while a case is processed, and Re-analyze of a stuck case, as a browser sees them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files import File
from django.test import Client
from django.utils import timezone

from tests.web.conftest import VMSTAT, make_tar
from web.cases import services
from web.ingest import claims
from web.models import Case, CaseStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def parsing_case(tmp_path: Path) -> Case:
    """A case a worker is parsing: claimed, 40 %, on its second member, reporting just now."""
    path = make_tar(tmp_path / "b.tgz", {"vmstat.txt": VMSTAT.encode()})
    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name="b.tgz", enqueue=False)
    claims.claim_case(case_id=case.pk, token="task-a:0")
    Case.objects.filter(pk=case.pk).update(progress=40, status_detail="parsing collection/ps-threads.txt")
    return Case.objects.get(pk=case.pk)


def _silence(case: Case) -> None:
    Case.objects.filter(pk=case.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))


def test_the_page_of_a_case_being_parsed_says_so(engineer_client: Client, parsing_case: Case) -> None:
    html = engineer_client.get(f"/cases/{parsing_case.pk}/").content.decode()
    assert 'id="case-processing"' in html
    assert '<progress id="case-progress" max="100" value="40">' in html
    assert "parsing collection/ps-threads.txt" in html
    assert "Last report from the worker" in html
    assert "Sources appear once the bundle has been parsed." in html
    assert "No source was recognised" not in html
    assert 'id="case-stalled" hidden' in html


def test_the_status_of_a_stalled_case_says_its_worker_stopped_reporting(
    engineer_client: Client, parsing_case: Case
) -> None:
    _silence(parsing_case)
    status = engineer_client.get(f"/cases/{parsing_case.pk}/status.json").json()
    assert (status["status"], status["progress"], status["stalled"], status["processing"]) == (
        "parsing",
        40,
        True,
        True,
    )
    assert status["last_report_at"].endswith("Z")
    html = engineer_client.get(f"/cases/{parsing_case.pk}/").content.decode()
    assert 'id="case-stalled" hidden' not in html and "stopped reporting" in html


def test_reanalyze_of_a_stuck_case_queues_it_and_says_so_on_the_page(
    engineer_client: Client, parsing_case: Case, django_capture_on_commit_callbacks
) -> None:
    _silence(parsing_case)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = engineer_client.post(f"/cases/{parsing_case.pk}/reanalyze/", follow=True)
    assert response.redirect_chain == [(f"/cases/{parsing_case.pk}/", 302)]
    assert "Queued for a fresh analysis of the kept upload." in response.content.decode()
    assert len(sent) == 1  # the ingest task, sent once the transaction commits
    parsing_case.refresh_from_db()
    assert (parsing_case.status, parsing_case.claim) == (CaseStatus.QUEUED, "")


def test_reanalyze_while_a_live_worker_parses_explains_instead_of_a_bare_409(
    engineer_client: Client, parsing_case: Case
) -> None:
    response = engineer_client.post(f"/cases/{parsing_case.pk}/reanalyze/", follow=True)
    assert response.status_code == 200
    assert response.redirect_chain == [(f"/cases/{parsing_case.pk}/", 302)]
    html = response.content.decode()
    assert "is being processed (parsing, 40 %) and its worker is still reporting" in html
    assert 'class="notice notice--warning"' in html
    assert Case.objects.get(pk=parsing_case.pk).claim == "task-a:0"


def test_reanalyze_asked_for_json_answers_409_with_a_message(
    engineer_client: Client, parsing_case: Case
) -> None:
    response = engineer_client.post(f"/cases/{parsing_case.pk}/reanalyze/", HTTP_ACCEPT="application/json")
    assert response.status_code == 409
    assert response.json()["extra"] == {"status": "parsing"}
    assert "being processed" in response.json()["message"]
