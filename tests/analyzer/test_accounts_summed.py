"""``accounts.summed``: the sessions summed by snapshot and account, as pandas' group-by sums them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyzer.timeline.accounts import ACCOUNT_KEYS, summed


def _grouped(rows: pd.DataFrame, dropna: bool) -> pd.DataFrame:
    return (
        rows.groupby(list(ACCOUNT_KEYS), sort=True, dropna=dropna)
        .agg(
            sessions=("sessions", "sum"),
            time_min_s=("time_min_s", "min"),
            time_max_s=("time_max_s", "max"),
            time_sum_s=("time_sum_s", "sum"),
        )
        .reset_index()
    )


def _rows(n: int, missing: bool, sessions: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)

    def texts(values: list[str]) -> pd.Series:
        s = pd.Series(rng.choice(values, n), dtype="string")
        return s.where(rng.random(n) > 0.1) if missing else s

    ts = pd.Series(pd.to_datetime(rng.integers(0, 5, n) * 10**9, utc=True))
    t = rng.integers(0, 100, n).astype("float64")
    if missing:
        ts = ts.where(rng.random(n) > 0.1)
        t[rng.random(n) < 0.2] = np.nan
    return pd.DataFrame(
        {
            "ts": ts,
            "user": texts(["app", "report", "Zed", "ä"]),
            "client": texts(["10.0.0.1", "10.0.0.10", "localhost", "?"]),
            "command": texts(["Sleep", "Query"]),
            "sessions": rng.integers(1, 4, n).astype(sessions),
            "time_min_s": t,
            "time_max_s": t,
            "time_sum_s": t,
        }
    )


@pytest.mark.parametrize("n", [0, 1, 7, 500])
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("sessions", ["int32", "int64"])
@pytest.mark.parametrize("dropna", [True, False])
def test_summed_is_the_group_by(n: int, missing: bool, sessions: str, dropna: bool) -> None:
    rows = _rows(n, missing, sessions, seed=n)
    pd.testing.assert_frame_equal(summed(rows, dropna=dropna), _grouped(rows, dropna))


def test_missing_keys_sort_last_or_go() -> None:
    rows = pd.DataFrame(
        {
            "ts": pd.to_datetime([0, 0, 0], utc=True),
            "user": pd.array([None, "b", "a"], dtype="string"),
            "client": pd.array(["h", "h", "h"], dtype="string"),
            "command": pd.array(["Sleep"] * 3, dtype="string"),
            "sessions": np.array([1, 2, 3], dtype="int32"),
            "time_min_s": [1.0, 2.0, 3.0],
            "time_max_s": [1.0, 2.0, 3.0],
            "time_sum_s": [1.0, 2.0, 3.0],
        }
    )
    assert summed(rows, dropna=False)["user"].tolist() == ["a", "b", pd.NA]
    assert summed(rows)["sessions"].tolist() == [3, 2]
