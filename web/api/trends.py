"""The team's trends in the JSON API (DRF): cases per week or day, root causes, repeat customers and
time to resolution, for the user's teams (web/trends/selectors.py).

curl -H "Authorization: Bearer $TOKEN" "http://HOST/api/trends/?team=3&since=2026-09-01&by=week"
curl -H "Authorization: Bearer $TOKEN" "http://HOST/api/trends/?weeks=52&export=csv" > trends.csv

A team the user is not a member of answers 404, like one that does not exist.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from web.api.schema import error_responses, validated_query
from web.trends import selectors
from web.trends.exports import TABLES, trends_csv


class TrendsQuerySerializer(serializers.Serializer):
    team = serializers.IntegerField(
        required=False, min_value=1, help_text="One of your teams (default: all)."
    )
    weeks = serializers.ChoiceField(
        required=False,
        choices=selectors.RANGE_WEEKS,
        help_text="The last N weeks up to today, when since and until are not given (default 13).",
    )
    since = serializers.DateField(required=False, help_text="Cases uploaded on or after this UTC day.")
    until = serializers.DateField(required=False, help_text="Cases uploaded on or before this UTC day.")
    by = serializers.ChoiceField(required=False, choices=("week", "day"), default="week")
    export = serializers.ChoiceField(
        required=False, choices=("csv",), help_text="csv: the same numbers as CSV."
    )
    table = serializers.ChoiceField(
        required=False, choices=TABLES, default="buckets", help_text="What the CSV holds."
    )


class TrendBucketSerializer(serializers.Serializer):
    start = serializers.DateField(help_text="The bucket's first UTC day within the range (a week: Monday).")
    end = serializers.DateField(help_text="Its last UTC day within the range.")
    cases = serializers.IntegerField(help_text="Cases uploaded in the bucket.")
    ready = serializers.IntegerField(help_text="Of them, ready now.")
    failed = serializers.IntegerField(help_text="Of them, failed now.")
    open = serializers.IntegerField(help_text="Of them, not closed.")
    closed = serializers.IntegerField(help_text="Of them, closed with a resolution.")
    root_causes = serializers.DictField(
        child=serializers.IntegerField(), help_text="Cases per key of the verdict's root cause, most first."
    )
    hours_to_ready_p50 = serializers.FloatField(
        allow_null=True, help_text="Median hours from upload to ready."
    )
    hours_to_ready_p90 = serializers.FloatField(
        allow_null=True, help_text="90th percentile, upload to ready."
    )
    hours_to_close_p50 = serializers.FloatField(
        allow_null=True, help_text="Median hours from upload to close."
    )
    hours_to_close_p90 = serializers.FloatField(
        allow_null=True, help_text="90th percentile, upload to close."
    )


class RepeatCustomerSerializer(serializers.Serializer):
    customer = serializers.CharField()
    root_cause = serializers.CharField()
    cases = serializers.IntegerField(help_text="The customer's cases of this root cause in the range.")
    last_seen = serializers.CharField(help_text="The latest upload, ISO 8601 UTC.")
    case_ids = serializers.ListField(child=serializers.IntegerField(), help_text="The most recent cases.")
    url = serializers.CharField(help_text="The case list filtered to these cases.")


class TrendsSerializer(serializers.Serializer):
    since = serializers.DateField()
    until = serializers.DateField()
    by = serializers.ChoiceField(choices=("week", "day"))
    team = serializers.IntegerField(allow_null=True)
    buckets = TrendBucketSerializer(many=True)
    repeat_customers = RepeatCustomerSerializer(many=True)


@extend_schema(
    operation_id="trends",
    summary="The team's trends: cases, root causes, repeat customers, time to ready and to close",
    parameters=[TrendsQuerySerializer],
    responses={
        (200, "application/json"): TrendsSerializer,
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="With export=csv."),
        **error_responses(400, 404),
    },
)
@api_view(["GET"])
def trends_api(request: Request) -> Response | HttpResponse:
    """The cases of the user's teams (or of one, ``team``) uploaded in the range, bucketed by week or
    day; ``export=csv`` gives the buckets (or ``table=repeat_customers``) as CSV."""
    query = validated_query(TrendsQuerySerializer, request)
    try:
        r = selectors.trend_range_asked(user=request.user, asked=query)
    except ValueError as exc:
        return Response({"message": str(exc), "extra": {}}, status=400)
    data = selectors.trends(user=request.user, r=r)
    if query.get("export") == "csv":
        response = HttpResponse(trends_csv(data, query["table"]), content_type="text/csv; charset=utf-8")
        name = f"trends-{r.since}-{r.until}-{query['table']}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
    return Response(data)


def urlpatterns() -> list:
    return [path("api/trends/", trends_api, name="api-trends")]
