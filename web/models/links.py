"""Links by token: share links (a customer's read-only view of a case) and upload links (a bundle
sent with no account), with each upload link's transfers."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from web.models.cases import Case
from web.models.teams import Team


class ShareLink(models.Model):
    """A read-only link to one case for a customer (web/sharing/services.py). The token itself is never
    stored: only its SHA-256 (``token_sha256``, hex); the URL is shown once, when it is made.
    ``redact_*``: what the link redacts when it serves the case (web/sharing/redaction/redactor.py; the stored
    case is never changed). ``vocabulary``: the case's hosts, users and schemas and its literal counts,
    collected for the link from ``vocabulary_generation`` of the case (collected again after a
    re-analysis). A link answers while ``revoked_at`` is None and ``expires_at`` is ahead."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="share_links")
    token_sha256 = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=200, blank=True)  # whom it was sent to, for the engineers
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="share_links"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_viewed_at = models.DateTimeField(null=True, blank=True)
    view_count = models.PositiveIntegerField(default=0)
    redact_literals = models.BooleanField(default=True)
    redact_hosts = models.BooleanField(default=True)
    redact_users = models.BooleanField(default=True)
    redact_schemas = models.BooleanField(default=True)
    allow_bundle = models.BooleanField(default=False)  # the raw upload (never with redaction)
    vocabulary = models.JSONField(null=True, blank=True)
    vocabulary_generation = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(allow_bundle=False)
                | models.Q(
                    redact_literals=False, redact_hosts=False, redact_users=False, redact_schemas=False
                ),
                name="sharelink_bundle_only_unredacted",
            )
        ]

    def __str__(self) -> str:
        return f"Share {self.pk} of case {self.case_id}"


class UploadLink(models.Model):
    """A link a customer uploads a bundle through, with no account (web/uploads/). The token is
    never stored: only its SHA-256 (``token_sha256``, hex); the URL is shown once, when it is made.
    A link answers while it is not revoked, ``expires_at`` is ahead and ``uploads_used`` is below
    ``uploads_allowed``; each upload started through it counts one. ``max_bytes``: the largest
    upload it takes (bytes, also capped by CASEBOOK_MAX_UPLOAD_BYTES). Its cases go to ``team``, with
    ``customer`` and ``ticket`` filled and ``created_by`` as their creator."""

    token_sha256 = models.CharField(max_length=64, unique=True)
    customer = models.CharField(max_length=200, blank=True)
    ticket = models.CharField(max_length=100, blank=True)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="upload_links")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="upload_links"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    uploads_allowed = models.PositiveIntegerField(default=1)
    uploads_used = models.PositiveIntegerField(default=0)
    max_bytes = models.BigIntegerField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"Upload link {self.pk} of team {self.team_id}"


class LinkTransfer(models.Model):
    """One resumable (tus) upload through an ``UploadLink``: ``key`` (random, in its URL),
    ``length`` (bytes announced in ``Upload-Length``), the bytes received so far (``offset``, the
    size of ``temp_path``, a file under MEDIA_ROOT/var/upload-links/), the cleaned file name, and
    the case made from it once complete (``case``, null before; ``error``: why none was made)."""

    link = models.ForeignKey(UploadLink, on_delete=models.CASCADE, related_name="transfers")
    key = models.CharField(max_length=64, unique=True)
    length = models.BigIntegerField()
    offset = models.BigIntegerField(default=0)
    name = models.CharField(max_length=255, blank=True)
    temp_path = models.CharField(max_length=500)
    case = models.ForeignKey(Case, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Transfer {self.pk} of upload link {self.link_id}"
