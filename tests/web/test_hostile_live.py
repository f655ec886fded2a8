"""The issue "One hostile upload never takes the workers", on a running instance: a real gunicorn and a
real worker of two processes (``scripts/start web`` and ``worker``) on the test database.

- Both hostile archives of the issue, at their real sizes (``tests/hostile.py``: a 17 KB ``.tar.zst``
  whose GNU long-name header declares 512 MiB; a 1 MB ``.tar.zst`` of 32 GiB of zeros in a member no
  parser reads), uploaded through the API together with a good bundle: each hostile case ends FAILED
  within a minute with a reason that says what stopped it, the good one is ready, and no process of the
  worker (the Celery processes and their parse processes) ever holds 1 GiB, nor all of them together
  (the figures measured: ``var/test-artifacts/hostile-uploads.json``).
- The poison-pill rule: a case whose worker is killed (``kill -9``) twice while ingesting it is FAILED
  with the reason and the member it was reading, and is never claimed a third time.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.core.files import File

from tests.hostile import long_name_bomb, zeros_bomb
from tests.servers import CasebookProcesses, live_group_members, wait_for
from tests.web.conftest import EXAMPLE_BUNDLE, processes_on_test_db
from web.cases import services
from web.models import Case, CaseStatus

#: The issue's bound: each hostile upload ends within a minute of its upload ...
END_WITHIN_S = 60
#: ... and the worker stays under 1 GiB.
WORKER_BYTES = 1 << 30
#: Where the measured figures are written (``hostile-uploads.json``), as the browser tests keep theirs.
ARTIFACTS = Path(
    os.environ.get("CASEBOOK_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts")
)
#: How often the worker's memory is read.
SAMPLE_EVERY_S = 0.1


def _status_kib(pid: int, field: str) -> int:
    """A ``/proc/<pid>/status`` field in KiB (0 for a process that ended meanwhile)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class _WorkerMemory:
    """Samples the memory of every process of a worker's process group (its Celery processes and their
    parse processes) every ``SAMPLE_EVERY_S`` s: the largest peak of one process (``VmHWM``) and the
    largest sum of their resident sizes (``VmRSS``) seen."""

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self.process_peak_bytes = 0
        self.tree_peak_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            pids = live_group_members(self.pgid)
            self.tree_peak_bytes = max(self.tree_peak_bytes, sum(_status_kib(p, "VmRSS") for p in pids) << 10)
            self.process_peak_bytes = max(
                [self.process_peak_bytes, *((_status_kib(p, "VmHWM") << 10) for p in pids)]
            )

    def __enter__(self) -> _WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    return {
        "long name": long_name_bomb(folder / "long-name-512m.tar.zst", declared=512 << 20),
        "zeros": zeros_bomb(folder / "zeros-32g.tar.zst", zeros=32 << 30),
    }


@pytest.fixture
def stack(transactional_db, tmp_path: Path, settings, redis_client) -> Iterator[CasebookProcesses]:
    """gunicorn and a worker of two processes, as the issue's host ran them."""
    with processes_on_test_db(tmp_path, settings, redis_client, CASEBOOK_WORKER_CONCURRENCY="2") as stack:
        yield stack


def _ended(base: str, headers: dict[str, str], case_id: int) -> bool:
    answer = requests.get(f"{base}/api/cases/{case_id}/status/", headers=headers, timeout=30).json()
    return answer["status"] in ("ready", "failed")


def test_two_hostile_uploads_end_within_a_minute_under_1_gib_and_the_good_case_is_ready(
    stack: CasebookProcesses, hostile: dict[str, Path]
) -> None:
    assert hostile["long name"].stat().st_size < 32 << 10 and hostile["zeros"].stat().st_size < 2 << 20
    stack.run("migrate")
    stack.start_web()
    worker = stack.start("worker")
    base, headers = stack.base_url, stack.api_headers()
    uploaded: dict[str, tuple[int, float]] = {}
    with _WorkerMemory(worker.pgid) as memory:
        for name, path in (*hostile.items(), ("good", EXAMPLE_BUNDLE)):
            answer = stack.upload(path, name)
            assert answer.status_code == 201, answer.text
            uploaded[name] = (answer.json()["id"], time.monotonic())
        ended: dict[str, float] = {}

        def all_ended() -> bool:
            for name, (case_id, at) in uploaded.items():
                if name not in ended and _ended(base, headers, case_id):
                    ended[name] = time.monotonic() - at
            return len(ended) == len(uploaded)

        wait_for("every case ended", all_ended, timeout_s=300, every_s=0.5)
    cases = {name: Case.objects.get(pk=case_id) for name, (case_id, _) in uploaded.items()}
    figures = {
        "ended_after_s": {name: round(seconds, 1) for name, seconds in ended.items()},
        "worker_process_peak_mib": round(memory.process_peak_bytes / 2**20),
        "worker_tree_peak_mib": round(memory.tree_peak_bytes / 2**20),
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)  # the figures, for whoever reads the run
    (ARTIFACTS / "hostile-uploads.json").write_text(json.dumps(figures, indent=2) + "\n")
    assert cases["good"].status == CaseStatus.READY, cases["good"].failure_reason
    for name in hostile:
        assert cases[name].status == CaseStatus.FAILED, name
        assert ended[name] < END_WITHIN_S, (name, ended[name])
        assert cases[name].claims == 1, (name, cases[name].claims)  # claimed once: never taken again
    assert (
        "Reading stopped: the entry at byte 0 of the archive (its GNU long-name header declares 536,870,912 "
        in (cases["long name"].failure_reason)
    )
    assert (
        "over the 65,536-byte cap for a header): uncompressed data passed"
        in cases["long name"].failure_reason
    )
    assert "Reading stopped: pt/core.bin: uncompressed data passed " in cases["zeros"].failure_reason
    assert "(compression ratio limit)" in cases["zeros"].failure_reason
    assert memory.process_peak_bytes < WORKER_BYTES
    assert memory.tree_peak_bytes < WORKER_BYTES


def test_a_case_whose_worker_is_killed_twice_fails_with_the_reason_and_is_not_claimed_again(
    stack: CasebookProcesses, busy_bundle: Path
) -> None:
    with busy_bundle.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=busy_bundle.name)
    stack.start("beat")
    for attempt in (1, 2):
        worker = stack.start("worker", f"worker-{attempt}")
        wait_for(
            f"claim {attempt} parsing",
            lambda attempt=attempt: Case.objects.filter(
                pk=case.pk, status=CaseStatus.PARSING, claims=attempt, progress__gte=3
            ).exists(),
            timeout_s=120,
            every_s=0.1,
        )
        worker.kill9()  # as the kernel's OOM killer would
    third = stack.start("worker", "worker-3")
    wait_for(
        "the case failed",
        lambda: Case.objects.filter(pk=case.pk, status=CaseStatus.FAILED).exists(),
        timeout_s=120,
        every_s=0.5,
    )
    case.refresh_from_db()
    assert (case.claims, case.requeues) == (2, 1)
    assert case.failure_reason.startswith("The worker died (it stopped reporting, the last time at ")
    assert ") while parsing " in case.failure_reason and ", twice: this bundle is not tried again" in (
        case.failure_reason
    )
    # the third worker takes other cases: one uploaded now is ready, and the failed one is left alone
    with EXAMPLE_BUNDLE.open("rb") as fh:
        good = services.case_create(user=None, file=File(fh), original_name=EXAMPLE_BUNDLE.name)
    wait_for(
        "the good case ready",
        lambda: Case.objects.filter(pk=good.pk, status=CaseStatus.READY).exists(),
        timeout_s=120,
        every_s=0.5,
    )
    assert third.popen.poll() is None
    case.refresh_from_db()
    assert (case.status, case.claims) == (CaseStatus.FAILED, 2)
