"""Storage on S3, for real: moto's standalone S3-compatible server on a spare loopback port, and
Casebook's web (gunicorn) and two Celery workers (``scripts/start``) each in an empty working
directory of its own, with a temporary folder of its own and no media folder: they share nothing but
PostgreSQL (the test database), Redis and the bucket (``CASEBOOK_STORAGE_URL=s3://…``).

- An upload through the API ends ready with the fan-out off, then with it on (two workers taking the
  parts), with the same sources, findings and series; the case page shows it; a share link that
  allows it downloads the original bundle, byte for byte, from the bucket.
- Deleting the cases removes their objects from the bucket (listed with boto3).
- A fan-out worker killed with ``kill -9`` while it runs a part: the case ends ready, with the rows of
  an undisturbed fan-out of the same bundle, each once.
- Nothing was written in any process's working directory, and no temporary copy of a bundle is left.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from parsers.ingest import workfile
from tests.servers import CasebookProcesses, MotoServer, wait_for
from tests.web.conftest import (
    EXAMPLE_BUNDLE,
    FANOUT_ENV,
    case_findings,
    case_series,
    case_sources,
    processes_on_test_db,
)
from tests.web.test_faults import READY_AFTER_KILL_S, _no_duplicates, _parts_held
from web.models import Case, CaseStatus, RawChunk, Series, Source, Upload
from web.settings import _storage
from web.storage import WORK_DIR

BUCKET, PREFIX = "casebook-test", "media"
READY_WITHIN_S = 180


@pytest.fixture
def moto(tmp_path: Path) -> Iterator[MotoServer]:
    server = MotoServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class S3Stack:
    """The processes of one test on the bucket: each started in an empty folder of its own."""

    def __init__(self, stack: CasebookProcesses, moto: MotoServer, base: Path) -> None:
        self.stack = stack
        self.moto = moto
        self.base = base
        self.cwds: dict[str, Path] = {}

    def _own(self, name: str, env: dict[str, str] | None) -> dict[str, object]:
        cwd = self.base / "cwd" / name
        tmp = self.base / "tmp" / name
        cwd.mkdir(parents=True)
        tmp.mkdir(parents=True)
        self.cwds[name] = cwd
        return {"cwd": cwd, "env": {"TMPDIR": str(tmp), **(env or {})}}

    def start(self, role: str, name: str, env: dict[str, str] | None = None):  # noqa: ANN201
        own = self._own(name, env)
        if role == "web":
            return self.stack.start_web(**own)
        return self.stack.start(role, name, **own)

    def run(self, role: str) -> None:
        self.stack.run(role, **self._own(role, None))

    def ready(self, title: str, path: Path = EXAMPLE_BUNDLE) -> Case:
        made = self.stack.upload(path, title)
        assert made.status_code == 201, made.text
        case_id = made.json()["id"]
        wait_for(
            f"case {case_id} done",
            lambda: Case.objects.filter(
                pk=case_id, status__in=(CaseStatus.READY, CaseStatus.FAILED)
            ).exists(),
            timeout_s=READY_WITHIN_S,
            every_s=0.5,
        )
        case = Case.objects.get(pk=case_id)
        assert case.status == CaseStatus.READY, case.failure_reason
        return case

    def keys(self, prefix: str = "") -> list[str]:
        return self.moto.keys(BUCKET, f"{PREFIX}/{prefix}")

    def work_keys(self, case_id: int) -> list[str]:
        return self.keys(f"{WORK_DIR}/case-{case_id}/")

    def assert_nothing_left_locally(self, live: list[str]) -> None:
        """No file in any working directory; no temporary copy of a bundle (``services.local_copy``)
        or upload left in the temporary folder of a process still alive (a killed one may leave what
        it was writing). Celery's pool keeps a ``pymp-*`` folder there while it runs."""
        for name, cwd in self.cwds.items():
            assert not list(cwd.rglob("*")), f"{name} wrote in its working directory: {list(cwd.rglob('*'))}"
        for name in live:
            left = [p for p in (self.base / "tmp" / name).rglob("*") if not p.name.startswith("pymp-")]
            assert not left, f"{name} left temporary files: {left}"
        assert not (self.base / "no-media").exists()


@pytest.fixture
def s3_stack(transactional_db, tmp_path: Path, settings, redis_client, moto: MotoServer) -> Iterator[S3Stack]:
    env = {
        "CASEBOOK_STORAGE_URL": f"s3://{BUCKET}/{PREFIX}",
        "CASEBOOK_S3_ENDPOINT_URL": moto.url,
        "CASEBOOK_S3_REGION": MotoServer.REGION,
        # Named but never made: with an S3 storage no process may write a media folder.
        "CASEBOOK_MEDIA_ROOT": str(tmp_path / "no-media"),
        **moto.env(),
    }
    with processes_on_test_db(tmp_path, settings, redis_client, **env) as stack:
        s3 = S3Stack(stack, moto, tmp_path)
        s3.run("migrate")  # creates the bucket (manage.py create_bucket) and the engineer
        assert BUCKET in [b["Name"] for b in moto.client().list_buckets()["Buckets"]]
        s3.start("web", "web")
        yield s3


def test_two_workers_that_share_only_the_database_redis_and_the_bucket(
    s3_stack: S3Stack, settings, monkeypatch
) -> None:
    s3 = s3_stack
    s3.start("worker", "worker-1")
    s3.start("worker", "worker-2")
    single = s3.ready("fan-out off")
    (name,) = Upload.objects.filter(case=single).values_list("file", flat=True)
    assert f"{PREFIX}/{name}" in s3.keys("bundles/")

    # The case page, and the original through a share link that allows it, read from the bucket.
    session = s3.stack.engineer_session()
    page = session.get(f"{s3.stack.base_url}/cases/{single.pk}/", timeout=30)
    assert page.status_code == 200 and "fan-out off" in page.text
    made = requests.post(
        f"{s3.stack.base_url}/api/cases/{single.pk}/shares/",
        headers=s3.stack.api_headers(),
        json={
            "allow_bundle": True,
            "redact_literals": False,
            "redact_hosts": False,
            "redact_users": False,
            "redact_schemas": False,
        },
        timeout=30,
    )
    assert made.status_code == 201, made.text
    link = "/s/" + made.json()["url"].split("/s/", 1)[1]
    got = requests.get(f"{s3.stack.base_url}{link}bundle/", timeout=60)
    assert got.status_code == 200 and got.content == EXAMPLE_BUNDLE.read_bytes()

    # The same bundle fanned out over two fresh workers: the case of the single task.
    for process in s3.stack.processes:
        if process.name.startswith("worker"):
            process.stop()
    s3.start("worker", "worker-3", FANOUT_ENV)
    s3.start("worker", "worker-4", FANOUT_ENV)
    fanned = s3.ready("fan-out on")

    def logs() -> str:
        return "".join((s3.stack.workdir / f"worker-{n}.log").read_text() for n in (3, 4))

    wait_for("the analysis's log line", lambda: '"task": "casebook.ingest_analyze"' in logs(), timeout_s=30)
    assert logs().count('"task": "casebook.ingest_part"') >= 5  # the parts ran as tasks of their own
    assert case_sources(fanned) == case_sources(single) and case_sources(single)
    assert case_findings(fanned) == case_findings(single)
    assert case_series(fanned) == case_series(single) and case_series(single)
    assert not s3.work_keys(fanned.pk)  # the work files went with the analysis

    # Deleting the cases (here through the ORM, as the admin does) removes their objects.
    uploads = {f"{PREFIX}/{n}" for n in Upload.objects.values_list("file", flat=True)}
    assert len(uploads) == 2 and uploads <= set(s3.keys("bundles/"))
    for key, value in {**s3.moto.env(), "CASEBOOK_S3_ENDPOINT_URL": s3.moto.url}.items():
        monkeypatch.setenv(key, value)
    storage, _ = _storage(f"s3://{BUCKET}/{PREFIX}", Path("/nonexistent"))
    settings.STORAGES = {**settings.STORAGES, "default": storage}
    Case.objects.filter(pk__in=[single.pk, fanned.pk]).delete()
    assert not uploads & set(s3.keys())
    assert not s3.keys(f"{WORK_DIR}/")

    s3.assert_nothing_left_locally(live=["web", "worker-3", "worker-4"])


def _plan_parts(s3: S3Stack, case_id: int) -> int | None:
    key = f"{PREFIX}/{WORK_DIR}/case-{case_id}/gen-1/plan.work"
    if key not in s3.keys(f"{WORK_DIR}/case-{case_id}/gen-1/"):
        return None
    body = s3.moto.client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
    return len(workfile.loads(body, name=key).parts)


def test_a_fanout_worker_killed_mid_part_on_s3_leaves_a_case_that_ends_ready(
    s3_stack: S3Stack, busy_bundle: Path, redis_client
) -> None:
    s3 = s3_stack
    first = s3.start("worker", "worker-1", FANOUT_ENV)
    made = s3.stack.upload(busy_bundle, "killed mid-part")
    assert made.status_code == 201, made.text
    case_id = made.json()["id"]

    seen: dict[str, object] = {}

    def part_running() -> bool:
        parts = seen.get("parts") or _plan_parts(s3, case_id)
        prefix = f"{PREFIX}/{WORK_DIR}/case-{case_id}/gen-1/outcome-"
        done = {int(k[len(prefix) :].split(".")[0]) for k in s3.work_keys(case_id) if k.startswith(prefix)}
        held = _parts_held(redis_client, s3.stack.queue, case_id)
        seen.update(parts=parts, done=sorted(done), held=held)
        return bool(parts and 1 <= len(done) < parts - 1 and set(held) - done)

    wait_for("the worker running a part, one done", part_running, timeout_s=90, every_s=0.05)
    first.kill9()
    killed_at = time.monotonic()
    s3.start("worker", "worker-2", FANOUT_ENV)
    s3.start("beat", "beat")
    wait_for(
        "the case ready after the kill",
        lambda: Case.objects.filter(pk=case_id, status__in=(CaseStatus.READY, CaseStatus.FAILED)).exists(),
        timeout_s=READY_AFTER_KILL_S,
        every_s=0.5,
    )
    case = Case.objects.get(pk=case_id)
    assert case.status == CaseStatus.READY, case.failure_reason
    assert time.monotonic() - killed_at < READY_AFTER_KILL_S
    assert (case.requeues, case.claims) in ((1, 2), (0, 1)), (case.requeues, case.claims, seen)

    # The same bundle fanned out again, undisturbed: the same rows, each once.
    clean = s3.ready("not killed", busy_bundle)
    assert case_sources(case) == case_sources(clean)
    assert case_findings(case) == case_findings(clean) and case_findings(clean)
    assert case_series(case) == case_series(clean)
    assert Series.objects.filter(case=case).count() == Series.objects.filter(case=clean).count()
    assert Source.objects.filter(case=case).count() == Source.objects.filter(case=clean).count()
    _no_duplicates(
        {
            "sources": list(Source.objects.filter(case=case).values_list("member", "format")),
            "series": list(Series.objects.filter(case=case).values_list("name", flat=True)),
        }
    )
    chunks = list(RawChunk.objects.filter(case=case).values_list("member", "line_start", "line_end"))
    assert len(chunks) == len(set(chunks)) == RawChunk.objects.filter(case=clean).count()
    # The work files of both cases, and of both claims of the killed one, leave the bucket: the chord's
    # last task removes its own after publishing, the sweeper those of the killed claim.
    wait_for(
        "no work file of either case left in the bucket",
        lambda: not s3.work_keys(case_id) and not s3.work_keys(clean.pk),
        timeout_s=READY_AFTER_KILL_S,
        every_s=0.5,
    )

    s3.assert_nothing_left_locally(live=["web", "worker-2", "beat"])
