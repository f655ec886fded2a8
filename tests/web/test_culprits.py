"""The culprit of a finding through the real ingest of real captures (tests/fixtures/bundles/culprit-*,
scripts/make_culprit_bundles.sh): served by the API and ``analyze --json``, shown on the case page's
finding card and verdict, and redacted on a share link like the rest."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from tests.web.conftest import ingest_ready
from web.models import Case
from web.sharing import services as shares
from web.sharing.redaction.redactor import REDACT_ALL, Choices

pytestmark = pytest.mark.django_db

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"
NO_REDACTION = Choices(literals=False, hosts=False, users=False, schemas=False)


def _ingest(name: str) -> Case:
    return ingest_ready(BUNDLES / name)


def _by_key(findings: list[dict]) -> dict[str, dict]:
    return {f["key"]: f for f in findings}


def test_the_api_and_analyze_json_carry_the_blocker_as_culprit(api_client: Client) -> None:
    out = StringIO()
    call_command("analyze", str(BUNDLES / "culprit-rowlock.tar.gz"), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    culprit = _by_key(report["findings"])["lock-waits"]["culprit"]
    assert {k: culprit[k] for k in ("kind", "id", "user", "host", "statement", "blocks")} == {
        "kind": "session",
        "id": "5",
        "user": "app",
        "host": "localhost",
        "statement": "idle in transaction",
        "blocks": 20,
    }
    assert culprit["since"] == "2026-11-27T15:52:47.000000Z"
    assert any(e["member"].endswith("-lock-waits") and e["lines"] for e in culprit["evidence"])
    body = api_client.get(f"/api/cases/{report['case']}/findings/").json()
    api_findings = _by_key(body["findings"])
    assert api_findings["lock-waits"]["culprit"] == culprit
    assert api_findings["long-transaction"]["culprit"]["id"] == "5"


def test_the_case_page_shows_the_blocker_with_its_kill(engineer_client: Client) -> None:
    case = _ingest("culprit-mdl.tar.gz")
    page = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    assert 'class="finding__culprit"' in page
    assert "Blocker:</strong>" in page and "<code>KILL 119</code>" in page
    assert "app@localhost" in page
    assert "mdl/2026_11_27_15_53_21-processlist:" in page  # its evidence lines


def test_a_redacted_share_carries_no_user_host_or_literal_of_a_culprit() -> None:
    case = _ingest("culprit-ftwrl.tar.gz")
    # unredacted, the culprit's user and the dump's table are served (the check below can fail)
    base = shares.share_create(case=case, user=None, choices=NO_REDACTION).path
    plain = Client().get(f"{base}report.json").json()
    culprit = _by_key(plain["findings"])["lock-waits"]["culprit"]
    assert culprit["user"] == "app" and "`items`" in culprit["statement"]
    base = shares.share_create(case=case, user=None, choices=REDACT_ALL).path
    report = Client().get(f"{base}report.json").json()
    redacted = _by_key(report["findings"])["lock-waits"]["culprit"]
    assert redacted["id"] == "220" and redacted["blocks"] == 6
    assert redacted["user"] != "app" and redacted["user"].startswith("user-")
    page = Client().get(base).content.decode()
    for served in (json.dumps(redacted), page):
        assert "app@" not in served and "shop" not in served
    assert 'class="finding__culprit"' in page and "<code>KILL 220</code>" in page


def test_the_verdict_names_the_process_that_takes_the_disk(engineer_client: Client) -> None:
    """culprit-diskhog: fio's fsync writers take the disk while MariaDB idles; analyze --json carries
    fio as the io-consumer's culprit and the case page's verdict leads with it."""
    out = StringIO()
    call_command("analyze", str(BUNDLES / "culprit-diskhog.tar.gz"), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    io = _by_key(report["findings"])["io-consumer"]
    assert (io["culprit"]["kind"], io["culprit"]["statement"]) == ("process", "fio")
    assert io["title"].startswith(f"Disk vda busy with fio (PID {io['culprit']['id']}), not MySQL")
    page = engineer_client.get(f"/cases/{report['case']}/").content.decode()
    verdict = page[page.index('class="verdict') :]
    assert "fio" in verdict[: verdict.index("</section>") if "</section>" in verdict else 4000]
