"""Health endpoints (web/health.py) and structured logs (web/logs.py) against the real services."""

from __future__ import annotations

import json
import logging
import socket

import pytest
from django.test import Client
from pythonjsonlogger.json import JsonFormatter

from web import logs


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_liveness_answers_without_touching_the_database(client: Client) -> None:
    # No django_db mark: any database access in this request would raise.
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert response["Cache-Control"] == "no-store"


def test_probes_answer_whatever_the_host_name(client: Client) -> None:
    # Orchestrators probe the pod's address, which ALLOWED_HOSTS does not list.
    assert client.get("/healthz", HTTP_HOST="10.1.2.3:8000").status_code == 200


@pytest.mark.django_db
def test_readiness_checks_the_database_and_the_broker(client: Client) -> None:
    body = client.get("/readyz").json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True and body["checks"]["broker"]["ok"] is True


@pytest.mark.django_db
def test_readiness_fails_with_the_reason_when_the_broker_is_unreachable(client: Client, settings) -> None:
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["broker"]["ok"] is False and "Connection" in body["checks"]["broker"]["error"]


def test_log_lines_are_json_with_the_request_fields(settings) -> None:
    config = dict(settings.LOGGING["formatters"]["json"])
    formatter = JsonFormatter(**{k: v for k, v in config.items() if k != "()"})
    record = logs.request_log.makeRecord(
        "casebook.request",
        logging.INFO,
        __file__,
        1,
        "%s %s %s %.1f ms",
        ("GET", "/cases/", 200, 12.5),
        None,
        extra={"method": "GET", "path": "/cases/", "status": 200, "duration_ms": 12.5, "user_id": 7},
    )
    line = json.loads(formatter.format(record))
    assert line["message"] == "GET /cases/ 200 12.5 ms"
    assert (line["level"], line["logger"], line["status"], line["user_id"]) == (
        "INFO",
        "casebook.request",
        200,
        7,
    )
    assert line["time"].endswith("+00:00")


@pytest.mark.django_db
def test_every_request_is_logged_once_with_its_status_and_duration(client: Client, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="casebook.request"):
        client.get("/accounts/login/")
    (record,) = [r for r in caplog.records if r.name == "casebook.request"]
    assert (record.method, record.path, record.status, record.user_id) == (
        "GET",
        "/accounts/login/",
        200,
        None,
    )
    assert record.duration_ms >= 0


@pytest.mark.django_db
def test_readiness_details_only_for_loopback_and_site_admins(client: Client, engineer) -> None:
    from django.contrib.auth import get_user_model

    far = {"REMOTE_ADDR": "192.0.2.7"}
    response = client.get("/readyz", **far)
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    engineer_client = Client()
    engineer_client.force_login(engineer)
    assert engineer_client.get("/readyz", **far).json() == {"status": "ok"}
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", password="correct horse battery"))
    assert admin.get("/readyz", **far).json()["checks"]["database"]["ok"] is True
    assert client.get("/readyz", REMOTE_ADDR="::1").json()["checks"]["broker"]["ok"] is True


@pytest.mark.django_db
def test_an_unready_answer_names_no_server_to_a_stranger(client: Client, settings) -> None:
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{_closed_port()}/0"
    response = client.get("/readyz", REMOTE_ADDR="198.51.100.20")
    assert (response.status_code, response.json()) == (503, {"status": "unavailable"})
