"""Passwords are never shown on the engineers' side either (parsers/passwords.py): not in a moment's
sessions, threads and raw lines (the case page's JSON and the API), not in the page, report, exports,
timeline or status, and not in what the ingest stores: findings, the verdict, rules' results.

Two real-shaped bundles, made here: a pt-stalk collection whose ps and processlist hold passwords
(tests/web/share_capture.py, as the share tests use it), and the replication capture
``cluster-replica-stopped`` (tests/fixtures/bundles/README.md) with the source running
``CREATE USER ... IDENTIFIED BY '...'`` and its replica stopped on that statement (error 1396, the
statement quoted in ``Last_SQL_Error``, which the replica-stopped rule quotes in its finding).
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest
from django.test import Client

from tests.web.conftest import BUNDLES, ingest_ready, make_tar
from tests.web.share_capture import SERVER, SERVER_SECRETS, server_processlist, server_ps, server_slave_status
from web.models import Case, Finding, NotUsedMember, RuleResult, SampleIndex

pytestmark = pytest.mark.django_db

PASSWORDS = SERVER_SECRETS["passwords"]
#: The password of the account the source creates and the replica failed to create.
CREATED = "Cu-S3cret-Pw"
STATEMENT = f"CREATE USER 'acme_ro'@'%' IDENTIFIED BY '{CREATED}'"
#: MySQL's words for a replicated statement that failed (Last_SQL_Error of SHOW SLAVE STATUS).
REPLICA_ERROR = (
    "Error 'Operation CREATE USER failed for 'acme_ro'@'%'' on query. Default database: ''. "
    f"Query: '{STATEMENT}'"
)


@pytest.fixture
def server_case(tmp_path: Path, engineer) -> Case:
    """The share tests' server capture, in the engineer's team (a case made without a user)."""
    members = {
        "c/2026_04_21_16_51_41-hostname": f"{SERVER}\n",
        "c/2026_04_21_16_51_41-processlist": server_processlist(),
        "c/2026_04_21_16_51_41-ps": server_ps(),
        "c/2026_04_21_16_51_41-slave-status": server_slave_status(),
    }
    return ingest_ready(make_tar(tmp_path / "db-prod-17.tgz", {k: v.encode() for k, v in members.items()}))


def _leaks(text: str) -> list[str]:
    return [p for p in [*PASSWORDS, CREATED] if p in text]


def test_an_engineers_moment_serves_no_password_on_the_page_json_nor_the_api(
    server_case: Case, engineer_client: Client, api_client: Client
) -> None:
    instants = sorted(set(SampleIndex.objects.filter(case=server_case).values_list("ts", flat=True)))
    assert instants
    served = []
    for ts in instants:
        page = engineer_client.get(
            f"/cases/{server_case.pk}/moment.json", {"t": round(ts.timestamp() * 1000)}
        )
        api = api_client.get(f"/api/cases/{server_case.pk}/moment/", {"at": ts.isoformat()})
        assert (page.status_code, api.status_code) == (200, 200)
        served += [page.content.decode(), api.content.decode()]
    assert _leaks("\n".join(served)) == []
    moment = json.loads(served[0])
    rows = [r["info"] for r in moment["processlist"]["rows"] if r["info"]]
    assert "CREATE USER 'acme_ro'@'%' IDENTIFIED BY '***'" in rows
    assert "CHANGE REPLICATION SOURCE TO SOURCE_HOST='10.20.30.9', SOURCE_PASSWORD='***'" in rows
    raw = [line for s in moment["raw"]["sources"] for line in s["lines"]]
    assert "    Info: CREATE USER 'acme_ro'@'%' IDENTIFIED BY '***'" in raw
    assert any(line.endswith("/bin/mysqladmin -uacme_admin -p*** -P3306 ext -i1 -c30") for line in raw)
    assert any(
        line.endswith("mysqlsh acme_admin:***@db-src-03.acme-corp.internal:3306 --sql") for line in raw
    )
    assert any(line.endswith("mysql -uacme_admin -p -h fe80::a1b2:3ff:fe4c:5d6e%eth0 -P3306") for line in raw)


def _replica_stopped_on_create_user(path: Path) -> Path:
    """``cluster-replica-stopped`` with db-a's processlist running ``STATEMENT`` and db-b's SQL thread
    stopped on it (its ``Last_Error`` and ``Last_SQL_Error``, errno 1396)."""
    members: dict[str, bytes] = {}
    with tarfile.open(BUNDLES / "cluster-replica-stopped.tar.gz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                members[m.name] = tar.extractfile(m).read()
    for name, data in members.items():
        text = data.decode()
        if name.endswith("db-b/2026_11_27_19_47_49-slave-status"):
            text = re.sub(r"(Last_(?:SQL_)?Error: ).*", lambda m: m.group(1) + REPLICA_ERROR, text)
            text = re.sub(r"(Last_(?:SQL_)?Errno: )1062", r"\g<1>1396", text)
        elif name.endswith("db-a/2026_11_27_19_47_49-processlist"):
            n = text.count(". row ***")
            text += (
                f"*************************** {n + 1}. row ***************************\n"
                "      Id: 131\n    User: acme_admin\n    Host: 10.0.0.5:51234\n      db: NULL\n"
                f" Command: Query\n    Time: 0\n   State: starting\n    Info: {STATEMENT}\nProgress: 0.000\n"
            )
        members[name] = text.encode()
    return make_tar(path, members)


@pytest.fixture
def stopped_case(tmp_path: Path, engineer) -> Case:
    return ingest_ready(_replica_stopped_on_create_user(tmp_path / "replica-stopped.tgz"))


def test_stored_findings_verdict_and_rule_results_hold_no_password(stopped_case: Case) -> None:
    case = stopped_case
    stored = [
        json.dumps(row, default=str)
        for row in Finding.objects.filter(case=case).values(
            "title", "summary", "evidence", "recommendation", "caveats", "culprit", "disproof", "confidence"
        )
    ]
    stored += [json.dumps(case.verdict), json.dumps(case.charts_overview), json.dumps(case.fingerprints)]
    stored += [case.search_terms, *(r.detail for r in RuleResult.objects.filter(case=case))]
    assert _leaks("\n".join(stored)) == []
    stopped = Finding.objects.get(case=case, key="replica-stopped")
    assert stopped.title.endswith(f"Query: '{STATEMENT.replace(CREATED, '***')}")  # quoted, password masked
    assert case.verdict["headline"] == stopped.title


def test_a_case_stored_before_passwords_were_masked_serves_none(
    stopped_case: Case, engineer_client: Client, api_client: Client
) -> None:
    """Findings, warnings, reasons and the overview's windows stored with the password (an ingest of an
    older version): the page, its JSON, the exports and the API mask it when they serve it."""
    case = stopped_case
    raw = f"stopped on: {STATEMENT}; mysqldump -uroot -p{CREATED} shop"
    stopped = Finding.objects.get(case=case, key="replica-stopped")
    culprit = {**(stopped.culprit or {"kind": "statement", "id": "1396"}), "statement": STATEMENT}
    evidence = [{**stopped.evidence[0], "label": raw, "value": raw}, *stopped.evidence[1:]]
    Finding.objects.filter(pk=stopped.pk).update(title=raw, summary=raw, culprit=culprit, evidence=evidence)
    overview = case.charts_overview
    overview["windows"] = [{**w, "title": raw} for w in overview["windows"]]
    verdict = {**case.verdict, "headline": raw, "fix": raw}
    Case.objects.filter(pk=case.pk).update(
        warnings=[raw], verdict=verdict, charts_overview=overview, failure_reason=raw
    )
    NotUsedMember.objects.create(case=case, member="c/notes.txt", reason=f"line 1: {raw}")
    base = f"/cases/{case.pk}/"
    served = [
        engineer_client.get(base + tail)
        for tail in ("", "status.json", "timeline.json", "findings.json", "findings.csv")
    ]
    served += [api_client.get(f"/api/cases/{case.pk}/{tail}") for tail in ("", "findings/", "status/")]
    assert [r.status_code for r in served] == [200] * len(served)
    text = "\n".join(r.content.decode() for r in served)
    assert _leaks(text) == []
    assert "mysqldump -uroot -p*** shop" in text and "IDENTIFIED BY '***'" in text
