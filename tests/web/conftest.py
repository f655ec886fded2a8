"""Web test fixtures: personas, bundles, storage in a temporary folder, an embedded Celery worker.

PostgreSQL and Redis are the real services; the worker is a real Celery worker thread consuming a
queue of its own, so a dev worker running on the same Redis never takes the tests' tasks.
"""

from __future__ import annotations

import contextlib
import os
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from celery.contrib.testing.worker import start_worker
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from tests.bundles import generated_collection, make_tar  # noqa: F401 - make_tar: the web tests import it from here
from tests.servers import CasebookProcesses
from web.celery import app as celery_app
from web.models import Case, CaseStatus, Finding, Series, Source, Team, default_team_id

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"
EXAMPLE_BUNDLE = BUNDLES / "ptstalk-mariadb-tmptables.tar.gz"
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"
EXAMPLE1 = SAMPLES / "My-gather" / "pt-stalk" / "example1"
EXAMPLE2 = SAMPLES / "My-gather" / "pt-stalk" / "example2"


#: `vmstat 1 3` (procps-ng) as pt-stalk writes it: the since-boot line, then two 1 s reports.
VMSTAT = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
    " 2  0      0 104588800 10433708 236728672    0    0     5    93    0    1  3  3 94  0  0\n"
    " 1  0      0 104555712 10433708 236731536    0    0     0 43336 42713 85374  4  7 87  2  0\n"
    " 1  0      0 104574640 10433708 236735136    0    0     0 54908 50910 111742  6  8 84  2  0\n"
)
#: One SHOW FULL PROCESSLIST\G snapshot with no TS line (older pt-stalk), one active session.
PROCESSLIST_NO_TS = (
    "*************************** 1. row ***************************\n"
    "     Id: 7\n"
    "   User: app\n"
    "   Host: app1:50928\n"
    "     db: shop\n"
    "Command: Query\n"
    "   Time: 0\n"
    "  State: Sending data\n"
    "   Info: SELECT * FROM orders WHERE id = 42\n"
)


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def _fresh_reset_counts() -> Iterator[None]:
    """Password-reset counts (web/throttles.py, in the real Redis for an hour) start at zero in every
    test: a test's resets do not throttle the next test's, nor the next run's."""

    from django.conf import settings

    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)  # read now: a test may point it elsewhere
    # This process's prefix (the worker's own under pytest-xdist, tests/conftest.py) and the one of the
    # processes a test starts (scripts/start: settings' own "casebook").
    prefixes = {settings.CACHES["default"]["KEY_PREFIX"], "casebook"}

    def clear() -> None:
        for prefix in prefixes:
            for key in client.scan_iter(match=f"{prefix}:*:reset-*", count=1000):
                client.delete(key)

    clear()
    yield
    clear()


@pytest.fixture
def engineer(db):
    """An engineer of the default team (the team of cases made without a user)."""
    user = get_user_model().objects.create_user("alice", password="correct horse battery")
    Team.objects.get(pk=default_team_id()).members.add(user)
    return user


@pytest.fixture
def other_engineer(db):
    """An engineer of another team ("Other"): sees none of the default team's cases."""
    user = get_user_model().objects.create_user("bob", password="correct horse battery")
    Team.objects.get_or_create(name="Other")[0].members.add(user)
    return user


@pytest.fixture
def other_client(other_engineer) -> Client:
    client = Client()
    client.force_login(other_engineer)
    return client


@pytest.fixture
def engineer_client(engineer) -> Client:
    client = Client()
    client.force_login(engineer)
    return client


@pytest.fixture
def api_token(engineer) -> str:
    """A personal API token of the engineer (web/accounts/services.py)."""
    from web.accounts.services import api_token_create

    return api_token_create(user=engineer, name="tests")[1]


@pytest.fixture
def api_client(api_token: str) -> Client:
    """A client presenting the engineer's API token, as a script would."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {api_token}")


@pytest.fixture
def example2_tarball(tmp_path: Path) -> Path:
    """The real pt-stalk 3.7.1 collection example2 (../shared/samples), tarred the way a customer would."""
    if not EXAMPLE2.is_dir():
        pytest.skip("../shared/samples is absent")
    path = tmp_path / "example2.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for f in sorted(EXAMPLE2.iterdir()):
            if f.name.startswith("2026_04_21_16_51_41-"):
                tar.add(f, arcname=f"example2/{f.name}")
    return path


@pytest.fixture
def example1_tarball(tmp_path: Path) -> Path:
    """The real pt-stalk 3.7.1 collection example1 (two snapshots, 30 s apart), tarred whole."""
    if not EXAMPLE1.is_dir():
        pytest.skip("../shared/samples is absent")
    path = tmp_path / "example1.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(EXAMPLE1, arcname="example1")
    return path


@pytest.fixture
def celery_worker(transactional_db) -> Iterator[object]:
    """A real Celery worker thread on the real Redis broker, consuming a queue private to this run."""
    queue = f"casebook-test-{os.getpid()}"
    old = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = queue
    try:
        with start_worker(
            celery_app, pool="solo", perform_ping_check=False, queues=[queue], shutdown_timeout=30
        ) as worker:
            yield worker
    finally:
        celery_app.conf.task_default_queue = old


@contextlib.contextmanager
def processes_on_test_db(
    tmp_path: Path, settings, redis_client: redis.Redis, **env: str
) -> Iterator[CasebookProcesses]:
    """Casebook's processes (``scripts/start``) on the test database and the machine's Redis, on a queue
    of their own that this process sends to; ``env``: settings of theirs. Everything they started and
    left in the broker (their queue, a killed worker's unacknowledged message) goes afterwards."""
    db = connection.settings_dict
    stack = CasebookProcesses(
        tmp_path,
        database_url=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        redis_url=settings.CELERY_BROKER_URL,
        media_root=Path(settings.MEDIA_ROOT),
        **env,
    )
    old = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = stack.queue
    try:
        yield stack
    finally:
        celery_app.conf.task_default_queue = old
        stack.stop_all()
        connection.close()
        redis_client.delete(stack.queue)
        for tag, raw in redis_client.hgetall("unacked").items():
            if stack.queue.encode() in raw:
                redis_client.hdel("unacked", tag)
                redis_client.zrem("unacked_index", tag)


#: Settings of fan-out worker processes: a part a task of 8 MiB, parsed in the task's own process.
FANOUT_ENV = {
    "CASEBOOK_INGEST_FANOUT": "1",
    "CASEBOOK_FANOUT_PART_BYTES": str(8 << 20),
    "CASEBOOK_PARSE_PROCESSES": "0",
}


@pytest.fixture
def fanout_stack(transactional_db, tmp_path: Path, settings, redis_client) -> Iterator[CasebookProcesses]:
    """Fan-out worker processes (``FANOUT_ENV``) on the test database and the machine's Redis, on a
    queue of their own; the test starts as many as it needs."""
    with processes_on_test_db(tmp_path, settings, redis_client, **FANOUT_ENV) as stack:
        yield stack


@pytest.fixture(scope="session")
def busy_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 4-minute collection (64 CPUs, 2,000 threads, 1,000 sessions): about 10 s of work,
    22 parts of a fan-out at 8 MiB a part."""
    out = tmp_path_factory.mktemp("bundle") / "collection-4m.tar.gz"
    return generated_collection(out, 4)


@pytest.fixture
def private_queue(redis_client) -> Iterator[str]:
    """A Celery queue of this test alone: tasks the code under test sends land there (and are deleted
    afterwards), never in the queue a development worker consumes."""
    queue = f"casebook-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    old = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = queue
    try:
        yield queue
    finally:
        celery_app.conf.task_default_queue = old
        redis_client.delete(queue)


@pytest.fixture
def redis_client() -> redis.Redis:
    """The real Redis of the broker URL (the tests' own database number)."""
    from django.conf import settings

    return redis.Redis.from_url(settings.CELERY_BROKER_URL)


def ingest_ready(path: Path) -> Case:
    """The case of the bundle at ``path``, created and ingested in this process; asserts it is ready."""
    from django.core.files import File

    from web.cases import services
    from web.ingest import tasks

    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=path.name, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    assert case.status == CaseStatus.READY, case.failure_reason
    return case


def case_findings(case: Case) -> list[tuple]:
    """The findings of ``case`` in order, every field a reader sees (for comparing two ingests)."""
    return list(
        Finding.objects.filter(case=case)
        .order_by("position")
        .values_list("key", "severity", "title", "summary", "windows", "evidence", "confidence", "related")
    )


def case_series(case: Case) -> dict[str, tuple[list, list]]:
    """The series of ``case`` by name: timestamps and values (rounded to 9 digits; NaN as None, so
    that two equal series compare equal)."""
    return {
        s.name: (s.ts_us, [None if v != v else round(v, 9) for v in s.values])
        for s in Series.objects.filter(case=case)
    }


def case_sources(case: Case) -> list[tuple]:
    """The sources of ``case`` in the order they were written."""
    return list(
        Source.objects.filter(case=case)
        .order_by("pk")
        .values_list("member", "format", "samples", "start", "end", "clock", "warning_count")
    )


def no_work_folder(case_id: int) -> bool:
    """Whether the storage holds no fan-out work folder of the case (``ingest-work/case-<id>``): the
    chord's last task removes its claim's once the case is published, the sweeper a dead claim's."""
    from django.core.files.storage import default_storage

    from web.storage import WORK_DIR

    folders = default_storage.listdir(WORK_DIR)[0] if default_storage.exists(WORK_DIR) else []
    return f"case-{case_id}" not in folders
