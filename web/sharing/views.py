"""Share links over HTTP: the engineer's side (create, revoke, preview) and the customer's (``/s/<token>/``).

A shared page is the case page (templates/cases/detail.html) in its read-only mode (``read_only``
in the context): no upload, delete, share or re-analyze control, no link to other cases or to the
engineers' pages, its JSON and CSV under the link's own URL, everything redacted as the link says
(web/sharing/payloads.py), and passwords masked on every link, one without redaction too. The
engineer's preview (``/cases/<id>/shares/<share>/preview/``) serves the very same responses, without
counting a view.

Unknown, expired and revoked tokens get one and the same 404, every shared response is ``private``
(beside the site's strict CSP) and bad tokens are limited per client, as for every link by token
(web/tokenlinks.py ``SHARE_LINKS``).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from parsers.passwords import may_hold_secrets
from web import audit
from web.cases import exports, selectors
from web.cases import services as case_services
from web.models import AuditAction, Case, ShareLink
from web.sharing import payloads as share_payloads
from web.sharing import services as shares
from web.sharing.forms import ShareForm
from web.sharing.redaction.redactor import Redactor
from web.timeline import charts, moments, ranges
from web.tokenlinks import SHARE_LINKS, private

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------- engineer's side
@require_POST
def share_create(request: HttpRequest, case_id: int) -> HttpResponse:
    """Make a link (form fields of ``ShareForm``); the answer shows its URL, the only time it is shown."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    form = ShareForm(request.POST)
    if not form.is_valid():
        return render(request, "shares/created.html", {"case_id": case.pk, "form": form}, status=400)
    d = form.cleaned_data
    made = shares.share_create_from_fields(case=case, user=request.user, fields=d)
    audit.record_share_created(request, made.share)
    # The only page that holds the token: kept by no cache, sent as no referrer.
    return private(
        render(
            request,
            "shares/created.html",
            {
                "case_id": case.pk,
                "share": made.share,
                "url": request.build_absolute_uri(made.path),
                "redaction": selectors.redaction_label(made.share),
                "preview_url": reverse("share-preview", args=[case.pk, made.share.pk]),
            },
            status=201,
        )
    )


@require_POST
def share_revoke(request: HttpRequest, case_id: int, share_id: int) -> HttpResponse:
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    share = ShareLink.objects.filter(pk=share_id, case=case).first()
    if share is None:
        raise Http404
    shares.share_revoke(share=share, user=request.user)
    audit.record(action=AuditAction.SHARE_REVOKED, request=request, share=share)
    return redirect(f"{reverse('case-detail', args=[case.pk])}#shares")


# ---------------------------------------------------------------------------------- access
@dataclass(frozen=True)
class Shared:
    """One shared request: the link, its case, its redactor, where its URLs start."""

    share: ShareLink
    case: Case
    redactor: Redactor  # what the link redacts (``choices``); it masks passwords whatever they are
    base: str  # "/s/<token>/" or the preview's "/cases/<id>/shares/<share>/preview/"
    preview: bool


def _resolve_token(request: HttpRequest, token: str) -> Shared | HttpResponse:
    refused = SHARE_LINKS.refused(request)
    if refused is not None:
        return refused
    share = shares.share_for_token(token)
    if share is None:
        return SHARE_LINKS.miss(request)
    case = _case(share.case_id)
    return Shared(share, case, shares.redactor_for(share, case), f"/s/{token}/", False)


def _resolve_preview(request: HttpRequest, case_id: int, share_id: int) -> Shared:
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    share = ShareLink.objects.filter(pk=share_id, case=case).first()
    if share is None:
        raise Http404
    base = reverse("share-preview", args=[case.pk, share.pk])
    return Shared(share, case, shares.redactor_for(share, case), base, True)


def _case(case_id: int) -> Case:
    return Case.objects.select_related("upload").defer("charts_overview").get(pk=case_id)


def shared_view(func: Callable[[HttpRequest, Shared], HttpResponse]) -> Callable[..., HttpResponse]:
    """A view served both at ``/s/<token>/...`` and at the engineer's preview URL, with the shared
    headers on every answer (404 and 429 included)."""

    @functools.wraps(func)
    def view(
        request: HttpRequest, token: str | None = None, case_id: int = 0, share_id: int = 0
    ) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            return private(HttpResponse(status=405, headers={"Allow": "GET, HEAD"}))
        if token is not None:
            shared = _resolve_token(request, token)
            if isinstance(shared, HttpResponse):
                return shared
        else:
            shared = _resolve_preview(request, case_id, share_id)
        return private(func(request, shared))

    return view


# ---------------------------------------------------------------------------------- customer's side
def _withheld(shared: Shared) -> list[str]:
    out = []
    if not shared.share.allow_bundle:
        out.append("the original bundle (not downloadable from this link)")
    if shared.redactor.choices.literals:
        out.append("the text of statements: each is shown as its fingerprint, literals as ?")
    out.append(
        "passwords on command lines and in statements, shown as ***"
        + (" (the bundle is the capture as taken)" if shared.share.allow_bundle else "")
    )
    return out


@shared_view
def shared_page(request: HttpRequest, shared: Shared) -> HttpResponse:
    case = shared.case
    context = share_payloads.page_context(selectors.case_detail_context(case=case), shared.redactor)
    base = shared.base
    context["urls"] = {
        "status": f"{base}status.json",
        "timeline": f"{base}timeline.json",
        "moment": f"{base}moment.json",
        "queries": f"{base}queries.json",
        "report": f"{base}report.json",
        "timeline_csv": f"{base}timeline.csv",
        "series_csv": f"{base}timeline.csv",
        "findings_json": f"{base}findings.json",
        "findings_csv": f"{base}findings.csv",
        "upload_download": f"{base}bundle/" if shared.share.allow_bundle else "",
    }
    context["read_only"] = True
    context["share"] = {
        "preview": shared.preview,
        "expires_at": shared.share.expires_at,
        "redacted": shared.redactor.choices.any,
        "report": shared.redactor.report(),
        "withheld": _withheld(shared),
    }
    if request.method == "GET":
        if not shared.preview:
            shares.share_record_view(shared.share)
        audit.record_share_view(request, shared.share, preview=shared.preview)
    return render(request, "cases/detail.html", context)


@shared_view
def shared_status(request: HttpRequest, shared: Shared) -> HttpResponse:
    return JsonResponse(
        share_payloads.status(selectors.case_status(shared.case), shared.redactor, shared.base)
    )


def _timeline(
    request: HttpRequest, shared: Shared, *, as_text: bool = False
) -> dict[str, object] | HttpResponse:
    """The charts as the link sends them; ``as_text``: the whole capture's charts of a link without
    redaction are answered as stored (JSON text), as the engineer's page gets them, unless they hold
    something a password could be (``may_hold_secrets``: they are then read and masked)."""
    try:
        start, end = ranges.range_params(request)
    except ValueError:
        return ranges.range_error()
    if start is None and end is None:  # the case's overview, as its page gets it (version checked)
        stored = case_services.case_overview(case=shared.case)
        if not isinstance(stored, str):
            data = stored
        elif as_text and not shared.redactor.choices.any and not may_hold_secrets(stored):
            return HttpResponse(stored, content_type="application/json")
        else:
            data = json.loads(stored)
    else:
        data = charts.timeline_charts(case=shared.case, start=start, end=end)
    return share_payloads.timeline(data, shared.redactor)


@shared_view
def shared_timeline(request: HttpRequest, shared: Shared) -> HttpResponse:
    data = _timeline(request, shared, as_text=True)
    return data if isinstance(data, HttpResponse) else JsonResponse(data)


@shared_view
def shared_timeline_csv(request: HttpRequest, shared: Shared) -> HttpResponse:
    data = _timeline(request, shared)
    if isinstance(data, HttpResponse):
        return data
    response = HttpResponse(share_payloads.timeline_csv(data), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="case-{shared.case.pk}-charts.csv"'
    return response


@shared_view
def shared_moment(request: HttpRequest, shared: Shared) -> HttpResponse:
    try:
        at = moments.parse_epoch_ms(request.GET.get("t"))
    except ValueError:
        return JsonResponse({"message": "t must be a time in epoch milliseconds", "extra": {}}, status=400)
    try:
        host = moments.host_param(shared.case, request.GET.get("host"))
    except ValueError:
        return JsonResponse(
            {"message": "host must be the index of one of the case's hosts", "extra": {}}, status=400
        )
    return JsonResponse(
        share_payloads.moment(moments.moment(case=shared.case, at=at, host=host), shared.redactor)
    )


@shared_view
def shared_queries(request: HttpRequest, shared: Shared) -> HttpResponse:
    try:
        start, end = ranges.range_params(request)
    except ValueError:
        return ranges.range_error()
    data = selectors.case_queries(case=shared.case, start=start, end=end)
    return JsonResponse(share_payloads.queries(data, shared.redactor))


@shared_view
def shared_report(request: HttpRequest, shared: Shared) -> HttpResponse:
    data = selectors.case_report(case=shared.case)
    return JsonResponse(share_payloads.report(data, shared.redactor, request.build_absolute_uri(shared.base)))


def _shared_findings(request: HttpRequest, shared: Shared, fmt: str) -> HttpResponse:
    data = selectors.case_report(case=shared.case)
    report = share_payloads.report(data, shared.redactor, request.build_absolute_uri(shared.base))
    return exports.findings_download(report, fmt, f"case-{shared.case.pk}-findings.{fmt}")


@shared_view
def shared_findings_json(request: HttpRequest, shared: Shared) -> HttpResponse:
    return _shared_findings(request, shared, "json")


@shared_view
def shared_findings_csv(request: HttpRequest, shared: Shared) -> HttpResponse:
    return _shared_findings(request, shared, "csv")


@shared_view
def shared_bundle(request: HttpRequest, shared: Shared) -> HttpResponse:
    if not shared.share.allow_bundle or shared.redactor.choices.any:
        return SHARE_LINKS.not_found()
    upload = shared.case.upload
    response = FileResponse(upload.file.open("rb"), as_attachment=True, filename=upload.original_name)
    audit.record(
        action=AuditAction.BUNDLE_DOWNLOADED,
        request=request,
        share=shared.share,
        by_share_link=not shared.preview,
        detail={"through": "share link preview" if shared.preview else "share link"},
    )
    return response


_ENDPOINTS = (
    ("", shared_page, "page"),
    ("status.json", shared_status, "status"),
    ("timeline.json", shared_timeline, "timeline"),
    ("timeline.csv", shared_timeline_csv, "timeline-csv"),
    ("moment.json", shared_moment, "moment"),
    ("queries.json", shared_queries, "queries"),
    ("report.json", shared_report, "report"),
    ("findings.json", shared_findings_json, "findings-json"),
    ("findings.csv", shared_findings_csv, "findings-csv"),
    ("bundle/", shared_bundle, "bundle"),
)


def urlpatterns() -> list:
    """The share routes: engineer's create and revoke, and every shared endpoint under both the
    token URL and the preview URL."""
    routes = [
        path("cases/<int:case_id>/shares/", share_create, name="share-create"),
        path("cases/<int:case_id>/shares/<int:share_id>/revoke/", share_revoke, name="share-revoke"),
    ]
    for suffix, view, name in _ENDPOINTS:
        routes.append(path(f"s/<str:token>/{suffix}", view, name=f"shared-{name}"))
        routes.append(
            path(
                f"cases/<int:case_id>/shares/<int:share_id>/preview/{suffix}",
                view,
                name="share-preview" if not suffix else f"share-preview-{name}",
            )
        )
    return routes
