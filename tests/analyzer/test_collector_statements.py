"""The collectors' own statements (pt-stalk, MySQL Shell, scripts/collect.sh, mysqladmin) are never
load and never the statement behind a finding: in the timeline they have no fingerprint and are not
active, whatever their State, so no rule that names statements can name them."""

from __future__ import annotations

import pytest

from analyzer.timeline.timeline import collector_statements, is_collector_statement
from tests.analyzer.captures import processlist_text, timeline

COLLECTORS = [
    "SELECT trx_id, trx_state, trx_started, trx_mysql_thread_id FROM INFORMATION_SCHEMA.INNODB_TRX",
    "select * from information_schema.innodb_lock_waits",
    "SELECT THREAD_ID, THREAD_OS_ID, PROCESSLIST_ID FROM performance_schema.threads",
    "select * from sys.innodb_lock_waits",
    "SHOW ENGINE INNODB STATUS",
    "show /*!50002 GLOBAL */ status",
    "SHOW FULL PROCESSLIST",
    "SHOW SLAVE STATUS",
]


@pytest.mark.parametrize("statement", COLLECTORS)
def test_a_collectors_statement_is_recognised(statement: str) -> None:
    assert is_collector_statement(statement)


def test_an_application_statement_is_not() -> None:
    assert not is_collector_statement("select count(*) from shop.items where pad like '%y%'")
    assert not is_collector_statement("update shop.orders set note = 'show this' where id = 1")


@pytest.mark.parametrize("extra", ["", "select 'é'", "\u017fhow status"])  # ASCII or not; long s folds to s
def test_many_texts_at_once_are_tested_as_each_text(extra: str) -> None:
    texts = [*COLLECTORS, "select 1 from systems", "/* x */ SHOW STATUS", " sys", "", "SELECT 2", extra]
    assert collector_statements(texts).tolist() == [is_collector_statement(text) for text in texts]


def test_collector_sessions_have_no_fingerprint_and_are_not_active() -> None:
    scanning = ("app", "Query", 3, "Sending data", "select count(*) from shop.items where pad like '%y%'")
    snapshot = [("root", "Query", 0, "Filling schema table", s) for s in COLLECTORS] + [scanning]
    pl = timeline(pl=processlist_text([snapshot] * 3)).frame("processlist")
    active = pl[pl["active"].astype(bool)]
    assert set(active["fingerprint"].astype("string")) == {"select count(*) from shop.items where pad like ?"}
    assert (
        pl["fingerprint"].astype("string").str.contains("information_schema|performance_schema|show ").sum()
        == 0
    )
