"""Every read the views, the API and the ``analyze`` command need, as querysets or JSON-ready dicts.

What a reader sees of a case's analysis (findings, the report, the page's context, the status, a
comparison's side) has its passwords masked here (``parsers.passwords.masked``), whoever reads it:
the engineer's page and API, the ``analyze`` command, every share link built from them.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone
from django.utils.text import slugify

from analyzer.findings import severity_rank
from analyzer.isotime import iso_utc as _iso
from parsers.damage import damage_said
from parsers.passwords import masked
from web.cases import queries
from web.cases.summaries import host_summaries
from web.cases.verdicts import expand_verdict
from web.history import compare
from web.history.search import CaseFilters, apply_filters
from web.ingest.claims import is_stalled, last_report
from web.models import (
    FINAL_STATUSES,
    PROCESSING_STATUSES,
    BundleFile,
    Case,
    CaseStatus,
    ShareLink,
    Source,
    Team,
    Upload,
)
from web.timeline.charts import chart_ids_for_evidence


def cases_for(user) -> QuerySet[Case]:
    """The cases ``user`` may see and work on: every case of every team the user belongs to, and
    nothing else (an anonymous or inactive user: none). THE access rule of Casebook: every view,
    JSON endpoint and API call resolves cases through it, and answers 404 for a case outside it.

    ``user``: a ``django.contrib.auth`` user or ``AnonymousUser`` (``request.user``), or None.
    """
    if user is None or not user.is_authenticated or not user.is_active:
        return Case.objects.none()
    # The team ids are read first (one small query): with literal ids PostgreSQL estimates how many
    # cases a team has, and picks the search indexes instead of walking all of a team's cases.
    return Case.objects.filter(
        team_id__in=list(Team.objects.filter(members=user).values_list("pk", flat=True))
    )


def case_for_user(*, user, case_id: int, queryset: QuerySet[Case] | None = None) -> Case:
    """The case ``case_id`` if ``user`` may see it (``cases_for``), else ``Http404``, alike for a case
    of another team and a case that does not exist: the one look-up of a case by id that the pages,
    the JSON API and the share previews make.

    ``queryset``: what to load, as a ``Case`` queryset (``select_related``, ``defer``); by default
    the upload and the team, without the overview's charts (megabytes of JSON, sent only by the
    timeline) and the search document. The access rule (``cases_for``) is applied to it whatever it is.
    """
    visible = cases_for(user)
    if queryset is None:
        cases = visible.select_related("upload", "team").defer("charts_overview", "search_vector")
    else:
        cases = queryset.filter(pk__in=visible.values("pk"))
    try:
        return cases.get(pk=case_id)
    except Case.DoesNotExist as exc:
        # The words of Django's get_object_or_404: the JSON API's 404 says them.
        raise Http404("No Case matches the given query.") from exc


def teams_of(user) -> QuerySet[Team]:
    """The teams ``user`` belongs to, by name (none for an anonymous user)."""
    if user is None or not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(members=user)


#: What a line of the case list shows (``case_row``): the rest of a case (timeline JSON, fingerprints,
#: notes, search vector...) is not read, which keeps a search over thousands of cases narrow.
CASE_ROW_FIELDS = (
    "id",
    "title",
    "host",
    "window_start",
    "window_end",
    "status",
    "finding_keys",
    "customer",
    "ticket",
    "tags",
    "created_at",
    "upload__original_name",
    "closed_at",
)


def case_list(*, user, filters: CaseFilters | None = None) -> QuerySet[Case]:
    """The cases ``user`` may see, narrowed, searched and ordered by ``filters`` (web/history/search.py:
    full-text search over title, customer, ticket, tags, host, finding keys, wait channels, query
    fingerprints and notes, trigram similarity on host and ticket). Newest first by default."""
    # The timeline JSON of each case (megabytes) is not read here: decoding it for every row was most
    # of the time of the list.
    cases = cases_for(user).select_related("upload").only(*CASE_ROW_FIELDS)
    return apply_filters(cases, filters or CaseFilters())


def earlier_uploads(*, user, sha256: str, before: Case | None = None) -> list[dict[str, object]]:
    """Cases of ``user``'s teams whose upload had these exact bytes (same SHA-256), newest first
    (those created before ``before`` when given), as ``{"id", "url", "title", "created_at",
    "status"}``: an upload already seen says so and links to them."""
    uploads = Upload.objects.filter(sha256=sha256, case__in=cases_for(user))
    if before is not None:
        uploads = uploads.filter(case_id__lt=before.pk)
    rows = uploads.select_related("case").order_by("-case_id")[:5]
    return [
        {
            "id": u.case_id,
            "url": f"/cases/{u.case_id}/",
            "title": u.case.title or u.original_name,
            "created_at": _iso(u.case.created_at),
            "status": u.case.status,
        }
        for u in rows
    ]


def ready_case_with_sha256(*, sha256: str) -> Case | None:
    """The newest ready case whose upload has these bytes, or None (``analyze --reuse``: the command
    line sees every team's cases)."""
    return (
        Case.objects.select_related("upload").filter(upload__sha256=sha256, status=CaseStatus.READY).first()
    )


def case_row(case: Case) -> dict[str, object]:
    """One line of the case list."""
    return {
        "id": case.pk,
        "url": f"/cases/{case.pk}/",
        "title": case.title or (case.upload.original_name if hasattr(case, "upload") else f"Case {case.pk}"),
        "host": case.host,
        "window_start": _iso(case.window_start),
        "window_end": _iso(case.window_end),
        "status": case.status,
        "status_label": CaseStatus(case.status).label,
        "finding_keys": sorted(case.finding_keys),
        "customer": case.customer,
        "ticket": case.ticket,
        "tags": list(case.tags),
        "created_at": _iso(case.created_at),
        "closed": case.closed_at is not None,
    }


def case_status(case: Case) -> dict[str, object]:
    """What the upload and case pages poll while a case is processed (a failure's reason may quote a
    line of the bundle: passwords masked)."""
    return masked(
        {
            "id": case.pk,
            "status": case.status,
            "label": CaseStatus(case.status).label,
            "status_label": CaseStatus(case.status).label,
            "progress": case.progress,
            "detail": case.status_detail,
            "failure_reason": case.failure_reason,
            "ready": case.status == CaseStatus.READY,
            "failed": case.status == CaseStatus.FAILED,
            "url": f"/cases/{case.pk}/",
            **processing_state(case),
            "resolution": case_resolution(case),
        }
    )


def case_resolution(case: Case) -> dict[str, object] | None:
    """How a closed case was closed: ``{"text" (Markdown), "category", "closed_at" (ISO UTC),
    "closed_by"}``; None while the case is open."""
    if case.closed_at is None:
        return None
    return {
        "text": case.resolution,
        "category": case.resolution_category,
        "closed_at": _iso(case.closed_at),
        "closed_by": case.closed_by.get_username() if case.closed_by_id and case.closed_by else "",
    }


def processing_state(case: Case) -> dict[str, object]:
    """How the processing of a case goes: ``processing`` (not ready or failed yet), ``last_report_at``
    (ISO UTC: the worker's last heartbeat while parsing/analyzing, else None), ``stalled`` (that
    worker stopped reporting: the sweeper will take the case back, and Re-analyze may) and
    ``requeues`` (times it was taken back from a silent worker)."""
    working = case.status in PROCESSING_STATUSES
    return {
        "processing": case.status not in FINAL_STATUSES,
        "last_report_at": _iso(last_report(case)) if working else None,
        "stalled": is_stalled(case),
        "requeues": case.requeues,
    }


def findings_for_case(*, case: Case) -> list[dict[str, object]]:
    """Findings most severe first, as stored (evidence as a list of labelled values). ``anchor`` is
    the id of its card on the page: ``finding-<key>``, then ``finding-<key>-2`` ... for a key found
    again (on another host of a case of several; never a host's name, which a redacted link hides);
    ``related_links`` its related keys with the anchor of each (on its own host). Passwords masked
    (``parsers.passwords.masked``), as in every read of a case this module serves."""
    rows = sorted(case.findings.all(), key=lambda f: (severity_rank(f.severity), f.position))
    seen: dict[str, int] = {}
    anchors = []
    for f in rows:
        slug = slugify(f.key)
        seen[slug] = seen.get(slug, 0) + 1
        anchors.append(f"finding-{slug}" + (f"-{seen[slug]}" if seen[slug] > 1 else ""))
    # A related key links to that key's card on the same host (else its first card).
    anchor_of: dict[tuple[str, str], str] = {}
    for f, anchor in zip(rows, anchors, strict=True):
        anchor_of.setdefault((f.host, f.key), anchor)
        anchor_of.setdefault(("*", f.key), anchor)
    served = [
        {
            "key": f.key,
            "severity": f.severity,
            "title": f.title,
            "summary": f.summary,
            "windows": f.windows,
            "evidence": f.evidence,
            "recommendation": f.recommendation,
            "caveats": f.caveats,
            "sources": f.sources,
            "confidence": f.confidence,
            "disproof": f.disproof,
            "related": f.related,
            "rule_version": f.rule_version,
            "culprit": f.culprit,
            "host": f.host or None,
            "hosts": list(f.hosts),
            "charts": chart_ids_for_evidence([e.get("series") or "" for e in f.evidence]),
            "anchor": anchor,
            "related_links": [
                {
                    "key": k,
                    "anchor": anchor_of.get((f.host, k))
                    or anchor_of.get(("*", k))
                    or f"finding-{slugify(k)}",
                }
                for k in f.related
            ],
        }
        for f, anchor in zip(rows, anchors, strict=True)
    ]
    return masked(served)  # a case analysed before findings were masked at the ingest


def case_report(*, case: Case) -> dict[str, object]:
    """The case as one JSON document (``analyze --json`` and ``GET /api/cases/<id>/``); times ISO 8601 UTC.
    ``verdict`` (docs/api.md) names the very objects of ``findings``; None for a case not analysed
    since verdicts are stored (re-analyze it). ``queries``: the slow logs' classes over the whole log,
    by total query time (at most ``queries.REPORT_LIMIT``; ``query_classes`` counts them all)."""
    findings = findings_for_case(case=case)
    report_findings = [_report_finding(f) for f in findings]
    digest, classes = queries.report_queries(case)
    report = {
        "case": case.pk,
        "url": f"{settings.PUBLIC_URL}/cases/{case.pk}/",
        "status": case.status,
        "failure_reason": case.failure_reason or None,
        "host": case.host or None,
        "kernel": case.kernel or None,
        "ncpu": case.ncpu,
        "window": [_iso(case.window_start), _iso(case.window_end)],
        "utc_offset_s": case.utc_offset_s,
        "upload": _upload(case),
        "uploads": _uploads(case),
        "hosts": hosts_report(case=case),
        "sources": [
            {**_source(s), "warnings": s.warning_count, "damage": damage_said(s.warnings)}
            for s in case.sources.all()
        ],
        "not_used": [{"member": n.member, "reason": n.reason} for n in case.not_used.all()],
        "warnings": list(case.warnings),
        "findings": report_findings,
        "verdict": expand_verdict(case.verdict, report_findings),
        "not_evaluated": [
            {"key": r.key, "outcome": r.outcome, "reason": r.detail, "host": r.host or None}
            for r in case.rule_results.all()
        ],
        "rule_versions": case.rule_versions,
        "queries": digest,
        "query_classes": classes,
    }
    return masked(report)  # parser warnings and reasons quote the lines they read


def case_queries(
    *,
    case: Case,
    start: datetime | None = None,
    end: datetime | None = None,
    limit: int = queries.DEFAULT_LIMIT,
) -> dict[str, object]:
    """The slow logs' classes of ``case`` over the whole log or the window ``start``..``end``, by total
    query time, at most ``limit`` (web/cases/queries.py ``case_queries``: the shape, what a window sums)."""
    return {"case": case.pk, **queries.case_queries(case, start=start, end=end, limit=limit)}


def _report_finding(f: dict[str, object]) -> dict[str, object]:
    """A finding of ``findings_for_case`` as the case report gives it (evidence keyed by label)."""
    return {
        "key": f["key"],
        "severity": f["severity"],
        "title": f["title"],
        "summary": f["summary"],
        "windows": f["windows"],
        "evidence": {e["label"]: {k: v for k, v in e.items() if k != "label"} for e in f["evidence"]},
        "recommendation": f["recommendation"],
        "caveats": f["caveats"],
        "sources": f["sources"],
        "confidence": f["confidence"],
        "disproof": f["disproof"],
        "rule_version": f["rule_version"],
        "culprit": f["culprit"],
        "host": f["host"],
        "hosts": f["hosts"],
    }


def hosts_report(*, case: Case) -> list[dict[str, object]]:
    """The case's hosts, first first: ``{name, name_origin, ncpu, kernel, layout, window, clock:
    {utc_offset_s, origin}, offset_s, offset_origin, sources}``; ``offset_s`` is the estimated offset
    of its clock against the first host's (seconds, None when none could be estimated), ``sources``
    the member names placed on it."""
    members: dict[str, list[str]] = {}
    for host, member in case.sources.order_by("id").values_list("host", "member"):
        members.setdefault(host, []).append(member)
    return [
        {
            "name": h.name,
            "name_origin": h.name_origin,
            "ncpu": h.ncpu,
            "kernel": h.kernel or None,
            "layout": h.layout,
            "window": [_iso(h.window_start), _iso(h.window_end)],
            "clock": {"utc_offset_s": h.utc_offset_s, "origin": h.utc_offset_origin or None},
            "offset_s": h.offset_s,
            "offset_origin": h.offset_origin or None,
            "sources": members.get(h.name, []),
        }
        for h in case.hosts.all()
    ]


def _uploads(case: Case) -> list[dict[str, object]]:
    """Every bundle of the case, the first upload first, then those added (``AddedUpload``)."""
    first = _upload(case)
    return [*([first] if first else []), *(_bundle(a) for a in case.added_uploads.all())]


def _source(s: Source) -> dict[str, object]:
    """A parsed member as the page and the report show it: format, samples, window, clock, variant, and
    its role among the captures of its source (primary, overlap, summary) with the reason."""
    return {
        "member": s.member,
        "format": s.format,
        "samples": s.samples,
        "start": _iso(s.start),
        "end": _iso(s.end),
        "clock": s.clock,
        "variant": s.variant,
        "role": s.role,
        "role_reason": s.role_reason,
        "host": s.host,
        "host_reason": s.host_reason,
    }


def _upload(case: Case) -> dict[str, object] | None:
    upload = getattr(case, "upload", None)
    return None if upload is None else _bundle(upload)


def _bundle(bundle: BundleFile) -> dict[str, object]:
    """A kept bundle (the first upload or an added one) as the page and the report show it."""
    return {"name": bundle.original_name, "size": bundle.size, "sha256": bundle.sha256}


def host_groups(*, case: Case, sources: list[dict[str, object]]) -> list[dict[str, object]]:
    """The hosts of a case of several, each with its sources (``sources``: the page's source dicts,
    with ``host``): ``[{"index", "name", "name_origin", "kernel", "ncpu", "window_start", "window_end",
    "utc_offset_s", "utc_offset_origin", "offset_s", "offset_origin", "summary", "sources"}]`` (``summary``:
    its pt-summary and pt-mysql-summary facts, ``web.cases.summaries``), first host first;
    sources whose host has no ``Host`` row come last under their own name. Empty for a case of one
    host (its page shows its sources as one list, as it always did)."""
    hosts = list(case.hosts.all())
    if len(hosts) <= 1:
        return []
    summaries = host_summaries(case=case)
    groups = [
        {
            "index": i,
            "name": h.name,
            "name_origin": h.name_origin,
            "kernel": h.kernel,
            "ncpu": h.ncpu,
            "window_start": _iso(h.window_start),
            "window_end": _iso(h.window_end),
            "utc_offset_s": h.utc_offset_s,
            "utc_offset_origin": h.utc_offset_origin,
            "offset_s": h.offset_s,
            "offset_origin": h.offset_origin,
            "summary": summaries.get(h.name, {}),
            "sources": [s for s in sources if s["host"] == h.name],
        }
        for i, h in enumerate(hosts)
    ]
    known = {h.name for h in hosts}
    for name in dict.fromkeys(s["host"] for s in sources if s["host"] not in known):
        groups.append(
            {"index": len(groups), "name": name, "sources": [s for s in sources if s["host"] == name]}
        )
    return groups


def case_detail_context(*, case: Case) -> dict[str, object]:
    """The plain context of the case page."""
    sources = [
        {
            **_source(s),
            "host": s.host,
            "host_reason": s.host_reason,
            "warnings": s.warnings[:20],
            "warning_count": s.warning_count,
        }
        for s in case.sources.all()
    ]
    findings = findings_for_case(case=case)
    not_evaluated = [
        {"key": r.key, "reason": r.detail, "outcome": r.outcome} for r in case.rule_results.all()
    ]
    context = {
        "case": {
            "id": case.pk,
            "title": case.title or _upload_name(case),
            "host": case.host,
            "kernel": case.kernel,
            "ncpu": case.ncpu,
            "layout": case.layout,
            "window_start": _iso(case.window_start),
            "window_end": _iso(case.window_end),
            "utc_offset_s": case.utc_offset_s,
            "utc_offset_origin": case.utc_offset_origin,
            "status": case.status,
            "status_label": CaseStatus(case.status).label,
            "failure_reason": case.failure_reason,
            "progress": case.progress,
            "status_detail": case.status_detail,
            **processing_state(case),
            "created_at": _iso(case.created_at),
            "rule_versions": case.rule_versions,
            "upload": _upload(case),
            "uploads": _uploads(case),
        },
        "sources": sources,
        "hosts": host_groups(case=case, sources=sources),
        "summary": next(iter(host_summaries(case=case).values()), {}),
        "not_used": [{"member": n.member, "reason": n.reason} for n in case.not_used.all()],
        "warnings": list(case.warnings),
        "findings": findings,
        "not_evaluated": not_evaluated,
        "verdict": expand_verdict(case.verdict, findings, page=True),
        "query_classes": queries.class_count(case),
    }
    return masked(context)


def _upload_name(case: Case) -> str:
    upload = getattr(case, "upload", None)
    return upload.original_name if upload else f"Case {case.pk}"


def compare_input(case: Case, host: str | None = None) -> dict[str, object]:
    """What ``web.history.compare.compare_cases`` needs of one case (or of its host ``host``), plus
    its identity: ``{"id", "title", "host", "one_host", "status", "window_start", "window_end",
    "findings": [{"key", "severity", "title"}], "fingerprints": [str, most frequent first]}``."""
    head = compare.side_head(case, host)
    return {
        "id": case.pk,
        "title": case.title or _upload_name(case),
        "host": head["host"],
        "one_host": head["one_host"],
        "status": case.status,
        "window_start": head["window_start"],
        "window_end": head["window_end"],
        **masked(compare.case_input(case, host)),
    }


def share_rows(case: Case) -> list[dict[str, object]]:
    """The links of a case as its page lists them, newest first."""
    now = timezone.now()
    rows = []
    for s in case.share_links.select_related("created_by"):
        state = "revoked" if s.revoked_at else ("expired" if s.expires_at <= now else "active")
        rows.append(
            {
                "id": s.pk,
                "label": s.label,
                "created_by": s.created_by.get_username() if s.created_by else "",
                "created_at": s.created_at,
                "expires_at": s.expires_at,
                "revoked_at": s.revoked_at,
                "last_viewed_at": s.last_viewed_at,
                "view_count": s.view_count,
                "state": state,
                "redaction": redaction_label(s),
                "allow_bundle": s.allow_bundle,
            }
        )
    return rows


def redaction_label(share: ShareLink) -> str:
    """What a link redacts, in words: "literals, hosts, users, schemas" or "none"."""
    kinds = [
        k
        for k, on in (
            ("literals", share.redact_literals),
            ("hosts", share.redact_hosts),
            ("users", share.redact_users),
            ("schemas", share.redact_schemas),
        )
        if on
    ]
    return ", ".join(kinds) or "none"
