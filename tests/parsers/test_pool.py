"""Pieces parsed in child processes (parsers/ingest/pool.py) give what one process gives, in order, with
the same warnings; a piece that is not the format, a reducer and a dying process behave as named."""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from parsers import interrupts, processlist
from parsers.base import ClockHints, ParsedSource, ParseError
from parsers.ingest import children
from parsers.ingest.cutting import Piece, split, whole
from parsers.ingest.malloc import MALLOC_TUNABLES
from parsers.ingest.pieces import WARM_PIECE_BYTES, LocalRunner, Pipeline, Work
from parsers.ingest.pool import (
    _WAITING,
    _WAITING_LOCK,
    PiecePool,
    PoolError,
    close_waiting,
    keep_warm,
    warmed,
)
from parsers.rawtext import text_of
from tests.parsers.test_pieces import _pieced, _processlist
from tests.servers import process_environ

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _mark(source: ParsedSource) -> ParsedSource:
    """A reducer run in the child: each row says which process reduced it."""
    main = source.main.assign(reduced_in=os.getpid())
    return dataclasses.replace(source, frames={**source.frames, next(iter(source.frames)): main})


def _die(source: ParsedSource) -> ParsedSource:
    os._exit(3)


@dataclasses.dataclass(frozen=True)
class _Head:
    """A reducer object with its own setting, handed to the pipeline as it is (not named by a string):
    keeps the first ``rows`` rows of each frame of a piece, marked with the process that cut them."""

    rows: int

    def __call__(self, source: ParsedSource) -> ParsedSource:
        frames = {k: f.head(self.rows).assign(reduced_in=os.getpid()) for k, f in source.frames.items()}
        return dataclasses.replace(source, frames=frames)


def _pieces(text: str, piece_bytes: int) -> int:
    data = text.encode()
    return len(list(split(data[:200], io.BytesIO(data[200:]), piece_bytes=piece_bytes)))


@pytest.fixture(scope="module")
def pool():
    with PiecePool(2) as p:
        yield p


def test_a_processlist_parsed_by_two_processes_equals_one_process(pool: PiecePool) -> None:
    text = _processlist(40, 7)
    alone = _pieced(processlist, text, 3000)
    shared = _pieced(processlist, text, 3000, runner=pool)
    assert _pieces(text, 3000) > 5 and pool.started
    pd.testing.assert_frame_equal(shared.main, alone.main)
    assert shared.samples == 40


def test_interrupt_rates_continue_across_pieces_parsed_apart(pool: PiecePool) -> None:
    text = (FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt").read_text()
    alone = _pieced(interrupts, text, 200)
    shared = _pieced(interrupts, text, 200, runner=pool)
    pd.testing.assert_frame_equal(shared.frames["interrupts"], alone.frames["interrupts"])
    assert shared.frames["interrupts"]["per_s"].notna().sum() > 0


def test_a_later_piece_that_is_not_the_format_cuts_the_member_with_its_line(pool: PiecePool) -> None:
    good = _processlist(10, 3)
    text = good + "TS 1776790400.000000000 2026-04-21 16:53:20\nhello world\n" + _processlist(3, 1)
    alone = _pieced(processlist, text, len(good) // 4)
    shared = _pieced(processlist, text, len(good) // 4, runner=pool)
    assert [(w.line_no, w.code) for w in shared.warnings] == [(w.line_no, w.code) for w in alone.warnings]
    pd.testing.assert_frame_equal(shared.main, alone.main)


def test_a_member_that_is_not_the_format_raises_with_its_line(pool: PiecePool) -> None:
    text = "TS 1776790400.0 2026-04-21 16:53:20\nhello\n" * 2000
    with pytest.raises(ParseError, match="m line 2:"):
        _pieced(processlist, text, 1000, runner=pool)


def test_the_reducer_runs_in_the_child_processes() -> None:
    with PiecePool(2, work=Work(reduce=_mark)) as pool:
        source = _pieced(processlist, _processlist(20, 3), 1500, runner=pool)
    pids = set(source.main["reduced_in"])
    assert pids and os.getpid() not in pids and len(pids) <= 2


def test_a_reducer_object_is_handed_to_the_parse_processes_as_it_is(tmp_path: Path, monkeypatch) -> None:
    import tarfile

    from parsers.ingest.bundle import read_bundle

    text = _processlist(300, 7).encode()  # larger than the head read for detection: cut in pieces
    path = tmp_path / "b.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("c/processlist.txt")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    monkeypatch.setattr("parsers.ingest.cutting.PIECE_BYTES", 20_000)
    reducer = _Head(rows=1)
    whole = read_bundle(path).sources[0].main
    alone = read_bundle(path, reduce=reducer).sources[0].main
    shared = read_bundle(path, reduce=reducer, processes=2).sources[0].main
    assert len(whole) == 300 * 7
    assert 5 < len(alone) < 300  # one row kept of each piece
    assert set(alone["reduced_in"]) == {os.getpid()}
    assert os.getpid() not in set(shared["reduced_in"])  # the object travelled to the parse processes
    pd.testing.assert_frame_equal(alone.drop(columns="reduced_in"), shared.drop(columns="reduced_in"))


def test_the_text_is_compressed_in_the_child_processes() -> None:
    chunks = []
    text = _processlist(20, 3)
    with PiecePool(2, work=Work(keep_text=True)) as pool:
        _pieced(processlist, text, 1500, runner=pool, keep_text=lambda member, got: chunks.extend(got))
    assert "".join(text_of(c.data) for c in chunks) == text


def test_a_process_that_dies_is_an_error_and_is_replaced() -> None:
    with PiecePool(1, work=Work(reduce=_die)) as pool:
        with pytest.raises(PoolError, match="exit status 3"):
            _pieced(processlist, _processlist(20, 3), 1500, runner=pool)
        pool.work = Work()  # the next piece gets a fresh process, without the fatal reducer
        assert len(_pieced(processlist, _processlist(20, 3), 1500, runner=pool).main) == 60


def test_a_member_of_one_piece_starts_no_process() -> None:
    pool = PiecePool(2)
    try:
        assert len(_pieced(processlist, _processlist(3, 2), 1 << 20, runner=pool).main) == 6
        assert pool._all == [] and not pool.started
    finally:
        pool.close()


def test_a_warmed_pool_has_its_processes_running_before_the_first_piece() -> None:
    with PiecePool(2, work=Work(reduce=_mark)) as pool:
        pool.warm()
        children = list(pool._all)
        assert len(children) == 2 and all(c.proc.poll() is None for c in children)
        assert not pool.started  # small members are still parsed where they are read
        source = _pieced(processlist, _processlist(20, 3), 1500, runner=pool)
        assert pool._all == children  # the pieces went to the processes already running
    assert set(source.main["reduced_in"]) <= {c.proc.pid for c in children}
    assert all(c.proc.returncode == 0 for c in children)  # ended cleanly on close


def test_processes_started_early_are_the_ones_a_pool_takes_and_a_dead_one_is_passed_over() -> None:
    """``manage.py analyze --sync`` starts its parse processes before it imports pandas
    (``children.start_early``); the pool's children are those, but one that died meanwhile."""
    children.start_early(2)
    early = list(children._early)
    early[0].kill()
    early[0].wait()
    with PiecePool(2, work=Work(reduce=_mark)) as pool:
        source = _pieced(processlist, _processlist(20, 3), 1500, runner=pool)
        pids = {c.proc.pid for c in pool._all}
    assert early[1].pid in pids and early[0].pid not in pids and not children._early
    assert set(source.main["reduced_in"]) <= pids


@pytest.mark.parametrize(
    ("given", "started_with"), [(None, MALLOC_TUNABLES), ("", ""), ("glibc.malloc.arena_max=2", None)]
)
def test_the_command_runs_again_with_a_workers_malloc_tunables_unless_it_has_its_own(
    given: str | None, started_with: str | None
) -> None:
    """``children.exec_tuned`` (``manage.py analyze --sync``): a process started without
    ``GLIBC_TUNABLES`` runs itself again, the same program and arguments, with the worker's (glibc
    reads them only at a start: /proc/PID/environ shows what the process started with); one that
    has its own keeps them and is not run again."""
    import subprocess
    import sys

    code = (
        "import os, sys; from parsers.ingest.children import exec_tuned; "
        "print('run', sys.argv[1:]); sys.stdout.flush(); exec_tuned(); print(os.getpid())"
    )
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    if given is not None:
        env["GLIBC_TUNABLES"] = given
    script = subprocess.Popen(
        [sys.executable, "-c", code + "; sys.stdin.read()", "an-argument"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=children.PROJECT_ROOT,
        text=True,
    )
    runs = [script.stdout.readline() for _ in range(1 if given is not None else 2)]
    pid = int(script.stdout.readline())
    environ = process_environ(pid)
    script.communicate("")
    assert runs == ["run ['an-argument']\n"] * len(runs) and pid == script.pid
    assert environ.get("GLIBC_TUNABLES") == (started_with if started_with is not None else given)


def _one_piece(pool: PiecePool, text: str) -> tuple[ParsedSource, int]:
    """``text`` handed to a pipeline as one whole piece; the source and the pieces the pool took."""
    got: list[ParsedSource] = []
    with Pipeline(local=LocalRunner(pool.work), pool=pool) as pipeline:
        pipeline.pieces(processlist, [whole(text.encode())], member="m", clock=ClockHints(), done=got.append)
    return got[0], int(pool.started)


def test_a_member_of_one_large_enough_piece_goes_to_processes_already_running() -> None:
    big = _processlist(WARM_PIECE_BYTES // 2000 + 2, 10)  # one piece of just over WARM_PIECE_BYTES
    small = _processlist(3, 2)
    assert len(big.encode()) >= WARM_PIECE_BYTES > len(small.encode())
    with PiecePool(2, work=Work(reduce=_mark)) as pool:
        source, _ = _one_piece(pool, big)
        assert pool._all == [] and set(source.main["reduced_in"]) == {
            os.getpid()
        }  # none running: none started
        pool.warm()
        children = {c.proc.pid for c in pool._all}
        source, _ = _one_piece(pool, small)
        assert not pool.started and set(source.main["reduced_in"]) == {os.getpid()}  # too small to send
        source, took = _one_piece(pool, big)
        assert took and set(source.main["reduced_in"]) <= children  # this process read on meanwhile
        assert len(source.main) == len(big.split("Id: ")) - 1


def _sent_at_each_read(pool: PiecePool, data: bytes) -> list[int]:
    """One member cut and parsed through a pipeline with ``pool``: how many of its pieces had been
    sent to ``pool`` when each piece was read."""
    sent: list[Piece] = []
    seen: list[int] = []

    def counting(fmt: str, piece: Piece, **kwargs: object) -> object:
        sent.append(piece)
        return PiecePool.submit(pool, fmt, piece, **kwargs)  # type: ignore[arg-type]

    def pieces() -> Iterator[Piece]:
        for piece in split(data[:200], io.BytesIO(data[200:]), piece_bytes=1500):
            seen.append(len(sent))
            yield piece

    got: list[ParsedSource] = []
    pool.submit = counting  # type: ignore[method-assign]
    try:
        with Pipeline(local=LocalRunner(pool.work), pool=pool) as pipeline:
            pipeline.pieces(processlist, pieces(), member="m", clock=ClockHints(), done=got.append)
    finally:
        del pool.submit
    assert len(got[0].main) == 60 and len(sent) == len(seen) > 2
    return seen


def test_once_pieces_go_to_the_processes_a_members_first_is_sent_before_its_second_is_read() -> None:
    data = _processlist(20, 3).encode()
    with PiecePool(2) as pool:
        # worth starting the processes for? the second piece is read before anything is sent
        assert _sent_at_each_read(pool, data)[:2] == [0, 0] and pool.started
        # they have pieces already: the next member's first is on its way when its second is read
        assert _sent_at_each_read(pool, data)[:2] == [0, 1]


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
@pytest.mark.parametrize("given", [None, "glibc.malloc.arena_max=2"], ids=["unset", "set by the operator"])
def test_parse_processes_start_with_the_malloc_tunables_unless_given_their_own(monkeypatch, given) -> None:
    if given is None:
        monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    else:
        monkeypatch.setenv("GLIBC_TUNABLES", given)
    with PiecePool(1) as pool:
        pool.warm()
        [child] = pool._all
        assert process_environ(child.proc.pid)["GLIBC_TUNABLES"] == (given or MALLOC_TUNABLES)


def _bundle(tmp_path: Path) -> Path:
    """A tar of several snapshot captures and other members, in a fixed order, one of them junk."""
    import tarfile

    members = [
        ("c/processlist.txt", FIXTURES / "processlist" / "mariadb-10.11.19_vertical_ts.txt"),
        ("c/notes.txt", None),
        ("c/interrupts.txt", FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt"),
        ("c/vmstat.txt", FIXTURES / "loads" / "mariadb-10.11.19_tmptables-64_vmstat-t.txt"),
        ("c/mysqladmin.txt", FIXTURES / "mysqladmin" / "mariadb-10.11_ts-markers_ext_subset.txt"),
        ("c/ps.txt", FIXTURES / "loads" / "mariadb-10.11.19_tmptables-64_ps-eLo.txt"),
    ]
    path = tmp_path / "b.tar"
    with tarfile.open(path, "w") as tar:
        for name, source in members:
            data = source.read_bytes() if source else b"just some notes\n"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_bundle_read_by_parse_processes_comes_out_in_member_order(tmp_path: Path, monkeypatch) -> None:
    from analyzer.timeline.timeline import reduce_piece
    from parsers.ingest.bundle import read_bundle

    path = _bundle(tmp_path)
    monkeypatch.setattr("parsers.ingest.cutting.PIECE_BYTES", 2000)  # every snapshot member in several pieces
    alone = read_bundle(path, reduce=reduce_piece)
    shared = read_bundle(path, reduce=reduce_piece, processes=2)
    order = [(s.member, s.format, s.samples) for s in alone.sources]
    assert [m for m, *_ in order] == [
        "c/processlist.txt",
        "c/interrupts.txt",
        "c/vmstat.txt",
        "c/mysqladmin.txt",
        "c/ps.txt",
    ]
    assert [(s.member, s.format, s.samples) for s in shared.sources] == order
    assert shared.not_used == alone.not_used and [n.member for n in alone.not_used] == ["c/notes.txt"]
    for a, b in zip(alone.sources, shared.sources, strict=True):
        assert a.frames.keys() == b.frames.keys()
        for name in a.frames:
            pd.testing.assert_frame_equal(a.frames[name], b.frames[name], check_categorical=False, obj=name)


# --- parse processes started ahead of their bundle (an ingest worker reads one bundle after another) ---


def _reduced_in(pool: PiecePool) -> set[int]:
    return set(_pieced(processlist, _processlist(20, 3), 1500, runner=pool).main["reduced_in"])


def test_a_bundle_takes_the_processes_started_ahead_and_closes_them() -> None:
    work = Work(reduce=_mark)
    try:
        keep_warm(2, work=work, wait=True)
        with warmed(2, work=work) as pool:
            children = list(pool._all)
            assert len(children) == 2 and all(c.proc.poll() is None for c in children)
            assert not pool.started  # small members are still parsed where they are read
            assert _reduced_in(pool) <= {c.proc.pid for c in children}
        assert all(c.proc.returncode == 0 for c in children)  # closed: their memory back before the analysis
        with warmed(2, work=work) as fresh:  # none waits now: a new pool, started as pieces come
            assert fresh is not pool and fresh._all == []
    finally:
        close_waiting()


def test_processes_no_piece_went_to_wait_on_for_the_next_bundle() -> None:
    work = Work(reduce=_mark)
    try:
        keep_warm(2, work=work)
        with warmed(2, work=work) as pool:
            children = list(pool._all)
            _pieced(processlist, _processlist(3, 2), 1 << 20, runner=pool)  # one piece: parsed here
        keep_warm(2, work=work)  # already waiting: nothing more is started
        with warmed(2, work=work) as again:
            assert again is pool and again._all == children
            assert _reduced_in(again) <= {c.proc.pid for c in children}
        with warmed(2, work=Work(reduce=_Head(5))) as other:  # other work: other processes
            assert other is not pool
    finally:
        close_waiting()


def test_a_waiting_pool_whose_process_died_is_replaced() -> None:
    work = Work(reduce=_mark)
    try:
        keep_warm(1, work=work, wait=True)
        with warmed(1, work=work) as pool:
            (child,) = pool._all
            child.proc.kill()
            child.proc.wait()
        keep_warm(1, work=work, wait=True)
        with _WAITING_LOCK:
            (waiting,) = _WAITING.values()
        waiting._all[0].proc.kill()
        waiting._all[0].proc.wait()
        with warmed(1, work=work) as pool:
            assert pool is not waiting and _reduced_in(pool)  # a fresh process took the pieces
    finally:
        close_waiting()
