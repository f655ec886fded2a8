"""Finding past cases: the full-text search document of a case, the search itself, and the case
list's filters and sort orders.

PostgreSQL full-text search (``to_tsvector``/``websearch_to_tsquery`` with the ``simple``
configuration: case data is identifiers, host names and SQL, which stemming and stop words would
mangle) over title, customer, ticket, tags, host, finding keys, wait channels, query fingerprints and
notes and resolutions, kept in ``Case.search_vector`` (GIN index); plus pg_trgm (GIN trigram indexes) on host
and ticket: a part of one (``db-prod-3`` of ``db-prod-3.example.com``, ``4711`` of ``ZD-4711``, where the
text search sees one token), or, when nothing else matched, one similar to it (word similarity). See the
PostgreSQL manual, chapter 12 (Full Text Search) and F.35 (pg_trgm).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.contrib.postgres.search import (
    CombinedSearchVector,
    SearchQuery,
    SearchRank,
    SearchVector,
    TrigramWordSimilarity,
)
from django.db.models import Exists, F, Func, OuterRef, Q, QuerySet, TextField, Value
from django.db.models.functions import Greatest

from web.models import Case, CaseStatus, Finding

#: Text search configuration: no stemming, no stop words (``SELECT ... FROM`` must stay searchable).
SEARCH_CONFIG = "simple"
#: Longest search text taken (characters): a pasted fingerprint fits, a pasted log does not.
MAX_QUERY_CHARS = 500
#: The case list's sort orders (``?sort=``): name -> ORDER BY. ``relevance`` needs a search text.
SORTS: dict[str, tuple[str, ...]] = {
    "-created": ("-created_at", "-id"),
    "created": ("created_at", "id"),
    "-captured": ("-window_start", "-id"),
    "captured": ("window_start", "id"),
    "host": ("host", "-created_at"),
    "customer": ("customer", "-created_at"),
    "title": ("title", "-created_at"),
    "status": ("status", "-created_at"),
    "relevance": ("-rank", "-created_at"),
}
SEVERITIES = ("critical", "warning", "info")
#: The case list's open/closed filter (``?state=``).
STATES = ("open", "closed")


def _joined(field: str) -> Func:
    """An array column as one space-separated text (``array_to_string``)."""
    return Func(F(field), Value(" "), function="array_to_string", output_field=TextField())


def search_document() -> CombinedSearchVector:
    """The expression of ``Case.search_vector`` (for ``Case.objects.filter(...).update(...)``):
    weight A title, customer, ticket, tags; B host and the resolution (what fixed the case); C finding
    keys, wait channels, fingerprints; D notes."""
    cfg = SEARCH_CONFIG
    return (
        SearchVector("title", "customer", "ticket", _joined("tags"), config=cfg, weight="A")
        + SearchVector("host", "resolution", config=cfg, weight="B")
        + SearchVector(
            _joined("finding_keys"), _joined("wait_channels"), _joined("fingerprints"), config=cfg, weight="C"
        )
        + SearchVector("notes", config=cfg, weight="D")
    )


def search(cases: QuerySet[Case], text: str) -> QuerySet[Case]:
    """``cases`` matching ``text``, annotated with ``rank`` (best first under the ``relevance`` sort).

    First: the search document matches (web search syntax: words are ANDed, ``"a phrase"``, ``or``,
    ``-word``), or ``text`` is part of the host or the ticket (a pg_trgm index serves the substring
    match). When nothing matches that way: the cases whose host or ticket is similar to ``text``
    (pg_trgm word similarity, ``%>``), for a host or ticket typed a little wrong.
    """
    text = text.strip()[:MAX_QUERY_CHARS]
    query = SearchQuery(text, config=SEARCH_CONFIG, search_type="websearch")
    literal = re.escape(text)  # a substring, not a pattern: PostgreSQL's ~* on the trigram index
    # The ids matching each condition, each read on its own GIN index, joined (UNION): the cases
    # themselves are then read by id. As one OR over the rows, PostgreSQL read and decompressed the
    # search vector of every case of the team.
    matching = (
        Case.objects.filter(search_vector=query)
        .order_by()
        .values("pk")
        .union(Case.objects.filter(host__iregex=literal).order_by().values("pk"))
        .union(Case.objects.filter(ticket__iregex=literal).order_by().values("pk"))
    )
    # Whether anything matches, asked of each condition alone (a LIMIT 1 that stops at the first
    # match): asked of the union, it would compute the whole union once more.
    conditions = (Q(search_vector=query), Q(host__iregex=literal), Q(ticket__iregex=literal))
    if any(cases.filter(condition).exists() for condition in conditions):
        found = cases.filter(pk__in=matching)
        return found.annotate(rank=SearchRank(F("search_vector"), query))
    similar = cases.filter(
        Q(pk__in=Case.objects.filter(host__trigram_word_similar=text).values("pk"))
        | Q(pk__in=Case.objects.filter(ticket__trigram_word_similar=text).values("pk"))
    )
    return similar.annotate(
        rank=Greatest(TrigramWordSimilarity(text, "host"), TrigramWordSimilarity(text, "ticket"))
    )


@dataclass(frozen=True, slots=True)
class CaseFilters:
    """The case list's filters, each optional (empty: not applied). ``date_from``/``date_to``: the
    capture window overlaps these UTC days (inclusive). ``severity``: the case has a finding of that
    severity (of that key, when ``finding_key`` is given too)."""

    q: str = ""
    customer: str = ""
    host: str = ""
    status: str = ""
    finding_key: str = ""
    severity: str = ""
    tag: str = ""
    state: str = ""  # open, closed (``Case.closed_at``), or either
    date_from: date | None = None
    date_to: date | None = None
    # The trends' filters (web/trends/): the verdict's root cause, the UTC days of upload, one team.
    root_cause: str = ""
    uploaded_from: date | None = None
    uploaded_to: date | None = None
    team: int | None = None
    sort: str = ""

    @property
    def active(self) -> bool:
        return any(getattr(self, name) for name in self.__slots__ if name != "sort")


def _trend_filters(cases: QuerySet[Case], f: CaseFilters) -> QuerySet[Case]:
    if f.root_cause:
        cases = cases.filter(root_cause_key=f.root_cause.strip())
    if f.uploaded_from:
        cases = cases.filter(created_at__gte=datetime.combine(f.uploaded_from, time.min, tzinfo=UTC))
    if f.uploaded_to and f.uploaded_to < date.max:  # the last day there is: no bound
        day_after = datetime.combine(f.uploaded_to + timedelta(days=1), time.min, tzinfo=UTC)
        cases = cases.filter(created_at__lt=day_after)
    if f.team is not None:
        cases = cases.filter(team_id=f.team)
    return cases


def apply_filters(cases: QuerySet[Case], f: CaseFilters) -> QuerySet[Case]:
    """``cases`` narrowed by ``f`` and ordered by ``f.sort`` (newest first by default; relevance
    first when searching with no sort chosen). An unknown sort or status is ignored."""
    if f.customer:
        cases = cases.filter(customer__iexact=f.customer.strip())
    if f.host:
        cases = cases.filter(
            host__iregex=re.escape(f.host.strip())
        )  # a part of the host name (pg_trgm index)
    if f.status in CaseStatus.values:
        cases = cases.filter(status=f.status)
    if f.tag:
        cases = cases.filter(tags__contains=[f.tag.strip()])
    if f.state in STATES:
        cases = cases.filter(closed_at__isnull=f.state == "open")
    if f.finding_key and f.severity in SEVERITIES:
        cases = cases.filter(
            Exists(Finding.objects.filter(case=OuterRef("pk"), key=f.finding_key, severity=f.severity))
        )
    elif f.finding_key:
        cases = cases.filter(finding_keys__contains=[f.finding_key.strip()])
    elif f.severity in SEVERITIES:
        cases = cases.filter(Exists(Finding.objects.filter(case=OuterRef("pk"), severity=f.severity)))
    if f.date_from:
        cases = cases.filter(window_end__gte=datetime.combine(f.date_from, time.min, tzinfo=UTC))
    if f.date_to:
        day_after = datetime.combine(f.date_to + timedelta(days=1), time.min, tzinfo=UTC)
        cases = cases.filter(window_start__lt=day_after)
    cases = _trend_filters(cases, f)
    searching = bool(f.q.strip())
    if searching:
        cases = search(cases, f.q)
    sort = f.sort if f.sort in SORTS and (f.sort != "relevance" or searching) else ""
    if not sort:
        sort = "relevance" if searching else "-created"
    return cases.order_by(*SORTS[sort])
