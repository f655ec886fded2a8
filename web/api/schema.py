"""What the API's operations share in the OpenAPI schema (drf-spectacular): the ``case_id`` path
parameter and the error responses."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter

from web.api.serializers import ErrorSerializer

CASE_ID = OpenApiParameter(
    "case_id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="The case's id."
)


def error_responses(*codes: int) -> dict[int, type[ErrorSerializer]]:
    """Error responses of an operation: the HTTP status ``codes`` given, and 401 (no valid token) and
    403 (a session without its CSRF token), possible everywhere; each a ``{"message", "extra"}`` body
    (web/api/errors.py)."""
    return dict.fromkeys((401, 403, *codes), ErrorSerializer)
