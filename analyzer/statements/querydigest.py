"""The query digest of a slow query log: its statements grouped by class, as pt-query-digest groups them.

A class is one fingerprint (``analyzer.statements.fingerprint``); its ``checksum`` is pt-query-digest's
(Percona Toolkit 3.0.11 and later, ``Transformers::make_checksum``: the MD5 of the fingerprint in 32
upper-case hexadecimal digits; before 3.0.11 it was the last 16 of them). The 95th percentile is
pt-query-digest's too: values are counted in 1,000 buckets growing by 5 % from 1 microsecond
(``EventAggregator::bucket_idx``), and the percentile is the lower bound of the bucket that holds it
(``EventAggregator::_calc_metrics``), so it matches pt's report to the microsecond rather than being
the exact 95th value.

``parsers.slowlog`` folds the log into per-class sums while it reads (``bucket_of`` gives its
histogram buckets, ``pct_95`` the percentile from them); ``queries`` turns its ``slowlog_classes``
frame into the ``"queries"`` list of the JSON report, sorted by total ``Query_time``, most first.

Source: percona-toolkit 3.2.1 ``bin/pt-query-digest`` (packages EventAggregator, Transformers,
JSONReportFormatter), read in Debian's percona-toolkit 3.2.1-1.

>>> checksum("select c from sbtest? where id=?")
'E81D0B3DB4FB31BC558CAEF5F387E929'
>>> int(bucket_of(np.array([0.0, 0.000001, 1.0]))[2]), pct_95({bucket_of(np.array([0.5]))[0]: 1}, 1, 0.5, 0.5)
(284, 0.5)
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd

from analyzer.isotime import iso_utc

#: EventAggregator's buckets: 1,000 of them, each 5 % wider than the one before, from 1 us.
BUCKET_GROWTH = 1.05
BUCKETS = 1000
BUCKET_MIN = 0.000001
_BASE_LOG = math.log(BUCKET_GROWTH)
_BASE_OFFSET = abs(1 - math.log(BUCKET_MIN) / _BASE_LOG)  # 284.1617969, as pt computes it
#: The lower bound of each bucket (``bucket_value``): what pt reports as a percentile.
BUCKET_VALUES = np.array([0.0] + [BUCKET_GROWTH ** (b - 1) * BUCKET_MIN for b in range(1, BUCKETS)])


def checksum(fingerprint: str) -> str:
    """pt-query-digest's checksum of a class: the MD5 of its fingerprint, 32 upper-case hex digits."""
    return hashlib.md5(fingerprint.encode("utf-8")).hexdigest().upper()  # noqa: S324 - pt's id, not security


def bucket_of(values: np.ndarray) -> np.ndarray:
    """pt-query-digest's bucket (0..999, int64) of each value (seconds, or any count): 0 below 1 us,
    else ``int(284.16 + log(v) / log(1.05))``, at most 999."""
    values = np.asarray(values, dtype="float64")
    out = np.zeros(len(values), dtype="int64")
    big = values >= BUCKET_MIN
    if big.any():
        out[big] = np.minimum((_BASE_OFFSET + np.log(values[big]) / _BASE_LOG).astype("int64"), BUCKETS - 1)
    return out


def pct_95(buckets: dict[int, int], count: int, lowest: float, highest: float) -> float:
    """pt-query-digest's 95th percentile of ``count`` values whose buckets are ``buckets`` (bucket ->
    values in it) and whose least and greatest are ``lowest`` and ``highest``: the greatest value
    when there are one or two values or all are equal; else, counting down from the top bucket, the
    lower bound of the first bucket past the top 5 % (all of them under 10 values)."""
    if count <= 2 or highest == lowest:
        return highest
    cutoff = int(count * 0.95) if count >= 10 else count
    top = count - cutoff
    seen = 0
    for bucket in sorted(buckets, reverse=True):
        seen += buckets[bucket]
        if seen > top:
            return float(BUCKET_VALUES[bucket])
    return 0.0


#: The columns of ``slowlog_classes`` written in a query's ``"metrics"``, by their JSON name.
METRICS = {
    "query_time_s": ("query_time_s", "query_time_max_s", "query_time_p95_s"),
    "lock_time_s": ("lock_time_s", "lock_time_max_s", "lock_time_p95_s"),
    "rows_sent": ("rows_sent", "rows_sent_max"),
    "rows_examined": ("rows_examined", "rows_examined_max"),
}
#: Further per-class sums written when the log has them (Percona Server, MariaDB, MySQL 8 extras).
EXTRAS = (
    "rows_affected", "bytes_sent", "tmp_tables", "tmp_disk_tables", "full_scans", "filesorts", "tmp_tables_on_disk",
    "innodb_io_r_ops", "innodb_io_r_wait_s", "innodb_rec_lock_wait_s", "innodb_queue_wait_s",
    "innodb_pages_distinct",
)  # fmt: skip


def _number(value: object) -> float | int | None:
    if value is None or pd.isna(value):
        return None
    return int(value) if isinstance(value, int | np.integer) else round(float(value), 6)


def queries(classes: pd.DataFrame, *, limit: int | None = None) -> list[dict[str, object]]:
    """The ``"queries"`` of the JSON report from a ``slowlog_classes`` frame (``parsers.slowlog``):
    one dict per class, by total ``Query_time``, most first (``limit``: the first that many).

    Each: ``fingerprint``, ``checksum``, ``count``, ``query_time_s`` and ``lock_time_s`` (``sum``,
    ``avg``, ``max``, ``p95``), ``rows_sent`` and ``rows_examined`` (``sum``,
    ``avg``, ``max``), ``first_seen`` and ``last_seen`` (ISO 8601 UTC), ``example`` (``statement``,
    ``ts``, ``query_time_s``, ``schema``, ``line``), and the ``EXTRAS`` sums the log has.
    """
    ranked = classes.sort_values(["query_time_s", "queries"], ascending=[False, False], kind="stable")
    if limit is not None:
        ranked = ranked.head(limit)
    out: list[dict[str, object]] = []
    for row in ranked.to_dict("records"):
        count = int(row["queries"])
        item: dict[str, object] = {
            "fingerprint": row["fingerprint"],
            "checksum": checksum(str(row["fingerprint"])),
            "count": count,
        }
        for name, (total, most, *p95) in METRICS.items():
            item[name] = {
                "sum": _number(row[total]),
                "avg": _number(row[total] / count) if count else None,
                "max": _number(row[most]),
                **({"p95": _number(row[p95[0]])} if p95 else {}),
            }
        item["first_seen"] = iso_utc(row["first_seen"])
        item["last_seen"] = iso_utc(row["last_seen"])
        item["example"] = {
            "statement": row["example"],
            "ts": iso_utc(row["example_ts"]),
            "query_time_s": _number(row["query_time_max_s"]),
            "schema": row["schema"] or None,
            "line": int(row["line_no"]),
        }
        extras = {name: _number(row[name]) for name in EXTRAS if name in row and not pd.isna(row[name])}
        if extras:
            item["extras"] = extras
        out.append(item)
    return out
