"""The user's settings page: personal API tokens, made, listed and revoked (web/accounts/services.py),
and the team invitations he may accept or decline (web/accounts/invitations.py).

A new token is shown once, in the answer to the POST that made it (the settings page rendered there,
201, kept by no cache): only its SHA-256 is stored, and the token itself is never written anywhere, not
to the session store (database or cache) either, so it cannot be shown again. The POST is not
redirected: a redirect would need the token kept somewhere until the next page.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from web import audit
from web.accounts import invitations, services
from web.accounts import notification_views as notify_views
from web.accounts.forms import ApiTokenForm
from web.models import AuditAction


def _page(
    request: HttpRequest, form: ApiTokenForm, *, status: int = 200, new_token: dict[str, object] | None = None
) -> HttpResponse:
    """The settings page; ``new_token`` (``{"id", "name", "token"}``): a token just made, shown this once."""
    tokens = [services.token_row(t) for t in services.api_tokens_for(user=request.user)]
    context = {
        "form": form,
        "tokens": tokens,
        "new_token": new_token,
        "api_base": request.build_absolute_uri("/api/"),
        "docs_url": reverse("api-docs"),
        "invitations": invitations.pending_for_user(request.user),
        **notify_views.settings_context(request),
    }
    return render(request, "account/settings.html", context, status=status)


@never_cache
@login_required
@require_GET
def user_settings(request: HttpRequest) -> HttpResponse:
    return _page(request, ApiTokenForm())


@login_required
@require_POST
def api_token_create(request: HttpRequest) -> HttpResponse:
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        row, token = services.api_token_create(user=request.user, name=form.cleaned_data["name"])
    except services.TokenLimitError as exc:
        form.add_error(None, str(exc))
        return _page(request, form, status=400)
    audit.record_token_created(request, user=request.user, token=row)
    # Shown in this answer only, kept by no cache (no-store). Its URL holds nothing secret, so the
    # site's referrer policy stays (no-referrer would send the page's forms with "Origin: null").
    page = _page(
        request, ApiTokenForm(), status=201, new_token={"id": row.pk, "name": row.name, "token": token}
    )
    add_never_cache_headers(page)
    return page


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    if services.api_token_revoke(user=request.user, token_id=token_id):
        audit.record(action=AuditAction.TOKEN_REVOKED, request=request, detail={"token_id": token_id})
        messages.success(request, "The token is revoked: requests that present it are refused from now on.")
    else:
        messages.warning(request, "No such active token.")
    return redirect("user-settings")


@login_required
@require_POST
def invitation_accept(request: HttpRequest, invitation_id: int) -> HttpResponse:
    """Accept one of the user's own pending invitations: he is a member of its team from now on.
    Anyone else's invitation, or an answered or expired one, answers 404."""
    team = invitations.invitation_accept(user=request.user, invitation_id=invitation_id, request=request)
    if team is None:
        raise Http404
    messages.success(request, f"You are a member of {team.name}.")
    return redirect("user-settings")


@login_required
@require_POST
def invitation_decline(request: HttpRequest, invitation_id: int) -> HttpResponse:
    """Decline one of the user's own pending invitations: nothing changes in his teams (404 as above)."""
    if not invitations.invitation_decline(user=request.user, invitation_id=invitation_id, request=request):
        raise Http404
    messages.success(request, "The invitation is declined.")
    return redirect("user-settings")
