"""Damaged bundles through the real ingest (PostgreSQL): the reproductions of issue 24, each kept.

The example collection (tests/fixtures/bundles/ptstalk-mariadb-tmptables.tar.gz, made by running
pt-stalk and MariaDB here) damaged one way at a time and ingested as a case.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from django.core.files import File

from tests.conftest import FIXTURES
from web.cases import selectors, services
from web.ingest import tasks
from web.models import Case, CaseStatus, NotUsedMember

pytestmark = pytest.mark.django_db

EXAMPLE = FIXTURES / "bundles" / "ptstalk-mariadb-tmptables.tar.gz"


def _members() -> dict[str, bytes]:
    with tarfile.open(EXAMPLE) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


def _tar(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _ingest(path: Path) -> Case:
    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=path.name, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    return Case.objects.get(pk=case.pk)


def _named(members: dict[str, bytes], suffix: str) -> str:
    return next(n for n in members if n.endswith("-" + suffix))


def test_nul_bytes_in_one_line_keep_the_case_and_every_member(tmp_path: Path) -> None:
    members = _members()
    name = _named(members, "mysqladmin")
    lines = members[name].split(b"\n")
    lines[40] = lines[40][:10] + b"\x00\x00\x00" + lines[40][10:]
    members[name] = b"\n".join(lines)
    case = _ingest(_tar(tmp_path / "nul.tar.gz", list(members.items())))
    assert case.status == CaseStatus.READY, case.failure_reason
    report = selectors.case_report(case=case)
    assert {s["member"] for s in report["sources"]} >= {n for n in members if not n.endswith("hostname")} - {
        n.member for n in NotUsedMember.objects.filter(case=case)
    }
    [damaged] = [s for s in report["sources"] if s["member"] == name]
    assert [d["code"] for d in damaged["damage"]] == ["nul-bytes"] and damaged["damage"][0]["line"] == 41
    source = case.sources.get(member=name)
    said = json.dumps(source.warnings)
    assert "nul-bytes" in said and "line 41" in said
    assert "\x00" not in said


def test_members_stored_twice_are_read_once_and_said(tmp_path: Path) -> None:
    members = _members()
    once = _ingest(_tar(tmp_path / "once.tar.gz", list(members.items())))
    twice = _ingest(_tar(tmp_path / "twice.tar.gz", list(members.items()) * 2))
    assert twice.status == CaseStatus.READY
    assert sorted(twice.finding_keys) == sorted(once.finding_keys) and once.finding_keys
    assert twice.sources.count() == once.sources.count()
    dropped = NotUsedMember.objects.filter(case=twice, reason__contains="stored twice")
    assert dropped.count() == len(members)  # each duplicate said once
    assert not twice.sources.filter(role="overlap").exclude(member__endswith="overall").exists()


def test_a_negative_max_connections_is_refused_and_raises_no_finding(tmp_path: Path) -> None:
    members = _members()
    name = _named(members, "variables")
    members[name] = members[name].replace(b"\nmax_connections\t151\n", b"\nmax_connections\t-151\n")
    assert b"max_connections\t-151" in members[name]
    case = _ingest(_tar(tmp_path / "neg.tar.gz", list(members.items())))
    assert case.status == CaseStatus.READY
    assert "connection-saturation" not in case.finding_keys
    warnings = json.dumps(case.sources.get(member=name).warnings)
    assert "impossible-value" in warnings and "max_connections = -151" in warnings
