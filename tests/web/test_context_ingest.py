"""End to end: a pt-stalk collection holding every InnoDB and kernel context member is ingested
(``manage.py analyze --json --sync``) with none of them listed as not used, their series stored and
their findings reported."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.analyzer.context_captures import EXAMPLE2, tarball
from web.models import Series

pytestmark = pytest.mark.django_db

CONTEXT = {
    "innodbstatus1": "mariadb-10.11_innodbstatus1_long-trx.txt",
    "innodbstatus2": "mariadb-10.11_innodbstatus2_long-trx.txt",
    "transactions": "mariadb-10.11_transactions_long-trx.txt",
    "lock-waits": "mariadb-10.11_lock-waits_long-trx.txt",
    "slave-status": "mariadb-10.11_slave-status_replica-stopped.txt",
    "diskstats": "linux_diskstats.txt",
    "netstat_s": "linux_netstat_s_listen-overflow.txt",
    "procvmstat": "linux_procvmstat.txt",
}
FORMATS = {
    "innodb_status",
    "innodb_trx",
    "lock_waits",
    "slave_status",
    "diskstats",
    "netstat_s",
    "procvmstat",
}


def test_every_context_member_is_read_and_gives_its_findings_and_series(tmp_path: Path) -> None:
    path = tarball(tmp_path / "context.tar.gz", CONTEXT)
    out = StringIO()
    call_command("analyze", str(path), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    assert report["not_used"] == []
    assert {s["format"] for s in report["sources"]} == FORMATS
    keys = {f["key"] for f in report["findings"]}
    assert {"long-transaction", "listen-queue-overflow", "replica-lag"} <= keys
    names = set(Series.objects.filter(case_id=report["case"]).values_list("name", flat=True).distinct())
    assert {"innodb.history_list_length", "innodb.log_bytes_per_s", "netstat_s.rate:ListenOverflows"} <= names
    assert any(n.startswith("iostat.aqu_sz:") for n in names)  # per-device rates from /proc/diskstats alone


def test_the_real_percona_collection_lists_no_context_member_as_not_used(example2_tarball: Path) -> None:
    out = StringIO()
    call_command("analyze", str(example2_tarball), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    unused = {n["member"].split("-", 1)[1] for n in report["not_used"]}
    assert not unused & {
        "innodbstatus1",
        "innodbstatus2",
        "transactions",
        "slave-status",
        "diskstats",
        "netstat_s",
        "procvmstat",
    }
    assert EXAMPLE2.is_dir()
