"""The sweeper: no case stays queued, parsing or analyzing for ever.

Run every ``CASEBOOK_SWEEP_INTERVAL`` seconds by Celery beat (``casebook.sweep_cases``). Each sweep:

1. **Silent holders.** A parsing or analyzing case whose worker stopped reporting (no heartbeat for
   ``CASEBOOK_STALE_AFTER`` s: the worker was killed, its host died, the OOM killer struck) is taken
   back: re-queued and its task sent again, at most ``CASEBOOK_MAX_REQUEUES`` times (1) since the last
   upload or re-analyze; after that it is FAILED with a reason that says what happened and where
   (``claims.poison_reason``: "the worker died ... while parsing X, twice"), and never claimed again:
   a bundle that kills its worker (a poison pill) cannot take the workers from the other cases. The
   dead worker's claim is revoked, so it writes nothing if it ever comes back. An ingest that ran
   its worker out of memory (``MemoryError``) counts the same (``pipeline.run_claimed``).
2. **Lost messages.** A queued case whose task never reached the broker (it was down at upload), was
   sent to a broker that has restarted since (Redis keeps nothing on disk here), or was sent more than
   ``CASEBOOK_QUEUED_RESEND_AFTER`` s ago, is sent again. A duplicate message is harmless: the claim
   lets one execution through.
3. **Work files left behind.** The fan-out's work files (``ingest-work/case-<id>/gen-<n>/``) of a claim
   that is over (a newer claim exists, or the case is no longer parsing or analyzing) are removed. The
   chord's last task removes its own once the case is published; this step removes those of a worker
   killed before it could, so no claim's files outlive it by more than one sweep.

Every transition is a conditional update (the case must still be in the state the sweep read), so
two sweeps at once, or a sweep racing a worker, never both act on one case.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from web import storage
from web.ingest import broker
from web.ingest.claims import last_report, poison_reason, stale_before
from web.ingest.tasks import case_send_ingest
from web.models import PROCESSING_STATUSES, Case, CaseStatus, RawChunk
from web.notifications.services import case_finished

log = logging.getLogger(__name__)

#: A message sent up to this long after the broker's start, as our clock reads it, may still have
#: been sent to the previous broker (clocks of two hosts differ): sent again. Duplicates are harmless.
BROKER_CLOCK_MARGIN_S = 5


@dataclass
class SweepReport:
    """What one sweep did: case ids re-queued, failed, and sent again."""

    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)
    #: the work folders removed (``ingest-work/case-<id>/gen-<n>``)
    removed_work: list[str] = field(default_factory=list)


def sweep(*, now: datetime | None = None) -> SweepReport:
    """Take back cases of silent workers and resend lost messages (see the module docstring)."""
    now = now or timezone.now()
    report = SweepReport()
    _take_back_silent(now, report)
    _resend_lost(now, report)
    _remove_finished_work(report)
    if report.requeued or report.failed or report.resent:
        log.info(
            "sweep: re-queued %s, failed %s, sent again %s",
            report.requeued,
            report.failed,
            report.resent,
            extra={"requeued": report.requeued, "failed": report.failed, "resent": report.resent},
        )
    return report


def _take_back_silent(now: datetime, report: SweepReport) -> None:
    stale = stale_before(now)
    silent = Case.objects.filter(status__in=PROCESSING_STATUSES).filter(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, updated_at__lt=stale)
    )
    for case in silent.only("status", "claim", "requeues", "heartbeat_at", "updated_at", "status_detail"):
        # Still in the state read above: nobody took it meanwhile.
        same = Case.objects.filter(pk=case.pk, status=case.status, claim=case.claim).filter(
            Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True)
        )
        when = _utc(last_report(case))
        doing = f", while {case.status_detail}" if case.status_detail else ""
        if case.requeues >= settings.CASEBOOK_MAX_REQUEUES:
            reason = poison_reason(
                what=(
                    f"died (it stopped reporting, the last time at {when}: killed, out of memory?, or its "
                    "host went down)"
                ),
                count=case.requeues + 1,
                doing=case.status_detail,
            )
            if same.update(
                status=CaseStatus.FAILED, failure_reason=reason, claim="", status_detail="", updated_at=now
            ):
                RawChunk.objects.filter(case_id=case.pk, generation__gt=_generation(case.pk)).delete()
                log.warning("case %s failed: %s", case.pk, reason, extra={"case_id": case.pk})
                case_finished(case_id=case.pk, status=CaseStatus.FAILED)
                report.failed.append(case.pk)
            continue
        detail = f"Re-queued: the worker processing it stopped reporting at {when}{doing}."
        if same.update(
            status=CaseStatus.QUEUED,
            claim="",
            progress=0,
            requeues=case.requeues + 1,
            status_detail=detail[:300],
            enqueued_at=now,
            updated_at=now,
        ):
            log.warning("case %s: %s", case.pk, detail, extra={"case_id": case.pk})
            report.requeued.append(case.pk)
            case_send_ingest(case_id=case.pk)


def _resend_lost(now: datetime, report: SweepReport) -> None:
    lost = Q(enqueued_at__isnull=True) | Q(
        enqueued_at__lt=now - timedelta(seconds=settings.CASEBOOK_QUEUED_RESEND_AFTER)
    )
    started = broker.started_at()
    if started is not None:
        lost |= Q(enqueued_at__lt=started + timedelta(seconds=BROKER_CLOCK_MARGIN_S))
    # A case created a moment ago may still be sending its own message (on commit): leave it.
    settled = now - timedelta(seconds=BROKER_CLOCK_MARGIN_S)
    for case_id, enqueued_at in (
        Case.objects.filter(status=CaseStatus.QUEUED, updated_at__lt=settled)
        .filter(lost)
        .values_list("pk", "enqueued_at")
    ):
        if Case.objects.filter(pk=case_id, status=CaseStatus.QUEUED, enqueued_at=enqueued_at).update(
            enqueued_at=now
        ) and case_send_ingest(case_id=case_id):
            report.resent.append(case_id)


def _remove_finished_work(report: SweepReport) -> None:
    """Remove the work folders of claims that are over. A claim's generation is ``Case.claims`` when
    it was made; a folder of that generation is live only while the case is parsing or analyzing, and
    a claim made after this read writes under a higher generation, which is left alone."""
    by_case = storage.work_generations()
    if not by_case:
        return
    cases = Case.objects.filter(pk__in=by_case).values_list("pk", "claims", "status")
    live = {pk: (claims, status in PROCESSING_STATUSES) for pk, claims, status in cases}
    for case_id, generations in sorted(by_case.items()):
        last, processing = live.get(case_id, (None, False))
        for gen in generations:
            if last is None or gen < last or (gen == last and not processing):
                folder = f"{storage.case_work_dir(case_id)}/gen-{gen}"
                storage.remove_tree(folder)
                report.removed_work.append(folder)
        storage.remove_empty_folder(storage.case_work_dir(case_id))


def _generation(case_id: int) -> int:
    return Case.objects.filter(pk=case_id).values_list("generation", flat=True).first() or 0


def _utc(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@shared_task(
    name="casebook.sweep_cases",
    ignore_result=True,
    # A sweep that waited longer than one interval in the queue (workers all busy, or none) is
    # dropped: the next one does the same work, so they never pile up.
    expires=settings.CASEBOOK_SWEEP_INTERVAL,
)
def sweep_cases_task() -> None:
    """The sweep, every ``CASEBOOK_SWEEP_INTERVAL`` (Celery beat)."""
    sweep()
