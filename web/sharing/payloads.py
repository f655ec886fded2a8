"""What a share link serves, built from the engineer's payloads and redacted with the link's choices.

Each function takes the payload the engineer's view would send (selectors, charts, moments) and the
link's ``Redactor`` (None: the payload as it is, for callers outside a link) and returns what the
link sends. Statement text becomes fingerprints where it is known to be a statement (processlist
``info``, the raw lines of processlists and performance_schema threads); quoted text in parser
warnings and reasons loses its quotes' content; then every string goes through the redactor
(passwords on every link; hosts and the server's names, users, schemas, IPv6 and IPv4 addresses as
the link chose).
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime

from analyzer.literals import processlist_lines
from analyzer.redact import STATEMENT_FORMATS, Redactor
from web.cases.verdicts import expand_verdict

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
            f = {**f, "culprit": {**culprit, "statement": redactor.sql(str(culprit["statement"]))}}
        out.append(f)
    return out


def page_context(context: dict[str, object], redactor: Redactor | None) -> dict[str, object]:
    """The case page's context (``selectors.case_detail_context``) as the link shows it."""
    if redactor is None:
        return context
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


def report(data: dict[str, object], redactor: Redactor | None, url: str) -> dict[str, object]:
    """The case report (``selectors.case_report``: findings, sources ...) as the link sends it,
    its ``url`` the link's own."""
    data = {**data, "url": url}
    if redactor is None:
        return data
    if redactor.choices.literals:
        data["warnings"] = [_unquote(str(w)) for w in data.get("warnings", [])]
        data["findings"] = _culprit_statements(list(data.get("findings", [])), redactor)
        data["not_used"] = [{**n, "reason": _unquote(n["reason"])} for n in data.get("not_used", [])]
    # A finding's evidence is keyed by its labels ("query 'select ... from shop.t'"): data as keys.
    data["findings"] = [
        {**f, "evidence": {redactor.text(k): v for k, v in f.get("evidence", {}).items()}}
        for f in data.get("findings", [])
    ]
    data = redactor.walk(data)
    # The verdict names the link's own (redacted) findings, as in the engineer's report.
    data["verdict"] = expand_verdict(data.get("verdict"), data["findings"])
    return data


#: Keys of the timeline JSON that hold numbers only (times and values, about all of a megabyte-sized
#: answer): passed as they are, never walked by the redactor.
_NUMBERS = frozenset({"t", "v", "data", "x0", "dx", "max"})


def _walk_strings(item: dict[str, object], redactor: Redactor) -> dict[str, object]:
    return {**redactor.walk({k: v for k, v in item.items() if k not in _NUMBERS}), **{
        k: v for k, v in item.items() if k in _NUMBERS
    }}  # fmt: skip


def timeline(data: dict[str, object], redactor: Redactor | None) -> dict[str, object]:
    """The charts JSON (``charts.timeline_charts``, version 2: chart titles, series labels such as
    query fingerprints, heatmap rows, windows). Every string goes through the redactor; the times and
    values (``_NUMBERS``) are passed as they are."""
    if redactor is None:
        return data
    charts = []
    for chart in data.get("charts", []):
        series = [_walk_strings(s, redactor) for s in chart.get("series", [])]
        charts.append(
            {**_walk_strings({k: v for k, v in chart.items() if k != "series"}, redactor), "series": series}
        )
    return {**redactor.walk({k: v for k, v in data.items() if k != "charts"}), "charts": charts}


def timeline_csv(data: dict[str, object]) -> str:
    """The charts JSON (already redacted) as CSV: ``chart,series,unit,time_utc,epoch_ms,value``, a row
    per point of a line chart sent to the page (a host's panel: its series named ``<host> · <label>``) (heatmaps are left out: their cells are the series of
    the line charts, bucketed)."""
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
                when = datetime.fromtimestamp(t / 1000.0, tz=UTC).isoformat().replace("+00:00", "Z")
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
    """A moment (``moments.moment``): sessions, threads and raw lines as the link sends them."""
    if redactor is None:
        return data
    if redactor.choices.literals:
        data = dict(data)
        pl = data.get("processlist")
        if pl:
            data["processlist"] = {
                **pl,
                "rows": [
                    {**r, "info": redactor.sql(r.get("info"), cut=bool(r.get("info_cut")))}
                    for r in pl["rows"]
                ],
            }
        raw = data.get("raw")
        if raw:
            sources = [
                {**s, "lines": processlist_lines(s["lines"])} if s.get("format") in STATEMENT_FORMATS else s
                for s in raw["sources"]
            ]
            data["raw"] = {**raw, "sources": sources}
    return redactor.walk(data)
