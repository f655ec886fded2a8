"""The trends as CSV (``GET /api/trends/?export=csv``): one row per bucket, or per repeat customer."""

from __future__ import annotations

import csv
import io

from web.trends.selectors import causes_by_total

#: The columns of a bucket's row before its root causes (one column ``root_cause:<key>`` each).
BUCKET_COLUMNS = (
    "start", "end", "cases", "ready", "failed", "open", "closed",
    "hours_to_ready_p50", "hours_to_ready_p90", "hours_to_close_p50", "hours_to_close_p90",
)  # fmt: skip
REPEAT_COLUMNS = ("customer", "root_cause", "cases", "last_seen", "case_ids")
TABLES = ("buckets", "repeat_customers")


def trends_csv(data: dict[str, object], table: str = "buckets") -> str:
    """``data`` (``web.trends.selectors.trends``) as CSV text with a header row. ``buckets``: the
    fixed columns, then one column per root cause (most cases over the range first), 0 where a bucket
    has none; an empty hour figure is an empty cell. ``repeat_customers``: the case ids joined by
    spaces."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if table == "repeat_customers":
        writer.writerow(REPEAT_COLUMNS)
        for row in data["repeat_customers"]:
            writer.writerow([*(row[c] for c in REPEAT_COLUMNS[:-1]), " ".join(map(str, row["case_ids"]))])
        return out.getvalue()
    causes = causes_by_total(data["buckets"])
    writer.writerow([*BUCKET_COLUMNS, *(f"root_cause:{k}" for k in causes)])
    for bucket in data["buckets"]:
        fixed = ["" if bucket[c] is None else bucket[c] for c in BUCKET_COLUMNS]
        writer.writerow([*fixed, *(bucket["root_causes"].get(k, 0) for k in causes)])
    return out.getvalue()
