"""One moment of a case: what the processlist, the threads and every source's raw lines said then.

DESIGN.md, "Case page": *click a moment: the processlist and thread snapshot nearest to it, and the
raw lines of every source at that moment.* ``moment(case=..., at=...)`` answers that from what the
ingest stored: the sample index (where each sample of each member lies), the series (thread counts by
state) and the members' text kept as compressed chunks (``RawChunk``). The sessions and threads of a
snapshot are its raw lines parsed again by the same parser, so the panel shows every column the
capture had, and a moment costs a chunk or two to decompress, whatever the length of the capture.

A read, not a write: it lives apart from ``selectors.py`` because it parses. Every query filters on
the case and its current generation.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, Q, QuerySet, Value
from django.db.models.functions import Greatest

from analyzer.statements.fingerprint import fingerprints
from analyzer.timeline.timeline import THREAD_STATES_KEPT, session_is_active
from parsers import registry
from parsers.base import ClockHints, ParsedSource, ParseError
from parsers.passwords import masked
from parsers.rawtext import lines_in
from web.models import Case, RawChunk, SampleIndex, Source
from web.timeline import levels
from web.timeline.series import host_param, series_arrays  # noqa: F401 - host_param: the views read it here

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
#: How far around a moment the thread counts are read first (µs): wider than any sampling interval.
NEAR_US = 3_600 * 1_000_000
#: ps(1) process state codes (procps-ng "PROCESS STATE CODES", plus K and P of some kernels): the
#: names of the ``threads.state:<code>`` series written by analyzer/timeline/series.py.
PS_STATE_CODES = ("D", "R", "S", "I", "T", "t", "W", "X", "Z", "K", "P")
#: Thread states listed first: uninterruptible sleep (the usual suspect), then running.
THREAD_STATE_ORDER = ("D", "R")
#: What the panel shows of a session and of a thread.
SESSION_FIELDS = (
    "session_id", "user", "host", "db", "command", "time_s", "state", "active",
    "info", "info_cut", "fingerprint", "member", "line_no",
)  # fmt: skip
THREAD_FIELDS = ("tid", "pid", "user", "state", "stat", "pcpu", "comm", "wchan", "member", "line_no")


def _ms(value: datetime) -> int:
    return round(value.timestamp() * 1000)


def _nearest_ts(rows: QuerySet, at: datetime) -> datetime | None:
    """The ``ts`` of ``rows`` nearest to ``at`` (the earlier one on a tie); two index lookups."""
    before = rows.filter(ts__lte=at).order_by("-ts").values_list("ts", flat=True).first()
    after = rows.filter(ts__gte=at).order_by("ts").values_list("ts", flat=True).first()
    if before is None or after is None:
        return before or after
    return before if at - before <= after - at else after


def moment(*, case: Case, at: datetime, host: str | None = None) -> dict[str, object]:
    """The case at instant ``at`` (aware datetime), JSON-ready; with ``host`` (a ``Host.name``) only
    that host's members and series (a case of several hosts has a moment per host; None: every
    member, a case of one host).

    Returns ``{"at": epoch ms, "host": host or None, "processlist": ..., "threads": ..., "raw": ...}``;
    each part is None when the case (or host) has no such data (see ``processlist_at``,
    ``threads_at``, ``raw_at``). Every password in it is masked (``parsers.passwords.masked``): the
    raw chunks are the capture as taken, sessions' statements and command lines included.
    """
    return masked(
        {
            "at": _ms(at),
            "host": host,
            "processlist": processlist_at(case=case, at=at, host=host),
            "threads": threads_at(case=case, at=at, host=host),
            "raw": raw_at(case=case, at=at, host=host),
        }
    )


def _samples(case: Case, host: str | None) -> QuerySet:
    """The case's sample index, only the members of ``host`` when given."""
    rows = SampleIndex.objects.filter(case=case)
    if host is not None:
        rows = rows.filter(member__in=Source.objects.filter(case=case, host=host).values("member"))
    return rows


def _records(frame: pd.DataFrame, columns: tuple[str, ...]) -> list[dict[str, object]]:
    """Rows of ``frame`` as JSON-ready dicts (missing columns and values -> None). Built column by
    column: a 1,000-session snapshot takes milliseconds, where ``to_dict("records")`` took a tenth
    of a second."""
    n = len(frame)
    values = []
    for c in columns:
        if c not in frame:
            values.append([None] * n)
            continue
        col = frame[c]
        out = col.astype(object).where(col.notna(), None).tolist()
        values.append([v.item() if isinstance(v, np.generic) else v for v in out])
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)] if n else []


def _snapshot(
    case: Case, fmt: str, at: datetime, host: str | None = None
) -> tuple[ParsedSource | None, SampleIndex | None, str | None]:
    """The sample of format ``fmt`` nearest to ``at``, parsed again from its stored raw lines.

    The text parsed runs from the line after the member's previous sample (its marker and header
    lines) to the sample's last line, so it reads as a capture of one snapshot; ``line_no`` values
    are the member's. Returns (source, sample, error): (None, None, None) when the case has no such
    sample, (None, sample, message) when its lines could not be read or parsed.
    """
    samples = SampleIndex.objects.filter(case=case, format=fmt)
    ts = _nearest_ts(samples, at)
    if ts is None:
        return None, None, None
    sample = samples.filter(ts=ts).order_by("member").first()
    previous = (
        samples.filter(member=sample.member, ts__lt=ts)
        .order_by("-ts")
        .values_list("line_end", flat=True)
        .first()
    )
    first = (previous or 0) + 1
    lines, error = _member_lines(case, sample.member, first, sample.line_end)
    if error:
        return None, sample, error
    try:
        source = registry.by_format(fmt).parse(
            [f"{line}\n" for line in lines], member=sample.member, clock=ClockHints()
        )
    except ParseError as exc:
        return None, sample, f"The snapshot could not be read again: {exc}"
    for frame in source.frames.values():
        if "line_no" in frame:
            frame["line_no"] += first - 1
    return source, sample, None


def processlist_at(*, case: Case, at: datetime, host: str | None = None) -> dict[str, object] | None:
    """The SHOW PROCESSLIST snapshot nearest to ``at``: ``{"ts": ms, "sessions", "active", "rows",
    "omitted", "error"}``. Rows: active sessions first, then the longest ``time_s`` (seconds in the
    current state) first; at most ``MAX_SESSIONS``, ``omitted`` says how many more the snapshot held;
    ``info`` is cut to ``MAX_INFO_CHARS`` (``info_cut`` True then); ``fingerprint`` as the rules see
    it. None when the case has no processlist."""
    source, sample, error = _snapshot(case, "processlist", at, host)
    if sample is None:
        return None
    pl = source.frames.get("processlist", pd.DataFrame()) if source else pd.DataFrame()
    if len(pl):
        info = (
            pl["info"].astype("string") if "info" in pl else pd.Series(pd.NA, index=pl.index, dtype="string")
        )
        pl = pl.assign(active=session_is_active(pl), info=info)
        pl = pl.sort_values(
            ["active", "time_s", "id", "line_no"], ascending=[False, False, True, True], na_position="last"
        ).head(MAX_SESSIONS)
        pl = pl.assign(
            fingerprint=fingerprints(pl["info"]),
            info_cut=pl["info"].str.len().fillna(0) > MAX_INFO_CHARS,
            info=pl["info"].str.slice(0, MAX_INFO_CHARS),
            member=sample.member,
        ).rename(columns={"id": "session_id"})
    rows = _records(pl, SESSION_FIELDS)
    for row in rows:
        row["id"] = row.pop("session_id")
    sessions = len(source.frames.get("processlist", ())) if source else 0
    active = int(session_is_active(source.frames["processlist"]).sum()) if sessions else 0
    return {
        "ts": _ms(sample.ts),
        "sessions": sessions,
        "active": active,
        "rows": rows,
        "omitted": sessions - len(rows),
        "error": error,
    }


def threads_at(*, case: Case, at: datetime, host: str | None = None) -> dict[str, object] | None:
    """The ps snapshot nearest to ``at``: ``{"ts": ms, "counts": {state: threads}, "total", "rows",
    "omitted", "error"}``. ``counts`` come from the ``threads.state:<code>`` series (every thread,
    sleeping ones included), D then R then the rest by count; ``rows`` are the threads that were not
    sleeping (states of ``THREAD_STATES_KEPT``: R, D, Z, T ...), D first, then R, then by %CPU; at
    most ``MAX_THREADS``. None when the case has no thread listing."""
    names = [f"threads.state:{code}" for code in PS_STATE_CODES]
    # Only the samples near the moment (the levels of detail read just that range), the whole series
    # if a capture has none there.
    want_us = int(at.timestamp() * 1e6)
    series = levels.read_range(case.pk, names, want_us - NEAR_US, want_us + NEAR_US, 10**9, host=host)
    if not series:
        series = series_arrays(case=case, names=names, host=host)
    every = np.unique(np.concatenate([ts for ts, _ in series.values()])) if series else []
    if not len(every):
        return None
    want = int(at.timestamp() * 1e6)
    i = int(np.searchsorted(every, want))
    near = [int(every[j]) for j in (i - 1, i) if 0 <= j < len(every)]
    ts_us = min(near, key=lambda t: (abs(t - want), t))  # the earlier one on a tie
    ts = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=ts_us)
    values: dict[str, int] = {}
    for name, (times, counts) in series.items():
        j = int(np.searchsorted(times, ts_us))
        if j < len(times) and times[j] == ts_us and not np.isnan(counts[j]) and counts[j]:
            values[name.split(":", 1)[1]] = int(counts[j])
    order = {code: i for i, code in enumerate(THREAD_STATE_ORDER)}
    counts = dict(sorted(values.items(), key=lambda kv: (order.get(kv[0], len(order)), -kv[1], kv[0])))
    source, sample, error = _snapshot(case, "ps", ts, host)
    ps = source.frames.get("ps_threads", pd.DataFrame()) if source else pd.DataFrame()
    if len(ps) and "state" in ps:
        state = ps["state"].astype("string")
        ps = ps[state.isin(THREAD_STATES_KEPT).fillna(False).to_numpy()]
        ps = ps.assign(
            rank=ps["state"].astype("string").map(order).fillna(len(order)), member=sample.member
        ).sort_values(["rank", "pcpu", "pid", "tid"], ascending=[True, False, True, True], na_position="last")
    else:
        ps = ps.iloc[0:0]
    rows = _records(ps.head(MAX_THREADS), THREAD_FIELDS)
    return {
        "ts": _ms(ts),
        "counts": counts,
        "total": sum(counts.values()),
        "rows": rows,
        "omitted": len(ps) - len(rows),
        "error": error,
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


def raw_at(*, case: Case, at: datetime, host: str | None = None) -> dict[str, object] | None:
    """The raw lines of every source whose sample nearest to ``at`` lies within its reach
    (``max(MIN_REACH_S, interval)``): ``{"sources": [{"member", "format", "ts", "line_start",
    "line_end", "lines", "lines_cut"}], "omitted_sources", "error"}``, sources by member name.
    At most ``MAX_RAW_LINES`` lines per source from ``line_start`` (``lines_cut`` True when the
    sample has more), at most ``MAX_RAW_SOURCES`` sources (the nearest ones). ``error`` names why
    the kept bundle could not be read (the sources are listed without lines then). None when the
    case (or ``host``) has no sample index."""
    samples = _samples(case, host)
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


def _member_lines(case: Case, member: str, first: int, last: int) -> tuple[list[str], str | None]:
    """Lines ``first..last`` (1-based, inclusive) of ``member`` as its parser numbered them, read from
    the case's raw chunks. Returns the lines and an error message (or None)."""
    found, error = _lines_of_members(case, {member: (first, last)})
    return found.get(member, []), error


def _lines_of_members(
    case: Case, wanted: dict[str, tuple[int, int]]
) -> tuple[dict[str, list[str]], str | None]:
    """Lines ``first..last`` of each wanted member, from its raw chunks read in one query. Returns
    the lines found per member and an error message (or None) naming a member without stored text."""
    match = Q(pk__in=[])
    for member, (first, last) in wanted.items():
        match |= Q(member=member, line_start__lte=last, line_end__gte=first)
    chunks = (
        RawChunk.objects.filter(match, case=case, generation=case.generation)
        .order_by("member", "line_start")
        .values_list("member", "line_start", "text_zstd")
    )
    found: dict[str, list[str]] = {}
    for member, start, data in chunks:
        first, last = wanted[member]
        skip = max(first - start, 0)
        found.setdefault(member, []).extend(lines_in(bytes(data), skip, last - start + 1 - skip))
    missing = [m for m in wanted if not found.get(m)]
    error = (
        f"The raw text of {missing[0]} is not stored with this case (ingested by an older version of "
        "Casebook): re-analyze the case to read it."
        if missing
        else None
    )
    return found, error


def _read_lines(case: Case, wanted: dict[str, tuple[int, int]]) -> tuple[dict[str, list[str]], str | None]:
    """Lines ``first..last`` of each wanted member (see ``_lines_of_members``), cut to
    ``MAX_RAW_LINE_CHARS``. Returns the lines found and the first error message (or None)."""
    found, error = _lines_of_members(case, wanted)
    return {m: [_cut(line) for line in lines] for m, lines in found.items() if lines}, error


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
