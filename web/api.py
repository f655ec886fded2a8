"""The JSON API (DRF): create a case with curl, list cases (paginated, searched and filtered), read
a case's report. Every case is resolved through ``selectors.cases_for``: a case of another team is 404.

curl -u engineer:PASSWORD -F bundle=@pt-stalk.tar.gz -F title="ticket 123" http://HOST/api/cases/
curl -u engineer:PASSWORD 'http://HOST/api/cases/?q=io_schedule&page=2'
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from web import selectors, services
from web.forms import CaseFilterForm


class CaseCreateSerializer(serializers.Serializer):
    bundle = serializers.FileField()
    title = serializers.CharField(max_length=200, required=False, allow_blank=True)
    team = serializers.IntegerField(required=False, help_text="the team's id (default: your first team)")


class CasePagination(PageNumberPagination):
    """``?page=N`` (1-based) and ``?page_size=`` (default 50, at most 200); the answer is
    ``{"count", "next", "previous", "results": [...]}``."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


LIST_PARAMETERS = [
    OpenApiParameter(name, OpenApiTypes.STR, description=text)
    for name, text in (
        (
            "q",
            "full-text search: title, customer, ticket, tags, host, finding keys, wchans, fingerprints, notes",
        ),
        ("customer", "the customer (exact, any case)"),
        ("host", "host name, or part of it"),
        ("status", "queued, parsing, analyzing, ready or failed"),
        ("finding", "a finding key, e.g. tmp-table-churn"),
        ("severity", "critical, warning or info"),
        ("tag", "a tag"),
        ("date_from", "YYYY-MM-DD: captured on or after this UTC day"),
        ("date_to", "YYYY-MM-DD: captured on or before this UTC day"),
        (
            "sort",
            "-created (default), created, -captured, captured, host, customer, title, status, relevance",
        ),
    )
]


@extend_schema(methods=["GET"], operation_id="cases_list", responses={200: dict}, parameters=LIST_PARAMETERS)
@extend_schema(
    methods=["POST"], operation_id="cases_create", request=CaseCreateSerializer, responses={201: dict}
)
@api_view(["GET", "POST"])
@parser_classes([MultiPartParser, FormParser])
def case_list_create_api(request: Request) -> Response:
    """GET: the cases of your teams, newest first, a page at a time, searched and filtered (the case
    list's parameters). POST multipart ``bundle`` (+ ``title``, ``team``): a new case; its answer says
    ``duplicate_of`` (earlier cases of your teams with the same bytes)."""
    if request.method == "GET":
        form = CaseFilterForm(request.query_params)
        form.is_valid()
        paginator = CasePagination()
        cases = paginator.paginate_queryset(
            selectors.case_list(user=request.user, filters=form.filters()), request
        )
        return paginator.get_paginated_response([selectors.case_row(c) for c in cases])
    serializer = CaseCreateSerializer(data=request.data)
    if not serializer.is_valid():
        return Response(
            {"message": "The upload is not valid.", "extra": serializer.errors},
            status=status.HTTP_400_BAD_REQUEST,
        )
    bundle = serializer.validated_data["bundle"]
    team_id = serializer.validated_data.get("team")
    sha256 = services.sha256_of(bundle)
    earlier = selectors.earlier_uploads(user=request.user, sha256=sha256)
    try:
        team = selectors.teams_of(request.user).filter(pk=team_id).first() if team_id else None
        if team_id and team is None:
            raise ValidationError("You are not a member of that team.")
        case = services.case_create(
            user=request.user,
            file=bundle,
            original_name=bundle.name,
            title=serializer.validated_data.get("title", ""),
            team=team,
            sha256=sha256,
        )
    except ValidationError as exc:
        return Response({"message": " ".join(exc.messages), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    return Response({**selectors.case_status(case), "duplicate_of": earlier}, status=status.HTTP_201_CREATED)


@extend_schema(responses={200: dict})
@api_view(["GET"])
def case_report_api(request: Request, case_id: int) -> Response:
    """The case report: sources, members not used, warnings, findings (same as ``analyze --json``)."""
    case = selectors.cases_for(request.user).filter(pk=case_id).first()
    if case is None:
        raise Http404
    return Response(selectors.case_report(case=case))
