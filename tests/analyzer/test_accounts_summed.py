"""``accounts.summed``: the sessions summed by snapshot and account, as pandas' group-by sums them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyzer.timeline.accounts import ACCOUNT_KEYS, counted, summed


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


def _names(values: pd.Series) -> list[str | None]:
    return [None if pd.isna(v) else v for v in values.astype(object)]


def _as_categories(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the names as categories in the order the parser meets them (not sorted), one unused."""
    out = rows.copy()
    for key in ("user", "client", "command"):
        names = rows[key].astype(object)
        met = list(dict.fromkeys(v for v in names if isinstance(v, str)))[::-1] + ["unused"]
        out[key] = pd.Categorical(names, categories=met)
    return out


@pytest.mark.parametrize("n", [0, 1, 7, 500])
@pytest.mark.parametrize("missing", [False, True])
def test_names_as_categories_in_any_order_sum_as_their_strings(n: int, missing: bool) -> None:
    """The parser gives the names as categories in the order it met them (not sorted), some unused:
    the sums and their order are those of the same names as strings."""
    rows = _rows(n, missing, "int32", seed=n + 1)
    as_categories = _as_categories(rows)
    got = summed(as_categories, dropna=False, categories=True)
    want = summed(rows, dropna=False, categories=True)
    for key in ("user", "client", "command"):
        assert _names(got[key]) == _names(want[key])
    pd.testing.assert_frame_equal(
        got.drop(columns=["user", "client", "command"]), want.drop(columns=["user", "client", "command"])
    )


def test_the_rows_dropped_join_the_counted_under_their_names() -> None:
    """``counted``: a counted account's names keep its codes; a dropped row's names, seen or new,
    are looked up, and the same account in the same snapshot is summed once."""
    ts = pd.to_datetime([0, 0], utc=True)
    parsed = pd.DataFrame(
        {
            "ts": ts,
            "user": pd.Categorical(["app", "report"]),
            "client": pd.Categorical(["10.0.0.1", "10.0.0.2"]),
            "command": pd.Categorical(["Sleep", "Sleep"]),
            "sessions": np.array([40, 2], dtype="int32"),
            "time_min_s": [1.0, 5.0],
            "time_max_s": [90.0, 6.0],
            "time_sum_s": [900.0, 11.0],
            "line_no": [1, 9],
        }
    )
    dropped = pd.DataFrame(
        {
            "ts": pd.to_datetime([0, 0], utc=True),
            "user": pd.array(["app", "batch"], dtype="string"),
            "host": pd.array(["10.0.0.1:5012", "10.0.0.3:77"], dtype="string"),
            "command": pd.array(["Sleep", "Sleep"], dtype="string"),
            "time_s": [120, 3],
        }
    )
    out = counted(parsed, dropped)
    assert [str(out[c].dtype) for c in ("sessions", "time_min_s", "time_max_s", "time_sum_s")] == [
        "int32",
        *["float32"] * 3,
    ]
    assert out[["user", "client", "sessions", "time_max_s", "time_sum_s"]].astype(object).values.tolist() == [
        ["app", "10.0.0.1", 41, 120.0, 1020.0],
        ["batch", "10.0.0.3", 1, 3.0, 3.0],
        ["report", "10.0.0.2", 2, 6.0, 11.0],
    ]


@pytest.mark.parametrize("n", [1, 7, 500])
@pytest.mark.parametrize("missing", [False, True])
def test_counted_sums_the_parsed_and_the_dropped_rows_as_the_group_by(n: int, missing: bool) -> None:
    """``counted`` groups on integer codes: the same rows, sums and order as pandas' group-by over
    the names (a missing ts or name sorting last), whatever the categories' order."""
    rows = _rows(n, missing, "int32", seed=n + 2)
    parsed = _as_categories(rows)
    dropped = pd.DataFrame(
        {
            "ts": rows["ts"].iloc[: n // 2 + 1],
            "user": pd.array(["app", "new"] * (n // 4 + 1), dtype="string")[: n // 2 + 1],
            "host": pd.array(["10.0.0.1:4000", "10.0.0.9:12"] * (n // 4 + 1), dtype="string")[: n // 2 + 1],
            "command": pd.array(["Sleep"] * (n // 2 + 1), dtype="string"),
            "time_s": np.arange(n // 2 + 1),
        }
    )
    t = dropped["time_s"].astype("float64")
    as_rows = pd.concat(
        [
            rows,
            pd.DataFrame(
                {
                    "ts": dropped["ts"],
                    "user": dropped["user"],
                    "client": dropped["host"].str.replace(r":\d+$", "", regex=True),
                    "command": dropped["command"],
                    "sessions": np.ones(len(dropped), dtype="int32"),
                    "time_min_s": t,
                    "time_max_s": t,
                    "time_sum_s": t,
                }
            ),
        ],
        ignore_index=True,
    )
    got = counted(parsed, dropped)
    want = _grouped(as_rows, dropna=False)
    for key in ("user", "client", "command"):
        assert _names(got[key]) == _names(want[key]), key
    assert got["ts"].isna().tolist() == want["ts"].isna().tolist()
    assert (got["ts"].dropna() == want["ts"].dropna()).all()
    pd.testing.assert_frame_equal(
        got[["sessions", "time_min_s", "time_max_s", "time_sum_s"]],
        want[["sessions", "time_min_s", "time_max_s", "time_sum_s"]].astype(
            {"sessions": "int32", "time_min_s": "float32", "time_max_s": "float32", "time_sum_s": "float32"}
        ),
    )
