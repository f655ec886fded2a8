"""parsers.top: pt-stalk -top (top -bn N)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from parsers import top
from parsers.base import Clock, ClockHints, ParseError

EX2 = "My-gather/pt-stalk/example2/2026_04_21_16_51_41-top"
JC = "jc/top/centos-7.7/top-b-n3.out"
FIX = "top/procps-4.0.2_top-bn3-d1-p1.txt"
FIX_H = "top/procps-4.0.2_top-H-bn2-d1-p1.txt"
START = ClockHints(start_local=pd.Timestamp("2026-04-21 16:51:41"), interval_s=1.0)


def _parse(lines, clock: ClockHints = START):
    return top.parse(lines, member="top", clock=clock)


@pytest.mark.samples
def test_example2_twenty_iterations(samples: Path) -> None:
    src = _parse((samples / EX2).open())
    assert (len(src.main), src.samples) == (20, 20)
    assert src.clock is Clock.HEADER_TIME and src.ts_is_local and src.warnings == []


@pytest.mark.samples
def test_example2_window_from_header_times(samples: Path) -> None:
    src = _parse((samples / EX2).open())
    assert (str(src.start), str(src.end)) == ("2026-04-21 16:51:42+00:00", "2026-04-21 16:52:39+00:00")
    assert src.main["line_no"].iloc[-1] == 500


@pytest.mark.samples
def test_example2_first_loads_and_tasks(samples: Path) -> None:
    row = _parse((samples / EX2).open()).main.iloc[0]
    assert (row.load1, row.load5, row.load15) == (11.65, 8.59, 6.32)
    assert (row.tasks, row.running, row.sleeping) == (17, 1, 16)


@pytest.mark.samples
def test_jc_centos_sample(samples: Path) -> None:
    df = _parse((samples / JC).open()).main
    assert df["line_no"].tolist() == [1, 121, 241]
    assert df["running"].tolist() == [1, 1, 2]
    assert df["load1"].tolist() == [0.23, 0.23, 0.21]


def test_fixture_three_iterations_one_second_apart(fixtures: Path) -> None:
    df = _parse((fixtures / FIX).open(), ClockHints(start_local=pd.Timestamp("2026-11-22 12:27:40"))).main
    assert [str(t) for t in df["ts"]] == [
        "2026-11-22 12:27:40+00:00",
        "2026-11-22 12:27:41+00:00",
        "2026-11-22 12:27:42+00:00",
    ]
    assert df["load1"].tolist() == [17.21, 21.68, 21.68]


def test_threads_mode_counts_threads(fixtures: Path) -> None:
    src = _parse((fixtures / FIX_H).open())
    assert src.meta["unit"] == "threads" and src.main["tasks"].tolist() == [14, 14]


def test_midnight_roll_over_adds_a_day() -> None:
    lines = [
        "top - 23:59:58 up 2 min,  2 users,  load average: 0.23, 0.22, 0.09",
        "top - 00:00:01 up 2 min,  2 users,  load average: 0.23, 0.22, 0.09",
    ]
    df = _parse(lines, ClockHints(start_local=pd.Timestamp("2026-04-21 23:59:57"))).main
    assert [str(t) for t in df["ts"]] == ["2026-04-21 23:59:58+00:00", "2026-04-22 00:00:01+00:00"]


def test_first_header_after_midnight_goes_to_the_next_day() -> None:
    lines = ["top - 00:00:01 up 2 min,  2 users,  load average: 0.23, 0.22, 0.09"]
    df = _parse(lines, ClockHints(start_local=pd.Timestamp("2026-04-21 23:59:59"))).main
    assert str(df["ts"].iloc[0]) == "2026-04-22 00:00:01+00:00"


def test_decimal_comma_load_average() -> None:
    lines = ["top - 11:24:50 up 2 min,  1 user,  load average: 0,23, 0,22, 0,09"]
    assert _parse(lines).main[["load1", "load5", "load15"]].iloc[0].tolist() == [0.23, 0.22, 0.09]


def test_unreadable_header_warns_with_its_line() -> None:
    lines = [
        "top - 11:24:50 up 2 min,  1 user,  load average: 0.23, 0.22, 0.09",
        "Tasks: 112 total,   1 running, 111 sleeping,   0 stopped,   0 zombie",
        "top - garbled",
    ]
    src = _parse(lines)
    assert [(w.line_no, w.code) for w in src.warnings] == [(3, "odd-line")]


def test_no_start_time_warns() -> None:
    src = _parse(["top - 11:24:50 up 2 min,  1 user,  load average: 0.23, 0.22, 0.09"], ClockHints())
    assert [w.code for w in src.warnings] == ["no-start-time"]


def test_wrong_format_raises_at_first_line() -> None:
    with pytest.raises(ParseError) as exc:
        _parse(["  PID TTY          TIME CMD", "    1 ?        00:00:02 init"])
    assert exc.value.line_no == 1


def test_empty_input_gives_empty_frame() -> None:
    assert len(_parse([]).main) == 0


def test_sniff_accepts_fixture(fixtures: Path) -> None:
    assert top.sniff((fixtures / FIX).read_text().splitlines()[:60])


@pytest.mark.samples
def test_sniff_refuses_ps_eaf(samples: Path) -> None:
    head = (samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-ps").read_text().splitlines()[:60]
    assert not top.sniff(head)


def test_variant_names_threads_mode_and_memory_unit(fixtures: Path) -> None:
    src = _parse((fixtures / FIX_H).read_text().splitlines())
    assert src.meta["variant"] == "top -b -H, MiB Mem"


def test_the_busiest_processes_of_each_iteration_are_kept() -> None:
    """pt-stalk 3.2.1's -top of the diskhog capture (tests/fixtures/bundles/culprit-diskhog.tar.gz):
    fio's fsync writers in state D among the processes that took the CPUs."""
    import tarfile

    bundle = Path(__file__).resolve().parent.parent / "fixtures" / "bundles" / "culprit-diskhog.tar.gz"
    with tarfile.open(bundle) as tar:
        text = tar.extractfile("diskhog/2026_11_27_19_26_55-top").read().decode()  # type: ignore[union-attr]
    src = _parse(text.splitlines(keepends=True), ClockHints(start_local=pd.Timestamp("2026-11-27 19:26:55")))
    procs = src.frames["top_procs"]
    iterations = len(src.main)
    assert len(procs) == top.TOP_PROCS_KEPT * iterations  # ten rows under each header
    assert procs.groupby("ts").size().max() == top.TOP_PROCS_KEPT
    first = procs.iloc[0]
    assert (first["line_no"], first["command"], first["state"]) == (8, "pytest", "R")
    fio = procs[procs["command"] == "fio"]
    assert set(fio["state"]) >= {"D"} and fio["pid"].nunique() == 4
    assert (procs.groupby("ts")["pcpu"].apply(lambda s: s.is_monotonic_decreasing)).all()  # top sorts by %CPU
