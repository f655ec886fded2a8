"""Structured logs: what every log line carries besides its message, and one line per web request.

The formatter (settings.LOGGING) writes each record as one JSON object; ``ContextFilter`` adds the
Celery task a worker line comes from (``task_id``, ``task``), and ``RequestLogMiddleware`` writes one
line per request (``method``, ``path``, ``status``, ``duration_ms``, ``user_id``). Code that logs
about a case passes ``extra={"case_id": ...}``, which the formatter keeps as a field.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

from celery import current_task
from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

request_log = logging.getLogger("casebook.request")


class ContextFilter(logging.Filter):
    """Adds ``task_id`` and ``task`` to records logged while a Celery task runs."""

    def filter(self, record: logging.LogRecord) -> bool:
        task = current_task
        request = getattr(task, "request", None) if task else None
        if request is not None and getattr(request, "id", None) and not hasattr(record, "task_id"):
            record.task_id = request.id
            record.task = task.name
        return True


#: A share link's token in a path: logged as ``/s/…/`` (the token opens the case to whoever reads it).
_SHARE_TOKEN = re.compile(r"\A/s/[^/]+")


def logged_path(path: str) -> str:
    """``path`` as a log line shows it: a share token masked, at most 300 characters.

    >>> logged_path("/s/oUzUijAfBNvlwCTO-dXFCMWfmG2zksoC_eLo4VTOxJw/timeline.json")
    '/s/…/timeline.json'
    """
    return _SHARE_TOKEN.sub("/s/…", path)[:300]


class RequestLogMiddleware:
    """One log line per request: method, path (no query string: it may hold search terms; a share
    token masked), status, duration in milliseconds and the user id; 5xx at ERROR, 4xx at WARNING,
    the rest at INFO."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        # Only a user the request already loaded (request.user is lazy): never a query of its own here.
        user = getattr(getattr(request, "user", None), "_wrapped", empty)
        user_id = getattr(user, "pk", None) if user is not empty else None
        status = response.status_code
        level = logging.ERROR if status >= 500 else logging.WARNING if status >= 400 else logging.INFO
        request_log.log(
            level,
            "%s %s %s %.1f ms",
            request.method,
            logged_path(request.path),
            status,
            duration_ms,
            extra={
                "method": request.method,
                "path": logged_path(request.path),
                "status": status,
                "duration_ms": duration_ms,
                "user_id": user_id,
            },
        )
        return response
