"""The team admin's page (``/teams/<id>/``) and the audit trail's pages (a case's, a team's) with
their CSV exports. Thin: access first (web/accounts/teams.py, ``selectors.cases_for``), then one service or
selector. A team the user does not administer answers 404, like one that does not exist.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from web import audit
from web.accounts import invitations, teams
from web.accounts import notification_views as notify_views
from web.cases.selectors import case_for_user
from web.models import AuditEvent, Team

#: Events a page of the trail shows.
EVENTS_PAGE_SIZE = 100


def _team(request: HttpRequest, team_id: int) -> Team:
    team = teams.team_for_admin(request.user, team_id)
    if team is None:
        raise Http404
    return team


def _events_page(request: HttpRequest, events: QuerySet[AuditEvent]) -> dict[str, object]:
    page = Paginator(events, EVENTS_PAGE_SIZE).get_page(request.GET.get("page"))
    return {"events": [audit.event_row(e) for e in page.object_list], "page": page}


def _csv(events: QuerySet[AuditEvent], name: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        audit.events_csv(events.iterator(chunk_size=2000)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
@require_GET
def team_page(request: HttpRequest, team_id: int) -> HttpResponse:
    """Members (invite, remove) and pending invitations (withdraw), the active share links of the team's cases
    (revoke one, or all of a case), the members' API tokens (revoke), and the latest events of the team."""
    team = _team(request, team_id)
    context = {
        "team": team,
        "members": teams.member_rows(team),
        "invitations": invitations.invitation_rows(team),
        "invitation_days": invitations.INVITATION_DAYS,
        "shares": teams.share_rows(team),
        "tokens": teams.token_rows(team),
        **notify_views.team_context(request, team),
        **_events_page(request, audit.team_events(team)),
    }
    return render(request, "teams/team.html", context)


def _back(team: Team) -> HttpResponse:
    return redirect("team-page", team_id=team.pk)


@login_required
@require_POST
def team_invite(request: HttpRequest, team_id: int) -> HttpResponse:
    """Invite the engineer named in ``name`` (user name or e-mail): a member once he accepts. An
    invitation by e-mail is answered alike whether an account holds the address or not."""
    team = _team(request, team_id)
    try:
        invitation = invitations.invitation_create(
            team=team, name=request.POST.get("name", ""), request=request
        )
    except invitations.InvitationError as exc:
        messages.warning(request, str(exc))
    else:
        messages.success(request, _invited(invitation, team))
    return _back(team)


def _invited(invitation, team: Team) -> str:  # noqa: ANN001 - a TeamInvitation
    if invitation.address:
        return (
            f"Invitation sent to {invitation.address}: the account with that address sees it on its "
            "settings page, "
            f"and is a member of {team.name} once it accepts."
        )
    return (
        f"{invitation.user.get_username()} is invited to {team.name}: a member once the invitation is "
        "accepted."
    )


def _act(request: HttpRequest, team_id: int, service, done: str, missing: str, **ids: int) -> HttpResponse:  # noqa: ANN001
    """Run one team admin's ``service`` (web/accounts/teams.py) on the team and ``ids``; say ``done`` when it
    did something (a count or True), ``missing`` otherwise; back to the team page."""
    team = _team(request, team_id)
    if service(team=team, request=request, **ids):
        messages.success(request, done)
    else:
        messages.warning(request, missing)
    return _back(team)


@login_required
@require_POST
def team_member_remove(request: HttpRequest, team_id: int, user_id: int) -> HttpResponse:
    return _act(
        request,
        team_id,
        teams.member_remove,
        "The member is removed from the team.",
        "No such member.",
        user_id=user_id,
    )


@login_required
@require_POST
def team_invitation_withdraw(request: HttpRequest, team_id: int, invitation_id: int) -> HttpResponse:
    return _act(
        request,
        team_id,
        invitations.invitation_withdraw,
        "The invitation is withdrawn.",
        "No such pending invitation.",
        invitation_id=invitation_id,
    )


@login_required
@require_POST
def team_share_revoke(request: HttpRequest, team_id: int, share_id: int) -> HttpResponse:
    return _act(
        request,
        team_id,
        teams.team_share_revoke,
        "The link is revoked: it answers 404 from now on.",
        "No such active link.",
        share_id=share_id,
    )


@login_required
@require_POST
def team_case_shares_revoke(request: HttpRequest, team_id: int, case_id: int) -> HttpResponse:
    return _act(
        request,
        team_id,
        teams.case_shares_revoke,
        f"The links of case {case_id} are revoked.",
        f"Case {case_id} has no active link of this team.",
        case_id=case_id,
    )


@login_required
@require_POST
def team_token_revoke(request: HttpRequest, team_id: int, token_id: int) -> HttpResponse:
    return _act(
        request,
        team_id,
        teams.team_token_revoke,
        "The token is revoked: requests that present it are refused from now on.",
        "No such active token.",
        token_id=token_id,
    )


@login_required
@require_GET
def team_events_csv(request: HttpRequest, team_id: int) -> StreamingHttpResponse:
    team = _team(request, team_id)
    return _csv(audit.team_events(team), f"team-{team.pk}-events.csv")


@require_GET
def case_events(request: HttpRequest, case_id: int) -> HttpResponse:
    """The audit trail of one case, for the engineers of its team."""
    if not request.user.is_authenticated:
        return redirect(f"/accounts/login/?next={request.path}")
    case = case_for_user(user=request.user, case_id=case_id)
    context = {"case": case, **_events_page(request, audit.case_events(case))}
    return render(request, "cases/events.html", context)


@require_GET
def case_events_csv(request: HttpRequest, case_id: int) -> StreamingHttpResponse:
    case = case_for_user(user=request.user, case_id=case_id)
    return _csv(audit.case_events(case), f"case-{case.pk}-events.csv")


def team_menu(request: HttpRequest) -> dict[str, object]:
    """Template context processor: ``administered_teams``, the teams the user is an admin of (the
    user menu links their pages), and ``pending_invitations``, how many team invitations wait for his
    answer (the top bar links them). Read only when a template uses them."""
    user = getattr(request, "user", None)
    return {
        "administered_teams": lambda: list(teams.administered_teams(user).only("id", "name")),
        "pending_invitations": lambda: invitations.pending_for_user(user).count(),
    }


def urlpatterns() -> list:
    """The team admin's routes and the audit trail's pages."""
    return [
        path("teams/<int:team_id>/", team_page, name="team-page"),
        path("teams/<int:team_id>/invitations/", team_invite, name="team-invite"),
        path(
            "teams/<int:team_id>/invitations/<int:invitation_id>/withdraw/",
            team_invitation_withdraw,
            name="team-invitation-withdraw",
        ),
        path(
            "teams/<int:team_id>/members/<int:user_id>/remove/", team_member_remove, name="team-member-remove"
        ),
        path(
            "teams/<int:team_id>/shares/<int:share_id>/revoke/", team_share_revoke, name="team-share-revoke"
        ),
        path(
            "teams/<int:team_id>/cases/<int:case_id>/shares/revoke/",
            team_case_shares_revoke,
            name="team-case-shares-revoke",
        ),
        path(
            "teams/<int:team_id>/tokens/<int:token_id>/revoke/", team_token_revoke, name="team-token-revoke"
        ),
        path("teams/<int:team_id>/events.csv", team_events_csv, name="team-events-csv"),
        path("cases/<int:case_id>/events/", case_events, name="case-events"),
        path("cases/<int:case_id>/events.csv", case_events_csv, name="case-events-csv"),
    ]
