"""The sweeper (web/ingest/sweeper.py) on the real database and the real Redis: cases of silent workers are
taken back (bounded, then failed with a reason), lost messages are sent again, live work is left alone."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from tests.web.conftest import VMSTAT, make_tar
from web import faults
from web.cases import services
from web.ingest import broker, claims, sweeper
from web.models import Case, CaseStatus
from web.storage import case_work_dir

pytestmark = pytest.mark.django_db


def _case(tmp_path: Path) -> Case:
    path = make_tar(tmp_path / "b.tgz", {"vmstat.txt": VMSTAT.encode()})
    with path.open("rb") as fh:
        return services.case_create(user=None, file=File(fh), original_name=path.name, enqueue=False)


def _claimed(tmp_path: Path, *, silent_for_s: float, requeues: int = 0) -> Case:
    case = _case(tmp_path)
    claims.claim_case(case_id=case.pk, token="dead-task:0")
    Case.objects.filter(pk=case.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=silent_for_s),
        requeues=requeues,
        status_detail="parsing vmstat.txt",
    )
    return Case.objects.get(pk=case.pk)


def _ago(seconds: float):  # noqa: ANN202 - a datetime
    return timezone.now() - timedelta(seconds=seconds)


def test_a_case_whose_worker_went_silent_is_queued_again_and_its_task_sent(
    tmp_path: Path, settings, private_queue: str, redis_client
) -> None:
    case = _claimed(tmp_path, silent_for_s=settings.CASEBOOK_STALE_AFTER + 5)
    report = sweeper.sweep()
    assert report.requeued == [case.pk]
    case.refresh_from_db()
    assert (case.status, case.claim, case.requeues) == (CaseStatus.QUEUED, "", 1)
    assert case.status_detail.startswith("Re-queued: the worker processing it stopped reporting at ")
    assert "while parsing vmstat.txt" in case.status_detail
    assert redis_client.llen(private_queue) == 1
    # The revoked worker, should it wake up, can no longer publish anything.
    assert not claims.update_if_held(claims.Claim(case.pk, "dead-task:0", 1), progress=50)


def test_a_case_whose_worker_keeps_dying_fails_with_a_readable_reason(
    tmp_path: Path, settings, private_queue: str, redis_client
) -> None:
    case = _claimed(
        tmp_path, silent_for_s=settings.CASEBOOK_STALE_AFTER + 5, requeues=settings.CASEBOOK_MAX_REQUEUES
    )
    assert sweeper.sweep().failed == [case.pk]
    case.refresh_from_db()
    assert case.status == CaseStatus.FAILED
    assert case.failure_reason.startswith("The worker died (it stopped reporting, the last time at ")
    assert "or its host went down) while parsing vmstat.txt, twice: this bundle is not tried again" in (
        case.failure_reason
    )
    assert case.failure_reason.endswith("The original upload is kept: Re-analyze to try again.")
    assert redis_client.llen(private_queue) == 0


def test_a_case_that_took_its_worker_twice_is_never_claimed_a_third_time(
    tmp_path: Path, settings, private_queue: str, redis_client
) -> None:
    """The poison-pill rule with the default settings: the first silent worker re-queues the case,
    the second fails it, and a message still in the queue (or sent again) claims nothing."""
    assert settings.CASEBOOK_MAX_REQUEUES == 1
    case = _claimed(tmp_path, silent_for_s=settings.CASEBOOK_STALE_AFTER + 5)
    assert sweeper.sweep().requeued == [case.pk]
    assert claims.claim_case(case_id=case.pk, token="second-task:0").generation == 2
    Case.objects.filter(pk=case.pk).update(heartbeat_at=_ago(settings.CASEBOOK_STALE_AFTER + 5))
    assert sweeper.sweep().failed == [case.pk]
    assert claims.claim_case(case_id=case.pk, token="third-task:0") is None
    case.refresh_from_db()
    assert (case.status, case.claims, case.requeues) == (CaseStatus.FAILED, 2, 1)
    assert ", twice: this bundle is not tried again" in case.failure_reason


def test_an_ingest_that_runs_its_worker_out_of_memory_twice_fails_with_the_member(
    tmp_path: Path, settings
) -> None:
    from web.ingest import pipeline

    def exhausted(beat: claims.Heartbeat, detail: pipeline.DetailWriter) -> None:
        Case.objects.filter(pk=case.pk).update(status_detail="parsing pt/huge-processlist")
        raise MemoryError

    case = _case(tmp_path)
    for generation, token in ((1, "first:0"), (2, "second:0")):
        claim = claims.claim_case(case_id=case.pk, token=token)
        assert claim is not None and claim.generation == generation
        pipeline.run_claimed(claim, exhausted)
        case.refresh_from_db()
        if generation == 1:  # queued again, its message sent by the next sweep
            assert (case.status, case.requeues, case.enqueued_at) == (CaseStatus.QUEUED, 1, None)
            assert (
                case.status_detail
                == "Re-queued: the worker ran out of memory while parsing pt/huge-processlist"
            )
    assert case.status == CaseStatus.FAILED
    assert case.failure_reason.startswith(
        "The worker ran out of memory while parsing pt/huge-processlist, twice: this bundle is not tried "
        "again"
    )
    assert claims.claim_case(case_id=case.pk, token="third:0") is None


def test_a_live_worker_is_left_alone(tmp_path: Path, settings, private_queue: str) -> None:
    case = _claimed(tmp_path, silent_for_s=settings.CASEBOOK_STALE_AFTER - 10)
    assert sweeper.sweep() == sweeper.SweepReport()
    assert Case.objects.get(pk=case.pk).claim == "dead-task:0"


def test_a_queued_case_whose_task_never_reached_the_broker_is_sent(
    tmp_path: Path, private_queue: str, redis_client
) -> None:
    case = _case(tmp_path)
    Case.objects.filter(pk=case.pk).update(
        enqueued_at=None, status_detail=faults.BROKER_DOWN_DETAIL, updated_at=_ago(30)
    )
    assert sweeper.sweep().resent == [case.pk]
    case.refresh_from_db()
    assert case.enqueued_at is not None and case.status_detail == ""
    assert redis_client.llen(private_queue) == 1


def test_a_queued_case_sent_before_the_broker_restarted_is_sent_again(
    tmp_path: Path, private_queue: str, redis_client
) -> None:
    started = broker.started_at()
    assert started is not None
    case = _case(tmp_path)
    Case.objects.filter(pk=case.pk).update(enqueued_at=started - timedelta(seconds=60), updated_at=_ago(30))
    assert sweeper.sweep().resent == [case.pk]
    assert redis_client.llen(private_queue) == 1


def test_a_queued_case_sent_a_moment_ago_waits_for_its_worker(
    tmp_path: Path, private_queue: str, redis_client
) -> None:
    case = _case(tmp_path)
    Case.objects.filter(pk=case.pk).update(enqueued_at=_ago(1), updated_at=_ago(20))
    assert sweeper.sweep().resent == []
    assert redis_client.llen(private_queue) == 0


def test_a_queued_case_waiting_too_long_is_sent_again(
    tmp_path: Path, settings, private_queue: str, redis_client
) -> None:
    case = _case(tmp_path)
    waited = _ago(settings.CASEBOOK_QUEUED_RESEND_AFTER + 60)
    Case.objects.filter(pk=case.pk).update(enqueued_at=waited, updated_at=waited)
    assert sweeper.sweep().resent == [case.pk]
    assert redis_client.llen(private_queue) == 1


def test_the_work_files_of_claims_that_are_over_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    """A worker killed after publishing leaves its fan-out work files: the sweep removes those of a
    finished case and of an earlier claim, never those of the claim still parsing."""
    done, busy = _case(tmp_path), _claimed(tmp_path, silent_for_s=0)
    Case.objects.filter(pk=done.pk).update(status=CaseStatus.READY, claims=2, generation=2)
    names = {
        "done": f"{case_work_dir(done.pk)}/gen-2/plan.work",
        "busy-old": f"{case_work_dir(busy.pk)}/gen-0/plan.work",
        "busy-live": f"{case_work_dir(busy.pk)}/gen-{busy.claims}/plan.work",
    }
    for name in names.values():
        default_storage.save(name, ContentFile(b"x"))
    report = sweeper.sweep()
    assert sorted(report.removed_work) == sorted(
        [f"{case_work_dir(done.pk)}/gen-2", f"{case_work_dir(busy.pk)}/gen-0"]
    )
    assert [k for k, n in names.items() if default_storage.exists(n)] == ["busy-live"]
