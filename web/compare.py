"""Comparing two cases (before and after a fix, two hosts of one cluster): findings that appeared,
disappeared or changed severity; query fingerprints new and gone; chosen metrics overlaid on a
relative time axis (seconds since each capture's start) with the median and 95th percentile of each
metric in each case and the change between them.

Case ``a`` is the baseline ("before"), ``b`` the one compared with it ("after"). Fingerprints are the
captures' most frequent ones (``Case.fingerprints``, filled at ingest). Metrics are stored series
(``web.models.Series``) in their stored units; a sample without a value (NaN) is left out of the
statistics.
"""

from __future__ import annotations

import numpy as np

from web.charts import _downsample, series_arrays
from web.models import Case, Series

#: Metrics overlaid when none is chosen (the ones each capture of vmstat/processlist has).
DEFAULT_METRICS = ("vmstat.r", "vmstat.b", "vmstat.us", "vmstat.wa", "vmstat.cs", "processlist.active")
#: Metrics compared at most in one request.
MAX_METRICS = 8
#: Points per metric and case sent to the chart.
MAX_POINTS = 1000
SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}
#: Prefixes of the series offered for comparison (per-device and per-CPU ones are many; the totals are
#: what a before/after comparison reads).
OFFERED_PREFIXES = ("vmstat.", "processlist.", "mpstat.busy:", "mysqladmin.", "threads.state:", "iostat.")


def metric_choices(a: Case, b: Case) -> list[str]:
    """Series names both cases have (what can be overlaid), sorted."""
    names = Series.objects.filter(case__in=[a, b]).values_list("case_id", "name")
    per_case: dict[int, set[str]] = {a.pk: set(), b.pk: set()}
    for case_id, name in names:
        if name.startswith(OFFERED_PREFIXES):
            per_case[case_id].add(name)
    return sorted(per_case[a.pk] & per_case[b.pk])


def compare_findings(a: Case, b: Case) -> dict[str, list[dict[str, object]]]:
    """Findings by key: ``appeared`` (in b only), ``disappeared`` (in a only), ``changed`` (both, other
    severity: ``{"key", "before", "after", "better"}``) and ``unchanged``. A key found twice counts
    with its most severe finding."""
    before, after = _worst_by_key(a), _worst_by_key(b)
    changed = [
        {
            "key": key,
            "title": after[key]["title"],
            "before": before[key]["severity"],
            "after": after[key]["severity"],
            "better": SEVERITY_RANK[after[key]["severity"]] > SEVERITY_RANK[before[key]["severity"]],
        }
        for key in sorted(before.keys() & after.keys())
        if before[key]["severity"] != after[key]["severity"]
    ]
    same = sorted(k for k in before.keys() & after.keys() if before[k]["severity"] == after[k]["severity"])
    return {
        "appeared": [after[k] for k in sorted(after.keys() - before.keys())],
        "disappeared": [before[k] for k in sorted(before.keys() - after.keys())],
        "changed": changed,
        "unchanged": [after[k] for k in same],
    }


def _worst_by_key(case: Case) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for key, severity, title in case.findings.values_list("key", "severity", "title"):
        if severity not in SEVERITY_RANK:
            continue
        if key not in out or SEVERITY_RANK[severity] < SEVERITY_RANK[out[key]["severity"]]:
            out[key] = {"key": key, "severity": severity, "title": title}
    return out


def compare_fingerprints(a: Case, b: Case) -> dict[str, list[str]]:
    """The captures' top query fingerprints: ``new`` (in b only), ``gone`` (in a only), ``both``;
    each in the order of its capture's frequency."""
    fa, fb = list(a.fingerprints), list(b.fingerprints)
    return {
        "new": [f for f in fb if f not in set(fa)],
        "gone": [f for f in fa if f not in set(fb)],
        "both": [f for f in fb if f in set(fa)],
    }


def compare_metrics(a: Case, b: Case, names: list[str]) -> list[dict[str, object]]:
    """Each metric of ``names`` for both cases on seconds since each capture's start: ``[{"name",
    "a": {"points": [[s, v]...], "median", "p95", "samples"}, "b": {...}, "change": {"median",
    "p95", "median_pct", "p95_pct"}}]``. A metric missing in a case has ``None`` statistics there."""
    names = list(dict.fromkeys(names))[:MAX_METRICS]
    arrays = {case.pk: series_arrays(case=case, names=names) for case in (a, b)}
    out = []
    for name in names:
        sides = {side: _side(case, arrays[case.pk].get(name)) for side, case in (("a", a), ("b", b))}
        out.append({"name": name, **sides, "change": _change(sides["a"], sides["b"])})
    return out


def _side(case: Case, arrays: tuple[np.ndarray, np.ndarray] | None) -> dict[str, object]:
    if arrays is None or not len(arrays[0]):
        return {"points": [], "median": None, "p95": None, "samples": 0}
    ts_us, values = arrays
    start_us = int(case.window_start.timestamp() * 1e6) if case.window_start else int(ts_us[0])
    rel = np.column_stack([(ts_us - start_us) / 1e6, values])
    real = values[~np.isnan(values)]
    return {
        "points": _downsample(rel, MAX_POINTS),
        "median": float(np.median(real)) if len(real) else None,
        "p95": float(np.percentile(real, 95)) if len(real) else None,
        "samples": int(len(real)),
    }


def _change(a: dict[str, object], b: dict[str, object]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for stat in ("median", "p95"):
        va, vb = a[stat], b[stat]
        out[stat] = None if va is None or vb is None else vb - va
        out[f"{stat}_pct"] = None if va in (None, 0) or vb is None else (vb - va) / abs(va) * 100.0
    return out


def compare(a: Case, b: Case, metrics: list[str] | None = None) -> dict[str, object]:
    """The whole comparison of ``a`` (baseline) and ``b`` as one JSON-ready document."""
    choices = metric_choices(a, b)
    chosen = [m for m in (metrics or DEFAULT_METRICS) if m in choices]
    return {
        "a": _case_head(a),
        "b": _case_head(b),
        "findings": compare_findings(a, b),
        "fingerprints": compare_fingerprints(a, b),
        "metric_choices": choices,
        "metrics": compare_metrics(a, b, chosen),
    }


def _case_head(case: Case) -> dict[str, object]:
    return {
        "id": case.pk,
        "url": f"/cases/{case.pk}/",
        "title": case.title or f"Case {case.pk}",
        "host": case.host,
        "window_start": case.window_start.isoformat().replace("+00:00", "Z") if case.window_start else None,
        "window_end": case.window_end.isoformat().replace("+00:00", "Z") if case.window_end else None,
    }
