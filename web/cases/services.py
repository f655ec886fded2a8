"""The actions on a case: create it from an upload, queue it again (re-analyze), record what the
engineers know of it, and keep its overview. Every write the case pages and the API make goes
through here (the ingest's writes are web/ingest/, the share links' web/sharing/services.py).

The ingest task is handed to the broker after the case is committed. When the broker cannot be
reached the case stays QUEUED and says so; the sweeper (web/ingest/sweeper.py) sends it once it can.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction
from django.db.models import TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.text import get_valid_filename

from web import audit
from web.cases import selectors
from web.history.services import case_refresh_search
from web.ingest.claims import is_stalled
from web.ingest.tasks import case_send_ingest
from web.models import (
    FINAL_STATUSES,
    AddedUpload,
    Case,
    CaseStatus,
    RawChunk,
    ResolutionCategory,
    Team,
    Upload,
    default_team_id,
)
from web.timeline import charts

#: Longest resolution (characters of Markdown).
MAX_RESOLUTION_CHARS = 20_000
#: Tags a case carries at most, and the longest tag (characters).
MAX_TAGS, MAX_TAG_CHARS = 20, 50


class CaseStateError(Exception):
    """The case is not in a state that allows this action (e.g. re-analyze while parsing)."""


def sha256_of(fh: File) -> str:
    """The SHA-256 (hex) of an uploaded file's bytes, read in chunks; the file is rewound."""
    return _hash_and_size(fh)[0]


def _hash_and_size(fh: File) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    for chunk in fh.chunks():
        digest.update(chunk)
        size += len(chunk)
    fh.seek(0)
    return digest.hexdigest(), size


def _check_size(size: int) -> None:
    """Refuse an empty bundle or one over ``CASEBOOK_MAX_UPLOAD_BYTES`` (``ValidationError``)."""
    if size == 0:
        raise ValidationError("The bundle is empty.")
    if size > settings.CASEBOOK_MAX_UPLOAD_BYTES:
        raise ValidationError(
            f"The bundle is {size:,} bytes; the limit is {settings.CASEBOOK_MAX_UPLOAD_BYTES:,}."
        )


class TeamChoiceError(ValidationError):
    """A user in several teams named none for a new case: ``teams`` lists them, ``[{"id", "name"}]``
    by name (the API's 400 ``extra``; the page's team select)."""

    def __init__(self, teams: list[dict[str, object]]) -> None:
        self.teams = teams
        names = ", ".join(str(t["name"]) for t in teams)
        super().__init__(f"You are a member of several teams ({names}): name the team of the case.")


def upload_error_body(exc: ValidationError) -> dict[str, object]:
    """The 400 body of a refused upload, page and API alike: ``{"message", "extra"}``, ``extra``
    holding ``teams`` (``[{"id", "name"}]``) when the user must name one of several teams."""
    return {
        "message": " ".join(exc.messages),
        "extra": {"teams": exc.teams} if isinstance(exc, TeamChoiceError) else {},
    }


def team_for_new_case(*, user, team: Team | None = None) -> Team:
    """The team a new case (or upload link) of ``user`` goes to: ``team`` when given (it must be one
    of the user's); else his only team. Without a user (``manage.py analyze`` run by the site's
    operator), ``team`` or the default team. Raises ``ValidationError`` for a team the user is not in
    or a user in no team, ``TeamChoiceError`` for a user in several teams who named none: a case never
    lands in a team by the order of names."""
    if user is None or not user.is_authenticated:
        return team or Team.objects.get(pk=default_team_id())
    mine = Team.objects.filter(members=user)
    if team is not None:
        if not mine.filter(pk=team.pk).exists():
            raise ValidationError("You are not a member of that team.")
        return team
    found = list(mine.order_by("name")[:100])
    if not found:
        raise ValidationError("Your login belongs to no team yet: accept a team admin's invitation first.")
    if len(found) > 1:
        raise TeamChoiceError([{"id": t.pk, "name": t.name} for t in found])
    return found[0]


def team_named(*, team_id: int | None) -> Team | None:
    """The team ``team_id`` as an upload names it (None when not named). Raises ``ValidationError``
    for an id that is no team, worded like a team the user is not in (``team_for_new_case``): an
    upload does not learn which ids exist."""
    if not team_id:
        return None
    team = Team.objects.filter(pk=team_id).first()
    if team is None:
        raise ValidationError("You are not a member of that team.")
    return team


class DuplicateUploadError(Exception):
    """The bytes of an upload that refuses duplicates were uploaded before as ``earlier`` (cases of
    the user's teams, ``selectors.earlier_uploads``); nothing was made."""

    def __init__(self, earlier: list[dict[str, object]]) -> None:
        self.earlier = earlier
        super().__init__(f"These exact bytes were uploaded before as case #{earlier[0]['id']}.")


@dataclass(frozen=True, slots=True)
class Uploaded:
    """A new case from an engineer's upload, and the earlier cases of his teams with the same bytes."""

    case: Case
    duplicate_of: list[dict[str, object]]


def case_upload(
    *, request, file: File, title: str = "", team_id: int | None = None, refuse_duplicate: bool = False
) -> Uploaded:  # noqa: ANN001 - an HttpRequest or DRF Request
    """An engineer's upload, the page's and the API's alike: hash the bundle once, look for the same
    bytes among his teams' cases (``refuse_duplicate``: raise ``DuplicateUploadError`` when found),
    resolve the team by the team rule (``team_for_new_case``: ``team_id`` required when he is in
    several teams), make the case (``case_create``, ingest queued) and record the upload in the audit
    trail. ``file``: an ``UploadedFile``. Raises ``ValidationError`` (``TeamChoiceError`` among them)
    as ``case_create``."""
    user = request.user
    sha256 = sha256_of(file)
    earlier = selectors.earlier_uploads(user=user, sha256=sha256)
    if refuse_duplicate and earlier:
        raise DuplicateUploadError(earlier)
    case = case_create(
        user=user,
        file=file,
        original_name=file.name,
        title=title,
        team=team_named(team_id=team_id),
        sha256=sha256,
    )
    audit.record_upload(request, case, file.name)
    return Uploaded(case=case, duplicate_of=earlier)


@transaction.atomic
def case_create(
    *,
    user,
    file: File,
    original_name: str,
    title: str = "",
    enqueue: bool = True,
    team: Team | None = None,
    sha256: str | None = None,
) -> Case:
    """Create a case from an uploaded bundle, keep the original in storage, and queue its ingest.

    ``file``: a Django ``File`` (an ``UploadedFile`` from a form, or ``File(open(path, 'rb'))``).
    ``team``: the case's team (``team_for_new_case``). ``sha256``: the upload's SHA-256 when the
    caller has it already (``sha256_of``). Raises ``ValidationError`` for an empty or too
    large upload, or a team the user may not use. With ``enqueue`` the ingest task is sent to the
    worker after the transaction commits.
    """
    team = team_for_new_case(user=user, team=team)
    if sha256 is None:
        sha256, size = _hash_and_size(file)
    else:  # already read by the caller (``sha256_of``): a large upload is not read twice
        size = file.size
    _check_size(size)
    safe = get_valid_filename(os.path.basename(original_name or "bundle"))[:120] or "bundle"
    case = Case.objects.create(
        title=title.strip()[:200],
        team=team,
        created_by=user if user and user.is_authenticated else None,
        enqueued_at=timezone.now() if enqueue else None,
    )
    upload = Upload(case=case, original_name=(original_name or "bundle")[:255], size=size, sha256=sha256)
    upload.file.save(safe, file, save=False)
    upload.save()
    case_refresh_search(case_id=case.pk)
    if enqueue:
        _enqueue(case.pk)
    return case


#: Bundles a case holds at most (its first upload and those added): a cluster's nodes, with room.
MAX_BUNDLES_PER_CASE = 32


@transaction.atomic
def case_add_bundle(
    *, case_id: int, user, file: File, original_name: str, sha256: str | None = None, enqueue: bool = True
) -> AddedUpload:
    """Add a further bundle of the same incident to a case (most often another host's capture of the
    same minutes), keep it like the first (``AddedUpload``), and queue the case again: the ingest
    reads the first upload and every added bundle as one case, the hosts merged by name.

    ``file``: a Django ``File``; ``sha256`` when the caller has it (``sha256_of``). The same checks as
    the first upload (``case_create``): raises ``ValidationError`` for an empty or too large bundle, a
    bundle of the same bytes as one the case holds already, or a case holding ``MAX_BUNDLES_PER_CASE``;
    ``CaseStateError`` while a live worker processes the case (as ``case_reanalyze``). The caller
    checks that ``user`` may see the case and records the audit event (``audit.record_bundle_added``).
    """
    case = Case.objects.select_for_update().get(pk=case_id)
    if sha256 is None:
        sha256, size = _hash_and_size(file)
    else:
        size = file.size
    _check_size(size)
    held = [u.sha256 for u in Upload.objects.filter(case=case)] + list(
        AddedUpload.objects.filter(case=case).values_list("sha256", flat=True)
    )
    if sha256 in held:
        raise ValidationError("The case holds this bundle already (same SHA-256).")
    if len(held) >= MAX_BUNDLES_PER_CASE:
        raise ValidationError(f"A case holds at most {MAX_BUNDLES_PER_CASE} bundles.")
    if case.status not in (*FINAL_STATUSES, CaseStatus.QUEUED) and not is_stalled(case):
        raise CaseStateError(
            f"Case {case_id} is being processed; add the bundle once it is done ({case.progress} %)."
        )
    safe = get_valid_filename(os.path.basename(original_name or "bundle"))[:120] or "bundle"
    added = AddedUpload(
        case=case,
        original_name=(original_name or "bundle")[:255],
        size=size,
        sha256=sha256,
        uploaded_by=user if user and user.is_authenticated else None,
    )
    added.file.save(safe, file, save=False)
    added.save()
    case_reanalyze(case_id=case.pk, enqueue=enqueue)
    return added


def _enqueue(case_id: int) -> None:
    """Send the ingest task once the current transaction commits (the worker must see the case)."""
    transaction.on_commit(lambda: case_send_ingest(case_id=case_id))


@transaction.atomic
def case_reanalyze(*, case_id: int, enqueue: bool = True) -> Case:
    """Queue a case for a fresh ingest from its kept original (after an upgrade, or to unstick it).

    Allowed when the case is ready or failed, still queued (its task is sent again), or stalled: a
    parsing/analyzing case whose worker stopped reporting (``claims.is_stalled``); that worker's claim
    is revoked, so it writes nothing if it ever wakes up. Raises ``CaseStateError`` while a live
    worker is processing the case.
    """
    case = Case.objects.select_for_update().get(pk=case_id)
    if case.status not in (*FINAL_STATUSES, CaseStatus.QUEUED) and not is_stalled(case):
        raise CaseStateError(
            f"Case {case_id} is being processed ({CaseStatus(case.status).label.lower()}, "
            f"{case.progress} %) and its worker is still reporting; it can be re-analyzed once it is "
            "done, or if its worker stops reporting."
        )
    _discard_unpublished_detail(case)
    case.status, case.progress, case.failure_reason, case.status_detail = CaseStatus.QUEUED, 0, "", ""
    case.claim, case.requeues = "", 0
    case.enqueued_at = timezone.now() if enqueue else None
    case.save(
        update_fields=[
            "status",
            "progress",
            "failure_reason",
            "status_detail",
            "claim",
            "requeues",
            "enqueued_at",
            "updated_at",
        ]
    )
    if enqueue:
        _enqueue(case.pk)
    return case


def _discard_unpublished_detail(case: Case) -> None:
    """Detail rows written by claims that never published (a dead or revoked ingest)."""
    RawChunk.objects.filter(case=case, generation__gt=case.generation).delete()


@transaction.atomic
def case_update_details(
    *, case_id: int, customer: str, ticket: str, tags: list[str], notes: str, title: str | None = None
) -> Case:
    """Set what the engineers record about a case (customer organisation, ticket reference, tags,
    Markdown notes, and the title when given) and refresh its search document. Tags are stripped,
    deduplicated (first spelling kept) and capped (``MAX_TAGS`` of ``MAX_TAG_CHARS``). The ingest never
    writes these fields, so an edit during a re-analyze is kept."""
    case = Case.objects.select_for_update().get(pk=case_id)
    seen: dict[str, str] = {}
    for tag in tags:
        tag = tag.strip()[:MAX_TAG_CHARS]
        if tag and tag.lower() not in seen:
            seen[tag.lower()] = tag
    case.customer = customer.strip()[:200]
    case.ticket = ticket.strip()[:100]
    case.tags = list(seen.values())[:MAX_TAGS]
    case.notes = notes
    fields = ["customer", "ticket", "tags", "notes", "updated_at"]
    if title is not None:
        case.title = title.strip()[:200]
        fields.append("title")
    case.save(update_fields=fields)
    case_refresh_search(case_id=case.pk)
    return case


@transaction.atomic
def case_close(*, case_id: int, user, resolution: str, category: str) -> Case:  # noqa: ANN001
    """Close a case with what fixed it (``resolution``, Markdown, at most ``MAX_RESOLUTION_CHARS``)
    and a ``category`` (``ResolutionCategory``); closing a closed case replaces its resolution.
    Raises ``ValidationError`` for an empty resolution or an unknown category. The search document
    is refreshed (resolutions are searched). The caller records the audit event."""
    resolution = (resolution or "").strip()
    if not resolution:
        raise ValidationError("Say what fixed it (or why the case is closed).")
    if len(resolution) > MAX_RESOLUTION_CHARS:
        raise ValidationError(f"The resolution is longer than {MAX_RESOLUTION_CHARS:,} characters.")
    if category not in ResolutionCategory.values:
        raise ValidationError(f"Unknown category {category!r}.")
    case = Case.objects.select_for_update().get(pk=case_id)
    case.resolution, case.resolution_category = resolution, category
    if case.closed_at is None:
        case.closed_at = timezone.now()
    case.closed_by = user if user is not None and user.is_authenticated else None
    case.save(update_fields=["resolution", "resolution_category", "closed_at", "closed_by", "updated_at"])
    case_refresh_search(case_id=case.pk)
    return case


@transaction.atomic
def case_reopen(*, case_id: int) -> Case:
    """Open a closed case again; its resolution text is kept (shown as the earlier one, not searched
    as a fix: ``past_resolutions`` looks at closed cases only)."""
    case = Case.objects.select_for_update().get(pk=case_id)
    case.closed_at, case.closed_by = None, None
    case.save(update_fields=["closed_at", "closed_by", "updated_at"])
    case_refresh_search(case_id=case.pk)
    return case


def case_overview(*, case: Case) -> str | dict[str, object]:
    """The whole capture's charts of ``case`` as its pages and its share links serve them: the stored
    overview as PostgreSQL keeps its text (``str``, JSON; not decoded, to be sent as it is) when it
    is of the current shape (``charts.VERSION``); else (none stored, or one of an older shape) built
    again from the case's series (``dict``) and kept (``case_keep_overview``), so that it is rebuilt
    once. Text may hold something a password could be (``may_hold_secrets``): the caller masks it."""
    row = (
        Case.objects.filter(pk=case.pk)
        .annotate(version=KeyTextTransform("version", "charts_overview"))
        .values_list(Cast("charts_overview", output_field=TextField()), "version")
        .first()
    )
    if row and row[0] is not None and row[1] == str(charts.VERSION):
        return row[0]
    overview = charts.timeline_charts(case=case, max_points=charts.OVERVIEW_POINTS)
    case_keep_overview(case=case, overview=overview)
    return overview


def case_keep_overview(*, case: Case, overview: dict[str, object]) -> bool:
    """Keep ``overview`` (``charts.timeline_charts`` of the whole capture, rebuilt because the stored
    one is of an older shape) on a READY ``case``, unless an ingest has published another generation
    meanwhile (its own overview is then current). Returns whether it was kept."""
    if case.status != CaseStatus.READY:
        return False
    return bool(Case.objects.filter(pk=case.pk, generation=case.generation).update(charts_overview=overview))
