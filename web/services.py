"""Every write Casebook makes: create a case from an upload, ingest it, re-analyze it.

Ingest is idempotent: a worker claims a case (web/claims.py: QUEUED -> PARSING under a row lock, or
a case whose holder went silent) and stops when another worker has it; while it works a heartbeat
stamps the case, and the derived rows of a case are replaced together in one transaction, written only
while the claim is still its own, so running it twice equals running it once. The original upload is
never touched.

The ingest task is handed to the broker after the case is committed. When the broker cannot be
reached the case stays QUEUED and says so; the sweeper (web/sweeper.py) sends it once it can.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import kombu.exceptions
import pandas as pd
import psycopg
import redis.exceptions
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import DatabaseError, InterfaceError, OperationalError, transaction
from django.utils import timezone
from django.utils.text import get_valid_filename

from analyzer import engine
from analyzer.findings import culprit_json, evidence_json
from analyzer.series import aggregate_series, irq_cpu_rates, top_fingerprints, top_wait_channels
from analyzer.timeline import SAMPLE_LINES, Timeline, reduce_piece
from parsers.base import release_memory, resident_bytes
from parsers.damage import pg_safe
from parsers.ingest.archive import BundleError, Limits
from parsers.ingest.bundle import Bundle, read_bundle
from parsers.ingest.pieces import Work
from parsers.ingest.pool import keep_warm
from parsers.rawtext import TextChunk
from web import bulk, charts
from web.claims import (
    Claim,
    ClaimLost,
    Heartbeat,
    claim_case,
    holds_claim,
    is_stalled,
    new_token,
    update_if_held,
)
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
    SeriesLevel,
    Source,
    Team,
    Upload,
    default_team_id,
)
from web.search import search_document

log = logging.getLogger(__name__)

#: What the ingest keeps of each parsed piece, handed to the pipeline and applied where the piece was
#: parsed (parsers/ingest/pieces.py).
PIECE_REDUCER = reduce_piece
#: Longest fingerprint kept on a case (characters): a GIN index entry must stay under about 2.7 kB.
MAX_FINGERPRINT_CHARS = 1000
#: Tags a case carries at most, and the longest tag (characters).
MAX_TAGS, MAX_TAG_CHARS = 20, 50
#: Warnings kept per source in the database (the count is kept whole): enough to see the pattern.
MAX_WARNINGS_PER_SOURCE = 200
#: Database errors worth a retry of the whole task: the server or the connection went away (Django's
#: wrappers, and psycopg's own from the COPY paths).
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
#: What sending a task raises when the broker cannot be reached (after Celery's publish retries).
BROKER_ERRORS = (kombu.exceptions.OperationalError, redis.exceptions.RedisError, OSError)
#: What a queued case says while its task could not be handed to the broker.
BROKER_DOWN_DETAIL = (
    "The task queue (Redis) cannot be reached right now: the upload is kept, and the case will be "
    "queued automatically as soon as the queue is back."
)


class CaseStateError(Exception):
    """The case is not in a state that allows this action (e.g. re-analyze while parsing)."""


class TransientError(Exception):
    """The database connection was lost during an ingest: the task retries it (web/tasks.py)."""


def is_transient(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is a lost database connection rather than a bad bundle."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, TRANSIENT_DB_ERRORS):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def sha256_of(fh: File) -> str:
    """The SHA-256 (hex) of an uploaded file's bytes, read in chunks; the file is rewound."""
    return _hash_and_size(fh)[0]


def _hash_and_size(fh: File) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    for chunk in fh.chunks():
        digest.update(chunk)
        size += len(chunk)
    fh.seek(0)
    return digest.hexdigest(), size


def team_for_new_case(*, user, team: Team | None = None) -> Team:
    """The team a new case of ``user`` goes to: ``team`` when given (it must be one of the user's),
    else the user's first team by name; without a user (``manage.py analyze``), ``team`` or the
    default team. Raises ``ValidationError`` for a team the user is not in, or a user in no team."""
    if user is None or not user.is_authenticated:
        return team or Team.objects.get(pk=default_team_id())
    mine = Team.objects.filter(members=user)
    if team is not None:
        if not mine.filter(pk=team.pk).exists():
            raise ValidationError("You are not a member of that team.")
        return team
    first = mine.order_by("name").first()
    if first is None:
        raise ValidationError("Your login belongs to no team yet: an administrator adds you to one.")
    return first


@transaction.atomic
def case_create(
    *,
    user,
    file: File,
    original_name: str,
    title: str = "",
    enqueue: bool = True,
    team: Team | None = None,
    sha256: str | None = None,
) -> Case:
    """Create a case from an uploaded bundle, keep the original in storage, and queue its ingest.

    ``file``: a Django ``File`` (an ``UploadedFile`` from a form, or ``File(open(path, 'rb'))``).
    ``team``: the case's team (``team_for_new_case``). ``sha256``: the upload's SHA-256 when the
    caller has it already (``sha256_of``). Raises ``ValidationError`` for an empty or too
    large upload, or a team the user may not use. With ``enqueue`` the ingest task is sent to the
    worker after the transaction commits.
    """
    team = team_for_new_case(user=user, team=team)
    if sha256 is None:
        sha256, size = _hash_and_size(file)
    else:  # already read by the caller (``sha256_of``): a large upload is not read twice
        size = file.size
    if size == 0:
        raise ValidationError("The bundle is empty.")
    if size > settings.CASEBOOK_MAX_UPLOAD_BYTES:
        raise ValidationError(
            f"The bundle is {size:,} bytes; the limit is {settings.CASEBOOK_MAX_UPLOAD_BYTES:,}."
        )
    safe = get_valid_filename(os.path.basename(original_name or "bundle"))[:120] or "bundle"
    case = Case.objects.create(
        title=title.strip()[:200],
        team=team,
        created_by=user if user and user.is_authenticated else None,
        enqueued_at=timezone.now() if enqueue else None,
    )
    upload = Upload(case=case, original_name=(original_name or "bundle")[:255], size=size, sha256=sha256)
    upload.file.save(safe, file, save=False)
    upload.save()
    case_refresh_search(case_id=case.pk)
    if enqueue:
        _enqueue(case.pk)
    return case


def _enqueue(case_id: int) -> None:
    """Send the ingest task once the current transaction commits (the worker must see the case)."""
    transaction.on_commit(lambda: case_send_ingest(case_id=case_id))


def case_send_ingest(*, case_id: int) -> bool:
    """Hand a queued case's ingest task to the broker now; False when the broker cannot be reached.

    On failure the case stays QUEUED with ``enqueued_at`` cleared and a status detail that says it will
    be queued when the broker is back: the sweeper sends it then. Sending twice is harmless (the
    claim lets one execution through).
    """
    from web.tasks import case_ingest_task

    try:
        case_ingest_task.delay(case_id)
    except BROKER_ERRORS as exc:
        log.warning(
            "case %s: the ingest task could not be queued (%s)", case_id, exc, extra={"case_id": case_id}
        )
        Case.objects.filter(pk=case_id, status=CaseStatus.QUEUED).update(
            enqueued_at=None, status_detail=BROKER_DOWN_DETAIL, updated_at=timezone.now()
        )
        return False
    Case.objects.filter(pk=case_id, status=CaseStatus.QUEUED, status_detail=BROKER_DOWN_DETAIL).update(
        status_detail="", updated_at=timezone.now()
    )
    return True


@transaction.atomic
def case_reanalyze(*, case_id: int, enqueue: bool = True) -> Case:
    """Queue a case for a fresh ingest from its kept original (after an upgrade, or to unstick it).

    Allowed when the case is ready or failed, still queued (its task is sent again), or stalled: a
    parsing/analyzing case whose worker stopped reporting (``claims.is_stalled``); that worker's claim
    is revoked, so it writes nothing if it ever wakes up. Raises ``CaseStateError`` while a live
    worker is processing the case.
    """
    case = Case.objects.select_for_update().get(pk=case_id)
    if case.status not in (*FINAL_STATUSES, CaseStatus.QUEUED) and not is_stalled(case):
        raise CaseStateError(
            f"Case {case_id} is being processed ({CaseStatus(case.status).label.lower()}, "
            f"{case.progress} %) and its worker is still reporting; it can be re-analyzed once it is "
            "done, or if its worker stops reporting."
        )
    _discard_unpublished_detail(case)
    case.status, case.progress, case.failure_reason, case.status_detail = CaseStatus.QUEUED, 0, "", ""
    case.claim, case.requeues = "", 0
    case.enqueued_at = timezone.now() if enqueue else None
    case.save(
        update_fields=[
            "status",
            "progress",
            "failure_reason",
            "status_detail",
            "claim",
            "requeues",
            "enqueued_at",
            "updated_at",
        ]
    )
    if enqueue:
        _enqueue(case.pk)
    return case


def _discard_unpublished_detail(case: Case) -> None:
    """Detail rows written by claims that never published (a dead or revoked ingest)."""
    RawChunk.objects.filter(case=case, generation__gt=case.generation).delete()


@contextlib.contextmanager
def local_copy(upload: Upload) -> Iterator[Path]:
    """A local path to the kept bundle, read through Django's storage API: the file itself on a
    storage with local paths (``FileSystemStorage``), else a temporary copy streamed from the storage
    (S3 and the like, where workers on other hosts read the same upload)."""
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
        """Remove this generation's text rows, unless the case has published this generation: then
        they are the case's own rows. A task of a claim that is gone (a fan-out part redelivered by
        Redis after its worker was killed, arriving once the chord of that very claim had completed
        and published) discards its work, and must not take the published text with it."""
        RawChunk.objects.filter(case_id=self.case_id, generation=self.generation).exclude(
            case__generation=self.generation
        ).delete()


def case_ingest(*, case_id: int, token: str | None = None) -> None:
    """Parse, analyze and store a queued case; the case ends READY or FAILED with a reason.

    ``token`` names this execution (``claims.new_token``; a fresh one when omitted, as for a call
    outside Celery). A case another live worker holds is left alone. A lost database connection
    raises ``TransientError`` (the task retries, and the retry takes over its predecessor's claim);
    a claim taken away meanwhile (``ClaimLost``) stops the work without a write. With
    ``CASEBOOK_INGEST_FANOUT`` this task only plans the parse and sends its parts (web/fanout.py); the
    chord's last task leaves the case READY or FAILED.
    """
    token = token or new_token(None)
    claim = claim_case(case_id=case_id, token=token)
    if claim is None:
        log.info(
            "case %s is not queued; another worker has it or it is done", case_id, extra={"case_id": case_id}
        )
        return
    log.info(
        "case %s claimed by %s (generation %s)", case_id, token, claim.generation, extra={"case_id": case_id}
    )
    run_claimed(claim, functools.partial(_ingest_claimed, claim))


def run_claimed(claim: Claim, work: Callable[[Heartbeat, _DetailWriter], None]) -> None:
    """Run ``work(beat, detail)`` under ``claim``, inside a heartbeat: any task of an ingest (the whole
    ingest, or a part of a fan-out, web/fanout.py) runs this way. A claim taken away stops it
    quietly; a lost database connection raises ``TransientError`` (the task retries); any other
    failure leaves the case FAILED with a reason and its unpublished detail rows removed."""
    case_id = claim.case_id
    token = claim.token
    detail = _DetailWriter(case_id, claim.generation)
    try:
        with Heartbeat(claim) as beat:
            work(beat, detail)
    except ClaimLost:
        log.warning("case %s: claim %s was taken away; stopping", case_id, token, extra={"case_id": case_id})
        with contextlib.suppress(DatabaseError):
            detail.discard()
    except Exception as exc:
        if is_transient(exc):
            with contextlib.suppress(DatabaseError):
                update_if_held(claim, status_detail="the database connection was lost; retrying")
            raise TransientError(f"case {case_id}: {exc}") from exc
        if isinstance(exc, BundleError):
            _fail(claim, f"The bundle could not be read: {exc}", detail)
        elif isinstance(exc, SoftTimeLimitExceeded):
            _fail(
                claim,
                f"Processing took longer than the limit of {settings.CELERY_TASK_SOFT_TIME_LIMIT} s and was "
                "stopped. The original upload is kept: Re-analyze to try again (on a larger worker).",
                detail,
            )
        else:  # any other failure must leave a readable FAILED case
            log.exception("ingest of case %s failed", case_id, extra={"case_id": case_id})
            _fail(claim, f"Internal error while processing the bundle ({type(exc).__name__}: {exc}).", detail)


def reporter(claim: Claim, beat: Heartbeat) -> Callable[..., None]:
    """``report(**fields)``: write case fields (status, progress, detail) while ``claim`` holds the
    case; raises ``ClaimLost`` once it does not."""

    def report(**fields: object) -> None:
        beat.check()
        if not update_if_held(claim, **fields):
            raise ClaimLost(f"case {claim.case_id}: the claim {claim.token} was taken away")

    return report


def _ingest_claimed(claim: Claim, beat: Heartbeat, detail: _DetailWriter) -> None:
    case = Case.objects.select_related("upload").defer("charts_overview").get(pk=claim.case_id)
    detail.discard()  # rows a crashed run of this generation may have left
    report = reporter(claim, beat)
    if settings.CASEBOOK_INGEST_FANOUT:
        from web import fanout

        fanout.dispatch(claim, case, report=report, keep_text=detail.keep)
        return
    bundle = _parse(case, keep_text=detail.keep, report=report)
    analyze_and_publish(claim, beat, case, bundle)


#: Resident bytes of the worker, once the timeline is built, up to which the rules (and the case
#: row's top lists, ``_Analysis``) run in a thread while this one aggregates the series and writes
#: them: both are mostly NumPy and pandas, which let the other thread run, and the timeline is only
#: read. The hour's tail on two CPUs: 2.6 s rather than 3.3-3.7 s one after the other (ten
#: minutes: 1.0-1.1 s either way). Past it (a day-long dense capture: 600 MB) one after the other,
#: as both at once hold their transient frames together (the densest day peaked at 925-964 MiB so,
#: against 811 MiB).
RULES_BESIDE_UP_TO_BYTES = 480 << 20


def analyze_and_publish(claim: Claim, beat: Heartbeat, case: Case, bundle: Bundle) -> None:
    """The parsed ``bundle`` of ``case`` through the timeline and the rules, then every derived row
    written in one transaction, only while ``claim`` still holds the case. The rules run beside the
    writes while the worker holds at most ``RULES_BESIDE_UP_TO_BYTES``."""
    report = reporter(claim, beat)
    release_memory()
    report(status=CaseStatus.ANALYZING, progress=80, status_detail="running the rules")
    timeline = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rules") as rules:
        if resident_bytes() <= RULES_BESIDE_UP_TO_BYTES:
            analysis = rules.submit(_Analysis.of, timeline)
        else:
            analysis = Future()
            analysis.set_result(_Analysis.of(timeline))
        with transaction.atomic():
            if not holds_claim(claim):
                raise ClaimLost(f"case {claim.case_id}: the claim {claim.token} was taken away")
            _replace_derived(case, bundle, timeline, analysis, claim.generation, beat)


@dataclasses.dataclass(frozen=True, slots=True)
class _Analysis:
    """What the ingest works out from the timeline besides its series: the rules' outcome, and for
    the case row the IRQ x CPU rates, the top fingerprints and wait channels."""

    outcome: engine.Outcome
    irq_cpu: pd.DataFrame
    fingerprints: list[str]
    wait_channels: list[str]

    @classmethod
    def of(cls, timeline: Timeline) -> _Analysis:
        return cls(
            engine.run(timeline),
            irq_cpu_rates(timeline),
            [fp[:MAX_FINGERPRINT_CHARS] for fp in top_fingerprints(timeline)],
            [w[:100] for w in top_wait_channels(timeline)],
        )


def _fail(claim: Claim, reason: str, detail: _DetailWriter | None = None) -> None:
    if detail is not None:
        with contextlib.suppress(DatabaseError):
            detail.discard()
    update_if_held(
        claim,
        status=CaseStatus.FAILED,
        failure_reason=pg_safe(reason[:2000]) or "unknown error",
        status_detail="",
        claim="",
    )


def upload_limits() -> Limits:
    """The limits every walk of an upload is held to (settings ``CASEBOOK_MAX_*``)."""
    return Limits(
        max_members=settings.CASEBOOK_MAX_MEMBERS,
        max_total_bytes=settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES,
        max_ratio=settings.CASEBOOK_MAX_RATIO,
    )


def member_progress(report: Callable[..., None]) -> Callable[[str], None]:
    """The walk's ``progress(member)``: the case shows the member being read and a progress that grows."""
    seen = [0]

    def progress(member: str) -> None:
        seen[0] += 1
        report(progress=min(75, 2 + seen[0]), status_detail=f"parsing {member[:250]}")

    return progress


def _parse(
    case: Case,
    *,
    keep_text: Callable[[str, tuple[TextChunk, ...]], None],
    report: Callable[..., None],
) -> Bundle:
    with local_copy(case.upload) as path:
        return read_bundle(
            path,
            display_name=case.upload.original_name,
            limits=upload_limits(),
            progress=member_progress(report),
            reduce=PIECE_REDUCER,
            keep_text=keep_text,
            processes=settings.CASEBOOK_PARSE_PROCESSES,
        )


def ingest_work() -> Work:
    """What each piece of an ingest gets, wherever it is parsed: reduced by ``PIECE_REDUCER``, its text
    kept; the same ``Work`` as ``read_bundle`` builds from what ``_parse`` hands it, so that the parse
    processes started ahead (``warm_parse_processes``) are the ones an ingest takes."""
    return Work(reduce=PIECE_REDUCER, keep_text=True)


def warm_parse_processes(*, wait: bool = False) -> None:
    """Start the parse processes of the next ingest (``CASEBOOK_PARSE_PROCESSES``; with ``wait``,
    return once they are ready): a worker process calls this when it starts (web/celery.py) and
    after each ingest, so that no bundle waits for them to start and import pandas and the parsers
    (``parsers.ingest.pool.keep_warm``); an ingest closes its own before the analysis."""
    if not settings.CASEBOOK_PARSE_PROCESSES:
        return
    try:
        keep_warm(settings.CASEBOOK_PARSE_PROCESSES, work=ingest_work(), wait=wait)
    except Exception:  # noqa: BLE001 - best effort: a bundle without them starts its own
        log.warning("could not start the parse processes of the next bundle", exc_info=True)


def _replace_derived(
    case: Case,
    bundle: Bundle,
    timeline: Timeline,
    analysis: Future[_Analysis],
    generation: int,
    beat: Heartbeat,
) -> None:
    """Replace every row derived from the bundle (inside the caller's transaction): the detail rows
    (raw chunks) of ``generation`` become current, those of other generations go. ``analysis``: the
    rules' outcome and the rest, perhaps still being worked out in another thread: the series and
    the sample index are written first, the rest once it is ready."""
    for model in (Source, NotUsedMember, Series, SeriesLevel, SampleIndex, Finding, RuleResult):
        model.objects.filter(case=case).delete()
    RawChunk.objects.filter(case=case).exclude(generation=generation).delete()
    Source.objects.bulk_create(
        Source(
            case=case,
            member=pg_safe(s.member[:500]),
            format=s.format,
            samples=s.samples,
            start=s.start,
            end=s.end,
            clock=str(s.clock),
            variant=pg_safe(str(s.meta.get("variant", ""))[:200]),
            meta=pg_safe(_jsonable_meta(s.meta)),
            warnings=pg_safe([w.as_dict() for w in s.warnings[:MAX_WARNINGS_PER_SOURCE]]),
            warning_count=len(s.warnings),
            role=timeline.roles[s.member].role if s.member in timeline.roles else "",
            role_reason=timeline.roles[s.member].reason[:500] if s.member in timeline.roles else "",
        )
        for s in bundle.sources
    )
    NotUsedMember.objects.bulk_create(
        NotUsedMember(case=case, member=pg_safe(n.member[:500]), reason=pg_safe(n.reason))
        for n in bundle.not_used
    )
    bulk.write_series(case.pk, aggregate_series(timeline))
    for s in bundle.sources:
        if s.samples:
            bulk.copy_sample_index(
                case.pk, s.frames.get(SAMPLE_LINES, s.main), member=s.member, format=s.format
            )
    window = bundle.window
    timed = [s for s in bundle.sources if s.samples]
    case.host = pg_safe(bundle.host or "")
    case.kernel = pg_safe(bundle.kernel or "")
    case.ncpu = bundle.ncpu
    case.layout = bundle.layout
    case.window_start, case.window_end = window if window else (None, None)
    case.utc_offset_s = bundle.utc_offset_s
    case.utc_offset_origin = bundle.utc_offset_origin or ""
    case.warnings = pg_safe(list(bundle.warnings))
    case.generation = generation
    case.ingested_at = timezone.now()
    found = analysis.result()
    beat.check()
    outcome = found.outcome
    case.charts_overview = charts.timeline_charts(
        case=case,
        max_points=charts.OVERVIEW_POINTS,
        extra=[c for c in [charts.irq_cpu_chart(found.irq_cpu)] if c],
    )
    case.fingerprints = pg_safe(found.fingerprints)
    case.wait_channels = pg_safe(found.wait_channels)
    case.search_terms = "\n".join(case.fingerprints + case.wait_channels)
    Finding.objects.bulk_create(
        Finding(
            case=case,
            position=i,
            key=f.key,
            severity=str(f.severity),
            title=pg_safe(f.title),
            summary=pg_safe(f.explanation),
            windows=[[_iso_utc(w.start), _iso_utc(w.end)] for w in f.windows],
            evidence=pg_safe([evidence_json(e) for e in f.evidence]),
            recommendation=pg_safe(f.recommendation),
            caveats=pg_safe(list(f.caveats)),
            sources=list(f.sources),
            confidence=f.confidence,
            disproof=f.disproof,
            related=list(f.related),
            rule_version=f.rule_version,
            culprit=pg_safe(culprit_json(f.culprit)),
        )
        for i, f in enumerate(outcome.findings)
    )
    RuleResult.objects.bulk_create(
        [
            RuleResult(case=case, key=n.key, outcome=RuleResult.Outcome.NOT_EVALUATED, detail=n.reason)
            for n in outcome.not_evaluated
        ]
        + [
            RuleResult(case=case, key=f.key, outcome=RuleResult.Outcome.FAILED, detail=pg_safe(f.error))
            for f in outcome.failed
        ]
    )
    case.rule_versions = outcome.versions
    case.finding_keys = sorted({f.key for f in outcome.findings})
    case.progress = 100
    case.status_detail = ""
    case.claim = ""
    if timed:
        case.status, case.failure_reason = CaseStatus.READY, ""
    else:
        case.status = CaseStatus.FAILED
        case.failure_reason = (
            f"No supported capture was found in the bundle ({bundle.members_seen} member(s) looked at; "
            "see 'Not used' for the reason of each)."
        )
    # Only what the ingest derived: fields others write meanwhile (title, heartbeat...) are kept.
    case.save(update_fields=[*_DERIVED_CASE_FIELDS, "updated_at"])
    case_refresh_search(case_id=case.pk)


#: The case fields an ingest writes when it publishes its result.
_DERIVED_CASE_FIELDS = (
    "host",
    "kernel",
    "ncpu",
    "layout",
    "window_start",
    "window_end",
    "utc_offset_s",
    "utc_offset_origin",
    "warnings",
    "rule_versions",
    "generation",
    "ingested_at",
    "charts_overview",
    "search_terms",
    "finding_keys",
    "fingerprints",
    "wait_channels",
    "progress",
    "status_detail",
    "claim",
    "status",
    "failure_reason",
)


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


@transaction.atomic
def case_update_details(
    *, case_id: int, customer: str, ticket: str, tags: list[str], notes: str, title: str | None = None
) -> Case:
    """Set what the engineers record about a case (customer organisation, ticket reference, tags,
    Markdown notes, and the title when given) and refresh its search document. Tags are stripped,
    deduplicated (first spelling kept) and capped (``MAX_TAGS`` of ``MAX_TAG_CHARS``). The ingest never
    writes these fields, so an edit during a re-analyze is kept."""
    case = Case.objects.select_for_update().get(pk=case_id)
    seen: dict[str, str] = {}
    for tag in tags:
        tag = tag.strip()[:MAX_TAG_CHARS]
        if tag and tag.lower() not in seen:
            seen[tag.lower()] = tag
    case.customer = customer.strip()[:200]
    case.ticket = ticket.strip()[:100]
    case.tags = list(seen.values())[:MAX_TAGS]
    case.notes = notes
    fields = ["customer", "ticket", "tags", "notes", "updated_at"]
    if title is not None:
        case.title = title.strip()[:200]
        fields.append("title")
    case.save(update_fields=fields)
    case_refresh_search(case_id=case.pk)
    return case


def case_refresh_search(*, case_id: int) -> None:
    """Rebuild the case's full-text search document (``Case.search_vector``, web/search.py) from its
    title, customer, ticket, tags, host, finding keys, wait channels, fingerprints and notes: after
    any of them changes."""
    Case.objects.filter(pk=case_id).update(search_vector=search_document())
