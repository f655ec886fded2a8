"""The publication: every row an ingest derives from a bundle, written in the caller's transaction
while its claim holds, and nothing else. What it writes comes ready: the hosts' offsets, the series at
every level of detail and the overview charts (``web.ingest.prepare.Prepared``), the rules' outcome
and what is drawn from it (``web.ingest.prepare.Analysis``, perhaps still being worked out in the
rules' forked child: ``publish`` takes it once the rows that do not need it are written). One writer
per kind of row; one setter per group of case fields.
"""

from __future__ import annotations

from collections.abc import Callable

from django.utils import timezone

from analyzer import engine
from analyzer.reasoning.verdict import verdict_refs
from analyzer.timeline.timeline import SAMPLE_LINES, Timeline
from parsers.damage import pg_safe
from parsers.ingest.bundle import Bundle
from web.history.services import case_refresh_search
from web.ingest.claims import Heartbeat
from web.ingest.prepare import Analysis, Prepared
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
)
from web.notifications.services import case_finished
from web.timeline import bulk, charts

#: Warnings kept per source in the database (the count is kept whole): enough to see the pattern.
MAX_WARNINGS_PER_SOURCE = 200


def publish(
    case: Case,
    bundle: Bundle,
    timelines: dict[str, Timeline],
    prepared: Prepared,
    analysis: Callable[[], Analysis],
    *,
    generation: int,
    beat: Heartbeat,
) -> None:
    """Replace every row derived from the bundle (inside the caller's transaction): the detail rows
    (raw chunks) of ``generation`` become current, those of other generations go. ``prepared`` is
    written first; ``analysis()`` gives the rules' part (it may wait for the rules' child, within its
    timeout), written after."""
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
    _write_hosts(case, bundle, timelines, prepared.offsets)
    _write_sources(case, bundle, timelines)
    _write_series(case, bundle, prepared)
    _write_queries(case, bundle, timelines)
    _set_bundle_fields(case, bundle, generation)
    found = analysis()
    beat.check()
    _write_findings(case, found)
    _set_analysis_fields(case, bundle, prepared, found)
    _write_rule_results(case, found.outcome)
    _set_status(case, bundle)
    # Only what the ingest derived: fields others write meanwhile (title, heartbeat...) are kept.
    case.save(update_fields=[*DERIVED_CASE_FIELDS, "updated_at"])
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


def _write_series(case: Case, bundle: Bundle, prepared: Prepared) -> None:
    """The series of every host (``Series``, ``SeriesLevel``) as prepared (taken out of ``prepared``
    as they are written), and the sample index of every timed source, by COPY (web/timeline/bulk.py)."""
    for name in list(prepared.series):  # each host's points let go once written (a day holds millions)
        bulk.copy_series(case.pk, prepared.series.pop(name), host=name)
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


def _set_analysis_fields(case: Case, bundle: Bundle, prepared: Prepared, found: Analysis) -> None:
    """The case fields worked out by the analysis: the overview charts (prepared, with the analysis'
    part), fingerprints, wait channels, the search terms, the rules' versions and the keys of what
    they found."""
    case.charts_overview = charts.with_analysis(
        prepared.overview, extra=found.irq_charts, windows=found.windows
    )
    case.fingerprints = found.fingerprints
    case.wait_channels = found.wait_channels
    case.search_terms = "\n".join(
        [h.name for h in bundle.hosts if bundle.host] + case.fingerprints + case.wait_channels
    )
    case.rule_versions = found.outcome.versions
    case.finding_keys = sorted({f.key for f in found.outcome.findings})
    verdict = found.outcome.verdict
    case.verdict = pg_safe(verdict_refs(verdict)) if verdict else {}
    case.root_cause_key = verdict.root_cause.key if verdict and verdict.root_cause else ""


def _write_findings(case: Case, found: Analysis) -> None:
    """A ``Finding`` row per finding, in the engine's order, as the analysis made its fields."""
    Finding.objects.bulk_create(
        Finding(case=case, position=i, **fields) for i, fields in enumerate(found.findings)
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
DERIVED_CASE_FIELDS = (
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


def _write_hosts(
    case: Case, bundle: Bundle, timelines: dict[str, Timeline], clocks: dict[str, tuple[float, str]]
) -> None:
    """One ``Host`` row per host of the bundle (per timeline: ``UNKNOWN_HOST`` when nothing was
    parsed), in the bundle's order, each with its own clock, CPUs, kernel, layout and window.
    ``offset_s``: the estimate of its clock against the first host's (``clocks``, prepared:
    ``analyzer.cluster.offsets``, shown, never applied), None where the captures allow none."""
    known = {h.name: h for h in bundle.hosts}
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
