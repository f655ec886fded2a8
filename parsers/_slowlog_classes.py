"""The slow log's classes, block by block: the fields summed or counted per class and the digest
that folds each block's entries into per-class sums, percentiles, first and last seen and one example
(pt-query-digest 3.2's ``--group-by fingerprint`` report), the per-minute series and the clients.

Input: the entries frame of ``parsers.slowlog`` (one row per entry: ``ts``, ``fingerprint``,
``query_time_s`` and ``lock_time_s`` in seconds, ``rows_sent``, ``rows_examined``, the extra columns of
``EXTRA_COLUMNS``). Used by ``parsers.slowlog.parse`` only. Source: pt-query-digest(1), "ATTRIBUTES";
MySQL 8.4 Reference Manual, "The Slow Query Log"; MariaDB "Slow Query Log Extended Statistics".
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from analyzer.statements.fingerprint import fingerprint_all
from analyzer.statements.querydigest import bucket_of, pct_95

#: An example statement is kept up to this many characters (a multi-row INSERT can be megabytes).
EXAMPLE_CHARS = 4000
#: Numeric fields summed per class, by their spelling in the log (Percona Server, MariaDB, MySQL 8
#: ``log_slow_extra``) -> column.
EXTRA_FIELDS = {
    b"Rows_affected": "rows_affected",
    b"Bytes_sent": "bytes_sent",
    b"Tmp_tables": "tmp_tables",
    b"Created_tmp_tables": "tmp_tables",
    b"Tmp_disk_tables": "tmp_disk_tables",
    b"Created_tmp_disk_tables": "tmp_disk_tables",
    b"InnoDB_IO_r_ops": "innodb_io_r_ops",
    b"InnoDB_IO_r_wait": "innodb_io_r_wait_s",
    b"InnoDB_rec_lock_wait": "innodb_rec_lock_wait_s",
    b"InnoDB_queue_wait": "innodb_queue_wait_s",
    b"InnoDB_pages_distinct": "innodb_pages_distinct",
}
#: Yes/No fields counted per class (the entries saying ``Yes``).
FLAG_FIELDS = {
    b"Full_scan": "full_scans",
    b"Filesort": "filesorts",
    b"Tmp_table_on_disk": "tmp_tables_on_disk",
}
EXTRA_COLUMNS = tuple(dict.fromkeys([*EXTRA_FIELDS.values(), *FLAG_FIELDS.values()]))
#: Per-class sums and greatest values taken from each block's entries (column -> (entry column, how)).
_SUMS = ("query_time_s", "lock_time_s", "rows_sent", "rows_examined")
_MAXES = {
    "query_time_max_s": "query_time_s",
    "lock_time_max_s": "lock_time_s",
    "rows_sent_max": "rows_sent",
    "rows_examined_max": "rows_examined",
}
_EXAMPLE = ("statement", "ts", "schema", "user", "host", "line_no", "line_end", "query_time_s")


class _Digest:
    """The classes of every block read so far: per class its sums, greatest and least values, first
    and last seen, example, and pt-query-digest's buckets of its query times; the per-minute series,
    each class's minutes and the clients, block by block. Held: one row per class, per minute, per
    class and minute, and per client."""

    def __init__(self) -> None:
        self.classes: dict[str, dict[str, object]] = {}
        self.buckets: Counter[int] = Counter()
        self.lock_buckets: Counter[int] = Counter()
        self.minutes: list[pd.DataFrame] = []
        self.class_minutes: list[pd.DataFrame] = []
        self.clients: list[pd.DataFrame] = []
        self.entries = 0

    def add(self, frame: pd.DataFrame) -> None:
        if not len(frame):
            return
        self.entries += len(frame)
        prints = fingerprint_all(frame["statement"].tolist())
        frame = frame.assign(fingerprint=prints)
        gids = self._classes(frame)
        minute = frame["ts"].dt.floor("min")
        self.class_minutes.append(_per_class_minute(frame.assign(ts=minute, class_no=gids)))
        self.minutes.append(
            frame.assign(ts=minute, queries=1)
            .groupby("ts", sort=False)
            .agg(
                queries=("queries", "sum"),
                line_no=("line_no", "min"),
                line_end=("line_end", "max"),
                **{c: (c, "sum") for c in _SUMS},
            )
            .reset_index()
        )
        self.clients.append(
            frame.assign(queries=1)
            .groupby(["user", "host", "ip", "schema"], sort=False)
            .agg(queries=("queries", "sum"), ts=("ts", "min"), line_no=("line_no", "min"))
            .reset_index()
        )
        if len(self.minutes) > 64:  # fold the blocks' rows so they stay one per minute and client
            self.minutes = [_fold_minutes(self.minutes)]
            self.class_minutes = [_per_class_minute(pd.concat(self.class_minutes, ignore_index=True))]
            self.clients = [_fold_clients(self.clients)]

    def _classes(self, frame: pd.DataFrame) -> np.ndarray:
        """Fold a block's entries into the classes; returns each entry's class number (its ``gid``)."""
        extras = [c for c in EXTRA_COLUMNS if c in frame]
        grouped = frame.groupby("fingerprint", sort=False)
        agg = grouped.agg(
            queries=("query_time_s", "size"),
            query_time_min_s=("query_time_s", "min"),
            lock_time_min_s=("lock_time_s", "min"),
            first_seen=("ts", "min"),
            last_seen=("ts", "max"),
            **{c: (c, "sum") for c in _SUMS},
            **{m: (c, "max") for m, c in _MAXES.items()},
        )
        if extras:  # a sum of nothing stays missing (the field is not in the log)
            agg = agg.join(grouped[extras].sum(min_count=1))
        # the example: the longest entry, the last of equals (pt-query-digest's ``>=``)
        longest = frame.iloc[::-1].groupby("fingerprint", sort=False)["query_time_s"].idxmax()
        examples = frame.loc[longest.to_numpy(), list(_EXAMPLE)].set_index(longest.index)
        codes = np.empty(len(frame), dtype=np.int64)
        for fp, row in zip(agg.index.tolist(), agg.to_dict("records"), strict=True):
            known = self.classes.get(fp)
            ex = examples.loc[fp]
            if known is None:
                known = self.classes[fp] = {
                    "gid": len(self.classes),
                    "fingerprint": fp,
                    **row,
                    **_example(ex),
                }
                continue
            _merge(known, row, ex, extras)
        gids = frame["fingerprint"].map({fp: self.classes[fp]["gid"] for fp in agg.index.tolist()})
        gid = gids.to_numpy(dtype=np.int64) * 1000
        for counter, column in ((self.buckets, "query_time_s"), (self.lock_buckets, "lock_time_s")):
            codes[:] = gid + bucket_of(frame[column].to_numpy())
            uniq, counts = np.unique(codes, return_counts=True)
            counter.update(dict(zip(uniq.tolist(), counts.tolist(), strict=True)))
        return gid // 1000

    def classes_frame(self) -> pd.DataFrame:
        by_gid: dict[str, dict[int, dict[int, int]]] = {"query_time": {}, "lock_time": {}}
        for name, counter in (("query_time", self.buckets), ("lock_time", self.lock_buckets)):
            for code, count in counter.items():
                by_gid[name].setdefault(code // 1000, {})[code % 1000] = count
        rows = []
        for c in self.classes.values():
            row = dict(c)
            for name, buckets in by_gid.items():
                row[f"{name}_p95_s"] = pct_95(
                    buckets.get(int(c["gid"]), {}),
                    int(c["queries"]),
                    float(c[f"{name}_min_s"]),
                    float(c[f"{name}_max_s"]),
                )
            rows.append(row)
        return _classes_frame(rows)


def _example(ex: pd.Series) -> dict[str, object]:
    statement = str(ex["statement"])
    return {
        "example": statement[:EXAMPLE_CHARS],
        "example_ts": ex["ts"],
        "schema": ex["schema"],
        "user": ex["user"],
        "host": ex["host"],
        "line_no": int(ex["line_no"]),
        "line_end": int(ex["line_end"]),
        "example_query_time_s": float(ex["query_time_s"]),
    }


def _merge(known: dict[str, object], row: dict[str, object], ex: pd.Series, extras: list[str]) -> None:
    """A block's figures of a class (``row``, its example ``ex``) added to what is ``known``."""
    known["queries"] = int(known["queries"]) + int(row["queries"])
    for c in _SUMS:
        known[c] = known[c] + row[c]
    for m in _MAXES:
        known[m] = max(known[m], row[m])
    for c in ("query_time_min_s", "lock_time_min_s"):
        known[c] = min(known[c], row[c])
    for c in extras:
        if not pd.isna(row[c]):
            known[c] = row[c] if pd.isna(known.get(c, np.nan)) else known[c] + row[c]
    for c, pick in (("first_seen", min), ("last_seen", max)):
        seen = [t for t in (known[c], row[c]) if not pd.isna(t)]
        known[c] = pick(seen) if seen else pd.NaT
    if float(ex["query_time_s"]) >= float(known["example_query_time_s"]):
        known.update(_example(ex))


CLASS_COLUMNS = (
    "fingerprint", "queries", "query_time_s", "query_time_max_s", "query_time_min_s", "query_time_p95_s",
    "lock_time_s", "lock_time_max_s", "lock_time_p95_s", "rows_sent", "rows_sent_max", "rows_examined",
    "rows_examined_max", *EXTRA_COLUMNS, "first_seen", "last_seen", "example_ts", "example", "schema", "user", "host",
    "line_no", "line_end",
)  # fmt: skip
_INTS = ("queries", "rows_sent", "rows_sent_max", "rows_examined", "rows_examined_max", "line_no", "line_end")


def _classes_frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows).reindex(columns=list(CLASS_COLUMNS))
    for c in ("first_seen", "last_seen", "example_ts"):
        frame[c] = (
            pd.to_datetime(frame[c]).dt.tz_localize("UTC")
            if len(frame)
            else frame[c].astype("datetime64[ns, UTC]")
        )
    for c in EXTRA_COLUMNS:
        frame[c] = frame[c].astype("float64")
    for c in (
        "query_time_s",
        "query_time_max_s",
        "query_time_min_s",
        "query_time_p95_s",
        "lock_time_s",
        "lock_time_max_s",
        "lock_time_p95_s",
    ):
        frame[c] = frame[c].astype("float64")
    frame = frame.astype({c: "int64" for c in _INTS})
    for c in ("fingerprint", "example", "schema", "user", "host"):
        frame[c] = frame[c].astype(object)
    return frame


def _fold_minutes(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return (
        pd.concat(parts, ignore_index=True)
        .groupby("ts", sort=True)
        .agg(
            queries=("queries", "sum"),
            line_no=("line_no", "min"),
            line_end=("line_end", "max"),
            **{c: (c, "sum") for c in _SUMS},
        )
        .reset_index()
    )


#: The figures of a class in a minute (``slowlog_class_minutes``): sums, and greatest values.
_MINUTE_MAXES = ("query_time_max_s", "lock_time_max_s", "rows_sent_max", "rows_examined_max")
CLASS_MINUTE_COLUMNS = ("ts", "class_no", "queries", *_SUMS, *_MINUTE_MAXES)


def _per_class_minute(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows by minute (``ts``) and class (``class_no``) folded into one each, by minute then class:
    entries (``queries`` absent: one each) or rows already folded (their sums and greatest added)."""
    if "queries" in frame:
        sums = {c: (c, "sum") for c in ("queries", *_SUMS)}
        maxes = {m: (m, "max") for m in _MINUTE_MAXES}
    else:
        sums = {"queries": ("query_time_s", "size"), **{c: (c, "sum") for c in _SUMS}}
        maxes = {m: (c, "max") for m, c in _MAXES.items()}
    return frame.groupby(["ts", "class_no"], sort=True).agg(**sums, **maxes).reset_index()


def _class_minutes_frame(parts: list[pd.DataFrame]) -> pd.DataFrame:
    if not parts:
        frame = pd.DataFrame({c: pd.Series([], dtype="int64") for c in CLASS_MINUTE_COLUMNS})
        frame["ts"] = pd.Series([], dtype="datetime64[ns]")
    else:
        frame = _per_class_minute(pd.concat(parts, ignore_index=True))
    frame = frame.reindex(columns=list(CLASS_MINUTE_COLUMNS))
    frame["ts"] = pd.to_datetime(frame["ts"]).dt.tz_localize("UTC")
    ints = ("class_no", "queries", "rows_sent", "rows_sent_max", "rows_examined", "rows_examined_max")
    floats = ("query_time_s", "query_time_max_s", "lock_time_s", "lock_time_max_s")
    return frame.astype({**{c: "int64" for c in ints}, **{c: "float64" for c in floats}})


def _fold_clients(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return (
        pd.concat(parts, ignore_index=True)
        .groupby(["user", "host", "ip", "schema"], sort=False)
        .agg(queries=("queries", "sum"), ts=("ts", "min"), line_no=("line_no", "min"))
        .reset_index()
    )
