"""The shapes the JSON API takes and returns, as DRF serializers: they validate the input and let
drf-spectacular describe every response exactly in ``/api/schema/`` (the schemathesis test checks
the served responses against it).

Times are ISO 8601 UTC strings (``2026-04-21T16:51:41Z``); series points are ``[epoch ms, value]``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rest_framework import serializers

from analyzer.findings import CULPRIT_KINDS, JOIN_KINDS
from web.models import CaseStatus, ResolutionCategory

STATUS = serializers.ChoiceField(choices=CaseStatus.choices)
#: Instants a query may name: from the epoch to a day before the end of year 9999 (a window around
#: an instant near datetime's limits overflows; no capture lies outside these).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, tzinfo=UTC) - timedelta(days=1)


def _in_range(value: datetime | None) -> datetime | None:
    if value is not None and not EARLIEST <= value <= LATEST:
        raise serializers.ValidationError(
            f"Must lie between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d} (UTC)."
        )
    return value


class ErrorSerializer(serializers.Serializer):
    """Every error: a sentence for a person, and the details (field errors, the case's status...)."""

    message = serializers.CharField()
    extra = serializers.DictField()


# --- input ---------------------------------------------------------------------------------------


class CaseCreateSerializer(serializers.Serializer):
    bundle = serializers.FileField(help_text="The bundle: .tar(.gz/.bz2/.xz/.zst), .zip or one capture file.")
    title = serializers.CharField(max_length=200, required=False, allow_blank=True)
    team = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="The team's id: required when you are a member of more than one team (a 400 lists your "
        "teams otherwise); your only team when omitted.",
    )


class BundleAddSerializer(serializers.Serializer):
    bundle = serializers.FileField(
        help_text="Another bundle of the same incident (most often another host's capture): .tar(.gz/.bz2/"
        ".xz/.zst), .zip or one capture file."
    )


class CaseListQuerySerializer(serializers.Serializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Full-text search: title, customer, ticket, tags, host, finding keys, wait channels, "
        "query fingerprints, notes, resolutions.",
    )
    customer = serializers.CharField(
        required=False, max_length=200, help_text="The customer (exact, any case)."
    )
    host = serializers.CharField(required=False, max_length=255, help_text="Host name, or part of it.")
    status = serializers.ChoiceField(
        required=False, choices=("queued", "parsing", "analyzing", "ready", "failed")
    )
    state = serializers.ChoiceField(
        required=False, choices=("open", "closed"), help_text="Open cases, or cases closed with a resolution."
    )
    finding = serializers.CharField(
        required=False, max_length=80, help_text="A finding key, e.g. tmp-table-churn."
    )
    severity = serializers.ChoiceField(required=False, choices=("critical", "warning", "info"))
    tag = serializers.CharField(required=False, max_length=50)
    date_from = serializers.DateField(required=False, help_text="Captured on or after this UTC day.")
    date_to = serializers.DateField(required=False, help_text="Captured on or before this UTC day.")
    root_cause = serializers.CharField(
        required=False, max_length=80, help_text="The key of the verdict's root cause, e.g. tmp-table-churn."
    )
    uploaded_from = serializers.DateField(required=False, help_text="Uploaded on or after this UTC day.")
    uploaded_to = serializers.DateField(required=False, help_text="Uploaded on or before this UTC day.")
    team = serializers.IntegerField(required=False, min_value=1, help_text="One of your teams' id.")
    sort = serializers.ChoiceField(
        required=False,
        choices=(
            "-created",
            "created",
            "-captured",
            "captured",
            "host",
            "customer",
            "title",
            "status",
            "relevance",
        ),
    )
    page = serializers.IntegerField(required=False, min_value=1, default=1)
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=200, default=50)


class SeriesQuerySerializer(serializers.Serializer):
    name = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        max_length=50,
        help_text="Series to read (repeat the parameter); none: list the case's series without points.",
    )
    start = serializers.DateTimeField(
        required=False, help_text="From this time (ISO 8601; UTC if no offset)."
    )
    end = serializers.DateTimeField(required=False, help_text="Up to this time (ISO 8601).")
    max_points = serializers.IntegerField(required=False, min_value=10, max_value=20_000, default=2_000)

    def validate_start(self, value: datetime) -> datetime:
        return _in_range(value)

    def validate_end(self, value: datetime) -> datetime:
        return _in_range(value)


class MomentQuerySerializer(serializers.Serializer):
    at = serializers.DateTimeField(help_text="The instant (ISO 8601; UTC if no offset), 1970 to 9999.")
    host = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="A case of several hosts: the index of the host (its position in the case's hosts).",
    )

    def validate_at(self, value: datetime) -> datetime:
        return _in_range(value)


class CompareQuerySerializer(serializers.Serializer):
    base = serializers.IntegerField(min_value=1, help_text="The reference case (before the fix, host A).")
    other = serializers.IntegerField(min_value=1, help_text="The case compared with it (after, host B).")
    base_host = serializers.IntegerField(
        required=False, min_value=0, help_text="One host of base: its index among base's hosts (0 the first)."
    )
    other_host = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="One host of other: its index among other's hosts; two hosts of one case: other = base.",
    )


# --- output --------------------------------------------------------------------------------------


class CaseRowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField(help_text="The case page (path).")
    title = serializers.CharField()
    host = serializers.CharField(allow_blank=True)
    window_start = serializers.DateTimeField(allow_null=True)
    window_end = serializers.DateTimeField(allow_null=True)
    status = STATUS
    status_label = serializers.CharField()
    finding_keys = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()
    closed = serializers.BooleanField(help_text="Closed with a resolution.")


class CasePageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Cases matching, over all pages.")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = CaseRowSerializer(many=True)


class ResolutionSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="What fixed it (Markdown).")
    category = serializers.ChoiceField(choices=ResolutionCategory.choices)
    closed_at = serializers.DateTimeField()
    closed_by = serializers.CharField(allow_blank=True)


class ResolutionInSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=20_000, help_text="What fixed it (Markdown).")
    category = serializers.ChoiceField(choices=ResolutionCategory.choices)


class CaseStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = STATUS
    label = serializers.CharField()
    status_label = serializers.CharField()
    progress = serializers.IntegerField(help_text="Percent.")
    detail = serializers.CharField(allow_blank=True, help_text="What the worker is doing, or why it waits.")
    failure_reason = serializers.CharField(allow_blank=True)
    ready = serializers.BooleanField()
    failed = serializers.BooleanField()
    url = serializers.CharField()
    processing = serializers.BooleanField()
    last_report_at = serializers.DateTimeField(allow_null=True)
    stalled = serializers.BooleanField()
    requeues = serializers.IntegerField()
    resolution = ResolutionSerializer(allow_null=True, help_text="How the case was closed; null while open.")


class CaseCreatedSerializer(CaseStatusSerializer):
    queued = serializers.BooleanField(
        help_text="False when the task queue (Redis) could not be reached: the upload is kept and the "
        "case is queued automatically once the queue is back."
    )
    message = serializers.CharField()
    status_url = serializers.CharField()
    report_url = serializers.CharField()
    findings_url = serializers.CharField()
    duplicate_of = serializers.ListField(
        child=serializers.DictField(),
        help_text="Earlier cases of your teams whose upload had the same bytes (SHA-256), newest first.",
    )


class CulpritSerializer(serializers.Serializer):
    """What a finding blames (analyzer.findings.Culprit), named from the bundle's own lines."""

    kind = serializers.ChoiceField(choices=CULPRIT_KINDS)
    id = serializers.CharField(help_text="Processlist Id, trx id, PID, fingerprint, mount point or variable.")
    user = serializers.CharField(allow_null=True)
    host = serializers.CharField(allow_null=True, help_text="The client host of a session (user@host).")
    statement = serializers.CharField(allow_null=True, help_text="SQL, command line or the setting's value.")
    since = serializers.CharField(allow_null=True, help_text="When it started, ISO 8601 UTC.")
    blocks = serializers.IntegerField(allow_null=True, help_text="Sessions or threads waiting on it.")
    evidence = serializers.ListField(child=serializers.DictField())


class HostClockSerializer(serializers.Serializer):
    utc_offset_s = serializers.IntegerField(
        allow_null=True, help_text="The host's local time minus UTC, seconds (None: unknown)."
    )
    origin = serializers.CharField(allow_null=True, help_text="Where the offset was read.")


class HostSerializer(serializers.Serializer):
    """One server of the case (a cluster's node, a source or a replica), first host first."""

    name = serializers.CharField()
    name_origin = serializers.CharField(allow_blank=True, help_text="Where the name was read.")
    ncpu = serializers.IntegerField(allow_null=True)
    kernel = serializers.CharField(allow_null=True)
    layout = serializers.CharField(allow_blank=True)
    window = serializers.ListField(child=serializers.DateTimeField(allow_null=True))
    clock = HostClockSerializer()
    offset_s = serializers.FloatField(
        allow_null=True,
        help_text="Estimated offset of this host's clock against the first host's, seconds; shown, never "
        "applied (None: no estimate).",
    )
    offset_origin = serializers.CharField(allow_null=True)
    sources = serializers.ListField(child=serializers.CharField(), help_text="The members placed on it.")


class BundleAddedSerializer(CaseStatusSerializer):
    message = serializers.CharField()
    bundle = serializers.DictField(help_text="The added bundle: name, size, sha256.")
    status_url = serializers.CharField()
    report_url = serializers.CharField()


class FindingSerializer(serializers.Serializer):
    key = serializers.CharField()
    severity = serializers.ChoiceField(choices=("critical", "warning", "info"))
    title = serializers.CharField()
    summary = serializers.CharField()
    windows = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    evidence = serializers.ListField(child=serializers.DictField())
    recommendation = serializers.CharField(allow_blank=True)
    caveats = serializers.ListField(child=serializers.CharField())
    sources = serializers.ListField(child=serializers.CharField())
    confidence = serializers.CharField(allow_blank=True)
    disproof = serializers.CharField(allow_blank=True)
    related = serializers.ListField(child=serializers.CharField())
    rule_version = serializers.IntegerField()
    culprit = CulpritSerializer(allow_null=True)
    host = serializers.CharField(
        allow_null=True, help_text="The host it is about; null: a cross-host finding."
    )
    hosts = serializers.ListField(
        child=serializers.CharField(), help_text="The hosts involved, the cause first."
    )
    charts = serializers.ListField(child=serializers.CharField())


class FindingsSerializer(serializers.Serializer):
    case = serializers.IntegerField()
    status = STATUS
    findings = FindingSerializer(many=True)


class LinkEndSerializer(serializers.Serializer):
    """A finding named by its key and host (a link's cause or effect)."""

    key = serializers.CharField()
    host = serializers.CharField(allow_null=True, help_text="null: a cross-host finding.")


class LinkSerializer(serializers.Serializer):
    """A cause joined to its effect by what the bundle shows (analyzer.findings.Link)."""

    cause = LinkEndSerializer()
    effect = LinkEndSerializer()
    join = serializers.ChoiceField(choices=JOIN_KINDS, help_text="What both findings share.")
    sentence = serializers.CharField(help_text="How the cause explains the effect, naming what joins them.")
    evidence = serializers.ListField(child=serializers.DictField())


class CoverageSerializer(serializers.Serializer):
    evaluated = serializers.IntegerField(help_text="Rules that ran.")
    not_evaluated = serializers.IntegerField(help_text="Rules whose inputs the bundle lacks.")
    failed = serializers.IntegerField(help_text="Rules that raised.")
    missing = serializers.ListField(child=serializers.CharField(), help_text="The inputs missing.")


class VerdictSerializer(serializers.Serializer):
    """The root cause of the case, the chain to its worst symptom and the fix (docs/api.md). Each finding
    is the very object of the document's ``findings``."""

    state = serializers.ChoiceField(choices=("problem", "healthy"))
    headline = serializers.CharField(
        help_text="The root cause's title with its culprit, or 'No problem found'."
    )
    root_cause = serializers.DictField(
        allow_null=True, help_text="A finding of ``findings``; null when healthy."
    )
    chain = serializers.ListField(
        child=serializers.DictField(), help_text="Findings from the root cause to the worst symptom."
    )
    explains = serializers.ListField(
        child=serializers.DictField(), help_text="Findings the root cause explains."
    )
    also_found = serializers.ListField(
        child=serializers.DictField(), help_text="Findings no link joins to it."
    )
    links = LinkSerializer(many=True)
    fix = serializers.CharField(allow_blank=True)
    when = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="[start, end] ISO UTC."
    )
    confidence = serializers.CharField(allow_blank=True)
    check = serializers.CharField(allow_blank=True, help_text="What would disprove the root cause.")
    coverage = CoverageSerializer()


class QueryFiguresSerializer(serializers.Serializer):
    sum = serializers.FloatField(allow_null=True)
    avg = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)


class QueryTimeSerializer(QueryFiguresSerializer):
    p95 = serializers.FloatField(
        allow_null=True,
        help_text="pt-query-digest's 95th percentile (seconds), always of the whole log, in a window too.",
    )


class QueryExampleSerializer(serializers.Serializer):
    statement = serializers.CharField(help_text="The class's longest entry (at most 4,000 characters).")
    ts = serializers.DateTimeField(allow_null=True)
    query_time_s = serializers.FloatField(allow_null=True)
    schema = serializers.CharField(allow_null=True)
    line = serializers.IntegerField(help_text="Its first line in the member.")


class QueryClassSerializer(serializers.Serializer):
    """One class of a slow log (analyzer/statements/querydigest.py ``queries``)."""

    fingerprint = serializers.CharField()
    checksum = serializers.CharField(
        help_text="pt-query-digest's: the MD5 of the fingerprint, 32 hex digits."
    )
    count = serializers.IntegerField()
    query_time_s = QueryTimeSerializer()
    lock_time_s = QueryTimeSerializer()
    rows_sent = QueryFiguresSerializer()
    rows_examined = QueryFiguresSerializer()
    first_seen = serializers.DateTimeField(allow_null=True)
    last_seen = serializers.DateTimeField(allow_null=True)
    example = QueryExampleSerializer()
    extras = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        required=False,
        help_text="Sums of the fields the log has besides (Rows_affected, Tmp_disk_tables, Full_scan...), "
        "whole log only.",
    )
    host = serializers.CharField(help_text="The host the slow log was placed on.")
    member = serializers.CharField(help_text="The slow log's member in the bundle.")


class WindowQueryClassSerializer(QueryClassSerializer):
    number = serializers.IntegerField(help_text="The class's number in the case.")
    share_pct = serializers.FloatField(
        allow_null=True, help_text="Its share of the query time of the window."
    )
    spark = serializers.ListField(
        child=serializers.FloatField(), help_text="Its query time (seconds) in each bucket of `spark`."
    )


class QuerySparkSerializer(serializers.Serializer):
    start = serializers.DateTimeField(allow_null=True)
    end = serializers.DateTimeField(allow_null=True)
    points = serializers.IntegerField(
        help_text="Buckets of the same whole number of minutes from start to end, at most 60."
    )
    unit = serializers.CharField()


class QueriesSerializer(serializers.Serializer):
    """The classes of a case's slow logs over the whole log or a window, by total query time."""

    case = serializers.IntegerField()
    start = serializers.DateTimeField(allow_null=True)
    end = serializers.DateTimeField(allow_null=True)
    whole_log = serializers.BooleanField(help_text="No window: the classes' digests as stored.")
    classes = serializers.IntegerField(
        help_text="Classes with entries in the window (all of them: not only those sent)."
    )
    query_time_s = serializers.FloatField(help_text="Their total query time (seconds).")
    spark = QuerySparkSerializer()
    queries = WindowQueryClassSerializer(many=True)


class QueriesQuerySerializer(serializers.Serializer):
    start = serializers.DateTimeField(
        required=False, help_text="From this time (ISO 8601; UTC if no offset): the minute that holds it on."
    )
    end = serializers.DateTimeField(required=False, help_text="Up to this time (ISO 8601).")
    limit = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=500,
        default=50,
        help_text="Classes sent, most query time first.",
    )

    def validate_start(self, value: datetime) -> datetime:
        return _in_range(value)

    def validate_end(self, value: datetime) -> datetime:
        return _in_range(value)


class ReportSerializer(serializers.Serializer):
    """The same document as ``manage.py analyze --json``."""

    case = serializers.IntegerField()
    url = serializers.CharField()
    status = STATUS
    failure_reason = serializers.CharField(allow_null=True)
    host = serializers.CharField(allow_null=True)
    kernel = serializers.CharField(allow_null=True)
    ncpu = serializers.IntegerField(allow_null=True)
    window = serializers.ListField(child=serializers.DateTimeField(allow_null=True))
    utc_offset_s = serializers.IntegerField(allow_null=True)
    upload = serializers.DictField(allow_null=True)
    uploads = serializers.ListField(child=serializers.DictField(), help_text="Every bundle, the first first.")
    hosts = HostSerializer(many=True)
    sources = serializers.ListField(child=serializers.DictField())
    not_used = serializers.ListField(child=serializers.DictField())
    warnings = serializers.ListField(child=serializers.JSONField())
    findings = serializers.ListField(child=serializers.DictField())
    verdict = VerdictSerializer(
        allow_null=True, help_text="null: the case is not ready, or was analysed before verdicts were kept."
    )
    not_evaluated = serializers.ListField(child=serializers.DictField())
    rule_versions = serializers.DictField()
    queries = QueryClassSerializer(
        many=True, help_text="The slow logs' classes over the whole log, most query time first (at most 500)."
    )
    query_classes = serializers.IntegerField(help_text="How many classes the slow logs have.")


class SeriesSerializer(serializers.Serializer):
    name = serializers.CharField()
    points = serializers.IntegerField(help_text="Points stored (the whole capture).")
    first = serializers.DateTimeField(allow_null=True)
    last = serializers.DateTimeField(allow_null=True)
    data = serializers.ListField(
        child=serializers.ListField(
            child=serializers.FloatField(allow_null=True), min_length=2, max_length=2
        ),
        required=False,
        help_text="[epoch ms, value] in the range asked, at most max_points (MinMaxLTTB); null: no value.",
    )


class SeriesListSerializer(serializers.Serializer):
    case = serializers.IntegerField()
    series = SeriesSerializer(many=True)


class MomentSerializer(serializers.Serializer):
    at = serializers.IntegerField(help_text="The instant asked, epoch ms.")
    host = serializers.CharField(allow_null=True, help_text="The host of the moment (null: every member).")
    processlist = serializers.DictField(allow_null=True, help_text="The nearest SHOW PROCESSLIST snapshot.")
    threads = serializers.DictField(allow_null=True, help_text="The nearest ps thread snapshot.")
    raw = serializers.DictField(allow_null=True, help_text="The raw lines of every source then.")


class CompareSideSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    host = serializers.CharField(
        allow_blank=True, help_text="The host compared, else the case's hosts joined."
    )
    one_host = serializers.BooleanField(help_text="True when the side is one host of its case.")
    status = STATUS
    window_start = serializers.DateTimeField(allow_null=True)
    window_end = serializers.DateTimeField(allow_null=True)


class SeverityChangeSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    before = serializers.CharField()
    after = serializers.CharField()
    direction = serializers.ChoiceField(choices=("worse", "better"))


class FindingRefSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    severity = serializers.CharField()


class FindingDiffSerializer(serializers.Serializer):
    appeared = FindingRefSerializer(many=True)
    disappeared = FindingRefSerializer(many=True)
    changed_severity = SeverityChangeSerializer(many=True)
    unchanged = FindingRefSerializer(many=True)


class FingerprintDiffSerializer(serializers.Serializer):
    new = serializers.ListField(child=serializers.CharField())
    gone = serializers.ListField(child=serializers.CharField())
    kept = serializers.ListField(child=serializers.CharField())


class SlowLogClassRefSerializer(serializers.Serializer):
    fingerprint = serializers.CharField()
    checksum = serializers.CharField(help_text="pt-query-digest's checksum of the fingerprint.")
    count = serializers.IntegerField(help_text="Entries over the whole log.")
    query_time_s = serializers.FloatField(help_text="Total Query_time over the whole log, seconds.")


class SlowLogDiffSerializer(serializers.Serializer):
    compared = serializers.BooleanField(help_text="False when either side has no slow query log.")
    base_classes = serializers.IntegerField(
        allow_null=True, help_text="Classes of base's slow logs; null: none."
    )
    other_classes = serializers.IntegerField(
        allow_null=True, help_text="Classes of other's slow logs; null: none."
    )
    new = SlowLogClassRefSerializer(
        many=True, help_text="Other's classes base lacks, most time first (20 at most)."
    )
    new_count = serializers.IntegerField()
    gone_count = serializers.IntegerField()


class CompareSerializer(serializers.Serializer):
    base = CompareSideSerializer()
    other = CompareSideSerializer()
    findings = FindingDiffSerializer()
    fingerprints = FingerprintDiffSerializer()
    slow_log = SlowLogDiffSerializer(help_text="The slow log classes new in other (by checksum).")
