"""Team admins: the members of a team, its live share links and its members' API tokens.

A team admin (``Team.admins``, always a member too) invites engineers (web/accounts/invitations.py:
nothing is membership until the engineer accepts) and removes members, sees every active share link of the
team's cases (who made it, for whom, expiry, last view) and revokes one or all of a case's, and sees the
e-mail and last login of the team's members and sees and revokes their API tokens (of members only: an
invitee's are not shown). Revocations go through the share and token services (web/sharing/services.py,
web/accounts/services.py); every change is written to the audit trail (web/audit.py). Services write,
selectors read; nothing here looks at ``is_superuser``: a site admin manages teams in the Django admin, and is
a team admin only where he is made one, and adds members there without an invitation.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from web import audit
from web.accounts import services as api_tokens
from web.cases.selectors import redaction_label
from web.models import ApiToken, AuditAction, ShareLink, Team, UploadLink
from web.sharing import services as shares
from web.uploads import services as upload_links


# ---------------------------------------------------------------------------------- selectors
def administered_teams(user) -> QuerySet[Team]:  # noqa: ANN001 - a user or AnonymousUser
    """The teams ``user`` is an admin of, by name (none for an anonymous or inactive user)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return Team.objects.none()
    return Team.objects.filter(admins=user, members=user)


def team_for_admin(user, team_id: int) -> Team | None:  # noqa: ANN001
    """The team ``team_id`` if ``user`` is its admin, else None (the view answers 404)."""
    return administered_teams(user).filter(pk=team_id).first()


def member_rows(team: Team) -> list[dict[str, object]]:
    """The team's members by user name: id, user name, e-mail, admin or not, last login."""
    admins = set(team.admins.values_list("pk", flat=True))
    return [
        {
            "id": u.pk,
            "username": u.get_username(),
            "email": u.email,
            "admin": u.pk in admins,
            "active": u.is_active,
            "last_login": u.last_login,
        }
        for u in team.members.order_by("username")
    ]


def active_shares(team: Team) -> QuerySet[ShareLink]:
    """The links of the team's cases that answer now (not revoked, not expired), newest first."""
    return ShareLink.objects.filter(
        case__team=team, revoked_at__isnull=True, expires_at__gt=timezone.now()
    ).select_related("case", "created_by")


def share_rows(team: Team) -> list[dict[str, object]]:
    """``active_shares`` as the team page lists them."""
    return [
        {
            "id": s.pk,
            "case_id": s.case_id,
            "case_title": s.case.title or f"Case {s.case_id}",
            "label": s.label,
            "created_by": s.created_by.get_username() if s.created_by else "",
            "created_at": s.created_at,
            "expires_at": s.expires_at,
            "last_viewed_at": s.last_viewed_at,
            "view_count": s.view_count,
            "redaction": redaction_label(s),
        }
        for s in active_shares(team)
    ]


def active_tokens(team: Team) -> QuerySet[ApiToken]:
    """The active API tokens of the team's members, newest first (a token opens every team of its
    owner: the admin of each may revoke it)."""
    return ApiToken.objects.filter(user__teams=team, revoked_at__isnull=True).select_related("user")


def token_rows(team: Team) -> list[dict[str, object]]:
    """``active_tokens`` as the team page lists them (``services.token_row``)."""
    return [api_tokens.token_row(t) for t in active_tokens(team)]


# ---------------------------------------------------------------------------------- services
@transaction.atomic
def member_add(*, team: Team, user, admin: bool = False, request=None) -> None:  # noqa: ANN001
    """Make ``user`` a member of ``team`` (an admin as well with ``admin``): for the accepted
    invitation (web/accounts/invitations.py) and the site admin's ``create_engineer --team``, never
    on a team admin's word alone. Recorded when a ``request`` is given. Adding a member twice changes
    nothing."""
    new = not team.members.filter(pk=user.pk).exists()
    team.members.add(user)
    if admin:
        team.admins.add(user)
    if new and request is not None:
        audit.record(
            action=AuditAction.MEMBER_ADDED,
            request=request,
            team_id=team.pk,
            detail={"member": user.get_username(), "admin": admin},
        )


@transaction.atomic
def member_remove(*, team: Team, user_id: int, request) -> bool:  # noqa: ANN001
    """Take the member ``user_id`` out of ``team`` (and its admins), and revoke his upload links for the
    team; False when he is no member."""
    user = team.members.filter(pk=user_id).first()
    if user is None:
        return False
    team.admins.remove(user)
    team.members.remove(user)
    audit.record(
        action=AuditAction.MEMBER_REMOVED,
        request=request,
        team_id=team.pk,
        detail={"member": user.get_username()},
    )
    # His upload links for the team make cases in his name there: revoked with him (a link answers only
    # while its maker is a member anyway, web/uploads/services.py maker_in_team, for a removal made in
    # the Django admin; revoked, it stays so should he come back).
    for link in UploadLink.objects.filter(team=team, created_by=user, revoked_at__isnull=True):
        upload_links.link_revoke(link=link, user=request.user)
        upload_links.audit_link(request, link, AuditAction.UPLOAD_LINK_REVOKED)
    return True


def share_revoke(*, team: Team, share: ShareLink, request) -> None:  # noqa: ANN001
    """Revoke ``share`` (web/sharing/services.py) and record it; the caller found it among the team's."""
    shares.share_revoke(share=share, user=request.user)
    audit.record(action=AuditAction.SHARE_REVOKED, request=request, share=share)


def team_share_revoke(*, team: Team, share_id: int, request) -> bool:  # noqa: ANN001
    """Revoke the active link ``share_id`` of a case of ``team``; False when there is none."""
    share = active_shares(team).filter(pk=share_id).first()
    if share is None:
        return False
    share_revoke(team=team, share=share, request=request)
    return True


def case_shares_revoke(*, team: Team, case_id: int, request) -> int:  # noqa: ANN001
    """Revoke every active link of the team's case ``case_id``; how many were revoked."""
    links = list(active_shares(team).filter(case_id=case_id))
    for share in links:
        share_revoke(team=team, share=share, request=request)
    return len(links)


def team_token_revoke(*, team: Team, token_id: int, request) -> bool:  # noqa: ANN001
    """Revoke the active API token ``token_id`` of a member of ``team`` (web/accounts/services.py), and
    record it; False when no member holds such a token."""
    token = active_tokens(team).filter(pk=token_id).first()
    if token is None or not api_tokens.api_token_revoke(user=token.user, token_id=token.pk):
        return False
    audit.record(
        action=AuditAction.TOKEN_REVOKED,
        request=request,
        team_id=team.pk,
        detail={"token": token.name, "prefix": token.prefix, "owner": token.user.get_username()},
    )
    return True
