"""Views of the web UI: typed function views, access first, then a plain context."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from web import charts, exports, moments, selectors, services, shares
from web.forms import CaseUploadForm
from web.models import Case, CaseStatus

COLLECTOR = Path(settings.BASE_DIR) / "scripts" / "collect.sh"


def _get_case_for_user(request: HttpRequest, case_id: int) -> Case:
    """The case if this user may see it (every signed-in engineer sees every case), else 404."""
    if not request.user.is_authenticated:
        raise Http404
    try:
        # charts_overview (megabytes of JSON) is loaded only by the timeline view that sends it.
        return Case.objects.select_related("upload").defer("charts_overview").get(pk=case_id)
    except Case.DoesNotExist as exc:
        raise Http404 from exc


@login_required
@require_GET
def case_list(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "")[:200]
    cases = [selectors.case_row(c) for c in selectors.case_list(q=q)[:200]]
    return render(request, "cases/list.html", {"cases": cases, "q": q})


@login_required
@require_GET
def case_new(request: HttpRequest) -> HttpResponse:
    return render(request, "cases/new.html", {"form": CaseUploadForm(), "upload_url": reverse("case-create")})


@login_required
@require_POST
def case_create(request: HttpRequest) -> HttpResponse:
    """Multipart upload (fields ``title``, ``bundle``). 201 JSON for scripts and the upload page;
    a plain form post (no ``Accept: application/json``) is redirected to the case page."""
    form = CaseUploadForm(request.POST, request.FILES)
    wants_json = "application/json" in request.headers.get("Accept", "")
    if not form.is_valid():
        if wants_json:
            return JsonResponse(
                {"message": "The upload is not valid.", "extra": form.errors.get_json_data()}, status=400
            )
        return render(
            request, "cases/new.html", {"form": form, "upload_url": reverse("case-create")}, status=400
        )
    bundle = form.cleaned_data["bundle"]
    try:
        case = services.case_create(
            user=request.user, file=bundle, original_name=bundle.name, title=form.cleaned_data["title"]
        )
    except ValidationError as exc:
        return JsonResponse({"message": " ".join(exc.messages), "extra": {}}, status=400)
    if not wants_json:
        return redirect("case-detail", case_id=case.pk)
    return JsonResponse(
        {
            "id": case.pk,
            "url": reverse("case-detail", args=[case.pk]),
            "status_url": reverse("case-status", args=[case.pk]),
        },
        status=201,
    )


@require_GET
def case_detail(request: HttpRequest, case_id: int) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    case = _get_case_for_user(request, case_id)
    context = selectors.case_detail_context(case=case)
    context["urls"] = {
        "status": reverse("case-status", args=[case.pk]),
        "timeline": reverse("case-timeline", args=[case.pk]),
        "moment": reverse("case-moment", args=[case.pk]),
        "reanalyze": reverse("case-reanalyze", args=[case.pk]),
        "upload_download": reverse("case-upload", args=[case.pk]),
        "findings_json": reverse("case-findings-export", args=[case.pk, "json"]),
        "findings_csv": reverse("case-findings-export", args=[case.pk, "csv"]),
        "series_csv": reverse("case-series-csv", args=[case.pk]),
    }
    context["shares"] = shares.share_rows(case)
    return render(request, "cases/detail.html", context)


@require_GET
def case_status(request: HttpRequest, case_id: int) -> JsonResponse:
    case = _get_case_for_user(request, case_id)
    return JsonResponse(selectors.case_status(case))


@require_GET
def case_timeline(request: HttpRequest, case_id: int) -> HttpResponse:
    """The timeline JSON (web/charts.py): the whole capture's overview, or with ``?start=&end=``
    (epoch ms) a range re-read in detail, optionally only ``?charts=id,id`` (the sections open)."""
    case = _get_case_for_user(request, case_id)
    try:
        start, end = (_ms_param(request, name) for name in ("start", "end"))
    except ValueError:
        return JsonResponse({"message": "start and end are epoch milliseconds", "extra": {}}, status=400)
    ids = [c for c in request.GET.get("charts", "").split(",") if c][:50] or None
    if start is None and end is None and ids is None:
        # The whole capture's charts, built at ingest: sent as PostgreSQL keeps the text, without
        # decoding and encoding the JSON on every visit. An overview of an older shape is rebuilt once.
        row = (
            Case.objects.filter(pk=case.pk)
            .annotate(version=KeyTextTransform("version", "charts_overview"))
            .values_list(Cast("charts_overview", output_field=TextField()), "version")
            .first()
        )
        if row and row[0] is not None and row[1] == str(charts.VERSION):
            return HttpResponse(row[0], content_type="application/json")
        overview = charts.timeline_charts(case=case, max_points=charts.OVERVIEW_POINTS)
        if case.status == CaseStatus.READY:
            Case.objects.filter(pk=case.pk, generation=case.generation).update(charts_overview=overview)
        return JsonResponse(overview)
    return JsonResponse(charts.timeline_charts(case=case, start=start, end=end, chart_ids=ids))


@require_GET
def case_findings_export(request: HttpRequest, case_id: int, fmt: str) -> HttpResponse:
    """The findings of the case as a download: ``json`` (the report's findings and rules not
    evaluated) or ``csv`` (one row per finding; windows and evidence flattened)."""
    case = _get_case_for_user(request, case_id)
    if fmt not in ("json", "csv"):
        raise Http404
    return findings_download(selectors.case_report(case=case), fmt, f"case-{case.pk}-findings.{fmt}")


def findings_download(report: dict[str, object], fmt: str, name: str) -> HttpResponse:
    """The findings of a report (the case's, or a share link's redacted copy) as a ``json`` or ``csv``
    attachment named ``name``."""
    if fmt == "json":
        response = HttpResponse(exports.findings_json(report), content_type="application/json")
    else:
        response = HttpResponse(exports.findings_csv(report), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
def case_series_csv(request: HttpRequest, case_id: int) -> HttpResponse:
    """Every stored series of the charts asked (``?charts=id,id``, default all) between ``?start=``
    and ``?end=`` (epoch ms, default the whole capture) as CSV, one row per instant and series."""
    case = _get_case_for_user(request, case_id)
    try:
        start, end = (_ms_param(request, name) for name in ("start", "end"))
    except ValueError:
        return JsonResponse({"message": "start and end are epoch milliseconds", "extra": {}}, status=400)
    ids = [c for c in request.GET.get("charts", "").split(",") if c][:50] or None
    response = StreamingHttpResponse(
        exports.series_csv_lines(case=case, start=start, end=end, chart_ids=ids),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="case-{case.pk}-series.csv"'
    return response


@require_GET
def case_moment(request: HttpRequest, case_id: int) -> JsonResponse:
    """The processlist and thread snapshots nearest to ``?t=`` (epoch ms) and the raw lines of every
    source at that moment (web/moments.py)."""
    case = _get_case_for_user(request, case_id)
    try:
        at = moments.parse_epoch_ms(request.GET.get("t"))
    except ValueError:
        return JsonResponse(
            {
                "message": "t must be a time in epoch milliseconds",
                "extra": {"t": request.GET.get("t", "")[:40]},
            },
            status=400,
        )
    return JsonResponse(moments.moment(case=case, at=at))


def _ms_param(request: HttpRequest, name: str) -> datetime | None:
    raw = request.GET.get(name)
    return datetime.fromtimestamp(float(raw) / 1000.0, tz=UTC) if raw else None


@require_POST
def case_reanalyze(request: HttpRequest, case_id: int) -> HttpResponse:
    """Queue the case again from its kept original (also takes back a case whose worker died).
    A browser is sent back to the case page with a message; ``Accept: application/json`` gets
    202 JSON, or 409 JSON while a live worker is processing the case."""
    case = _get_case_for_user(request, case_id)
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        services.case_reanalyze(case_id=case.pk)
    except services.CaseStateError as exc:
        if wants_json:
            return JsonResponse({"message": str(exc), "extra": {"status": case.status}}, status=409)
        messages.warning(request, str(exc))
        return redirect("case-detail", case_id=case.pk)
    if wants_json:
        return JsonResponse({"id": case.pk, "status_url": reverse("case-status", args=[case.pk])}, status=202)
    messages.success(
        request, "Queued for a fresh analysis of the kept upload. This page follows its progress."
    )
    return redirect("case-detail", case_id=case.pk)


@require_GET
def case_upload(request: HttpRequest, case_id: int) -> FileResponse:
    """The original bundle, byte for byte, as uploaded."""
    case = _get_case_for_user(request, case_id)
    upload = case.upload
    return FileResponse(upload.file.open("rb"), as_attachment=True, filename=upload.original_name)


@login_required
@require_GET
def collector(request: HttpRequest) -> FileResponse:
    """The collector script customers run on their server (scripts/collect.sh)."""
    return FileResponse(
        COLLECTOR.open("rb"), as_attachment=True, filename="collect.sh", content_type="text/x-shellscript"
    )
