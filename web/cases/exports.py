"""Downloads of a case page (issue 12, "out of the page"): findings as JSON or CSV, series as CSV.

Reads only, like selectors; kept apart because they format files rather than page context.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import datetime

from django.http import HttpResponse

from analyzer.isotime import iso_utc
from parsers.passwords import mask_secrets
from web.models import Case
from web.timeline import levels
from web.timeline.charts import CHARTS, base_chart_ids
from web.timeline.series import series_hosts, stored_names
from web.timeline.services import series_levels_ensure

#: Columns of the findings CSV, one row per finding.
FINDINGS_CSV_COLUMNS = (
    "key",
    "severity",
    "title",
    "summary",
    "windows",
    "confidence",
    "disproof",
    "evidence",
    "recommendation",
    "caveats",
    "sources",
    "rule_version",
)
#: Rows of the series CSV written per chunk of the streamed answer.
CSV_ROWS_PER_CHUNK = 5_000


def findings_json(report: dict[str, object]) -> str:
    """``{"case", "host", "window", "utc_offset_s", "findings": [...], "not_evaluated": [...]}`` from
    the report (``selectors.case_report``, as ``analyze --json`` and the API give it, or a share link's
    redacted copy); times ISO 8601 UTC."""
    keep = ("case", "url", "host", "window", "utc_offset_s", "findings", "not_evaluated", "rule_versions")
    return json.dumps({k: report[k] for k in keep}, indent=2, ensure_ascii=False)


def findings_csv(report: dict[str, object]) -> str:
    """From the report (as ``findings_json``), one row per finding (``FINDINGS_CSV_COLUMNS``): windows as
    ``start/end`` ISO pairs joined by ``; ``, evidence as ``label = value unit (series, member:lines)`` joined
    by ``; ``."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(FINDINGS_CSV_COLUMNS)
    for f in report["findings"]:
        evidence = "; ".join(
            f"{label} = {e.get('value')}{' ' + e['unit'] if e.get('unit') else ''}"
            f" ({e.get('series') or ''}, {e.get('member') or ''}:{'-'.join(map(str, e.get('lines') or []))})"
            for label, e in f["evidence"].items()
        )
        writer.writerow(
            [
                f["key"],
                f["severity"],
                f["title"],
                f["summary"],
                "; ".join(f"{a}/{b}" for a, b in f["windows"]),
                f["confidence"],
                f["disproof"],
                evidence,
                f["recommendation"],
                "; ".join(f["caveats"]),
                " ".join(f["sources"]),
                f["rule_version"],
            ]
        )
    return out.getvalue()


def series_csv_lines(
    *, case: Case, start: datetime | None, end: datetime | None, chart_ids: list[str] | None
) -> Iterator[str]:
    """CSV text in chunks: header ``time_utc,series,value`` then every stored sample (not downsampled)
    of the series the charts ``chart_ids`` (all when None; a host's panel ``cpu~1`` stands for its
    chart) draw, between ``start`` and ``end`` (inclusive, aware datetimes, None = open), series by
    name, then by time. A case of several hosts has a ``host`` column after the time (``Host.name``),
    its hosts in order, each host's series by name."""
    ids = base_chart_ids(chart_ids)
    charts = [c for c in CHARTS if ids is None or c.id in ids]
    prefixes = sorted({p for c in charts for p in (c.prefix, c.also) if p})
    exact = sorted({n for c in charts for n, _ in c.series})
    lo = int(start.timestamp() * 1e6) if start else None
    hi = int(end.timestamp() * 1e6) if end else None
    series_levels_ensure(case=case)
    hosts = series_hosts(case)
    several = len(hosts) > 1
    yield "time_utc,host,series,value\n" if several else "time_utc,series,value\n"
    for host in hosts if several else [None]:
        names = stored_names(case, prefixes, exact, host)
        # Every sample of the range (level 0 whatever its size), read as bytes (web/timeline/levels.py).
        arrays = levels.read_range(case.pk, names, lo, hi, 2**62, host=host) if names else {}
        lead = [host] if several else []
        for name in sorted(arrays):
            ts, values = arrays[name]
            shown = mask_secrets(name)  # a fingerprint of a case analysed before they were masked
            for first in range(0, len(ts), CSV_ROWS_PER_CHUNK):
                out = io.StringIO()
                writer = csv.writer(out, lineterminator="\n")
                last = min(len(ts), first + CSV_ROWS_PER_CHUNK)
                for t_us, v in zip(ts[first:last].tolist(), values[first:last].tolist(), strict=True):
                    when = iso_utc(t_us)
                    writer.writerow([when, *lead, shown, "" if v != v else repr(v)])
                yield out.getvalue()


def findings_download(report: dict[str, object], fmt: str, name: str) -> HttpResponse:
    """The findings of a report (the case's, or a share link's redacted copy) as a ``json`` or ``csv``
    attachment named ``name``."""
    if fmt == "json":
        response = HttpResponse(findings_json(report), content_type="application/json")
    else:
        response = HttpResponse(findings_csv(report), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
