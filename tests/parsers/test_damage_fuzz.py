"""Damaged bundles lose nothing: a seeded mutation test over real captures, member by member.

Each run damages one member of a real collection (tests/fixtures/bundles/*.tar.gz, made by running
pt-stalk and MariaDB here; ../shared/samples' pt-stalk collections when present) one way
(tests/damage.py: truncation mid-line and mid-block, NUL bytes, byte flips, one huge line, CRLF,
UTF-16, the content twice, blocks out of order, digits replaced, the file empty, negative numbers),
reads the bundle the way the worker does (``read_bundle`` with the ingest's reducer, then the
timeline and the rules) and asserts that: the bundle reads; every untouched member keeps the same
samples; the damaged member keeps a source (the empty one is listed "empty") and, for the damage
that can always be seen, says it in a warning; no traceback is logged; no finding appears that the
undamaged bundle did not have. Every other run cuts the snapshot captures into 16 KiB pieces (the
piece path: pieces joined column by column), and one run in four parses them in a parse process.

``CASEBOOK_FUZZ_PER_MEMBER`` (default 1) kinds of damage per member, drawn with seed
``CASEBOOK_FUZZ_SEED`` (default 24); every kind is used on every collection. Measured here
(2 CPUs shared): see docs/damaged-input.md.
"""

from __future__ import annotations

import logging
import os
import random
import tarfile
from pathlib import Path

import pytest

from analyzer import engine
from analyzer.timeline.timeline import Timeline, reduce_piece
from parsers import registry
from parsers.base import Blocks
from parsers.ingest import cutting
from parsers.ingest.bundle import Bundle, read_bundle
from tests.conftest import FIXTURES, SAMPLES
from tests.damage import MARKER, MUTATIONS, tarball

PER_MEMBER = int(os.environ.get("CASEBOOK_FUZZ_PER_MEMBER", "1"))
SEED = int(os.environ.get("CASEBOOK_FUZZ_SEED", "24"))
#: Damage that is always visible and must be said in a warning naming the member.
MUST_SAY = {"truncate-mid-line", "nul-bytes", "huge-line", "utf16", "twice"}
#: Samples a damaged member may lose at most, by kind of damage: none where no line is damaged (CRLF,
#: UTF-16, a garbage line added, the content twice), about two for each damaged line (a sample
#: of several lines, or a time made unreadable, merging two samples).
MAY_LOSE = {
    "crlf": 0,
    "utf16": 0,
    "huge-line": 0,
    "twice": 0,
    "nul-bytes": 2,
    "negative-numbers": 5,
    "digits-replaced": 10,
    "byte-flips": 16,
}
#: Pieces of the runs that take the piece path (snapshot captures cut every 16 KiB).
SMALL_PIECE_BYTES = 16 << 10


def _members(path: Path) -> dict[str, bytes]:
    """The files of the tarball at ``path``: name -> bytes, in the archive's order."""
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


def _collections() -> list[tuple[str, dict[str, bytes]]]:
    out = [(path.name, _members(path)) for path in sorted((FIXTURES / "bundles").glob("ptstalk-*.tar.gz"))]
    example = SAMPLES / "My-gather" / "pt-stalk" / "example2"
    if example.is_dir():
        prefix = "2026_04_21_16_51_41-"
        out.append(
            (
                "example2",
                {
                    f"example2/{p.name}": p.read_bytes()
                    for p in sorted(example.iterdir())
                    if p.name.startswith(prefix) and p.stat().st_size < 1 << 20
                },
            )
        )
    return out


def _plan(members: dict[str, bytes]) -> list[tuple[str, str]]:
    """(member, kind) pairs: ``PER_MEMBER`` kinds for each member, every kind at least once."""
    rng = random.Random(SEED)
    kinds = list(MUTATIONS)
    plan = []
    for i, name in enumerate(members):
        chosen = {kinds[(i * PER_MEMBER + k) % len(kinds)] for k in range(PER_MEMBER)}
        plan += [(name, kind) for kind in sorted(chosen)]
    rng.shuffle(plan)
    return plan


def _read(path: Path, processes: int = 0) -> tuple[Bundle, engine.Outcome]:
    bundle = read_bundle(
        path, reduce=reduce_piece, keep_text=lambda member, chunks: None, processes=processes
    )
    timeline = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    return bundle, engine.run(timeline)


def _said(bundle: Bundle, member: str) -> bool:
    """Whether the damage of ``member`` is said: a warning of its source, a bundle warning or a
    not-used reason naming it."""
    return (
        any(s.warnings for s in bundle.sources if s.member == member)
        or any(member in w for w in bundle.warnings)
        or any(n.member == member for n in bundle.not_used)
    )


def _cut_mid_block(bundle: Bundle, member: str, data: bytes) -> bool | None:
    """Whether the member, cut by ``truncate_mid_block`` inside the last of its snapshots (a capture
    of a format made of blocks, ``FormatTraits.blocks``, with two markers or more), says so with a
    ``truncated`` warning;
    None when that cut does not apply (no snapshots: cut at a line end between rows)."""
    source = next((s for s in bundle.sources if s.member == member), None)
    if (
        source is None
        or registry.traits(source.format).blocks is Blocks.NONE
        or len(MARKER.findall(data)) < 2
    ):
        return None
    return any(w.code == "truncated" for w in source.warnings)


COLLECTIONS = _collections()


@pytest.mark.parametrize("collection", COLLECTIONS, ids=[name for name, _ in COLLECTIONS])
def test_every_member_damaged_every_way(
    collection: tuple[str, dict[str, bytes]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, members = collection
    base, base_outcome = _read(tarball(tmp_path / "base.tar.gz", members))
    samples = {s.member: s.samples for s in base.sources}
    findings = {f.key for f in base_outcome.findings}
    failures = []
    for run, (name, kind) in enumerate(_plan(members)):
        damaged = dict(members)
        damaged[name] = MUTATIONS[kind](members[name], random.Random(SEED + run))
        path = tarball(tmp_path / f"run{run}.tar.gz", damaged)
        with monkeypatch.context() as patch:
            if run % 2:
                patch.setattr(cutting, "PIECE_BYTES", SMALL_PIECE_BYTES)
            caplog.clear()
            with caplog.at_level(logging.ERROR):
                bundle, outcome = _read(path, processes=1 if run % 4 == 1 else 0)
        where = f"{name} {kind} (run {run})"
        got = {s.member: s.samples for s in bundle.sources}
        for member, count in samples.items():
            if member != name and got.get(member) != count:
                failures.append(f"{where}: untouched {member} has {got.get(member)} samples, not {count}")
        if name in samples and kind != "empty":
            if name not in got:
                reasons = [n.reason for n in bundle.not_used if n.member == name]
                failures.append(f"{where}: the damaged member was lost: {reasons}")
            elif samples[name] and not got[name] and not kind.startswith("truncate"):
                failures.append(f"{where}: the damaged member kept no sample")
        if kind == "empty" and not any(n.member == name and n.reason == "empty" for n in bundle.not_used):
            failures.append(f"{where}: an empty member is not listed 'empty'")
        if kind in MUST_SAY and (samples.get(name) or name.endswith("hostname")) and not _said(bundle, name):
            failures.append(f"{where}: the damage is not said")
        if kind == "truncate-mid-block" and _cut_mid_block(bundle, name, members[name]) is False:
            failures.append(f"{where}: a snapshot capture cut inside its last block is not said 'truncated'")
        if kind == "twice" and name in got and got[name] != samples[name]:
            failures.append(f"{where}: written twice gives {got[name]} samples, not {samples[name]}")
        if kind in MAY_LOSE and name in got and got[name] < samples[name] - MAY_LOSE[kind]:
            failures.append(f"{where}: {got[name]} samples kept of {samples[name]}: good lines were lost")
        if new := {f.key for f in outcome.findings} - findings:
            failures.append(f"{where}: new findings {sorted(new)}")
        if outcome.failed:
            failures.append(f"{where}: rules failed {[f.key for f in outcome.failed]}")
        if tracebacks := [r.getMessage() for r in caplog.records if r.exc_info]:
            failures.append(f"{where}: traceback logged: {tracebacks[:1]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("share", [0.5, 0.9])
def test_a_truncated_archive_keeps_every_member_it_holds_and_says_where_it_breaks(
    share: float, tmp_path: Path
) -> None:
    whole = FIXTURES / "bundles" / "ptstalk-mariadb-tmptables.tar.gz"
    base = {s.member: s.samples for s in read_bundle(whole).sources}
    data = whole.read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(data[: int(len(data) * share)])
    bundle = read_bundle(cut)
    got = {s.member: s.samples for s in bundle.sources}
    assert got, "the members before the break are kept"
    order = list(base)
    last = max(order.index(m) for m in got)
    assert set(order[:last]) <= set(got)  # every member before the last one read is kept
    assert all(got[m] == base[m] for m in order[:last])
    assert any(
        "truncated or corrupt" in w and "the members before it were read" in w for w in bundle.warnings
    )


#: Where each member is cut in ``test_every_member_cut_inside_a_line_keeps_the_samples_of_its_whole_lines``:
#: shares of its bytes, each moved forward off a line end so the cut falls inside a line.
CUT_SHARES = (0.13, 0.5, 0.9)
#: Every fixture collection, pt-stalk and collector layouts alike.
ALL_COLLECTIONS = [
    (path.name, _members(path)) for path in sorted((FIXTURES / "bundles").glob("*.tar.gz"))
] + [c for c in COLLECTIONS if c[0] == "example2"]


def _samples(tmp: Path, name: str, data: bytes) -> int | None:
    """Samples of member ``name`` holding ``data``, read alone as the worker reads a bundle; None
    when it gives no source."""
    bundle = read_bundle(tarball(tmp, {name: data}))
    return next((s.samples for s in bundle.sources if s.member == name), None)


def _inside_a_line(data: bytes, share: float) -> int | None:
    """A byte offset near ``share`` of ``data`` that falls inside a line (not right after a line
    end, not at the end); None when there is none past it."""
    at = max(1, int(len(data) * share))
    while at < len(data) and data[at - 1] == 10:
        at += 1
    return at if at < len(data) else None


@pytest.mark.parametrize("collection", ALL_COLLECTIONS, ids=[name for name, _ in ALL_COLLECTIONS])
def test_every_member_cut_inside_a_line_keeps_the_samples_of_its_whole_lines(
    collection: tuple[str, dict[str, bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload cut short ends a member in the middle of a line: the member keeps every sample of
    the whole lines before the cut (as many as the same member cut at that line's start), plus at
    most the one the partial line starts (a ``TS`` marker or a time header cut after its time)."""
    _, members = collection
    failures = []
    for k, (name, data) in enumerate(members.items()):
        for j, share in enumerate(CUT_SHARES):
            at = _inside_a_line(data, share)
            if at is None:
                continue
            with monkeypatch.context() as patch:
                if (k + j) % 2:  # the piece path: the cut member's last piece is a small one
                    patch.setattr(cutting, "PIECE_BYTES", SMALL_PIECE_BYTES)
                whole = _samples(tmp_path / "whole.tar.gz", name, data[: data.rfind(b"\n", 0, at) + 1]) or 0
                cut = _samples(tmp_path / "cut.tar.gz", name, data[:at])
            if cut is None and whole:
                failures.append(f"{name} cut at byte {at}: no source, {whole} samples expected")
            elif not whole <= (cut or 0) <= whole + 1:
                failures.append(f"{name} cut at byte {at}: {cut} samples, {whole} expected")
    assert not failures, "\n".join(failures)


def test_a_ps_threads_listing_cut_inside_a_line_keeps_its_samples(tmp_path: Path) -> None:
    """The collector's ``ps -eLo`` listing cut half way, inside a row: the rows before it keep their
    8 snapshots (the piece whose only row was cut used to sink the whole member)."""
    members = _members(FIXTURES / "bundles" / "overlap-cpu.tar.gz")
    data = members["collector/ps-threads.txt"]
    at = _inside_a_line(data, 0.5)
    assert _samples(tmp_path / "cut.tar.gz", "collector/ps-threads.txt", data[:at]) == 8
