"""Holder readers of analyzer/waits/holders/slots.py on real captures.

- ``tests/fixtures/slots/conn-leak.tar.gz``: pt-stalk 3.2.1 against a scratch MariaDB 10.11
  (max_connections 20, extra_port for the collector): the account app opened 20 connections from
  127.0.0.1 (resolved to localhost), ran one SELECT on each and left them idle (Sleep, Time 81-91 s);
  its new connections were refused ("ERROR 1040 (08004): Too many connections") while pt-stalk
  collected over extra_port. Members: processlist, mysqladmin, variables, hostname, df, disk-space.
- ``ptstalk-mariadb-fullfs-crash`` (a 96 % full tmpfs holding MariaDB's datadir) and
  ``culprit-tablecache`` (table_open_cache 64 under 6 sessions reading 400 tables), of
  tests/fixtures/bundles.
"""

from __future__ import annotations

from pathlib import Path

from analyzer import engine
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import holders, slots
from analyzer.waits.model import Resource
from analyzer.waits.read import waits
from tests.analyzer.waits.bundles import BUNDLES, FIXTURES, timelines

CONN_LEAK = FIXTURES / "slots" / "conn-leak.tar.gz"


def _vm(path: Path) -> Timeline:
    return timelines(path)["vm"]


def test_the_account_holding_idle_connections_holds_the_slots() -> None:
    h = slots.connection_holding(_vm(CONN_LEAK))
    assert h is not None and h.named and h.resource is Resource.CONNECTION_SLOT
    c = h.holder
    assert (c.kind, c.id, c.user, c.host) == ("account", "app@localhost", "app", "localhost")
    assert c.statement.startswith("20 of 22 connections: 20 Sleep; idle (Sleep) for 81-87 s")
    assert h.object == "max_connections 20" and h.held_s >= 5
    assert "connection pool of the application connecting as app@localhost" in h.fix
    assert "WHERE user = 'app' AND command = 'Sleep'" in h.fix


def test_every_idle_session_is_counted_once_by_account() -> None:
    """The processlist keeps one idle row per snapshot; the others are counted by account
    (``processlist_accounts``): app's 20 idle sessions are all seen in every snapshot, and no
    snapshot counts more sessions than it had (``processlist_sessions``; the collector's own
    statements are left out)."""
    tl = _vm(CONN_LEAK)
    per = slots.account_sessions(tl)
    app = per[(per["user"] == "app") & (per["command"] == "Sleep")].groupby("ts")["sessions"].sum()
    assert app.tolist() == [20] * 5
    counted = tl.frame("processlist_sessions").set_index("ts")["sessions"]
    assert (per.groupby("ts")["sessions"].sum() <= counted).all()


def test_connection_saturation_blames_the_account_not_the_setting() -> None:
    [f] = engine.run(_vm(CONN_LEAK), only=("connection-saturation",)).findings
    assert (f.culprit.kind, f.culprit.id) == ("account", "app@localhost")
    assert f.title.endswith("held by app@localhost (20 of 22 connections)")
    assert f.recommendation.startswith(
        "Fix the connection pool of the application connecting as app@localhost"
    )
    assert "Setting: max_connections" not in f.explanation


def test_without_the_processlist_the_setting_is_the_culprit() -> None:
    """No holder shown (no processlist): max_connections, the setting, is the culprit."""
    tl = _vm(CONN_LEAK)
    bare = tl.only(("mysqladmin", "variables"))
    assert slots.connection_holding(bare).holder is None
    [f] = engine.run(bare, only=("connection-saturation",)).findings
    assert (f.culprit.kind, f.culprit.id, f.culprit.statement) == ("setting", "max_connections", "20")


def test_no_slot_holding_on_a_server_with_free_slots() -> None:
    assert slots.connection_holding(_vm(BUNDLES / "culprit-rowlock.tar.gz")) is None


def test_the_full_file_system_is_the_disk_space_holder() -> None:
    tl = _vm(BUNDLES / "ptstalk-mariadb-fullfs-crash.tar.gz")
    [h] = [h for h in holders(tl, waits(tl)) if h.resource is Resource.DISK_SPACE]
    assert (h.holder.kind, h.holder.id) == ("filesystem", "/tmp/hmembers/fs")
    assert h.holder.statement.startswith("datadir (datadir = /tmp/hmembers/fs/data/)")
    assert h.shown_by == "df: /tmp/hmembers/fs 96 % space used" and h.named
    [f] = engine.run(tl, only=("filesystem-full",)).findings
    assert f.culprit == h.holder


def test_a_full_table_cache_has_no_holder_and_keeps_the_setting() -> None:
    tl = _vm(BUNDLES / "culprit-tablecache.tar.gz")
    [h] = slots.table_cache(tl, slots.NO_WAITS)
    assert h.holder is None and not h.named
    assert h.contention.startswith("Open_tables 64 of table_open_cache 64, ")
    [f] = engine.run(tl, only=("table-cache-full",)).findings
    assert (f.culprit.kind, f.culprit.id) == ("setting", "table_open_cache")


def test_no_disk_or_table_cache_holding_on_a_healthy_capture() -> None:
    tl = _vm(BUNDLES / "culprit-rowlock.tar.gz")
    assert slots.disk_holdings(tl) == [] and slots.table_cache(tl, slots.NO_WAITS) == []


def test_what_fills_tmpdir_is_the_sessions_writing_temporary_tables() -> None:
    """overlap-tmp: 61 sessions of root in the temporary-table states (a GROUP BY ... ORDER BY); read as
    the fillers of a mount holding tmpdir."""
    tl = _vm(BUNDLES / "overlap-tmp.tar.gz")
    text, evidence = slots._fillers(tl, [("tmpdir", "tmpdir", "/tmp")])
    assert text.startswith("61 session(s) of root (Id 1524, 1525, ")
    assert "writing temporary tables or sort files: select grp, count(*), sum(n)" in text
    assert evidence[0].value == 61 and evidence[0].lines
    assert slots._fillers(tl, [("log_bin_basename", "binary logs", "/var/log/mysql/bin")]) == ("", [])


def test_an_account_held_at_one_count_while_connections_are_refused_is_at_its_own_limit() -> None:
    """Without -variables (no max_connections to compare with), conn-leak still shows refusals
    (Aborted_connects grows) while app holds exactly 20 connections in every snapshot: a ceiling,
    the account's own MAX_USER_CONNECTIONS, which no capture shows. user-connection-limit names app."""
    bare = _vm(CONN_LEAK).only(("mysqladmin", "processlist", "processlist_accounts"))
    h = slots.connection_holding(bare)
    assert h.holder.id == "app@localhost" and h.object.startswith("max_user_connections of app, its own: 20")
    assert h.waiters > 0 and "ALTER USER 'app'@'localhost' WITH MAX_USER_CONNECTIONS" not in h.fix  # a leak
    [f] = engine.run(bare, only=("user-connection-limit",)).findings
    assert f.title == "Account app@localhost at its connection limit: 20 connections, new ones refused"
    assert (f.culprit.kind, f.culprit.id) == ("account", "app@localhost")
