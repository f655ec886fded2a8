"""The JSON API of a case's resolution: ``GET``/``POST``/``DELETE /api/cases/{id}/resolution/`` read it,
close the case with one (``{"text", "category"}``; again: replaced), reopen it. Audited like the
case page's forms (web/cases/resolution_views.py)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from web import audit
from web.api.schema import CASE_ID, error_responses
from web.api.serializers import ResolutionInSerializer, ResolutionSerializer
from web.cases import selectors, services
from web.models import AuditAction


@extend_schema(
    methods=["GET"],
    operation_id="cases_resolution",
    summary="How the case was closed (404 while it is open)",
    parameters=[CASE_ID],
    responses={200: ResolutionSerializer, **error_responses(404)},
)
@extend_schema(
    methods=["POST"],
    operation_id="cases_close",
    summary="Close the case with a resolution (or replace its resolution)",
    parameters=[CASE_ID],
    request=ResolutionInSerializer,
    responses={200: ResolutionSerializer, **error_responses(400, 404)},
)
@extend_schema(
    methods=["DELETE"],
    operation_id="cases_reopen",
    summary="Reopen the case",
    parameters=[CASE_ID],
    responses={204: None, **error_responses(404)},
)
@api_view(["GET", "POST", "DELETE"])
def case_resolution_api(request: Request, case_id: int) -> Response:
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    if request.method == "GET":
        body = selectors.case_resolution(case)
        if body is None:
            return Response({"message": "The case is open.", "extra": {}}, status=status.HTTP_404_NOT_FOUND)
        return Response(body)
    if request.method == "DELETE":
        if case.closed_at is not None:
            services.case_reopen(case_id=case.pk)
            audit.record(action=AuditAction.CASE_REOPENED, request=request, case=case)
        return Response(status=status.HTTP_204_NO_CONTENT)
    data = ResolutionInSerializer(data=request.data)
    if not data.is_valid():
        return Response(
            {"message": "Give text and category.", "extra": data.errors}, status=status.HTTP_400_BAD_REQUEST
        )
    try:
        case = services.case_close(
            case_id=case.pk,
            user=request.user,
            resolution=data.validated_data["text"],
            category=data.validated_data["category"],
        )
    except ValidationError as exc:
        return Response({"message": " ".join(exc.messages), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    audit.record(
        action=AuditAction.CASE_CLOSED,
        request=request,
        case=case,
        detail={"category": data.validated_data["category"]},
    )
    return Response(selectors.case_resolution(case))


def urlpatterns() -> list:
    return [path("api/cases/<int:case_id>/resolution/", case_resolution_api, name="api-case-resolution")]
