"""The audit trail: what an event records, and the append-only table of events."""

from __future__ import annotations

from django.db import models


class AuditAction(models.TextChoices):
    """What an audit event records (web/audit.py)."""

    CASE_UPLOADED = "case.uploaded", "Bundle uploaded"
    CASE_REANALYZED = "case.reanalyzed", "Re-analyzed"
    CASE_DETAILS_EDITED = "case.details_edited", "Details edited"
    CASE_DELETED = "case.deleted", "Case deleted"
    BUNDLE_DOWNLOADED = "bundle.downloaded", "Bundle downloaded"
    SHARE_CREATED = "share.created", "Share link made"
    SHARE_PREVIEWED = "share.previewed", "Share link previewed"
    SHARE_VIEWED = "share.viewed", "Share link viewed"
    SHARE_REVOKED = "share.revoked", "Share link revoked"
    UPLOAD_LINK_CREATED = "upload_link.created", "Upload link made"
    UPLOAD_LINK_REVOKED = "upload_link.revoked", "Upload link revoked"
    TOKEN_CREATED = "token.created", "API token made"
    TOKEN_REVOKED = "token.revoked", "API token revoked"
    MEMBER_ADDED = "team.member_added", "Member added"
    MEMBER_REMOVED = "team.member_removed", "Member removed"
    MEMBER_INVITED = "team.member_invited", "Member invited"
    INVITATION_WITHDRAWN = "team.invitation_withdrawn", "Invitation withdrawn"
    INVITATION_ACCEPTED = "team.invitation_accepted", "Invitation accepted"
    INVITATION_DECLINED = "team.invitation_declined", "Invitation declined"
    CASE_CLOSED = "case.closed", "Case closed"
    CASE_REOPENED = "case.reopened", "Case reopened"
    WEBHOOK_ADDED = "team.webhook_added", "Webhook added"
    WEBHOOK_REMOVED = "team.webhook_removed", "Webhook removed"
    TICKET_TEMPLATE_SET = "team.ticket_template_set", "Ticket link template set"
    LOGIN_FAILED = "login.failed", "Login failed"
    LOGIN_LOCKED_OUT = "login.locked_out", "Login locked out"


class AuditEvent(models.Model):
    """One line of the audit trail: append-only (a PostgreSQL trigger refuses UPDATE and DELETE,
    migration 0097). Nothing points here and nothing here is a foreign key with a constraint: an
    event outlives its case (``case_id`` is a plain integer), its team and its actor.

    ``actor_kind``: ``user`` (``actor_id``, ``actor_name`` = the user name then), ``share link``
    (``share_id``), or ``anonymous`` (a login failure: the name tried is in ``detail``). ``client``:
    the client's address truncated to its network (IPv4 /24, IPv6 /48); ``browser``: the family of
    its User-Agent (web/clients.py)."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    team_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    case_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    share_id = models.BigIntegerField(null=True, blank=True)
    actor_kind = models.CharField(max_length=20)
    actor_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=40, choices=AuditAction.choices)
    detail = models.JSONField(default=dict, blank=True)
    client = models.CharField(max_length=64, blank=True)
    browser = models.CharField(max_length=40, blank=True)

    class Meta:
        ordering = ("-at", "-id")

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.action} by {self.actor_name or self.actor_kind}"
