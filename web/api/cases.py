"""The JSON API (DRF) for engineers' scripts: upload a bundle, poll its status, read the report, the
findings, the series and a moment, list and search cases page by page, compare two cases.

Authentication: a personal token (``Authorization: Bearer cb_...``, made on the settings page,
web/accounts/authentication.py) or the browser's session; HTTP basic auth is not accepted. Every case is
looked up through ``selectors.cases_for(user)``: a case the user may not see answers 404, like one
that does not exist. Errors are ``{"message", "extra"}`` (web/api/errors.py). The schema is served
at ``/api/schema/`` and browsable at ``/api/docs/``.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from web import audit
from web.api.schema import CASE_ID, CasePagination, error_responses, validated_query
from web.api.serializers import (
    BundleAddedSerializer,
    BundleAddSerializer,
    CaseCreatedSerializer,
    CaseCreateSerializer,
    CaseListQuerySerializer,
    CasePageSerializer,
    CaseStatusSerializer,
    CompareQuerySerializer,
    CompareSerializer,
    FindingsSerializer,
    MomentQuerySerializer,
    MomentSerializer,
    QueriesQuerySerializer,
    QueriesSerializer,
    ReportSerializer,
    SeriesListSerializer,
    SeriesQuerySerializer,
)
from web.cases import selectors, services
from web.cases.forms import CaseFilterForm
from web.faults import BROKER_DOWN_DETAIL
from web.history import compare
from web.timeline import charts, moments


@extend_schema(
    methods=["GET"],
    operation_id="cases_list",
    summary="List and search cases, newest first, page by page",
    parameters=[CaseListQuerySerializer],
    responses={200: CasePageSerializer, **error_responses(400, 404)},
)
@extend_schema(
    methods=["POST"],
    operation_id="cases_create",
    summary="Upload a bundle: a new case, queued for analysis",
    request={"multipart/form-data": CaseCreateSerializer},
    responses={201: CaseCreatedSerializer, **error_responses(400)},
)
@api_view(["GET", "POST"])
@parser_classes([MultiPartParser, FormParser])
def case_list_create_api(request: Request) -> Response:
    """GET: the cases of the user's teams, newest first, a page at a time, searched and filtered (the
    case list's parameters). POST multipart ``bundle`` (+ ``title``, ``team``): a new case; its answer
    says ``duplicate_of`` (earlier cases of the user's teams with the same bytes)."""
    if request.method == "GET":
        query = validated_query(CaseListQuerySerializer, request)
        form = CaseFilterForm({k: v for k, v in query.items() if k not in ("page", "page_size")})
        form.is_valid()
        cases = selectors.case_list(user=request.user, filters=form.filters())
        paginator = CasePagination()
        page = paginator.paginate_queryset(cases, request)
        return paginator.get_paginated_response([selectors.case_row(c) for c in page])
    return _case_create(request)


def _case_create(request: Request) -> Response:
    serializer = CaseCreateSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    try:
        uploaded = services.case_upload(
            request=request,
            file=serializer.validated_data["bundle"],
            title=serializer.validated_data.get("title", ""),
            team_id=serializer.validated_data.get("team"),
        )
    except ValidationError as exc:
        return Response(services.upload_error_body(exc), status=status.HTTP_400_BAD_REQUEST)
    case, earlier = uploaded.case, uploaded.duplicate_of
    # The task was handed to the broker when the case was committed; what happened is on the case now.
    case.refresh_from_db()
    queued = case.enqueued_at is not None
    if queued:
        message = f"Case {case.pk} is saved and queued for analysis: poll its status_url."
    else:
        message = f"Case {case.pk} is saved. {case.status_detail or BROKER_DOWN_DETAIL}"
    body = {
        **selectors.case_status(case),
        "queued": queued,
        "message": message,
        "status_url": reverse("api-case-status", args=[case.pk]),
        "report_url": reverse("api-case", args=[case.pk]),
        "findings_url": reverse("api-case-findings", args=[case.pk]),
        "duplicate_of": earlier,
    }
    return Response(body, status=status.HTTP_201_CREATED)


@extend_schema(
    operation_id="cases_report",
    summary="The case report (the document of manage.py analyze --json)",
    parameters=[CASE_ID],
    responses={200: ReportSerializer, **error_responses(404)},
)
@api_view(["GET"])
def case_report_api(request: Request, case_id: int) -> Response:
    """Sources, members not used, warnings, findings, rules not evaluated; times ISO 8601 UTC."""
    return Response(selectors.case_report(case=selectors.case_for_user(user=request.user, case_id=case_id)))


@extend_schema(
    operation_id="cases_bundles_add",
    summary="Add another bundle of the same incident (another host's capture) to a case",
    parameters=[CASE_ID],
    request={"multipart/form-data": BundleAddSerializer},
    responses={202: BundleAddedSerializer, **error_responses(400, 404, 409)},
)
@api_view(["POST"])
@parser_classes([MultiPartParser, FormParser])
def case_bundle_add_api(request: Request, case_id: int) -> Response:
    """POST multipart ``bundle``: kept beside the case's first upload, with the same limits and checks;
    the case is queued again and analysed over all its bundles (hosts merged by name). 409 while a
    worker processes the case."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    serializer = BundleAddSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    bundle = serializer.validated_data["bundle"]
    try:
        added = services.case_add_bundle(
            case_id=case.pk, user=request.user, file=bundle, original_name=bundle.name
        )
    except ValidationError as exc:
        return Response({"message": " ".join(exc.messages), "extra": {}}, status=status.HTTP_400_BAD_REQUEST)
    except services.CaseStateError as exc:
        return Response(
            {"message": str(exc), "extra": {"status": case.status}}, status=status.HTTP_409_CONFLICT
        )
    audit.record_bundle_added(request, added)
    case.refresh_from_db()
    body = {
        **selectors.case_status(case),
        "message": f"{added.original_name} is added to case {case.pk}, queued again for analysis over its "
        "bundles: poll its status_url.",
        "bundle": {"name": added.original_name, "size": added.size, "sha256": added.sha256},
        "status_url": reverse("api-case-status", args=[case.pk]),
        "report_url": reverse("api-case", args=[case.pk]),
    }
    return Response(body, status=status.HTTP_202_ACCEPTED)


@extend_schema(
    operation_id="cases_status",
    summary="Poll a case: queued, parsing, analyzing, ready or failed",
    parameters=[CASE_ID],
    responses={200: CaseStatusSerializer, **error_responses(404)},
)
@api_view(["GET"])
def case_status_api(request: Request, case_id: int) -> Response:
    """Status, progress, what the worker is doing (or why the case waits) and the failure reason."""
    return Response(selectors.case_status(selectors.case_for_user(user=request.user, case_id=case_id)))


@extend_schema(
    operation_id="cases_findings",
    summary="The findings of a case, most severe first",
    parameters=[CASE_ID],
    responses={200: FindingsSerializer, **error_responses(404)},
)
@api_view(["GET"])
def case_findings_api(request: Request, case_id: int) -> Response:
    """Each finding with its windows, evidence (series, value, unit, member and lines),
    recommendation, caveats, sources, confidence and the check that would disprove it."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    return Response(
        {"case": case.pk, "status": case.status, "findings": selectors.findings_for_case(case=case)}
    )


@extend_schema(
    operation_id="cases_series",
    summary="The series of a case: their names, or their points in a time range",
    parameters=[CASE_ID, SeriesQuerySerializer],
    responses={200: SeriesListSerializer, **error_responses(400, 404)},
)
@api_view(["GET"])
def case_series_api(request: Request, case_id: int) -> Response:
    """Without ``name``: every series with its point count and time range. With ``name`` (repeated):
    those series' points ``[epoch ms, value]`` in ``[start, end]``, at most ``max_points`` each."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    query = validated_query(SeriesQuerySerializer, request)
    rows = charts.series_listing(
        case=case,
        names=query.get("name") or None,
        start=query.get("start"),
        end=query.get("end"),
        max_points=query["max_points"],
    )
    return Response({"case": case.pk, "series": rows})


@extend_schema(
    operation_id="cases_moment",
    summary="One moment of a case: processlist and threads then, and every source's raw lines",
    parameters=[CASE_ID, MomentQuerySerializer],
    responses={200: MomentSerializer, **error_responses(400, 404)},
)
@api_view(["GET"])
def case_moment_api(request: Request, case_id: int) -> Response:
    """The SHOW PROCESSLIST and ps thread snapshots nearest to ``at`` and the raw lines of every
    source at that instant (the case page's moment panel)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    query = validated_query(MomentQuerySerializer, request)
    try:
        host = moments.host_param(case, query.get("host"))
    except ValueError:
        raise exceptions.ValidationError({"host": ["not a host of this case"]}) from None
    return Response(moments.moment(case=case, at=query["at"], host=host))


@extend_schema(
    operation_id="cases_queries",
    summary="The slow logs' classes of a case, whole log or a time window, most query time first",
    parameters=[CASE_ID, QueriesQuerySerializer],
    responses={200: QueriesSerializer, **error_responses(400, 404)},
)
@api_view(["GET"])
def case_queries_api(request: Request, case_id: int) -> Response:
    """Each class (pt-query-digest's fingerprint and checksum): count, query and lock time, rows,
    first and last seen, an example, a sparkline; with ``start``/``end``, the sums of its minutes in
    that window (its 95th percentile stays the whole log's)."""
    case = selectors.case_for_user(user=request.user, case_id=case_id)
    query = validated_query(QueriesQuerySerializer, request)
    return Response(
        selectors.case_queries(
            case=case, start=query.get("start"), end=query.get("end"), limit=query["limit"]
        )
    )


@extend_schema(
    operation_id="cases_compare",
    summary=(
        "Compare two cases: findings appeared, disappeared or changed severity; fingerprints new and gone"
    ),
    parameters=[CompareQuerySerializer],
    responses={200: CompareSerializer, **error_responses(400, 404)},
)
@api_view(["GET"])
def case_compare_api(request: Request) -> Response:
    """``other`` against ``base`` (web/history/compare.py): e.g. after a fix against before it."""
    query = validated_query(CompareQuerySerializer, request)
    sides, classes = [], []
    for side in ("base", "other"):
        case = selectors.case_for_user(user=request.user, case_id=query[side])
        try:
            host = moments.host_param(case, query.get(f"{side}_host"))
        except ValueError:
            raise exceptions.ValidationError({f"{side}_host": ["not a host of this case"]}) from None
        sides.append(selectors.compare_input(case, host))
        classes.append(compare.slow_log_classes(case, host))
    base, other = sides
    side_fields = ("id", "title", "host", "one_host", "status", "window_start", "window_end")
    return Response(
        {
            "base": {k: base[k] for k in side_fields},
            "other": {k: other[k] for k in side_fields},
            **compare.compare_cases(base, other),
            "slow_log": compare.compare_classes(*classes),
        }
    )


@extend_schema(exclude=True)
@api_view(["GET", "POST", "PUT", "PATCH", "DELETE"])
def api_not_found(request: Request, rest: str = "") -> Response:
    """Any other URL under /api/: a JSON 404 in the API's error shape, not the site's HTML page."""
    return Response(
        {"message": "No such API endpoint (see /api/docs/).", "extra": {"path": request.path[:200]}},
        status=status.HTTP_404_NOT_FOUND,
    )
