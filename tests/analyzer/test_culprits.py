"""Findings name their culprit on real captures of this machine (tests/fixtures/bundles/culprit-*.tar.gz,
made by scripts/make_culprit_bundles.sh against a scratch MariaDB 10.11 with pt-stalk 3.2.1; the
README of that folder says what each holds).

- rowlock: session 5 (app) updated order 42 in an open transaction and went idle; 20 sessions wait
  for that row (``-lock-waits``, ``-transactions``).
- mdl: session 119 (app) read ``orders`` in an open transaction and went idle; ``ALTER TABLE orders``
  (session 120) waits for the metadata lock, and 8 SELECTs queue behind it.
- ftwrl: ``mariadb-dump --lock-all-tables`` holds FLUSH TABLES WITH READ LOCK while its output pipe is
  full (session 220 reads ``items``); 6 INSERTs wait for the backup lock.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from analyzer import engine
from analyzer.findings import Finding, Severity
from analyzer.grouping import group
from analyzer.timeline import Timeline
from parsers.ingest.bundle import read_bundle

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"


@cache
def _findings(shape: str) -> dict[str, Finding]:
    bundle = read_bundle(BUNDLES / f"culprit-{shape}.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    out = engine.run(tl)
    assert out.failed == []
    return {f.key: f for f in group(out.findings)}


def test_a_row_lock_pile_up_names_the_idle_transaction_that_blocks_it() -> None:
    found = _findings("rowlock")
    waits, trx = found["lock-waits"], found["long-transaction"]
    for f in (waits, trx):
        c = f.culprit
        assert (c.kind, c.id, c.user, c.host, c.statement, c.blocks) == (
            "session", "5", "app", "localhost", "idle in transaction", 20,
        )  # fmt: skip
        assert c.since.isoformat() == "2026-11-27T15:52:47+00:00"  # trx_started of transaction 29
        members = {e.member.rsplit("-", 1)[-1] for e in c.evidence if e.member}
        assert members >= {"waits", "processlist", "transactions"}  # -lock-waits, the session, its trx
    assert "behind session 5 app@localhost" in waits.title
    assert "KILL 5;" in waits.recommendation and "KILL 5;" in trx.recommendation
    # 15 s old, far under the "few minutes" of long-transaction: it fires because it blocks 20 sessions
    assert trx.title.startswith("Session 5 (app@localhost) idle in transaction for 15 s")
    assert "1 row(s) locked, 1 modified" in trx.explanation
    assert trx.severity is Severity.CRITICAL
    # cause before consequence: the transaction explains the waits, which explain the crowd
    assert waits.related[0] == "long-transaction"
    assert found["active-sessions-overload"].related[0] == "long-transaction"


def test_a_ddl_waiting_for_a_metadata_lock_names_the_open_transaction_ahead_of_it() -> None:
    found = _findings("mdl")
    waits = found["lock-waits"]
    c = waits.culprit
    assert (c.kind, c.id, c.user, c.statement, c.blocks) == (
        "session",
        "119",
        "app",
        "idle in transaction",
        9,
    )
    labels = {e.label: e.value for e in c.evidence}
    assert labels["DDL waiting: session 120"] == "alter table orders add column note varchar(?)"
    assert "metadata lock" in waits.explanation and "KILL 119;" in waits.recommendation
    assert found["long-transaction"].culprit.id == "119"
    assert waits.related[0] == "long-transaction"


def test_writers_waiting_for_the_backup_lock_name_the_dump_that_holds_it() -> None:
    found = _findings("ftwrl")
    waits = found["lock-waits"]
    c = waits.culprit
    assert (c.kind, c.id, c.user, c.blocks) == ("session", "220", "app", 6)
    assert c.statement.startswith("select /*!? sql_no_cache */")  # how a dump reads a table
    labels = {e.label: e.value for e in c.evidence}
    assert str(labels["backup client in ps"]).startswith("mariadb-dump PID ")
    assert "global read / backup lock" in waits.explanation and "KILL 220;" in waits.recommendation
    assert "long-transaction" not in found  # the dump's snapshot is not the lock it holds


@pytest.mark.parametrize("shape", ["rowlock", "mdl", "ftwrl"])
def test_every_culprit_evidence_points_at_raw_lines(shape: str) -> None:
    for f in _findings(shape).values():
        if f.culprit is not None:
            assert f.culprit.evidence and all(e.member and e.lines for e in f.culprit.evidence), f.key
