"""parsers.ptstalk_output: pt-stalk -output (its log: Loop start / Loop end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers import ptstalk_output
from parsers.base import Clock, ClockHints, ParseError

EX2 = "My-gather/pt-stalk/example2/2026_04_21_16_51_41-output"
FIX = "pt-stalk-output/pt-stalk-3.2.1_mariadb-10.11_output.txt"


def _parse(lines):
    return ptstalk_output.parse(lines, member="output", clock=ClockHints())


@pytest.mark.samples
def test_example2_loop_times(samples: Path) -> None:
    meta = _parse((samples / EX2).open()).meta
    assert (meta["loop_starts"], meta["loop_ends"]) == (["2026-04-21T16:51:42"], ["2026-04-21T16:52:12"])


@pytest.mark.samples
def test_example2_utc_start_and_offset(samples: Path) -> None:
    src = _parse((samples / EX2).open())
    assert src.meta["loop_starts_utc"] == ["2026-04-21T16:51:42.611835653"]
    assert src.meta["utc_offset_s"] == 0 and src.clock is Clock.TS_MARKER


def test_fixture_from_pt_stalk_3_2_1(fixtures: Path) -> None:
    src = _parse((fixtures / FIX).open())
    assert src.meta["loop_starts"] == ["2026-11-22T12:27:28"] and src.meta["loop_ends"] == [
        "2026-11-22T12:27:31"
    ]
    assert len(src.main) == 0 and src.warnings == []


def test_loop_start_without_ts_part_uses_the_log_prefix() -> None:
    src = _parse(["2026_04_21_16_51_42 Loop start"])
    assert src.meta["loop_starts"] == ["2026-04-21T16:51:42"] and "utc_offset_s" not in src.meta
    assert src.clock is Clock.INFERRED


def test_offset_from_a_non_utc_server() -> None:
    src = _parse(["2026_04_21_18_51_42 Loop start: TS 1776790302.611835653 2026-04-21 18:51:42"])
    assert src.meta["utc_offset_s"] == 7200


def test_unreadable_ts_part_warns_with_its_line() -> None:
    src = _parse(["x", "2026_04_21_16_51_42 Loop start: TS garbage"])
    assert [(w.line_no, w.code) for w in src.warnings] == [(2, "odd-line")]
    assert src.meta["loop_starts"] == ["2026-04-21T16:51:42"]


def test_wrong_format_raises() -> None:
    with pytest.raises(ParseError) as exc:
        _parse(["MemTotal:       394329280 kB"])
    assert exc.value.line_no == 1


def test_empty_input_gives_empty_meta() -> None:
    assert _parse([]).meta["loop_starts"] == []


def test_sniff_accepts_fixture(fixtures: Path) -> None:
    assert ptstalk_output.sniff((fixtures / FIX).read_text().splitlines()[:60])


@pytest.mark.samples
def test_sniff_refuses_trigger_log(samples: Path) -> None:
    head = (samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-trigger").read_text().splitlines()
    assert not ptstalk_output.sniff(head)


def test_variant_counts_loops_and_ts_parts(fixtures: Path) -> None:
    src = _parse((fixtures / FIX).read_text().splitlines())
    assert src.meta["variant"].startswith("pt-stalk -output, 1 loop, Loop lines with TS epochs; ")
    assert "collector error line(s), first: line " in src.meta["variant"]
