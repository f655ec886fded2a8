"""analyzer/waits/counters.py: the catalogue agrees with what the mysqladmin parser computes."""

from __future__ import annotations

import pandas as pd
import pytest

from analyzer.findings import Window
from analyzer.timeline.timeline import STATUS_KEPT
from analyzer.waits.counters import COUNTERS, FAMILIES, GAUGE, counter, of_resource, rate_of
from analyzer.waits.model import Resource
from parsers._mysqladmin_rates import GAUGES
from parsers.mysqladmin import KNOWN_STRING_VARIABLES


def test_each_counter_is_listed_once_and_in_one_family() -> None:
    names = [c.name for c in COUNTERS]
    assert len(names) == len(set(names))
    assert sorted(c.name for family in FAMILIES.values() for c in family) == sorted(names)


def test_a_gauge_of_the_catalogue_is_a_gauge_for_the_parser_and_a_counter_is_not() -> None:
    # the parser computes per_s only for counters: a gauge read as a rate would be nonsense
    wrong = [c.name for c in COUNTERS if (c.unit == GAUGE) != (c.name in GAUGES | KNOWN_STRING_VARIABLES)]
    # lock_deadlocks and lock_timeouts are INNODB_METRICS counters, not status variables
    assert wrong == []


def test_the_incidents_counters_are_there() -> None:
    for name in (
        "wsrep_local_cert_failures",
        "wsrep_local_bf_aborts",
        "Innodb_deadlocks",
        "lock_deadlocks",
        "Rpl_semi_sync_master_no_tx",
        "Connection_errors_max_connections",
        "Aborted_clients",
    ):
        assert counter(name) is not None, name


def test_the_counters_of_a_resource() -> None:
    assert {c.name for c in of_resource(Resource.GALERA_CERTIFICATION)} >= {
        "wsrep_local_cert_failures",
        "wsrep_local_bf_aborts",
    }
    # the rule quotes the ones the timeline keeps
    assert "Innodb_row_lock_current_waits" in {c.name for c in of_resource(Resource.ROW_LOCK)} & STATUS_KEPT


def _rows(values: list[float], member: str = "a", start: str = "2026-01-01 00:00:00") -> pd.DataFrame:
    ts = pd.date_range(start, periods=len(values), freq="1s", tz="UTC")
    return pd.DataFrame({"ts": ts, "value": values, "member": member})


def test_a_rate_is_the_growth_over_the_seconds_its_samples_cover() -> None:
    found = rate_of("Innodb_deadlocks", _rows([0.0, 40.0, 90.0, 135.0]))
    assert found is not None and (found.growth, found.seconds, found.per_s) == (135.0, 3.0, 45.0)
    assert found.words() == "45.0 per second (135 in 3 s)"


def test_a_restart_or_flush_status_is_no_growth_and_runs_are_summed_apart() -> None:
    rows = pd.concat([_rows([10.0, 20.0, 0.0, 10.0], "a"), _rows([5.0, 15.0], "b", "2026-01-01 00:10:00")])
    found = rate_of("wsrep_local_cert_failures", rows)
    assert found is not None and (found.growth, found.seconds) == (30.0, 4.0)


def test_a_rate_over_a_window_reads_its_rows_only() -> None:
    rows = _rows([0.0, 1.0, 2.0, 100.0, 200.0])
    w = Window(rows["ts"].iloc[2], rows["ts"].iloc[4])
    found = rate_of("Innodb_deadlocks", rows, [w])
    assert found is not None and found.per_s == 99.0 and found.samples == 3


def test_no_rate_for_a_gauge_one_sample_or_an_unknown_name() -> None:
    assert rate_of("Threads_running", _rows([1.0, 5.0])) is None
    assert rate_of("Innodb_deadlocks", _rows([1.0])) is None
    with pytest.raises(ValueError):
        rate_of("Not_a_counter", _rows([1.0, 2.0]))


def test_the_families_the_issue_names_are_each_in_the_catalogue() -> None:
    names = {c.name for c in COUNTERS}
    for prefix in ("wsrep_", "Rpl_semi_sync_", "Connection_errors_", "Aborted_", "Threadpool_"):
        assert any(n.startswith(prefix) for n in names), prefix
    assert {
        "Innodb_deadlocks",
        "Innodb_row_lock_waits",
        "Created_tmp_disk_tables",
        "Select_full_join",
        "Table_locks_waited",
        "Opened_files",
    } <= names


def test_the_generated_findings_doc_lists_every_counter_and_every_state() -> None:
    from analyzer import catalogue
    from analyzer.waits.states import STATES

    text = catalogue.render()
    assert "\n## The wait model\n" in text and "\n## The counter catalogue\n" in text
    for family, found in FAMILIES.items():
        assert f"\n### {family}\n" in text
        assert all(f"| `{c.name}` | {c.unit} |" in text for c in found)
    assert all(f"| `{catalogue._cell(e.state)}` | {e.column} |" in text for e in STATES)
