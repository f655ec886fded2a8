"""analyzer/rules/waits.py: ``sessions-waiting`` on real bundles and on pt-stalk-shaped processlists."""

from __future__ import annotations

import pytest

from analyzer import engine
from analyzer.findings import Severity
from analyzer.timeline.timeline import Timeline
from tests.analyzer.captures import processlist_text, timeline
from tests.analyzer.waits.bundles import BUNDLES, timelines

KEY = "sessions-waiting"
MDL = "Waiting for table metadata lock"


def _run(tl: Timeline) -> engine.Outcome:
    return engine.run(tl, only=(KEY,))


def _snapshots(waiting: int, *, state: str = MDL, n: int = 6) -> str:
    """``n`` one-second snapshots of ``waiting`` sessions in ``state`` beside 2 busy ones."""
    busy = [("app", "Query", 1, "Sending data", "SELECT * FROM shop.items")] * 2
    wait = [("app", "Query", 3, state, "SELECT * FROM shop.orders")] * waiting
    return processlist_text([busy + wait] * n)


def test_it_names_the_row_lock_waiters_and_their_table_on_a_real_bundle() -> None:
    out = _run(timelines(BUNDLES / "culprit-rowlock.tar.gz")["vm"])
    [f] = out.findings
    # the holder is shown (transaction 29 of session 5 blocks all 20 for 15 s): named, no longer info
    assert f.title == "20 sessions wait for row lock on `shop`.`orders`, held by session 5 (app@localhost)"
    assert f.severity is Severity.CRITICAL and f.culprit.id == "5" and "KILL 5;" in f.recommendation
    assert "'Updating' 200" in f.explanation
    labels = {e.label: e.value for e in f.evidence}
    assert labels["sessions waiting for row lock (max)"] == 20
    assert any(label.startswith("Innodb_row_lock_current_waits") for label in labels)
    assert len(f.subjects) == 20 and all(kind == "session" for kind, _ in f.subjects)


def test_it_reads_every_resource_alike() -> None:
    galera = _run(timelines(BUNDLES / "cluster-galera.tar.gz")["db-a"]).findings[0]
    backup = _run(timelines(BUNDLES / "culprit-ftwrl.tar.gz")["vm"]).findings[0]
    assert galera.title == "4 sessions wait for Galera certification"
    assert (
        backup.title == "6 sessions wait for global read or backup lock, held by session 220 (app@localhost)"
    )


@pytest.mark.parametrize(("waiting", "fires"), [(0, False), (2, False), (3, True), (12, True)])
def test_three_sessions_waiting_for_five_seconds_is_the_bar(waiting: int, fires: bool) -> None:
    out = _run(timeline(pl=_snapshots(waiting)))
    assert [f.title for f in out.findings] == (
        [f"{waiting} sessions wait for metadata lock"] if fires else []
    )


def test_a_wait_shorter_than_five_seconds_does_not_fire() -> None:
    busy = [("app", "Query", 1, "Sending data", "SELECT * FROM shop.items")] * 2
    wait = [("app", "Query", 3, MDL, "SELECT * FROM shop.orders")] * 5
    text = processlist_text([busy + wait] * 4 + [busy] * 6)  # 4 s of waits in a 10 s capture
    assert _run(timeline(pl=text)).findings == []


def test_an_idle_healthy_capture_does_not_fire() -> None:
    assert _run(timelines(BUNDLES / "ptstalk-mariadb-tmptables.tar.gz")["vm"]).findings == []


def test_a_state_no_entry_knows_is_reported_not_dropped() -> None:
    out = _run(timeline(pl=_snapshots(1, state="Pondering the orb")))
    [f] = out.findings
    assert f.title == "1 session state(s) the wait model does not know"
    assert "'Pondering the orb' (6)" in f.explanation


def test_unknown_states_beside_a_wait_are_listed_in_it() -> None:
    text = processlist_text(
        [[("app", "Query", 3, MDL, "SELECT 1")] * 3 + [("app", "Query", 1, "Pondering", "SELECT 2")]] * 6
    )
    [f] = _run(timeline(pl=text)).findings
    assert f.title.startswith("3 sessions wait for metadata lock") and "'Pondering' (6)" in f.explanation


def test_without_sessions_or_transactions_it_is_not_evaluated() -> None:
    out = _run(Timeline())
    assert [n.key for n in out.not_evaluated] == [KEY]
