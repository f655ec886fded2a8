"""What the API's operations share: in the OpenAPI schema (drf-spectacular) the ``case_id`` path
parameter and the error responses; the pagination of lists and the validation of query parameters."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

from web.api.serializers import ErrorSerializer

CASE_ID = OpenApiParameter(
    "case_id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="The case's id."
)


def error_responses(*codes: int) -> dict[int, type[ErrorSerializer]]:
    """Error responses of an operation: the HTTP status ``codes`` given, and 401 (no valid token) and
    403 (a session without its CSRF token), possible everywhere; each a ``{"message", "extra"}`` body
    (web/api/errors.py)."""
    return dict.fromkeys((401, 403, *codes), ErrorSerializer)


class CasePagination(PageNumberPagination):
    """``?page=`` (from 1) and ``?page_size=`` (50, at most 200); a page past the last is a 404."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


def validated_query(serializer_class: type[serializers.Serializer], request: Request) -> dict:
    """The validated query parameters (repeated ones as lists where the serializer has a ListField);
    raises DRF's ValidationError (a 400) otherwise."""
    data: dict[str, object] = {}
    for key in request.query_params:
        field = serializer_class().fields.get(key)
        values = request.query_params.getlist(key)
        data[key] = values if isinstance(field, serializers.ListField) else values[-1]
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
