"""The fan-out's work files hold data, never code: a plan or an outcome replaced in the storage by a
pickle that would create a file when unpickled, or cut short, fails its case with a reason that names
the file, and the file the pickle would create does not appear (``parsers/ingest/workfile.py``).

The parts run in this process (``web.ingest.fanout.run_part`` / ``run_analyze``, as the Celery tasks call
them) on a case claimed the way the ingest task claims it, with the storage in a temporary folder.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from pathlib import Path

import pytest
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from analyzer.timeline.timeline import reduce_piece
from parsers.ingest import workfile
from parsers.ingest.fanout import parse_part, plan_bundle
from parsers.ingest.pieces import Work
from tests.web.conftest import EXAMPLE_BUNDLE
from web.cases import services
from web.ingest import fanout, pipeline
from web.ingest.claims import claim_case, new_token
from web.models import Case, CaseStatus


class _CreatesAFile:
    """Unpickled, runs ``os.system('touch PATH')``: what a writer of the bucket would slip in."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # noqa: ANN204 - the pickle protocol
        return (os.system, (f"touch {self.path}",))


@pytest.fixture
def claimed(db, tmp_path: Path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    with EXAMPLE_BUNDLE.open("rb") as fh:
        case = services.case_create(
            user=None, file=File(fh), original_name=EXAMPLE_BUNDLE.name, enqueue=False
        )
    claim = claim_case(case_id=case.pk, token=new_token("test-task"))
    assert claim is not None
    return case, claim


def _store_plan(claim) -> object:  # noqa: ANN001
    """The case's real plan and pieces in the storage, as ``dispatch`` stores them."""
    numbers = iter(range(10**6))
    case = Case.objects.select_related("upload").get(pk=claim.case_id)
    with pipeline.local_copy(case.upload) as path:
        plan = plan_bundle(
            path, put=lambda data: fanout._put(f"{fanout._prefix(claim)}/piece-{next(numbers):06d}.zst", data)
        )
    fanout._put_work(fanout._plan_name(claim), plan)
    return plan


def _replace(name: str, data: bytes) -> None:
    if default_storage.exists(name):
        default_storage.delete(name)
    assert default_storage.save(name, ContentFile(data)) == name


def _failed(case: Case) -> str:
    case.refresh_from_db()
    assert case.status == CaseStatus.FAILED
    return case.failure_reason


def test_a_pickle_in_place_of_the_plan_fails_the_part_and_runs_nothing(claimed, tmp_path: Path) -> None:
    case, claim = claimed
    marker = tmp_path / "unpickled"
    payload = pickle.dumps(_CreatesAFile(marker))
    assert b"system" in payload
    name = fanout._plan_name(claim)
    _replace(name, payload)

    fanout.run_part(dataclasses.asdict(claim), 0)

    reason = _failed(case)
    assert name in reason and "not a Casebook work file" in reason and "nothing in it was run" in reason
    assert not marker.exists()
    # The same bytes behind a forged header are refused as well: the JSON reader never unpickles.
    _replace(name, workfile.HEADER + payload)
    with pytest.raises(workfile.WorkFileError, match="damaged compressed data"):
        fanout._plan(claim)
    assert not marker.exists()
    pickle.loads(payload)  # noqa: S301 - the payload is live: unpickled, it does create the file
    assert marker.exists()


def test_a_truncated_outcome_fails_the_analysis_with_its_name(claimed) -> None:
    case, claim = claimed
    plan = _store_plan(claim)
    work = Work(reduce=reduce_piece)
    for part in plan.parts:
        fanout._put_work(
            fanout._outcome_name(claim, part.index), parse_part(part, get=fanout._get, work=work)
        )
    name = fanout._outcome_name(claim, plan.parts[-1].index)
    with default_storage.open(name, "rb") as fh:
        whole = fh.read()
    _replace(name, whole[: len(whole) // 2])

    fanout.run_analyze(dataclasses.asdict(claim))

    reason = _failed(case)
    assert name in reason and "truncated" in reason


def test_a_plan_of_another_version_is_refused_by_name(claimed) -> None:
    case, claim = claimed
    _store_plan(claim)
    name = fanout._plan_name(claim)
    with default_storage.open(name, "rb") as fh:
        data = fh.read()
    _replace(name, data.replace(workfile.HEADER, b"casebook-work 0 zstd\n", 1))

    fanout.run_part(dataclasses.asdict(claim), 0)

    reason = _failed(case)
    assert name in reason and "another version" in reason


@pytest.mark.parametrize(
    "doc",
    [
        b'{"$obj":["Popen",{"args":"touch x"}]}',  # a class outside the closed list
        b'{"$exc":["SystemExit",[1]]}',
        b'{"$df":{"columns":{"npy":0},"data":[],"index":{"range":[0,0,1,null]},"attrs":{"$d":[]}}}',  # no array 0
        b'{"a": 1}',  # untagged object
    ],
)
def test_a_tampered_document_is_refused(doc: bytes) -> None:
    import zstandard

    body = workfile._LENGTH.pack(len(doc)) + doc
    data = workfile.HEADER + zstandard.ZstdCompressor().compress(body)
    with pytest.raises(workfile.WorkFileError, match="^work file plan.work: "):
        workfile.loads(data, name="plan.work")
