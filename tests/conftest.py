"""Shared test fixtures: the path to ../shared/samples (skip when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_configure(config: pytest.Config) -> None:
    """WhiteNoise wants STATIC_ROOT to exist; the tests serve static files through the finders.

    Under pytest-xdist (``-n 2``), each worker has what another worker's tests must not see: its own
    test database (pytest-django names it ``test_<name>_gw0``...), its own storage folder (case ids of
    two databases coincide, and so would ``ingest-work/case-<id>/``) and its own cache keys in Redis
    (throttle counts). Celery queues are already per test (``private_queue``), ports are picked free."""
    from django.conf import settings

    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        settings.MEDIA_ROOT = Path(settings.MEDIA_ROOT).with_name(f"media-{worker}")
        settings.CACHES["default"]["KEY_PREFIX"] = f"casebook-{worker}"


@pytest.fixture
def samples() -> Path:
    """``../shared/samples``, read in place; the test is skipped when it is absent."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples is absent")
    return SAMPLES


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(autouse=True)
def _no_heartbeat_inside_a_test_transaction(request: pytest.FixtureRequest, settings) -> None:
    """The heartbeat thread (web/ingest/claims.py) writes through a connection of its own, which cannot see
    the rows of a test running inside a transaction (and would wait on their locks): such tests run
    without beats. Tests on a committed database (``transactional_db``) keep the real interval."""
    marker = request.node.get_closest_marker("django_db")
    committed = {"transactional_db", "live_server", "celery_worker"} & set(request.fixturenames)
    if not committed and not (marker and marker.kwargs.get("transaction")):
        settings.CASEBOOK_HEARTBEAT_INTERVAL = 24 * 3600
