"""parsers.variables: pt-stalk -variables (SHOW GLOBAL VARIABLES, tab or table form)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers import variables
from parsers.base import Clock, ClockHints, ParseError

EX1 = "My-gather/pt-stalk/example1/2026_04_21_16_43_19-variables"
PTSTALK = "variables/pt-stalk-3.2.1_mariadb-10.11_variables.txt"
TWO = "variables/mariadb-10.11_mysql-t_two-snapshots.txt"


def _parse(path: Path):
    with path.open() as fh:
        return variables.parse(fh, member=path.name, clock=ClockHints())


def _head(path: Path) -> list[str]:
    return path.read_text().splitlines()[:60]


@pytest.mark.samples
def test_percona_sample_reads_every_global_variable(samples: Path) -> None:
    src = _parse(samples / EX1)
    assert len(src.meta["variables"]) == 693 and src.meta["snapshots"] == 1


@pytest.mark.samples
def test_percona_sample_lifts_header_facts(samples: Path) -> None:
    src = _parse(samples / EX1)
    assert (src.meta["version"], src.meta["hostname"], src.meta["max_connections"]) == (
        "8.0.42-33",
        "node0",
        "151",
    )
    assert src.meta["version_comment"] == "Percona Server (GPL), Release 33, Revision 9dc49998"


@pytest.mark.samples
def test_percona_sample_keeps_empty_values_and_skips_per_thread_sections(samples: Path) -> None:
    got = _parse(samples / EX1).meta["variables"]
    assert got["admin_address"] == "" and got["basedir"] == "/usr/"
    assert "74" not in got and "THREAD_ID" not in got and "Bytes_received" not in got


@pytest.mark.samples
def test_main_frame_is_empty_with_ts_and_line_no(samples: Path) -> None:
    src = _parse(samples / EX1)
    assert len(src.main) == 0 and list(src.main.columns) == ["ts", "line_no"] and src.warnings == []


def test_pt_stalk_fixture_on_mariadb(fixtures: Path) -> None:
    src = _parse(fixtures / PTSTALK)
    assert len(src.meta["variables"]) == 656
    assert src.meta["version"] == "10.11.19-MariaDB-0+deb12u1" and src.clock is Clock.INFERRED


def test_table_form_last_snapshot_wins(fixtures: Path) -> None:
    src = _parse(fixtures / TWO)
    assert src.meta["snapshots"] == 2 and src.meta["max_connections"] == "152"


def test_table_form_values_are_trimmed_and_marker_clock_is_reported(fixtures: Path) -> None:
    src = _parse(fixtures / TWO)
    assert src.meta["variables"]["thread_handling"] == "one-thread-per-connection"
    assert src.clock is Clock.TS_MARKER


def test_odd_line_inside_a_listing_warns_with_its_line() -> None:
    lines = ["Variable_name\tValue", "autocommit\tON", "this is not a row", "basedir\t/usr/"]
    src = variables.parse(lines, member="v", clock=ClockHints())
    assert [(w.line_no, w.code) for w in src.warnings] == [(3, "odd-line")]
    assert src.meta["variables"] == {"autocommit": "ON"}


def test_wrong_format_raises_at_first_foreign_line() -> None:
    with pytest.raises(ParseError) as exc:
        variables.parse(
            ["", "TS 1776790303.009325313 2026-04-21 16:51:43", "MemTotal: 1 kB"],
            member="v",
            clock=ClockHints(),
        )
    assert exc.value.line_no == 3


def test_no_listing_at_all_raises() -> None:
    with pytest.raises(ParseError):
        variables.parse(["", "SHOW GLOBAL VARIABLES", ""], member="v", clock=ClockHints())


def test_empty_input_gives_empty_meta() -> None:
    src = variables.parse([], member="v", clock=ClockHints())
    assert src.meta["variables"] == {} and len(src.main) == 0


def test_sniff_accepts_pt_stalk_listing(fixtures: Path) -> None:
    assert variables.sniff(_head(fixtures / PTSTALK))


def test_sniff_refuses_mysqladmin_status_table(fixtures: Path) -> None:
    assert not variables.sniff(_head(fixtures / "mysqladmin/mariadb-10.11_ext-i1-c3_subset.txt"))


@pytest.mark.samples
def test_sniff_refuses_mext_sample(samples: Path) -> None:
    assert not variables.sniff(_head(samples / "percona-toolkit/pt-mext/mext-001.txt"))


def test_variant_names_layout_flavour_and_listings(fixtures: Path) -> None:
    src = _parse(fixtures / TWO)
    assert src.meta["variant"] == "SHOW GLOBAL VARIABLES table (mysql -t), MariaDB 10.11.19, 2 listings"
