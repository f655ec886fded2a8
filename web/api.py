"""The JSON API (DRF): create a case with curl, list cases, read a case's report.

curl -u engineer:PASSWORD -F bundle=@pt-stalk.tar.gz -F title="ticket 123" http://HOST/api/cases/
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from web import selectors, services
from web.models import Case


class CaseCreateSerializer(serializers.Serializer):
    bundle = serializers.FileField()
    title = serializers.CharField(max_length=200, required=False, allow_blank=True)


@extend_schema(request=CaseCreateSerializer, responses={201: dict, 200: dict})
@api_view(["GET", "POST"])
@parser_classes([MultiPartParser, FormParser])
def case_list_create_api(request: Request) -> Response:
    """GET: cases newest first (``?q=`` filters). POST multipart ``bundle`` (+ ``title``): a new case."""
    if request.method == "GET":
        cases = selectors.case_list(q=request.query_params.get("q", ""))[:200]
        return Response([selectors.case_row(c) for c in cases])
    serializer = CaseCreateSerializer(data=request.data)
    if not serializer.is_valid():
        return Response(
            {"message": "The upload is not valid.", "extra": serializer.errors},
            status=status.HTTP_400_BAD_REQUEST,
        )
    bundle = serializer.validated_data["bundle"]
    try:
        case = services.case_create(
            user=request.user,
            file=bundle,
            original_name=bundle.name,
            title=serializer.validated_data.get("title", ""),
        )
    except ValidationError as exc:
        return Response({"message": " ".join(exc.messages), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    return Response(selectors.case_status(case), status=status.HTTP_201_CREATED)


@extend_schema(responses={200: dict})
@api_view(["GET"])
def case_report_api(request: Request, case_id: int) -> Response:
    """The case report: sources, members not used, warnings, findings (same as ``analyze --json``)."""
    case = get_object_or_404(Case, pk=case_id)
    return Response(selectors.case_report(case=case))
