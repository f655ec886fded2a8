"""analyzer/waits/counters.py: the catalogue agrees with what the mysqladmin parser computes."""

from __future__ import annotations

from analyzer.timeline.timeline import STATUS_KEPT
from analyzer.waits.counters import COUNTERS, FAMILIES, GAUGE, counter, of_resource
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
    for name in ("wsrep_local_cert_failures", "wsrep_local_bf_aborts", "Innodb_deadlocks", "lock_deadlocks",
                 "Rpl_semi_sync_master_no_tx", "Connection_errors_max_connections", "Aborted_clients"):  # fmt: skip
        assert counter(name) is not None, name


def test_the_counters_of_a_resource() -> None:
    assert {c.name for c in of_resource(Resource.GALERA_CERTIFICATION)} >= {
        "wsrep_local_cert_failures", "wsrep_local_bf_aborts"
    }  # fmt: skip
    # the rule quotes the ones the timeline keeps
    assert "Innodb_row_lock_current_waits" in {c.name for c in of_resource(Resource.ROW_LOCK)} & STATUS_KEPT
