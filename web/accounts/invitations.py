"""Team membership by consent: a team admin invites, the engineer accepts or declines.

A team admin invites an engineer to his team by user name or by e-mail address
(``invitation_create``); nothing changes for that engineer until he accepts the invitation on his own
settings page (``invitation_accept``), which makes him a member (never an admin). He may decline it;
the admin may withdraw it while it is pending; it expires after ``INVITATION_DAYS``. The other way in
is a site admin's: the Django admin or ``manage.py create_engineer --team``. Every step is written to
the audit trail (web/audit.py) under the team, so the team's admins see it in its trail.

What an admin learns of an invitee before he answers:
- invited by user name (the admin knows it already): that the account exists, the state of the
  invitation;
- invited by e-mail: nothing. The invitation is kept by its address (``TeamInvitation.address``) and
  answered by whichever active account holds that address (``pending_for_user``); the answer, the
  pending list and the trail say the same whether an account holds it or not, and never its user name.
  An address is anything with an ``@`` (a user name that looks like an address is invited by address).
His e-mail, last login and tokens are shown only once he is a member (web/accounts/teams.py); his
answer is his own act, recorded under his name.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from web import audit
from web.accounts import teams
from web.models import AuditAction, InvitationState, Team, TeamInvitation

#: Days an invitation answers: long enough for a holiday, short enough that a forgotten one lapses.
INVITATION_DAYS = 14


class InvitationError(Exception):
    """An invitation that cannot be made (no such user name, a member already, a malformed address);
    the message says why."""


# ---------------------------------------------------------------------------------- selectors
def _live() -> QuerySet[TeamInvitation]:
    return TeamInvitation.objects.filter(state=InvitationState.PENDING, expires_at__gt=timezone.now())


def pending_for_user(user) -> QuerySet[TeamInvitation]:  # noqa: ANN001
    """The invitations ``user`` may answer now, newest first, with their team and who invited him: those
    naming him, and those sent to his e-mail address (case-insensitive), except to a team he is in."""
    if user is None or not user.is_authenticated:
        return TeamInvitation.objects.none()
    his = Q(user=user)
    if user.email:
        his |= Q(user__isnull=True, address__iexact=user.email)
    return _live().filter(his).exclude(team__members=user).select_related("team", "invited_by")


def invitation_rows(team: Team) -> list[dict[str, object]]:
    """The team's pending invitations as the team page lists them: ``invitee``, the user name or the
    address the admin typed (never the user name of an account holding that address, nor the e-mail
    of one invited by user name), who invited him, when, until when."""
    return [
        {
            "id": i.pk,
            "invitee": i.address or i.user.get_username(),
            "invited_by": i.invited_by.get_username() if i.invited_by else "",
            "created_at": i.created_at,
            "expires_at": i.expires_at,
        }
        for i in _live().filter(team=team).select_related("user", "invited_by")
    ]


def _address(name: str) -> str | None:
    """``name`` as an e-mail address when it is one (it holds an ``@``); None for a user name. Raises
    ``InvitationError`` for a malformed address."""
    if "@" not in name:
        return None
    try:
        validate_email(name)
    except ValidationError:
        raise InvitationError(f"{name!r} is not an e-mail address.") from None
    return name


def _account_named(name: str):  # noqa: ANN202 - a user
    """The active account whose user name is ``name`` (case-insensitive; an exact match first).
    Raises ``InvitationError`` when there is none."""
    found = list(get_user_model().objects.filter(username__iexact=name, is_active=True)[:2])
    exact = [u for u in found if u.get_username() == name]
    if len(exact) == 1:
        return exact[0]
    if len(found) == 1:
        return found[0]
    raise InvitationError(f"No single active account is called {name!r}.")


# ---------------------------------------------------------------------------------- services
@transaction.atomic
def invitation_create(*, team: Team, name: str, request) -> TeamInvitation:  # noqa: ANN001
    """Invite ``name`` (a user name, or an e-mail address: ``_address``) to ``team`` on behalf of
    ``request.user`` (its admin: the caller checked). A pending invitation of the same engineer or
    address is renewed (its expiry pushed back), not doubled. Raises ``InvitationError`` for an empty
    name, no such user name, a malformed address, or a member already (by user name, or by an address a
    member holds: the team page shows its members' addresses). An address no account holds is invited
    all the same, and answered by the account that holds it by the time it expires."""
    name = (name or "").strip()[:254]
    if not name:
        raise InvitationError("Give a user name or an e-mail address.")
    address = _address(name)
    if address is None:
        user = _account_named(name)
        invitee, same = {"user": user}, {"user": user}
        if team.members.filter(pk=user.pk).exists():
            raise InvitationError(f"{user.get_username()} is a member of {team.name} already.")
        said = {"member": user.get_username()}
    else:
        invitee, same = {"address": address}, {"user__isnull": True, "address__iexact": address}
        if team.members.filter(email__iexact=address).exists():
            raise InvitationError(f"A member of {team.name} has the address {address} already.")
        said = {"address": address}
    TeamInvitation.objects.filter(team=team, state=InvitationState.PENDING, **same).update(
        state=InvitationState.WITHDRAWN, answered_at=timezone.now()
    )
    invitation = TeamInvitation.objects.create(
        team=team,
        invited_by=request.user,
        expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
        **invitee,
    )
    audit.record(
        action=AuditAction.MEMBER_INVITED,
        request=request,
        team_id=team.pk,
        detail={**said, "invitation": invitation.pk},
    )
    return invitation


def _answer(
    invitation: TeamInvitation, state: InvitationState, action: AuditAction, request, user=None
) -> None:  # noqa: ANN001
    """Settle ``invitation``; ``user``: the account answering one sent to an address, kept on it from now on.
    The trail names the invitee as the admin named him (user name or address)."""
    invitation.state, invitation.answered_at = state, timezone.now()
    if invitation.user_id is None and user is not None:
        invitation.user = user
    invitation.save(update_fields=["state", "answered_at", "user"])
    said = (
        {"address": invitation.address} if invitation.address else {"member": invitation.user.get_username()}
    )
    if state == InvitationState.ACCEPTED:
        said["member"] = invitation.user.get_username()  # a member now, by his consent
    audit.record(
        action=action,
        request=request,
        team_id=invitation.team_id,
        detail={**said, "invitation": invitation.pk},
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
    _answer(invitation, InvitationState.ACCEPTED, AuditAction.INVITATION_ACCEPTED, request, user)
    teams.member_add(team=invitation.team, user=user)
    return invitation.team


@transaction.atomic
def invitation_decline(*, user, invitation_id: int, request) -> bool:  # noqa: ANN001
    """``user`` declines his pending invitation ``invitation_id``; False when he holds no such one."""
    invitation = pending_for_user(user).select_for_update(of=("self",)).filter(pk=invitation_id).first()
    if invitation is None:
        return False
    _answer(invitation, InvitationState.DECLINED, AuditAction.INVITATION_DECLINED, request, user)
    return True
