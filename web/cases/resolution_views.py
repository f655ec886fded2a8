"""Closing a case with a resolution and reopening it (case page forms), and what the case page shows
of resolutions and ticket links: the case's own resolution, the resolutions of similar closed cases
(web/history/similar.py ``past_resolutions``), and the ticket as a link under the team's template
(web/notifications/tickets.py). Thin: access (``case_for_user``), one service, one audit event.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from web import audit
from web.cases import selectors, services
from web.cases.forms import ResolutionForm
from web.history import similar
from web.markup import render_markdown
from web.models import AuditAction, Case, ResolutionCategory
from web.notifications.tickets import ticket_url


def resolution_context(request: HttpRequest, case: Case) -> dict[str, object]:
    """The case page's resolution parts (templates/cases/_resolution.html, _similar.html, _verdict.html)."""
    category = case.resolution_category
    return {
        "resolution": {
            "closed": case.closed_at is not None,
            "closed_at": case.closed_at,
            "closed_by": case.closed_by.get_username() if case.closed_by else "",
            "category": ResolutionCategory(category).label if category in ResolutionCategory.values else "",
            "html": render_markdown(case.resolution) if case.resolution else "",
            "form": ResolutionForm(
                initial={
                    "resolution": case.resolution,
                    "category": category or ResolutionCategory.CONFIGURATION,
                }
            ),
            "close_url": reverse("case-close", args=[case.pk]),
            "reopen_url": reverse("case-reopen", args=[case.pk]),
        },
        "past_resolutions": [
            {**r, "html": render_markdown(r["resolution"])}
            for r in similar.past_resolutions(case=case, candidates=selectors.cases_for(request.user))
        ],
        "ticket_url": ticket_url(case.team.ticket_url_template, case.ticket),
    }


@require_POST
def case_close(request: HttpRequest, case_id: int) -> HttpResponse:
    """Close the case with the posted resolution and category (``ResolutionForm``)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    form = ResolutionForm(request.POST)
    if not form.is_valid():
        messages.warning(request, "Give a resolution and a category to close the case.")
        return redirect("case-detail", case_id=case.pk)
    try:
        services.case_close(
            case_id=case.pk,
            user=request.user,
            resolution=form.cleaned_data["resolution"],
            category=form.cleaned_data["category"],
        )
    except ValidationError as exc:
        messages.warning(request, " ".join(exc.messages))
        return redirect("case-detail", case_id=case.pk)
    audit.record(
        action=AuditAction.CASE_CLOSED,
        request=request,
        case=case,
        detail={"category": form.cleaned_data["category"]},
    )
    messages.success(request, "Case closed. Similar cases will show how it was fixed.")
    return redirect("case-detail", case_id=case.pk)


@require_POST
def case_reopen(request: HttpRequest, case_id: int) -> HttpResponse:
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    if case.closed_at is not None:
        services.case_reopen(case_id=case.pk)
        audit.record(action=AuditAction.CASE_REOPENED, request=request, case=case)
        messages.success(request, "Case reopened.")
    return redirect("case-detail", case_id=case.pk)


def urlpatterns() -> list:
    return [
        path("cases/<int:case_id>/close/", case_close, name="case-close"),
        path("cases/<int:case_id>/reopen/", case_reopen, name="case-reopen"),
    ]
