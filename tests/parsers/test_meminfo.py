"""parsers.meminfo: pt-stalk -meminfo (/proc/meminfo after TS markers)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from parsers import meminfo
from parsers.base import Clock, ClockHints, ParseError

EX2 = "My-gather/pt-stalk/example2/2026_04_21_16_51_41-meminfo"
FIX = "meminfo/pt-stalk-3.2.1_meminfo.txt"


NO_HINTS = ClockHints()


def _parse(lines, clock: ClockHints = NO_HINTS):
    return meminfo.parse(lines, member="meminfo", clock=clock)


def _kib(src, field: str) -> list[float]:
    return src.main.loc[src.main["field"] == field, "kib"].tolist()


@pytest.mark.samples
def test_example2_thirty_snapshots_of_57_fields(samples: Path) -> None:
    src = _parse((samples / EX2).open())
    assert (len(src.main), src.samples, src.main["field"].nunique()) == (1710, 30, 57)
    assert src.clock is Clock.TS_MARKER and src.warnings == []


@pytest.mark.samples
def test_example2_window_from_markers(samples: Path) -> None:
    src = _parse((samples / EX2).open())
    assert str(src.start) == "2026-04-21 16:51:43.009325313+00:00"
    assert str(src.end) == "2026-04-21 16:52:12.009088559+00:00"


@pytest.mark.samples
def test_example2_values_in_kib_and_hugepage_counts(samples: Path) -> None:
    src = _parse((samples / EX2).open())
    first, last = src.main.iloc[0], src.main.iloc[-1]
    assert (first.line_no, first.field, first.kib) == (2, "MemTotal", 394329280.0)
    assert (last.line_no, last.field, last.kib) == (1740, "DirectMap1G", 330301440.0)
    assert _kib(src, "HugePages_Total")[0] == 0.0 and _kib(src, "Hugepagesize")[0] == 2048.0


def test_fixture_three_snapshots(fixtures: Path) -> None:
    src = _parse((fixtures / FIX).open())
    assert (len(src.main), src.samples) == (162, 3)
    assert _kib(src, "MemTotal") == [24683656.0] * 3
    assert str(src.start) == "2026-11-22 12:27:29.005288799+00:00"


def test_without_markers_snapshots_split_at_memtotal(fixtures: Path) -> None:
    lines = [ln for ln in (fixtures / FIX).read_text().splitlines() if not ln.startswith("TS")]
    src = _parse(lines, ClockHints(start_local=pd.Timestamp("2026-11-22 12:27:27"), interval_s=1.0))
    assert src.clock is Clock.INFERRED and src.ts_is_local
    assert [str(t) for t in src.main["ts"].unique()] == [
        "2026-11-22 12:27:27+00:00",
        "2026-11-22 12:27:28+00:00",
        "2026-11-22 12:27:29+00:00",
    ]
    assert src.main["line_no"].iloc[-1] == 162


def test_odd_line_warns_and_keeps_line_numbers(fixtures: Path) -> None:
    lines = (fixtures / FIX).read_text().splitlines()
    lines.insert(3, "cat: write error")
    src = _parse(lines)
    assert [(w.line_no, w.code) for w in src.warnings] == [(4, "odd-line")]
    assert src.main.loc[src.main["field"] == "Buffers", "line_no"].iloc[0] == 6
    assert len(src.main) == 162


def test_no_start_time_without_markers_warns() -> None:
    src = _parse(["MemTotal:       394329280 kB", "MemFree:        104521596 kB"])
    assert [w.code for w in src.warnings] == ["no-start-time"]
    assert str(src.start) == "1970-01-01 00:00:00+00:00"


def test_wrong_format_raises_at_first_foreign_line() -> None:
    with pytest.raises(ParseError) as exc:
        _parse(["TS 1776790303.009325313 2026-04-21 16:51:43", "nr_free_pages 25920574"])
    assert exc.value.line_no == 2


def test_empty_input_gives_empty_frame() -> None:
    src = _parse([])
    assert len(src.main) == 0 and src.warnings == []


def test_sniff_accepts_fixture(fixtures: Path) -> None:
    assert meminfo.sniff((fixtures / FIX).read_text().splitlines()[:60])


def test_sniff_refuses_top(fixtures: Path) -> None:
    assert not meminfo.sniff((fixtures / "top/procps-4.0.2_top-bn3-d1-p1.txt").read_text().splitlines()[:60])


def test_variant_names_field_count_and_memavailable(fixtures: Path) -> None:
    src = _parse((fixtures / FIX).read_text().splitlines())
    assert src.meta["variant"] == "/proc/meminfo 54 fields, MemAvailable (kernel >= 3.14)"
