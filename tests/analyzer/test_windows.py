"""analyzer/timeline/windows.py: which samples fall inside finding windows, whatever their order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.findings import Window
from analyzer.timeline.windows import within

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


def _runs_one_by_one(t: pd.Series, c: list[bool], min_samples: int, max_gap: pd.Timedelta) -> list[tuple]:
    """The rule as stated, sample by sample: a run grows while the condition holds and no gap
    longer than ``max_gap`` comes; runs of ``min_samples`` or more are windows."""
    out, run = [], []
    for i, held in enumerate(c):
        if held and run and t[i] - t[i - 1] <= max_gap:
            run.append(i)
            continue
        if len(run) >= min_samples:
            out.append((t[run[0]], t[run[-1]]))
        run = [i] if held else []
    if len(run) >= min_samples:
        out.append((t[run[0]], t[run[-1]]))
    return out


def test_sustained_windows_are_the_runs_of_the_condition_broken_by_gaps() -> None:
    from analyzer.timeline.windows import sustained

    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(0, 60))
        steps = rng.choice([1.0, 1.0, 1.0, 2.0, 10.0], size=n)  # now and then a gap
        t = _ts(np.cumsum(steps).tolist())
        c = (rng.random(n) < rng.choice([0.3, 0.7, 0.95])).tolist()
        min_samples = int(rng.integers(1, 5))
        got = sustained(t, pd.Series(c, dtype=bool), min_samples=min_samples, max_gap=pd.Timedelta(seconds=3))
        expected = _runs_one_by_one(t, c, min_samples, pd.Timedelta(seconds=3))
        assert [(w.start, w.end) for w in got] == expected


def test_sustained_ignores_the_intervals_next_to_a_missing_time() -> None:
    from analyzer.timeline.windows import sustained

    t = pd.Series(pd.to_datetime([T0, T0 + pd.Timedelta(seconds=1), pd.NaT, T0 + pd.Timedelta(seconds=3)]))
    got = sustained(t, pd.Series([True, True, True, True]), min_samples=4)
    # no gap is read from a NaT (a 1 s median interval: the run is not broken)
    assert [(w.start, w.end) for w in got] == [(T0, T0 + pd.Timedelta(seconds=3))]
    # a missing condition is False: it ends a run like a False would
    held = sustained(t, pd.Series([True, True, None, True], dtype="boolean"), min_samples=2)
    assert [(w.start, w.end) for w in held] == [(T0, T0 + pd.Timedelta(seconds=1))]


def test_the_median_interval_is_read_from_distinct_times_in_any_order() -> None:
    from analyzer.detect import step_seconds
    from analyzer.timeline.pairing import median_interval

    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(0, 30))
        seconds = np.cumsum(rng.choice([0.0, 1.0, 1.0, 2.0, 30.0], size=n)).tolist()  # repeats too
        times = [T0 + pd.Timedelta(seconds=s) for s in seconds]
        if n and rng.random() < 0.3:
            times[int(rng.integers(0, n))] = pd.NaT
        ts = pd.Series(pd.to_datetime(times, utc=True)).sample(
            frac=1, random_state=int(rng.integers(1 << 30))
        )
        distinct = ts.dropna().drop_duplicates().sort_values()
        stated = distinct.diff().dropna().median() if len(distinct) > 1 else None
        assert median_interval(ts) == stated
        assert step_seconds(ts) == (
            stated.total_seconds() if stated is not None and stated > pd.Timedelta(0) else 1.0
        )
