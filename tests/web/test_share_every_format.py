"""Every format of the parser registry, shared redacted: a case holding a member of each, with planted
values in every field that can hold one (tests/web/share_planted.py), leaks none of them through
any share endpoint (page, status, timeline JSON and CSV, report, findings JSON and CSV, the moment
of every host at every sample instant); a format the bundle lacks fails the test, and so does a
parser that declares no sensitive fields."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest
from django.test import Client

from analyzer.statements.querydigest import EXTRAS
from parsers import registry
from parsers.sensitive import declared
from tests.web.conftest import ingest_ready
from tests.web.share_planted import NUMBER, PASSWORDS, PLANTED, bundle, members
from web.models import Case, Host, SampleIndex, Source
from web.sharing import services as shares
from web.sharing.redaction.redactor import Choices

pytestmark = pytest.mark.django_db

NO_REDACTION = Choices(literals=False, hosts=False, users=False, schemas=False)


@pytest.fixture(scope="module")
def planted_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundle(tmp_path_factory.mktemp("planted") / "planted.tgz")


@pytest.fixture
def case(planted_bundle: Path) -> Case:
    return ingest_ready(planted_bundle)


def _urls(case: Case, base: str) -> list[str]:
    """Every URL of a link: the page, status, timeline (whole, zoomed; JSON, CSV), the slow log's
    queries (whole, zoomed), report, findings (JSON, CSV), and the moment at every sample instant, of
    the case and of each host."""
    times = sorted(
        {
            round(ts.timestamp() * 1000)
            for ts in SampleIndex.objects.filter(case=case).values_list("ts", flat=True)
        }
    )
    hosts = range(Host.objects.filter(case=case).count())
    zoom = f"?start={times[0] - 1000}&end={times[-1] + 1000}"
    return [
        base,
        f"{base}status.json",
        f"{base}timeline.json",
        f"{base}timeline.json{zoom}",
        f"{base}timeline.csv",
        f"{base}timeline.csv{zoom}",
        f"{base}queries.json",
        f"{base}queries.json{zoom}",
        f"{base}report.json",
        f"{base}findings.json",
        f"{base}findings.csv",
        *(f"{base}moment.json?t={t}" for t in times),
        *(f"{base}moment.json?t={t}&host={h}" for t in times for h in hosts),
    ]


def _served(case: Case, choices: Choices | None = None) -> str:
    made = shares.share_create(case=case, user=None, **({"choices": choices} if choices else {}))
    client, out = Client(), []
    for url in _urls(case, made.path):
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        out.append(response.content.decode("utf-8"))
    return "\n".join(out).lower()


def test_the_planted_bundle_holds_every_format_of_the_registry() -> None:
    detected = {
        registry.detect(data.decode().splitlines()[: registry.HEAD_LINES]) for data in members().values()
    }
    assert {m.FORMAT for m in registry.parsers()} - {m.FORMAT for m in detected if m} == set()


def test_the_planted_case_has_two_hosts_and_a_source_of_every_member(case: Case) -> None:
    assert Host.objects.filter(case=case).count() == 2  # a host filter, a moment per host
    assert Source.objects.filter(case=case).count() == len(members()) - 1  # SHOW BINARY LOGS: not read


def test_a_redacted_link_leaks_no_planted_value_through_any_endpoint(case: Case) -> None:
    served = _served(case)
    leaks = [(kind, v) for kind, values in PLANTED.items() for v in values if v.lower() in served]
    assert leaks == []
    assert [p for p in PASSWORDS if p in served] == []
    # Still the case: statements as fingerprints, pseudonyms, the raw lines of the formats.
    assert "update orders set n=n+? where email=? and id=?" in served
    assert "user-1" in served and "db-1" in served and "server-1" in served


def test_the_same_case_unredacted_serves_every_planted_value(case: Case) -> None:
    """The search above can fail: without redaction each planted value is served somewhere."""
    served = _served(case, NO_REDACTION)
    missing = [(kind, v) for kind, values in PLANTED.items() for v in values if v.lower() not in served]
    assert missing == []
    assert [p for p in PASSWORDS if p in served] == []  # but passwords: on no link, redacted or not


def test_the_registry_refuses_a_format_that_declares_no_sensitive_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert all(declared(m) is not None for m in registry.parsers())
    vmstat = registry.by_format("vmstat")
    undeclared = types.ModuleType("parsers.undeclared")
    undeclared.__dict__.update(
        FORMAT="undeclared", TRAITS=vmstat.TRAITS, sniff=vmstat.sniff, parse=vmstat.parse
    )
    monkeypatch.setitem(sys.modules, "parsers.undeclared", undeclared)
    with pytest.raises(
        registry.FormatDeclarationError, match="parsers/undeclared.py does not declare SENSITIVE"
    ):
        registry.load(["vmstat", "undeclared"])


# ------------------------------------------------------------------ only what the shared page shows
# fmt: off
_FINDING = {
    "key", "severity", "title", "summary", "windows", "evidence", "recommendation", "caveats", "sources",
    "confidence", "disproof", "rule_version", "culprit", "host", "hosts",
    "id", "kind", "statement", "user", "since", "blocks", "label", "lines", "member", "series", "unit", "value",
}
_VERDICT = {
    "state", "headline", "root_cause", "chain", "explains", "also_found", "links", "cause", "effect", "join",
    "sentence", "fix", "when", "check", "coverage", "evaluated", "not_evaluated", "failed", "missing",
}
#: A slow log's class (analyzer/statements/querydigest.py ``queries``), as the report and queries.json send
#: it.
_QUERY = (
    "fingerprint", "checksum", "count", "first_seen", "last_seen", "host", "member", "example", "extras",
    *(f"example.{k}" for k in ("statement", "ts", "query_time_s", "schema", "line")),
    *(f"{m}.{k}" for m in ("query_time_s", "lock_time_s", "rows_sent", "rows_examined") for k in ("sum", "avg", "max")),
    "query_time_s", "lock_time_s", "rows_sent", "rows_examined", "query_time_s.p95", "lock_time_s.p95",
    *(f"extras.{k}" for k in EXTRAS),
)
#: Every key path a share response may hold (``[]``: any item of a list, ``*``: a key that is data:
#: an evidence label, a rule's key); a finding's and the verdict's keys are checked by name.
ALLOWED = {
    "status.json": {f".{k}" for k in (
        "id", "status", "label", "status_label", "progress", "detail", "failure_reason", "ready", "failed",
        "processing", "last_report_at", "stalled", "requeues", "url")},
    "timeline.json": {".charts", ".extent", ".hosts", ".ncpu", ".range", ".sections", ".sections[].id",
        ".sections[].title", ".utc_offset_s", ".version", ".windows", *(f".windows[].{k}" for k in (
            "end_ms", "host", "hosts", "key", "severity", "start_ms", "title")),
        *(f".charts[].{k}" for k in ("chart", "cols", "dx", "hlines", "host", "hosts", "id", "kind", "max",
            "rows", "section", "series", "stacked", "t", "title", "unit", "v", "x0")),
        ".charts[].hlines[].label", ".charts[].hlines[].value", ".charts[].series[].host",
        ".charts[].series[].label", ".charts[].series[].v"},
    "report.json": {".case", ".url", ".status", ".failure_reason", ".host", ".kernel", ".ncpu", ".window",
        ".utc_offset_s", ".upload", ".upload.name", ".upload.sha256", ".upload.size", ".uploads",
        ".uploads[].name", ".uploads[].sha256", ".uploads[].size", ".hosts", *(f".hosts[].{k}" for k in (
            "clock", "clock.origin", "clock.utc_offset_s", "kernel", "layout", "name", "name_origin", "ncpu",
            "offset_origin", "offset_s", "sources", "window")),
        ".sources", *(f".sources[].{k}" for k in ("clock", "damage", "damage[].code", "damage[].line",
            "damage[].message", "end", "format", "host", "host_reason", "member", "role", "role_reason",
            "samples", "start", "variant", "warnings")),
        ".not_used", ".not_used[].member", ".not_used[].reason", ".warnings", ".findings", ".not_evaluated",
        ".not_evaluated[].host", ".not_evaluated[].key", ".not_evaluated[].outcome", ".not_evaluated[].reason",
        ".rule_versions", ".rule_versions.*", ".verdict", ".query_classes", ".queries", *(
            f".queries[].{k}" for k in _QUERY)},
    "queries.json": {".start", ".end", ".whole_log", ".classes", ".query_time_s", ".spark", ".spark.start",
        ".spark.end", ".spark.points", ".spark.unit", ".queries", *(f".queries[].{k}" for k in (
            *_QUERY, "number", "share_pct", "spark"))},
    "moment.json": {".at", ".host", ".processlist", ".threads", ".raw", *(f".processlist.{k}" for k in (
            "active", "error", "omitted", "rows", "sessions", "ts")),
        *(f".processlist.rows[].{k}" for k in ("active", "command", "db", "fingerprint", "host", "id", "info",
            "info_cut", "line_no", "member", "state", "time_s", "user")),
        *(f".threads.{k}" for k in ("counts", "counts.*", "total", "rows", "omitted", "error", "ts")),
        *(f".threads.rows[].{k}" for k in ("tid", "pid", "user", "state", "stat", "pcpu", "comm", "wchan",
            "member", "line_no")),
        ".raw.error", ".raw.omitted_sources", ".raw.sources", *(f".raw.sources[].{k}" for k in (
            "format", "line_end", "line_start", "lines", "lines_cut", "member", "ts", "withheld"))},
}
ALLOWED["findings.json"] = ALLOWED["report.json"]
#: The case page's ``case-data`` JSON.
ALLOWED["page"] = {f".{k}" for k in (
    "id", "host", "kernel", "ncpu", "layout", "window_start", "window_end", "utc_offset_s",
    "utc_offset_origin", "status", "status_label", "failure_reason", "progress", "status_detail", "processing",
    "last_report_at", "stalled", "requeues", "created_at", "rule_versions", "rule_versions.*", "upload",
    "upload.name", "upload.size", "upload.sha256", "uploads", "uploads[].name", "uploads[].size",
    "uploads[].sha256")}
# fmt: on
_DATA_KEYED = (".evidence", ".rule_versions", ".counts")


def _paths(value: object, at: str = "") -> set[str]:
    """The key paths of a JSON value; under a finding (``.findings[]``) or the verdict only the
    last key's name, which must be a finding's or the verdict's (``_FINDING``, ``_VERDICT``)."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            name = "*" if at.endswith(_DATA_KEYED) else key
            if at.startswith((".findings[]", ".verdict")):
                assert name in _FINDING | _VERDICT or name == "*", (at, name)
                out |= _paths(item, f"{at}.{name}")
                continue
            out |= {f"{at}.{name}"} | _paths(item, f"{at}.{name}")
    elif isinstance(value, list):
        for item in value:
            out |= _paths(item, f"{at}[]")
    return {p for p in out if not p.startswith((".findings[]", ".verdict."))}


def test_every_share_response_holds_only_the_keys_of_its_allow_list(case: Case) -> None:
    made = shares.share_create(case=case, user=None)
    client, seen = Client(), {}
    for url in _urls(case, made.path):
        name = url.split("?")[0].rsplit("/", 1)[-1] or "page"
        response = client.get(url)
        if name == "page":
            html = response.content.decode()
            data = json.loads(
                re.search(r'<script id="case-data" type="application/json">(.*?)</script>', html, re.S)[1]
            )
        elif name.endswith(".json"):
            data = response.json()
        else:
            continue
        seen.setdefault(name, set()).update(_paths(data))
    assert set(seen) == set(ALLOWED)
    assert {name: paths - ALLOWED[name] for name, paths in seen.items() if paths - ALLOWED[name]} == {}
    assert ".findings" in seen["report.json"] and ".raw.sources[].lines" in seen["moment.json"]


def test_a_redacted_link_shows_the_slow_logs_classes_through_its_redactor(case: Case) -> None:
    """The *Queries* JSON of a redacted link: each fingerprint and example a fingerprint with the
    link's pseudonyms, no checksum; the same link without redaction: the statements as logged."""
    redacted = shares.share_create(case=case, user=None)
    data = Client().get(f"{redacted.path}queries.json").json()
    by_print = {q["fingerprint"]: q for q in data["queries"]}
    update = by_print["update orders set total = total + ? where id = ?"]
    assert update["example"]["statement"] == "update orders set total = total + ? where id = ?"
    assert update["example"]["schema"].startswith("db-") and update["checksum"] is None
    plain = shares.share_create(case=case, user=None, choices=NO_REDACTION)
    data = Client().get(f"{plain.path}queries.json").json()
    statements = {q["example"]["statement"] for q in data["queries"]}
    assert f"UPDATE orders SET total = total + 1 WHERE id = {NUMBER}" in statements
    assert all(len(q["checksum"]) == 32 for q in data["queries"])
