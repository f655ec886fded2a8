"""Upload links: a customer sends a bundle with no account, through ``/u/<token>/``.

Writes (make, revoke, a transfer started, bytes appended, a transfer finished into a case) and the
reads the views and the API need. Tokens and their lookup are those of every link by token
(web/tokenlinks.py, as for share links): only a token's SHA-256 is stored.

A transfer is one tus upload (web/uploads/tus.py): its bytes go to a temporary file under
``MEDIA_ROOT/var/upload-links/`` (local disk, also where the storage is S3: the finished file is
then copied to the bucket by ``case_create``), appended at the offset the client says, which must be
the offset already received. When the last byte arrives the file goes through the engineers' upload
path (``web.cases.services.case_create``: empty and size checks, name cleaned, kept in storage,
ingest queued; the ingest checks the archive) and the case lands in the link's team, its customer
and ticket filled in, its creator the link's engineer.
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation, ValidationError
from django.core.files import File
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.text import get_valid_filename

from web import audit
from web.cases import services as case_services
from web.models import AuditAction, Case, LinkTransfer, Team, UploadLink
from web.tokenlinks import live, new_token, token_hash

log = logging.getLogger(__name__)

DEFAULT_DAYS, MAX_DAYS = 14, 90
DEFAULT_UPLOADS, MAX_UPLOADS = 1, 20
#: Bytes a PATCH body is read and written in.
CHUNK_BYTES = 1024 * 1024


class TransferError(Exception):
    """A transfer request the protocol refuses: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class NewUploadLink:
    """A link just made: the row, and its token (shown once: it is not stored)."""

    link: UploadLink
    token: str

    @property
    def path(self) -> str:
        return f"/u/{self.token}/"


def max_size_limit() -> int:
    """The largest ``max_bytes`` a link may have: the site's CASEBOOK_MAX_UPLOAD_BYTES."""
    return int(settings.CASEBOOK_MAX_UPLOAD_BYTES)


def link_create(
    *,
    user,  # noqa: ANN001 - the engineer making the link
    customer: str = "",
    ticket: str = "",
    days: int = DEFAULT_DAYS,
    uploads: int = DEFAULT_UPLOADS,
    max_bytes: int | None = None,
    team: Team | None = None,
) -> NewUploadLink:
    """A new link for ``customer`` and ``ticket``, valid ``days`` days (1..MAX_DAYS), taking
        ``uploads`` uploads (1..MAX_UPLOADS) of at most ``max_bytes`` bytes each (default and ceiling:
        CASEBOOK_MAX_UPLOAD_BYTES). ``team``: one of the engineer's teams, required when he is in several
    (``team_for_new_case``).
        Raises ValueError for a value out of range, ValidationError for a team the user is not in."""
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"A link lasts 1 to {MAX_DAYS} days.")
    if not 1 <= uploads <= MAX_UPLOADS:
        raise ValueError(f"A link takes 1 to {MAX_UPLOADS} uploads.")
    limit = max_size_limit()
    max_bytes = limit if max_bytes is None else max_bytes
    if not 1 <= max_bytes <= limit:
        raise ValueError(f"The largest upload is 1 to {limit:,} bytes.")
    team = case_services.team_for_new_case(user=user, team=team)
    token = new_token()
    link = UploadLink.objects.create(
        token_sha256=token_hash(token),
        customer=customer.strip()[:200],
        ticket=ticket.strip()[:100],
        team=team,
        created_by=user,
        expires_at=timezone.now() + timedelta(days=days),
        uploads_allowed=uploads,
        max_bytes=max_bytes,
    )
    return NewUploadLink(link, token)


def link_create_from_fields(*, user, fields: dict[str, object]) -> NewUploadLink:  # noqa: ANN001
    """``link_create`` from a form's or a serializer's cleaned fields: ``customer``, ``ticket``,
    ``days``, ``uploads``, ``max_bytes`` (None: the site's limit) and ``team`` (a Team or None).
    Raises ValueError for a value out of range or a team the user is not in (its message says which),
    ``TeamChoiceError`` when the user is in several teams and named none (a link is made for a team)."""
    try:
        return link_create(
            user=user,
            customer=str(fields.get("customer") or ""),
            ticket=str(fields.get("ticket") or ""),
            days=int(fields["days"]),
            uploads=int(fields["uploads"]),
            max_bytes=fields.get("max_bytes"),
            team=fields.get("team"),
        )
    except case_services.TeamChoiceError:
        raise  # its teams go into the 400's ``extra``
    except ValidationError as exc:
        raise ValueError(exc.messages[0]) from exc


def link_revoke(*, link: UploadLink, user) -> UploadLink:  # noqa: ANN001
    """Revoke ``link`` now (a link revoked already keeps its first revocation); its URL and its
    transfers in progress answer like an unknown link from now on."""
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.revoked_by = user if getattr(user, "is_authenticated", False) else None
        link.save(update_fields=["revoked_at", "revoked_by"])
    return link


def links_for(user) -> QuerySet[UploadLink]:  # noqa: ANN001
    """The links of the user's teams, newest first."""
    if user is None or not user.is_authenticated:
        return UploadLink.objects.none()
    return (
        UploadLink.objects.filter(team__members=user)
        .select_related("created_by", "team")
        .annotate(maker_in_team=maker_in_team())
        .distinct()
    )


def maker_in_team() -> Exists:
    """Whether a link's maker is an active member of the link's team (an expression over
    ``UploadLink`` rows). A link answers only while he is: its cases are his, in that team, and
    ``case_create`` would refuse them otherwise, after taking every byte."""
    return Exists(
        Team.members.through.objects.filter(
            team_id=OuterRef("team_id"), user_id=OuterRef("created_by_id"), user__is_active=True
        )
    )


def inactive_reason(link: UploadLink) -> str:
    """Why ``link`` takes nothing though neither revoked nor expired: its maker's account is deleted
    or deactivated, or he is no longer a member of its team; ``""`` while he is an active member.
    Reads ``maker_in_team`` annotated by ``links_for`` when there (one query otherwise)."""
    in_team = getattr(link, "maker_in_team", None)
    if in_team is None:
        in_team = UploadLink.objects.filter(pk=link.pk).filter(maker_in_team()).exists()
    if in_team:
        return ""
    maker = link.created_by
    if maker is None:
        return "Its maker's account is deleted."
    if not maker.is_active:
        return f"{maker.get_username()}'s account is deactivated."
    return f"{maker.get_username()} is no longer a member of {link.team.name}."


def link_state(link: UploadLink) -> str:
    """``revoked``, ``expired``, ``inactive`` (its maker is no active member of its team:
    ``inactive_reason``), ``used`` (every upload taken) or ``active``."""
    if link.revoked_at is not None:
        return "revoked"
    if link.expires_at <= timezone.now():
        return "expired"
    if inactive_reason(link):
        return "inactive"
    if link.uploads_used >= link.uploads_allowed:
        return "used"
    return "active"


def _live(token: str) -> QuerySet[UploadLink]:
    """The link of ``token`` while it answers: not revoked, not expired, its maker an active member of
    its team (``maker_in_team``); every other link answers as a revoked one, before taking a byte."""
    return live(UploadLink, token).filter(maker_in_team())


def link_for_token(token: str) -> UploadLink | None:
    """The link of ``token`` that takes a new upload (not revoked, not expired, its maker an active
    member of its team, not used up), else None: none of these is told apart."""
    return _live(token).filter(uploads_used__lt=F("uploads_allowed")).first()


def transfer_for(token: str, key: str) -> LinkTransfer | None:
    """The transfer ``key`` of the link of ``token`` while that link is neither revoked nor expired
    (a link whose last upload is under way is used up, yet its transfer goes on), else None."""
    if not key or len(key) > 64:
        return None
    return LinkTransfer.objects.filter(link__in=_live(token), key=key).select_related("link").first()


def temp_folder() -> Path:
    """Where transfers in progress are kept: ``MEDIA_ROOT/var/upload-links`` (made when missing)."""
    folder = Path(settings.MEDIA_ROOT) / "var" / "upload-links"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def clean_name(name: str) -> str:
    """A file name safe to keep and show: its last path part, Django's valid-file-name characters,
    at most 120 characters; ``bundle`` when nothing is left."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    try:
        return get_valid_filename(base)[:120]
    except SuspiciousFileOperation:  # nothing left, or "." / ".."
        return "bundle"


@transaction.atomic
def transfer_create(*, token: str, length: int, name: str) -> LinkTransfer:
    """Start a transfer of ``length`` bytes named ``name`` (the client's word, cleaned) through the
    link of ``token``, counting one of its uploads. Raises ``TransferError``: 404 for a link that
    takes no upload (unknown, expired, revoked, used up), 413 for a length over the link's maximum
    (or the site's), 400 for a length under 1."""
    link = _live(token).select_for_update().filter(uploads_used__lt=F("uploads_allowed")).first()
    if link is None:
        raise TransferError(404, "unknown link")
    if length < 1:
        raise TransferError(400, "The bundle is empty.")
    if length > min(link.max_bytes, max_size_limit()):
        raise TransferError(
            413, f"The bundle is {length:,} bytes; this link takes at most {link.max_bytes:,}."
        )
    key = secrets.token_urlsafe(24)
    path = temp_folder() / f"{link.pk}-{key}.part"
    path.touch()
    link.uploads_used += 1
    link.last_used_at = timezone.now()
    link.save(update_fields=["uploads_used", "last_used_at"])
    return LinkTransfer.objects.create(
        link=link, key=key, length=length, name=clean_name(name), temp_path=str(path)
    )


def transfer_append(*, transfer: LinkTransfer, offset: int, read) -> LinkTransfer:  # noqa: ANN001
    """Append the bytes ``read(n)`` gives (until it gives ``b""``, or the transfer's length is reached)
    to ``transfer``, which has received ``offset`` bytes (tus ``Upload-Offset``). What was written
    before a broken connection is kept (the client asks for the offset and goes on from there).
    Raises ``TransferError`` 409 when ``offset`` is not the offset received, 413 for more bytes than
    the announced length, 410 for a finished transfer, 404 when its link stopped answering since the
    request found it (revoked, expired, its maker out of its team: no byte is taken then). Finishes the
    transfer when complete."""
    with transaction.atomic():
        row = LinkTransfer.objects.select_for_update().select_related("link").get(pk=transfer.pk)
        answering = UploadLink.objects.filter(
            pk=row.link_id, revoked_at__isnull=True, expires_at__gt=timezone.now()
        )
        if not answering.filter(maker_in_team()).exists():
            raise TransferError(404, "unknown link")
        if row.finished_at is not None:
            raise TransferError(410, "This upload is complete.")
        if offset != row.offset:
            raise TransferError(409, f"The upload is at offset {row.offset}.")
        written, too_long = row.offset, False
        with open(row.temp_path, "r+b") as out:
            out.truncate(written)  # bytes past the offset would come from a request that never ended well
            out.seek(written)
            try:
                while written < row.length:
                    chunk = read(min(CHUNK_BYTES, row.length - written))
                    if not chunk:
                        break
                    out.write(chunk)
                    written += len(chunk)
                too_long = written >= row.length and bool(read(1))
            except OSError as exc:  # the connection broke: keep what arrived
                log.info(
                    "upload link transfer %s interrupted at %s bytes: %s", row.pk, written, type(exc).__name__
                )
            out.flush()
            os.fsync(out.fileno())
        if too_long:
            raise TransferError(413, "More bytes than the announced Upload-Length.")
        row.offset = written
        row.save(update_fields=["offset", "updated_at"])
    if row.offset == row.length:
        return transfer_finish(transfer=row)
    return row


def transfer_finish(*, transfer: LinkTransfer) -> LinkTransfer:
    """Make the case of a complete transfer through the engineers' upload path (``case_create``:
    empty and size checks, storage, ingest queued), in the link's team, customer and ticket filled,
    created by the link's engineer; record it in the audit trail; delete the temporary file. A
    refused bundle keeps no case: ``error`` says why."""
    link = transfer.link
    path = Path(transfer.temp_path)
    try:
        with transaction.atomic(), path.open("rb") as fh:
            title = " ".join(p for p in (link.customer, link.ticket) if p) or transfer.name
            case = case_services.case_create(
                user=link.created_by,
                file=File(fh, name=transfer.name),
                original_name=transfer.name,
                title=title,
                team=link.team,
            )
            case_services.case_update_details(
                case_id=case.pk, customer=link.customer, ticket=link.ticket, tags=[], notes=""
            )
            audit.record(
                action=AuditAction.CASE_UPLOADED,
                case=case,
                upload_link=link,
                detail={"name": transfer.name, "size": transfer.length, "upload_link": link.pk},
            )
            transfer.case = case
    except ValidationError as exc:
        transfer.error = "; ".join(exc.messages)[:300]
    transfer.finished_at = timezone.now()
    transfer.save(update_fields=["case", "error", "finished_at", "updated_at"])
    path.unlink(missing_ok=True)
    return transfer


def transfers_discard_stale() -> int:
    """Delete the temporary files of unfinished transfers whose link is revoked or expired (they can
    never be finished: their URLs answer 404) and mark them finished with the reason; how many.
    Run by the beat every hour (``casebook.sweep_upload_links``, web/uploads/tasks.py)."""
    now = timezone.now()
    stale = LinkTransfer.objects.filter(finished_at__isnull=True).filter(
        Q(link__revoked_at__isnull=False) | Q(link__expires_at__lte=now)
    )
    count = 0
    for transfer in stale.only("pk", "temp_path"):
        Path(transfer.temp_path).unlink(missing_ok=True)
        count += LinkTransfer.objects.filter(pk=transfer.pk, finished_at__isnull=True).update(
            finished_at=now, error="Not finished before the link expired or was revoked."
        )
    return count


def transfer_status(transfer: LinkTransfer) -> dict[str, object]:
    """What the customer sees after the upload: the bytes received and the case's status
    (``receiving``, ``refused``, then the case's queued/parsing/analyzing/ready/failed), nothing else."""
    status = "receiving"
    if transfer.finished_at is not None:
        status = "refused" if transfer.case_id is None else ""
    if transfer.case_id is not None:
        status = (
            Case.objects.filter(pk=transfer.case_id).values_list("status", flat=True).first() or "deleted"
        )
    return {
        "status": status,
        "received": transfer.offset,
        "length": transfer.length,
        "message": transfer.error if status == "refused" else "",
    }


def audit_link(request, link: UploadLink, action: AuditAction) -> None:  # noqa: ANN001
    """Record a link made or revoked (its customer and ticket, never its token)."""
    audit.record(
        action=action,
        request=request,
        team_id=link.team_id,
        detail={"upload_link": link.pk, "customer": link.customer, "ticket": link.ticket},
    )
