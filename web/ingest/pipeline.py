"""The ingest pipeline: a claimed case's upload parsed, analyzed and published, and each piece of
that which the fan-out's tasks (web/ingest/fanout.py) run too.

Ingest is idempotent: a worker claims a case (web/ingest/claims.py: QUEUED -> PARSING under a row
lock, or a case whose holder went silent) and stops when another worker has it; while it works a
heartbeat stamps the case, and the derived rows of a case are replaced together in one transaction,
written only while the claim is still its own, so running it twice equals running it once. The
original upload is never touched; it is read only through Django's storage API (``local_copy``).
The entry (claim, then parse here or fan out) is web/ingest/tasks.py.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, transaction

from analyzer.timeline.timeline import Timeline
from parsers.damage import pg_safe
from parsers.ingest import forked
from parsers.ingest.archive import BundleError
from parsers.ingest.bundle import Bundle
from parsers.ingest.hosts import UNKNOWN_HOST
from parsers.ingest.malloc import release_memory, resident_bytes
from parsers.ingest.pool import keep_warm
from parsers.ingest.workfile import WorkFileError
from parsers.rawtext import TextChunk
from web.faults import TransientError, is_transient
from web.ingest import work as piece_work
from web.ingest.claims import Claim, ClaimLost, Heartbeat, holds_claim, poison_reason, update_if_held
from web.ingest.prepare import Analysis, prepare
from web.ingest.publish import publish
from web.models import Case, CaseStatus, RawChunk, Upload
from web.notifications.services import case_finished
from web.timeline import bulk

log = logging.getLogger(__name__)


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


class DetailWriter:
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


def run_claimed(claim: Claim, work: Callable[[Heartbeat, DetailWriter], None]) -> None:
    """Run ``work(beat, detail)`` under ``claim``, inside a heartbeat: any task of an ingest (the whole
    ingest, or a part of a fan-out, web/ingest/fanout.py) runs this way. A claim taken away stops it
    quietly; a lost database connection raises ``TransientError`` (the task retries); a worker out of
    memory is counted as one that died (``_exhausted``); any other failure leaves the case FAILED
    with a reason and its unpublished detail rows removed."""
    case_id = claim.case_id
    token = claim.token
    detail = DetailWriter(case_id, claim.generation)
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
        elif isinstance(exc, WorkFileError):  # a fan-out's plan or outcome spoilt in the storage
            log.error("case %s: %s", case_id, exc, extra={"case_id": case_id})
            _fail(
                claim,
                f"The parallel parse stopped: {exc}; nothing in it was run. The original upload is kept: "
                "Re-analyze to parse it again.",
                detail,
            )
        elif isinstance(exc, MemoryError):
            _exhausted(claim, detail)
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


#: Resident bytes of the worker, once the timeline is built, up to which the rules (and the case
#: row's top lists, ``Analysis``) run in a forked child (``_Rules``) while this process
#: aggregates the series and writes them; the timeline is only read. The hour's tail on two CPUs:
#: 2.2-2.5 s (2.7-3.0 s in a thread, which took turns with the writes on the interpreter lock;
#: 3.3-3.7 s one after the other). Past it (a day-long dense capture: 600 MB) one after the other,
#: as both at once hold their transient frames together (the densest day peaked at 925-964 MiB so,
#: against 811 MiB).
RULES_BESIDE_UP_TO_BYTES = 480 << 20


def analyze_and_publish(claim: Claim, beat: Heartbeat, case: Case, bundle: Bundle) -> None:
    """The parsed ``bundle`` of ``case`` through the timeline and the rules, then every derived row
    written in one transaction, only while ``claim`` still holds the case. Everything written is
    worked out before it is written (web/ingest/prepare.py): the rules in a forked child while the
    worker holds at most ``RULES_BESIDE_UP_TO_BYTES``, the offsets, series and overview here
    meanwhile; the transaction (``publish``) only writes, taking the rules' part last."""
    report = reporter(claim, beat)
    release_memory()
    report(status=CaseStatus.ANALYZING, progress=80, status_detail="running the rules")
    timelines = host_timelines(bundle)
    rules = _Rules(timelines, beside=resident_bytes() <= RULES_BESIDE_UP_TO_BYTES)
    try:
        prepared = prepare(bundle, timelines)
        beat.check()
        with transaction.atomic():
            if not holds_claim(claim):
                raise ClaimLost(f"case {claim.case_id}: the claim {claim.token} was taken away")
            publish(case, bundle, timelines, prepared, rules.result, generation=claim.generation, beat=beat)
    except BaseException:
        rules.cancel()  # the writes failed: the rules' outcome is not wanted
        raise


def host_timelines(bundle: Bundle) -> dict[str, Timeline]:
    """One ``Timeline`` per host of ``bundle`` (``Host.name`` -> its timeline, the first host first),
    each of that host's sources only, on its own CPUs and clock: the primary capture of each source is
    chosen within a host, never across hosts. A bundle with no host (nothing parsed) gives one
    empty timeline under ``UNKNOWN_HOST``."""
    if not bundle.hosts:
        return {UNKNOWN_HOST: Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu, host=bundle.host)}
    return {
        h.name: Timeline.from_sources(
            h.sources(bundle),
            ncpu=h.ncpu,
            host=h.name if bundle.host is not None else None,
            utc_offset_s=h.utc_offset_s,
        )
        for h in bundle.hosts
    }


class _Rules:
    """``Analysis.of(timelines)``: with ``beside``, started now in a forked child
    (``parsers.ingest.forked``) that reads the timelines this process holds, shared, while this
    process writes, and takes no turn of its interpreter lock; else worked out now. ``result`` gives
    it, waiting for the child at most ``CASEBOOK_RULES_CHILD_TIMEOUT_S`` seconds (then killed: a
    hung child would hold the publishing transaction until the task's time limit); a child that ends
    without an answer or in time, or a system that cannot fork, leaves the work to ``result`` itself.
    ``cancel``: the writes failed, the outcome is not wanted (the child is killed and reaped; ``result`` then
    raises ``ForkLost``)."""

    def __init__(self, timelines: dict[str, Timeline], *, beside: bool) -> None:
        self.timelines = timelines
        self.cancelled = False
        self.child: forked.Forked[Analysis] | None = None
        self.done: Analysis | None = None
        if not beside:
            self.done = Analysis.of(timelines)
            return
        try:
            self.child = forked.start(Analysis.of, timelines)
        except OSError:
            log.warning("the rules could not be forked; they run after the writes", exc_info=True)

    def result(self) -> Analysis:
        if self.cancelled:
            raise forked.ForkLost("the rules were cancelled")
        if self.done is None and self.child is not None:
            try:
                self.done = self.child.result(timeout_s=settings.CASEBOOK_RULES_CHILD_TIMEOUT_S)
            except forked.ForkTimedOut:
                log.warning(
                    "the rules' child gave no answer within CASEBOOK_RULES_CHILD_TIMEOUT_S (%s s) and "
                    "was killed; they run here",
                    settings.CASEBOOK_RULES_CHILD_TIMEOUT_S,
                )
            except forked.ForkLost:
                log.warning("the rules' child ended without an answer; they run here", exc_info=True)
        if self.done is None:
            self.done = Analysis.of(self.timelines)
        return self.done

    def cancel(self) -> None:
        self.cancelled = True
        if self.child is not None:
            self.child.cancel()


def _exhausted(claim: Claim, detail: DetailWriter) -> None:
    """The ingest ran its worker out of memory: counted like a worker that died (the sweeper's
    ``Case.requeues``). Within ``CASEBOOK_MAX_REQUEUES`` the case is queued again (its message is
    sent by the next sweep: ``enqueued_at`` cleared); past it, FAILED with the reason."""
    case = Case.objects.filter(pk=claim.case_id).only("requeues", "status_detail").first()
    if case is None:
        return
    doing = case.status_detail
    log.error(
        "case %s: the worker ran out of memory while %s",
        claim.case_id,
        doing,
        extra={"case_id": claim.case_id},
    )
    if case.requeues >= settings.CASEBOOK_MAX_REQUEUES:
        _fail(claim, poison_reason(what="ran out of memory", count=case.requeues + 1, doing=doing), detail)
        return
    with contextlib.suppress(DatabaseError):
        detail.discard()
    update_if_held(
        claim,
        status=CaseStatus.QUEUED,
        claim="",
        progress=0,
        requeues=case.requeues + 1,
        status_detail=f"Re-queued: the worker ran out of memory while {doing}"[:300],
        enqueued_at=None,
    )


def _fail(claim: Claim, reason: str, detail: DetailWriter | None = None) -> None:
    if detail is not None:
        with contextlib.suppress(DatabaseError):
            detail.discard()
    if update_if_held(
        claim,
        status=CaseStatus.FAILED,
        failure_reason=pg_safe(reason[:2000]) or "unknown error",
        status_detail="",
        claim="",
    ):
        case_finished(case_id=claim.case_id, status=CaseStatus.FAILED)


def member_progress(report: Callable[..., None]) -> Callable[[str], None]:
    """The walk's ``progress(member)``: the case shows the member being read and a progress that grows."""
    seen = [0]

    def progress(member: str) -> None:
        seen[0] += 1
        report(progress=min(75, 2 + seen[0]), status_detail=f"parsing {member[:250]}")

    return progress


def parse_upload(
    case: Case,
    *,
    keep_text: Callable[[str, tuple[TextChunk, ...]], None],
    report: Callable[..., None],
) -> Bundle:
    """Read the case's bundles as one: its first upload, then every bundle added to it
    (``case.added_uploads``, oldest first; their members named ``<file name>/<member>``). The bundle
    ``manage.py analyze --sync`` read ahead while Django set up is taken when it is this upload
    (``web.ingest.work.take_read_ahead``)."""
    limits = piece_work.upload_limits()
    ahead = piece_work.take_read_ahead(
        original_name=case.upload.original_name, size=case.upload.size, limits=limits
    )
    if ahead is not None and not case.added_uploads.exists():
        log.info("case %s: the bundle read while Django set up is taken", case.pk, extra={"case_id": case.pk})
        return ahead.bundle(keep_text=keep_text, progress=member_progress(report))
    with contextlib.ExitStack() as stack:
        path = stack.enter_context(local_copy(case.upload))
        more = [
            (stack.enter_context(local_copy(added)), added.original_name)  # type: ignore[arg-type]
            for added in case.added_uploads.all()
        ]
        return piece_work.read_upload(
            path,
            display_name=case.upload.original_name,
            limits=limits,
            progress=member_progress(report),
            keep_text=keep_text,
            more=more,
            # a capture with times of day and no date is dated by the bundle's own evidence, at worst this
            uploaded_at=pd.Timestamp(case.upload.uploaded_at),
        )


def warm_parse_processes(*, wait: bool = False) -> None:
    """Start the parse processes of the next ingest (``CASEBOOK_PARSE_PROCESSES``; with ``wait``,
    return once they are ready): a worker process calls this when it starts (web/celery.py) and
    after each ingest, so that no bundle waits for them to start and import pandas and the parsers
    (``parsers.ingest.pool.keep_warm``); an ingest closes its own before the analysis."""
    if not settings.CASEBOOK_PARSE_PROCESSES:
        return
    try:
        keep_warm(settings.CASEBOOK_PARSE_PROCESSES, work=piece_work.ingest_work(), wait=wait)
    except Exception:  # noqa: BLE001 - best effort: a bundle without them starts its own
        log.warning("could not start the parse processes of the next bundle", exc_info=True)
