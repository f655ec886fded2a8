"""Damage that is said per member: a clock that jumps by weeks (the case window does not stretch over
them), a capture cut at a line end inside its last block.

Captures: the header and a row of a real ``vmstat -t 1 3`` (tests/fixtures/vmstat, procps-ng 4.0.2)
repeated with other times; the members of the example collection
(tests/fixtures/bundles/ptstalk-mariadb-tmptables.tar.gz, made by running pt-stalk and MariaDB here).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers import damage, registry
from parsers.base import ClockHints
from parsers.ingest import cutting
from parsers.ingest.bundle import read_bundle
from parsers.ingest.cutting import Piece
from parsers.ingest.pieces import parse_piece
from tests.conftest import FIXTURES
from tests.damage import tarball

VMSTAT = (FIXTURES / "vmstat" / "procps-ng-4.0.2_t_1_3.txt").read_text().splitlines()
HEADER, ROW = "\n".join(VMSTAT[:2]) + "\n", VMSTAT[2].rsplit(None, 2)[0]


def _vmstat(*stretches: tuple[str, int, int]) -> bytes:
    """A ``vmstat -t`` capture: for each (start, rows, seconds apart), that many rows."""
    rows = []
    for start, count, step in stretches:
        first = pd.Timestamp(start)
        rows += [f"{ROW} {first + pd.Timedelta(seconds=i * step):%Y-%m-%d %H:%M:%S}\n" for i in range(count)]
    return (HEADER + "".join(rows)).encode()


def _parse(data: bytes):
    module = registry.by_format("vmstat")
    return parse_piece(module, Piece(data, 1, last=True), member="m-vmstat", clock=ClockHints())


def test_a_clock_set_six_weeks_ahead_is_said_and_does_not_stretch_the_window(tmp_path: Path) -> None:
    data = _vmstat(("2026-01-05 10:00:00", 120, 1), ("2026-02-16 10:02:00", 60, 1))
    source = _parse(data)
    jumps = [w for w in source.warnings if w.code == "time-jump"]
    assert [w.line_no for w in jumps] == [2 + 120 + 1], source.warnings
    assert "2026-01-05 10:01:59 to 2026-02-16 10:02:00" in jumps[0].message
    assert source.samples == 120 and source.end == pd.Timestamp("2026-01-05 10:01:59", tz="UTC")
    bundle = read_bundle(tarball(tmp_path / "b.tar.gz", {"c/2026_01_05_10_00_00-vmstat": data}))
    (read,) = bundle.sources
    assert bundle.window[1] - bundle.window[0] < pd.Timedelta(minutes=3)
    assert any(w["code"] == "time-jump" for w in damage.damage_said([w.as_dict() for w in read.warnings]))


def test_a_capture_written_again_weeks_later_keeps_its_longest_stretch() -> None:
    source = _parse(_vmstat(("2026-01-05 10:00:00", 30, 1), ("2026-02-16 09:00:00", 90, 1)))
    assert source.samples == 90 and source.start == pd.Timestamp("2026-02-16 09:00:00", tz="UTC")
    assert [w.line_no for w in source.warnings if w.code == "time-jump"] == [3]  # the first refused row


@pytest.mark.parametrize(
    "stretches",
    [
        (("2026-01-05 00:00:00", 100, 600), ("2026-01-05 23:00:00", 6, 600)),  # sar-like: a day, a long gap
        (("2026-01-05 10:00:00", 3600, 1), ("2026-01-05 11:30:00", 600, 1)),  # a collector paused 30 min
        (("2026-01-05 10:00:00", 5, 86400),),  # one sample a day: no jump, however long
    ],
)
def test_gaps_that_samples_allow_are_not_jumps(stretches: tuple) -> None:
    source = _parse(_vmstat(*stretches))
    assert not [w for w in source.warnings if w.code == "time-jump"]
    assert source.samples == sum(count for _, count, _ in stretches)


def test_a_jump_across_the_pieces_of_a_long_member_is_said_once_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cutting, "WHOLE_MAX_BYTES", 4096)  # cut at line ends, in pieces
    monkeypatch.setattr(cutting, "LINE_PIECE_BYTES", 2048)
    data = _vmstat(("2026-01-05 10:00:00", 300, 1), ("2026-02-16 10:00:00", 100, 1))
    bundle = read_bundle(tarball(tmp_path / "b.tar.gz", {"c/2026_01_05_10_00_00-vmstat": data}))
    (source,) = bundle.sources
    assert source.samples == 300, source.warnings
    assert [w.line_no for w in source.warnings if w.code == "time-jump"] == [2 + 300 + 1]


MEMBERS = {
    name.rsplit("-", 1)[-1]: data
    for name, data in __import__("tests.parsers.test_damage_stream", fromlist=["_members"])._members().items()
}


#: Where a block starts: a snapshot marker, a processlist's first record, a mysqladmin table's top.
BLOCK_START = re.compile(r"^(?:TS |zzz |\*+ 1\. row \*+$|\+-+\+-+\+\n\| Variable_name)", re.M)


def _cut_in_last_block(data: bytes, keep: float) -> bytes:
    """``data`` cut at the line end ``keep`` of the way into its last block (``BLOCK_START``)."""
    text = data.decode()
    start = [m.start() for m in BLOCK_START.finditer(text)][-1]
    ends = [i + 1 for i, c in enumerate(text) if c == "\n" and i > start]
    return text[: ends[int(len(ends) * keep)]].encode()


@pytest.mark.parametrize(
    "suffix", ["interrupts", "processlist", "meminfo", "mysqladmin", "diskstats", "procvmstat"]
)
@pytest.mark.parametrize("keep", [0.0, 0.5])
def test_a_snapshot_capture_cut_at_a_line_end_in_its_last_block_is_said(suffix: str, keep: float) -> None:
    data = MEMBERS[suffix]
    whole = parse_piece(
        registry.by_format(suffix),
        Piece(data, 1, last=True),
        member=suffix,
        clock=ClockHints(),
    )
    assert not [w for w in whole.warnings if w.code == "truncated"], "the whole capture is not said cut"
    cut = _cut_in_last_block(data, keep)
    source = parse_piece(
        registry.by_format(suffix), Piece(cut, 1, last=True), member=suffix, clock=ClockHints()
    )
    assert [w.code for w in source.warnings if w.code == "truncated"] == ["truncated"], source.warnings


@pytest.mark.parametrize(
    ("suffix", "cut_after"),
    [("iostat", "Device"), ("mpstat", "%usr"), ("mpstat", "Average:     CPU"), ("ps", "PID")],
)
def test_a_block_begun_and_not_written_is_said(suffix: str, cut_after: str) -> None:
    text = MEMBERS[suffix].decode()
    if cut_after == "%usr":
        text = text[: text.index("\nAverage:")]
    at = text.rfind(cut_after)
    cut = text[: text.index("\n", at) + 1].encode()
    source = parse_piece(
        registry.by_format(suffix), Piece(cut, 1, last=True), member=suffix, clock=ClockHints()
    )
    assert [w.code for w in source.warnings if w.code == "truncated"] == ["truncated"], source.warnings


def test_mpstat_cut_between_two_cpu_rows_is_said() -> None:
    text = MEMBERS["mpstat"].decode()
    body = text[: text.index("\nAverage:")]  # the per-second blocks, without the averages
    cut = body[: body.rstrip("\n").rfind("\n") + 1].encode()  # the last CPU row of the last block gone
    source = parse_piece(
        registry.detect(cut.decode().splitlines()[:50]),
        Piece(cut, 1, last=True),
        member="m",
        clock=ClockHints(),
    )
    assert [w.code for w in source.warnings if w.code == "truncated"] == ["truncated"], source.warnings


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.integers(1, 600), min_size=3, max_size=200),
    jump_at=st.floats(0, 1),
    jump_days=st.integers(0, 60),
)
def test_a_jump_keeps_one_stretch_and_regular_gaps_keep_all(
    steps: list[int], jump_at: float, jump_days: int
) -> None:
    """Whatever the intervals (1 s to 10 min, varying), a member without a jump keeps every row; with
    one of weeks, what is kept is one stretch without a jump, and the window shrinks to it."""
    seconds = np.cumsum([0, *steps]).astype("int64")
    at = int(jump_at * len(seconds))
    seconds[at:] += jump_days * 86400
    ts = seconds * 1_000_000_000
    result = damage.jumped_rows(ts)
    if jump_days == 0:
        assert result is None, "gaps of at most 10 minutes, all in one day, are never a jump"
        return
    if result is None:
        return
    outside, message = result
    kept = seconds[~outside]
    limit = max(damage.JUMP_FACTOR * np.median(np.diff(seconds)), damage.JUMP_MIN.total_seconds())
    assert "jump" in message and outside.any() and len(kept)
    assert np.diff(kept).max(initial=0) <= limit, "the stretch kept holds no jump"
    assert np.all(np.diff(np.flatnonzero(~outside)) == 1), "the rows kept are one run"
    assert len(kept) >= max(at, len(seconds) - at) or len(kept) >= len(seconds) / 2


def test_a_warning_of_a_later_piece_names_the_member_line_in_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cutting, "WHOLE_MAX_BYTES", 4096)
    monkeypatch.setattr(cutting, "LINE_PIECE_BYTES", 2048)
    rows = _vmstat(("2026-01-05 10:00:00", 200, 1)).decode().splitlines(keepends=True)
    rows[150:150] = rows[140:145]  # five rows written again, in the fourth piece or so
    bundle = read_bundle(
        tarball(tmp_path / "b.tar.gz", {"c/2026_01_05_10_00_00-vmstat": "".join(rows).encode()})
    )
    (source,) = bundle.sources
    (repeated,) = [w for w in source.warnings if w.code == "repeated-times"]
    assert repeated.line_no == 151 and "from line 151 " in repeated.message, repeated
    assert source.samples == 200


@pytest.mark.parametrize("suffix", ["meminfo", "mysqladmin", "interrupts"])
def test_a_damaged_row_in_the_last_block_is_not_said_a_cut(suffix: str) -> None:
    """A row of the last block made garbage (NUL bytes and a cut line) loses that row: the bad line is
    said, and the block, whole to its end, is not said cut."""
    text = MEMBERS[suffix].decode()
    end = text.rstrip("\n").rfind("\n", 0, len(text) - 200)
    damaged = (text[: end + 1] + "\x00\x00garbage\n" + text[text.index("\n", end + 1) + 1 :]).encode()
    source = parse_piece(
        registry.by_format(suffix), Piece(damaged, 1, last=True), member=suffix, clock=ClockHints()
    )
    assert not [w for w in source.warnings if w.code == "truncated"], source.warnings


def test_a_ps_capture_of_snapshots_cut_in_its_last_one_is_said() -> None:
    """Three snapshots of the example's ps after pt-stalk ``TS`` markers; the last cut at a line end
    halfway through its processes (fewer than 60 % of the fewest before it)."""
    snapshot = MEMBERS["ps"].decode()
    markers = [f"TS 1763814{643 + i}.000000000 2026-11-22 12:30:{43 + i}\n" for i in range(3)]
    whole = "".join(m + snapshot for m in markers)
    rows = snapshot.splitlines(keepends=True)
    cut = "".join(m + snapshot for m in markers[:2]) + markers[2] + "".join(rows[: len(rows) // 2])
    module = registry.by_format("ps")
    kept = parse_piece(module, Piece(whole.encode(), 1, last=True), member="ps", clock=ClockHints())
    assert not [w for w in kept.warnings if w.code == "truncated"] and kept.samples == 3
    source = parse_piece(module, Piece(cut.encode(), 1, last=True), member="ps", clock=ClockHints())
    assert [w.code for w in source.warnings if w.code == "truncated"] == ["truncated"], source.warnings
    assert source.samples == 3


def test_an_iostat_cut_after_its_cpu_report_before_its_devices_is_said() -> None:
    """sysstat 12.6.1 ``iostat -x -t`` (tests/fixtures/iostat): its last sample cut after the
    ``avg-cpu`` values, before the device table."""
    text = (FIXTURES / "iostat" / "iostat-12.6.1_xt.txt").read_text()
    at = text.index("\n", text.index("\n", text.rfind("avg-cpu")) + 1) + 1
    module = registry.by_format("iostat")
    whole = parse_piece(module, Piece(text.encode(), 1, last=True), member="iostat", clock=ClockHints())
    assert not [w for w in whole.warnings if w.code == "truncated"], whole.warnings
    cut = parse_piece(module, Piece(text[:at].encode(), 1, last=True), member="iostat", clock=ClockHints())
    assert [(w.code, w.line_no) for w in cut.warnings if w.code == "truncated"] == [("truncated", 13)], (
        cut.warnings
    )
