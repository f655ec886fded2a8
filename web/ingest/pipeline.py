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
import dataclasses
import logging
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from analyzer import engine
from analyzer.cluster.offsets import estimate_offsets
from analyzer.findings import culprit_json, evidence_json
from analyzer.isotime import iso_utc
from analyzer.reasoning.verdict import verdict_refs
from analyzer.timeline.series import aggregate_series, irq_cpu_rates, top_fingerprints, top_wait_channels
from analyzer.timeline.timeline import SAMPLE_LINES, Timeline
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
from web.history.services import case_refresh_search
from web.ingest import work as piece_work
from web.ingest.claims import Claim, ClaimLost, Heartbeat, holds_claim, poison_reason, update_if_held
from web.models import (
    Case,
    CaseStatus,
    Finding,
    Host,
    NotUsedMember,
    QueryClass,
    QueryMinute,
    RawChunk,
    RuleResult,
    SampleIndex,
    Series,
    SeriesLevel,
    Source,
    Upload,
)
from web.notifications.services import case_finished
from web.timeline import bulk, charts

log = logging.getLogger(__name__)

#: Longest fingerprint kept on a case (characters): a GIN index entry must stay under about 2.7 kB.
MAX_FINGERPRINT_CHARS = 1000
#: Warnings kept per source in the database (the count is kept whole): enough to see the pattern.
MAX_WARNINGS_PER_SOURCE = 200


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
#: row's top lists, ``_Analysis``) run in a forked child (``_Rules``) while this process
#: aggregates the series and writes them; the timeline is only read. The hour's tail on two CPUs:
#: 2.2-2.5 s (2.7-3.0 s in a thread, which took turns with the writes on the interpreter lock;
#: 3.3-3.7 s one after the other). Past it (a day-long dense capture: 600 MB) one after the other,
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
    timelines = host_timelines(bundle)
    rules = _Rules(timelines, beside=resident_bytes() <= RULES_BESIDE_UP_TO_BYTES)
    try:
        with transaction.atomic():
            if not holds_claim(claim):
                raise ClaimLost(f"case {claim.case_id}: the claim {claim.token} was taken away")
            _replace_derived(case, bundle, timelines, rules, claim.generation, beat)
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


@dataclasses.dataclass(frozen=True, slots=True)
class _Analysis:
    """What the ingest works out from the timeline besides its series: the rules' outcome, and for
    the case row the IRQ x CPU rates of each host, the top fingerprints and wait channels."""

    outcome: engine.Outcome
    irq_cpu: dict[str, pd.DataFrame]
    fingerprints: list[str]
    wait_channels: list[str]

    @classmethod
    def of(cls, timelines: dict[str, Timeline]) -> _Analysis:
        """The rules over every host (``engine.run_hosts``); the IRQ x CPU rates of each host; the top
        fingerprints and wait channels of every host, the first host's first."""
        fingerprints = [
            fp[:MAX_FINGERPRINT_CHARS] for tl in timelines.values() for fp in top_fingerprints(tl)
        ]
        waits = [w[:100] for tl in timelines.values() for w in top_wait_channels(tl)]
        return cls(
            engine.run_hosts(timelines),
            {name: irq_cpu_rates(tl) for name, tl in timelines.items()},
            list(dict.fromkeys(fingerprints)),
            list(dict.fromkeys(waits)),
        )


class _Rules:
    """``_Analysis.of(timelines)``: with ``beside``, started now in a forked child
    (``parsers.ingest.forked``) that reads the timelines this process holds, shared, while this
    process writes, and takes no turn of its interpreter lock; else worked out now. ``result`` gives
    it, waiting for the child at most ``CASEBOOK_RULES_CHILD_TIMEOUT_S`` seconds (then killed: a
    hung child would hold the publishing transaction until the task's time limit); a child that ends
    without an answer or in time, or a system that cannot fork, leaves the work to ``result`` itself. ``cancel``: the writes failed, the outcome is not wanted
    (the child is killed and reaped; ``result`` then raises ``ForkLost``)."""

    def __init__(self, timelines: dict[str, Timeline], *, beside: bool) -> None:
        self.timelines = timelines
        self.cancelled = False
        self.child: forked.Forked[_Analysis] | None = None
        self.done: _Analysis | None = None
        if not beside:
            self.done = _Analysis.of(timelines)
            return
        try:
            self.child = forked.start(_Analysis.of, timelines)
        except OSError:
            log.warning("the rules could not be forked; they run after the writes", exc_info=True)

    def result(self) -> _Analysis:
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
            self.done = _Analysis.of(self.timelines)
        return self.done

    def cancel(self) -> None:
        self.cancelled = True
        if self.child is not None:
            self.child.cancel()


def _irq_charts(rates: dict[str, pd.DataFrame]) -> list[dict[str, object]]:
    """The IRQ x CPU heatmap of each host (``charts.irq_cpu_chart``): on a case of several hosts each
    carries its ``host``, which makes it that host's panel; a case of one host's has none."""
    specs = {name: charts.irq_cpu_chart(r) for name, r in rates.items()}
    several = len(rates) > 1
    return [{**spec, "host": name} if several else spec for name, spec in specs.items() if spec]


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


def _replace_derived(
    case: Case,
    bundle: Bundle,
    timelines: dict[str, Timeline],
    analysis: _Rules,
    generation: int,
    beat: Heartbeat,
) -> None:
    """Replace every row derived from the bundle (inside the caller's transaction): the detail rows
    (raw chunks) of ``generation`` become current, those of other generations go. ``analysis``: the
    rules' outcome and the rest, perhaps still being worked out in another thread: the series and
    the sample index are written first, the rest once it is ready. One writer per kind of row."""
    derived = (
        Source,
        NotUsedMember,
        Series,
        SeriesLevel,
        SampleIndex,
        QueryMinute,
        QueryClass,
        Finding,
        RuleResult,
    )
    for model in (*derived, Host):
        model.objects.filter(case=case).delete()
    RawChunk.objects.filter(case=case).exclude(generation=generation).delete()
    _write_hosts(case, bundle, timelines)
    _write_sources(case, bundle, timelines)
    _write_series(case, bundle, timelines)
    _write_queries(case, bundle, timelines)
    _set_bundle_fields(case, bundle, generation)
    found = analysis.result()
    beat.check()
    _write_findings(case, found.outcome)  # before the overview, which shades the findings' windows
    _set_analysis_fields(case, bundle, found)
    _write_rule_results(case, found.outcome)
    _set_status(case, bundle)
    # Only what the ingest derived: fields others write meanwhile (title, heartbeat...) are kept.
    case.save(update_fields=[*_DERIVED_CASE_FIELDS, "updated_at"])
    case_refresh_search(case_id=case.pk)
    case_finished(case_id=case.pk, status=case.status)  # sent once the publishing transaction commits


def _write_sources(case: Case, bundle: Bundle, timelines: dict[str, Timeline]) -> None:
    """A ``Source`` row per parsed member (its role in its host's timeline, its host and why), a
    ``NotUsedMember`` row per member not used."""
    roles = {member: role for tl in timelines.values() for member, role in tl.roles.items()}
    host_of = bundle.host_of
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
            role=roles[s.member].role if s.member in roles else "",
            role_reason=roles[s.member].reason[:500] if s.member in roles else "",
            host=pg_safe(host_of.get(s.member, (next(iter(timelines)), ""))[0]),
            host_reason=pg_safe(host_of.get(s.member, ("", ""))[1][:300]),
        )
        for s in bundle.sources
    )
    NotUsedMember.objects.bulk_create(
        NotUsedMember(case=case, member=pg_safe(n.member[:500]), reason=pg_safe(n.reason))
        for n in bundle.not_used
    )


def _write_series(case: Case, bundle: Bundle, timelines: dict[str, Timeline]) -> None:
    """The series of every host's timeline (``Series``, ``SeriesLevel``) and the sample index of
    every timed source, by COPY (web/timeline/bulk.py)."""
    for name, timeline in timelines.items():
        bulk.write_series(case.pk, aggregate_series(timeline), host=name)
    for s in bundle.sources:
        if s.samples:
            bulk.copy_sample_index(
                case.pk, s.frames.get(SAMPLE_LINES, s.main), member=s.member, format=s.format
            )


def _write_queries(case: Case, bundle: Bundle, timelines: dict[str, Timeline]) -> None:
    """The digest of every slow query log (``QueryClass``) and its classes minute by minute
    (``QueryMinute``), by COPY (web/timeline/bulk.py); classes numbered across the case's logs."""
    number = 0
    for s in bundle.sources:
        classes = s.frames.get("slowlog_classes")
        if classes is None or not len(classes):
            continue
        host = bundle.host_of.get(s.member, (next(iter(timelines)), ""))[0]
        number += bulk.copy_query_classes(
            case.pk, classes, s.frames["slowlog_class_minutes"], host=host, member=s.member, first=number
        )


def _set_bundle_fields(case: Case, bundle: Bundle, generation: int) -> None:
    """The case fields read from the bundle itself (hosts, kernel, CPUs, window, clock offset)."""
    window = bundle.window
    case.host = pg_safe(", ".join(h.name for h in bundle.hosts)[:255] if bundle.host else "")
    case.kernel = pg_safe(bundle.kernel or "")
    case.ncpu = bundle.ncpu
    case.layout = bundle.layout
    case.window_start, case.window_end = window if window else (None, None)
    case.utc_offset_s = bundle.utc_offset_s
    case.utc_offset_origin = bundle.utc_offset_origin or ""
    case.warnings = pg_safe(list(bundle.warnings))
    case.generation = generation
    case.ingested_at = timezone.now()


def _set_analysis_fields(case: Case, bundle: Bundle, found: _Analysis) -> None:
    """The case fields worked out by the analysis: the overview charts, fingerprints, wait channels,
    the search terms, the rules' versions and the keys of what they found."""
    case.charts_overview = charts.timeline_charts(
        case=case,
        max_points=charts.OVERVIEW_POINTS,
        extra=_irq_charts(found.irq_cpu),
    )
    case.fingerprints = pg_safe(found.fingerprints)
    case.wait_channels = pg_safe(found.wait_channels)
    case.search_terms = "\n".join(
        [h.name for h in bundle.hosts if bundle.host] + case.fingerprints + case.wait_channels
    )
    case.rule_versions = found.outcome.versions
    case.finding_keys = sorted({f.key for f in found.outcome.findings})
    verdict = found.outcome.verdict
    case.verdict = pg_safe(verdict_refs(verdict)) if verdict else {}
    case.root_cause_key = verdict.root_cause.key if verdict and verdict.root_cause else ""


def _write_findings(case: Case, outcome: engine.Outcome) -> None:
    """A ``Finding`` row per finding, in the engine's order."""
    Finding.objects.bulk_create(
        Finding(
            case=case,
            position=i,
            key=f.key,
            severity=str(f.severity),
            title=pg_safe(f.title),
            summary=pg_safe(f.explanation),
            windows=[
                [iso_utc(w.start, timespec="microseconds"), iso_utc(w.end, timespec="microseconds")]
                for w in f.windows
            ],
            evidence=pg_safe([evidence_json(e) for e in f.evidence]),
            recommendation=pg_safe(f.recommendation),
            caveats=pg_safe(list(f.caveats)),
            sources=list(f.sources),
            confidence=f.confidence,
            disproof=f.disproof,
            related=list(f.related),
            rule_version=f.rule_version,
            culprit=pg_safe(culprit_json(f.culprit)),
            host=pg_safe(f.host or ""),
            hosts=pg_safe(list(f.hosts)),
        )
        for i, f in enumerate(outcome.findings)
    )


def _write_rule_results(case: Case, outcome: engine.Outcome) -> None:
    """A ``RuleResult`` row per rule not evaluated (missing input) or failed (an exception)."""
    results = [
        RuleResult(
            case=case,
            key=n.key,
            outcome=RuleResult.Outcome.NOT_EVALUATED,
            detail=n.reason,
            host=pg_safe(n.host or ""),
        )
        for n in outcome.not_evaluated
    ]
    results += [
        RuleResult(
            case=case,
            key=f.key,
            outcome=RuleResult.Outcome.FAILED,
            detail=pg_safe(f.error),
            host=pg_safe(f.host or ""),
        )
        for f in outcome.failed
    ]
    RuleResult.objects.bulk_create(results)


def _set_status(case: Case, bundle: Bundle) -> None:
    """READY when any source has a timed sample, else FAILED with the reason; the claim released."""
    case.progress = 100
    case.status_detail = ""
    case.claim = ""
    if any(s.samples for s in bundle.sources):
        case.status, case.failure_reason = CaseStatus.READY, ""
    else:
        case.status = CaseStatus.FAILED
        case.failure_reason = (
            f"No supported capture was found in the bundle ({bundle.members_seen} member(s) looked at; "
            "see 'Not used' for the reason of each)."
        )
        if bundle.stopped:  # a hostile or broken archive: why reading stopped is the reason to read
            case.failure_reason += " Reading stopped: " + " ".join(bundle.stopped)


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
    "verdict",
    "root_cause_key",
    "fingerprints",
    "wait_channels",
    "progress",
    "status_detail",
    "claim",
    "status",
    "failure_reason",
)


def _write_hosts(case: Case, bundle: Bundle, timelines: dict[str, Timeline]) -> None:
    """One ``Host`` row per host of the bundle (per timeline: ``UNKNOWN_HOST`` when nothing was
    parsed), in the bundle's order, each with its own clock, CPUs, kernel, layout and window.
    ``offset_s``: the estimate of its clock against the first host's (``analyzer.cluster.offsets``, shown,
    never applied), None where the captures allow none."""
    known = {h.name: h for h in bundle.hosts}
    try:
        clocks = estimate_offsets(timelines)
    except Exception:  # noqa: BLE001 - an estimate that fails leaves the offsets unknown, never the case
        log.warning("case %s: the hosts' clock offsets could not be estimated", case.pk, exc_info=True)
        clocks = {}
    rows = []
    for position, name in enumerate(timelines):
        h = known.get(name)
        sources = [s for s in (h.sources(bundle) if h else bundle.sources) if s.samples]
        rows.append(
            Host(
                case=case,
                position=position,
                name=pg_safe(name[:255]),
                name_origin=pg_safe((h.name_origin if h else "")[:300]),
                kernel=pg_safe((h.kernel if h else bundle.kernel) or ""),
                ncpu=h.ncpu if h else bundle.ncpu,
                layout=(h.layout if h else bundle.layout)[:20],
                window_start=min((s.start for s in sources), default=None),
                window_end=max((s.end for s in sources), default=None),
                utc_offset_s=h.utc_offset_s if h else bundle.utc_offset_s,
                utc_offset_origin=((h.utc_offset_origin if h else bundle.utc_offset_origin) or "")[:100],
                offset_s=clocks[name][0] if name in clocks else None,
                offset_origin=pg_safe(clocks[name][1][:300]) if name in clocks else "",
            )
        )
    Host.objects.bulk_create(rows)


def _jsonable_meta(meta: dict[str, object]) -> dict[str, object]:
    """Meta values the database can store as JSON (variables dicts kept, lists of flat records such as
    a pt-summary's file systems too; frames and the like dropped)."""
    out: dict[str, object] = {}
    for key, value in meta.items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[key] = value
        elif isinstance(value, list | tuple):
            out[key] = [_jsonable_item(v) for v in list(value)[:200]]
        elif isinstance(value, dict):
            out[key] = {str(k): str(v) for k, v in list(value.items())[:5000]}
        else:
            out[key] = str(value)
    return out


def _jsonable_item(value: object) -> object:
    """One item of a meta list: a scalar as it is, a flat dict with its scalars kept (others as text)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, dict):
        return {
            str(k): v if isinstance(v, str | int | float | bool) or v is None else str(v)
            for k, v in value.items()
        }
    return str(value)
