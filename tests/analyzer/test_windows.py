"""analyzer/windows.py: which samples fall inside finding windows, whatever their order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.findings import Window
from analyzer.windows import within

T0 = pd.Timestamp("2026-04-21 16:51:41", tz="UTC")


def _ts(seconds: list[float]) -> pd.Series:
    return pd.Series([T0 + pd.Timedelta(seconds=s) for s in seconds])


WINDOWS = [
    Window(T0 + pd.Timedelta(seconds=2), T0 + pd.Timedelta(seconds=4)),
    Window(T0 + pd.Timedelta(seconds=9), T0 + pd.Timedelta(seconds=9)),
]


def test_window_ends_are_inside_and_sorted_times_are_cut_as_slices() -> None:
    ts = _ts([0, 1, 2, 2, 3, 4, 4.5, 9, 10])
    assert within(ts, WINDOWS).tolist() == [False, False, True, True, True, True, False, True, False]


def test_unsorted_times_give_the_same_answer_row_by_row() -> None:
    seconds = [4, 0, 9, 2, 10, 3, 1, 4.5, 2]
    shuffled = within(_ts(seconds), WINDOWS)
    in_order = within(_ts(sorted(seconds)), WINDOWS)
    back = dict(zip(sorted(seconds), in_order, strict=True))
    assert shuffled.tolist() == [back[s] for s in seconds]
    assert shuffled.index.equals(pd.RangeIndex(9)) and shuffled.dtype == np.bool_
