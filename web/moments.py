"""One moment of a case: what the processlist, the threads and every source's raw lines said then.

DESIGN.md, "Case page": *click a moment: the processlist and thread snapshot nearest to it, and the
raw lines of every source at that moment.* ``moment(case=..., at=...)`` answers that from the rows
the ingest stored (``ProcesslistRow``, ``ThreadRow``, ``SeriesPoint``, ``SampleIndex``) and, for the
raw lines, from the kept original upload (read back in one walk of the archive).

A read, not a write: it lives apart from ``selectors.py`` only because it is the one read that opens
the kept bundle. Every query filters on the case and its current generation.
"""

from __future__ import annotations

import contextlib
import io
import itertools
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Case as SqlCase
from django.db.models import (
    Count,
    DateTimeField,
    DurationField,
    ExpressionWrapper,
    F,
    IntegerField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Greatest, Left, Length

from parsers.archive import BundleError, Limits, Refused, walk
from web.models import Case, ProcesslistRow, SampleIndex, SeriesPoint, Source, ThreadRow, Upload
from web.services import _local_copy

#: Statement text sent per session: enough to read a query, bounded for a 1,000-session snapshot.
MAX_INFO_CHARS = 2_000
#: Sessions and threads listed per snapshot (the busiest production listings hold about 1,000).
MAX_SESSIONS = 1_000
MAX_THREADS = 1_000
#: Raw lines per source: one sample of a 64-CPU mpstat or a 1,000-session processlist is cut there.
MAX_RAW_LINES = 200
#: Sources whose raw lines are shown at once (the nearest ones); a bundle rarely has more.
MAX_RAW_SOURCES = 20
#: Characters kept per raw line: one statement can fill a line with hundreds of kilobytes.
MAX_RAW_LINE_CHARS = 4_000
#: A source's sample counts as "at that moment" within its own interval, and never less than this
#: (collectors sample every 1 s; clocks of two tools started a moment apart differ by up to 1 s).
MIN_REACH_S = 2.0
#: ps(1) process state codes (procps-ng "PROCESS STATE CODES", plus K and P of some kernels): the
#: names of the ``threads.state:<code>`` series written by analyzer/series.py.
PS_STATE_CODES = ("D", "R", "S", "I", "T", "t", "W", "X", "Z", "K", "P")
#: Thread states listed first: uninterruptible sleep (the usual suspect), then running.
THREAD_STATE_ORDER = ("D", "R")


def _ms(value: datetime) -> int:
    return round(value.timestamp() * 1000)


def _nearest_ts(rows: QuerySet, at: datetime) -> datetime | None:
    """The ``ts`` of ``rows`` nearest to ``at`` (the earlier one on a tie); two index lookups."""
    before = rows.filter(ts__lte=at).order_by("-ts").values_list("ts", flat=True).first()
    after = rows.filter(ts__gte=at).order_by("ts").values_list("ts", flat=True).first()
    if before is None or after is None:
        return before or after
    return before if at - before <= after - at else after


def moment(*, case: Case, at: datetime) -> dict[str, object]:
    """The case at instant ``at`` (aware datetime), JSON-ready.

    Returns ``{"at": epoch ms, "processlist": ..., "threads": ..., "raw": ...}``; each part is None
    when the case has no such data (see ``processlist_at``, ``threads_at``, ``raw_at``).
    """
    return {
        "at": _ms(at),
        "processlist": processlist_at(case=case, at=at),
        "threads": threads_at(case=case, at=at),
        "raw": raw_at(case=case, at=at),
    }


def processlist_at(*, case: Case, at: datetime) -> dict[str, object] | None:
    """The SHOW PROCESSLIST snapshot nearest to ``at``: ``{"ts": ms, "sessions", "active", "rows",
    "omitted"}``. Rows: active sessions first, then the longest ``time_s`` (seconds in the current
    state) first; at most ``MAX_SESSIONS``, ``omitted`` says how many more the snapshot held; ``info``
    is cut to ``MAX_INFO_CHARS`` (``info_cut`` True then). None when the case has no processlist."""
    rows = ProcesslistRow.objects.filter(case=case, generation=case.generation)
    ts = _nearest_ts(rows, at)
    if ts is None:
        return None
    snapshot = rows.filter(ts=ts)
    counts = snapshot.aggregate(sessions=Count("id"), active=Count("id", filter=Q(active=True)))
    listed = (
        snapshot.annotate(
            info_text=Left("statement__info", MAX_INFO_CHARS),
            info_len=Length("statement__info"),
            fingerprint_text=Left("statement__fingerprint", MAX_INFO_CHARS),
        )
        .order_by("-active", F("time_s").desc(nulls_last=True), "session_id", "id")
        .values(
            "session_id", "user", "host", "db", "command", "time_s", "state", "active",
            "info_text", "info_len", "fingerprint_text", "member", "line_no",
        )[:MAX_SESSIONS]
    )  # fmt: skip
    out_rows = [
        {
            "id": r["session_id"],
            "user": r["user"],
            "host": r["host"],
            "db": r["db"],
            "command": r["command"],
            "time_s": r["time_s"],
            "state": r["state"],
            "active": r["active"],
            "info": r["info_text"],
            "info_cut": (r["info_len"] or 0) > MAX_INFO_CHARS,
            "fingerprint": r["fingerprint_text"],
            "member": r["member"],
            "line_no": r["line_no"],
        }
        for r in listed
    ]
    return {
        "ts": _ms(ts),
        "sessions": counts["sessions"],
        "active": counts["active"],
        "rows": out_rows,
        "omitted": counts["sessions"] - len(out_rows),
    }


def threads_at(*, case: Case, at: datetime) -> dict[str, object] | None:
    """The ps snapshot nearest to ``at``: ``{"ts": ms, "counts": {state: threads}, "total", "rows",
    "omitted"}``. ``counts`` come from the ``threads.state:<code>`` series (every thread, sleeping
    ones included), D then R then the rest by count; ``rows`` are the threads that were not
    sleeping (ThreadRow: R, D, Z, T ...), D first, then R, then by %CPU; at most ``MAX_THREADS``.
    None when the case has no thread listing."""
    names = [f"threads.state:{code}" for code in PS_STATE_CODES]
    points = SeriesPoint.objects.filter(case=case, series__in=names)
    ts = _nearest_ts(points, at)
    if ts is None:
        return None
    values = {
        name.split(":", 1)[1]: int(value)
        for name, value in points.filter(ts=ts).values_list("series", "value")
        if value
    }
    order = {code: i for i, code in enumerate(THREAD_STATE_ORDER)}
    counts = dict(sorted(values.items(), key=lambda kv: (order.get(kv[0], len(order)), -kv[1], kv[0])))
    threads = ThreadRow.objects.filter(case=case, generation=case.generation, ts=ts)
    rank = SqlCase(
        *(When(state=code, then=Value(i)) for i, code in enumerate(THREAD_STATE_ORDER)),
        default=Value(len(THREAD_STATE_ORDER)),
        output_field=IntegerField(),
    )
    listed = list(
        threads.annotate(rank=rank)
        .order_by("rank", F("pcpu").desc(nulls_last=True), "pid", "tid", "id")
        .values("tid", "pid", "user", "state", "stat", "pcpu", "comm", "wchan", "member", "line_no")[
            :MAX_THREADS
        ]
    )
    stored = threads.count() if len(listed) == MAX_THREADS else len(listed)
    return {
        "ts": _ms(ts),
        "counts": counts,
        "total": sum(counts.values()),
        "rows": listed,
        "omitted": stored - len(listed),
    }


def _reach_s(case: Case) -> dict[str, float]:
    """Member -> how far from a moment its sample may lie: its sampling interval, at least MIN_REACH_S."""
    reach: dict[str, float] = {}
    for member, samples, start, end in Source.objects.filter(case=case).values_list(
        "member", "samples", "start", "end"
    ):
        interval = (end - start).total_seconds() / (samples - 1) if samples > 1 and start and end else 0.0
        reach[member] = max(MIN_REACH_S, interval)
    return reach


def raw_at(*, case: Case, at: datetime) -> dict[str, object] | None:
    """The raw lines of every source whose sample nearest to ``at`` lies within its reach
    (``max(MIN_REACH_S, interval)``): ``{"sources": [{"member", "format", "ts", "line_start",
    "line_end", "lines", "lines_cut"}], "omitted_sources", "error"}``, sources by member name.
    At most ``MAX_RAW_LINES`` lines per source from ``line_start`` (``lines_cut`` True when the
    sample has more), at most ``MAX_RAW_SOURCES`` sources (the nearest ones). ``error`` names why
    the kept bundle could not be read (the sources are listed without lines then). None when the
    case has no sample index."""
    samples = SampleIndex.objects.filter(case=case)
    if not samples.exists():
        return None
    reach = _reach_s(case)
    widest = timedelta(seconds=max([MIN_REACH_S, *reach.values()]))
    moment_ = Value(at, output_field=DateTimeField())
    distance = ExpressionWrapper(Greatest(F("ts") - moment_, moment_ - F("ts")), output_field=DurationField())
    nearest = (
        samples.filter(ts__gte=at - widest, ts__lte=at + widest)
        .annotate(distance=distance)
        .order_by("member", "distance", "ts")
        .distinct("member")
        .values("member", "format", "ts", "line_start", "line_end", "distance")
    )
    near = [r for r in nearest if r["distance"].total_seconds() <= reach.get(r["member"], MIN_REACH_S)]
    near.sort(key=lambda r: (r["distance"], r["member"]))
    chosen = sorted(near[:MAX_RAW_SOURCES], key=lambda r: r["member"])
    wanted = {
        r["member"]: (r["line_start"], min(r["line_end"], r["line_start"] + MAX_RAW_LINES - 1))
        for r in chosen
    }
    lines, error = _read_lines(case, wanted)
    sources = [
        {
            "member": r["member"],
            "format": r["format"],
            "ts": _ms(r["ts"]),
            "line_start": r["line_start"],
            "line_end": r["line_end"],
            "lines": lines.get(r["member"], []),
            "lines_cut": r["line_end"] - r["line_start"] + 1 > MAX_RAW_LINES,
        }
        for r in chosen
    ]
    return {"sources": sources, "omitted_sources": len(near) - len(chosen), "error": error}


def _read_lines(case: Case, wanted: dict[str, tuple[int, int]]) -> tuple[dict[str, list[str]], str | None]:
    """Lines ``first..last`` (1-based, inclusive) of each wanted member of the kept bundle, read in
    one walk of the archive and numbered as the parsers number them (UTF-8 with replacement,
    universal newlines). Returns the lines found and an error message (or None)."""
    found: dict[str, list[str]] = {}
    if not wanted:
        return found, None
    upload = Upload.objects.filter(case=case).first()
    if upload is None:
        return found, "The original bundle of this case is not kept."
    limits = Limits(
        max_members=settings.CASEBOOK_MAX_MEMBERS,
        max_total_bytes=settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES,
        max_ratio=settings.CASEBOOK_MAX_RATIO,
    )
    try:
        with _local_copy(upload) as path:
            entries = walk(path, limits=limits, display_name=upload.original_name)
            with contextlib.closing(entries):
                for entry in entries:
                    name = entry.name[:500]
                    if isinstance(entry, Refused) or name not in wanted or name in found:
                        continue
                    first, last = wanted[name]
                    text = io.TextIOWrapper(entry.open(), encoding="utf-8", errors="replace", newline=None)
                    found[name] = [
                        _cut(line.rstrip("\n")) for line in itertools.islice(text, first - 1, last)
                    ]
                    if len(found) == len(wanted):
                        break
    except (BundleError, OSError) as exc:
        return found, f"The original bundle could not be read: {exc}"
    missing = sorted(set(wanted) - set(found))
    if missing:
        return found, f"Not found in the original bundle: {', '.join(missing[:5])}"
    return found, None


def _cut(line: str) -> str:
    if len(line) <= MAX_RAW_LINE_CHARS:
        return line
    return f"{line[:MAX_RAW_LINE_CHARS]}… ({len(line) - MAX_RAW_LINE_CHARS:,} more characters)"


def parse_epoch_ms(raw: str | None) -> datetime:
    """``t`` query parameter (epoch milliseconds, integer or decimal) -> aware UTC datetime.

    Raises ValueError when missing, not a finite number, or outside years 1970 to 9999.
    """
    if raw is None or not raw.strip():
        raise ValueError("t is required")
    value = float(raw)
    if not 0 <= value < 253_402_300_800_000:  # 9999-12-31T23:59:59Z in ms; also rejects NaN
        raise ValueError("t is out of range")
    return datetime.fromtimestamp(value / 1000.0, tz=UTC)
