"""Turn a boolean condition over time into sustained windows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.findings import Window


def sustained(
    ts: pd.Series, condition: pd.Series, *, min_samples: int, max_gap: pd.Timedelta | None = None
) -> list[Window]:
    """Windows where ``condition`` holds for at least ``min_samples`` consecutive samples.

    ``ts``: UTC timestamps sorted ascending, aligned with ``condition`` (bool). A gap between two
    samples longer than ``max_gap`` (default: 3 x the median interval) ends a run: a sustained
    condition must be seen, not assumed across missing samples.

    >>> t = pd.Series(pd.date_range("2026-01-01", periods=6, freq="1s", tz="UTC"))
    >>> [(w.start.second, w.end.second) for w in sustained(t, pd.Series([0, 1, 1, 1, 0, 1]).astype(bool), min_samples=3)]
    [(1, 3)]
    """
    if len(ts) == 0:
        return []
    t = pd.to_datetime(ts).reset_index(drop=True)
    c = pd.Series(condition).reset_index(drop=True).fillna(False).astype(bool).to_numpy()
    if max_gap is None:
        diffs = t.diff().dropna()
        max_gap = diffs.median() * 3 if len(diffs) else pd.Timedelta(seconds=3)
    gap_break = np.r_[True, (t.diff() > max_gap).to_numpy()[1:]]
    # A run starts where the condition holds after a sample where it did not, or after a gap; it
    # lasts while the condition holds and no gap comes.
    starts = c & (gap_break | ~np.r_[False, c[:-1]])
    first = np.flatnonzero(starts)
    lengths = np.bincount(np.cumsum(starts)[c], minlength=len(first) + 1)[1:]
    long_enough = lengths >= min_samples
    return [
        Window(t[int(a)], t[int(a + n - 1)])
        for a, n in zip(first[long_enough], lengths[long_enough], strict=True)
    ]


def within(ts: pd.Series, windows: list[Window]) -> pd.Series:
    """Boolean mask of the ``ts`` values (UTC) that fall inside any of ``windows`` (compared as
    nanoseconds since the epoch: millions of session rows are tested per rule)."""
    ns = pd.DatetimeIndex(ts).as_unit("ns").asi8
    mask = np.zeros(len(ns), dtype=bool)
    ordered = ts.is_monotonic_increasing  # the timeline's frames are: each window is then a slice
    for w in windows:
        lo, hi = pd.Timestamp(w.start).value, pd.Timestamp(w.end).value
        if ordered:
            mask[np.searchsorted(ns, lo, side="left") : np.searchsorted(ns, hi, side="right")] = True
        else:
            mask |= (ns >= lo) & (ns <= hi)
    return pd.Series(mask, index=ts.index)
