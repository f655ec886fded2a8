"""Every write Casebook makes: create a case from an upload, ingest it, re-analyze it.

Ingest is idempotent: a worker claims a case with a conditional update (QUEUED -> PARSING) and stops
when another worker has it; the derived rows of a case are replaced together in one transaction, so
running it twice equals running it once. The original upload is never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import DatabaseError, InterfaceError, OperationalError, transaction
from django.utils import timezone
from django.utils.text import get_valid_filename

from analyzer import engine
from analyzer.series import aggregate_series, search_terms
from analyzer.timeline import SAMPLE_LINES, Timeline
from parsers.archive import BundleError, Limits
from parsers.base import release_memory
from parsers.bundle import Bundle, read_bundle
from parsers.rawtext import TextChunk
from web import bulk, charts
from web.models import (
    FINAL_STATUSES,
    Case,
    CaseStatus,
    Finding,
    NotUsedMember,
    RawChunk,
    RuleResult,
    SampleIndex,
    Series,
    Source,
    Upload,
)

log = logging.getLogger(__name__)

#: What the ingest keeps of each parsed piece, applied where the piece was parsed (parsers/pieces.py).
PIECE_REDUCER = "analyzer.timeline:reduce_piece"
#: Warnings kept per source in the database (the count is kept whole): enough to see the pattern.
MAX_WARNINGS_PER_SOURCE = 200
#: Database errors worth a retry of the whole task: the server or the connection went away.
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError)


class CaseStateError(Exception):
    """The case is not in a state that allows this action (e.g. re-analyze while parsing)."""


def _hash_and_size(fh: File) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    for chunk in fh.chunks():
        digest.update(chunk)
        size += len(chunk)
    fh.seek(0)
    return digest.hexdigest(), size


@transaction.atomic
def case_create(*, user, file: File, original_name: str, title: str = "", enqueue: bool = True) -> Case:
    """Create a case from an uploaded bundle, keep the original in storage, and queue its ingest.

    ``file``: a Django ``File`` (an ``UploadedFile`` from a form, or ``File(open(path, 'rb'))``).
    Raises ``ValidationError`` for an empty or too large upload. With ``enqueue`` the ingest task is
    sent to the worker after the transaction commits.
    """
    sha256, size = _hash_and_size(file)
    if size == 0:
        raise ValidationError("The bundle is empty.")
    if size > settings.CASEBOOK_MAX_UPLOAD_BYTES:
        raise ValidationError(
            f"The bundle is {size:,} bytes; the limit is {settings.CASEBOOK_MAX_UPLOAD_BYTES:,}."
        )
    safe = get_valid_filename(os.path.basename(original_name or "bundle"))[:120] or "bundle"
    case = Case.objects.create(
        title=title.strip()[:200], created_by=user if user and user.is_authenticated else None
    )
    upload = Upload(case=case, original_name=(original_name or "bundle")[:255], size=size, sha256=sha256)
    upload.file.save(safe, file, save=False)
    upload.save()
    if enqueue:
        _enqueue(case.pk)
    return case


def _enqueue(case_id: int) -> None:
    from web.tasks import case_ingest_task

    transaction.on_commit(lambda: case_ingest_task.delay(case_id))


@transaction.atomic
def case_reanalyze(*, case_id: int, enqueue: bool = True) -> Case:
    """Queue a ready or failed case for a fresh ingest from its kept original (after an upgrade).

    Raises ``CaseStateError`` while the case is queued or being processed.
    """
    case = Case.objects.select_for_update().get(pk=case_id)
    if case.status not in FINAL_STATUSES:
        raise CaseStateError(f"case {case_id} is {case.status}; it can be re-analyzed once ready or failed")
    case.status, case.progress, case.failure_reason, case.status_detail = CaseStatus.QUEUED, 0, "", ""
    case.save(update_fields=["status", "progress", "failure_reason", "status_detail", "updated_at"])
    if enqueue:
        _enqueue(case.pk)
    return case


def _set(case_id: int, **fields: object) -> None:
    Case.objects.filter(pk=case_id).update(updated_at=timezone.now(), **fields)


@contextlib.contextmanager
def _local_copy(upload: Upload) -> Iterator[Path]:
    """A local path to the kept bundle: the file itself on local storage, else a temporary copy."""
    try:
        yield Path(upload.file.path)
        return
    except NotImplementedError:
        pass
    with tempfile.NamedTemporaryFile(prefix="casebook-", suffix=".bundle") as tmp:
        with upload.file.open("rb") as src:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                tmp.write(chunk)
        tmp.flush()
        yield Path(tmp.name)


class _DetailWriter:
    """Writes the text of every parsed member, as the compressed chunks of whole lines the parse
    hands over (``read_bundle``'s ``keep_text``), to ``RawChunk`` rows tagged with the ingest's
    generation; ``discard`` removes them again."""

    def __init__(self, case_id: int, generation: int) -> None:
        self.case_id = case_id
        self.generation = generation

    def keep(self, member: str, chunks: tuple[TextChunk, ...]) -> None:
        if chunks:
            bulk.copy_raw_chunks(self.case_id, self.generation, member=member, chunks=chunks)

    def discard(self) -> None:
        RawChunk.objects.filter(case_id=self.case_id, generation=self.generation).delete()


def case_ingest(*, case_id: int) -> None:
    """Parse, analyze and store a queued case; the case ends READY or FAILED with a reason.

    A case another worker already claimed is left alone. Transient database errors are re-raised
    (the task retries them) after putting the case back in the queue.
    """
    if not Case.objects.filter(pk=case_id, status=CaseStatus.QUEUED).update(
        status=CaseStatus.PARSING, progress=1, status_detail="", failure_reason="", updated_at=timezone.now()
    ):
        log.info("case %s is not queued; another worker has it or it is done", case_id)
        return
    case = Case.objects.select_related("upload").get(pk=case_id)
    detail = _DetailWriter(case_id, case.generation + 1)
    try:
        detail.discard()  # rows a crashed run of this generation may have left
        bundle = _parse(case, keep_text=detail.keep)
        release_memory()
        _set(case_id, status=CaseStatus.ANALYZING, progress=80, status_detail="running the rules")
        timeline = Timeline.from_sources(
            bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
        )
        outcome = engine.run(timeline)
        with transaction.atomic():
            _replace_derived(case, bundle, timeline, outcome, detail.generation)
    except BundleError as exc:
        _fail(case_id, f"The bundle could not be read: {exc}", detail)
    except TRANSIENT_DB_ERRORS:
        with contextlib.suppress(DatabaseError):
            _set(case_id, status=CaseStatus.QUEUED, progress=0, status_detail="waiting for the database")
        raise
    except Exception as exc:  # noqa: BLE001 - any failure must leave a readable FAILED case
        log.exception("ingest of case %s failed", case_id)
        _fail(case_id, f"Internal error while processing the bundle ({type(exc).__name__}: {exc}).", detail)


def _fail(case_id: int, reason: str, detail: _DetailWriter | None = None) -> None:
    if detail is not None:
        with contextlib.suppress(DatabaseError):
            detail.discard()
    _set(case_id, status=CaseStatus.FAILED, failure_reason=reason[:2000] or "unknown error", status_detail="")


def _parse(case: Case, *, keep_text: Callable[[str, tuple[TextChunk, ...]], None]) -> Bundle:
    limits = Limits(
        max_members=settings.CASEBOOK_MAX_MEMBERS,
        max_total_bytes=settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES,
        max_ratio=settings.CASEBOOK_MAX_RATIO,
    )
    seen = [0]

    def progress(member: str) -> None:
        seen[0] += 1
        _set(case.pk, progress=min(75, 2 + seen[0]), status_detail=f"parsing {member[:250]}")

    with _local_copy(case.upload) as path:
        return read_bundle(
            path,
            display_name=case.upload.original_name,
            limits=limits,
            progress=progress,
            reduce=PIECE_REDUCER,
            keep_text=keep_text,
            processes=settings.CASEBOOK_PARSE_PROCESSES,
        )


def _replace_derived(
    case: Case, bundle: Bundle, timeline: Timeline, outcome: engine.Outcome, generation: int
) -> None:
    """Replace every row derived from the bundle (inside the caller's transaction): the detail rows
    (raw chunks) of ``generation`` become current, those of other generations go."""
    for model in (Source, NotUsedMember, Series, SampleIndex, Finding, RuleResult):
        model.objects.filter(case=case).delete()
    RawChunk.objects.filter(case=case).exclude(generation=generation).delete()
    Source.objects.bulk_create(
        Source(
            case=case,
            member=s.member[:500],
            format=s.format,
            samples=s.samples,
            start=s.start,
            end=s.end,
            clock=str(s.clock),
            variant=str(s.meta.get("variant", ""))[:200],
            meta=_jsonable_meta(s.meta),
            warnings=[w.as_dict() for w in s.warnings[:MAX_WARNINGS_PER_SOURCE]],
            warning_count=len(s.warnings),
        )
        for s in bundle.sources
    )
    NotUsedMember.objects.bulk_create(
        NotUsedMember(case=case, member=n.member[:500], reason=n.reason) for n in bundle.not_used
    )
    bulk.write_series(case.pk, aggregate_series(timeline))
    for s in bundle.sources:
        if s.samples:
            bulk.copy_sample_index(
                case.pk, s.frames.get(SAMPLE_LINES, s.main), member=s.member, format=s.format
            )
    Finding.objects.bulk_create(
        Finding(
            case=case,
            position=i,
            key=f.key,
            severity=str(f.severity),
            title=f.title,
            summary=f.explanation,
            windows=[[_iso_utc(w.start), _iso_utc(w.end)] for w in f.windows],
            evidence=[
                {
                    "label": e.label,
                    "value": e.value,
                    "unit": e.unit,
                    "series": e.series,
                    "member": e.member,
                    "lines": list(e.lines) if e.lines else None,
                }
                for e in f.evidence
            ],
            recommendation=f.recommendation,
            caveats=list(f.caveats),
            sources=list(f.sources),
            confidence=f.confidence,
            disproof=f.disproof,
            related=list(f.related),
            rule_version=f.rule_version,
        )
        for i, f in enumerate(outcome.findings)
    )
    RuleResult.objects.bulk_create(
        [
            RuleResult(case=case, key=n.key, outcome=RuleResult.Outcome.NOT_EVALUATED, detail=n.reason)
            for n in outcome.not_evaluated
        ]
        + [
            RuleResult(case=case, key=f.key, outcome=RuleResult.Outcome.FAILED, detail=f.error)
            for f in outcome.failed
        ]
    )
    window = bundle.window
    timed = [s for s in bundle.sources if s.samples]
    case.host = bundle.host or ""
    case.kernel = bundle.kernel or ""
    case.ncpu = bundle.ncpu
    case.layout = bundle.layout
    case.window_start, case.window_end = window if window else (None, None)
    case.utc_offset_s = bundle.utc_offset_s
    case.utc_offset_origin = bundle.utc_offset_origin or ""
    case.warnings = list(bundle.warnings)
    case.rule_versions = outcome.versions
    case.generation = generation
    case.ingested_at = timezone.now()
    case.charts_overview = charts.timeline_charts(case=case)
    case.search_terms = "\n".join(search_terms(timeline))
    case.progress = 100
    case.status_detail = ""
    if timed:
        case.status, case.failure_reason = CaseStatus.READY, ""
    else:
        case.status = CaseStatus.FAILED
        case.failure_reason = (
            f"No supported capture was found in the bundle ({bundle.members_seen} member(s) looked at; "
            "see 'Not used' for the reason of each)."
        )
    case.save()


def _iso_utc(ts: pd.Timestamp) -> str:
    """ISO 8601 in UTC with microseconds and ``Z``, as every time in the report and the pages."""
    return ts.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _jsonable_meta(meta: dict[str, object]) -> dict[str, object]:
    """Meta values the database can store as JSON (variables dicts kept; frames and the like dropped)."""
    out: dict[str, object] = {}
    for key, value in meta.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
        elif isinstance(value, list | tuple):
            out[key] = [v if isinstance(v, str | int | float | bool) else str(v) for v in list(value)[:200]]
        elif isinstance(value, dict):
            out[key] = {str(k): str(v) for k, v in list(value.items())[:5000]}
        else:
            out[key] = str(value)
    return out
