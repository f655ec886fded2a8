"""Fan-out of one ingest over Celery: the parts of a bundle's parse are tasks that any worker of any
host takes, and a chord joins them for the analysis (``CASEBOOK_INGEST_FANOUT``).

The parse work itself is ``parsers/ingest/fanout.py``; this module keeps what crosses between
workers in Django's storage (``default_storage``: the media folder here, S3 through django-storages
in production), under ``ingest-work/case-<id>/gen-<generation>/``:

- ``dispatch`` (inside the claimed ingest task) walks the upload once (read through the storage API,
  ``pipeline.local_copy``), stores every piece (Zstandard) and the plan, and sends
  ``chord([casebook.ingest_part(i) for each part], casebook.ingest_analyze)``;
- ``run_part`` (any worker) parses one part, writes its text chunks (``RawChunk``, under the claim's
  generation) and stores its outcome;
- ``run_analyze`` (the chord's body, any worker) assembles the bundle from the plan and the
  outcomes, then runs the rules and publishes, as the single-task ingest does; the work files go.

One claim covers the whole fan-out (web/ingest/claims.py): every task gets the ``Claim`` (case, token,
generation), runs inside its own ``Heartbeat`` and writes only while the claim holds. A task whose
claim was taken away (the sweeper re-queued the case, a re-analyze) does nothing; a part run twice
(a redelivered message) replaces its own text rows.

Plans and outcomes are work files (``parsers/ingest/workfile.py``: a versioned header, then JSON and
NumPy ``.npy`` arrays read with ``allow_pickle=False``), never pickles: whoever can write the bucket
can spoil an ingest, but cannot run code in a worker. A work file that is not whole (truncated,
tampered with, a pickle) fails its case with ``WorkFileError``, which names the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
from collections.abc import Callable

import zstandard
from celery import chord, shared_task
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from parsers.ingest import workfile
from parsers.ingest.fanout import Part, Plan, assemble, parse_part, plan_bundle
from parsers.ingest.pieces import Done
from parsers.rawtext import TextChunk
from web.faults import INGEST_RETRIES
from web.ingest import pipeline
from web.ingest import work as piece_work
from web.ingest.claims import Claim, holds_claim
from web.models import Case, RawChunk
from web.storage import case_work_dir, remove_empty_folder, remove_tree

log = logging.getLogger(__name__)

#: Zstandard level of stored pieces: fast, and capture text shrinks 10-20x.
PIECE_LEVEL = 1


def _prefix(claim: Claim) -> str:
    return f"{case_work_dir(claim.case_id)}/gen-{claim.generation}"


def _save(name: str, data: bytes) -> str:
    """Store ``data`` under ``name`` (replacing a file of that name); the name stored."""
    if default_storage.exists(name):
        default_storage.delete(name)
    return default_storage.save(name, ContentFile(data))


def _read(name: str) -> bytes:
    with default_storage.open(name, "rb") as fh:
        return fh.read()


def _put(name: str, data: bytes) -> str:
    """Store a piece's capture text compressed under ``name``; the name stored."""
    return _save(name, zstandard.ZstdCompressor(level=PIECE_LEVEL).compress(data))


def _get(name: str) -> bytes:
    """A piece's capture text, as ``_put`` stored it."""
    return zstandard.ZstdDecompressor().decompress(_read(name))


def _put_work(name: str, value: object) -> str:
    """Store a plan or a part's outcomes as a work file (``workfile.dumps``)."""
    return _save(name, workfile.dumps(value))


def _get_work(name: str) -> object:
    """A work file's value; ``workfile.WorkFileError`` (naming the file) when it is not whole."""
    return workfile.loads(_read(name), name=name)


def _claim_args(claim: Claim) -> dict[str, object]:
    return dataclasses.asdict(claim)


def dispatch(
    claim: Claim,
    case: Case,
    *,
    report: Callable[..., None],
    keep_text: Callable[[str, tuple[TextChunk, ...]], None],
) -> int:
    """Plan the parse of ``case``'s upload, store its pieces and plan, and send the chord of its parts.
    Runs under ``claim`` (inside the ingest task's heartbeat); returns the number of parts sent."""
    remove_tree(case_work_dir(claim.case_id))  # the work of earlier claims, dead by now
    prefix = _prefix(claim)
    numbers = itertools.count()

    def put(data: bytes) -> str:
        return _put(f"{prefix}/piece-{next(numbers):06d}.zst", data)

    with contextlib.ExitStack() as stack:
        path = stack.enter_context(pipeline.local_copy(case.upload))
        more = [
            (stack.enter_context(pipeline.local_copy(added)), added.original_name)  # type: ignore[arg-type]
            for added in case.added_uploads.all()
        ]
        plan = plan_bundle(
            path,
            more=more,
            put=put,
            display_name=case.upload.original_name,
            limits=piece_work.upload_limits(),
            progress=pipeline.member_progress(report),
            reduce=piece_work.PIECE_REDUCER,
            keep_text=keep_text,
            part_bytes=settings.CASEBOOK_FANOUT_PART_BYTES,
        )
    _put_work(_plan_name(claim), plan)
    report(progress=40, status_detail=f"parsing: {len(plan.parts)} part(s) handed to the workers")
    args = _claim_args(claim)
    body = ingest_analyze_task.s(args)
    if plan.parts:
        chord(ingest_part_task.s(args, part.index) for part in plan.parts)(body)
    else:
        body.delay([])
    log.info(
        "case %s: %s part(s) sent to the workers",
        claim.case_id,
        len(plan.parts),
        extra={"case_id": claim.case_id},
    )
    return len(plan.parts)


def _plan_name(claim: Claim) -> str:
    return f"{_prefix(claim)}/plan.work"


def _plan(claim: Claim) -> Plan:
    plan = _get_work(_plan_name(claim))
    if not isinstance(plan, Plan):
        raise workfile.WorkFileError(_plan_name(claim), f"holds a {type(plan).__name__}, not a plan")
    return plan


def _outcome_name(claim: Claim, index: int) -> str:
    return f"{_prefix(claim)}/outcome-{index:06d}.work"


def _outcomes(claim: Claim, index: int) -> list:
    name = _outcome_name(claim, index)
    outcomes = _get_work(name)
    if not isinstance(outcomes, list) or not all(isinstance(o, (Done, Exception)) for o in outcomes):
        raise workfile.WorkFileError(name, "does not hold a part's outcomes")
    return outcomes


def _first_new_line(part: Part) -> int:
    first = part.pieces[0]
    return first.first_line + first.overlap_lines


def _discard_part_text(claim: Claim, plan: Plan, part: Part) -> None:
    """Text rows an earlier run of this very part wrote (a redelivered message): they are written again."""
    after = [p for p in plan.parts if p.member == part.member and p.index > part.index]
    rows = RawChunk.objects.filter(
        case_id=claim.case_id,
        generation=claim.generation,
        member=part.member[:500],
        line_start__gte=_first_new_line(part),
    )
    if after:
        rows = rows.filter(line_start__lt=_first_new_line(after[0]))
    rows.delete()


def run_part(claim_args: dict[str, object], index: int) -> None:
    """Parse part ``index`` of the claimed case's plan (task ``casebook.ingest_part``)."""
    claim = Claim(**claim_args)  # type: ignore[arg-type]

    def work(beat, detail) -> None:  # noqa: ANN001 - pipeline.run_claimed's callback
        # A message of a claim that is gone (redelivered by Redis after a worker was killed, an hour
        # later, when the sweeper's new claim has long replaced it and removed its work files): stop
        # quietly before reading them, rather than fail on the missing plan with an error in the log.
        beat.check()
        report = pipeline.reporter(claim, beat)
        plan = _plan(claim)
        part = plan.parts[index]
        report(status_detail=f"parsing {part.member[:200]} (part {index + 1} of {len(plan.parts)})")
        _discard_part_text(claim, plan, part)
        outcomes = parse_part(part, get=_get, work=piece_work.ingest_work(), keep_text=detail.keep)
        beat.check()
        _put_work(_outcome_name(claim, index), outcomes)

    pipeline.run_claimed(claim, work)


def run_analyze(claim_args: dict[str, object]) -> None:
    """Assemble the claimed case's bundle from its parts and analyze it (task ``casebook.ingest_analyze``,
    the chord's body); the work files go once the case is no longer this claim's."""
    claim = Claim(**claim_args)  # type: ignore[arg-type]

    def work(beat, detail) -> None:  # noqa: ANN001 - pipeline.run_claimed's callback
        beat.check()  # the chord of a claim that is gone (see run_part): nothing to assemble
        case = Case.objects.select_related("upload").defer("charts_overview").get(pk=claim.case_id)
        plan = _plan(claim)
        outcomes = {}
        for part in plan.parts:
            name = _outcome_name(claim, part.index)
            if default_storage.exists(name):
                outcomes[part.index] = _outcomes(claim, part.index)
        bundle = assemble(plan, outcomes)
        del outcomes, plan
        pipeline.analyze_and_publish(claim, beat, case, bundle)

    pipeline.run_claimed(claim, work)
    if not _still_held(claim):
        remove_tree(_prefix(claim))
        remove_empty_folder(case_work_dir(claim.case_id))  # the case's folder, once empty


def _still_held(claim: Claim) -> bool:
    with transaction.atomic():
        return holds_claim(claim)


@shared_task(name="casebook.ingest_part", ignore_result=False, **INGEST_RETRIES)  # a chord counts its results
def ingest_part_task(claim: dict, index: int) -> None:
    """One part of a fanned-out ingest (this module), under the ingest's claim."""
    run_part(claim, index)


@shared_task(name="casebook.ingest_analyze", ignore_result=True, **INGEST_RETRIES)
def ingest_analyze_task(results: list, claim: dict) -> None:
    """The chord's body: the fanned-out ingest's parts assembled, analyzed and published."""
    run_analyze(claim)
