"""Structured logs: what every log line carries besides its message, and one line per web request.

The formatter (settings.LOGGING) writes each record as one JSON object; ``ContextFilter`` adds the
Celery task a worker line comes from (``task_id``, ``task``), and ``RequestLogMiddleware`` writes one
line per request (``method``, ``path``, ``status``, ``duration_ms``, ``user_id``). Code that logs
about a case passes ``extra={"case_id": ...}``, which the formatter keeps as a field.

No secret in any line: ``SecretsFilter``, on every handler (web, worker, beat and gunicorn alike),
masks share tokens (``/s/…/``), password-reset links (``/accounts/reset/…/…/``), API tokens
(``cb_…``), bearer credentials, session and CSRF cookies and password fields in the message, in
every extra field (django.request's ``request`` among them) and in tracebacks, at any level; and
``guard_every_record`` masks the message of every record when it is made, so a handler outside
settings.LOGGING writes no secret either. Mail is never written to a log (web/mail.py).
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


#: What a secret looks like in a log line, and what it is written as instead: a share link's token
#: in a path (it opens the case to whoever reads it), an upload link's (``/u/…``: it takes bundles),
#: a password-reset link's user id and token
#: (django.contrib.auth's ``reset/<uidb64>/<token>/``), a personal API token (web/api_tokens.py:
#: ``cb_`` + 43 characters), an ``Authorization`` value, and cookies or form fields that hold a
#: session, a CSRF token or a password. Characters that end a token: ``/ ? # & ;``, quotes, blanks.
_END = r"/?#&;'\"\s<>"
SECRET_PATTERNS = (
    (re.compile(rf"/s/[^{_END}]+"), "/s/…"),
    (re.compile(rf"/u/[^{_END}]+"), "/u/…"),
    (re.compile(rf"/accounts/reset/[^{_END}]+/[^{_END}]+"), "/accounts/reset/…/…"),
    (re.compile(r"\bcb_[A-Za-z0-9_-]{6,}"), "cb_…"),
    (re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 …"),
    (
        re.compile(
            rf"(?i)\b(sessionid|csrftoken|csrfmiddlewaretoken|[a-z_]*password[a-z_0-9]*|token|api_key)"
            rf"(['\"]?\s*[=:]\s*['\"]?)[^{_END},]+"
        ),
        r"\1\2…",
    ),
)


def redact(text: str) -> str:
    """``text`` with every secret ``SECRET_PATTERNS`` knows masked.

    >>> redact("Not Found: /s/oUzUijAfBNvlwCTO-dXFCMWfmG2zksoC_eLo4VTOxJw/bundle/")
    'Not Found: /s/…/bundle/'
    >>> redact("PATCH /u/x5A7BqipN5H_eGXP9dnQsJhWYl-Ndm8rXLTGmkv-6P8/files/k1 204")
    'PATCH /u/…/files/k1 204'
    >>> redact("GET /accounts/reset/Mg/cz4k1r-0e5a0d7f1c3b2a4e6d8f/ 200")
    'GET /accounts/reset/…/…/ 200'
    >>> redact("open https://casebook.example.com/accounts/reset/Mg/cz4k1r-0e5a0d7f1c3b2a4e6d8f/")
    'open https://casebook.example.com/accounts/reset/…/…/'
    >>> redact("Authorization: Bearer cb_Zm9vYmFyYmF6cXV4cXV1eA; sessionid=abc123; password='hunter2'")
    "Authorization: Bearer cb_…; sessionid=…; password='…'"
    """
    for pattern, replacement in SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def logged_path(path: str) -> str:
    """``path`` as a log line shows it: secrets masked (``redact``), at most 300 characters.

    >>> logged_path("/s/oUzUijAfBNvlwCTO-dXFCMWfmG2zksoC_eLo4VTOxJw/timeline.json")
    '/s/…/timeline.json'
    """
    return redact(path)[:300]


#: The attributes every LogRecord has: not extra fields.
_RECORD_FIELDS = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}
#: How deep ``_scrub`` follows nested extras (Celery's ``data`` holds a task's args and kwargs).
_SCRUB_DEPTH = 4


def _scrub(value: object, depth: int = 0) -> object:
    """An extra field with its secrets masked: strings redacted, containers walked, anything else
    (a request, an exception) written as its redacted ``str``; numbers, booleans and None kept."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return redact(value)
    if depth < _SCRUB_DEPTH and isinstance(value, dict):
        return {_scrub(k, depth + 1): _scrub(v, depth + 1) for k, v in value.items()}
    if depth < _SCRUB_DEPTH and isinstance(value, list | tuple):
        return [_scrub(v, depth + 1) for v in value]
    return redact(repr(value) if isinstance(value, HttpRequest) else str(value))


class SecretsFilter(logging.Filter):
    """Masks secrets (``redact``) in a record's message, its extra fields and its traceback before
    any handler writes it. On every handler of settings.LOGGING, so a line from any logger (Django's
    ``django.request`` writes the path of every 4xx, gunicorn's, Celery's, ours) is covered."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record still gets written, masked
            message = str(record.msg)
        record.msg, record.args = redact(message), None
        for key, value in list(record.__dict__.items()):
            if key not in _RECORD_FIELDS:
                record.__dict__[key] = _scrub(value)
        if record.exc_info:
            # Written from ``exc_text`` by both formatters once ``exc_info`` is cleared.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def _guarded_factory(make: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - left to the handler, which reports a bad record itself
            return record
        masked = redact(message)
        if masked != message:  # a record without a secret keeps its msg and args as they were
            record.msg, record.args = masked, None
        return record

    factory.casebook_guard = True  # type: ignore[attr-defined]
    return factory


def guard_every_record() -> None:
    """Mask secrets (``redact``) in the message of every log record when it is made, whatever handler
    writes it later: one a library adds at run time, a test's, a process's own (gunicorn's, Celery's)
    as well as those of settings.LOGGING, which also scrub extra fields and tracebacks
    (``SecretsFilter``). Installed once per process (``WebConfig.ready``); a record without a secret
    is left as it was made."""
    current = logging.getLogRecordFactory()
    if not getattr(current, "casebook_guard", False):
        logging.setLogRecordFactory(_guarded_factory(current))


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
