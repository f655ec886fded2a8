"""Views of the web UI: typed function views, access first, then a plain context."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
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

from parsers.passwords import masked, may_hold_secrets
from web import audit
from web.cases import exports, resolution_views, selectors, services
from web.cases.forms import BundleAddForm, CaseDetailsForm, CaseFilterForm, CaseUploadForm
from web.history import compare, similar
from web.markup import render_markdown
from web.models import AuditAction, Case
from web.timeline import charts, moments, ranges
from web.timeline.series import host_param, series_hosts

#: Cases per page of the case list.
PAGE_SIZE = 50

COLLECTOR = Path(settings.BASE_DIR) / "scripts" / "collect.sh"


@login_required
@require_GET
def case_list(request: HttpRequest) -> HttpResponse:
    """The cases of the user's teams: searched, filtered, sorted (``CaseFilterForm``), 50 a page."""
    form = CaseFilterForm(request.GET)
    form.is_valid()
    filters = form.filters()
    page = Paginator(selectors.case_list(user=request.user, filters=filters), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "cases/list.html",
        {
            "cases": [selectors.case_row(c) for c in page.object_list],
            "page": page,
            "form": form,
            "q": filters.q,
            "filtered": filters.active,
            "query": query.urlencode(),
        },
    )


@login_required
@require_GET
def case_new(request: HttpRequest) -> HttpResponse:
    return render(request, "cases/new.html", _new_context(request, CaseUploadForm()))


def _new_context(request: HttpRequest, form: CaseUploadForm, **more: object) -> dict[str, object]:
    """The upload page's context: the form, where it posts, the user's teams (a select when several:
    the team rule of ``services.team_for_new_case``)."""
    return {
        "form": form,
        "upload_url": reverse("case-create"),
        "teams": list(selectors.teams_of(request.user)),
        **more,
    }


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
        return render(request, "cases/new.html", _new_context(request, form), status=400)
    try:
        case = services.case_upload(
            request=request,
            file=form.cleaned_data["bundle"],
            title=form.cleaned_data["title"],
            team_id=form.cleaned_data["team"],
            refuse_duplicate=not form.cleaned_data["allow_duplicate"],
        ).case
    except services.DuplicateUploadError as exc:
        return _duplicate_upload(request, form, exc.earlier, wants_json)
    except ValidationError as exc:
        if wants_json:
            return JsonResponse(services.upload_error_body(exc), status=400)
        form.add_error(None, exc)
        return render(request, "cases/new.html", _new_context(request, form), status=400)
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


def _duplicate_upload(
    request: HttpRequest, form: CaseUploadForm, earlier: list[dict[str, object]], wants_json: bool
) -> HttpResponse:
    """409: these bytes were uploaded before (same SHA-256) as the cases ``earlier``; nothing was
    made. Sending again with ``allow_duplicate`` makes a new case anyway."""
    first = earlier[0]
    message = f"These exact bytes were uploaded before as case #{first['id']} ({first['title']})."
    if wants_json:
        return JsonResponse({"message": message, "extra": {"duplicate_of": earlier}}, status=409)
    return render(request, "cases/new.html", _new_context(request, form, duplicate_of=earlier), status=409)


@require_GET
def case_detail(request: HttpRequest, case_id: int) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    context = selectors.case_detail_context(case=case)
    context["urls"] = {
        "status": reverse("case-status", args=[case.pk]),
        "timeline": reverse("case-timeline", args=[case.pk]),
        "moment": reverse("case-moment", args=[case.pk]),
        "queries": reverse("case-queries", args=[case.pk]),
        "reanalyze": reverse("case-reanalyze", args=[case.pk]),
        "upload_download": reverse("case-upload", args=[case.pk]),
        "findings_json": reverse("case-findings-export", args=[case.pk, "json"]),
        "findings_csv": reverse("case-findings-export", args=[case.pk, "csv"]),
        "series_csv": reverse("case-series-csv", args=[case.pk]),
        "details": reverse("case-details", args=[case.pk]),
        "compare": reverse("case-compare", args=[case.pk]),
    }
    context["shares"] = selectors.share_rows(case)
    context.update(_history_context(request, case))
    return render(request, "cases/detail.html", context)


def _history_context(request: HttpRequest, case: Case, form: CaseDetailsForm | None = None) -> dict:
    """The case page's team parts: the details form and notes, earlier uploads of the same bytes,
    similar cases (templates/cases/_meta.html, _similar.html)."""
    upload = getattr(case, "upload", None)
    visible = selectors.cases_for(request.user)
    return {
        "meta": {
            "customer": case.customer,
            "ticket": case.ticket,
            "tags": list(case.tags),
            "team": case.team.name,
            "notes_html": render_markdown(case.notes),
            "form": form
            or CaseDetailsForm(
                initial={
                    "title": case.title,
                    "customer": case.customer,
                    "ticket": case.ticket,
                    "tags": ", ".join(case.tags),
                    "notes": case.notes,
                }
            ),
        },
        "same_bytes": selectors.earlier_uploads(user=request.user, sha256=upload.sha256, before=case)
        if upload
        else [],
        "similar": similar.similar_cases(case=case, candidates=visible),
        **resolution_views.resolution_context(request, case),
    }


@require_POST
def case_details(request: HttpRequest, case_id: int) -> HttpResponse:
    """Save the case's title, customer, ticket, tags and notes (``CaseDetailsForm``), back to the page."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    form = CaseDetailsForm(request.POST)
    if not form.is_valid():
        context = selectors.case_detail_context(case=case)
        context["urls"] = {"details": reverse("case-details", args=[case.pk])}
        context.update(_history_context(request, case, form))
        return render(request, "cases/detail.html", context, status=400)
    data = form.cleaned_data
    before = {"title": case.title, "customer": case.customer, "ticket": case.ticket, "notes": case.notes}
    changed = [k for k, v in before.items() if data[k] != v] + (
        ["tags"] if form.tag_list() != case.tags else []
    )
    services.case_update_details(
        case_id=case.pk,
        title=data["title"],
        customer=data["customer"],
        ticket=data["ticket"],
        tags=form.tag_list(),
        notes=data["notes"],
    )
    audit.record(
        action=AuditAction.CASE_DETAILS_EDITED, request=request, case=case, detail={"fields": changed}
    )
    messages.success(request, "Case details saved.")
    return redirect("case-detail", case_id=case.pk)


@require_GET
def case_compare(request: HttpRequest, case_id: int) -> HttpResponse:
    """Compare this case (the baseline; one of its hosts with ``?host=<index>``) with
    ``?with=<id>`` or one host of it, ``?with=<id>.<host index>`` (chosen from the team's cases; two
    hosts of this case: ``?host=0&with=<this id>.1``), metrics ``?metric=`` (repeatable). Tables
    server-side; the overlaid charts drawn by static/js/pages/case_compare.js from the same document
    as ``compare.json``."""
    if not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.get_full_path()}")
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    base_host, other, other_host = _compare_sides(request, case)
    hosts = series_hosts(case)
    others = list(selectors.cases_for(request.user).exclude(pk=case.pk).only("id", "title", "host")[:200])
    last = compare.last_case_of_customer(case, selectors.cases_for(request.user))
    context: dict[str, object] = {
        "case": {"id": case.pk, "title": case.title or f"Case {case.pk}", "host": case.host},
        "customer_last": {"id": last.pk, "customer": case.customer} if last is not None else None,
        "base_hosts": [{"index": i, "name": h} for i, h in enumerate(hosts)] if len(hosts) > 1 else [],
        "base_host": request.GET.get("host", ""),
        "choices": compare.compare_choices(case, hosts, others),
        "other_value": request.GET.get("with", "").strip(),
        "comparison": None,
    }
    if other is not None:
        context["comparison"] = compare.compare(
            case, other, request.GET.getlist("metric"), a_host=base_host, b_host=other_host
        )
        context["json_url"] = reverse("case-compare-json", args=[case.pk])
    return render(request, "cases/compare.html", context)


@require_GET
def case_compare_json(request: HttpRequest, case_id: int) -> JsonResponse:
    """The comparison of this case with ``?with=<id>`` as JSON (web/history/compare.py)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    base_host, other, other_host = _compare_sides(request, case)
    if other is None:
        return JsonResponse({"message": "with= names the case to compare with", "extra": {}}, status=400)
    return JsonResponse(
        compare.compare(case, other, request.GET.getlist("metric"), a_host=base_host, b_host=other_host)
    )


def _compare_sides(request: HttpRequest, case: Case) -> tuple[str | None, Case | None, str | None]:
    """(the baseline's host of ``?host=<index>``, the case of ``?with=<id>`` or ``?with=<id>.<index>``
    (None when absent), that case's host). 404 when the user may not see that case, or for an index
    that is not a host of its case."""
    raw = request.GET.get("with", "").strip()
    case_part, _, host_part = raw.partition(".")
    if (raw and not case_part.isdigit()) or (host_part and not host_part.isdigit()):
        raise Http404
    try:
        base_host = host_param(case, request.GET.get("host", "").strip() or None)
        if not raw:
            return base_host, None, None
        other = selectors.case_for_user(user=request.user, case_id=int(case_part))
        return base_host, other, host_param(other, host_part or None)
    except ValueError:
        raise Http404 from None


@require_GET
def case_status(request: HttpRequest, case_id: int) -> JsonResponse:
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    return JsonResponse(selectors.case_status(case))


@require_GET
def case_timeline(request: HttpRequest, case_id: int) -> HttpResponse:
    """The timeline JSON (web/timeline/charts.py): the whole capture's overview, or with ``?start=&end=``
    (epoch ms) a range re-read in detail, optionally only ``?charts=id,id`` (the sections open)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    try:
        start, end = ranges.range_params(request)
    except ValueError:
        return ranges.range_error()
    ids = [c for c in request.GET.get("charts", "").split(",") if c][:50] or None
    if start is None and end is None and ids is None:
        # The whole capture's charts, built at ingest: sent as PostgreSQL keeps the text, without
        # decoding and encoding the JSON on every visit. An overview of an older shape is rebuilt once.
        overview = services.case_overview(case=case)
        if not isinstance(overview, str):
            return JsonResponse(overview)
        if not may_hold_secrets(overview):
            return HttpResponse(overview, content_type="application/json")
        # Labels of a case analysed before they were masked (query fingerprints): masked now.
        return JsonResponse(masked(json.loads(overview)))
    return JsonResponse(charts.timeline_charts(case=case, start=start, end=end, chart_ids=ids))


@require_GET
def case_queries(request: HttpRequest, case_id: int) -> HttpResponse:
    """The *Queries* table's JSON (``selectors.case_queries``): the slow logs' classes over the whole
    log, or with ``?start=&end=`` (epoch ms, the charts' zoom) over that window."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    try:
        start, end = ranges.range_params(request)
    except ValueError:
        return ranges.range_error()
    return JsonResponse(selectors.case_queries(case=case, start=start, end=end))


@require_GET
def case_findings_export(request: HttpRequest, case_id: int, fmt: str) -> HttpResponse:
    """The findings of the case as a download: ``json`` (the report's findings and rules not
    evaluated) or ``csv`` (one row per finding; windows and evidence flattened)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    if fmt not in ("json", "csv"):
        raise Http404
    return exports.findings_download(selectors.case_report(case=case), fmt, f"case-{case.pk}-findings.{fmt}")


@require_GET
def case_series_csv(request: HttpRequest, case_id: int) -> HttpResponse:
    """Every stored series of the charts asked (``?charts=id,id``, default all) between ``?start=``
    and ``?end=`` (epoch ms, default the whole capture) as CSV, one row per instant and series."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    try:
        start, end = ranges.range_params(request)
    except ValueError:
        return ranges.range_error()
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
    source at that moment (web/timeline/moments.py); ``?host=`` (an index in the case's hosts) for one
    host of several."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
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
    try:
        host = moments.host_param(case, request.GET.get("host"))
    except ValueError:
        return JsonResponse(
            {"message": "host must be the index of one of the case's hosts", "extra": {}}, status=400
        )
    return JsonResponse(moments.moment(case=case, at=at, host=host))


@require_POST
def case_reanalyze(request: HttpRequest, case_id: int) -> HttpResponse:
    """Queue the case again from its kept original (also takes back a case whose worker died).
    A browser is sent back to the case page with a message; ``Accept: application/json`` gets
    202 JSON, or 409 JSON while a live worker is processing the case."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        services.case_reanalyze(case_id=case.pk)
    except services.CaseStateError as exc:
        if wants_json:
            return JsonResponse({"message": str(exc), "extra": {"status": case.status}}, status=409)
        messages.warning(request, str(exc))
        return redirect("case-detail", case_id=case.pk)
    audit.record(action=AuditAction.CASE_REANALYZED, request=request, case=case)
    if wants_json:
        return JsonResponse({"id": case.pk, "status_url": reverse("case-status", args=[case.pk])}, status=202)
    messages.success(
        request, "Queued for a fresh analysis of the kept upload. This page follows its progress."
    )
    return redirect("case-detail", case_id=case.pk)


@require_POST
def case_add_bundle(request: HttpRequest, case_id: int) -> HttpResponse:
    """Add another bundle of the same incident (multipart ``bundle``; the case page's "Add another
    host's bundle") and queue the case again (``services.case_add_bundle``). A browser is sent back
    to the case page with a message; ``Accept: application/json`` gets 202 JSON, 400 for a refused
    bundle, 409 while a live worker is processing the case."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    wants_json = "application/json" in request.headers.get("Accept", "")
    form = BundleAddForm(request.POST, request.FILES)
    try:
        if not form.is_valid():
            raise ValidationError("Choose a bundle to add.")
        bundle = form.cleaned_data["bundle"]
        added = services.case_add_bundle(
            case_id=case.pk, user=request.user, file=bundle, original_name=bundle.name
        )
    except (ValidationError, services.CaseStateError) as exc:
        text = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        if wants_json:
            code = 409 if isinstance(exc, services.CaseStateError) else 400
            return JsonResponse({"message": text, "extra": {"status": case.status}}, status=code)
        messages.warning(request, text)
        return redirect("case-detail", case_id=case.pk)
    audit.record_bundle_added(request, added)
    if wants_json:
        return JsonResponse({"id": case.pk, "status_url": reverse("case-status", args=[case.pk])}, status=202)
    messages.success(
        request, f"{added.original_name} is added; the case is queued for analysis over all its bundles."
    )
    return redirect("case-detail", case_id=case.pk)


@require_GET
def case_upload(request: HttpRequest, case_id: int) -> FileResponse:
    """The original bundle, byte for byte, as uploaded."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    upload = case.upload
    response = FileResponse(upload.file.open("rb"), as_attachment=True, filename=upload.original_name)
    audit.record(action=AuditAction.BUNDLE_DOWNLOADED, request=request, case=case)
    return response


@login_required
@require_GET
def collector(request: HttpRequest) -> FileResponse:
    """The collector script customers run on their server (scripts/collect.sh)."""
    return FileResponse(
        COLLECTOR.open("rb"), as_attachment=True, filename="collect.sh", content_type="text/x-shellscript"
    )
