"""The ingest's entry: ``case_send_ingest`` hands a queued case to the broker, the ``case_ingest``
task claims it and parses it here or fans it out (web/ingest/fanout.py).

Every Celery task sits beside the code it runs (the fan-out's parts in web/ingest/fanout.py, the
sweep in web/ingest/sweeper.py); tasks are thin wrappers that take ids and call one service.
"""

from __future__ import annotations

import functools
import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from web.faults import BROKER_DOWN_DETAIL, BROKER_ERRORS, TransientError
from web.ingest import fanout, pipeline
from web.ingest.claims import Claim, Heartbeat, claim_case, new_token
from web.models import Case, CaseStatus

log = logging.getLogger(__name__)


@shared_task(
    bind=True,
    name="casebook.case_ingest",
    ignore_result=True,
    acks_late=True,  # safe: case_ingest claims the case and publishes its rows once, atomically
    reject_on_worker_lost=True,  # a killed pool process: the message goes back to the queue at once
    # The database went away (restart, fail-over): retried; the retry takes over this execution's claim.
    autoretry_for=(TransientError, OperationalError, InterfaceError),
    retry_backoff=5,
    retry_backoff_max=120,
    max_retries=5,
)
def case_ingest_task(self, case_id: int) -> None:  # noqa: ANN001 - Celery's bound task
    try:
        case_ingest(case_id=case_id, token=new_token(self.request.id, self.request.retries or 0))
    finally:
        pipeline.warm_parse_processes()  # the next bundle's, now that this one's are closed


def case_send_ingest(*, case_id: int) -> bool:
    """Hand a queued case's ingest task to the broker now; False when the broker cannot be reached.

    On failure the case stays QUEUED with ``enqueued_at`` cleared and a status detail that says it will
    be queued when the broker is back: the sweeper sends it then. Sending twice is harmless (the
    claim lets one execution through).
    """
    try:
        case_ingest_task.delay(case_id)
    except BROKER_ERRORS as exc:
        log.warning(
            "case %s: the ingest task could not be queued (%s)", case_id, exc, extra={"case_id": case_id}
        )
        Case.objects.filter(pk=case_id, status=CaseStatus.QUEUED).update(
            enqueued_at=None, status_detail=BROKER_DOWN_DETAIL, updated_at=timezone.now()
        )
        return False
    Case.objects.filter(pk=case_id, status=CaseStatus.QUEUED, status_detail=BROKER_DOWN_DETAIL).update(
        status_detail="", updated_at=timezone.now()
    )
    return True


def case_ingest(*, case_id: int, token: str | None = None) -> None:
    """Parse, analyze and store a queued case; the case ends READY or FAILED with a reason.

    ``token`` names this execution (``claims.new_token``; a fresh one when omitted, as for a call
    outside Celery). A case another live worker holds is left alone. A lost database connection
    raises ``TransientError`` (the task retries, and the retry takes over its predecessor's claim);
    a claim taken away meanwhile (``ClaimLost``) stops the work without a write. With
    ``CASEBOOK_INGEST_FANOUT`` this task only plans the parse and sends its parts (web/ingest/fanout.py); the
    chord's last task leaves the case READY or FAILED.
    """
    token = token or new_token(None)
    claim = claim_case(case_id=case_id, token=token)
    if claim is None:
        log.info(
            "case %s is not queued; another worker has it or it is done", case_id, extra={"case_id": case_id}
        )
        return
    log.info(
        "case %s claimed by %s (generation %s)", case_id, token, claim.generation, extra={"case_id": case_id}
    )
    pipeline.run_claimed(claim, functools.partial(_ingest_claimed, claim))


def _ingest_claimed(claim: Claim, beat: Heartbeat, detail: pipeline.DetailWriter) -> None:
    case = Case.objects.select_related("upload").defer("charts_overview").get(pk=claim.case_id)
    detail.discard()  # rows a crashed run of this generation may have left
    report = pipeline.reporter(claim, beat)
    if settings.CASEBOOK_INGEST_FANOUT:
        fanout.dispatch(claim, case, report=report, keep_text=detail.keep)
        return
    bundle = pipeline.parse_upload(case, keep_text=detail.keep, report=report)
    pipeline.analyze_and_publish(claim, beat, case, bundle)
