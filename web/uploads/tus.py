"""The tus 1.0.0 resumable-upload protocol, server side: the core protocol and the creation extension
(https://tus.io/protocols/resumable-upload), for upload links (``/u/<token>/files/``).

- ``OPTIONS`` (any tus URL): 204 with ``Tus-Version: 1.0.0``, ``Tus-Extension: creation`` and
  ``Tus-Max-Size`` (the link's largest upload, bytes). Needs no ``Tus-Resumable``.
- ``POST /u/<token>/files/`` with ``Upload-Length`` (bytes) and optionally ``Upload-Metadata``
  (``key base64,key base64``; ``filename`` is kept, cleaned): 201 and ``Location`` of the new upload.
  413 when the length is over the link's maximum, 400 when it is missing or not a number.
- ``HEAD /u/<token>/files/<key>``: 200 with ``Upload-Offset`` (bytes received) and ``Upload-Length``,
  ``Cache-Control: no-store``.
- ``PATCH /u/<token>/files/<key>`` with ``Content-Type: application/offset+octet-stream`` (else 415)
  and ``Upload-Offset`` equal to the bytes received (else 409): the bytes are appended, 204 with the
  new ``Upload-Offset``. A body cut short by a broken connection keeps what arrived.

Every answer but OPTIONS needs ``Tus-Resumable: 1.0.0`` (else 412) and carries it. A
``X-HTTP-Method-Override`` header on a POST is taken as the method (clients behind proxies that only
pass GET and POST). An unknown, expired, revoked or used-up link, and one whose maker is no longer an
active member of its team (``services.maker_in_team``), gets the same 404 as every other URL under
``/u/`` (``web.tokenlinks.UPLOAD_LINKS.not_found``), before a byte of the request is read.
"""

from __future__ import annotations

import base64
import binascii

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from web.tokenlinks import UPLOAD_LINKS
from web.uploads import services

VERSION = "1.0.0"
EXTENSIONS = "creation"
OFFSET_TYPE = "application/offset+octet-stream"
#: The longest Upload-Metadata header taken (characters).
MAX_METADATA = 4096


def parse_metadata(header: str) -> dict[str, str]:
    """``Upload-Metadata`` (``key base64value`` pairs, comma-separated; a key alone has no value) as
    a dict of text values (undecodable values are dropped; UTF-8 with replacement characters).

    >>> parse_metadata("filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential")
    {'filename': 'world_domination_plan.pdf', 'is_confidential': ''}
    """
    out: dict[str, str] = {}
    for pair in header[:MAX_METADATA].split(","):
        parts = pair.strip().split(" ", 1)
        if not parts[0]:
            continue
        try:
            value = base64.b64decode(parts[1].strip(), validate=True) if len(parts) > 1 else b""
        except (binascii.Error, ValueError):
            continue
        out[parts[0]] = value.decode("utf-8", "replace")
    return out


def _headers(response: HttpResponse) -> HttpResponse:
    response["Tus-Resumable"] = VERSION
    response["Cache-Control"] = "no-store, private"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex, nofollow, noarchive"
    return response


def _empty(status: int, **headers: str) -> HttpResponse:
    response = HttpResponse(status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return _headers(response)


def _error(status: int, message: str) -> HttpResponse:
    return _headers(HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8"))


def _options(max_size: int) -> HttpResponse:
    return _empty(204, Tus_Version=VERSION, Tus_Extension=EXTENSIONS, Tus_Max_Size=str(max_size))


def _method(request: HttpRequest) -> str:
    override = request.headers.get("X-HTTP-Method-Override", "").upper()
    if request.method == "POST" and override in ("PATCH", "HEAD", "DELETE"):
        return override
    return request.method or "GET"


def _int_header(request: HttpRequest, name: str) -> int | None:
    value = request.headers.get(name, "").strip()
    return int(value) if value.isdigit() and len(value) < 20 else None


def _precondition(request: HttpRequest) -> HttpResponse | None:
    if request.headers.get("Tus-Resumable") != VERSION:
        return _empty(412, Tus_Version=VERSION)
    return None


@csrf_exempt
def creation(request: HttpRequest, token: str) -> HttpResponse:
    """``/u/<token>/files/``: OPTIONS (what the server supports) and POST (a new upload)."""
    refused = UPLOAD_LINKS.refused(request)
    if refused is not None:
        return refused
    link = services.link_for_token(token)
    if link is None:
        return UPLOAD_LINKS.miss(request)
    method = _method(request)
    if method == "OPTIONS":
        return _options(min(link.max_bytes, services.max_size_limit()))
    if method != "POST":
        return _empty(405, Allow="OPTIONS, POST")
    failed = _precondition(request)
    if failed is not None:
        return failed
    length = _int_header(request, "Upload-Length")
    if length is None:
        return _error(400, "Upload-Length is required: the size of the upload in bytes.")
    metadata = parse_metadata(request.headers.get("Upload-Metadata", ""))
    try:
        transfer = services.transfer_create(
            token=token, length=length, name=metadata.get("filename") or metadata.get("name") or ""
        )
    except services.TransferError as exc:
        if exc.status == 404:
            return UPLOAD_LINKS.miss(request)
        return _error(exc.status, str(exc))
    return _empty(201, Location=request.build_absolute_uri(f"/u/{token}/files/{transfer.key}"))


@csrf_exempt
def upload(request: HttpRequest, token: str, key: str) -> HttpResponse:
    """``/u/<token>/files/<key>`` (a trailing slash is taken too): OPTIONS, HEAD (the offset) and PATCH
    (append bytes)."""
    refused = UPLOAD_LINKS.refused(request)
    if refused is not None:
        return refused
    transfer = services.transfer_for(token, key)
    if transfer is None:
        return UPLOAD_LINKS.miss(request)
    method = _method(request)
    if method == "OPTIONS":
        return _options(min(transfer.link.max_bytes, services.max_size_limit()))
    if method not in ("HEAD", "PATCH"):
        return _empty(405, Allow="OPTIONS, HEAD, PATCH")
    failed = _precondition(request)
    if failed is not None:
        return failed
    if method == "HEAD":
        return _empty(200, Upload_Offset=str(transfer.offset), Upload_Length=str(transfer.length))
    if request.content_type != OFFSET_TYPE:
        return _error(415, f"Content-Type must be {OFFSET_TYPE}.")
    offset = _int_header(request, "Upload-Offset")
    if offset is None:
        return _error(400, "Upload-Offset is required: the bytes already received (HEAD tells).")
    try:
        transfer = services.transfer_append(transfer=transfer, offset=offset, read=request.read)
    except services.TransferError as exc:
        if exc.status == 404:
            return UPLOAD_LINKS.miss(request)
        return _error(exc.status, str(exc))
    return _empty(204, Upload_Offset=str(transfer.offset))
