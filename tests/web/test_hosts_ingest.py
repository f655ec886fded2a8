"""A case of several hosts, end to end (issue 22): a bundle with a directory per host, bundles added
to a case (API, case page form, ``manage.py analyze A B``), written per host and reported per host.
The captures are a real pt-stalk collection copied per host (tests/multihost.py)."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.files import File
from django.core.management import call_command
from django.template.defaultfilters import filesizeformat

from tests.multihost import host_bundle, hosts_tarball
from tests.web.conftest import ingest_ready
from web.cases import services
from web.ingest import tasks
from web.models import AuditEvent, Case, CaseStatus, Finding, Host, RuleResult, Series, SeriesLevel, Source

pytestmark = pytest.mark.django_db


def test_a_two_host_bundle_is_written_per_host(tmp_path: Path) -> None:
    case = ingest_ready(hosts_tarball(tmp_path / "two.tgz", ["db-a", "db-b"]))
    assert case.host == "db-a, db-b"
    rows = list(
        Host.objects.filter(case=case).values_list("position", "name", "ncpu", "utc_offset_s", "layout")
    )
    assert rows == [(0, "db-a", 2, 0, "pt-stalk"), (1, "db-b", 2, 0, "pt-stalk")]
    assert Host.objects.get(case=case, name="db-b").name_origin.startswith("pt-stalk -hostname")
    by_host = {h: Source.objects.filter(case=case, host=h) for h in ("db-a", "db-b")}
    assert by_host["db-a"].count() == by_host["db-b"].count() == 24
    assert not Source.objects.filter(case=case, role="overlap").exists()
    assert not Source.objects.filter(case=case, host_reason="").exists()
    assert case.warnings == []
    names_a = set(Series.objects.filter(case=case, host="db-a").values_list("name", flat=True))
    assert names_a and names_a == set(
        Series.objects.filter(case=case, host="db-b").values_list("name", flat=True)
    )
    assert SeriesLevel.objects.filter(case=case, host="db-b", level=0).count() == len(names_a)
    keys = {
        h: sorted(Finding.objects.filter(case=case, host=h).values_list("key", flat=True))
        for h in ("db-a", "db-b")
    }
    assert keys["db-a"] and keys["db-a"] == keys["db-b"]
    assert all(f.hosts == [] for f in Finding.objects.filter(case=case))  # no cross-host finding here
    assert set(RuleResult.objects.filter(case=case).values_list("host", flat=True)) == {"db-a", "db-b"}
    assert "db-b" in case.search_terms.split("\n")


def test_a_one_host_case_has_one_host_row(tmp_path: Path) -> None:
    from tests.multihost import PTSTALK

    case = ingest_ready(PTSTALK)
    assert case.host == "vm"
    assert list(Host.objects.filter(case=case).values_list("name", flat=True)) == ["vm"]
    assert set(Source.objects.filter(case=case).values_list("host", flat=True)) == {"vm"}
    assert set(Finding.objects.filter(case=case).values_list("host", flat=True)) == {"vm"}


def test_a_bundle_of_eight_hosts(tmp_path: Path) -> None:
    names = [f"node{i}" for i in range(8)]
    case = ingest_ready(hosts_tarball(tmp_path / "eight.tgz", names))
    assert list(Host.objects.filter(case=case).values_list("name", flat=True)) == names
    assert case.host == ", ".join(names)
    assert set(Series.objects.filter(case=case).values_list("host", flat=True)) == set(names)
    assert set(Finding.objects.filter(case=case).values_list("host", flat=True)) == set(names)


def _case_of(path: Path, user) -> Case:  # noqa: ANN001
    with path.open("rb") as fh:
        return services.case_create(user=user, file=File(fh), original_name=path.name, enqueue=False)


def test_bundles_added_through_the_api_are_read_into_one_case(tmp_path: Path, engineer, api_client) -> None:
    case = _case_of(host_bundle(tmp_path / "a.tgz", "db-a"), engineer)
    tasks.case_ingest(case_id=case.pk)
    for host in ("db-b", "db-c"):
        with host_bundle(tmp_path / f"{host}.tgz", host).open("rb") as fh:
            answer = api_client.post(f"/api/cases/{case.pk}/bundles/", {"bundle": fh})
        assert answer.status_code == 202, answer.content
        assert answer.json()["status"] == CaseStatus.QUEUED
        assert answer.json()["bundle"]["name"] == f"{host}.tgz"
    with (tmp_path / "db-c.tgz").open("rb") as fh:  # the same bytes again
        assert api_client.post(f"/api/cases/{case.pk}/bundles/", {"bundle": fh}).status_code == 400
    assert api_client.post(f"/api/cases/{case.pk}/bundles/", {}).status_code == 400
    tasks.case_ingest(case_id=case.pk)
    report = api_client.get(f"/api/cases/{case.pk}/").json()
    assert report["status"] == CaseStatus.READY
    assert [h["name"] for h in report["hosts"]] == ["db-a", "db-b", "db-c"]
    db_c = report["hosts"][2]
    assert db_c["clock"] == {"utc_offset_s": 0, "origin": "TS markers (epoch vs wall clock)"}
    assert db_c["ncpu"] == 2 and len(db_c["sources"]) == 24
    assert all(m.startswith("db-c.tgz/") for m in db_c["sources"])
    assert [u["name"] for u in report["uploads"]] == ["a.tgz", "db-b.tgz", "db-c.tgz"]
    assert {f["host"] for f in report["findings"]} == {"db-a", "db-b", "db-c"}
    assert all(f["hosts"] == [] for f in report["findings"])  # per host; a cross-host one names its hosts
    found = api_client.get("/api/cases/", {"q": "db-c"}).json()["results"]
    assert [c["id"] for c in found] == [case.pk]
    events = AuditEvent.objects.filter(case_id=case.pk, action="case.uploaded", detail__added=True)
    assert events.count() == 2


def test_a_bundle_added_on_the_case_page(tmp_path: Path, engineer, engineer_client) -> None:
    case = _case_of(host_bundle(tmp_path / "a.tgz", "db-a"), engineer)
    tasks.case_ingest(case_id=case.pk)
    page = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    assert "Add another host&#x27;s bundle" in page or "Add another host's bundle" in page
    assert f'action="/cases/{case.pk}/bundles/"' in page
    with host_bundle(tmp_path / "b.tgz", "db-b").open("rb") as fh:
        answer = engineer_client.post(f"/cases/{case.pk}/bundles/", {"bundle": fh})
    assert answer.status_code == 302 and answer["Location"] == f"/cases/{case.pk}/"
    tasks.case_ingest(case_id=case.pk)
    case.refresh_from_db()
    assert case.status == CaseStatus.READY and case.host == "db-a, db-b"
    page = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    assert "db-b" in page
    listed = page[page.index('id="case-bundles"') :].split("</ul>", 1)[0]
    assert re.findall(r'<li class="mono">(\S+) <span class="muted">\(([^)]*)\)', listed) == [
        ("a.tgz", f"{filesizeformat(case.upload.size)}, first"),
        ("b.tgz", f"{filesizeformat(case.added_uploads.get().size)}, added"),
    ]


def test_another_team_cannot_add_a_bundle(tmp_path: Path, engineer, other_client) -> None:
    case = _case_of(host_bundle(tmp_path / "a.tgz", "db-a"), engineer)
    with host_bundle(tmp_path / "b.tgz", "db-b").open("rb") as fh:
        assert other_client.post(f"/cases/{case.pk}/bundles/", {"bundle": fh}).status_code == 404
    assert not case.added_uploads.exists()


def test_analyze_several_bundles_as_one_case(tmp_path: Path) -> None:
    two = hosts_tarball(tmp_path / "two.tgz", ["db-a", "db-b"])
    third = host_bundle(tmp_path / "db-c.tgz", "db-c")
    out = StringIO()
    call_command("analyze", str(two), str(third), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    assert report["status"] == "ready"
    assert [h["name"] for h in report["hosts"]] == ["db-a", "db-b", "db-c"]
    assert report["host"] == "db-a, db-b, db-c"
    assert {s["role"] for s in report["sources"]} <= {"primary", "summary"}
    assert all(set(h) >= {"name", "ncpu", "kernel", "clock", "offset_s", "sources"} for h in report["hosts"])
    assert all("host" in f and "hosts" in f for f in report["findings"])


def test_deleting_a_case_deletes_its_added_bundles(
    tmp_path: Path, engineer, django_capture_on_commit_callbacks
) -> None:  # noqa: E501
    from django.core.files.storage import default_storage

    case = _case_of(host_bundle(tmp_path / "a.tgz", "db-a"), engineer)
    with host_bundle(tmp_path / "b.tgz", "db-b").open("rb") as fh:
        added = services.case_add_bundle(
            case_id=case.pk, user=engineer, file=File(fh), original_name="b.tgz", enqueue=False
        )  # noqa: E501
    assert default_storage.exists(added.file.name)
    with django_capture_on_commit_callbacks(execute=True):
        Case.objects.filter(pk=case.pk).delete()
    assert not default_storage.exists(added.file.name)


@pytest.mark.parametrize("named", [True, False])
def test_a_redacted_share_link_leaks_no_host_name(tmp_path: Path, client, named: bool) -> None:
    """Every host's name (read from its headers, or only from its directory) is redacted from the
    link's page and report."""
    from web.sharing import services as shares
    from web.sharing.redaction.redactor import REDACT_ALL

    case = ingest_ready(hosts_tarball(tmp_path / "two.tgz", ["db-alpha", "db-beta"], named=named))
    assert case.hosts.count() == 2
    base = shares.share_create(case=case, user=None, choices=REDACT_ALL).path
    for url in (base, f"{base}report.json", f"{base}findings.json"):
        body = client.get(url).content.decode()
        assert "db-alpha" not in body and "db-beta" not in body, url


def test_the_real_galera_capture_gives_each_host_its_clock_offset_and_the_node_that_sent_flow_control() -> (
    None
):
    """Three MariaDB Galera nodes captured with pt-stalk on this machine (tests/fixtures/bundles, made
    by scripts/make_cluster_bundles.sh): one host per directory, the flow-control finding across them,
    each node's clock against db-a's estimated from the same seqno (shown, never applied)."""
    from tests.multihost import FIXTURES

    case = ingest_ready(FIXTURES / "cluster-galera.tar.gz")
    hosts = list(Host.objects.filter(case=case).values_list("name", "offset_s", "offset_origin"))
    assert [h[0] for h in hosts] == ["db-a", "db-b", "db-c"]
    assert hosts[0][1] == 0.0 and all(h[1] is not None and abs(h[1]) < 5 for h in hosts)
    assert "Galera seqno" in hosts[1][2]
    flow = Finding.objects.get(case=case, key="galera-flow-control")
    assert flow.host == "" and flow.hosts[0] == "db-b"
