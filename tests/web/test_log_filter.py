"""web.logs.SecretsFilter on its own: the message, the extra fields (a request object among them, as
django.request passes it) and the traceback of a record are masked before the JSON formatter writes
them; numbers and the rest of the line are kept."""

from __future__ import annotations

import json
import logging
import sys

from django.test import RequestFactory
from pythonjsonlogger.json import JsonFormatter

from web.logs import SecretsFilter

SHARE = "oUzUijAfBNvlwCTO-dXFCMWfmG2zksoC_eLo4VTOxJw"
API = "cb_Q2FzZWJvb2sgdGVzdCB0b2tlbiBub3QgcmVhbCAxMjM0NTY"


def _line(record: logging.LogRecord) -> str:
    assert SecretsFilter().filter(record) is True
    return JsonFormatter("%(levelname)s %(name)s %(message)s").format(record)


def test_message_extras_and_traceback_are_masked() -> None:
    request = RequestFactory().get(f"/s/{SHARE}/bundle/?t=1", HTTP_AUTHORIZATION=f"Bearer {API}")
    try:
        raise ValueError(f"no such link /s/{SHARE}/ for token={API}")
    except ValueError:
        record = logging.getLogger("django.request").makeRecord(
            "django.request",
            logging.WARNING,
            __file__,
            1,
            "Not Found: %s",
            (request.path,),
            exc_info=sys.exc_info(),
            extra={"status_code": 404, "request": request, "data": {"args": [f"/s/{SHARE}/"], "auth": API}},
        )
    line = _line(record)
    assert SHARE not in line and API not in line
    parsed = json.loads(line)
    assert parsed["message"] == "Not Found: /s/…/bundle/"
    assert parsed["status_code"] == 404
    assert parsed["request"] == "<WSGIRequest: GET '/s/…/bundle/?t=1'>"
    assert parsed["data"] == {"args": ["/s/…/"], "auth": "cb_…"}
    assert "ValueError: no such link /s/…/ for token=…" in parsed["exc_info"]


def test_a_password_field_and_a_reset_link_are_masked() -> None:
    record = logging.getLogger("x").makeRecord(
        "x",
        logging.ERROR,
        __file__,
        1,
        "POST body password=hunter2&next=/ from /accounts/reset/Mg/cz4k1r-abc/",
        (),
        None,
    )
    message = json.loads(_line(record))["message"]
    assert message == "POST body password=…&next=/ from /accounts/reset/…/…/"
