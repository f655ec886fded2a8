"""The trends page, ``/trends/``: the history of the user's teams at a glance (web/trends/selectors.py),
charts drawn by ``static/js/pages/trends.js`` from the page's JSON, each with its table; every bar and
row links to the case list filtered the same way. Engineers see their own teams' only; a share link
never reaches it (it needs a login)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from web.cases.selectors import teams_of
from web.trends import selectors
from web.trends.forms import TrendsForm

#: Root causes drawn on their own in the stacked chart; the rest are drawn together as "other".
TOP_CAUSES = 8
OTHER = "other"
#: The case list's filters behind each number of a bucket, besides its days and team.
FILTERS = {
    "cases": {},
    "ready": {"status": "ready"},
    "failed": {"status": "failed"},
    "open": {"state": "open"},
    "closed": {"state": "closed"},
}
_SUFFIXES = {k: f"&{urlencode(f)}" if f else "" for k, f in FILTERS.items()}


def _bucket_links(r: selectors.TrendRange, bucket: dict[str, object]) -> dict[str, object]:
    """The case list behind each number of a bucket (``case_list_url`` of its days, the filter of each
    number appended: a long range has thousands of links, built by concatenation)."""
    base = selectors.case_list_url(r, since=bucket["start"], until=bucket["end"])
    return {
        **{k: base + suffix for k, suffix in _SUFFIXES.items()},
        "causes": [
            {"key": key, "cases": n, "url": f"{base}&{urlencode({'root_cause': key})}"}
            for key, n in bucket["root_causes"].items()
        ],
    }


@login_required
@require_GET
def trends_page(request: HttpRequest) -> HttpResponse:
    """The trends of the range and team picked (the last 13 weeks of all the user's teams at first)."""
    teams = list(teams_of(request.user).values_list("pk", "name"))
    form = TrendsForm(request.GET or None, teams=teams)  # unbound at first: the default range shows
    form.is_valid()
    if "team" in form.errors:  # not one of the user's teams: as if it did not exist
        raise Http404("No Team matches the given query.")
    try:
        r = selectors.trend_range_asked(user=request.user, asked=getattr(form, "cleaned_data", {}))
    except ValueError as exc:
        return render(request, "trends/trends.html", {"form": form, "problem": str(exc)}, status=400)
    data = selectors.trends(user=request.user, r=r)
    links = [_bucket_links(r, b) for b in data["buckets"]]
    causes = selectors.causes_by_total(data["buckets"])
    query = {"since": r.since, "until": r.until, "by": r.by, **({"team": r.team} if r.team else {})}
    return render(
        request,
        "trends/trends.html",
        {
            "form": form,
            "data": data,
            "rows": [{**b, "links": link} for b, link in zip(data["buckets"], links, strict=True)],
            "page_data": {
                "trends": data,
                "filters": FILTERS,
                "top_causes": causes[:TOP_CAUSES],
                "other": OTHER if len(causes) > TOP_CAUSES else None,
            },
            "totals": {
                k: sum(b[k] for b in data["buckets"]) for k in ("cases", "ready", "failed", "open", "closed")
            },
            "all_url": selectors.case_list_url(r),
            "csv_url": "/api/trends/?" + urlencode({**query, "export": "csv"}),
            "repeat_csv_url": "/api/trends/?"
            + urlencode({**query, "export": "csv", "table": "repeat_customers"}),
        },
    )


def urlpatterns() -> list:
    return [path("trends/", trends_page, name="trends")]
