"""What a share link serves, built from the engineer's payloads and redacted with the link's choices.

Each function takes the payload the engineer's view would send (selectors, charts, moments) and the
link's ``Redactor`` (None: the payload as it is, for callers outside a link) and returns what the
link sends. Only allow-listed fields are sent (``CASE_KEYS``, ``REPORT_KEYS``, ``QUERIES_KEYS``,
``QUERY_KEYS``, ``STATUS_KEYS``).
Statement text becomes fingerprints where a format declares it (a session's ``info``, each
format's raw lines: web/sharing/redaction/formats.py) and wherever a text quotes one; quoted text in
parser warnings and reasons loses its quotes' content; then every string goes through the redactor
(passwords on every link; hosts and the server's names, users, schemas, IPv6 and IPv4 addresses as
the link chose).
"""

from __future__ import annotations

import csv
import io
import re

from analyzer.isotime import iso_utc
from web.cases.verdicts import expand_verdict
from web.sharing.redaction import formats
from web.sharing.redaction.redactor import Redactor

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def _unquote(text: str) -> str:
    """Quoted text (a statement or a line quoted by a parser warning) as ``?``."""
    return _QUOTED.sub("?", text)


def _culprit_statements(findings: list[dict[str, object]], redactor: Redactor) -> list[dict[str, object]]:
    """Findings whose culprit's statement (SQL, a command line) is shown as a fingerprint; its user
    and host go through the redactor with every other string (``Redactor.walk``)."""
    out = []
    for f in findings:
        culprit = f.get("culprit")
        if isinstance(culprit, dict) and culprit.get("statement"):
            f = {**f, "culprit": {**culprit, "statement": redactor.marked_sql(str(culprit["statement"]))}}
        out.append(f)
    return out


#: The case's fields a shared page gets (its ``case-data`` JSON among them): how it was captured and
#: processed; never who uploaded it, its team, customer, ticket, notes or resolution, nor its title (the
#: engineers' name for it, often a customer and a ticket: an upload link's case is titled so); the page
#: names the case by its number and its capture window.
CASE_KEYS = (
    "id", "host", "kernel", "ncpu", "layout", "window_start", "window_end", "utc_offset_s",
    "utc_offset_origin", "status", "status_label", "failure_reason", "progress", "status_detail",
    "processing", "last_report_at", "stalled", "requeues", "created_at", "rule_versions", "upload", "uploads",
)  # fmt: skip
#: The case report's fields a link sends (``selectors.case_report``); a field added there is not sent
#: until it is named here.
REPORT_KEYS = (
    "case", "url", "status", "failure_reason", "host", "kernel", "ncpu", "window", "utc_offset_s", "upload",
    "uploads", "hosts", "sources", "not_used", "warnings", "findings", "not_evaluated", "rule_versions",
    "verdict", "queries", "query_classes",
)  # fmt: skip
#: The *Queries* JSON's fields a link sends (``selectors.case_queries``), and each class's.
QUERIES_KEYS = ("start", "end", "whole_log", "classes", "query_time_s", "spark", "queries")
QUERY_KEYS = (
    "number",
    "host",
    "member",
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
    "share_pct",
    "spark",
)


def _query_classes(items: list[dict[str, object]], redactor: Redactor | None) -> list[dict[str, object]]:
    """A slow log's classes as a link sends them: ``QUERY_KEYS`` only; on a link that redacts
    literals, the fingerprint and the example's statement through ``marked_sql`` (a fingerprint,
    marked as the redaction's own: the caller's ``walk`` then pseudonymises its names); on a link
    that redacts anything, no checksum (the MD5 of the fingerprint before redaction: it would confirm
    a guess of the names the link hides)."""
    out = []
    for item in items:
        q = {k: item[k] for k in QUERY_KEYS if k in item}
        if redactor is not None and redactor.choices.literals:
            q["fingerprint"] = redactor.marked_sql(str(q.get("fingerprint", "")))
            example = q.get("example")
            if isinstance(example, dict):
                q["example"] = {**example, "statement": redactor.marked_sql(example.get("statement"))}
        if redactor is not None and redactor.choices.any:
            q["checksum"] = None
        out.append(q)
    return out


def queries(data: dict[str, object], redactor: Redactor | None) -> dict[str, object]:
    """The *Queries* JSON (``selectors.case_queries``) as the link sends it: ``QUERIES_KEYS``, each
    class as ``_query_classes`` makes it, then every string through the redactor (numbers as they are)."""
    data = {k: data[k] for k in QUERIES_KEYS if k in data}
    if redactor is None:
        return data
    data = redactor.clean(data)
    data["queries"] = _query_classes(list(data.get("queries", [])), redactor)
    return redactor.walk(data)


def page_context(context: dict[str, object], redactor: Redactor | None) -> dict[str, object]:
    """The case page's context (``selectors.case_detail_context``) as the link shows it: its case
    limited to ``CASE_KEYS``."""
    case = context.get("case")
    if isinstance(case, dict):
        context = {**context, "case": {k: case[k] for k in CASE_KEYS if k in case}}
    if redactor is None:
        return context
    context = redactor.clean(context)
    if redactor.choices.any:
        context = {**context, "summary": _summary(context.get("summary"), redactor)}
        context["hosts"] = [
            {**h, "summary": _summary(h.get("summary"), redactor)} for h in context.get("hosts", [])
        ]
    if redactor.choices.literals:
        context = dict(context)
        context["warnings"] = [_unquote(str(w)) for w in context.get("warnings", [])]
        context["findings"] = _culprit_statements(list(context.get("findings", [])), redactor)
        # The verdict names the link's own (redacted) findings.
        context["verdict"] = expand_verdict(context.get("verdict"), context["findings"], page=True)
        context["not_used"] = [{**n, "reason": _unquote(n["reason"])} for n in context.get("not_used", [])]
        context["sources"] = [
            {**s, "warnings": [{**w, "message": _unquote(str(w.get("message", "")))} for w in s["warnings"]]}
            for s in context.get("sources", [])
        ]
    return redactor.walk(context)


#: The format each part of a host's header was read from (``web.cases.summaries``).
_SUMMARY_FORMATS = {"system": "pt_summary", "server": "pt_mysql_summary"}


def _summary(summary: object, redactor: Redactor) -> dict[str, object]:
    """A host's pt-summary and pt-mysql-summary facts as a redacting link shows them: every value
    rebuilt from its format's words, as the report's raw lines are (``formats.raw_lines``); a mount
    point, a path or a device named after a customer shows ``?``."""
    if not isinstance(summary, dict):
        return {}
    out: dict[str, object] = {}
    for part, fmt in _SUMMARY_FORMATS.items():
        facts = summary.get(part)
        if not isinstance(facts, dict):
            continue

        def rebuilt(value: object, fmt: str = fmt) -> object:
            return (
                (formats.raw_lines(fmt, [value], redactor) or ["?"])[0] if isinstance(value, str) else value
            )

        out[part] = {
            key: [{k: v if k == "line" else rebuilt(v) for k, v in row.items()} for row in value]
            if isinstance(value, list)
            else value
            for key, value in facts.items()
        }
    return out


def report(data: dict[str, object], redactor: Redactor | None, url: str) -> dict[str, object]:
    """The case report (``selectors.case_report``: findings, sources ...) as the link sends it,
    its ``url`` the link's own; only ``REPORT_KEYS``."""
    data = {**{k: data[k] for k in REPORT_KEYS if k in data}, "url": url}
    if redactor is None:
        return data
    del data["url"]  # the link's own address: not the case's text, served as it is
    data = redactor.clean(data)
    if redactor.choices.literals:
        data["warnings"] = [_unquote(str(w)) for w in data.get("warnings", [])]
        data["findings"] = _culprit_statements(list(data.get("findings", [])), redactor)
        data["not_used"] = [{**n, "reason": _unquote(n["reason"])} for n in data.get("not_used", [])]
    data["queries"] = _query_classes(list(data.get("queries", [])), redactor)
    # A finding's evidence is keyed by its labels ("query 'select ... from shop.t'"): data as keys.
    data["findings"] = [
        {**f, "evidence": {redactor.text(k): v for k, v in f.get("evidence", {}).items()}}
        for f in data.get("findings", [])
    ]
    # The verdict names the link's own findings, as in the engineer's report; its link sentences and
    # evidence are walked with the rest.
    data["verdict"] = expand_verdict(data.get("verdict"), data["findings"])
    walked = redactor.walk(data)
    return {k: url if k == "url" else walked[k] for k in REPORT_KEYS if k == "url" or k in walked}


#: Keys of the timeline JSON that hold numbers only (times and values, about all of a megabyte-sized
#: answer): passed as they are, never walked by the redactor.
_NUMBERS = frozenset({"t", "v", "data", "x0", "dx", "max"})


def _walk_strings(item: dict[str, object], redactor: Redactor) -> dict[str, object]:
    return {
        **redactor.walk({k: v for k, v in item.items() if k not in _NUMBERS}),
        **{k: v for k, v in item.items() if k in _NUMBERS},
    }


def timeline(data: dict[str, object], redactor: Redactor | None) -> dict[str, object]:
    """The charts JSON (``charts.timeline_charts``, version 2: chart titles, series labels such as
    query fingerprints, heatmap rows, windows). Every string goes through the redactor; the times and
    values (``_NUMBERS``) are passed as they are."""
    if redactor is None:
        return data
    data = redactor.clean(data)
    charts = []
    for chart in data.get("charts", []):
        series = [_walk_strings(s, redactor) for s in chart.get("series", [])]
        charts.append(
            {**_walk_strings({k: v for k, v in chart.items() if k != "series"}, redactor), "series": series}
        )
    return {**redactor.walk({k: v for k, v in data.items() if k != "charts"}), "charts": charts}


def timeline_csv(data: dict[str, object]) -> str:
    """The charts JSON (already redacted) as CSV: ``chart,series,unit,time_utc,epoch_ms,value``, a row
    per point of a line chart sent to the page (a host's panel: its series named ``<host> · <label>``)
    (heatmaps are left out: their cells are the series of the line charts, bucketed)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["chart", "series", "unit", "time_utc", "epoch_ms", "value"])
    for chart in data.get("charts", []):
        times = chart.get("t") or []
        # One host's panel of a case of several: its series are named after the host, as on an
        # overlaid chart ("db-b · r"; the host's name as the link shows it).
        prefix = f"{chart['host']} · " if chart.get("host") is not None else ""
        for series in chart.get("series", []):
            for t, v in zip(times, series.get("v", []), strict=False):
                when = iso_utc(round(t * 1000))  # t: epoch milliseconds
                writer.writerow(
                    [
                        chart["title"],
                        prefix + series["label"],
                        chart["unit"],
                        when,
                        int(t),
                        "" if v is None else v,
                    ]
                )
    return out.getvalue()


def moment(data: dict[str, object], redactor: Redactor | None) -> dict[str, object]:
    """A moment (``moments.moment``): sessions, threads and raw lines as the link sends them. Raw
    lines go through ``formats.raw_lines`` (what each format declares sensitive); a format that
    declares nothing has its lines withheld on a redacted link (one line saying why)."""
    if redactor is None:
        return data
    data = redactor.clean(data)
    pl = data.get("processlist")
    if pl and redactor.choices.literals:
        data["processlist"] = {
            **pl,
            "rows": [
                {**r, "info": redactor.marked_sql(r.get("info"), cut=bool(r.get("info_cut")))}
                for r in pl["rows"]
            ],
        }
    raw = data.pop("raw", None)
    data = redactor.walk(data)
    if raw:
        sources = []
        for s in raw["sources"]:
            lines = formats.raw_lines(str(s.get("format")), list(s["lines"]), redactor)
            others = redactor.walk({k: v for k, v in s.items() if k != "lines"})
            sources.append(
                {**others, "lines": [formats.WITHHELD] if lines is None else lines, "withheld": lines is None}
            )
        data["raw"] = {**redactor.walk({k: v for k, v in raw.items() if k != "sources"}), "sources": sources}
    else:
        data["raw"] = raw
    return data


#: What the status of a shared case says: how its processing goes, nothing of how it was closed.
STATUS_KEYS = (
    "id",
    "status",
    "label",
    "status_label",
    "progress",
    "detail",
    "failure_reason",
    "ready",
    "failed",
    "processing",
    "last_report_at",
    "stalled",
    "requeues",
)


def status(data: dict[str, object], redactor: Redactor, url: str) -> dict[str, object]:
    """The case's status (``selectors.case_status``) as a link sends it: only ``STATUS_KEYS``
    (never the resolution), ``url`` the link's own."""
    return {**redactor.walk(redactor.clean({k: data.get(k) for k in STATUS_KEYS})), "url": url}  # url last
