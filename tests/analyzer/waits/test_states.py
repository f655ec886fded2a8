"""analyzer/waits/states.py: the table's entries, and ``meaning`` on exact, prefix, regex and command
look-ups."""

from __future__ import annotations

import pytest

from analyzer.waits.model import Resource
from analyzer.waits.states import STATES, lookup, meaning


def test_the_table_holds_the_manuals_pages_entries() -> None:
    # every page of MySQL 8.4 and MariaDB's thread states, commands and transaction states: a few hundred
    assert len(STATES) >= 250
    assert {e.column for e in STATES} == {"state", "command", "trx_state"}


def test_no_state_is_listed_twice_for_the_same_server_and_thread() -> None:
    seen: dict[tuple[str, str, str, str], str] = {}
    doubles = []
    for e in STATES:
        if e.match != "exact":
            continue
        for server in e.servers:
            key = (e.column, e.state.casefold(), e.thread, server)
            if key in seen and seen[key] != e.resource:
                doubles.append(key)
            seen[key] = e.resource
    assert doubles == []


def test_every_resource_but_cpu_and_disk_has_a_state_or_a_wait_channel() -> None:
    # CPU: no manual state says a session waits for one; DISK_SPACE, DISK_IO: read from ps and df;
    # CONNECTION_SLOT (a refused connection has no session) and PURGE: read from the counters
    named = {e.resource for e in STATES}
    assert set(Resource) - named == {
        Resource.CPU,
        Resource.DISK_SPACE,
        Resource.DISK_IO,
        Resource.CONNECTION_SLOT,
        Resource.PURGE,
    }


@pytest.mark.parametrize(
    ("state", "command", "server", "resource", "match"),
    [
        ("Waiting for table metadata lock", "Query", "mysql", Resource.METADATA_LOCK, "exact"),
        ("  waiting for TABLE metadata lock ", "Query", None, Resource.METADATA_LOCK, "exact"),
        ("Statistics", "Execute", "mariadb", Resource.NOTHING, "exact"),
        ("Waiting for backup lock", "Query", "mariadb", Resource.GLOBAL_READ_LOCK, "exact"),
        ("Waiting for semi-sync ACK from slave", "Binlog Dump", "mariadb", Resource.REPLICA_ACK, "exact"),
        ("Waiting for certification", "Execute", "mariadb", Resource.GALERA_CERTIFICATION, "exact"),
        ("waiting for handler commit", "Query", "mysql", Resource.LOG_FLUSH, "exact"),
        ("Applying batch of row changes (update)", "Connect", "mysql", Resource.NOTHING, "prefix"),
        ("alter table (merge sort)", "Daemon", "mariadb", Resource.NOTHING, "prefix"),
        ("Update_rows_log_event::find_row()", "Slave_SQL", "mariadb", Resource.NOTHING, "regex"),
        ("Waiting for tablespace metadata lock", "Query", "mysql", Resource.METADATA_LOCK, "regex"),
        (
            "Has read all relay log; waiting for the slave I/O thread to update it",
            "Connect",
            None,
            Resource.SOURCE,
            "regex",
        ),
        (
            "Waiting for the slave SQL thread to free enough relay log space.",
            "Slave_IO",
            "mariadb",
            Resource.REPLICA_APPLY,
            "regex",
        ),
    ],
)
def test_meaning_of_a_state(
    state: str, command: str, server: str | None, resource: Resource, match: str
) -> None:
    found = meaning(state, command, server)
    assert found is not None and (found.resource, found.match) == (resource, match)


def test_an_empty_state_is_read_from_the_command() -> None:
    assert meaning(None, "Sleep", "mysql").state == "Sleep"
    assert meaning("NULL", "Binlog Dump", None).thread == "client"
    assert meaning("", "Statistics", None).column == "command"


def test_the_same_words_as_state_and_as_command_are_told_apart() -> None:
    assert meaning("Statistics", "Query", None).column == "state"
    assert meaning("", "Statistics", None).note.startswith("server status")


def test_the_entry_of_the_server_is_picked() -> None:
    assert meaning("Sending data", "Query", "mariadb").servers == frozenset({"mariadb"})
    assert "8.0" in meaning("Sending data", "Query", "mysql").source


def test_a_state_no_entry_knows_has_no_meaning() -> None:
    assert meaning("Pondering the orb", "Query", "mysql") is None
    assert meaning(None, None, None) is None


def test_transaction_states() -> None:
    assert lookup("LOCK WAIT", "trx_state").resource is Resource.ROW_LOCK
    assert lookup("ACTIVE (PREPARED)", "trx_state").resource is Resource.LOG_FLUSH
