"""Upload links in the JSON API (DRF): make, list and revoke the links customers send bundles through.

curl -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
     -d '{"customer": "ACME", "ticket": "ZD-4711", "days": 7, "uploads": 2, "max_size": 10737418240}' \
     http://HOST/api/upload-links/
curl -H "Authorization: Bearer $TOKEN" http://HOST/api/upload-links/
curl -H "Authorization: Bearer $TOKEN" -X DELETE http://HOST/api/upload-links/3/
"""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from analyzer.isotime import iso_utc
from web.api.schema import error_responses
from web.cases import services as case_services
from web.cases.selectors import teams_of
from web.models import AuditAction, UploadLink
from web.uploads import services

#: A link's states (``services.link_state``).
UPLOAD_LINK_STATES = ("active", "expired", "inactive", "used", "revoked")


class UploadLinkCreateSerializer(serializers.Serializer):
    customer = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    ticket = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    days = serializers.IntegerField(min_value=1, max_value=services.MAX_DAYS, default=services.DEFAULT_DAYS)
    uploads = serializers.IntegerField(
        min_value=1, max_value=services.MAX_UPLOADS, default=services.DEFAULT_UPLOADS
    )
    max_size = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text="Largest upload, bytes (default and ceiling: the site's CASEBOOK_MAX_UPLOAD_BYTES).",
    )
    team = serializers.IntegerField(
        required=False,
        help_text="Id of one of your teams: required when you are a member of more than one (a 400 "
        "lists your teams otherwise); your only team when omitted.",
    )


class UploadLinkSerializer(serializers.Serializer):
    """One link (times ISO 8601 UTC, null when not yet)."""

    id = serializers.IntegerField()
    customer = serializers.CharField(allow_blank=True)
    ticket = serializers.CharField(allow_blank=True)
    team = serializers.IntegerField()
    created_by = serializers.CharField(allow_blank=True)
    created_at = serializers.CharField()
    expires_at = serializers.CharField()
    revoked_at = serializers.CharField(allow_null=True)
    last_used_at = serializers.CharField(allow_null=True)
    uploads_allowed = serializers.IntegerField()
    uploads_used = serializers.IntegerField()
    max_size = serializers.IntegerField()
    state = serializers.ChoiceField(choices=UPLOAD_LINK_STATES)
    inactive_reason = serializers.CharField(
        allow_blank=True,
        help_text="Why an inactive link takes nothing (its maker's account deleted or deactivated, or "
        "he is no longer a member of its team); empty otherwise.",
    )


class UploadLinkCreatedSerializer(UploadLinkSerializer):
    url = serializers.CharField(
        help_text="The link, token included: shown this once (only its hash is kept)."
    )


LINK_ID = OpenApiParameter(
    "link_id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="The link's id."
)


def _row(link: UploadLink) -> dict[str, object]:
    return {
        "id": link.pk,
        "customer": link.customer,
        "ticket": link.ticket,
        "team": link.team_id,
        "created_by": link.created_by.get_username() if link.created_by else "",
        "created_at": iso_utc(link.created_at),
        "expires_at": iso_utc(link.expires_at),
        "revoked_at": iso_utc(link.revoked_at),
        "last_used_at": iso_utc(link.last_used_at),
        "uploads_allowed": link.uploads_allowed,
        "uploads_used": link.uploads_used,
        "max_size": link.max_bytes,
        "state": services.link_state(link),
        "inactive_reason": services.inactive_reason(link),
    }


@extend_schema(
    methods=["GET"],
    operation_id="upload_links_list",
    summary="The upload links of your teams, newest first",
    responses={200: UploadLinkSerializer(many=True)},
)
@extend_schema(
    methods=["POST"],
    operation_id="upload_links_create",
    summary="A new upload link for a customer and a ticket",
    request=UploadLinkCreateSerializer,
    responses={201: UploadLinkCreatedSerializer, **error_responses(400)},
)
@api_view(["GET", "POST"])
def upload_link_list_create_api(request: Request) -> Response:
    """GET: the links of the user's teams, newest first. POST: a new link; the answer's ``url`` holds
    the token, shown this once (only its hash is kept)."""
    if request.method == "GET":
        return Response([_row(link) for link in services.links_for(request.user)[:500]])
    serializer = UploadLinkCreateSerializer(data=request.data)
    if not serializer.is_valid():
        return Response({"message": "The link is not valid.", "extra": serializer.errors}, status=400)
    d = serializer.validated_data
    team = None
    if d.get("team") is not None:
        team = teams_of(request.user).filter(pk=d["team"]).first()
        if team is None:
            return Response({"message": "You are not a member of that team.", "extra": {}}, status=400)
    try:
        made = services.link_create_from_fields(
            user=request.user, fields={**d, "max_bytes": d.get("max_size"), "team": team}
        )
    except ValueError as exc:
        return Response({"message": str(exc), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    except case_services.TeamChoiceError as exc:
        return Response(case_services.upload_error_body(exc), status=status.HTTP_400_BAD_REQUEST)
    services.audit_link(request, made.link, AuditAction.UPLOAD_LINK_CREATED)
    return Response(
        {**_row(made.link), "url": request.build_absolute_uri(made.path)},
        status=status.HTTP_201_CREATED,
        headers={"Cache-Control": "no-store, private"},  # the only answer that holds the token
    )


@extend_schema(
    methods=["GET"],
    operation_id="upload_link_retrieve",
    summary="One upload link",
    parameters=[LINK_ID],
    responses={200: UploadLinkSerializer, **error_responses(404)},
)
@extend_schema(
    methods=["DELETE"],
    operation_id="upload_link_revoke",
    summary="Revoke an upload link (its URL answers 404 from now on, uploads under way included)",
    parameters=[LINK_ID],
    responses={200: UploadLinkSerializer, **error_responses(404)},
)
@api_view(["GET", "DELETE"])
def upload_link_detail_api(request: Request, link_id: int) -> Response:
    """GET: one link of the user's teams. DELETE: revoke it."""
    link = services.links_for(request.user).filter(pk=link_id).first()
    if link is None:
        raise Http404
    if request.method == "DELETE" and link.revoked_at is None:
        services.link_revoke(link=link, user=request.user)
        services.audit_link(request, link, AuditAction.UPLOAD_LINK_REVOKED)
    return Response(_row(link))


def urlpatterns() -> list:
    return [
        path("api/upload-links/", upload_link_list_create_api, name="api-upload-links"),
        path("api/upload-links/<int:link_id>/", upload_link_detail_api, name="api-upload-link"),
    ]
