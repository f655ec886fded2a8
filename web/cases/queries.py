"""The slow query log's classes of a case, read back: over the whole log, or over a time window.

The ingest stores each slow log's digest (``QueryClass``: a class as
``analyzer.statements.querydigest.queries`` gives it) and each class minute by minute (``QueryMinute``). Over
the whole log a class is its digest as stored. Over a window (the case page's chart zoom, ``?start=&end=``)
its figures are the sums and greatest values of its minutes that overlap the window ``[start, end)`` (whole
minutes: the minute from 12:00:00 counts in a window from 12:00:30, not in one that ends at 12:00:00), and its
first and last seen those minutes' (within the class's own first and last seen); its 95th percentile stays the
whole log's (a percentile cannot be summed from per-minute figures), and so do its example and its extras.

Every answer is bounded: at most ``limit`` classes (``MAX_LIMIT``), by total query time, most first;
each with a sparkline of its query time, at most ``SPARK_POINTS`` buckets of whole minutes over the
window (or the log).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, Max, Min, Sum

from analyzer.isotime import iso_utc
from parsers.passwords import masked
from web.models import Case, QueryClass, QueryMinute

#: Classes a page reads by default, and at most (the rest are counted, not sent).
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
#: Classes the case report carries (``analyze --json``, the API's report, a link's report.json): the
#: digest of a log of thousands of classes, each with an example of up to 4,000 characters, would
#: make the report megabytes; the rest are counted (``query_classes``).
REPORT_LIMIT = 500
#: Buckets of each class's sparkline (none shorter than a minute).
SPARK_POINTS = 60
_MINUTE = timedelta(minutes=1)
#: The figures of a window: SQL aggregate of each ``QueryMinute`` column.
_WINDOW_FIGURES = {
    "count": Sum("queries"),
    "query_time_s": Sum("query_time_s"),
    "query_time_max_s": Max("query_time_max_s"),
    "lock_time_s": Sum("lock_time_s"),
    "lock_time_max_s": Max("lock_time_max_s"),
    "rows_sent": Sum("rows_sent"),
    "rows_sent_max": Max("rows_sent_max"),
    "rows_examined": Sum("rows_examined"),
    "rows_examined_max": Max("rows_examined_max"),
    "first": Min("ts"),
    "last": Max("ts"),
}


#: A class's keys in the order ``analyzer.statements.querydigest.queries`` writes them (PostgreSQL's jsonb
#: keeps
#: its own order), and the order of its figures.
_ORDER = (
    "fingerprint",
    "checksum",
    "count",
    "query_time_s",
    "lock_time_s",
    "rows_sent",
    "rows_examined",
    "first_seen",
    "last_seen",
    "example",
    "extras",
)
_FIGURE_ORDER = ("sum", "avg", "max", "p95")
_EXAMPLE_ORDER = ("statement", "ts", "query_time_s", "schema", "line")


def _ordered(digest: dict[str, object]) -> dict[str, object]:
    """A stored class (``QueryClass.digest``) with its keys in the digest's order."""
    out: dict[str, object] = {}
    for key in _ORDER:
        value = digest.get(key)
        if key not in digest:
            continue
        if isinstance(value, dict) and key.endswith(("_s", "rows_sent", "rows_examined")):
            value = {k: value[k] for k in _FIGURE_ORDER if k in value}
        elif key == "example" and isinstance(value, dict):
            value = {k: value[k] for k in _EXAMPLE_ORDER if k in value}
        out[key] = value
    return out


def class_count(case: Case) -> int:
    """How many classes the case's slow logs have (0: no slow log)."""
    return QueryClass.objects.filter(case=case).count()


def report_queries(case: Case) -> tuple[list[dict[str, object]], int]:
    """The whole log's classes of the case report: the first ``REPORT_LIMIT`` by total query time,
    each its stored digest with its ``host`` and ``member``, and how many classes there are."""
    rows = QueryClass.objects.filter(case=case).order_by("-query_time_s", "number")
    total = rows.count()
    out = [{**_ordered(c.digest), "host": c.host, "member": c.member} for c in rows[:REPORT_LIMIT]]
    return masked(out), total


def case_queries(
    case: Case, *, start: datetime | None = None, end: datetime | None = None, limit: int = DEFAULT_LIMIT
) -> dict[str, object]:
    """The classes of the case's slow logs over the whole log (``start`` and ``end`` None) or a
    window (either given; aware datetimes): ``{"start", "end", "whole_log", "classes", "query_time_s",
    "spark": {"start", "end", "points", "unit"}, "queries": [...]}``. ``classes``: how many classes
    have entries there; ``query_time_s``: their total query time; ``queries``: the first ``limit`` of
    them by total query time, each as ``analyzer.statements.querydigest.queries`` gives a class
    (``fingerprint``, ``checksum``, ``count``, ``query_time_s`` and ``lock_time_s`` ``{sum, avg, max}`` with
    the whole log's ``p95``, ``rows_sent``, ``rows_examined``, ``first_seen``, ``last_seen``,
    ``example``; ``extras`` over the whole log only) plus ``number``, ``host``, ``member``,
    ``share_pct`` (of the total query time there) and ``spark`` (its query time, seconds, per bucket)."""
    limit = max(1, min(limit, MAX_LIMIT))
    whole = start is None and end is None
    if whole:
        items, classes, total = _whole_log(case, limit)
    else:
        items, classes, total = _window(case, start, end, limit)
    spark = _spark_range(case, start, end)
    _add_sparks(case, items, spark)
    for item in items:
        item["share_pct"] = round(100.0 * item["query_time_s"]["sum"] / total, 2) if total else None
    return masked(
        {
            "start": iso_utc(start),
            "end": iso_utc(end),
            "whole_log": whole,
            "classes": classes,
            "query_time_s": round(total, 6),
            "spark": {
                "start": iso_utc(spark[0]) if spark else None,
                "end": iso_utc(spark[1]) if spark else None,
                "points": spark[2] if spark else 0,
                "unit": "s",
            },
            "queries": items,
        }
    )


def _whole_log(case: Case, limit: int) -> tuple[list[dict[str, object]], int, float]:
    rows = QueryClass.objects.filter(case=case)
    totals = rows.aggregate(classes=Count("number"), query_time_s=Sum("query_time_s"))
    items = [
        {"number": c.number, "host": c.host, "member": c.member, **_ordered(c.digest)}
        for c in rows.order_by("-query_time_s", "number")[:limit]
    ]
    return items, totals["classes"], float(totals["query_time_s"] or 0.0)


def _window(
    case: Case, start: datetime | None, end: datetime | None, limit: int
) -> tuple[list[dict[str, object]], int, float]:
    rows = QueryMinute.objects.filter(case=case)
    if start is not None:
        rows = rows.filter(ts__gt=start - _MINUTE)  # the minute that holds ``start`` counts
    if end is not None:
        rows = rows.filter(ts__lt=end)
    totals = rows.aggregate(classes=Count("number", distinct=True), query_time_s=Sum("query_time_s"))
    per_class = list(
        rows.values("number").annotate(**_WINDOW_FIGURES).order_by("-query_time_s", "number")[:limit]
    )
    stored = QueryClass.objects.filter(case=case, number__in=[r["number"] for r in per_class])
    by_number = {c.number: c for c in stored}
    items = [_window_item(r, by_number[r["number"]]) for r in per_class if r["number"] in by_number]
    return items, totals["classes"], float(totals["query_time_s"] or 0.0)


def _figures(total: float, count: int, most: float) -> dict[str, float | None]:
    return {"sum": round(total, 6), "avg": round(total / count, 6) if count else None, "max": round(most, 6)}


def _window_item(row: dict[str, object], stored: QueryClass) -> dict[str, object]:
    """A class over a window: its minutes' sums and greatest values; the rest from its digest."""
    digest = stored.digest
    count = int(row["count"])
    first, last = row["first"], row["last"] + _MINUTE - timedelta(microseconds=1)
    if digest.get("first_seen"):  # the class's own times bound its minutes'
        first = max(first, datetime.fromisoformat(digest["first_seen"]))
    if digest.get("last_seen"):
        last = min(last, datetime.fromisoformat(digest["last_seen"]))
    return {
        "number": stored.number,
        "host": stored.host,
        "member": stored.member,
        "fingerprint": digest["fingerprint"],
        "checksum": digest["checksum"],
        "count": count,
        "query_time_s": {
            **_figures(row["query_time_s"], count, row["query_time_max_s"]),
            "p95": digest["query_time_s"].get("p95"),
        },
        "lock_time_s": {
            **_figures(row["lock_time_s"], count, row["lock_time_max_s"]),
            "p95": digest["lock_time_s"].get("p95"),
        },
        "rows_sent": _figures(row["rows_sent"], count, row["rows_sent_max"]),
        "rows_examined": _figures(row["rows_examined"], count, row["rows_examined_max"]),
        "first_seen": iso_utc(first),
        "last_seen": iso_utc(last),
        "example": _ordered(digest)["example"],
    }


def _spark_range(
    case: Case, start: datetime | None, end: datetime | None
) -> tuple[datetime, datetime, int] | None:
    """The sparklines' span: the window (what the log covers where it leaves a side open) widened to
    whole minutes, cut into at most ``SPARK_POINTS`` buckets of the same whole number of minutes
    (the last may reach past the window); and the number of buckets. None without minutes."""
    if start is None or end is None:
        span = QueryMinute.objects.filter(case=case).aggregate(first=Min("ts"), last=Max("ts"))
        if span["first"] is None:
            return None
        start = start or span["first"]
        end = end or span["last"] + _MINUTE
    if end <= start:
        return None
    first = start.replace(second=0, microsecond=0)
    minutes = max(1, math.ceil((end - first) / _MINUTE))
    step = math.ceil(minutes / SPARK_POINTS)
    points = math.ceil(minutes / step)
    return first, first + points * step * _MINUTE, points


def _add_sparks(
    case: Case, items: list[dict[str, object]], spark: tuple[datetime, datetime, int] | None
) -> None:
    """Each item's ``spark``: its query time (seconds) in each of the span's buckets, one SQL query
    for all of them (``width_bucket`` over the minutes' epoch seconds)."""
    for item in items:
        item["spark"] = []
    if not items or spark is None:
        return
    start, end, points = spark
    sql = f"""
        SELECT number, LEAST(GREATEST(width_bucket(extract(epoch FROM ts), %s, %s, %s), 1), %s) - 1,
               sum(query_time_s)
          FROM {QueryMinute._meta.db_table}
         WHERE case_id = %s AND number = ANY(%s) AND ts >= %s AND ts < %s
         GROUP BY 1, 2"""  # noqa: S608 - the table name is the model's own; values are parameters
    numbers = [int(item["number"]) for item in items]
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [start.timestamp(), end.timestamp(), points, points, case.pk, numbers, start, end],
        )
        found = cursor.fetchall()
    values = {n: [0.0] * points for n in numbers}
    for number, bucket, total in found:
        values[number][bucket] = round(float(total), 6)
    for item in items:
        item["spark"] = values[int(item["number"])]
