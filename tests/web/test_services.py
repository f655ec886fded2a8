"""Services: create a case from an upload, ingest it (idempotent), re-analyze it, fail readably."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pandas as pd
import pytest
from django.core.files import File
from django.utils import timezone

from parsers.ingest.pool import PiecePool, close_waiting
from parsers.rawtext import text_of
from tests.web.conftest import PROCESSLIST_NO_TS, VMSTAT, make_tar
from web.cases import services
from web.ingest import pipeline, tasks
from web.ingest import work as piece_work
from web.models import Case, CaseStatus, Finding, NotUsedMember, RawChunk, Series, Source
from web.timeline import moments

pytestmark = pytest.mark.django_db


def _create(path: Path, user=None) -> Case:
    with path.open("rb") as fh:
        return services.case_create(user=user, file=File(fh), original_name=path.name, enqueue=False)


def _points(case: Case, name: str | None = None) -> int:
    """Points stored for the series ``name`` of the case (all series when None)."""
    rows = Series.objects.filter(case=case, **({"name": name} if name else {}))
    return sum(len(ts) for ts in rows.values_list("ts_us", flat=True))


def _ingest(path: Path) -> Case:
    case = _create(path)
    tasks.case_ingest(case_id=case.pk)
    return Case.objects.get(pk=case.pk)


def test_case_create_keeps_the_original_bytes_with_their_sha256(tmp_path: Path, engineer) -> None:
    path = make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode()})
    case = _create(path, engineer)
    assert case.status == CaseStatus.QUEUED
    assert case.created_by == engineer
    with case.upload.file.open("rb") as kept:
        assert kept.read() == path.read_bytes()
    assert case.upload.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert case.upload.size == path.stat().st_size


def test_an_empty_upload_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.tgz"
    path.write_bytes(b"")
    with pytest.raises(Exception, match="empty"):
        _create(path)


def test_ingest_of_example2_gives_vmstat_and_processlist_over_the_utc_window(example2_tarball: Path) -> None:
    case = _ingest(example2_tarball)
    assert case.status == CaseStatus.READY, case.failure_reason
    assert case.host == "node0"
    assert case.ncpu == 48  # /proc/stat lists cpu0-cpu47 (the -iostat banner, from another host, says 64)
    assert case.utc_offset_s == 0
    sources = {s.member.rsplit("-", 1)[1]: s for s in case.sources.all()}
    vm, pl = sources["vmstat"], sources["processlist"]
    assert vm.samples == 30 and vm.clock == "inferred"
    assert pl.samples == 30 and pl.clock == "ts-marker"
    assert pl.start == pd.Timestamp("2026-04-21 16:51:43.009325", tz="UTC")
    assert vm.start == pd.Timestamp("2026-04-21 16:51:41", tz="UTC")
    assert case.window_start <= pl.start and case.window_end >= pl.end
    assert _points(case, "vmstat.r") == 29  # since-boot line left out
    assert _points(case, "processlist.state:statistics") > 0
    first = moments.processlist_at(case=case, at=pl.start)
    assert first["ts"] == round(pl.start.timestamp() * 1000) and first["sessions"] == len(first["rows"]) > 0
    # -slabinfo, once listed as not used, is read now (docs/members.md)
    assert sources["slabinfo"].samples == 30
    assert not NotUsedMember.objects.filter(
        case=case, member="example2/2026_04_21_16_51_41-slabinfo"
    ).exists()


def test_ingest_of_example1_joins_its_two_collections_on_one_utc_axis(example1_tarball: Path) -> None:
    case = _ingest(example1_tarball)
    assert case.status == CaseStatus.READY, case.failure_reason
    assert (case.host, case.ncpu, case.utc_offset_s) == ("node0", 48, 0)  # /proc/stat lists cpu0-cpu47
    by_member = {s.member.split("/")[-1]: s for s in case.sources.all()}
    first, second = by_member["2026_04_21_16_43_19-processlist"], by_member["2026_04_21_16_43_49-processlist"]
    assert first.clock == second.clock == "ts-marker"
    assert first.end < second.start  # the second collection follows the first
    assert by_member["2026_04_21_16_43_19-vmstat"].start == pd.Timestamp("2026-04-21 16:43:19", tz="UTC")
    assert by_member["2026_04_21_16_43_49-vmstat"].start == pd.Timestamp("2026-04-21 16:43:49", tz="UTC")
    assert _points(case, "vmstat.r") > 30  # both runs, since-boot lines out
    # its -iostat was taken on another server (sample README): the page says so
    assert any("2026_04_21_16_43_19-iostat (iostat) names host robertonode0" in w for w in case.warnings)
    assert case.window_start <= first.start and case.window_end >= second.end


def test_ingest_twice_equals_ingest_once(tmp_path: Path) -> None:
    path = make_tar(
        tmp_path / "b.tgz", {"2026_04_21_16_51_41-vmstat": VMSTAT.encode(), "notes.txt": b"hello\n"}
    )
    case = _ingest(path)
    first = (
        Source.objects.filter(case=case).count(),
        _points(case),
        NotUsedMember.objects.filter(case=case).count(),
    )
    services.case_reanalyze(case_id=case.pk, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    case.refresh_from_db()
    again = (
        Source.objects.filter(case=case).count(),
        _points(case),
        NotUsedMember.objects.filter(case=case).count(),
    )
    assert case.status == CaseStatus.READY
    assert again == first == (1, first[1], 1)
    assert first[1] > 0


def test_a_case_not_queued_is_left_alone(tmp_path: Path) -> None:
    case = _ingest(make_tar(tmp_path / "b.tgz", {"vmstat.txt": VMSTAT.encode()}))
    before = case.ingested_at
    tasks.case_ingest(case_id=case.pk)  # already READY: another worker's claim would fail the same way
    case.refresh_from_db()
    assert case.ingested_at == before


def test_reanalyze_is_refused_while_a_live_worker_processes_the_case(tmp_path: Path) -> None:
    case = _create(make_tar(tmp_path / "b.tgz", {"vmstat.txt": VMSTAT.encode()}))
    Case.objects.filter(pk=case.pk).update(
        status=CaseStatus.PARSING, claim="task-1:0", heartbeat_at=timezone.now(), progress=30
    )
    with pytest.raises(
        services.CaseStateError, match="being processed .parsing, 30 %. and its worker is still"
    ):
        services.case_reanalyze(case_id=case.pk, enqueue=False)
    assert Case.objects.get(pk=case.pk).claim == "task-1:0"


def test_a_broken_member_never_sinks_the_rest(tmp_path: Path) -> None:
    bad_processlist = (
        "*************************** 1. row ***************************\n"
        "     Id: 12\n"
        "   User: app\n"
        "\x00\x00 garbage where a row should be\n"
    )
    path = make_tar(
        tmp_path / "b.tgz", {"a-vmstat": VMSTAT.encode(), "b-processlist": bad_processlist.encode()}
    )
    case = _ingest(path)
    assert case.status == CaseStatus.READY
    assert [s.format for s in case.sources.all()] == ["vmstat"]
    [not_used] = NotUsedMember.objects.filter(case=case)
    assert not_used.member == "b-processlist"
    assert "line" in not_used.reason


def test_hostile_members_are_refused_and_nothing_is_written_outside_storage(
    tmp_path: Path, _media_in_tmp: Path
) -> None:
    target = tmp_path / "escaped.txt"
    path = tmp_path / "evil.tgz"
    with tarfile.open(path, "w:gz") as tar:
        import io

        for name, data in ((f"../../../../{target}", b"owned"), ("ok-vmstat", VMSTAT.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    case = _ingest(path)
    assert case.status == CaseStatus.READY
    reasons = dict(NotUsedMember.objects.filter(case=case).values_list("member", "reason"))
    assert reasons["passwd"] == "link to '/etc/passwd' not followed"
    assert any(r.startswith("unsafe path") for r in reasons.values())
    assert not target.exists()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(p == path or _media_in_tmp in p.parents for p in written)


def test_a_decompression_bomb_is_stopped_with_a_warning(tmp_path: Path, settings) -> None:
    import gzip

    settings.CASEBOOK_MAX_RATIO = 50
    bomb = gzip.compress(b"0" * (30 * 1024 * 1024), compresslevel=9)
    case = _ingest(make_tar(tmp_path / "bomb.tgz", {"a-vmstat": VMSTAT.encode(), "z.gz": bomb}))
    assert case.status == CaseStatus.READY
    assert any("compression ratio limit" in w for w in case.warnings)
    assert [s.format for s in case.sources.all()] == ["vmstat"]
    assert "compression ratio limit" in NotUsedMember.objects.get(case=case, member="z.gz").reason


def test_a_bundle_with_no_capture_fails_with_a_reason(tmp_path: Path) -> None:
    case = _ingest(make_tar(tmp_path / "b.tgz", {"README": b"just some notes\n"}))
    assert case.status == CaseStatus.FAILED
    assert case.failure_reason.startswith("No supported capture was found in the bundle (1 member(s)")
    assert NotUsedMember.objects.get(case=case).reason.startswith("format not recognised")


def test_an_unreadable_archive_fails_with_a_reason(tmp_path: Path) -> None:
    whole = make_tar(tmp_path / "b.tgz", {"a-vmstat": VMSTAT.encode() * 500}).read_bytes()
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(whole[:200])
    case = _ingest(cut)
    assert case.status == CaseStatus.FAILED
    assert "truncated or corrupt" in (
        case.failure_reason + " ".join(case.warnings) + " ".join(n.reason for n in case.not_used.all())
    )


def test_findings_are_stored_most_severe_first(tmp_path: Path) -> None:
    from tests.analyzer.captures import vmstat_text

    vm = vmstat_text([(2, 0, 3, 3, 94, 0)] + [(20, 0, 90, 10, 0, 0)] * 10)
    procstat = "TS 1776790301.0 2026-04-21 16:51:41\ncpu  1 2 3 4\n" + "".join(
        f"cpu{i} 1 2 3 4\n" for i in range(4)
    )
    case = _ingest(
        make_tar(
            tmp_path / "b.tgz",
            {"2026_04_21_16_51_41-vmstat": vm.encode(), "2026_04_21_16_51_41-procstat": procstat.encode()},
        )
    )
    assert case.ncpu == 4
    keys = list(Finding.objects.filter(case=case).values_list("key", flat=True))
    assert keys == ["cpu-saturation"]
    [window] = Finding.objects.get(case=case).windows
    assert window == ["2026-04-21T16:51:42.000000Z", "2026-04-21T16:51:51.000000Z"]
    assert case.rule_versions["cpu-saturation"] == 1


def test_the_rules_run_beside_the_writes_while_the_worker_holds_little(
    example2_tarball: Path, monkeypatch, tmp_path: Path
) -> None:
    """Below ``RULES_BESIDE_UP_TO_BYTES`` the rules run in a forked child while the series are
    written; past it in the ingest's own process and thread; the case comes out the same either way."""
    import os
    import threading

    from analyzer import engine

    where = tmp_path / "where"  # a file: what the forked child does to this process's memory stays there
    real_run = engine.run_hosts

    def run_hosts(timelines, **kw):  # noqa: ANN001, ANN202 - engine.run_hosts's signature
        with where.open("a") as out:
            out.write(f"{os.getpid()} {threading.current_thread().name}\n")
        return real_run(timelines, **kw)

    monkeypatch.setattr(engine, "run_hosts", run_hosts)
    cases = []
    for bound in (1 << 40, 0):
        monkeypatch.setattr(pipeline, "RULES_BESIDE_UP_TO_BYTES", bound)
        cases.append(_ingest(example2_tarball))
    here = f"{os.getpid()} {threading.current_thread().name}"
    [in_child, inline] = where.read_text().splitlines()
    assert in_child.split()[0] != str(os.getpid()) and inline == here
    beside, inline = (
        (
            c.status,
            c.finding_keys,
            c.fingerprints,
            c.rule_versions,
            list(Finding.objects.filter(case=c).values_list("key", "windows", "evidence")),
            _points(c),
        )
        for c in cases
    )
    assert beside == inline
    assert beside[0] == CaseStatus.READY and beside[1] and beside[2] and beside[4] and beside[5]


def test_rules_whose_child_is_lost_run_again_in_the_ingest(example2_tarball: Path, monkeypatch) -> None:
    """A rules' child that ends without an answer (killed, e.g. for memory) costs time, not the
    findings: the ingest works them out itself and the case is the same."""
    import os
    import signal

    from parsers.ingest import forked

    monkeypatch.setattr(pipeline, "RULES_BESIDE_UP_TO_BYTES", 1 << 40)
    whole = _ingest(example2_tarball)
    real_start = forked.start
    lost: list[int] = []

    def start_then_kill(fn, *args):  # noqa: ANN001, ANN202 - forked.start's signature
        child = real_start(fn, *args)
        os.kill(child.pid, signal.SIGKILL)  # as the OOM killer would
        lost.append(child.pid)
        return child

    monkeypatch.setattr(forked, "start", start_then_kill)
    again = _ingest(example2_tarball)
    assert len(lost) == 1
    assert again.status == whole.status == CaseStatus.READY
    assert again.finding_keys == whole.finding_keys and again.finding_keys
    assert again.verdict == whole.verdict


def test_a_hung_rules_child_is_killed_after_its_timeout_and_the_rules_run_here(
    example2_tarball: Path, monkeypatch, settings, caplog
) -> None:
    """A rules' child that gives no answer within ``CASEBOOK_RULES_CHILD_TIMEOUT_S`` is killed; the
    worker runs the rules itself and the case comes out as it does without the child."""
    import os
    import threading

    from analyzer import engine

    monkeypatch.setattr(pipeline, "RULES_BESIDE_UP_TO_BYTES", 0)
    whole = _ingest(example2_tarball)
    real_run = engine.run_hosts
    parent = os.getpid()

    def run_hosts(timelines, **kw):  # noqa: ANN001, ANN202 - engine.run_hosts's signature
        if os.getpid() != parent:  # the child hangs
            threading.Event().wait(3600)
        return real_run(timelines, **kw)

    monkeypatch.setattr(engine, "run_hosts", run_hosts)
    monkeypatch.setattr(pipeline, "RULES_BESIDE_UP_TO_BYTES", 1 << 40)
    settings.CASEBOOK_RULES_CHILD_TIMEOUT_S = 1
    with caplog.at_level("WARNING", logger=pipeline.log.name):
        again = _ingest(example2_tarball)
    assert "CASEBOOK_RULES_CHILD_TIMEOUT_S (1 s) and was killed" in caplog.text
    assert again.status == whole.status == CaseStatus.READY
    assert again.finding_keys == whole.finding_keys and again.finding_keys
    assert again.verdict == whole.verdict
    assert list(Finding.objects.filter(case=again).values_list("key", "windows", "evidence")) == list(
        Finding.objects.filter(case=whole).values_list("key", "windows", "evidence")
    )


def test_rules_not_wanted_any_more_are_stopped_not_run_again(example2_tarball: Path) -> None:
    """When the writes fail, the rules' child is killed and its work is not done again."""
    from parsers.ingest import forked
    from parsers.ingest.bundle import read_bundle

    beside = pipeline._Rules(pipeline.host_timelines(read_bundle(example2_tarball)), beside=True)
    beside.cancel()
    with pytest.raises(forked.ForkLost):
        beside.result()


def _member_text(tarball: Path, name: str) -> str:
    """A member's text as the parsers read it (UTF-8 with replacement, universal newlines)."""
    with tarfile.open(tarball) as tar:
        raw = tar.extractfile(name).read()
    return raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


@pytest.mark.parametrize(
    "whole_max",
    [
        pytest.param(None, id="members parsed whole or in pieces"),
        pytest.param(1000, id="larger members read as a stream"),
    ],
)
def test_the_text_of_every_parsed_member_is_kept_line_for_line(
    example2_tarball: Path, monkeypatch, whole_max: int | None
) -> None:
    monkeypatch.setattr("parsers.rawtext.CHUNK_BYTES", 4096)  # several chunks a member
    if whole_max:
        monkeypatch.setattr("parsers.ingest.cutting.WHOLE_MAX_BYTES", whole_max)
    case = _ingest(example2_tarball)
    members = list(case.sources.exclude(samples=0).values_list("member", flat=True))
    assert len(members) >= 5
    most = 0
    for member in members:
        chunks = list(
            RawChunk.objects.filter(case=case, member=member, generation=case.generation)
            .order_by("line_start")
            .values_list("line_start", "line_end", "text_zstd")
        )
        texts = [text_of(bytes(data)) for *_, data in chunks]
        text = _member_text(example2_tarball, member)
        assert "".join(texts) == text, member
        assert [start for start, *_ in chunks] == [1] + [end + 1 for _, end, _ in chunks[:-1]], member
        assert chunks[-1][1] == text.count("\n") + (not text.endswith("\n")), member
        most = max(most, len(chunks))
    assert most > 1


def test_a_snapshot_is_read_back_with_the_statement_and_its_fingerprint(tmp_path: Path) -> None:
    case = _ingest(
        make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-processlist": PROCESSLIST_NO_TS.encode()})
    )
    snapshot = moments.processlist_at(case=case, at=case.window_start)
    [row] = snapshot["rows"]
    assert (row["info"], row["fingerprint"], row["active"], row["line_no"]) == (
        "SELECT * FROM orders WHERE id = 42",
        "select * from orders where id = ?",
        True,
        1,
    )
    assert (snapshot["sessions"], snapshot["active"], snapshot["error"]) == (1, 1, None)


def test_the_snapshot_of_a_local_time_capture_is_placed_in_utc(tmp_path: Path) -> None:
    manifest = b"casebook_collector: 1\nhostname: db1\nutc_offset: +0200\n"
    case = _ingest(
        make_tar(
            tmp_path / "b.tgz",
            {"c/manifest.txt": manifest, "c/2026_04_21_18_51_41-processlist": PROCESSLIST_NO_TS.encode()},
        )
    )
    utc = pd.Timestamp("2026-04-21 16:51:41", tz="UTC")  # 18:51:41 at UTC+02:00
    assert case.sources.get(format="processlist").start == utc
    assert moments.processlist_at(case=case, at=utc)["ts"] == utc.timestamp() * 1000


def test_reanalysis_replaces_the_kept_text(tmp_path: Path) -> None:
    case = _ingest(
        make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-processlist": PROCESSLIST_NO_TS.encode()})
    )
    services.case_reanalyze(case_id=case.pk, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    case.refresh_from_db()
    assert case.generation == 2
    assert list(RawChunk.objects.filter(case=case).values_list("generation", flat=True)) == [2]


def test_the_threads_listed_at_a_moment_are_those_not_sleeping(tmp_path: Path) -> None:
    ps = (
        "TS 1776790301.000000000 2026-04-21 16:51:41\n"
        "    PID     TID    PPID USER     STAT %CPU COMMAND         WCHAN\n"
        "   1208    1208       1 mysql    Ssl   1.0 mariadbd        do_epoll_wait\n"
        "   1208    1301       1 mysql    D     0.5 mariadbd        do_unlinkat\n"
        "   1208    1302       1 mysql    R    90.0 mariadbd        -\n"
    )
    case = _ingest(make_tar(tmp_path / "b.tgz", {"ps-threads.txt": ps.encode()}))
    threads = moments.threads_at(case=case, at=case.window_start)
    assert [(r["tid"], r["state"], r["wchan"], r["line_no"]) for r in threads["rows"]] == [
        (1301, "D", "do_unlinkat", 4),
        (1302, "R", "", 5),
    ]
    assert (threads["counts"], threads["omitted"]) == ({"D": 1, "R": 1, "S": 1}, 0)


def test_deleting_a_case_leaves_no_kept_text_behind(tmp_path: Path) -> None:
    case = _ingest(
        make_tar(tmp_path / "b.tgz", {"2026_04_21_16_51_41-processlist": PROCESSLIST_NO_TS.encode()})
    )
    assert RawChunk.objects.filter(case=case).count() == 1
    case_id = case.pk
    case.delete()
    assert not RawChunk.objects.filter(case_id=case_id).exists()


def test_a_capture_with_no_time_of_its_own_is_placed_with_the_others(tmp_path: Path) -> None:
    case = _ingest(
        make_tar(
            tmp_path / "b.tgz",
            {"vmstat.out": VMSTAT.encode(), "2026_04_21_16_51_41-processlist": PROCESSLIST_NO_TS.encode()},
        )
    )
    vm = case.sources.get(format="vmstat")
    assert vm.start == pd.Timestamp("2026-04-21 16:51:41", tz="UTC")  # not 1970
    assert case.window_start == vm.start
    assert any("vmstat.out (vmstat) has no time of its own" in w for w in case.warnings)


def test_pieces_parsed_by_parse_processes_give_the_same_case(
    example2_tarball: Path, settings, monkeypatch
) -> None:
    monkeypatch.setattr(
        "parsers.ingest.cutting.PIECE_BYTES", 20_000
    )  # every snapshot member in several pieces

    def summary(case: Case) -> tuple:
        return (
            case.status,
            sorted(case.sources.values_list("member", "samples", "start", "end", "warning_count")),
            _points(case),
            list(case.findings.values_list("key", "windows")),
            case.search_terms,
        )

    started: list[int] = []

    class CountingPool(PiecePool):
        def close(self) -> None:
            started.append(len(self._all))
            super().close()

    close_waiting()
    monkeypatch.setattr("parsers.ingest.pool.PiecePool", CountingPool)
    settings.CASEBOOK_PARSE_PROCESSES = 0
    alone = summary(_ingest(example2_tarball))
    assert started == []
    settings.CASEBOOK_PARSE_PROCESSES = 2
    try:
        shared = summary(_ingest(example2_tarball))
        assert started == [2]  # closed at the end of the parse
        pipeline.warm_parse_processes(wait=True)  # what a worker does after an ingest
        again = summary(_ingest(example2_tarball))  # on the two started ahead
        assert started == [2, 2]
    finally:
        close_waiting()
    assert shared == alone == again and alone[0] == CaseStatus.READY


def test_the_ingest_hands_the_analysis_reducer_to_the_pipeline(tmp_path: Path, monkeypatch) -> None:
    """The reduce step is an object the ingest passes in (``web.ingest.work.PIECE_REDUCER``), not a name the
    pipeline imports: whatever the ingest holds there is what reduces every parsed member."""
    from analyzer.timeline.timeline import reduce_piece

    assert piece_work.PIECE_REDUCER is reduce_piece
    seen: list[str] = []

    def spy(source):
        seen.append(source.member)
        return reduce_piece(source)

    monkeypatch.setattr(piece_work, "PIECE_REDUCER", spy)
    path = make_tar(
        tmp_path / "b.tgz", {"c/vmstat.txt": VMSTAT.encode(), "c/pl.txt": PROCESSLIST_NO_TS.encode()}
    )
    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=path.name, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    assert Case.objects.get(pk=case.pk).status == CaseStatus.READY
    assert sorted(set(seen)) == ["c/pl.txt", "c/vmstat.txt"]
