"""Every read the views, the API and the ``analyze`` command need, as querysets or JSON-ready dicts."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import numpy as np
from django.db.models import Q, QuerySet
from tsdownsample import MinMaxLTTBDownsampler

from web.models import Case, CaseStatus, Finding, SeriesPoint

#: Points per series sent to a chart: enough for a 2,000 px wide chart, bounded whatever the capture length.
MAX_POINTS = 2000
#: vmstat CPU columns, stacked in this order (procps vmstat(8)).
CPU_COLUMNS = ("us", "sy", "wa", "st", "id")
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def case_list(*, q: str = "") -> QuerySet[Case]:
    """Cases newest first, filtered by a free-text ``q`` over title, host and finding keys."""
    cases = Case.objects.select_related("upload").prefetch_related("findings")
    q = q.strip()
    if q:
        cases = cases.filter(
            Q(title__icontains=q) | Q(host__icontains=q) | Q(findings__key__icontains=q)
        ).distinct()
    return cases


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
        "finding_keys": sorted({f.key for f in case.findings.all()}),
        "created_at": _iso(case.created_at),
    }


def case_status(case: Case) -> dict[str, object]:
    """What the upload and case pages poll while a case is processed."""
    return {
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
    }


def findings_for_case(*, case: Case) -> list[dict[str, object]]:
    """Findings most severe first, as stored (evidence as a list of labelled values)."""
    rows = sorted(case.findings.all(), key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), f.position))
    return [
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
        }
        for f in rows
    ]


def case_report(*, case: Case) -> dict[str, object]:
    """The case as one JSON document (``analyze --json`` and ``GET /api/cases/<id>/``); times ISO 8601 UTC."""
    from django.conf import settings

    findings = findings_for_case(case=case)
    return {
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
        "sources": [
            {
                "member": s.member,
                "format": s.format,
                "samples": s.samples,
                "start": _iso(s.start),
                "end": _iso(s.end),
                "clock": s.clock,
                "variant": s.variant,
                "warnings": s.warning_count,
            }
            for s in case.sources.all()
        ],
        "not_used": [{"member": n.member, "reason": n.reason} for n in case.not_used.all()],
        "warnings": list(case.warnings),
        "findings": [
            {
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
            }
            for f in findings
        ],
        "not_evaluated": [
            {"key": r.key, "outcome": r.outcome, "reason": r.detail} for r in case.rule_results.all()
        ],
        "rule_versions": case.rule_versions,
    }


def _upload(case: Case) -> dict[str, object] | None:
    upload = getattr(case, "upload", None)
    if upload is None:
        return None
    return {"name": upload.original_name, "size": upload.size, "sha256": upload.sha256}


def case_detail_context(*, case: Case) -> dict[str, object]:
    """The plain context of the case page."""
    return {
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
            "created_at": _iso(case.created_at),
            "rule_versions": case.rule_versions,
            "upload": _upload(case),
        },
        "sources": [
            {
                "member": s.member,
                "format": s.format,
                "samples": s.samples,
                "start": _iso(s.start),
                "end": _iso(s.end),
                "clock": s.clock,
                "variant": s.variant,
                "warnings": s.warnings[:20],
                "warning_count": s.warning_count,
            }
            for s in case.sources.all()
        ],
        "not_used": [{"member": n.member, "reason": n.reason} for n in case.not_used.all()],
        "warnings": list(case.warnings),
        "findings": findings_for_case(case=case),
        "not_evaluated": [
            {"key": r.key, "reason": r.detail, "outcome": r.outcome} for r in case.rule_results.all()
        ],
    }


def _upload_name(case: Case) -> str:
    upload = getattr(case, "upload", None)
    return upload.original_name if upload else f"Case {case.pk}"


def series_window(
    *,
    case: Case,
    prefix: str,
    start: datetime | None = None,
    end: datetime | None = None,
    max_points: int = MAX_POINTS,
) -> dict[str, list[list[float]]]:
    """Series whose name starts with ``prefix`` as ``{name: [[epoch_ms, value], ...]}``, each downsampled
    to at most ``max_points`` with MinMaxLTTB (keeps peaks, which a plain stride would drop)."""
    rows = SeriesPoint.objects.filter(case=case, series__startswith=prefix)
    if start:
        rows = rows.filter(ts__gte=start)
    if end:
        rows = rows.filter(ts__lte=end)
    grouped: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for name, ts, value in (
        rows.order_by("series", "ts").values_list("series", "ts", "value").iterator(chunk_size=20000)
    ):
        grouped[name].append((ts.timestamp() * 1000.0, np.nan if value is None else value))
    out: dict[str, list[list[float]]] = {}
    for name, points in grouped.items():
        arr = np.asarray(points, dtype="float64")
        if len(arr) > max_points:
            y = np.nan_to_num(arr[:, 1])
            idx = MinMaxLTTBDownsampler().downsample(arr[:, 0], y, n_out=max_points)
            arr = arr[np.sort(idx)]
        out[name] = [[float(t), None if np.isnan(v) else float(v)] for t, v in arr]
    return out


def timeline_charts(*, case: Case) -> dict[str, object]:
    """The chart specs of the case page (see templates' contract): CPU, run queue, processlist states."""
    charts: list[dict[str, object]] = []
    vm = series_window(case=case, prefix="vmstat.")
    cpu = [{"label": c, "data": vm[f"vmstat.{c}"]} for c in CPU_COLUMNS if f"vmstat.{c}" in vm]
    if cpu:
        charts.append(
            {
                "id": "cpu",
                "title": "CPU (vmstat)",
                "unit": "%",
                "stacked": True,
                "kind": "line",
                "series": cpu,
                "hlines": [],
            }
        )
    queue = [{"label": c, "data": vm[f"vmstat.{c}"]} for c in ("r", "b") if f"vmstat.{c}" in vm]
    if queue:
        hlines = [{"label": f"ncpu = {case.ncpu}", "value": case.ncpu}] if case.ncpu else []
        charts.append(
            {
                "id": "runqueue",
                "title": "Run queue r and blocked b vs CPUs (vmstat)",
                "unit": "threads",
                "stacked": False,
                "kind": "line",
                "series": queue,
                "hlines": hlines,
            }
        )
    sys_series = [{"label": c, "data": vm[f"vmstat.{c}"]} for c in ("in", "cs") if f"vmstat.{c}" in vm]
    if sys_series:
        charts.append(
            {
                "id": "system",
                "title": "Interrupts and context switches per second (vmstat)",
                "unit": "/s",
                "stacked": False,
                "kind": "line",
                "series": sys_series,
                "hlines": [],
            }
        )
    mem = [
        {"label": c, "data": vm[f"vmstat.{c}"]}
        for c in ("free_kib", "cache_kib", "buff_kib", "swpd_kib")
        if f"vmstat.{c}" in vm
    ]
    if mem:
        charts.append(
            {
                "id": "memory",
                "title": "Memory (vmstat, KiB)",
                "unit": "KiB",
                "stacked": False,
                "kind": "line",
                "series": mem,
                "hlines": [],
            }
        )
    pl = series_window(case=case, prefix="processlist.state:")
    if pl:
        totals = sorted(pl.items(), key=lambda kv: -sum(v or 0 for _, v in kv[1]))
        charts.append(
            {
                "id": "processlist",
                "title": "Active sessions by State (processlist)",
                "unit": "sessions",
                "stacked": True,
                "kind": "line",
                "series": [{"label": name.split(":", 1)[1], "data": data} for name, data in totals],
                "hlines": [{"label": f"ncpu = {case.ncpu}", "value": case.ncpu}] if case.ncpu else [],
            }
        )
    windows = []
    for f in Finding.objects.filter(case=case).order_by("position"):
        for start, end in f.windows:
            windows.append({"key": f.key, "severity": f.severity, "start_ms": _ms(start), "end_ms": _ms(end)})
    return {"utc_offset_s": case.utc_offset_s, "ncpu": case.ncpu, "charts": charts, "windows": windows}


def _ms(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000.0
