"""The time range of a timeline request: ``?start=`` and ``?end=`` in epoch milliseconds, as the
case page and the share pages send them (static/js/lib/charts.js)."""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import HttpRequest, JsonResponse


def range_params(request: HttpRequest) -> tuple[datetime | None, datetime | None]:
    """``?start=`` and ``?end=`` (epoch milliseconds, each optional) as aware UTC datetimes (None
    when absent). Raises ValueError on a value that is not a number or not a representable time."""
    out = []
    for raw in (request.GET.get("start"), request.GET.get("end")):
        try:
            out.append(datetime.fromtimestamp(float(raw) / 1000.0, tz=UTC) if raw else None)
        except (OverflowError, OSError) as exc:  # a number far outside the years datetime holds
            raise ValueError(f"{raw!r} is not a time") from exc
    return out[0], out[1]


def range_error() -> JsonResponse:
    """The 400 answer to a ``start``/``end`` that is not epoch milliseconds."""
    return JsonResponse({"message": "start and end are epoch milliseconds", "extra": {}}, status=400)
