"""Team membership by consent: a team admin invites, the engineer accepts or declines.

A team admin invites an active account, named by its user name or e-mail, to his team
(``invitation_create``); nothing changes for that engineer until he accepts the invitation on his own
settings page (``invitation_accept``), which makes him a member (never an admin). He may decline it;
the admin may withdraw it while it is pending; it expires after ``INVITATION_DAYS``. The other way in
is a site admin's: the Django admin or ``manage.py create_engineer --team``. Every step is written to
the audit trail (web/audit.py) under the team, so the team's admins see it in its trail.

What an admin learns of an invitee before he accepts: his user name, and the state of the
invitation. His e-mail, last login and tokens are shown only once he is a member (web/accounts/teams.py).
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from web import audit
from web.accounts import teams
from web.models import AuditAction, InvitationState, Team, TeamInvitation

#: Days an invitation answers: long enough for a holiday, short enough that a forgotten one lapses.
INVITATION_DAYS = 14


class InvitationError(Exception):
    """An invitation that cannot be made (no such account, a member already); the message says why."""


# ---------------------------------------------------------------------------------- selectors
def _live() -> QuerySet[TeamInvitation]:
    return TeamInvitation.objects.filter(state=InvitationState.PENDING, expires_at__gt=timezone.now())


def pending_for_user(user) -> QuerySet[TeamInvitation]:  # noqa: ANN001
    """The invitations ``user`` may answer now, newest first, with their team and who invited him."""
    if user is None or not user.is_authenticated:
        return TeamInvitation.objects.none()
    return _live().filter(user=user).select_related("team", "invited_by")


def invitation_rows(team: Team) -> list[dict[str, object]]:
    """The team's pending invitations as the team page lists them: the invitee's user name only (not
    his e-mail: he is no member yet), who invited him, when, until when."""
    return [
        {
            "id": i.pk,
            "username": i.user.get_username(),
            "invited_by": i.invited_by.get_username() if i.invited_by else "",
            "created_at": i.created_at,
            "expires_at": i.expires_at,
        }
        for i in _live().filter(team=team).select_related("user", "invited_by")
    ]


def _account_named(name: str):  # noqa: ANN202 - a user
    """The active account whose user name or e-mail is ``name`` (case-insensitive). Raises
    ``InvitationError`` when there is none, or when an e-mail names several accounts."""
    name = (name or "").strip()[:254]
    if not name:
        raise InvitationError("Give a user name or an e-mail address.")
    found = list(
        get_user_model().objects.filter(Q(username__iexact=name) | Q(email__iexact=name), is_active=True)[:2]
    )
    exact = [u for u in found if u.get_username() == name]
    if len(exact) == 1:
        return exact[0]
    if len(found) == 1:
        return found[0]
    if found:
        raise InvitationError("That e-mail belongs to several accounts: give the user name.")
    raise InvitationError(f"No single active account is called {name!r}.")


# ---------------------------------------------------------------------------------- services
@transaction.atomic
def invitation_create(*, team: Team, name: str, request) -> TeamInvitation:  # noqa: ANN001
    """Invite the account named ``name`` (user name or e-mail) to ``team`` on behalf of
    ``request.user`` (its admin: the caller checked). A pending invitation of the same engineer is
    renewed (its expiry pushed back), not doubled. Raises ``InvitationError`` for no such account or
    one that is a member already."""
    user = _account_named(name)
    if team.members.filter(pk=user.pk).exists():
        raise InvitationError(f"{user.get_username()} is a member of {team.name} already.")
    expires = timezone.now() + timedelta(days=INVITATION_DAYS)
    TeamInvitation.objects.filter(team=team, user=user, state=InvitationState.PENDING).update(
        state=InvitationState.WITHDRAWN, answered_at=timezone.now()
    )
    invitation = TeamInvitation.objects.create(
        team=team, user=user, invited_by=request.user, expires_at=expires
    )
    audit.record(
        action=AuditAction.MEMBER_INVITED,
        request=request,
        team_id=team.pk,
        detail={"member": user.get_username(), "invitation": invitation.pk},
    )
    return invitation


def _answer(invitation: TeamInvitation, state: InvitationState, action: AuditAction, request) -> None:  # noqa: ANN001
    invitation.state, invitation.answered_at = state, timezone.now()
    invitation.save(update_fields=["state", "answered_at"])
    audit.record(
        action=action,
        request=request,
        team_id=invitation.team_id,
        detail={"member": invitation.user.get_username(), "invitation": invitation.pk},
    )


@transaction.atomic
def invitation_withdraw(*, team: Team, invitation_id: int, request) -> bool:  # noqa: ANN001
    """Withdraw the pending invitation ``invitation_id`` of ``team``; False when there is none."""
    invitation = _live().select_for_update().filter(team=team, pk=invitation_id).first()
    if invitation is None:
        return False
    _answer(invitation, InvitationState.WITHDRAWN, AuditAction.INVITATION_WITHDRAWN, request)
    return True


@transaction.atomic
def invitation_accept(*, user, invitation_id: int, request) -> Team | None:  # noqa: ANN001
    """``user`` accepts his pending invitation ``invitation_id``: he becomes a member (not an admin)
    of its team, which is returned; None when he holds no such live invitation (someone else's,
    answered, withdrawn or expired)."""
    invitation = pending_for_user(user).select_for_update(of=("self",)).filter(pk=invitation_id).first()
    if invitation is None:
        return None
    _answer(invitation, InvitationState.ACCEPTED, AuditAction.INVITATION_ACCEPTED, request)
    teams.member_add(team=invitation.team, user=user)
    return invitation.team


@transaction.atomic
def invitation_decline(*, user, invitation_id: int, request) -> bool:  # noqa: ANN001
    """``user`` declines his pending invitation ``invitation_id``; False when he holds no such one."""
    invitation = pending_for_user(user).select_for_update(of=("self",)).filter(pk=invitation_id).first()
    if invitation is None:
        return False
    _answer(invitation, InvitationState.DECLINED, AuditAction.INVITATION_DECLINED, request)
    return True
