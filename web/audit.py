"""The audit trail: who changed or exposed a case, and when (``AuditEvent``, append-only).

Services here write (``record``, ``record_login_failure``, ``record_lockout``); selectors read
(``case_events``, ``team_events``, ``event_row``, ``events_csv``). Events are written by the views
and services that do the action (upload, re-analyze, details edited, share link made, previewed,
viewed and revoked, bundle downloaded, case deleted, API token made and revoked, team members added
and removed) and by django-axes' and Django's login signals (failures and lockouts). Nothing updates
or deletes an event: PostgreSQL refuses it (a trigger, migration 0097).

What is kept about the client: its address truncated to its network (``clients.truncated_address``)
and the family of its browser (``clients.browser_family``); never a token, a password or a session.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from django.db.models import Q, QuerySet

from analyzer.isotime import iso_utc
from web.clients import browser_family, client_ip, truncated_address
from web.models import AddedUpload, ApiToken, AuditAction, AuditEvent, Case, ShareLink, Team, UploadLink

USER = "user"
SHARE_LINK = "share link"
UPLOAD_LINK = "upload link"
ANONYMOUS = "anonymous"
#: Longest user name kept from a failed login (what was typed, not necessarily an account).
MAX_TRIED_NAME = 150
LOGIN_ACTIONS = (AuditAction.LOGIN_FAILED, AuditAction.LOGIN_LOCKED_OUT)
CSV_COLUMNS = ("time", "action", "case_id", "team_id", "actor", "share_id", "client", "browser", "detail")


def record(
    *,
    action: AuditAction,
    request=None,  # noqa: ANN001 - an HttpRequest or DRF Request, or None (no client known)
    user=None,  # noqa: ANN001 - the acting user; request.user when None
    case: Case | None = None,
    share: ShareLink | None = None,
    team_id: int | None = None,
    detail: dict[str, object] | None = None,
    by_share_link: bool = False,
    upload_link: UploadLink | None = None,
) -> AuditEvent:
    """Append one event. ``case`` (or ``share``, whose case it is) gives the case and team ids;
    ``team_id`` a team when no case (a member added); ``by_share_link``: the actor is the link's
    holder (a customer's view or download), not a user. ``detail``: JSON-ready facts of the action,
    never a secret. ``upload_link``: the actor is the holder of that upload link (a customer's
    upload, web/uploads/)."""
    if user is None and request is not None and not by_share_link:
        candidate = getattr(request, "user", None)
        user = candidate if getattr(candidate, "is_authenticated", False) else None
    if share is not None and case is None:
        case = share.case
    if upload_link is not None:
        kind, actor_id, name = UPLOAD_LINK, None, f"upload link #{upload_link.pk}"
    elif by_share_link:
        kind, actor_id, name = SHARE_LINK, None, f"share link #{share.pk}" if share else SHARE_LINK
    elif user is not None:
        kind, actor_id, name = USER, user.pk, user.get_username()
    else:
        kind, actor_id, name = ANONYMOUS, None, ""
    return AuditEvent.objects.create(
        action=action,
        team_id=case.team_id if case is not None else team_id,
        case_id=case.pk if case is not None else None,
        share_id=share.pk if share is not None else None,
        actor_kind=kind,
        actor_id=actor_id,
        actor_name=name[:150],
        detail=detail or {},
        client=truncated_address(client_ip(request)) if request is not None else "",
        browser=browser_family(request.headers.get("User-Agent", "")) if request is not None else "",
    )


def _tried_name(credentials: dict[str, object] | None, username: str | None = None) -> str:
    name = username if username is not None else (credentials or {}).get("username", "")
    return str(name or "")[:MAX_TRIED_NAME]


def record_login_failure(sender, credentials=None, request=None, **kwargs) -> None:  # noqa: ANN001
    """Receiver of Django's ``user_login_failed``: the user name tried (never the password)."""
    record(action=AuditAction.LOGIN_FAILED, request=request, detail={"username": _tried_name(credentials)})


def record_lockout(sender, request=None, username=None, ip_address=None, **kwargs) -> None:  # noqa: ANN001
    """Receiver of django-axes' ``user_locked_out``: the user name that is now locked out."""
    AuditEvent.objects.create(
        action=AuditAction.LOGIN_LOCKED_OUT,
        actor_kind=ANONYMOUS,
        detail={"username": _tried_name(None, username)},
        client=truncated_address(ip_address or (client_ip(request) if request is not None else "")),
        browser=browser_family(request.headers.get("User-Agent", "")) if request is not None else "",
    )


def connect_signals() -> None:
    """Hook the login receivers up (``WebConfig.ready``)."""
    from axes.signals import user_locked_out
    from django.contrib.auth.signals import user_login_failed

    user_login_failed.connect(record_login_failure, dispatch_uid="casebook-audit-login-failed")
    user_locked_out.connect(record_lockout, dispatch_uid="casebook-audit-locked-out")


# ---------------------------------------------------------------------------------- selectors
def case_events(case: Case) -> QuerySet[AuditEvent]:
    """The events of one case, newest first (the case's team engineers see them)."""
    return AuditEvent.objects.filter(case_id=case.pk)


def team_events(team: Team) -> QuerySet[AuditEvent]:
    """The events of a team, newest first: those of its cases and its own (members added or
    removed), what its members did outside a case (API tokens made and revoked), and failed logins
    and lockouts of its members' user names."""
    members = list(team.members.values_list("pk", "username"))
    ids = [pk for pk, _ in members]
    names = [name for _, name in members]
    return AuditEvent.objects.filter(
        Q(team_id=team.pk)
        | Q(team_id__isnull=True, actor_id__in=ids)
        | Q(action__in=LOGIN_ACTIONS, detail__username__in=names)
    )


def event_row(event: AuditEvent) -> dict[str, object]:
    """One event as the API, the CSV and the pages show it."""
    return {
        "id": event.pk,
        "time": iso_utc(event.at),
        "action": event.action,
        "action_label": AuditAction(event.action).label
        if event.action in AuditAction.values
        else event.action,
        "case_id": event.case_id,
        "team_id": event.team_id,
        "actor": event.actor_name or event.actor_kind,
        "actor_kind": event.actor_kind,
        "share_id": event.share_id,
        "client": event.client,
        "browser": event.browser,
        "detail": event.detail,
    }


def _cell(value: object) -> str:
    """A CSV cell that a spreadsheet does not run as a formula (OWASP: CSV injection)."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def events_csv(events: Iterable[AuditEvent]) -> Iterator[str]:
    """The events as CSV lines (a header first), for a streaming download."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(values: Iterable[object]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([_cell(v) for v in values])
        return buffer.getvalue()

    yield line(CSV_COLUMNS)
    for event in events:
        row = event_row(event)
        row["detail"] = ", ".join(f"{k}={v}" for k, v in sorted(row["detail"].items()))
        yield line(row[c] for c in CSV_COLUMNS)


def record_upload(request, case: Case, name: str) -> None:  # noqa: ANN001 - HttpRequest or DRF Request
    """A bundle uploaded as a new case (the page's and the API's upload)."""
    record(action=AuditAction.CASE_UPLOADED, request=request, case=case, detail={"name": str(name)[:200]})


def record_bundle_added(request, added: AddedUpload) -> None:  # noqa: ANN001 - HttpRequest or DRF Request
    """A further bundle added to a case (the page's form or the API): an upload of the case, its
    ``detail`` saying it was added beside the first."""
    record(
        action=AuditAction.CASE_UPLOADED,
        request=request,
        case=added.case,
        detail={"name": str(added.original_name)[:200], "added": True, "sha256": added.sha256},
    )


def record_share_created(request, share: ShareLink) -> None:  # noqa: ANN001 - HttpRequest or DRF Request
    """A share link made (the page's form or the API): for whom, expiry, what it redacts."""
    record(
        action=AuditAction.SHARE_CREATED,
        request=request,
        share=share,
        detail={
            "label": share.label,
            "expires_at": iso_utc(share.expires_at),
            "redact": [k for k in ("literals", "hosts", "users", "schemas") if getattr(share, f"redact_{k}")],
            "allow_bundle": share.allow_bundle,
        },
    )


def record_share_view(request, share: ShareLink, *, preview: bool) -> None:  # noqa: ANN001
    """The shared page seen: by the link's holder (``share.viewed``) or an engineer's preview."""
    if preview:
        record(action=AuditAction.SHARE_PREVIEWED, request=request, share=share)
    else:
        record(action=AuditAction.SHARE_VIEWED, request=request, share=share, by_share_link=True)


def record_token_created(request, *, user, token: ApiToken) -> None:  # noqa: ANN001
    """An API token made (the settings page, or ``manage.py create_api_token`` without a request):
    its name and shown prefix, never the token."""
    record(
        action=AuditAction.TOKEN_CREATED,
        request=request,
        user=user,
        detail={"token": token.name, "prefix": token.prefix},
    )
