"""Celery tasks: thin wrappers that take ids and call one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

#: How every task of an ingest retries when the database went away (restart, fail-over).
from web.ingest import claims, fanout, sweeper
from web.ingest import pipeline as services

INGEST_RETRIES = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (services.TransientError, OperationalError, InterfaceError),
    "retry_backoff": 5,
    "retry_backoff_max": 120,
    "max_retries": 5,
}


@shared_task(
    bind=True,
    name="casebook.case_ingest",
    ignore_result=True,
    acks_late=True,  # safe: case_ingest claims the case and publishes its rows once, atomically
    reject_on_worker_lost=True,  # a killed pool process: the message goes back to the queue at once
    # The database went away (restart, fail-over): retried; the retry takes over this execution's claim.
    autoretry_for=(services.TransientError, OperationalError, InterfaceError),
    retry_backoff=5,
    retry_backoff_max=120,
    max_retries=5,
)
def case_ingest_task(self, case_id: int) -> None:  # noqa: ANN001 - Celery's bound task
    try:
        services.case_ingest(
            case_id=case_id, token=claims.new_token(self.request.id, self.request.retries or 0)
        )
    finally:
        services.warm_parse_processes()  # the next bundle's, now that this one's are closed


@shared_task(name="casebook.ingest_part", ignore_result=False, **INGEST_RETRIES)  # a chord counts its results
def ingest_part_task(claim: dict, index: int) -> None:
    """One part of a fanned-out ingest (web/fanout.py), under the ingest's claim."""
    fanout.run_part(claim, index)


@shared_task(name="casebook.ingest_analyze", ignore_result=True, **INGEST_RETRIES)
def ingest_analyze_task(results: list, claim: dict) -> None:
    """The chord's body: the fanned-out ingest's parts assembled, analyzed and published."""
    fanout.run_analyze(claim)


@shared_task(
    name="casebook.sweep_cases",
    ignore_result=True,
    # A sweep that waited longer than one interval in the queue (workers all busy, or none) is
    # dropped: the next one does the same work, so they never pile up.
    expires=settings.CASEBOOK_SWEEP_INTERVAL,
)
def sweep_cases_task() -> None:
    sweeper.sweep()
