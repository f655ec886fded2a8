"""A case: its status, its kept uploads, its hosts and sources, and the rows derived from its bundle
(series, levels, raw chunks, sample index, findings, rule results), replaced together in one
transaction when a case is ingested or re-analyzed."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.functions import Upper

from web.models.teams import DEFAULT_TEAM_NAME, Team

#: BULK_ROWS: the per-sample and series tables (millions of rows a case, written with COPY) keep their
#: case link without a database constraint: a foreign-key check per COPY'd row costs more than the
#: COPY itself. Django still deletes them with their case (on_delete=CASCADE is Django's), and only
#: services.py writes them, always for an existing case.


class CaseStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PARSING = "parsing", "Parsing"
    ANALYZING = "analyzing", "Analyzing"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


FINAL_STATUSES = (CaseStatus.READY, CaseStatus.FAILED)
#: A worker holds the case (web/ingest/claims.py): it must keep reporting, or the sweeper takes the case back.
PROCESSING_STATUSES = (CaseStatus.PARSING, CaseStatus.ANALYZING)


class ResolutionCategory(models.TextChoices):
    """What fixed a closed case, broadly (``Case.resolution_category``)."""

    CONFIGURATION = "configuration", "Configuration"
    QUERY = "query", "Query"
    HARDWARE = "hardware", "Hardware"
    APPLICATION = "application", "Application"
    NOT_DATABASE = "not-database", "Not a database problem"
    OTHER = "other", "Other"


def default_team_id() -> int:
    """The id of the default team (made on first use): the team of a case created without one."""
    # Read by id only: old migrations call this with the current model, before later Team columns exist.
    pk = Team.objects.filter(name=DEFAULT_TEAM_NAME).values_list("pk", flat=True).first()
    if pk is None:
        pk = Team.objects.get_or_create(name=DEFAULT_TEAM_NAME)[0].pk
    return pk


class Case(models.Model):
    title = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=CaseStatus.choices, default=CaseStatus.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)  # percent
    status_detail = models.CharField(max_length=300, blank=True)  # e.g. the member being parsed
    failure_reason = models.TextField(blank=True)
    host = models.CharField(max_length=255, blank=True)
    kernel = models.CharField(max_length=100, blank=True)
    ncpu = models.PositiveIntegerField(null=True, blank=True)
    layout = models.CharField(max_length=20, blank=True)  # pt-stalk, collector, oswatcher, loose
    window_start = models.DateTimeField(null=True, blank=True)
    window_end = models.DateTimeField(null=True, blank=True)
    utc_offset_s = models.IntegerField(null=True, blank=True)  # server local time = UTC + offset
    utc_offset_origin = models.CharField(max_length=100, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    rule_versions = models.JSONField(default=dict, blank=True)
    # Per-sample detail rows are written while the bundle is parsed, tagged with the ingest's
    # generation; the final transaction makes it current and deletes the other generations.
    generation = models.PositiveIntegerField(default=0)
    # The timeline JSON of the whole capture (charts.timeline_charts), built once at ingest so the
    # page does not aggregate a long capture's series on every visit; zoomed ranges are read live.
    charts_overview = models.JSONField(null=True, blank=True)
    # The verdict the analysis reached (analyzer/reasoning/verdict.py), stored at publication: the root cause
    # and
    # the chain to the worst symptom as references to the case's findings, the causal links with their
    # evidence, the fix. Pages, the API, the report and share links expand it (web/cases/selectors.py).
    verdict = models.JSONField(default=dict, blank=True, db_default={})
    # The key of the verdict's root cause ("" for a healthy capture or a case not analysed yet): what
    # the team's trends count per week.
    root_cause_key = models.CharField(max_length=80, blank=True, db_default="", db_index=True)
    # What the team searches past cases by, besides title, host and finding keys: the capture's most
    # frequent query fingerprints and D-state wait channels, one per line (filled at ingest).
    search_terms = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="cases"
    )
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="cases", default=default_team_id)
    # What the engineers record about the case (editable on the case page): the customer's
    # organisation, their ticket reference, free tags, and notes in Markdown (rendered sanitised).
    customer = models.CharField(max_length=200, blank=True)
    ticket = models.CharField(max_length=100, blank=True)
    tags = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    notes = models.TextField(blank=True)
    # What a case is compared and found by (filled at ingest): the keys of its findings, the
    # capture's most frequent query fingerprints and D-state wait channels, most frequent first.
    finding_keys = ArrayField(models.CharField(max_length=80), default=list, blank=True)
    fingerprints = ArrayField(models.TextField(), default=list, blank=True)
    wait_channels = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    # Full-text search document (web/history/search.py keeps it current): title, customer, ticket and tags
    # weigh most, then host, then finding keys, wait channels and fingerprints, then notes.
    search_vector = SearchVectorField(null=True, blank=True)
    # How the case was closed (web/cases/services.py ``case_close``): what fixed it (Markdown, rendered
    # sanitised) and its category; open while ``closed_at`` is None.
    resolution = models.TextField(blank=True, db_default="")
    resolution_category = models.CharField(
        max_length=20, choices=ResolutionCategory.choices, blank=True, db_default=""
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    ingested_at = models.DateTimeField(null=True, blank=True)
    # Fault handling (web/ingest/claims.py, web/ingest/sweeper.py). ``claim``: the token of the task execution
    # that
    # holds the case while it is parsing or analyzing ("" when none); ``claims``: how many claims were
    # ever taken (each claim writes its detail rows under its own generation, so two executions never
    # mix rows); ``heartbeat_at``: the last sign of life of the holder; ``enqueued_at``: when the ingest
    # task was last handed to the broker (None: not yet, e.g. the broker was unreachable);
    # ``requeues``: how often the sweeper took the case back from a silent worker since the last
    # upload or re-analyze (bounded: then the case fails with the reason).
    claim = models.CharField(max_length=200, blank=True)
    claims = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    requeues = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [
            models.Index(fields=["-created_at"]),
            models.Index(fields=["host"]),
            models.Index(fields=["team", "-created_at"], name="case_team_created_idx"),
            # The team's trends (web/trends/selectors.py) read these columns of a range of uploads:
            # included in the index, they are answered by an index-only scan.
            models.Index(
                fields=["team", "created_at"],
                include=["id", "status", "closed_at", "ingested_at", "root_cause_key", "customer"],
                name="case_trends_idx",
            ),
            GinIndex(fields=["search_vector"], name="case_search_vector_idx"),
            models.Index(Upper("customer"), name="case_customer_upper_idx"),  # customer__iexact
            GinIndex(fields=["host"], opclasses=["gin_trgm_ops"], name="case_host_trgm_idx"),
            GinIndex(fields=["ticket"], opclasses=["gin_trgm_ops"], name="case_ticket_trgm_idx"),
            GinIndex(fields=["finding_keys"], name="case_finding_keys_idx"),
            GinIndex(fields=["fingerprints"], name="case_fingerprints_idx"),
            GinIndex(fields=["wait_channels"], name="case_wait_channels_idx"),
            # What the sweeper scans every few seconds: the few cases not finished yet.
            models.Index(
                fields=["status"], name="case_unfinished_idx", condition=~models.Q(status__in=FINAL_STATUSES)
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(progress__lte=100), name="case_progress_at_most_100"),
            models.CheckConstraint(
                condition=~models.Q(status=CaseStatus.FAILED) | ~models.Q(failure_reason=""),
                name="case_failed_has_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"Case {self.pk} {self.title or self.host}"


class BundleFile(models.Model):
    """A bundle as uploaded, kept through Django's storage API whatever happens to its parse: the
    file under ``bundles/<year>/<month>/``, the name it was uploaded with, its size (bytes) and
    SHA-256 (hex). The fields of ``Upload`` and ``AddedUpload``."""

    file = models.FileField(upload_to="bundles/%Y/%m/", max_length=300)
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField()  # bytes
    sha256 = models.CharField(max_length=64, db_index=True)
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.original_name} ({self.size:,} bytes)"


class Upload(BundleFile):
    """The case's first bundle."""

    case = models.OneToOneField(Case, on_delete=models.CASCADE, related_name="upload")


class AddedUpload(BundleFile):
    """A further bundle of the same incident, added to a case after its first (``Case.upload``): most
    often another host's capture of the same minutes. Kept like the first, whatever its parse; the
    case is analysed again over all of its bundles (first, then these in ``uploaded_at`` order)."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="added_uploads")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("uploaded_at", "id")


class Host(models.Model):
    """One server of a case: a case holds one or more (a cluster's nodes, a source and its replicas).
    ``name`` is what every per-host row (``Source.host``, ``Series.host``, ``SeriesLevel.host``,
    ``Finding.host``, ``RuleResult.host``) refers to; ``name_origin`` says where it was read (pt-stalk's
    ``-hostname``, a sysstat banner, the ``hostname`` variable, the collector's manifest, OSWatcher's
    archive name, or the directory as a fallback). Each host keeps its own clock: ``utc_offset_s``
    (server local time = UTC + offset) with its origin, and ``offset_s``, the estimated offset of
    its clock against the case's first host (seconds, None when the captures allow no estimate),
    shown, never applied to its times."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="hosts")
    position = models.PositiveSmallIntegerField()  # 0: the case's first host
    name = models.CharField(max_length=255)
    name_origin = models.CharField(max_length=300, blank=True)
    kernel = models.CharField(max_length=100, blank=True)
    ncpu = models.PositiveIntegerField(null=True, blank=True)
    layout = models.CharField(max_length=20, blank=True)
    window_start = models.DateTimeField(null=True, blank=True)
    window_end = models.DateTimeField(null=True, blank=True)
    utc_offset_s = models.IntegerField(null=True, blank=True)
    utc_offset_origin = models.CharField(max_length=100, blank=True)
    offset_s = models.FloatField(null=True, blank=True)
    offset_origin = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ("position",)
        constraints = [
            models.UniqueConstraint(fields=["case", "name"], name="host_case_name"),
            models.UniqueConstraint(fields=["case", "position"], name="host_case_position"),
        ]

    def __str__(self) -> str:
        return self.name


class SourceRole(models.TextChoices):
    PRIMARY = "primary", "primary"
    OVERLAP = "overlap", "overlap"
    SUMMARY = "summary", "summary"


class Source(models.Model):
    """One parsed member: its format, sample count, window and clock provenance."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="sources")
    member = models.CharField(max_length=500)
    format = models.CharField(max_length=40)
    samples = models.PositiveIntegerField()
    start = models.DateTimeField(null=True)
    end = models.DateTimeField(null=True)
    clock = models.CharField(max_length=30)
    variant = models.CharField(max_length=200, blank=True)
    meta = models.JSONField(default=dict)
    warnings = models.JSONField(default=list)  # [{"line", "code", "message"}], capped
    warning_count = models.PositiveIntegerField(default=0)
    #: What the member became among the captures of its source (analyzer/timeline/primary.py): the primary
    #: capture rules and charts read, an overlap kept for its raw lines, or a whole-run summary.
    role = models.CharField(max_length=10, choices=SourceRole.choices, blank=True)
    role_reason = models.CharField(max_length=500, blank=True)
    #: The ``Host.name`` of the server the member was captured on, and why it was placed there.
    host = models.CharField(max_length=255, blank=True, db_default="")
    host_reason = models.CharField(max_length=300, blank=True, db_default="")

    class Meta:
        ordering = ("member",)

    def __str__(self) -> str:
        return f"{self.format} {self.member}"


class NotUsedMember(models.Model):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="not_used")
    member = models.CharField(max_length=500)
    reason = models.TextField()

    class Meta:
        ordering = ("member",)

    def __str__(self) -> str:
        return f"{self.member}: {self.reason[:60]}"


class Series(models.Model):
    """One aggregated series of a case (``vmstat.r``, ``processlist.state:Sending data``): its times
    (``ts_us``, microseconds since the Unix epoch, UTC, ascending) and values (``values``, the unit
    the name implies; NaN where a sample had none), one row per series. A one-hour capture has a
    few hundred series of 3,600 points: a row each is written and read back in milliseconds, where a
    row per point was a COPY of half a million rows."""

    case = models.ForeignKey(
        Case, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )  # BULK_ROWS: the unique index below starts with case
    host = models.CharField(max_length=255, blank=True, db_default="")  # Host.name
    name = models.CharField(max_length=200)
    ts_us = ArrayField(models.BigIntegerField())
    values = ArrayField(models.FloatField())

    class Meta:
        constraints = [models.UniqueConstraint(fields=["case", "host", "name"], name="series_case_host_name")]

    def __str__(self) -> str:
        return f"{self.name} ({len(self.ts_us)} points)"


class SeriesLevel(models.Model):
    """One series of a case at one level of detail, as little-endian bytes for range reads: level 0
    holds every sample; level k keeps, of each run of ``LEVEL_FACTOR ** k`` samples, the smallest
    and the largest value at their own times (min/max downsampling: peaks survive). A zoomed chart
    reads the finest level that has at most a few thousand points in the range, and only the bytes
    of that range (``substring`` on uncompressed, out-of-line storage: PostgreSQL fetches just the
    TOAST chunks it needs). Written with ``Series`` by the ingest (web/timeline/bulk.py); read by
    web/timeline/charts.py.

    ``ts``: int64 microseconds since the epoch, ascending; ``values``: float64 (NaN: no value);
    ``n`` points; ``t_first_us``/``t_last_us`` the first and last time (to estimate where a time lies).
    """

    case = models.ForeignKey(
        Case, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )  # BULK_ROWS: the unique index below starts with case
    host = models.CharField(max_length=255, blank=True, db_default="")  # Host.name
    name = models.CharField(max_length=200)
    level = models.PositiveSmallIntegerField()
    n = models.PositiveIntegerField()
    t_first_us = models.BigIntegerField()
    t_last_us = models.BigIntegerField()
    ts = models.BinaryField()
    values = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["case", "level", "host", "name"], name="series_level_case_level_host_name"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} level {self.level} ({self.n} points)"


class RawChunk(models.Model):
    """Lines ``line_start..line_end`` (1-based, inclusive) of one parsed member, as its parser read
    them (UTF-8, universal newlines), compressed with Zstandard: the per-sample detail of a case. The
    sessions of a processlist snapshot, the threads of a ps snapshot and the raw lines of any source
    at a moment are read back from here (``web/timeline/moments.py``) without opening the kept upload.

    Written while the bundle is parsed, tagged with the ingest's generation (see ``Case.generation``).
    """

    case = models.ForeignKey(
        Case, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )  # BULK_ROWS: the composite index below starts with case
    generation = models.PositiveIntegerField(default=0)
    member = models.CharField(max_length=500)
    line_start = models.PositiveIntegerField()
    line_end = models.PositiveIntegerField()
    text_zstd = models.BinaryField()

    class Meta:
        indexes = [models.Index(fields=["case", "generation", "member", "line_start"])]

    def __str__(self) -> str:
        return f"{self.member} lines {self.line_start}-{self.line_end}"


class SampleIndex(models.Model):
    """Where one sample of one source sits in its member: the lines ``line_start..line_end`` (1-based,
    inclusive) of the sample at ``ts``. Lets a page show the raw lines of every source at a moment."""

    case = models.ForeignKey(
        Case, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )  # BULK_ROWS: the composite index below starts with case
    member = models.CharField(max_length=500)
    format = models.CharField(max_length=40)
    ts = models.DateTimeField()
    line_start = models.PositiveIntegerField()
    line_end = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["case", "ts"]),
            # The moment panel: the snapshot of a format nearest to a time, and a member's sample
            # before it, in one index step each whatever the capture length.
            models.Index(fields=["case", "format", "ts"], name="sampleindex_case_format_ts"),
            models.Index(fields=["case", "member", "ts"], name="sampleindex_case_member_ts"),
        ]

    def __str__(self) -> str:
        return f"{self.member} {self.ts:%H:%M:%S} lines {self.line_start}-{self.line_end}"


class QueryClass(models.Model):
    """One class of statements of a slow query log of the case (``slowlog_classes`` of
    parsers/slowlog.py): ``digest`` is the class over the whole log as
    ``analyzer.statements.querydigest.queries`` gives it (count, query and lock time, rows, first and last
    seen, example; pt-query-digest's checksum and 95th percentile), passwords masked; ``number`` identifies it
    in the case (0..n-1, over every slow log of the case) for its ``QueryMinute`` rows; ``query_time_s`` is
    its total query time (seconds), the order of the *Queries* table. Written by the ingest (COPY)."""

    case = models.ForeignKey(
        Case, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )  # BULK_ROWS: the unique index below starts with case
    number = models.PositiveIntegerField()
    host = models.CharField(max_length=255, blank=True, db_default="")  # Host.name
    member = models.CharField(max_length=500)
    checksum = models.CharField(max_length=32)
    fingerprint = models.TextField()
    query_time_s = models.FloatField()
    digest = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["case", "number"], name="queryclass_case_number")]
        indexes = [models.Index(fields=["case", "-query_time_s"], name="queryclass_case_time")]

    def __str__(self) -> str:
        return f"{self.checksum} {self.fingerprint[:60]}"


class QueryMinute(models.Model):
    """One class of a slow log (``QueryClass.number`` of the same case) in one minute that has entries
    of it (``slowlog_class_minutes``): entries, query and lock time (sum and greatest, seconds), rows
    sent and examined (sum and greatest). A time window's figures of a class are sums over its
    minutes (a 95th percentile is not: it stays the whole log's). Written by the ingest (COPY)."""

    case = models.ForeignKey(
        Case, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )  # BULK_ROWS: the composite index below starts with case
    number = models.PositiveIntegerField()
    ts = models.DateTimeField()
    queries = models.BigIntegerField()
    query_time_s = models.FloatField()
    query_time_max_s = models.FloatField()
    lock_time_s = models.FloatField()
    lock_time_max_s = models.FloatField()
    rows_sent = models.BigIntegerField()
    rows_sent_max = models.BigIntegerField()
    rows_examined = models.BigIntegerField()
    rows_examined_max = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["case", "ts"], name="queryminute_case_ts")]

    def __str__(self) -> str:
        return f"class {self.number} {self.ts:%H:%M} {self.queries} queries"


class Finding(models.Model):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="findings")
    position = models.PositiveSmallIntegerField()  # most severe first
    key = models.CharField(max_length=80)
    severity = models.CharField(max_length=10)
    title = models.CharField(max_length=300)
    summary = models.TextField()
    windows = models.JSONField(default=list)  # [[start_iso, end_iso], ...]
    evidence = models.JSONField(default=list)  # [{"label","value","unit","series","member","lines"}]
    recommendation = models.TextField()
    caveats = models.JSONField(default=list)
    sources = models.JSONField(default=list)
    confidence = models.TextField(blank=True)
    disproof = models.TextField(blank=True)
    related = models.JSONField(default=list)
    rule_version = models.PositiveIntegerField()
    # What the finding blames (analyzer.findings.culprit_json): {kind, id, user, host, statement,
    # since, blocks, evidence}, or null when its cause is not one session, process, statement, ...
    culprit = models.JSONField(null=True, blank=True)
    # The Host.name the finding is about; a cross-host finding leaves it blank and names its hosts.
    host = models.CharField(max_length=255, blank=True, db_default="")
    hosts = ArrayField(models.CharField(max_length=255), default=list, blank=True, db_default=[])

    class Meta:
        ordering = ("position",)
        indexes = [models.Index(fields=["key"])]

    def __str__(self) -> str:
        return f"{self.severity} {self.key}"


class RuleResult(models.Model):
    """A rule that did not produce a verdict: not evaluated (inputs missing) or failed (raised)."""

    class Outcome(models.TextChoices):
        NOT_EVALUATED = "not_evaluated", "Not evaluated"
        FAILED = "failed", "Failed"

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="rule_results")
    key = models.CharField(max_length=80)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    detail = models.TextField()
    host = models.CharField(max_length=255, blank=True, db_default="")  # Host.name; blank: across hosts

    class Meta:
        ordering = ("key",)

    def __str__(self) -> str:
        return f"{self.key} {self.outcome}"
