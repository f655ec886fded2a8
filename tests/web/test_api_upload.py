"""Uploads through the API: a bundle from upload to findings with a token, through a real Celery
worker on the real Redis; the answer while the task queue cannot be reached; invalid uploads."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.test import Client

from tests.web.conftest import EXAMPLE_BUNDLE
from tests.web.test_api_tokens import _make_token
from web import faults
from web.celery import app as celery_app
from web.models import Case

#: Seconds an ingest of the example bundle may take on a busy 2-core machine.
INGEST_TIMEOUT_S = 120


def test_a_script_takes_a_bundle_from_upload_to_findings(celery_worker, engineer_client: Client) -> None:
    token = _make_token(engineer_client, name="upload script")
    script = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    with EXAMPLE_BUNDLE.open("rb") as fh:
        made = script.post("/api/cases/", {"bundle": fh, "title": "ticket 4711"})
    assert made.status_code == 201 and made.json()["queued"] is True
    deadline = time.monotonic() + INGEST_TIMEOUT_S
    while (status := script.get(made.json()["status_url"]).json())["processing"]:
        assert time.monotonic() < deadline, status
        time.sleep(0.5)
    assert status["status"] == "ready", status["failure_reason"]
    findings = script.get(made.json()["findings_url"]).json()["findings"]
    assert [f["key"] for f in findings] == [
        "active-sessions-overload",
        "cpu-saturation",
        "same-query-pileup",
        "tmp-table-churn",
        "tcp-retransmits",
    ]


@pytest.mark.django_db
def test_an_upload_answers_201_with_where_to_poll(api_client: Client, private_queue) -> None:
    with EXAMPLE_BUNDLE.open("rb") as fh:
        answer = api_client.post("/api/cases/", {"bundle": fh, "title": "ticket 4711"})
    assert answer.status_code == 201
    body = answer.json()
    assert body["status"] == "queued" and body["queued"] is True
    assert body["message"] == f"Case {body['id']} is saved and queued for analysis: poll its status_url."
    assert body["status_url"] == f"/api/cases/{body['id']}/status/"
    assert body["findings_url"] == f"/api/cases/{body['id']}/findings/"
    case = Case.objects.get(pk=body["id"])
    assert case.title == "ticket 4711" and case.upload.size == EXAMPLE_BUNDLE.stat().st_size


@pytest.mark.django_db
def test_an_upload_without_a_bundle_is_400_with_the_field(api_client: Client) -> None:
    answer = api_client.post("/api/cases/", {"title": "no file"})
    assert answer.status_code == 400
    assert answer.json()["message"] == "The request is not valid." and "bundle" in answer.json()["extra"]


@pytest.mark.django_db
def test_an_empty_bundle_is_400(api_client: Client, tmp_path: Path) -> None:
    empty = tmp_path / "empty.tgz"
    empty.write_bytes(b"")
    with empty.open("rb") as fh:
        answer = api_client.post("/api/cases/", {"bundle": fh})
    assert answer.status_code == 400 and "bundle" in answer.json()["extra"]


@pytest.fixture
def broker_down() -> Iterator[None]:
    """Celery pointed at a loopback port nothing listens on: sending a task fails as with Redis down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    old = celery_app.conf.broker_url
    celery_app.conf.broker_url = f"redis://127.0.0.1:{port}/0"
    celery_app._pool, celery_app.amqp._producer_pool = None, None  # connections are made anew
    try:
        yield
    finally:
        celery_app.conf.broker_url = old
        celery_app._pool, celery_app.amqp._producer_pool = None, None


@pytest.mark.django_db(transaction=True)  # the task is sent when the upload commits, as in production
def test_an_upload_while_redis_is_down_says_the_case_is_saved_and_will_be_queued(
    api_client: Client, broker_down
) -> None:
    started = datetime.now(tz=UTC)
    with EXAMPLE_BUNDLE.open("rb") as fh:
        answer = api_client.post("/api/cases/", {"bundle": fh})
    assert answer.status_code == 201 and datetime.now(tz=UTC) - started < timedelta(seconds=10)
    body = answer.json()
    assert body["queued"] is False and body["status"] == "queued"
    assert body["detail"] == faults.BROKER_DOWN_DETAIL
    assert body["message"] == f"Case {body['id']} is saved. {faults.BROKER_DOWN_DETAIL}"
    assert Case.objects.get(pk=body["id"]).enqueued_at is None  # the sweeper sends it once Redis is back
