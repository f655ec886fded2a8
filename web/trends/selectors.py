"""The numbers of the trends page and of ``GET /api/trends/``: a team's cases bucketed by the week (or
day) they were uploaded, counted by status and state, their verdicts' root causes, the customers who
came back with the same cause, and how long the cases took to become ready and to close.

Everything is aggregated in PostgreSQL (``GROUP BY date_trunc``, ``percentile_cont``) over the cases of
``cases_for(user)`` (the one access rule): the rows of 10,000 cases never reach Python. The index
``case_trends_idx`` (team, created_at, with the columns read here included) lets PostgreSQL answer from
the index alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlencode

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Aggregate, Count, F, FloatField, Func, Max, Q, QuerySet
from django.db.models.functions import Trunc, Upper
from django.http import Http404
from django.utils import timezone

from web.cases.selectors import cases_for, teams_of
from web.models import Case, CaseStatus

#: The ranges the page offers, in weeks back from the current week (a quarter = 13 weeks).
RANGE_WEEKS = (4, 13, 52)
DEFAULT_WEEKS = 13
#: A custom range longer than this is refused: 5 years of days would be 1,800 buckets to draw.
MAX_DAYS = 5 * 366
MAX_DAY_BUCKETS = 400
#: Repeat customers listed at most (most cases first), and recent cases linked per row.
REPEAT_LIMIT = 50
REPEAT_CASE_IDS = 5
SECONDS_PER_HOUR = 3600.0
HOURS_FIELDS = ("hours_to_ready_p50", "hours_to_ready_p90", "hours_to_close_p50", "hours_to_close_p90")


@dataclass(frozen=True, slots=True)
class TrendRange:
    """What the trends cover: cases uploaded on the UTC days ``since`` to ``until`` (inclusive), in
    buckets of a ``week`` (ISO weeks, from Monday) or a ``day``, of one team (``team``: its id) or of
    every team of the user (``team`` None)."""

    since: date
    until: date
    by: str = "week"
    team: int | None = None

    @classmethod
    def last_weeks(cls, weeks: int, *, today: date, by: str = "week", team: int | None = None) -> TrendRange:
        """The last ``weeks`` ISO weeks up to ``today``, the current one included."""
        monday = today - timedelta(days=today.weekday())
        return cls(since=monday - timedelta(weeks=weeks - 1), until=today, by=by, team=team)

    def check(self) -> str:
        """Why the range cannot be served ("" when it can)."""
        if self.until < self.since:
            return "until is before since."
        if (self.until - self.since).days > MAX_DAYS:
            return f"The range is longer than {MAX_DAYS} days."
        if self.by == "day" and (self.until - self.since).days >= MAX_DAY_BUCKETS:
            return f"Days are counted over {MAX_DAY_BUCKETS} days at most: choose weeks."
        return ""

    def buckets(self) -> list[tuple[date, date]]:
        """Every bucket of the range: (its first day, its last day), both within the range."""
        step = timedelta(days=7 if self.by == "week" else 1)
        start = self.since - timedelta(days=self.since.weekday()) if self.by == "week" else self.since
        out = []
        while start <= self.until:
            out.append((start, min(start + step - timedelta(days=1), self.until)))
            start += step
        return out


class PercentileCont(Aggregate):
    """PostgreSQL's ``percentile_cont(fraction) WITHIN GROUP (ORDER BY expression)``: the continuous
    percentile of a group (NULLs ignored; NULL for a group with no value)."""

    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, fraction: float, **extra) -> None:  # noqa: ANN001 - an expression
        super().__init__(expression, fraction=float(fraction), **extra)


def _hours(end: str) -> Func:
    """Hours from upload (``created_at``) to the column ``end``."""
    return Func(
        F(end) - F("created_at"),
        template=f"EXTRACT(EPOCH FROM %(expressions)s) / {SECONDS_PER_HOUR}",
        output_field=FloatField(),
    )


#: Ready time: ``ingested_at`` is stamped in the transaction that publishes the analysis and turns
#: the case ready (web/ingest/pipeline.py), so only ready cases are timed by it.
_READY = Q(status=CaseStatus.READY, ingested_at__isnull=False)
_CLOSED = Q(closed_at__isnull=False)


def _cases(user, r: TrendRange) -> QuerySet[Case]:
    lo = datetime.combine(r.since, time.min, tzinfo=UTC)
    hi = datetime.combine(r.until + timedelta(days=1), time.min, tzinfo=UTC)
    cases = cases_for(user).filter(created_at__gte=lo, created_at__lt=hi)
    return cases.filter(team_id=r.team) if r.team is not None else cases


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def bucket_rows(*, user, r: TrendRange) -> QuerySet[Case]:
    """The counts and percentiles of each non-empty bucket of ``r`` (one GROUP BY in PostgreSQL), as
    dicts with ``bucket`` (its start, a UTC datetime) and the numbers of ``trends``'s buckets."""
    return (
        _cases(user, r)
        .order_by()
        .annotate(bucket=Trunc("created_at", r.by, tzinfo=UTC))
        .values("bucket")
        .annotate(
            cases=Count("id"),
            ready=Count("id", filter=Q(status=CaseStatus.READY)),
            failed=Count("id", filter=Q(status=CaseStatus.FAILED)),
            open=Count("id", filter=~_CLOSED),
            closed=Count("id", filter=_CLOSED),
            hours_to_ready_p50=PercentileCont(_hours("ingested_at"), 0.5, filter=_READY),
            hours_to_ready_p90=PercentileCont(_hours("ingested_at"), 0.9, filter=_READY),
            hours_to_close_p50=PercentileCont(_hours("closed_at"), 0.5, filter=_CLOSED),
            hours_to_close_p90=PercentileCont(_hours("closed_at"), 0.9, filter=_CLOSED),
        )
    )


def trends(*, user, r: TrendRange) -> dict[str, object]:
    """The trends of ``user``'s cases over ``r``: ``{"since", "until", "by", "team", "buckets",
    "repeat_customers"}``. Each bucket: ``start``/``end`` (its first and last UTC day within the
    range, ISO dates), ``cases`` uploaded then, of which ``ready``, ``failed`` (status now), ``open``,
    ``closed`` (closed_at), ``root_causes`` ({root cause key: cases}, most first; healthy and
    unanalysed cases have none), and ``hours_to_ready_p50``/``_p90`` (ready cases: upload to
    ready), ``hours_to_close_p50``/``_p90`` (closed cases: upload to close), None when no case
    counts. Every bucket of the range is there, empty ones with zeros."""
    cases = _cases(user, r).order_by()
    bucket = Trunc("created_at", r.by, tzinfo=UTC)
    rows = bucket_rows(user=user, r=r)
    by_start = {row.pop("bucket").date(): row for row in rows}
    causes: dict[date, dict[str, int]] = {}
    for row in (
        cases.exclude(root_cause_key="")
        .annotate(bucket=bucket)
        .values("bucket", "root_cause_key")
        .annotate(n=Count("id"))
        .order_by("bucket", "-n", "root_cause_key")
    ):
        causes.setdefault(row["bucket"].date(), {})[row["root_cause_key"]] = row["n"]
    empty = dict.fromkeys(("cases", "ready", "failed", "open", "closed"), 0)
    buckets = []
    for start, end in r.buckets():
        row = by_start.get(start, {})
        buckets.append(
            {
                "start": max(start, r.since).isoformat(),
                "end": end.isoformat(),
                **{k: row.get(k, v) for k, v in empty.items()},
                "root_causes": causes.get(start, {}),
                **{k: _rounded(row.get(k)) for k in HOURS_FIELDS},
            }
        )
    return {
        "since": r.since.isoformat(),
        "until": r.until.isoformat(),
        "by": r.by,
        "team": r.team,
        "buckets": buckets,
        "repeat_customers": repeat_customers(cases, r),
    }


def causes_by_total(buckets: list[dict[str, object]]) -> list[str]:
    """The root causes of ``buckets`` (``trends``'s), most cases over them all first."""
    totals: dict[str, int] = {}
    for bucket in buckets:
        for key, n in bucket["root_causes"].items():
            totals[key] = totals.get(key, 0) + n
    return sorted(totals, key=lambda k: (-totals[k], k))


def repeat_customers(cases: QuerySet[Case], r: TrendRange) -> list[dict[str, object]]:
    """The customers with two or more cases of the same root cause in ``cases`` (customer names
    compared regardless of case), most cases first, then most recent: ``{"customer", "root_cause",
    "cases", "last_seen" (ISO 8601 UTC), "case_ids" (the most recent few), "url"}``."""
    rows = (
        cases.exclude(customer="")
        .exclude(root_cause_key="")
        .annotate(folded=Upper("customer"))
        .values("folded", "root_cause_key")
        .annotate(
            n=Count("id"),
            last_seen=Max("created_at"),
            name=Max("customer"),
            ids=ArrayAgg("id", order_by=("-created_at", "-id")),
        )
        .filter(n__gte=2)
        .order_by("-n", "-last_seen", "folded", "root_cause_key")[:REPEAT_LIMIT]
    )
    return [
        {
            "customer": row["name"],
            "root_cause": row["root_cause_key"],
            "cases": row["n"],
            "last_seen": row["last_seen"].isoformat().replace("+00:00", "Z"),
            "case_ids": row["ids"][:REPEAT_CASE_IDS],
            "url": case_list_url(r, customer=row["name"], root_cause=row["root_cause_key"]),
        }
        for row in rows
    ]


def case_list_url(
    r: TrendRange, *, since: date | str | None = None, until: date | str | None = None, **filters: str
) -> str:
    """The case list filtered as a bar or row of the trends counts it: uploaded on the days of the
    range (or of ``since``..``until``, one bucket), of the range's team, and ``filters`` (the case
    list's ``status``, ``state``, ``customer``, ``root_cause``)."""
    params: dict[str, object] = {
        "uploaded_from": since or r.since,
        "uploaded_to": until or r.until,
        **({"team": r.team} if r.team is not None else {}),
        **{k: v for k, v in filters.items() if v},
    }
    return "/cases/?" + urlencode({k: str(v) for k, v in params.items()})


def trend_range_asked(*, user, asked: dict[str, object]) -> TrendRange:
    """``trend_range`` of the valid parameters of a request (``weeks``, ``since``, ``until``, ``by``,
    ``team``; absent or empty ones take their defaults), up to today (UTC)."""
    picked = {k: asked.get(k) or None for k in ("weeks", "since", "until", "team")}
    return trend_range(user=user, today=timezone.now().date(), by=str(asked.get("by") or "week"), **picked)


def trend_range(
    *,
    user,
    today: date,
    weeks: int | None = None,
    since: date | None = None,
    until: date | None = None,
    by: str = "week",
    team: int | None = None,
) -> TrendRange:
    """The range a request asks for: ``since``..``until`` when given, else the last ``weeks`` weeks
    (13 by default) up to ``today``; ``team`` must be one of ``user``'s teams (``Http404`` otherwise,
    alike for a team that does not exist). Raises ``ValueError`` with the reason for a range that
    cannot be served (reversed, too long, years ahead)."""
    if team is not None and not teams_of(user).filter(pk=team).exists():
        raise Http404("No Team matches the given query.")
    if until is not None and until > today + timedelta(days=MAX_DAYS):
        raise ValueError("until is years from now.")
    default = TrendRange.last_weeks(weeks or DEFAULT_WEEKS, today=today)
    r = TrendRange(since=since or default.since, until=until or default.until, by=by, team=team)
    reason = r.check()
    if reason:
        raise ValueError(reason)
    return r
