"""Share links in the JSON API (DRF): list, create and revoke the customer links of a case.

curl -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"days": 14}' \
     http://HOST/api/cases/12/shares/
curl -H "Authorization: Bearer $TOKEN" -X DELETE http://HOST/api/cases/12/shares/3/
"""

from __future__ import annotations

from datetime import datetime

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from analyzer.isotime import iso_utc
from web import audit
from web.api.schema import CASE_ID, error_responses
from web.cases import selectors
from web.models import AuditAction, ShareLink
from web.sharing import services as shares


class ShareCreateSerializer(serializers.Serializer):
    label = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    days = serializers.IntegerField(min_value=1, max_value=shares.MAX_DAYS, default=shares.DEFAULT_DAYS)
    redact_literals = serializers.BooleanField(default=True)
    redact_hosts = serializers.BooleanField(default=True)
    redact_users = serializers.BooleanField(default=True)
    redact_schemas = serializers.BooleanField(default=True)
    allow_bundle = serializers.BooleanField(default=False)


class ShareSerializer(serializers.Serializer):
    """One link of a case, as the case page lists it (times ISO 8601 UTC, null when not yet)."""

    id = serializers.IntegerField()
    label = serializers.CharField(allow_blank=True)
    created_by = serializers.CharField(allow_blank=True)
    created_at = serializers.CharField()
    expires_at = serializers.CharField()
    revoked_at = serializers.CharField(allow_null=True)
    last_viewed_at = serializers.CharField(allow_null=True)
    view_count = serializers.IntegerField()
    state = serializers.ChoiceField(choices=("active", "expired", "revoked"))
    redaction = serializers.CharField()
    allow_bundle = serializers.BooleanField()
    preview_url = serializers.CharField()


class ShareCreatedSerializer(ShareSerializer):
    url = serializers.CharField(
        help_text="The link, token included: shown this once (only its hash is kept)."
    )


SHARE_ID = OpenApiParameter(
    "share_id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="The link's id."
)


def _row(row: dict[str, object], case_id: int) -> dict[str, object]:
    return {
        **{k: iso_utc(v) if isinstance(v, datetime) else v for k, v in row.items()},
        "preview_url": reverse("share-preview", args=[case_id, row["id"]]),
    }


@extend_schema(
    methods=["GET"],
    operation_id="case_shares_list",
    summary="The case's share links, newest first",
    parameters=[CASE_ID],
    responses={200: ShareSerializer(many=True), **error_responses(404)},
)
@extend_schema(
    methods=["POST"],
    operation_id="case_shares_create",
    summary="A new share link for a customer",
    parameters=[CASE_ID],
    request=ShareCreateSerializer,
    responses={201: ShareCreatedSerializer, **error_responses(400, 404)},
)
@api_view(["GET", "POST"])
def share_list_create_api(request: Request, case_id: int) -> Response:
    """GET: the case's links, newest first. POST: a new link; the answer's ``url`` holds the token,
    shown this once (only its hash is kept)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    if request.method == "GET":
        return Response([_row(r, case.pk) for r in selectors.share_rows(case)])
    serializer = ShareCreateSerializer(data=request.data)
    if not serializer.is_valid():
        return Response({"message": "The link is not valid.", "extra": serializer.errors}, status=400)
    d = serializer.validated_data
    try:
        made = shares.share_create_from_fields(case=case, user=request.user, fields=d)
    except ValueError as exc:
        return Response({"message": str(exc), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    audit.record_share_created(request, made.share)
    row = next(r for r in selectors.share_rows(case) if r["id"] == made.share.pk)
    return Response(
        {**_row(row, case.pk), "url": request.build_absolute_uri(made.path)},
        status=status.HTTP_201_CREATED,
        headers={"Cache-Control": "no-store, private"},  # the only answer that holds the token
    )


@extend_schema(
    methods=["GET"],
    operation_id="case_share_retrieve",
    summary="One share link of the case",
    parameters=[CASE_ID, SHARE_ID],
    responses={200: ShareSerializer, **error_responses(404)},
)
@extend_schema(
    methods=["DELETE"],
    operation_id="case_share_revoke",
    summary="Revoke a share link (its URL answers 404 from now on)",
    parameters=[CASE_ID, SHARE_ID],
    responses={200: ShareSerializer, **error_responses(404)},
)
@api_view(["GET", "DELETE"])
def share_detail_api(request: Request, case_id: int, share_id: int) -> Response:
    """GET: one link of the case. DELETE: revoke it (its URL answers 404 from now on)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    share = ShareLink.objects.filter(pk=share_id, case=case).first()
    if share is None:
        raise Http404
    if request.method == "DELETE" and share.revoked_at is None:
        shares.share_revoke(share=share, user=request.user)
        audit.record(action=AuditAction.SHARE_REVOKED, request=request, share=share)
    row = next(r for r in selectors.share_rows(case) if r["id"] == share.pk)
    return Response(_row(row, case.pk))
