"""An ingest through a real Celery worker on the real Redis broker."""

from __future__ import annotations

import time

import pytest
from django.core.files import File
from django.db import InterfaceError, OperationalError

from tests.web.conftest import EXAMPLE_BUNDLE
from web import faults
from web.cases import services
from web.ingest.tasks import case_ingest_task
from web.models import Case, CaseStatus


def _wait_final(case_id: int, timeout: float = 120) -> Case:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        case = Case.objects.get(pk=case_id)
        if case.status in (CaseStatus.READY, CaseStatus.FAILED):
            return case
        time.sleep(0.2)
    raise AssertionError(f"case {case_id} still {case.status} after {timeout} s")


def test_an_upload_is_ingested_by_the_worker(celery_worker) -> None:
    if not EXAMPLE_BUNDLE.exists():
        pytest.fail(f"the shipped example bundle {EXAMPLE_BUNDLE} is missing")
    with EXAMPLE_BUNDLE.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=EXAMPLE_BUNDLE.name)
    case = _wait_final(case.pk)
    assert case.status == CaseStatus.READY, case.failure_reason
    formats = set(case.sources.values_list("format", flat=True))
    assert {"vmstat", "processlist"} <= formats
    assert case.ncpu == 2


def test_the_task_is_configured_for_idempotent_redelivery() -> None:
    assert case_ingest_task.acks_late is True
    assert case_ingest_task.reject_on_worker_lost is True
    assert case_ingest_task.ignore_result is True
    assert case_ingest_task.max_retries == 5


def test_the_celery_limits_are_set(settings) -> None:
    from web.celery import app

    assert app.conf.task_soft_time_limit == settings.CELERY_TASK_SOFT_TIME_LIMIT > 0
    assert app.conf.task_time_limit > app.conf.task_soft_time_limit
    assert app.conf.broker_url.startswith("redis://")


def test_a_task_that_died_is_redelivered_only_after_the_hard_time_limit(settings) -> None:
    # Redis hands an unacknowledged message to another worker after the visibility timeout: it must
    # exceed the hard limit, or a long ingest still running would be started a second time.
    from web.celery import app

    assert app.conf.task_acks_late is True and app.conf.worker_prefetch_multiplier == 1
    assert app.conf.broker_transport_options["visibility_timeout"] > app.conf.task_time_limit
    assert app.conf.broker_connection_max_retries is None  # workers wait for Redis for as long as it takes
    assert app.conf.worker_cancel_long_running_tasks_on_connection_loss is False
    policy = app.conf.task_publish_retry_policy
    assert policy["max_retries"] * policy["interval_max"] <= 5  # an upload never waits long on a dead Redis


def test_beat_runs_the_sweeper_at_the_configured_interval(settings) -> None:
    from web.celery import app
    from web.ingest.sweeper import sweep_cases_task

    (entry,) = [e for e in app.conf.beat_schedule.values() if e["task"] == sweep_cases_task.name]
    assert entry["schedule"] == settings.CASEBOOK_SWEEP_INTERVAL
    assert entry["options"]["expires"] == settings.CASEBOOK_SWEEP_INTERVAL  # sweeps never pile up
    assert case_ingest_task.autoretry_for == (faults.TransientError, OperationalError, InterfaceError)


def _parse_in_a_daemon(results) -> None:
    from parsers import processlist
    from parsers.ingest.pool import PiecePool
    from tests.parsers.test_pieces import _pieced, _processlist

    with PiecePool(2) as pool:
        source = _pieced(processlist, _processlist(30, 4), 2000, runner=pool)
        results.put((len(source.main), len(pool._all)))


def test_parse_processes_start_inside_a_daemonic_prefork_child() -> None:
    # Celery's prefork pool runs tasks in daemonic billiard processes, which multiprocessing refuses
    # children; the parse pool starts its processes with subprocess and works there.
    import billiard

    results = billiard.Queue()
    child = billiard.Process(target=_parse_in_a_daemon, args=(results,), daemon=True)
    child.start()
    rows, processes = results.get(timeout=60)
    child.join(timeout=30)
    assert (rows, processes, child.exitcode) == (30 * 4, 2, 0)
