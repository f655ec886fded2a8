"""Upload links over HTTP: the engineers' page (``/upload-links/``: make, list, revoke) and the
customer's (``/u/<token>/``: the drop zone, and ``/u/<token>/files/<key>/status.json``, the status of
what was sent). The tus endpoints are web/uploads/tus.py.

The customer's page needs no account; it loads tus-js-client (static/vendor/) and
static/js/pages/upload_link.js, which send the bundle in chunks of CASEBOOK_UPLOAD_CHUNK_BYTES and resume
after a broken connection (HEAD for the offset, PATCH from there). Afterwards it shows the case's status and
nothing else: no case page, no finding, no host name.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from web.models import AuditAction
from web.tokenlinks import UPLOAD_LINKS, private
from web.uploads import services, tus
from web.uploads.forms import UploadLinkForm

COLLECTOR = Path(__file__).resolve().parents[2] / "scripts" / "collect.sh"


# ---------------------------------------------------------------------------------- engineers' side
@login_required
def link_list(request: HttpRequest) -> HttpResponse:
    """The links of the user's teams with their state, and the form that makes one."""
    form = UploadLinkForm(user=request.user)
    return _list_page(request, form)


def _list_page(request: HttpRequest, form: UploadLinkForm, made=None, status: int = 200):  # noqa: ANN001, ANN202
    links = [
        (link, services.link_state(link), services.inactive_reason(link))
        for link in services.links_for(request.user)[:200]
    ]
    context = {"form": form, "links": links, "made": made}
    if made is not None:
        context["url"] = request.build_absolute_uri(made.path)
    response = render(request, "uploads/links.html", context, status=status)
    # Kept by no cache (it may hold a new link). Not ``web.tokenlinks.private``: with no referrer, the
    # browser would send its forms with ``Origin: null``, which the CSRF check refuses.
    response["Cache-Control"] = "no-store, private"
    return response


@login_required
@require_POST
def link_create(request: HttpRequest) -> HttpResponse:
    """Make a link; the answer shows its URL, the only time it is shown."""
    form = UploadLinkForm(request.POST, user=request.user)
    if not form.is_valid():
        return _list_page(request, form, status=400)
    d = form.cleaned_data
    try:
        made = services.link_create_from_fields(
            user=request.user, fields={**d, "max_bytes": int(d["max_size_mb"] * 1024 * 1024)}
        )
    except ValueError as exc:
        form.add_error(None, str(exc))
        return _list_page(request, form, status=400)
    services.audit_link(request, made.link, AuditAction.UPLOAD_LINK_CREATED)
    return _list_page(request, UploadLinkForm(user=request.user), made=made, status=201)


@login_required
@require_POST
def link_revoke(request: HttpRequest, link_id: int) -> HttpResponse:
    link = services.links_for(request.user).filter(pk=link_id).first()
    if link is None:
        raise Http404
    if link.revoked_at is None:
        services.link_revoke(link=link, user=request.user)
        services.audit_link(request, link, AuditAction.UPLOAD_LINK_REVOKED)
    return redirect("upload-links")


# ---------------------------------------------------------------------------------- customer's side
def customer_page(request: HttpRequest, token: str) -> HttpResponse:
    """The drop zone of a link that takes an upload; the one 404 otherwise."""
    refused = UPLOAD_LINKS.refused(request)
    if refused is not None:
        return refused
    if request.method not in ("GET", "HEAD"):
        return private(HttpResponse(status=405, headers={"Allow": "GET, HEAD"}))
    link = services.link_for_token(token)
    if link is None:
        return UPLOAD_LINKS.miss(request)
    context = {
        "read_only": True,
        "endpoint": f"/u/{token}/files/",
        "chunk_bytes": settings.CASEBOOK_UPLOAD_CHUNK_BYTES,
        "max_bytes": min(link.max_bytes, services.max_size_limit()),
        "uploads_left": link.uploads_allowed - link.uploads_used,
    }
    return private(render(request, "uploads/customer.html", context))


def transfer_status(request: HttpRequest, token: str, key: str) -> HttpResponse:
    """``{"status", "received", "length", "message"}`` of one upload (``services.transfer_status``)."""
    refused = UPLOAD_LINKS.refused(request)
    if refused is not None:
        return refused
    transfer = services.transfer_for(token, key)
    if transfer is None:
        return UPLOAD_LINKS.miss(request)
    return private(JsonResponse(services.transfer_status(transfer)))


def collector(request: HttpRequest, token: str) -> HttpResponse:
    """The collector script (scripts/collect.sh) for the holder of a live link, who has no login."""
    refused = UPLOAD_LINKS.refused(request)
    if refused is not None:
        return refused
    if services.link_for_token(token) is None:
        return UPLOAD_LINKS.miss(request)
    response = FileResponse(
        COLLECTOR.open("rb"), as_attachment=True, filename="collect.sh", content_type="text/x-shellscript"
    )
    return private(response)


def urlpatterns() -> list:
    """The upload-link routes: the engineers' page, the customer's page, tus and the status."""
    return [
        path("upload-links/", link_list, name="upload-links"),
        path("upload-links/create/", link_create, name="upload-link-create"),
        path("upload-links/<int:link_id>/revoke/", link_revoke, name="upload-link-revoke"),
        path("u/<str:token>/", customer_page, name="upload-link-page"),
        path("u/<str:token>/collect.sh", collector, name="upload-link-collector"),
        path("u/<str:token>/files/", tus.creation, name="upload-link-tus"),
        # An upload's URL has no trailing slash (``curl -T FILE URL/`` would append FILE's name to
        # it); with one it answers too.
        path("u/<str:token>/files/<str:key>", tus.upload, name="upload-link-tus-upload"),
        path("u/<str:token>/files/<str:key>/", tus.upload),
        path("u/<str:token>/files/<str:key>/status.json", transfer_status, name="upload-link-status"),
    ]
