"""Casebook's data: cases, their kept uploads, and the rows derived from them.

Data and invariants only: every write goes through a service (the ``services.py`` of a package of
web/, and the ingest, web/ingest/; ARCHITECTURE.md). Rows derived from a bundle
(sources, members not used, series, sample index, raw chunks, findings, rule results) are replaced
together in one transaction when a case is ingested or re-analyzed.

One module per subject (``teams``, ``cases``, ``links``, ``audit``); every model and name is
imported here, so ``from web.models import Case`` reads them all and Django finds every table.
"""

from __future__ import annotations

from web.models.audit import AuditAction, AuditEvent
from web.models.cases import (
    FINAL_STATUSES,
    PROCESSING_STATUSES,
    AddedUpload,
    BundleFile,
    Case,
    CaseStatus,
    Finding,
    Host,
    NotUsedMember,
    QueryClass,
    QueryMinute,
    RawChunk,
    ResolutionCategory,
    RuleResult,
    SampleIndex,
    Series,
    SeriesLevel,
    Source,
    SourceRole,
    Upload,
    default_team_id,
)
from web.models.links import LinkTransfer, ShareLink, UploadLink
from web.models.teams import (
    DEFAULT_TEAM_NAME,
    ApiToken,
    InvitationState,
    NotificationPreference,
    Team,
    TeamInvitation,
    Webhook,
    WebhookDelivery,
)

__all__ = [
    "QueryClass",
    "QueryMinute",
    "DEFAULT_TEAM_NAME",
    "Team",
    "InvitationState",
    "TeamInvitation",
    "ApiToken",
    "NotificationPreference",
    "Webhook",
    "WebhookDelivery",
    "CaseStatus",
    "FINAL_STATUSES",
    "PROCESSING_STATUSES",
    "ResolutionCategory",
    "default_team_id",
    "Case",
    "BundleFile",
    "Upload",
    "AddedUpload",
    "Host",
    "SourceRole",
    "Source",
    "NotUsedMember",
    "Series",
    "SeriesLevel",
    "RawChunk",
    "SampleIndex",
    "Finding",
    "RuleResult",
    "ShareLink",
    "UploadLink",
    "LinkTransfer",
    "AuditAction",
    "AuditEvent",
]
