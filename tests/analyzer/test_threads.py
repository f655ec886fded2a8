"""analyzer/evidence/threads.py: D-state server threads by wchan beside session states; the exact ps TID ->
performance_schema THREAD_OS_ID -> session join."""

from __future__ import annotations

import pandas as pd
import pytest

from analyzer.evidence import threads
from analyzer.timeline.pairing import join_tolerance, pair_moments
from tests.analyzer.captures import (
    FIRST_MYSQLD_TID,
    SEED000_QUERY,
    load_timeline,
    mysql_timeline,
    pfs_threads_frame,
    processlist_text,
    ps_elo_text,
    seed000_timeline,
)


def _ts(*seconds: float) -> pd.Series:
    return pd.Series(pd.Timestamp("2026-04-21 16:51:41", tz="UTC") + pd.to_timedelta(list(seconds), unit="s"))


def test_pair_moments_takes_the_nearest_snapshot_within_the_tolerance() -> None:
    pairs = pair_moments(_ts(0, 10, 20), _ts(0.4, 9.0, 30), tolerance=pd.Timedelta(seconds=2))
    assert (pairs["other_ts"] - pairs["ts"]).dt.total_seconds().tolist()[:2] == [0.4, -1.0]
    assert pd.isna(pairs["other_ts"].iloc[2])  # 10 s from the nearest: another moment


def test_the_default_tolerance_widens_to_half_the_sparser_interval() -> None:
    assert join_tolerance(_ts(0, 1, 2)) == pd.Timedelta(seconds=2)
    assert join_tolerance(_ts(0, 1, 2), _ts(0, 30, 60)) == pd.Timedelta(seconds=15)


def test_d_threads_by_wchan_counts_only_the_servers_d_threads() -> None:
    tl = seed000_timeline()
    d = threads.d_threads_by_wchan(tl.frame("ps_threads"))
    assert list(d.columns) == ["unlinkat"]  # the 90 idle S threads (thread cache) and kworkers are not D
    assert d["unlinkat"].tolist() == [547, 540, 552, 547, 549]


def test_threads_beside_sessions_puts_the_seed_000_numbers_side_by_side() -> None:
    side = threads.threads_beside_sessions(
        seed000_timeline().frame("ps_threads"), seed000_timeline().frame("processlist")
    )
    first = side.iloc[0]
    assert first["d_threads"] == 547
    assert first["wchan:unlinkat"] == 547
    assert first["state:removing tmp table"] == 217
    assert first["state:Sending data"] == 412
    assert first["active"] == 635
    assert (first.name - first["processlist_ts"]).total_seconds() == pytest.approx(0.3)


def test_a_ps_snapshot_with_no_processlist_nearby_gets_no_session_counts() -> None:
    ps = ps_elo_text([[(12, "Dl", "mysqld", "unlinkat")]], first_s=30)
    tl = mysql_timeline(ps_text=ps, pl=processlist_text([[("app", "Query", 0, "Sending data", "SELECT 1")]]))
    side = threads.threads_beside_sessions(tl.frame("ps_threads"), tl.frame("processlist"))
    assert side["d_threads"].tolist() == [12]
    assert pd.isna(side["processlist_ts"].iloc[0])
    assert pd.isna(side["active"].iloc[0])


def test_a_listing_without_states_gives_an_empty_join() -> None:
    ps = pd.DataFrame(
        {"ts": _ts(0), "tid": [1], "state": pd.Series([pd.NA], dtype="string"), "comm": ["mysqld"]}
    )
    assert threads.d_threads_by_wchan(ps).empty
    assert threads.threads_beside_sessions(ps, pd.DataFrame()).empty


def test_the_real_mariadb_load_shows_d_threads_in_file_creation_and_deletion() -> None:
    tl = load_timeline("tmptables-64")
    side = threads.threads_beside_sessions(tl.frame("ps_threads"), tl.frame("processlist"))
    assert side["d_threads"].tolist() == [0, 23, 0, 0, 0, 29, 18, 26]
    second = side.iloc[1]
    assert (second["wchan:do_unlinkat"], second["wchan:path_openat"]) == (14, 9)
    assert second["state:Removing tmp table"] == 14
    assert second["active"] == 54  # the collector's own `show /*!50002 GLOBAL */ status` is not counted


def test_the_idle_capture_has_no_d_threads_although_the_thread_cache_holds_106_threads() -> None:
    tl = load_timeline("idle")
    counts = tl.frame("ps_state_counts").groupby("state")["threads"].sum()
    assert counts["S"] >= 532 and "D" not in counts  # the cached idle threads sleep in S (futex_do_wait)
    ps = tl.frame("ps_threads")
    d = threads.d_threads_by_wchan(ps)
    assert d.shape == (5, 0)


def _pfs_case():
    # Sessions 1001-1003 (processlist_text numbers rows 1000 + n); their threads are the first three
    # mysqld threads of the ps listing; the fourth thread is InnoDB's, with no session.
    pl = processlist_text(
        [
            [
                ("app", "Query", 0, "removing tmp table", SEED000_QUERY.format(n=1)),
                ("app", "Query", 0, "removing tmp table", SEED000_QUERY.format(n=2)),
                ("app", "Query", 0, "Sending data", "SELECT 1"),
            ]
        ]
        * 2
    )
    ps = ps_elo_text(
        [[(2, "Dl", "mysqld", "unlinkat"), (1, "Rl", "mysqld", "-"), (1, "Dl", "mysqld", "io_schedule")]] * 2
    )
    pfs = pfs_threads_frame(
        [
            (FIRST_MYSQLD_TID, 1001, "thread/sql/one_connection", "Sending data", "SELECT stale"),
            (FIRST_MYSQLD_TID + 1, 1002, "thread/sql/one_connection", "removing tmp table", "SELECT x"),
            (FIRST_MYSQLD_TID + 2, 1003, "thread/sql/one_connection", "Sending data", "SELECT 1"),
            (FIRST_MYSQLD_TID + 3, None, "thread/innodb/io_write_thread", None, None),
        ]
    )
    return mysql_timeline(pl=pl, ps_text=ps, pfs=pfs)


def test_thread_sessions_maps_os_threads_to_sessions_exactly() -> None:
    tl = _pfs_case()
    joined = threads.thread_sessions(tl.frame("ps_threads"), tl.frame("pfs_threads"), tl.frame("processlist"))
    first = joined[joined["ts"] == joined["ts"].min()]
    assert first["tid"].tolist() == [
        FIRST_MYSQLD_TID,
        FIRST_MYSQLD_TID + 1,
        FIRST_MYSQLD_TID + 2,
    ]  # not the InnoDB thread
    assert first["processlist_id"].tolist() == [1001, 1002, 1003]
    # The processlist at the same moment wins over the threads table's older copy of State/Info.
    assert first["session_state"].tolist() == ["removing tmp table", "removing tmp table", "Sending data"]
    assert first["os_state"].tolist() == ["D", "D", "R"]
    assert first["fingerprint"].iloc[0].endswith("where e.proceso_id = ?")


def test_without_a_processlist_the_threads_table_gives_state_and_info() -> None:
    tl = _pfs_case()
    joined = threads.thread_sessions(tl.frame("ps_threads"), tl.frame("pfs_threads"))
    assert joined["session_state"].iloc[0] == "Sending data"
    assert joined["info"].iloc[0] == "SELECT stale"


def test_sessions_by_wchan_names_the_sessions_behind_each_wait_channel() -> None:
    tl = _pfs_case()
    joined = threads.thread_sessions(tl.frame("ps_threads"), tl.frame("pfs_threads"), tl.frame("processlist"))
    behind = threads.sessions_by_wchan(joined)
    assert behind.iloc[0][["wchan", "session_state", "threads", "sessions", "snapshots"]].tolist() == [
        "unlinkat",
        "removing tmp table",
        4,
        2,
        2,
    ]
    assert len(behind) == 1  # the D thread in io_schedule is InnoDB's: no session behind it


@pytest.mark.parametrize(
    ("wchan", "meaning_part", "is_file"),
    [
        ("unlinkat", "deleting files", True),
        ("do_unlinkat", "deleting files", True),
        ("path_openat", "creating or opening files", True),
        ("vm_mmap_pgoff", "mmap_lock", False),
        ("jbd2_log_wait_commit", "ext4 journal", False),
        ("futex_do_wait", "futex", False),
        ("some_new_fn", "", False),
    ],
)
def test_wchan_vocabulary(wchan: str, meaning_part: str, is_file: bool) -> None:
    assert meaning_part in threads.wchan_meaning(wchan)
    assert threads.is_file_wchan(wchan) is is_file
