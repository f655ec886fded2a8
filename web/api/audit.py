"""The audit trail in the JSON API (DRF): a case's events, and a team's for its admins.

curl -H "Authorization: Bearer $TOKEN" http://HOST/api/cases/12/events/
curl -H "Authorization: Bearer $TOKEN" "http://HOST/api/events/?team=3"

Newest first, a page at a time (``?page=``, ``?page_size=`` up to 200). A case the user may not see,
or a team he is no admin of, answers 404. The same events as CSV: ``/cases/<id>/events.csv`` and
``/teams/<id>/events.csv`` (web/accounts/team_views.py).
"""

from __future__ import annotations

from django.http import Http404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from web import audit
from web.accounts import teams
from web.api.schema import CASE_ID, CasePagination, error_responses, validated_query
from web.cases.selectors import case_for_user
from web.models import AuditAction


class EventSerializer(serializers.Serializer):
    """One event of the audit trail (web/audit.py ``event_row``)."""

    id = serializers.IntegerField()
    time = serializers.CharField(help_text="ISO 8601 UTC.")
    action = serializers.ChoiceField(choices=AuditAction.choices)
    action_label = serializers.CharField()
    case_id = serializers.IntegerField(allow_null=True)
    team_id = serializers.IntegerField(allow_null=True)
    actor = serializers.CharField(help_text="The user name, 'share link #N', or 'anonymous'.")
    actor_kind = serializers.ChoiceField(
        choices=[audit.USER, audit.SHARE_LINK, audit.UPLOAD_LINK, audit.ANONYMOUS]
    )
    share_id = serializers.IntegerField(allow_null=True)
    client = serializers.CharField(allow_blank=True, help_text="The client's network: IPv4 /24, IPv6 /48.")
    browser = serializers.CharField(allow_blank=True, help_text="Chrome, Firefox, Safari, Edge, curl, ...")
    detail = serializers.DictField()


class EventPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Events, over all pages.")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = EventSerializer(many=True)


class EventsQuerySerializer(serializers.Serializer):
    page = serializers.IntegerField(required=False, min_value=1)
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=CasePagination.max_page_size)


class TeamEventsQuerySerializer(EventsQuerySerializer):
    team = serializers.IntegerField(min_value=1, help_text="The team's id (you must be one of its admins).")


def _page(request: Request, events) -> Response:  # noqa: ANN001 - a QuerySet of AuditEvent
    paginator = CasePagination()
    page = paginator.paginate_queryset(events, request)
    return paginator.get_paginated_response([audit.event_row(e) for e in page])


@extend_schema(
    operation_id="case_events_list",
    summary="The audit trail of a case, newest first",
    parameters=[CASE_ID, EventsQuerySerializer],
    responses={200: EventPageSerializer, **error_responses(400, 404)},
)
@api_view(["GET"])
def case_events_api(request: Request, case_id: int) -> Response:
    """Every event of the case (upload, re-analysis, edits, share links made, viewed and revoked,
    downloads), for the engineers of its team."""
    validated_query(EventsQuerySerializer, request)
    return _page(request, audit.case_events(case_for_user(user=request.user, case_id=case_id)))


@extend_schema(
    operation_id="events_list",
    summary="The audit trail of a team, newest first (its admins only)",
    parameters=[TeamEventsQuerySerializer],
    responses={200: EventPageSerializer, **error_responses(400, 404)},
)
@api_view(["GET"])
def team_events_api(request: Request) -> Response:
    """The events of the team's cases, its members' changes and tokens, failed logins of its
    members' names: for the team's admins; anyone else gets 404."""
    query = validated_query(TeamEventsQuerySerializer, request)
    team = teams.team_for_admin(request.user, query["team"])
    if team is None:
        raise Http404
    return _page(request, audit.team_events(team))


def urlpatterns() -> list:
    return [
        path("api/cases/<int:case_id>/events/", case_events_api, name="api-case-events"),
        path("api/events/", team_events_api, name="api-events"),
    ]
