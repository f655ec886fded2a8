"""Turn a boolean condition over time into sustained windows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.findings import Window

#: What ``pd.DatetimeIndex.asi8`` holds for NaT.
NAT_NS = np.iinfo(np.int64).min


def as_ns(ts: pd.Series | pd.Index | np.ndarray) -> np.ndarray:
    """Times (datetime64 of any unit, tz-aware or naive) as int64 nanoseconds since the epoch, NaT as
    ``NAT_NS``: the rules compare and subtract these rather than pandas Timestamps, which cost about
    a hundred times more per operation on the short series of a capture."""
    return pd.DatetimeIndex(ts).as_unit("ns").asi8


def distinct_ns(ts: pd.Series | pd.Index | np.ndarray) -> np.ndarray:
    """The distinct times of ``ts`` (``as_ns``), sorted, NaT left out."""
    ns = as_ns(ts)
    if len(ns) and ns.min() == NAT_NS:
        ns = ns[ns != NAT_NS]
    if len(ns) > 1 and not (ns[1:] >= ns[:-1]).all():  # the timeline's frames are sorted already
        ns = np.sort(ns)
    if len(ns) > 1:
        ns = ns[np.r_[True, ns[1:] != ns[:-1]]]
    return ns


def median_step_ns(ts: pd.Series | pd.Index | np.ndarray) -> float | None:
    """The median interval between the distinct times of ``ts``, in nanoseconds (None with fewer
    than two distinct times)."""
    ns = distinct_ns(ts)
    return float(np.median(np.diff(ns))) if len(ns) > 1 else None


def _bools(condition: pd.Series | np.ndarray) -> np.ndarray:
    """``condition`` as a bool array by position; missing values are False."""
    if isinstance(condition, (pd.Series, np.ndarray)) and condition.dtype == np.bool_:
        return np.asarray(condition)
    return pd.Series(condition).fillna(False).astype(bool).to_numpy()


def sustained(
    ts: pd.Series, condition: pd.Series, *, min_samples: int, max_gap: pd.Timedelta | None = None
) -> list[Window]:
    """Windows where ``condition`` holds for at least ``min_samples`` consecutive samples.

    ``ts``: UTC timestamps sorted ascending, aligned by position with ``condition`` (bool; missing
    values are False). A gap between two samples longer than ``max_gap`` (default: 3 x the median
    interval) ends a run: a sustained condition must be seen, not assumed across missing samples.

    >>> t = pd.Series(pd.date_range("2026-01-01", periods=6, freq="1s", tz="UTC"))
    >>> [(w.start.second, w.end.second) for w in sustained(t, pd.Series([0, 1, 1, 1, 0, 1]).astype(bool), min_samples=3)]
    [(1, 3)]
    """
    if len(ts) == 0:
        return []
    t = pd.DatetimeIndex(ts)
    ns = as_ns(t)
    c = _bools(condition)
    steps = np.diff(ns)
    seen = (ns[1:] != NAT_NS) & (ns[:-1] != NAT_NS)  # an interval next to a NaT is no interval
    if max_gap is None:
        known = steps[seen]
        gap_ns = float(np.median(known)) * 3 if len(known) else 3e9
    else:
        gap_ns = pd.Timedelta(max_gap).value
    gap_break = np.r_[True, seen & (steps > gap_ns)]
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
    ns = as_ns(ts)
    mask = np.zeros(len(ns), dtype=bool)
    ordered = ts.is_monotonic_increasing  # the timeline's frames are: each window is then a slice
    for w in windows:
        lo, hi = pd.Timestamp(w.start).value, pd.Timestamp(w.end).value
        if ordered:
            mask[np.searchsorted(ns, lo, side="left") : np.searchsorted(ns, hi, side="right")] = True
        else:
            mask |= (ns >= lo) & (ns <= hi)
    return pd.Series(mask, index=ts.index)
