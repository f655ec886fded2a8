"""Claims and heartbeats (web/ingest/claims.py): one execution at a time holds a case, a silent one is
taken over, and an execution whose claim was taken away writes nothing."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files import File
from django.utils import timezone

from parsers.rawtext import chunks_of
from tests.web.conftest import VMSTAT, make_tar
from web.cases import services
from web.ingest import claims, fanout, pipeline, tasks
from web.models import Case, CaseStatus, RawChunk, Source


def _queued_case(tmp_path: Path) -> Case:
    path = make_tar(tmp_path / "b.tgz", {"vmstat.txt": VMSTAT.encode()})
    with path.open("rb") as fh:
        return services.case_create(user=None, file=File(fh), original_name=path.name, enqueue=False)


def _silence(case: Case, seconds: float = 3600) -> None:
    Case.objects.filter(pk=case.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=seconds))


@pytest.mark.django_db
def test_a_queued_case_is_claimed_by_one_execution_only(tmp_path: Path) -> None:
    case = _queued_case(tmp_path)
    first = claims.claim_case(case_id=case.pk, token="task-a:0")
    assert first == claims.Claim(case_id=case.pk, token="task-a:0", generation=1)
    assert claims.claim_case(case_id=case.pk, token="task-b:0") is None
    case.refresh_from_db()
    assert (case.status, case.claim, case.claims) == (CaseStatus.PARSING, "task-a:0", 1)


@pytest.mark.django_db
def test_a_silent_holder_is_taken_over_under_a_new_generation(tmp_path: Path) -> None:
    case = _queued_case(tmp_path)
    claims.claim_case(case_id=case.pk, token="task-a:0")
    _silence(case)
    taken = claims.claim_case(case_id=case.pk, token="task-b:0")
    assert taken is not None and taken.generation == 2
    assert Case.objects.get(pk=case.pk).claim == "task-b:0"


@pytest.mark.django_db
def test_a_live_holder_is_not_taken_over_not_even_by_a_second_delivery_of_its_message(tmp_path: Path) -> None:
    case = _queued_case(tmp_path)
    claims.claim_case(case_id=case.pk, token="task-a:0")
    assert claims.claim_case(case_id=case.pk, token="task-a:0") is None
    assert claims.claim_case(case_id=case.pk, token="task-b:3") is None


@pytest.mark.django_db
def test_a_retry_takes_over_the_claim_of_its_earlier_execution(tmp_path: Path) -> None:
    # The database went away under execution 0 of task-a, which ended with a retry: the retry (a new
    # message of the same task id) takes over at once, without waiting for the heartbeat to go stale.
    case = _queued_case(tmp_path)
    claims.claim_case(case_id=case.pk, token="task-a:0")
    retry = claims.claim_case(case_id=case.pk, token="task-a:2")
    assert retry is not None and retry.generation == 2


@pytest.mark.django_db
def test_a_ready_case_is_never_claimed(tmp_path: Path) -> None:
    case = _queued_case(tmp_path)
    tasks.case_ingest(case_id=case.pk)
    assert Case.objects.get(pk=case.pk).status == CaseStatus.READY
    _silence(case)
    assert claims.claim_case(case_id=case.pk, token="task-z:9") is None


@pytest.mark.django_db
def test_an_ingest_whose_claim_was_taken_away_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    # Once this ingest has parsed the bundle, its worker is believed dead and the case is
    # re-analyzed (claim revoked, queued again): the ingest must stop without publishing rows or a
    # status.
    case = _queued_case(tmp_path)
    real_timeline = pipeline.Timeline.from_sources

    def timeline_then_lose_the_claim(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        timeline = real_timeline(*args, **kwargs)
        _silence(case)
        services.case_reanalyze(case_id=case.pk, enqueue=False)
        return timeline

    monkeypatch.setattr(pipeline.Timeline, "from_sources", timeline_then_lose_the_claim)
    tasks.case_ingest(case_id=case.pk)
    case.refresh_from_db()
    assert (case.status, case.claim, case.generation) == (CaseStatus.QUEUED, "", 0)
    assert not Source.objects.filter(case=case).exists()
    assert not RawChunk.objects.filter(case=case).exists()


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_stamps_the_case_and_notices_a_lost_claim(tmp_path: Path, settings) -> None:
    settings.CASEBOOK_HEARTBEAT_INTERVAL = 0.2
    case = _queued_case(tmp_path)
    claim = claims.claim_case(case_id=case.pk, token="task-a:0")
    _silence(case)
    with claims.Heartbeat(claim) as beat:
        deadline = time.monotonic() + 20
        while claims.is_stalled(Case.objects.get(pk=case.pk)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not claims.is_stalled(Case.objects.get(pk=case.pk))
        beat.check()  # still held: no error
        Case.objects.filter(pk=case.pk).update(claim="task-b:0")  # someone else took it
        while not beat.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(claims.ClaimLost):
            beat.check()


@pytest.mark.django_db
def test_the_heartbeat_stamps_the_case_as_the_work_starts(tmp_path: Path) -> None:
    """A task shorter than one interval (a part of a fan-out) still counts as a sign of life; a claim
    already gone shows at the first check, before any interval passed (the interval is a day here)."""
    case = _queued_case(tmp_path)
    claim = claims.claim_case(case_id=case.pk, token="task-a:0")
    _silence(case)
    with claims.Heartbeat(claim) as beat:
        assert not claims.is_stalled(Case.objects.get(pk=case.pk))
        beat.check()
    _silence(case)
    Case.objects.filter(pk=case.pk).update(claim="task-b:0")  # someone else took it
    with claims.Heartbeat(claim) as beat, pytest.raises(claims.ClaimLost):
        beat.check()
    assert claims.is_stalled(Case.objects.get(pk=case.pk))  # not stamped for the claim that is gone


@pytest.mark.django_db
def test_a_late_task_of_the_claim_that_published_the_case_keeps_its_text(tmp_path: Path) -> None:
    """A part of a fan-out redelivered after its claim's chord completed and published (its worker was
    killed after the part counted, before the part's message was acknowledged): the claim is gone, the
    part stops, and the text rows of that generation, now the case's own, stay."""
    case = _queued_case(tmp_path)
    tasks.case_ingest(case_id=case.pk, token="task-a:0")
    case.refresh_from_db()
    rows = RawChunk.objects.filter(case=case, generation=case.generation).count()
    assert case.status == CaseStatus.READY and case.generation == 1 and rows
    fanout.run_part({"case_id": case.pk, "token": "task-a:0", "generation": 1}, 0)
    fanout.run_analyze({"case_id": case.pk, "token": "task-a:0", "generation": 1})
    case.refresh_from_db()
    assert case.status == CaseStatus.READY and case.generation == 1
    assert RawChunk.objects.filter(case=case, generation=1).count() == rows


@pytest.mark.django_db
def test_reanalyze_takes_back_a_stalled_case_and_drops_its_unpublished_detail(tmp_path: Path) -> None:
    case = _queued_case(tmp_path)
    claim = claims.claim_case(case_id=case.pk, token="task-a:0")
    pipeline.DetailWriter(case.pk, claim.generation).keep("vmstat.txt", tuple(chunks_of(VMSTAT.encode(), 1)))
    assert RawChunk.objects.filter(case=case, generation=claim.generation).exists()
    _silence(case)
    services.case_reanalyze(case_id=case.pk, enqueue=False)
    case.refresh_from_db()
    assert (case.status, case.claim, case.requeues) == (CaseStatus.QUEUED, "", 0)
    assert not RawChunk.objects.filter(case=case).exists()
