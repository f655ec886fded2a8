"""The fan-out for real: a bundle's parts taken by a Celery worker subprocess (``scripts/start worker``
with ``CASEBOOK_INGEST_FANOUT=1``) on the real Redis, joined by a chord, give the case the single-task
ingest gives: the same sources, findings and series, under one claim, each text row written once; and
a fan-out of many short parts that lasts longer than ``CASEBOOK_STALE_AFTER`` is not taken for a dead
worker (every task stamps the case as it starts)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from django.core.files import File

from parsers.ingest import cutting
from tests.bundles import generated_collection
from tests.servers import CasebookProcesses, wait_for
from tests.web.conftest import (
    FANOUT_ENV,
    case_findings,
    case_series,
    case_sources,
    no_work_folder,
    processes_on_test_db,
)
from web.cases import services
from web.ingest import tasks
from web.models import Case, CaseStatus, RawChunk

ROOT = Path(__file__).resolve().parents[2]
READY_WITHIN_S = 240


@pytest.fixture(scope="module")
def two_minutes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 2-minute collection (64 CPUs, 2,000 threads, 1,000 sessions; 61 MB of text):
    its processlist and ps members are several pieces of 8 MiB each."""
    out = tmp_path_factory.mktemp("bundle") / "collection-2m.tar.gz"
    return generated_collection(out, 2)


def _wait_done(case: Case) -> None:
    wait_for(
        "the fanned-out case done",
        lambda: Case.objects.filter(pk=case.pk, status__in=(CaseStatus.READY, CaseStatus.FAILED)).exists(),
        timeout_s=READY_WITHIN_S,
        every_s=0.5,
    )
    case.refresh_from_db()


def test_a_bundle_through_the_chord_gives_the_case_of_the_single_task(
    fanout_stack: CasebookProcesses, two_minutes: Path, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reference ingest runs in this process, the fan-out in fresh workers: both cut members into
    # pieces of the same size (a process past SMALL_PIECES_ABOVE_BYTES resident cuts smaller ones,
    # and so writes more text rows), so that their text rows can be counted against each other.
    monkeypatch.setattr(cutting, "SMALL_PIECES_ABOVE_BYTES", 1 << 62)
    fanout_stack.start("worker", "worker-1")
    fanout_stack.start("worker", "worker-2")
    with two_minutes.open("rb") as fh:
        fanned = services.case_create(user=None, file=File(fh), original_name=two_minutes.name)
    with two_minutes.open("rb") as fh:
        single = services.case_create(user=None, file=File(fh), original_name=two_minutes.name, enqueue=False)
    settings.CASEBOOK_INGEST_FANOUT = False
    tasks.case_ingest(case_id=single.pk)
    _wait_done(fanned)
    single.refresh_from_db()
    assert fanned.status == single.status == CaseStatus.READY, fanned.failure_reason

    logs = "".join((fanout_stack.workdir / f"worker-{n}.log").read_text() for n in (1, 2))
    assert logs.count('"task": "casebook.ingest_part"') >= 6  # the parts ran as tasks of their own
    assert '"task": "casebook.ingest_analyze"' in logs

    assert case_sources(fanned) == case_sources(single)
    assert case_findings(fanned) == case_findings(single) and case_findings(single)
    assert case_series(fanned) == case_series(single) and len(case_series(single)) > 50
    for field in ("host", "ncpu", "window_start", "window_end", "utc_offset_s", "warnings", "search_terms"):
        assert getattr(fanned, field) == getattr(single, field), field
    # one claim across the fan-out; every text row once, all of its generation
    assert fanned.claims == fanned.generation == 1 and fanned.claim == "" and fanned.requeues == 0
    rows = list(
        RawChunk.objects.filter(case=fanned).values_list("member", "line_start", "line_end", "generation")
    )
    assert len(rows) == len(set(rows)) == RawChunk.objects.filter(case=single).count()
    assert {r[3] for r in rows} == {1}
    # the work files go (the chord's last task removes them once the case is published)
    wait_for("no work folder of the case left", lambda: no_work_folder(fanned.pk), timeout_s=60, every_s=0.2)


def _log_time(line: dict) -> datetime:
    return datetime.fromisoformat(line["time"])  # ISO 8601 with its UTC offset


def test_every_task_of_a_fanout_stamps_the_case_so_a_long_one_is_not_taken_for_a_dead_worker(
    transactional_db, tmp_path: Path, settings, redis_client, busy_bundle: Path
) -> None:
    """Parts shorter than a heartbeat interval, a whole fan-out longer than ``CASEBOOK_STALE_AFTER``
    (22 parts one after the other on one worker process: about 10 s, against 6): each task of the
    chord stamps the case when it starts, so the sweeper never takes the healthy ingest for a dead one
    (it used to: only a task longer than an interval ever stamped, and such a fan-out was re-queued,
    then failed after ``CASEBOOK_MAX_REQUEUES``)."""
    with processes_on_test_db(
        tmp_path,
        settings,
        redis_client,
        **FANOUT_ENV,
        CASEBOOK_HEARTBEAT_INTERVAL="2",
        CASEBOOK_STALE_AFTER="6",
        CASEBOOK_SWEEP_INTERVAL="1",
    ) as stack:
        stack.start("worker")  # one task at a time: the parts run one after the other
        stack.start("beat")
        with busy_bundle.open("rb") as fh:
            case = services.case_create(user=None, file=File(fh), original_name=busy_bundle.name)
        wait_for(
            "the case done",
            lambda: Case.objects.filter(
                pk=case.pk, status__in=(CaseStatus.READY, CaseStatus.FAILED)
            ).exists(),
            timeout_s=90,
            every_s=0.5,
        )
        case.refresh_from_db()
        lines = [
            json.loads(x) for x in (stack.workdir / "worker.log").read_text().splitlines() if x[:1] == "{"
        ]
    assert case.status == CaseStatus.READY, case.failure_reason
    assert case.requeues == 0 and case.claims == 1, case.status_detail
    # The last stamp is the analysis's start, not the claim's (which is all there was before).
    dispatched = [line for line in lines if "part(s) sent to the workers" in line["message"]]
    assert len(dispatched) == 1 and case.heartbeat_at > _log_time(dispatched[0])


def test_a_case_of_added_bundles_fans_out_into_the_case_of_the_single_task(
    fanout_stack: CasebookProcesses, tmp_path: Path, settings
) -> None:
    """A two-host bundle and another host's bundle added to the case: planned as one, parsed by the
    worker in parts, the same hosts, sources and findings as the single task."""
    from tests.multihost import host_bundle, hosts_tarball
    from web.models import Host

    two, third = (
        hosts_tarball(tmp_path / "two.tgz", ["db-a", "db-b"]),
        host_bundle(tmp_path / "c.tgz", "db-c"),
    )
    fanout_stack.start("worker", "worker-1")
    made = []
    for enqueue in (False, True):
        with two.open("rb") as fh:
            case = services.case_create(user=None, file=File(fh), original_name=two.name, enqueue=False)
        with third.open("rb") as fh:
            services.case_add_bundle(
                case_id=case.pk, user=None, file=File(fh), original_name="c.tgz", enqueue=enqueue
            )
        made.append(case)
    single, fanned = made
    settings.CASEBOOK_INGEST_FANOUT = False
    tasks.case_ingest(case_id=single.pk)
    _wait_done(fanned)
    assert fanned.status == CaseStatus.READY, fanned.failure_reason
    hosts = [
        list(Host.objects.filter(case=c).values_list("name", "ncpu", "name_origin")) for c in (fanned, single)
    ]
    assert hosts[0] == hosts[1] and [h[0] for h in hosts[0]] == ["db-a", "db-b", "db-c"]
    assert case_sources(fanned) == case_sources(single)
    assert case_findings(fanned) == case_findings(single)
    assert '"task": "casebook.ingest_part"' in (fanout_stack.workdir / "worker-1.log").read_text()
