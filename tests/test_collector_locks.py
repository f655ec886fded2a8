"""scripts/collect.sh's ps-locks.txt, run for real against a MariaDB of the test's own with
performance_schema ON, while an ALTER and two SELECTs wait for the metadata lock of an idle transaction.

The staging: session A runs ``BEGIN; SELECT * FROM t`` and stays idle in its transaction; session B's
``ALTER TABLE t ADD COLUMN`` waits for the metadata lock A holds; sessions C and D's ``SELECT * FROM t``
queue behind B. The collector then captures 4 s at 1 s, and the bundle must name A as the holder from
performance_schema.metadata_locks (``parsers.ps_locks``, ``analyzer.evidence.blockers.pfs_holder``).
Before the staging, one run with the metadata lock instrument off shows the member is skipped, and why.

Needs dash and MariaDB's ``mariadbd``, ``mariadb-install-db`` and ``mariadb`` client (skipped without
them); the server starts on a spare loopback port (``tests.servers.MariaDBServer``, ~5 s).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import MariaDBServer, wait_for
from tests.test_collector import DURATION_S, SAMPLES, SCRIPT, TS_RE, Run, _unpack

MDL_INSTRUMENT = "wait/lock/metadata/sql/mdl"
ECHOED = (
    "select t.processlist_id, ml.* from performance_schema.metadata_locks ml join performance_schema.threads"
    " t on (ml.owner_thread_id=t.thread_id)\\G"
)
WAITING = "Waiting for table metadata lock"


@dataclass(frozen=True)
class Staged:
    """The collector's run during the staging (``run``), its run with the MDL instrument off
    (``disabled``), and the processlist ids of the holder (A) and the ALTER (B)."""

    run: Run
    disabled: Run
    holder: int
    alter: int


def _collect(server: MariaDBServer, out: Path, duration: int) -> Run:
    done = subprocess.run(
        ["dash", str(SCRIPT), "--out", str(out), "--duration", str(duration), "--interval", "1"]
        + ["--mysql-opts", " ".join(server.client_args())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return _unpack(Path(done.stdout.strip()), done.stdout, done.stderr)


def _set_instrument(server: MariaDBServer, enabled: str) -> None:
    server.query(
        f"UPDATE performance_schema.setup_instruments SET ENABLED = '{enabled}' WHERE NAME = '{MDL_INSTRUMENT}'"
    )


def _waiting(server: MariaDBServer) -> list[str]:
    """The statements of the sessions waiting for a metadata lock."""
    rows = server.query(f"SELECT INFO FROM information_schema.PROCESSLIST WHERE STATE = '{WAITING}'")
    return rows.splitlines()


def _stage(server: MariaDBServer, sessions: list[subprocess.Popen]) -> tuple[int, int]:
    """Sessions A (idle in transaction), B (ALTER, waiting), C and D (SELECT, waiting): (A's id, B's id)."""

    def run(sql: str) -> None:
        session = server.session("shop")
        sessions.append(session)
        assert session.stdin is not None
        session.stdin.write(sql + "\n")
        session.stdin.flush()

    run("BEGIN; SELECT * FROM t;")
    holder = wait_for(
        "session A holding a metadata lock on shop.t",
        lambda: server.query(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = 'shop' AND ("
            "SELECT COUNT(*) FROM performance_schema.metadata_locks WHERE OBJECT_SCHEMA = 'shop'"
            " AND OBJECT_NAME = 't' AND LOCK_STATUS = 'GRANTED') = 1"
        ).split(),
        timeout_s=60,
    )
    run("ALTER TABLE t ADD COLUMN note VARCHAR(32);")
    wait_for("the ALTER waiting", lambda: any(s.startswith("ALTER") for s in _waiting(server)), timeout_s=60)
    alter = server.query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'ALTER TABLE t %'")
    run("SELECT * FROM t;")
    run("SELECT * FROM t;")
    wait_for("three sessions waiting", lambda: len(_waiting(server)) == 3, timeout_s=60)
    return int(holder[0]), int(alter)


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Staged]:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    if not MariaDBServer.available():
        pytest.skip("MariaDB (mariadbd, mariadb-install-db, mariadb) is not installed")
    server = MariaDBServer("--performance-schema=ON", f"--performance-schema-instrument={MDL_INSTRUMENT}=ON")
    sessions: list[subprocess.Popen] = []
    try:
        server.start()
        server.query(
            "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;"
            " INSERT INTO shop.t VALUES (1, 1), (2, 2)"
        )
        _set_instrument(server, "NO")
        disabled = _collect(server, tmp_path_factory.mktemp("collect-off"), 1)
        _set_instrument(server, "YES")
        holder, alter = _stage(server, sessions)
        run = _collect(server, tmp_path_factory.mktemp("collect-mdl"), DURATION_S)
        assert len(_waiting(server)) == 3  # still staged when the collector ended
        yield Staged(run=run, disabled=disabled, holder=holder, alter=alter)
    finally:
        for session in sessions:
            if session.stdin is not None:
                session.stdin.close()
        server.stop()
        for session in sessions:
            session.wait(timeout=60)


def _snapshots(text: str) -> list[list[str]]:
    """The lines of each snapshot of ps-locks.txt, its TS line first."""
    out: list[list[str]] = []
    for line in text.splitlines():
        if TS_RE.match(line):
            out.append([])
        out[-1].append(line)
    return out


def _rows(snapshot: list[str]) -> list[dict[str, str]]:
    """The ``\\G`` rows of one snapshot as dicts."""
    rows: list[dict[str, str]] = []
    for line in snapshot:
        if re.match(r"^\*+ \d+\. row \*+$", line):
            rows.append({})
        elif rows and ":" in line:
            key, _, value = line.partition(":")
            rows[-1][key.strip()] = value.strip()
    return rows


# ---------------------------------------------------------------------------------------------
# The member and the manifest
# ---------------------------------------------------------------------------------------------
def test_ps_locks_is_a_ts_line_and_the_echoed_statement_per_sample(staged: Staged) -> None:
    snapshots = _snapshots(staged.run.text("ps-locks.txt"))
    assert len(snapshots) == SAMPLES
    assert all(s[1] == ECHOED for s in snapshots), [s[:2] for s in snapshots]


def test_every_snapshot_shows_the_holder_granted_and_the_alter_pending(staged: Staged) -> None:
    for snapshot in _snapshots(staged.run.text("ps-locks.txt")):
        on_t = [r for r in _rows(snapshot) if (r["OBJECT_SCHEMA"], r["OBJECT_NAME"]) == ("shop", "t")]
        held = {(int(r["processlist_id"]), r["LOCK_TYPE"], r["LOCK_STATUS"]) for r in on_t}
        assert (staged.holder, "SHARED_READ", "GRANTED") in held
        assert (staged.alter, "EXCLUSIVE", "PENDING") in held
        assert sum(1 for r in on_t if r["LOCK_TYPE"] == "SHARED_READ" and r["LOCK_STATUS"] == "PENDING") == 2


def test_manifest_names_the_command_and_its_clock(staged: Staged) -> None:
    m = staged.run.manifest()
    assert m["mysql_opts"].startswith("-uroot -h127.0.0.1 -P")
    assert m["command.ps-locks.txt"] == f"mysql {m['mysql_opts']} -e '{ECHOED}'"
    assert m["clock.ps-locks.txt"] == "ts-marker (a TS line before each snapshot), then the statement echoed"
    assert "skipped.ps-locks.txt" not in m


def test_instrument_off_skips_the_member_and_says_why(staged: Staged) -> None:
    assert not (staged.disabled.root / "ps-locks.txt").exists()
    assert (staged.disabled.root / "pfs-threads.txt").is_file()
    assert staged.disabled.manifest()["skipped.ps-locks.txt"] == (
        f"the instrument {MDL_INSTRUMENT} is not enabled (setup_instruments ENABLED = NO):"
        " performance_schema.metadata_locks stays empty"
    )


# ---------------------------------------------------------------------------------------------
# Through the product: the bundle read, the holder named
# ---------------------------------------------------------------------------------------------
def test_read_bundle_reads_ps_locks_as_its_format(staged: Staged) -> None:
    from parsers.ingest.bundle import read_bundle

    bundle = read_bundle(staged.run.tarball)
    (source,) = bundle.by_format("ps_locks")
    assert (Path(source.member).name, source.samples) == ("ps-locks.txt", SAMPLES)
    assert not [n for n in bundle.not_used if n.member.endswith("ps-locks.txt")]
    locks = source.frames["pfs_metadata_locks"]
    assert set(locks["lock_status"]) == {"GRANTED", "PENDING"}


def test_the_analysis_names_session_a_the_holder_through_performance_schema(staged: Staged) -> None:
    from analyzer import engine
    from analyzer.timeline.timeline import Timeline
    from parsers.ingest.bundle import read_bundle

    bundle = read_bundle(staged.run.tarball)
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    out = engine.run(tl)
    [waiting] = [f for f in out.findings if f.key == "sessions-waiting"]
    assert waiting.culprit is not None and waiting.culprit.id == str(staged.holder)
    assert (
        f"session {staged.holder} holds the metadata lock, ahead of alter table t add column note varchar(?): "
        "performance_schema.metadata_locks shows its GRANTED lock"
    ) in waiting.explanation
    [pfs] = [e for e in waiting.culprit.evidence if e.series == "pfs_metadata_locks.lock_status"]
    assert pfs.value == "SHARED_READ on TABLE shop.t" and pfs.member.endswith("/ps-locks.txt")
