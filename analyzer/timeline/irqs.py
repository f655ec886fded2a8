"""The ``interrupts`` frame (/proc/interrupts, pt-stalk -interrupts) made small: the IRQ_LINES_KEPT busiest
lines per CPU kept, the others summed per CPU and snapshot under OTHER_IRQ (``fold_minor_irqs``, called by
``analyzer.timeline.timeline.prepare``). Source: Linux kernel documentation, "/proc/interrupts"
(Documentation/filesystems/proc.rst).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: /proc/interrupts lines kept per CPU (by total rate, in each parsed piece); the others are summed per
#: CPU under OTHER_IRQ, so per-CPU totals stay exact while the frame stays small (a 64-CPU server
#: with 100 lines gives 6,400 rows a snapshot).
IRQ_LINES_KEPT = 16
OTHER_IRQ = "(other)"


def _line_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` plus one (0 for missing), and the distinct names they stand for (code 1 is
    the first; an object array of text; some may be unused): a category's own codes when it is one
    (a few IRQ names over millions of rows: not hashed), else those of its values as text, sorted."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        codes, names = pd.factorize(values.astype("string"), sort=True, use_na_sentinel=True)
        return codes + 1, np.asarray(names, dtype=object)
    codes = values.cat.codes.to_numpy().astype(np.intp)
    codes += 1
    return codes, np.asarray(values.cat.categories.astype("string"), dtype=object)


def _busiest(codes: np.ndarray, names: np.ndarray, per_s: np.ndarray) -> np.ndarray:
    """The codes (as :func:`_line_codes` gives them, minus one) of the IRQ_LINES_KEPT lines with the
    largest total ``per_s``, ties to the first by name; missing names (code 0) are never kept."""
    rows = np.bincount(codes, minlength=len(names) + 1)[1:]
    # each bin sums its rows in row order
    totals = np.bincount(codes, weights=_zero_nan(per_s), minlength=len(names) + 1)[1:]
    used = np.flatnonzero(rows)
    by_name = used[np.argsort(names[used].astype(str), kind="stable")]
    return by_name[np.argsort(-totals[by_name], kind="stable")[:IRQ_LINES_KEPT]]


def fold_minor_irqs(it: pd.DataFrame) -> pd.DataFrame:
    """Keep the IRQ_LINES_KEPT busiest lines per CPU; sum the others per (ts, cpu) as OTHER_IRQ.

    The busiest lines are those with the largest total ``per_s`` (ties: the first by name); a folded
    row's ``per_s`` is the sum of its lines' (NaN when all are NaN), its ``line_no`` the first of
    them. Rows come out sorted by (``ts``, ``line_no``), in narrow types: this frame has a row per
    CPU per line per snapshot. NumPy throughout: a one-hour 64-CPU capture has 18 M such rows.
    """
    codes, names = _line_codes(it["irq"])
    per_s = it["per_s"].to_numpy(dtype="float64", na_value=np.nan)
    top = _busiest(codes, names, per_s)
    kept_code = np.zeros(len(names) + 1, dtype=bool)  # slot 0: a missing name is folded
    kept_code[top + 1] = True
    keep = kept_code[codes]
    ts = it["ts"].to_numpy(dtype="datetime64[ns]").view("int64")
    cpu = it["cpu"].to_numpy(dtype="int64")
    line_no = it["line_no"].to_numpy(dtype="int64")
    folding = not keep.all()
    out_ts, out_cpu, out_line, out_per_s = ts[keep], cpu[keep], line_no[keep], per_s[keep]
    # the category of the result: the kept names (every code names a line present), and OTHER_IRQ
    # when anything is folded
    categories = sorted([*names[top].tolist(), *([OTHER_IRQ] if folding else [])])
    position = np.full(len(names) + 1, -1, dtype="int64")  # slot 0: missing stays missing
    position[top + 1] = [categories.index(n) for n in names[top]]
    out_irq = position[codes[keep]]
    if folding:
        rows, starts, line_order = _fold_groups(ts, cpu, line_no, keep)
        values = per_s[rows]
        zeroed = _zero_nan(values)
        sums = np.add.reduceat(zeroed, starts)
        if zeroed is not values:  # NaN somewhere: a group of NaN alone sums to NaN
            sums[~np.logical_or.reduceat(~np.isnan(values), starts)] = np.nan
        first = rows[starts]
        out_ts = np.concatenate([out_ts, ts[first]])
        out_cpu = np.concatenate([out_cpu, cpu[first]])
        # a group's first line: that of its first row when its rows are in line order
        lines = line_no[first] if line_order else np.minimum.reduceat(line_no[rows], starts)
        out_line = np.concatenate([out_line, lines])
        out_per_s = np.concatenate([out_per_s, sums])
        out_irq = np.concatenate([out_irq, np.full(len(starts), categories.index(OTHER_IRQ))])
    order = np.lexsort((out_line, out_ts))
    columns = {
        "ts": pd.DatetimeIndex(out_ts[order].view("datetime64[ns]"), tz="UTC"),
        "line_no": out_line[order].astype("int32"),
        "irq": pd.Categorical.from_codes(out_irq[order], categories=pd.Index(categories, dtype="string")),
        "cpu": out_cpu[order].astype("int16"),
        "per_s": out_per_s[order].astype("float32"),
    }
    return pd.DataFrame({c: columns[c] for c in it.columns if c in columns})


def _zero_nan(values: np.ndarray) -> np.ndarray:
    """``np.nan_to_num(values)`` (NaN as 0, infinities as the largest floats) in fewer passes: ``values``
    itself when all are finite (rates are, but in a first snapshot: NaN), else a copy."""
    if np.isfinite(values).all():
        return values
    out = np.where(np.isnan(values), 0.0, values)
    return out if np.isfinite(out).all() else np.nan_to_num(values)


def _fold_groups(
    ts: np.ndarray, cpu: np.ndarray, line_no: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The folded rows (where ``keep``, a bool per row of the frame's ``ts``, ``cpu``, ``line_no``
    arrays, is False) grouped by (ts, cpu): their positions in the order that puts each group's rows
    together (in row order), and where each group starts in it. Groups follow one another as
    ``groupby(sort=False)`` numbers them (by first appearance), or, when the frame is in (ts, line)
    order with the CPUs of each line ascending (as parsed), by (ts, cpu): the same groups, in an
    order that the final sort by (ts, line) undoes alike, and found by counting instead of hashing
    (:func:`_snapshot_groups` when every snapshot has the same rows). Third: whether the rows are
    in line order then, so that a group's first row has its first line."""
    same_line = line_no[1:] == line_no[:-1]
    in_order = bool(
        (ts[1:] >= ts[:-1]).all()
        and (line_no[1:] >= line_no[:-1]).all()
        and not (same_line & (cpu[1:] <= cpu[:-1])).any()
    )
    if in_order:
        grouped = _snapshot_groups(ts, cpu, keep)
        if grouped is not None:
            return *grouped, True
        rest = np.flatnonzero(~keep)
        rest_ts, rest_cpu = ts[rest], cpu[rest]
        low, span = int(rest_cpu.min()), int(rest_cpu.max()) - int(rest_cpu.min()) + 1
        new = np.empty(len(rest), dtype=bool)
        new[0] = True
        np.not_equal(rest_ts[1:], rest_ts[:-1], out=new[1:])
        key = (np.cumsum(new) - 1) * span + (rest_cpu - low)
    else:
        rest = np.flatnonzero(~keep)
        rest_ts, rest_cpu = ts[rest], cpu[rest]
        low, span = int(rest_cpu.min()), int(rest_cpu.max()) - int(rest_cpu.min()) + 1
        snap = pd.factorize(rest_ts)[0].astype("int64")
        key, _ = pd.factorize(snap * span + rest_cpu - low)
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.diff(key[order], prepend=-1))
    return rest[order], starts, in_order


def _snapshot_groups(
    ts: np.ndarray, cpu: np.ndarray, keep: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_fold_groups` of a frame in time order whose snapshots (runs of one ``ts``, each later
    than the one before) all have the same number of rows, the same CPUs and the same rows kept, as
    /proc/interrupts gives them: the groups of the first snapshot, found once, repeated for every
    snapshot. None when the snapshots differ."""
    width = int(np.searchsorted(ts, ts[0], side="right"))  # the rows of the first time
    if len(ts) % width:
        return None
    snaps = len(ts) // width
    t = ts.reshape(snaps, width)
    if (
        (t[:, 0] != t[:, -1]).any()
        or (t[1:, 0] <= t[:-1, -1]).any()
        or not (cpu.reshape(snaps, width) == cpu[:width]).all()
        or not (keep.reshape(snaps, width) == keep[:width]).all()
    ):
        return None
    rest = np.flatnonzero(~keep[:width])
    rest = rest[np.argsort(cpu[rest], kind="stable")]  # by CPU, in row order within a CPU
    grouped = cpu[rest]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    base = np.arange(snaps, dtype=np.int64)[:, None]
    return (base * width + rest).ravel(), (base * len(rest) + starts).ravel()
