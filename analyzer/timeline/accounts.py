"""The sessions a processlist does not keep one row each, counted by account (``processlist_accounts``).

``analyzer.timeline.timeline.prepare`` keeps the active sessions and one idle session per snapshot;
the others are counted here by snapshot and account, so that who holds the connections (an
application's pool of idle connections: analyzer/waits/holders/slots.py) is still known. Pure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The client port MySQL appends to Host (``10.0.0.7:51234``): dropped, the host names the client.
CLIENT_PORT_RE = r":\d+$"


def without_port(host: pd.Series) -> pd.Series:
    """``host`` (processlist Host) without the client port (``CLIENT_PORT_RE``), the pattern run once
    per distinct value."""
    codes, uniques = pd.factorize(host.astype("string"), use_na_sentinel=True)
    stripped = pd.Series(uniques, dtype="string").str.replace(CLIENT_PORT_RE, "", regex=True).array
    return pd.Series(stripped.take(codes, allow_fill=True), index=host.index, name=host.name)


#: Columns of ``processlist_accounts`` (``parsers.processlist.ACCOUNT_COLUMNS``).
ACCOUNT_COLUMNS = ("ts", "user", "client", "command", "sessions", "time_min_s", "time_max_s", "time_sum_s")


def counted(counted: pd.DataFrame | None, dropped: pd.DataFrame) -> pd.DataFrame:
    """The sessions not kept one row each, by snapshot and account: what the parser counted
    (``counted``, ``PARSE_OPTIONS``) and the rows ``_sessions_kept`` drops (``dropped``), summed by
    (``ts``, ``user``, ``client`` the Host without its port, ``command``) as ``summed`` sums them
    (``ts``, then the names as they sort, a missing one last): who holds the idle connections, kept
    small (a row per account per snapshot). ``user``, ``client`` and ``command`` are categories,
    ``sessions`` int32, the Time columns float32 (``TIME_COLUMNS``)."""
    parts = [counted[list(ACCOUNT_COLUMNS)]] if counted is not None and len(counted) else []
    if len(dropped) and {"user", "host", "command"} <= set(dropped.columns):
        t = pd.to_numeric(dropped["time_s"], errors="coerce").fillna(0.0).astype("float64")
        parts.append(
            pd.DataFrame(
                {
                    "ts": dropped["ts"],
                    "user": dropped["user"].astype(object),
                    "client": without_port(dropped["host"]).astype(object),
                    "command": dropped["command"].astype(object),
                    "sessions": 1,
                    "time_min_s": t,
                    "time_max_s": t,
                    "time_sum_s": t,
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                c: pd.Series([], dtype="datetime64[ns, UTC]" if c == "ts" else "object")
                for c in ACCOUNT_COLUMNS
            }
        )
    both = pd.concat([p.drop(columns=list(NAME_KEYS)) for p in parts], ignore_index=True)
    for key in NAME_KEYS:  # kept as categories: the names are not hashed again, row by row
        both[key] = _joined([p[key] for p in parts])
    out = summed(both[list(ACCOUNT_COLUMNS)], dropna=False, categories=True)
    return out.astype({"sessions": "int32", **dict.fromkeys(TIME_COLUMNS, "float32")})


#: The Time columns of ``processlist_accounts``: whole seconds as 32-bit floats, exact to 2**24 s
#: (194 days; a sum past it within one part in 2**24), as the parser keeps them.
TIME_COLUMNS = ("time_min_s", "time_max_s", "time_sum_s")

#: The accounts' names, categories in ``processlist_accounts``.
NAME_KEYS = ("user", "client", "command")


#: The columns ``summed`` groups by, in their sort order.
ACCOUNT_KEYS = ("ts", "user", "client", "command")


def summed(rows: pd.DataFrame, *, dropna: bool = True, categories: bool = False) -> pd.DataFrame:
    """``rows`` (``ACCOUNT_COLUMNS``, Time in s) summed by (``ts``, ``user``, ``client``, ``command``):
    ``sessions`` and ``time_sum_s`` summed, ``time_min_s`` the least, ``time_max_s`` the greatest, one
    row per group sorted by the keys, as ``rows.groupby(list(ACCOUNT_KEYS), sort=True, dropna=dropna)
    .agg(...).reset_index()`` gives it (same columns, dtypes and order; a missing key sorts last, or
    its rows are dropped with ``dropna``; NaN skipped by min, max and sum).

    Grouped on each key's codes (``pd.factorize`` with ``sort=True``, as the group-by codes them)
    with one ``lexsort`` and ``reduceat``: a dense capture counts hundreds of thousands of idle
    sessions by account, where pandas' group-by over four keys hashes every string again and took
    half a second. The times summed are whole seconds (processlist ``Time``), exact in any order.
    ``categories``: ``user``, ``client`` and ``command`` come out as categories made from those codes
    (what the timeline keeps), not as the keys' own dtype: the strings are not hashed a second time."""
    codes, levels = [], []
    for key in ACCOUNT_KEYS:
        code, uniques = _factorized(rows[key])
        if not dropna:
            code = np.where(code < 0, len(uniques), code)  # a missing key: a group of its own, last
        codes.append(code)
        levels.append(uniques)
    keep = np.flatnonzero(np.logical_and.reduce([c >= 0 for c in codes]))
    order = keep[np.lexsort([c[keep] for c in reversed(codes)])]
    ordered = [c[order] for c in codes]
    new = np.ones(len(order), dtype=bool)
    if len(order):
        new[1:] = np.logical_or.reduce([c[1:] != c[:-1] for c in ordered])
    starts = np.flatnonzero(new)
    first = order[starts]

    def reduced(column: str, how: np.ufunc) -> np.ndarray:
        values = rows[column].to_numpy()[order]
        if how is np.add and values.dtype.kind == "f":
            values = np.nan_to_num(values, nan=0.0)  # a NaN counts as nothing, as pandas' sum
        return how.reduceat(values, starts, dtype=values.dtype) if len(starts) else values[:0]

    out: dict[str, object] = {}
    for key, code, level in zip(ACCOUNT_KEYS, codes, levels, strict=True):
        picked = np.where(code[first] < len(level), code[first], -1)  # past its values: a missing key
        as_category = categories and key != "ts"
        out[key] = (
            pd.Categorical.from_codes(picked, categories=level)
            if as_category
            else level.array.take(picked, allow_fill=True)
        )
    out |= {
        "sessions": reduced("sessions", np.add),
        "time_min_s": reduced("time_min_s", np.fmin),
        "time_max_s": reduced("time_max_s", np.fmax),
        "time_sum_s": reduced("time_sum_s", np.add),
    }
    return pd.DataFrame(out)


def _joined(names: list[pd.Series]) -> pd.Categorical:
    """``names`` one after the other, as categories. A first part of categories (the parser's
    counted sessions) keeps its codes, the others' names (the few rows dropped) are looked up in its
    categories, those not there added after them: only those few names are hashed."""
    first = names[0].array
    if not isinstance(first, pd.Categorical):
        return pd.Categorical(np.concatenate([np.asarray(n, dtype=object) for n in names]))
    rest = np.concatenate([np.asarray(n, dtype=object) for n in names[1:]]) if len(names) > 1 else None
    if rest is None or not len(rest):
        return first
    categories = first.categories
    codes = categories.get_indexer(rest)
    new = pd.unique(rest[(codes < 0) & pd.notna(rest)])
    if len(new):
        categories = categories.append(pd.Index(new, dtype=categories.dtype))
        codes = categories.get_indexer(rest)
    return pd.Categorical.from_codes(np.concatenate([first.codes, codes]), categories=categories)


def _factorized(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(values, sort=True, use_na_sentinel=True)`` with a category column's values
    sorted as its strings are (not in the order of its categories), from its codes: no string hashed."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return pd.factorize(values, sort=True, use_na_sentinel=True)
    codes = values.cat.codes.to_numpy()
    used = np.zeros(len(values.cat.categories) + 1, dtype=bool)
    used[codes] = True  # a missing value's code (-1) marks the last slot, unused as a category
    present = np.flatnonzero(used[:-1])
    names = values.cat.categories.to_numpy(dtype=object)[present]
    order = np.argsort(names, kind="stable")
    rank = np.full(len(used), -1, dtype=np.intp)
    rank[present[order]] = np.arange(len(order))
    return rank[codes], pd.Index(names[order], dtype=object)
