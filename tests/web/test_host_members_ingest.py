"""End to end: the real pt-stalk capture of a full tmpfs, a crash with restarts, a TIME_WAIT storm
and back_log above somaxconn (tests/fixtures/bundles/ptstalk-mariadb-fullfs-crash.tar.gz) is ingested
with ``manage.py analyze --json --sync``: no member is left "not used", and the findings name their
culprits, which the API serves."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db

BUNDLE = (
    Path(__file__).resolve().parent.parent / "fixtures" / "bundles" / "ptstalk-mariadb-fullfs-crash.tar.gz"
)
HOST_FORMATS = {
    "df",
    "sysctl",
    "netstat",
    "slabinfo",
    "numastat",
    "opentables",
    "mysqld_errorlog",
    "ptstalk_trigger",
    "ptstalk_output",
}


@pytest.fixture
def report() -> dict:
    out = StringIO()
    call_command("analyze", str(BUNDLE), "--json", "--sync", stdout=out)
    return json.loads(out.getvalue())


def test_every_member_is_used(report: dict) -> None:
    assert report["not_used"] == []
    assert HOST_FORMATS <= {s["format"] for s in report["sources"]}


def test_the_findings_name_their_culprits_with_evidence(report: dict, api_client: Client) -> None:
    body = api_client.get(f"/api/cases/{report['case']}/findings/").json()
    by_key = {f["key"]: f for f in body["findings"]}
    expected = {
        "filesystem-full": ("filesystem", "/tmp/hmembers/fs"),
        "kernel-settings": ("setting", "net.core.somaxconn"),
        "client-connection-storm": ("host", "127.0.0.1"),
    }
    for key, (kind, ident) in expected.items():
        culprit = by_key[key]["culprit"]
        assert (culprit["kind"], culprit["id"]) == (kind, ident), key
        assert culprit["evidence"] and culprit["evidence"][0]["member"].startswith(
            "ptstalk-mariadb-fullfs-crash/"
        )
    assert "datadir" in by_key["filesystem-full"]["culprit"]["statement"]
    crash = by_key["mysqld-errors"]
    assert crash["severity"] == "critical" and "signal 11" in crash["title"]


def test_the_api_serves_the_culprit(report: dict, api_client: Client) -> None:
    body = api_client.get(f"/api/cases/{report['case']}/findings/").json()
    storm = next(f for f in body["findings"] if f["key"] == "client-connection-storm")
    assert storm["culprit"]["kind"] == "host" and storm["culprit"]["host"] == "127.0.0.1"


def test_the_trigger_and_the_collectors_errors_are_shown_with_the_sources(
    report: dict, engineer_client: Client
) -> None:
    variants = {s["format"]: s.get("variant", "") for s in report["sources"]}
    assert variants["ptstalk_trigger"] == "pt-stalk -trigger: Not stalking; collect triggered immediately"
    page = engineer_client.get(f"/cases/{report['case']}/").content.decode()
    assert "Not stalking; collect triggered immediately" in page and "collector error line(s)" in page


def test_members_without_any_time_are_read_as_context(tmp_path: Path) -> None:
    import tarfile

    with tarfile.open(BUNDLE) as tar:
        prefix = "ptstalk-mariadb-fullfs-crash/2026_11_27_16_10_00-"
        members = (
            ("sysctl", "sysctl.txt"),
            ("opentables1", "open-tables.txt"),
            ("df", "df.txt"),
            ("log_error", "mysqld.err"),
        )
        for suffix, name in members:
            text = tar.extractfile(prefix + suffix).read().decode()
            lines = [ln for ln in text.splitlines() if not ln.startswith("TS ")]  # loose files, no markers
            (tmp_path / name).write_text("\n".join(lines) + "\n")
    bundle = tmp_path / "loose.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        for _, name in members:
            tar.add(tmp_path / name, arcname=f"notes/{name}")
    out = StringIO()
    call_command("analyze", str(bundle), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    assert report["not_used"] == []
    assert {s["format"] for s in report["sources"]} == {"sysctl", "opentables", "df", "mysqld_errorlog"}
    by_key = {f["key"]: f for f in report["findings"]}
    assert {"filesystem-full", "kernel-settings", "mysqld-errors"} <= set(by_key)  # no back_log: swappiness
    assert by_key["kernel-settings"]["windows"] == by_key["filesystem-full"]["windows"]  # the capture's
