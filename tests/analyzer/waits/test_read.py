"""analyzer/waits/read.py on the real fixture bundles: who waits, on what."""

from __future__ import annotations

import pandas as pd
import pytest

from analyzer.waits.model import WAIT_COLUMNS, Resource
from analyzer.waits.read import TEXT_COLUMNS, server_of, snapshots, waits, wchan_resource
from tests.analyzer.waits.bundles import BUNDLES, timelines


def _waits(name: str, host: str = "vm") -> pd.DataFrame:
    return waits(timelines(BUNDLES / f"{name}.tar.gz")[host])


def _per_snapshot(w: pd.DataFrame, resource: Resource) -> pd.Series:
    return w[w["resource"] == resource.value].groupby("ts")["session"].nunique()


def test_the_frame_has_the_declared_columns() -> None:
    w = _waits("culprit-rowlock")
    assert tuple(w.columns) == WAIT_COLUMNS
    assert str(w["ts"].dtype) == "datetime64[ns, UTC]" and str(w["session"].dtype) == "Int64"
    assert set(w["resource"].cat.categories) == {r.value for r in Resource}
    assert w["holder_kind"].isna().all() and w["host"].eq("vm").all()
    # the text columns are categories of their names (a day's millions of rows, a few names each);
    # the processlist's names are read unchanged
    text = TEXT_COLUMNS
    assert set(text) == set(WAIT_COLUMNS) - {"ts", "session", "trx_id", "time_s", "resource"}
    assert all(isinstance(w[c].dtype, pd.CategoricalDtype) for c in text)
    pl = timelines(BUNDLES / "culprit-rowlock.tar.gz")["vm"].frame("processlist")
    mine = w[w["source_frame"].eq("processlist").to_numpy()]
    assert set(mine["state"].dropna().astype(str)) <= set(pl["state"].dropna().astype(str))
    assert set(mine["user"].dropna().astype(str)) <= set(pl["user"].dropna().astype(str))


def test_a_session_waiting_for_nothing_is_no_row_but_its_snapshot_is_a_moment() -> None:
    """Sessions whose State and Command name no wait (and no transaction or lock wait names) are no
    rows; every processlist snapshot is in ``snapshots``, those where nobody waits too."""
    tl = timelines(BUNDLES / "culprit-rowlock.tar.gz")["vm"]
    w = waits(tl)
    assert len(w) and not w["resource"].eq(Resource.NOTHING.value).any()
    assert list(snapshots(tl)) == sorted(set(tl.frame("processlist")["ts"]))
    assert set(w["ts"]) <= set(snapshots(tl))


def test_row_lock_waiters_are_read_from_lock_waits_with_their_table() -> None:
    w = _waits("culprit-rowlock")
    # 20 sessions in State "Updating" wait for session 5's row in every snapshot
    assert _per_snapshot(w, Resource.ROW_LOCK).tolist() == [20] * 10
    rows = w[w["resource"] == Resource.ROW_LOCK.value]
    assert set(rows["object"]) == {"`shop`.`orders`"} and set(rows["state"]) == {"Updating"}


def test_an_idle_session_with_an_open_transaction_waits_for_its_client() -> None:
    w = _waits("culprit-rowlock")
    holder = w[(w["session"] == 5) & w["trx_id"].notna()]
    assert len(holder) and set(holder["resource"]) == {Resource.CLIENT.value}
    assert set(holder["command"]) == {"Sleep"}


def test_metadata_lock_waiters() -> None:
    w = _waits("culprit-mdl")
    assert _per_snapshot(w, Resource.METADATA_LOCK).max() == 9


def test_global_read_lock_waiters() -> None:
    w = _waits("culprit-ftwrl")
    assert _per_snapshot(w, Resource.GLOBAL_READ_LOCK).max() == 6


def test_galera_certification_waiters_on_every_node() -> None:
    tls = timelines(BUNDLES / "cluster-galera.tar.gz")
    for host, tl in tls.items():
        assert _per_snapshot(waits(tl), Resource.GALERA_CERTIFICATION).max() >= 3, host


def test_a_healthy_capture_has_no_lock_waiter() -> None:
    w = _waits("ptstalk-mariadb-tmptables")
    locks = {Resource.ROW_LOCK.value, Resource.METADATA_LOCK.value, Resource.GLOBAL_READ_LOCK.value}
    assert not w["resource"].isin(locks).any()


def test_the_collectors_own_session_is_left_out() -> None:
    w = _waits("ptstalk-mariadb-tmptables")
    assert not w["state"].eq("Filling schema table").any()  # pt-stalk's information_schema reads


@pytest.mark.parametrize(
    ("wchan", "session", "resource"),
    [
        ("io_schedule", False, Resource.DISK_IO),
        ("jbd2_log_wait_commit", True, Resource.LOG_FLUSH),
        ("jbd2_log_wait_commit", False, Resource.DISK_IO),
        ("futex_wait_queue", True, Resource.UNKNOWN),
    ],
)
def test_wait_channels(wchan: str, session: bool, resource: Resource) -> None:
    assert wchan_resource(wchan, session=session) is resource


def test_the_server_is_read_from_its_version() -> None:
    assert server_of({"version": "10.11.19-MariaDB-0+deb12u1"}) == "mariadb"
    assert server_of({"version": "8.0.42-33", "version_comment": "Percona Server (GPL)"}) == "mysql"
    assert server_of({}) is None
