"""Damage on the stream path: a member too long to hold (over ``cutting.WHOLE_MAX_BYTES``, not cut in
pieces) is read as a text stream by the worker; its lines are cut as a piece's are
(``parsers.damage.segments`` and ``LineCutter``), never read whole.

Real captures: the example collection (tests/fixtures/bundles/ptstalk-mariadb-tmptables.tar.gz,
made by running pt-stalk and MariaDB here); the stream path is taken by lowering
``WHOLE_MAX_BYTES`` to 4 KiB rather than by writing members of 64 MB.
"""

from __future__ import annotations

import io
import tarfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers import damage
from parsers.ingest import cutting
from parsers.ingest.bundle import read_bundle
from parsers.rawtext import text_of
from tests.conftest import FIXTURES
from tests.damage import tarball

BUNDLE = FIXTURES / "bundles" / "ptstalk-mariadb-tmptables.tar.gz"
#: A garbage line of 5 MiB (as tests/damage.huge_line writes).
HUGE = 5 << 20


def _members() -> dict[str, bytes]:
    with tarfile.open(BUNDLE) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


LINE = st.one_of(
    st.text(alphabet="ab \x00", max_size=60),
    st.builds(lambda n, c: c * n, st.integers(0, 3 * damage.SEGMENT_CHARS), st.sampled_from("xyz")),
)


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(LINE, max_size=6), ended=st.booleans(), fmt=st.sampled_from(["vmstat", "processlist"]))
def test_the_stream_cutter_cuts_as_a_piece_is_cut(lines: list[str], ended: bool, fmt: str) -> None:
    """Whatever the lines, a stream gives the parser the lines ``clip_long_lines`` gives a piece,
    and says the same long lines, the NUL bytes and a missing last line end."""
    text = "\n".join(lines) + ("\n" if ended and lines else "")
    cutter = damage.LineCutter(damage.segments(io.StringIO(text, newline="")), fmt)
    got = "".join(cutter)
    clipped, long_lines = damage.clip_long_lines(text, fmt)
    assert got == clipped
    said = [(w.line_no, w.code) for w in cutter.warnings]
    assert [(w.line_no, w.code) for w in long_lines] == [x for x in said if x[1] == "long-line"]
    assert [(w.line_no, w.code) for w in damage.nul_warning(text)] == [x for x in said if x[1] == "nul-bytes"]
    truncated = damage.truncation_warning(text.encode(), 1)
    assert ([(truncated.line_no, "truncated")] if truncated else []) == [
        x for x in said if x[1] == "truncated"
    ]


@pytest.mark.parametrize("suffix", ["iostat", "mpstat", "top"])
def test_a_huge_line_in_a_member_read_as_a_stream_is_cut_and_named(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cutting, "WHOLE_MAX_BYTES", 4096)  # these members are read as streams
    members = _members()
    name = next(n for n in members if n.endswith("-" + suffix))
    base = read_bundle(tarball(tmp_path / "base.tar.gz", members))
    before = next(s for s in base.sources if s.member == name)
    assert before.samples, "the undamaged member gives samples on the stream path"
    lines = members[name].split(b"\n")
    at = len(lines) // 2
    damaged = dict(members)
    damaged[name] = b"\n".join([*lines[:at], b"7" * HUGE, *lines[at:]])
    kept: dict[str, list] = {}

    def keep(member: str, chunks: tuple) -> None:
        kept.setdefault(member, []).extend(chunks)

    peaks = []
    for bundle_path in (
        tarball(tmp_path / "again.tar.gz", members),
        tarball(tmp_path / "damaged.tar.gz", damaged),
    ):
        kept.clear()
        tracemalloc.start()
        try:
            read_bundle(bundle_path)  # the parse alone: the raw text keeps a line whole, as uploaded
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    bundle = read_bundle(tarball(tmp_path / "damaged.tar.gz", damaged), keep_text=keep)
    source = next(s for s in bundle.sources if s.member == name)
    said = [(w.line_no, w.code) for w in source.warnings if w.code in damage.DAMAGE_CODES]
    assert (at + 1, "long-line") in said, source.warnings
    assert source.samples >= before.samples - 1  # the good lines are kept (the cut line is one row at most)
    assert "".join(text_of(c.data) for c in kept[name]).encode() == damaged[name]  # the text as uploaded
    more = peaks[1] - peaks[0]
    assert more < HUGE // 2, f"{more:,} bytes more held at once: the {HUGE:,}-byte line was read whole"
