"""``parsers.processlist.parse(idle=...)`` counts the idle sessions it does not type by account
(``processlist_accounts``), on a real pt-stalk 3.2.1 capture of MariaDB 10.11 whose 20 connections of
the account app sit idle (tests/fixtures/slots/conn-leak.tar.gz, see tests/analyzer/waits/test_slots.py)."""

from __future__ import annotations

import tarfile

import pandas as pd

from parsers import processlist
from parsers.base import ClockHints
from tests.analyzer.waits.bundles import FIXTURES

MEMBER = "slots-conn-leak/2026_12_07_04_49_44-processlist"


def _lines() -> list[str]:
    with tarfile.open(FIXTURES / "slots" / "conn-leak.tar.gz") as tar:
        return tar.extractfile(MEMBER).read().decode("utf-8").splitlines(keepends=True)


def _by_account(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.astype({"user": object, "client": object, "command": object})
    return frame.groupby(["ts", "user", "client", "command"]).agg(
        sessions=("sessions", "sum"),
        time_min_s=("time_min_s", "min"),
        time_max_s=("time_max_s", "max"),
        time_sum_s=("time_sum_s", "sum"),
    )


def test_the_sessions_not_typed_are_counted_by_account_with_their_time() -> None:
    full = processlist.parse(_lines(), member=MEMBER, clock=ClockHints()).frames["processlist"]
    src = processlist.parse(_lines(), member=MEMBER, clock=ClockHints(), idle=frozenset({"Sleep"}))
    typed, counted = src.frames["processlist"], src.frames["processlist_accounts"]
    assert tuple(counted.columns) == (*processlist.ACCOUNT_COLUMNS, "line_no") and len(counted)
    assert str(counted["ts"].dtype) == "datetime64[ns, UTC]"
    # whole seconds in 32-bit floats (exact to 2**24 s): a dense capture counts hundreds of thousands
    assert [str(counted[c].dtype) for c in ("sessions", "time_min_s", "time_max_s", "time_sum_s")] == [
        "int32",
        *["float32"] * 3,
    ]
    # every session of the full parse is either typed or counted, with the same account and Time
    untyped = full.merge(typed[["ts", "id"]], on=["ts", "id"], how="left", indicator=True)
    untyped = untyped[untyped["_merge"] == "left_only"]
    t = untyped["time_s"].astype("float64")
    expected = pd.DataFrame(
        {
            "ts": untyped["ts"],
            "user": untyped["user"],
            "client": untyped["host"].str.replace(r":\d+$", "", regex=True),
            "command": untyped["command"],
            "sessions": 1,
            "time_min_s": t,
            "time_max_s": t,
            "time_sum_s": t,
        }
    )
    pd.testing.assert_frame_equal(_by_account(counted), _by_account(expected), check_dtype=False)
    assert set(counted["user"]) == {"app", "root"} and set(counted["client"]) == {"localhost"}


def test_the_servers_own_threads_stay_typed_and_the_longest_idle_client_with_them() -> None:
    """On the staged Galera node desynced by a backup session (pt-stalk 3.2.1, MariaDB 10.11 with
    galera-4): its appliers (User ``system user``, Command Sleep) idle longer than the backup's
    session 15, which holds the lock. The appliers stay typed (their State says why the node is
    behind), and so does session 15, the longest idle client session of each snapshot."""
    member = "galera-ftwrl/db-b/2026_12_07_05_24_42-processlist"
    with tarfile.open(FIXTURES / "bundles" / "waits-galera-ftwrl.tar.gz") as tar:
        lines = tar.extractfile(member).read().decode("utf-8").splitlines(keepends=True)
    full = processlist.parse(lines, member=member, clock=ClockHints()).frames["processlist"]
    typed = processlist.parse(lines, member=member, clock=ClockHints(), idle=frozenset({"Sleep"}))
    typed = typed.frames["processlist"]
    snapshots = full["ts"].nunique()
    assert (typed["id"] == 15).sum() == (full["id"] == 15).sum() == snapshots
    server = full["user"].eq("system user")
    assert server.sum() > snapshots and typed["user"].eq("system user").sum() == server.sum()
    assert len(typed) < len(full)  # the other idle clients are counted, not typed
