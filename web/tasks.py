"""Celery tasks: thin wrappers that take ids and call one service."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from web import services


@shared_task(
    name="casebook.case_ingest",
    ignore_result=True,
    acks_late=True,  # safe: case_ingest claims with a conditional update and replaces rows atomically
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),  # database gone: transient, retried
    retry_backoff=5,
    retry_backoff_max=120,
    max_retries=5,
)
def case_ingest_task(case_id: int) -> None:
    services.case_ingest(case_id=case_id)
