"""A bundle's parse planned, run part by part (as fan-out tasks would, in any order) and assembled
gives what ``read_bundle`` gives in one process: the same sources, frames, not-used members, warnings."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analyzer.timeline.timeline import reduce_piece
from parsers.ingest.bundle import Bundle, read_bundle
from parsers.ingest.fanout import assemble, parse_part, plan_bundle
from parsers.ingest.pieces import Work
from parsers.ingest.workfile import dumps, loads
from parsers.rawtext import text_of
from tests.bundles import make_tar
from tests.parsers.test_pieces import _processlist

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXAMPLE = FIXTURES / "bundles" / "ptstalk-mariadb-tmptables.tar.gz"


def _fanned_out(
    path: Path, *, part_bytes: int | None = None, lose: int | None = None, more: tuple = ()
) -> tuple[Bundle, int, list]:
    store: dict[str, bytes] = {}
    text: list = []

    def put(data: bytes) -> str:
        key = f"piece-{len(store)}"
        store[key] = data
        return key

    plan = plan_bundle(path, put=put, reduce=reduce_piece, part_bytes=part_bytes, more=more)
    plan = loads(dumps(plan), name="plan")  # it travels through the storage, as a work file
    work = Work(reduce=reduce_piece, keep_text=True)
    outcomes = {}
    for part in reversed(plan.parts):  # parts finish in any order
        if part.index != lose:
            got = parse_part(part, get=store.__getitem__, work=work, keep_text=lambda m, c: text.extend(c))
            outcomes[part.index] = loads(dumps(got), name=f"outcome-{part.index}")
    return assemble(plan, outcomes), len(plan.parts), text


def _same(a: Bundle, b: Bundle) -> None:
    assert [(s.member, s.format, s.samples, s.start, s.end) for s in a.sources] == [
        (s.member, s.format, s.samples, s.start, s.end) for s in b.sources
    ]
    for x, y in zip(a.sources, b.sources, strict=True):
        assert x.frames.keys() == y.frames.keys()
        for name in x.frames:
            pd.testing.assert_frame_equal(x.frames[name], y.frames[name])
        assert x.warnings == y.warnings
        assert x.meta == y.meta
    assert a.not_used == b.not_used
    assert a.warnings == b.warnings
    assert (a.host, a.kernel, a.ncpu, a.utc_offset_s, a.utc_offset_origin, a.layout, a.members_seen) == (
        b.host,
        b.kernel,
        b.ncpu,
        b.utc_offset_s,
        b.utc_offset_origin,
        b.layout,
        b.members_seen,
    )
    assert a.shifted == b.shifted
    assert a.hosts == b.hosts and a.host_of == b.host_of


def test_the_example_bundle_fanned_out_equals_the_single_read() -> None:
    single = read_bundle(EXAMPLE, reduce=reduce_piece)
    fanned, parts, _ = _fanned_out(EXAMPLE)
    assert parts >= 5 and len(single.sources) >= 5
    _same(fanned, single)


def test_several_hosts_and_an_added_bundle_fanned_out_equal_the_single_read(tmp_path: Path) -> None:
    from tests.multihost import host_bundle, hosts_tarball

    two = hosts_tarball(tmp_path / "two.tgz", ["db-a", "db-b"])
    more = ((host_bundle(tmp_path / "c.tgz", "db-c"), "db-c.tgz"),)
    single = read_bundle(two, reduce=reduce_piece, more=more)
    fanned, _, _ = _fanned_out(two, more=more)
    assert [h.name for h in single.hosts] == ["db-a", "db-b", "db-c"]
    _same(fanned, single)


def test_a_member_cut_in_many_parts_equals_the_single_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("parsers.ingest.cutting.PIECE_BYTES", 20_000)
    # a test process grown past SMALL_PIECES_ABOVE_BYTES would cut 3 MiB pieces: one part
    monkeypatch.setattr("parsers.ingest.cutting.SMALL_PIECES_ABOVE_BYTES", 1 << 62)
    text = _processlist(400, 7).encode()
    path = make_tar(tmp_path / "b.tgz", {"c/processlist.txt": text, "c/notes.txt": b"hello\n"})
    single = read_bundle(path, reduce=reduce_piece)
    fanned, parts, chunks = _fanned_out(path, part_bytes=60_000)
    assert parts > 3
    _same(fanned, single)
    ordered = sorted(chunks, key=lambda c: c.line_start)
    assert "".join(text_of(c.data) for c in ordered) == text.decode()  # each line once, written by the parts


def test_a_part_without_outcome_makes_its_member_not_used(tmp_path: Path) -> None:
    path = make_tar(tmp_path / "b.tgz", {"c/processlist.txt": _processlist(5, 3).encode()})
    fanned, parts, _ = _fanned_out(path, lose=0)
    assert parts == 1 and not fanned.sources
    assert fanned.not_used[0].member == "c/processlist.txt" and "gave no outcome" in fanned.not_used[0].reason


@pytest.mark.parametrize("junk", [b"TS 1776790400.0 2026-04-21 16:53:20\nhello\n" * 3])
def test_a_member_that_is_not_its_format_is_not_used_with_the_same_reason(
    tmp_path: Path, junk: bytes
) -> None:
    path = make_tar(tmp_path / "b.tgz", {"c/processlist.txt": _processlist(5, 3).encode() + junk})
    single = read_bundle(path, reduce=reduce_piece)
    fanned, _, _ = _fanned_out(path)
    _same(fanned, single)
