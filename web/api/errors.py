"""Errors of the JSON API in one shape: ``{"message": "...", "extra": {...}}`` (STYLE.md, web/api/cases.py).

DRF's own errors (401 without a valid token, 403, 404, 405, 400 from a serializer) say
``{"detail": ...}`` or list field errors; this handler, set as ``EXCEPTION_HANDLER``, turns each into a
sentence under ``message`` and the rest under ``extra``, keeping DRF's status and headers
(``WWW-Authenticate`` on a 401).
"""

from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import exception_handler


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler, then the body reshaped; None (a server error) when DRF does not handle ``exc``."""
    response = exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and set(data) == {"detail"}:
        response.data = {"message": str(data["detail"]), "extra": {}}
    elif isinstance(data, dict):
        response.data = {"message": "The request is not valid.", "extra": data}
    else:
        response.data = {"message": " ".join(str(item) for item in data), "extra": {}}
    return response
