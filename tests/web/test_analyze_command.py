"""``manage.py analyze BUNDLE --json --sync``: the main job without the web server."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.web.conftest import make_tar

pytestmark = pytest.mark.django_db


def test_it_prints_one_json_document_for_example2(example2_tarball: Path) -> None:
    out = StringIO()
    call_command("analyze", str(example2_tarball), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    assert set(report) >= {"case", "url", "sources", "not_used", "warnings", "findings"}
    sources = {s["member"].split("-", 1)[1]: s for s in report["sources"]}
    assert sources["processlist"]["start"] == "2026-04-21T16:51:43.009325Z"
    assert sources["processlist"]["clock"] == "ts-marker"
    assert (sources["vmstat"]["format"], sources["vmstat"]["samples"]) == ("vmstat", 30)
    assert sources["vmstat"]["start"] == "2026-04-21T16:51:41Z"
    assert report["url"].endswith(f"/cases/{report['case']}/")
    assert all(set(n) == {"member", "reason"} for n in report["not_used"])


def test_it_exits_non_zero_with_a_reason_when_nothing_can_be_read(tmp_path: Path, capsys) -> None:
    path = make_tar(tmp_path / "notes.tgz", {"README": b"nothing to see\n"})
    with pytest.raises(SystemExit) as exit_info:
        call_command("analyze", str(path), "--json", "--sync", stdout=StringIO())
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "failed: No supported capture was found" in err[0]


def test_reuse_reports_the_ready_case_of_the_same_bytes(tmp_path: Path) -> None:
    vmstat = (
        "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
        " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
        " 2  0      0 104588800 10433708 236728672    0    0     5    93    0    1  3  3 94  0  0\n"
    )
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": vmstat.encode()})
    first, again = StringIO(), StringIO()
    call_command("analyze", str(path), "--json", "--sync", stdout=first)
    call_command("analyze", str(path), "--json", "--sync", "--reuse", stdout=again)
    assert json.loads(again.getvalue())["case"] == json.loads(first.getvalue())["case"]


def test_each_source_says_what_it_became_among_the_captures_of_its_source(tmp_path: Path) -> None:
    """pt-stalk's -vmstat beside a `vmstat -t` of the same minute and its -vmstat-overall run: the
    per-line capture is primary, the pt-stalk one an overlap, the run average a summary; the
    saturation of the minute is found once."""
    from tests.analyzer.captures import vmstat_rows_text
    from tests.analyzer.test_primary import BOOT, SATURATED, START, vmstat_t_text

    prefix = f"{START:%Y_%m_%d_%H_%M_%S}"
    path = make_tar(
        tmp_path / "b.tgz",
        {
            f"{prefix}-vmstat": vmstat_rows_text([BOOT] + SATURATED).encode(),
            f"{prefix}-vmstat-overall": vmstat_rows_text([BOOT, SATURATED[0]]).encode(),
            f"{prefix}-hostname": b"db1\n",
            "vmstat-t.txt": vmstat_t_text([BOOT] + SATURATED, START).encode(),
        },
    )
    out = StringIO()
    call_command("analyze", str(path), "--json", "--sync", stdout=out)
    report = json.loads(out.getvalue())
    roles = {s["member"]: (s["role"], s["role_reason"]) for s in report["sources"]}
    assert roles["vmstat-t.txt"][0] == "primary"
    assert roles[f"{prefix}-vmstat"][0] == "overlap"
    assert "vmstat-t.txt covers the same minutes at 1 s with per-line times" in roles[f"{prefix}-vmstat"][1]
    assert roles[f"{prefix}-vmstat-overall"][0] == "summary"
    assert roles[f"{prefix}-hostname"][0] == "primary"


def test_team_puts_the_case_in_that_team(tmp_path: Path) -> None:
    from tests.web.conftest import VMSTAT
    from web.models import Case, Team

    Team.objects.create(name="Support EU")
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    out = StringIO()
    call_command("analyze", str(path), "--json", "--sync", "--team", "Support EU", stdout=out)
    assert Case.objects.get(pk=json.loads(out.getvalue())["case"]).team.name == "Support EU"
    with pytest.raises(CommandError, match="no team named 'Nope'"):
        call_command("analyze", str(path), "--sync", "--team", "Nope", stdout=StringIO())


def test_the_parse_processes_started_before_django_are_the_ones_the_ingest_takes() -> None:
    """``manage.py analyze --sync`` starts them before Django sets up (``start_parse_processes``):
    they must be the pool ``read_bundle`` asks for, or they would only take CPU from it."""
    from django.conf import settings

    from parsers.ingest.pool import _WAITING, _WAITING_LOCK, close_waiting, warmed
    from web.ingest import work as piece_work
    from web.ingest.work import start_parse_processes

    close_waiting()
    try:
        start_parse_processes()
        with _WAITING_LOCK:
            (started,) = _WAITING.values()
        with warmed(settings.CASEBOOK_PARSE_PROCESSES, work=piece_work.ingest_work()) as pool:
            assert pool is started and len(pool._all) == settings.CASEBOOK_PARSE_PROCESSES
    finally:
        close_waiting()


def test_sync_starts_no_parse_processes_for_a_next_bundle(example2_tarball: Path) -> None:
    """A worker starts its next bundle's parse processes after each bundle; the command ends there."""
    from parsers.ingest.pool import _WAITING, close_waiting

    close_waiting()
    call_command("analyze", str(example2_tarball), "--json", "--sync", stdout=StringIO())
    assert not _WAITING


def test_on_a_fresh_machine_it_creates_and_migrates_its_database(tmp_path: Path) -> None:
    """The README's command as the first thing run: the database of ``CASEBOOK_DATABASE_URL`` does not
    exist yet; the command makes it, migrates it and reads the bundle."""
    import os
    import subprocess
    import sys
    import uuid

    import psycopg
    from django.conf import settings

    from tests.web.conftest import VMSTAT

    db = settings.DATABASES["default"]
    name = f"casebook_fresh_{uuid.uuid4().hex[:8]}"
    bundle = make_tar(tmp_path / "b.tgz", {"b/vmstat.txt": VMSTAT.encode()})
    env = {
        **os.environ,
        "CASEBOOK_DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{name}",
        "CASEBOOK_MEDIA_ROOT": str(tmp_path / "media"),
    }
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(
            [sys.executable, "manage.py", "analyze", str(bundle), "--json", "--sync"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout)["status"] == "ready"
    finally:
        with psycopg.connect(
            dbname="postgres", host=db["HOST"], port=db["PORT"], user=db["USER"], autocommit=True
        ) as c:
            c.execute(
                psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    psycopg.sql.Identifier(name)
                )
            )


FIXTURE_BUNDLES = Path(__file__).resolve().parents[1] / "fixtures" / "bundles"


def test_a_bundle_read_ahead_is_taken_only_while_it_is_the_upload_unchanged(tmp_path: Path) -> None:
    """``read_ahead`` (manage.py, before Django sets up) reads the bundle of ``analyze --sync``; the
    ingest takes it once, and only for that file unchanged, under the same limits."""
    import os
    import shutil

    from parsers.ingest.archive import Limits
    from parsers.ingest.pool import close_waiting
    from web.ingest import work
    from web.ingest.work import read_ahead, take_read_ahead

    path = tmp_path / "culprit-rowlock.tar.gz"
    shutil.copy(FIXTURE_BUNDLES / path.name, path)
    size, limits = path.stat().st_size, work.upload_limits()
    try:
        assert read_ahead([str(path), "--json"]) is None  # not --sync: the worker reads it
        assert read_ahead([str(path), "--sync", "--reuse"]) is None  # --reuse may not read it at all
        ahead = read_ahead([str(path), "--sync", "--json"])
        assert ahead is not None
        assert take_read_ahead(original_name="other.tar.gz", size=size, limits=limits) is None
        assert take_read_ahead(original_name=path.name, size=size, limits=limits) is None  # given once

        ahead = read_ahead([str(path), "--sync"])
        assert take_read_ahead(original_name=path.name, size=size, limits=Limits(max_members=3)) is None

        ahead = read_ahead([str(path), "--sync"])
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
        assert take_read_ahead(original_name=path.name, size=size, limits=limits) is None  # touched

        ahead = read_ahead([str(path), "--sync"])
        assert take_read_ahead(original_name=path.name, size=size, limits=limits) is ahead
        texts, members = [], []
        bundle = ahead.bundle(keep_text=lambda m, chunks: texts.append((m, chunks)), progress=members.append)
        assert {s.member for s in bundle.sources} <= set(members)
        assert any(m.endswith("processlist") for m, _ in texts)
    finally:
        close_waiting()


@pytest.mark.django_db(transaction=True)
def test_the_bundle_read_while_django_sets_up_makes_the_same_case(tmp_path: Path) -> None:
    """``manage.py analyze --sync`` as the README runs it, with and without the read ahead
    (``CASEBOOK_READ_AHEAD=0``): the same report (sources, findings, verdict) and raw text, and only
    the first says that it took the bundle read while Django set up."""
    import os
    import subprocess
    import sys

    from django.conf import settings

    from web.models import RawChunk

    db = settings.DATABASES["default"]
    root = Path(__file__).resolve().parents[2]
    runs = {}
    for ahead in ("1", "0"):
        env = {
            **os.environ,
            "CASEBOOK_DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
            "CASEBOOK_MEDIA_ROOT": str(tmp_path / "media"),
            "CASEBOOK_READ_AHEAD": ahead,
        }
        done = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "analyze",
                str(FIXTURE_BUNDLES / "culprit-rowlock.tar.gz"),
                "--json",
                "--sync",
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        report = json.loads(done.stdout)
        chunks = RawChunk.objects.filter(case_id=report.pop("case"))
        report.pop("url")
        runs[ahead] = (report, sorted(chunks.values_list("member", "line_start", "line_end")), done.stderr)
    (report, chunks, log), (report_0, chunks_0, log_0) = runs["1"], runs["0"]
    assert report["status"] == "ready" and report["findings"]
    assert report == report_0
    assert chunks == chunks_0 and chunks
    assert "read while Django set up is taken" in log
    assert "read while Django set up is taken" not in log_0
