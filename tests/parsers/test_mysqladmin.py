"""parsers.mysqladmin: pt-stalk -mysqladmin (mysqladmin ext -i, absolute and -r relative)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from parsers import mysqladmin
from parsers.base import Clock, ClockHints, ParseError

START = ClockHints(start_local=pd.Timestamp("2026-11-22 12:27:27"), interval_s=1.0)
ABS = "mysqladmin/mariadb-10.11_ext-i1-c3_subset.txt"
REL = "mysqladmin/mariadb-10.11_ext-r-i1-c3_subset.txt"
MARKED = "mysqladmin/mariadb-10.11_ts-markers_ext_subset.txt"


def _parse(path: Path, clock: ClockHints = START):
    with path.open() as fh:
        return mysqladmin.parse(fh, member=path.name, clock=clock)


def _series(src, name: str, col: str) -> list[float]:
    return src.main.loc[src.main["variable"] == name, col].tolist()


def _head(path: Path) -> list[str]:
    return [line.rstrip("\n") for line in path.read_text().splitlines()[:60]]


# --- real samples (percona-toolkit t/pt-mext) -------------------------------------------------


@pytest.mark.samples
def test_mext_001_is_read_as_relative_with_four_tables(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/mext-001.txt", ClockHints())
    assert (src.meta["mode"], src.meta["tables"], len(src.main), src.samples) == ("relative", 4, 980, 4)


@pytest.mark.samples
def test_mext_001_interval_comes_from_uptime_steps(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/mext-001.txt", ClockHints())
    # relative Uptime values 3, 4, 3 after the first table
    assert src.meta["interval_s"] == 3.0
    assert [str(t) for t in src.main["ts"].unique()][-1] == "1970-01-01 00:00:09+00:00"


@pytest.mark.samples
def test_mext_001_without_start_time_warns_and_counts_from_epoch(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/mext-001.txt", ClockHints())
    assert [w.code for w in src.warnings] == ["no-start-time"]
    assert src.clock is Clock.INFERRED and src.ts_is_local


@pytest.mark.samples
def test_mext_001_threads_running_is_a_gauge_with_nan_rate(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/mext-001.txt", ClockHints())
    assert _series(src, "Threads_running", "value") == [2.0, 2.0, 2.0, 2.0]
    assert all(math.isnan(v) for v in _series(src, "Threads_running", "per_s"))


@pytest.mark.samples
def test_mext_001_created_tmp_disk_tables_rate(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/mext-001.txt", ClockHints())
    assert _series(src, "Created_tmp_disk_tables", "value") == [350.0, 350.0, 350.0, 350.0]
    assert _series(src, "Created_tmp_disk_tables", "per_s")[1:] == [0.0, 0.0, 0.0]
    assert _series(src, "Created_tmp_disk_tables", "line_no") == [115, 372, 629, 886]


@pytest.mark.samples
def test_mext_001_relative_deltas_are_summed_back_to_absolute_values(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/mext-001.txt", ClockHints())
    assert _series(src, "Questions", "value") == [71191.0, 71192.0, 71193.0, 71194.0]
    assert _series(src, "Bytes_sent", "per_s")[1] == 2160.0  # 6480 bytes over 3 s


@pytest.mark.samples
def test_mext_001_layout_interval_that_disagrees_with_uptime_warns(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/mext-001.txt", START)
    assert "interval-mismatch" in [w.code for w in src.warnings]


@pytest.mark.samples
def test_pt_130_absolute_thirty_tables(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/pt-130-in.txt")
    assert (src.meta["mode"], src.samples, len(src.main)) == ("absolute", 30, 10290)
    assert (str(src.start), str(src.end)) == ("2026-11-22 12:27:27+00:00", "2026-11-22 12:27:56+00:00")


@pytest.mark.samples
def test_pt_130_counter_rates(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/pt-130-in.txt")
    assert _series(src, "Bytes_sent", "per_s")[1:3] == [26454.0, 19728.0]
    assert set(_series(src, "Uptime", "per_s")[1:]) == {1.0}


@pytest.mark.samples
def test_pt_130_string_variables_are_skipped_silently(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-mext/pt-130-in.txt")
    names = set(src.main["variable"].astype(str))
    assert not names & {"Ssl_cipher", "Max_used_connections_time", "Innodb_buffer_pool_load_status"}
    assert src.warnings == []


# --- own fixtures (MariaDB 10.11) --------------------------------------------------------------


def test_absolute_fixture_rates(fixtures: Path) -> None:
    src = _parse(fixtures / ABS)
    assert src.meta["mode"] == "absolute"
    assert _series(src, "Created_tmp_disk_tables", "per_s")[1:] == [73.0, 95.0]
    assert _series(src, "Threads_running", "value") == [61.0, 47.0, 65.0]


def test_absolute_fixture_times_are_inferred_from_start(fixtures: Path) -> None:
    src = _parse(fixtures / ABS)
    assert src.clock is Clock.INFERRED and src.ts_is_local
    assert [str(t) for t in src.main["ts"].unique()] == [
        "2026-11-22 12:27:27+00:00",
        "2026-11-22 12:27:28+00:00",
        "2026-11-22 12:27:29+00:00",
    ]


def test_relative_fixture_is_detected(fixtures: Path) -> None:
    assert _parse(fixtures / REL).meta["mode"] == "relative"


def test_relative_fixture_values_are_absolute(fixtures: Path) -> None:
    src = _parse(fixtures / REL)
    assert _series(src, "Created_tmp_disk_tables", "value") == [2750.0, 2840.0, 2921.0]
    assert _series(src, "Created_tmp_disk_tables", "per_s")[1:] == [90.0, 81.0]


def test_relative_fixture_gauge_is_rebuilt_from_its_differences(fixtures: Path) -> None:
    src = _parse(fixtures / REL)
    # mysqladmin -r printed 64, then +1, then 0
    assert _series(src, "Threads_running", "value") == [64.0, 65.0, 65.0]


def test_known_string_variables_are_dropped_even_when_printed_as_zero(fixtures: Path) -> None:
    src = _parse(fixtures / REL)
    names = set(src.main["variable"].astype(str))
    assert len(names) == 10 and not names & {"Compression", "Ssl_cipher", "Max_memory_used"}


def test_ts_markers_give_marker_clock_in_utc(fixtures: Path) -> None:
    src = _parse(fixtures / MARKED)
    assert src.clock is Clock.TS_MARKER and not src.ts_is_local
    assert str(src.start) == "2026-11-22 12:27:51.842680349+00:00"
    assert src.samples == 3


def test_ts_marker_rates_use_the_marker_spacing(fixtures: Path) -> None:
    src = _parse(fixtures / MARKED)
    # 103 more tmp disk tables over 1.036425145 s between the first two markers
    assert _series(src, "Created_tmp_disk_tables", "per_s")[1] == pytest.approx(103 / 1.036425145)


# --- oddities and errors -----------------------------------------------------------------------

TABLE = [
    "+-----------------+-------+",
    "| Variable_name   | Value |",
    "+-----------------+-------+",
    "| Questions       | 100   |",
    "| Uptime          | 10    |",
    "| Foo_status      | WEIRD |",
    "+-----------------+-------+",
]


def test_unknown_text_value_warns_once_with_its_line() -> None:
    src = mysqladmin.parse(TABLE + TABLE, member="m", clock=START)
    assert [(w.line_no, w.code) for w in src.warnings] == [(6, "non-numeric-value")]
    assert "Foo_status" not in set(src.main["variable"].astype(str))


def test_counter_going_down_warns_at_the_table_and_gives_nan() -> None:
    second = [line.replace("| 100   |", "| 40    |").replace("| 10    |", "| 11    |") for line in TABLE[:6]]
    src = mysqladmin.parse(TABLE[:5] + second[:5], member="m", clock=START)
    assert [(w.line_no, w.code) for w in src.warnings] == [(7, "counter-decrease")]
    assert math.isnan(_series(src, "Questions", "per_s")[1])


def test_text_between_tables_is_an_odd_line_warning() -> None:
    lines = TABLE[:5] + ["mysqladmin: connection lost"] + TABLE[:5]
    src = mysqladmin.parse(lines, member="m", clock=START)
    assert [(w.line_no, w.code) for w in src.warnings] == [(6, "odd-line")]
    assert src.samples == 2


def test_wrong_format_raises_with_line_number() -> None:
    with pytest.raises(ParseError) as exc:
        mysqladmin.parse(
            ["", "procs -----------memory----------", "| Questions | 1 |"], member="m", clock=START
        )
    assert exc.value.line_no == 2


def test_row_before_any_header_raises_at_that_row() -> None:
    with pytest.raises(ParseError) as exc:
        mysqladmin.parse(["+---+", "| Questions | 1 |"], member="m", clock=START)
    assert exc.value.line_no == 2


def test_empty_input_gives_empty_frame() -> None:
    src = mysqladmin.parse([], member="m", clock=START)
    assert (
        len(src.main) == 0
        and src.warnings == []
        and list(src.main.columns)
        == [
            "ts",
            "line_no",
            "variable",
            "value",
            "per_s",
        ]
    )


# --- sniffing ----------------------------------------------------------------------------------


def test_sniff_accepts_own_fixture(fixtures: Path) -> None:
    assert mysqladmin.sniff(_head(fixtures / MARKED))


def test_sniff_refuses_show_variables_table(fixtures: Path) -> None:
    assert not mysqladmin.sniff(_head(fixtures / "variables/mariadb-10.11_mysql-t_two-snapshots.txt"))


@pytest.mark.samples
def test_sniff_refuses_processlist_table(samples: Path) -> None:
    assert not mysqladmin.sniff(_head(samples / "percona-toolkit/processlist/recset001.txt"))


def test_variant_names_the_mode(fixtures: Path) -> None:
    assert _parse(fixtures / REL).meta["variant"] == "mysqladmin ext -r relative"
