"""analyzer/timeline/series.py: the long form of the charted series, read back as melt would give it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.timeline.series import _long, _pivot_long

T0 = pd.Timestamp("2026-04-21 14:00:00", tz="UTC")


def _melted(frame: pd.DataFrame, names: dict[str, str]) -> list[tuple[str, pd.Timestamp, float]]:
    """What the long form must hold, written with pandas' own melt and to_numeric."""
    m = frame.melt(id_vars="ts", var_name="series", value_name="value")
    values = pd.to_numeric(m["value"], errors="coerce").astype("float64")
    return [(names[s], t, v) for s, t, v in zip(m["series"], m["ts"], values, strict=True)]


def _rows(long: pd.DataFrame) -> list[tuple[str, pd.Timestamp, float]]:
    return list(zip(long["series"].astype(str), long["ts"], long["value"], strict=True))


def _same(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(
        x[0] == y[0] and x[1] == y[1] and (x[2] == y[2] or (np.isnan(x[2]) and np.isnan(y[2])))
        for x, y in zip(a, b, strict=True)
    )


def test_columns_become_rows_one_column_after_the_other_with_their_times() -> None:
    rng = np.random.default_rng(3)
    n = 50
    frame = pd.DataFrame(
        {
            "ts": pd.date_range(T0, periods=n, freq="1s"),
            "r": rng.integers(0, 40, n),
            "us": rng.random(n) * 100,
            "swpd_kib": pd.array(rng.integers(0, 9, n), dtype="Int64"),  # nullable: a missing value is NaN
        }
    )
    frame.loc[3, "swpd_kib"] = pd.NA
    frame.loc[5, "us"] = np.nan
    long = _long(frame, "vmstat.", ["r", "us", "swpd_kib"])
    names = {c: f"vmstat.{c}" for c in ("r", "us", "swpd_kib")}
    assert _same(_rows(long), _melted(frame, names))
    assert long["value"].dtype == np.float64 and isinstance(long["series"].dtype, pd.CategoricalDtype)
    assert long["ts"].dtype == frame["ts"].dtype  # the unit and zone of the times it was given


def test_text_that_is_not_a_number_reads_as_missing() -> None:
    frame = pd.DataFrame(
        {
            "ts": pd.date_range(T0, periods=3, freq="1s"),
            "Questions": ["12", "n/a", "14.5"],
            "Threads_running": [1, 2, 3],
        }
    )
    long = _long(frame, "mysqladmin.", ["Questions", "Threads_running"])
    assert _same(
        _rows(long), _melted(frame, {c: f"mysqladmin.{c}" for c in ("Questions", "Threads_running")})
    )
    assert np.isnan(long["value"].iloc[1]) and long["value"].iloc[2] == 14.5


def test_two_columns_whose_names_are_cut_alike_keep_their_own_points() -> None:
    long_name = "SELECT * FROM t WHERE a = ? " * 10
    wide = pd.DataFrame(
        {long_name + "AND b = ?": [1, 2], long_name + "AND c = ?": [3, 4]},
        index=pd.Index(pd.date_range(T0, periods=2, freq="1s"), name="ts"),
    )
    long = _pivot_long(wide, "processlist.fingerprint:")
    name = "processlist.fingerprint:" + (long_name + "AND b = ?")[:170]
    assert long["series"].cat.categories.tolist() == [name]
    assert long["value"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert long["ts"].tolist() == [T0, T0 + pd.Timedelta(seconds=1)] * 2
