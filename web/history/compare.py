"""Comparing two cases (before and after a fix, two hosts of one cluster), or two hosts of one case of
several, or a host of one case with another case: findings that appeared,
disappeared or changed severity; query fingerprints new and gone (pure functions over plain data, so the
API and the compare page say the same thing); the slow log's classes new in the other case (by
pt-query-digest's checksum; ``compare_classes``); chosen metrics overlaid on a relative time axis (seconds
since each capture's start) with the median and 95th percentile of each metric in each case and the
change between them.

``base`` / ``a`` is the baseline ("before"), ``other`` / ``b`` the one compared with it ("after"). Either
side may be one host of its case (``a_host`` / ``b_host``, a ``Host.name``): its findings, its series,
its window, and its most frequent query fingerprints read from its own ``processlist.fingerprint:``
series (``Case.fingerprints`` is the whole case's).
Fingerprints are the captures' most frequent ones (``Case.fingerprints``, filled at ingest). Metrics are
stored series (``web.models.Series``) in their stored units; a sample without a value (NaN) is left out
of the statistics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from analyzer.findings import SEVERITY_ORDER
from analyzer.isotime import iso_utc
from web.models import Case, Host, QueryClass, Series
from web.timeline.charts import pick_points, round_values
from web.timeline.series import series_arrays

#: Query fingerprints read of one host (its most frequent, by sessions summed over its samples).
HOST_FINGERPRINTS = 20
FINGERPRINT_PREFIX = "processlist.fingerprint:"

#: Severity ranks, worst first (analyzer.findings.SEVERITY_ORDER).
SEVERITY_RANK = {s.value: i for i, s in enumerate(SEVERITY_ORDER)}


def _worst_by_key(findings: Iterable[Mapping[str, object]]) -> dict[str, Mapping[str, object]]:
    """One finding per key: the most severe (a rule may report a key more than once)."""
    out: dict[str, Mapping[str, object]] = {}
    for f in findings:
        key = str(f["key"])
        if key not in out or _rank(f) < _rank(out[key]):
            out[key] = f
    return out


def _rank(finding: Mapping[str, object]) -> int:
    return SEVERITY_RANK.get(str(finding["severity"]), len(SEVERITY_RANK))


def _ref(finding: Mapping[str, object]) -> dict[str, str]:
    return {"key": str(finding["key"]), "title": str(finding["title"]), "severity": str(finding["severity"])}


def _by_severity(refs: list[dict[str, str]]) -> list[dict[str, str]]:
    return sorted(refs, key=lambda r: (SEVERITY_RANK.get(r["severity"], 9), r["key"]))


def compare_findings(
    base: Iterable[Mapping[str, object]], other: Iterable[Mapping[str, object]]
) -> dict[str, list[dict[str, str]]]:
    """Findings of ``other`` against ``base``, matched by key.

    Each input: findings as mappings with ``key``, ``severity`` (critical, warning, info) and
    ``title``. Returns ``appeared`` (in other only), ``disappeared`` (in base only), ``unchanged`` (in
    both, same severity), each ``{"key", "title", "severity"}`` most severe first, and
    ``changed_severity``: ``{"key", "title", "before", "after", "direction"}`` with direction
    ``worse`` or ``better``. The title shown is other's (base's for a finding that disappeared).

    >>> a = [{"key": "cpu-saturation", "severity": "critical", "title": "CPU"}]
    >>> b = [{"key": "cpu-saturation", "severity": "warning", "title": "CPU"},
    ...      {"key": "swap-activity", "severity": "warning", "title": "Swap"}]
    >>> d = compare_findings(a, b)
    >>> [r["key"] for r in d["appeared"]], d["changed_severity"][0]["direction"]
    (['swap-activity'], 'better')
    """
    before, after = _worst_by_key(base), _worst_by_key(other)
    changed = [
        {
            "key": key,
            "title": str(after[key]["title"]),
            "before": str(before[key]["severity"]),
            "after": str(after[key]["severity"]),
            "direction": "worse" if _rank(after[key]) < _rank(before[key]) else "better",
        }
        for key in sorted(before.keys() & after.keys())
        if _rank(after[key]) != _rank(before[key])
    ]
    changed_keys = {c["key"] for c in changed}
    return {
        "appeared": _by_severity([_ref(after[k]) for k in after.keys() - before.keys()]),
        "disappeared": _by_severity([_ref(before[k]) for k in before.keys() - after.keys()]),
        "changed_severity": sorted(changed, key=lambda c: (c["direction"] != "worse", c["key"])),
        "unchanged": _by_severity([_ref(after[k]) for k in (before.keys() & after.keys()) - changed_keys]),
    }


def compare_fingerprints(base: Iterable[str], other: Iterable[str]) -> dict[str, list[str]]:
    """Query fingerprints (literals replaced by ``?``) of ``other`` against ``base``: ``new`` (in other
    only), ``gone`` (in base only), ``kept`` (in both). Each list keeps its case's order (most
    frequent first).

    >>> compare_fingerprints(["select ?", "update t set a = ?"], ["select ?", "delete from t"])
    {'new': ['delete from t'], 'gone': ['update t set a = ?'], 'kept': ['select ?']}
    """
    base, other = list(dict.fromkeys(base)), list(dict.fromkeys(other))
    base_set, other_set = set(base), set(other)
    return {
        "new": [fp for fp in other if fp not in base_set],
        "gone": [fp for fp in base if fp not in other_set],
        "kept": [fp for fp in other if fp in base_set],
    }


def compare_cases(base: Mapping[str, object], other: Mapping[str, object]) -> dict[str, object]:
    """Compare two cases given as ``{"findings": [...], "fingerprints": [...]}`` (plus anything else,
    ignored): ``{"findings": compare_findings(...), "fingerprints": compare_fingerprints(...)}``."""
    return {
        "findings": compare_findings(base["findings"], other["findings"]),
        "fingerprints": compare_fingerprints(base["fingerprints"], other["fingerprints"]),
    }


#: Slow log classes read of one side (its most total query time first).
SLOW_LOG_CLASSES = 500
#: New classes listed on the page (the rest are counted).
NEW_CLASSES_SHOWN = 20


def compare_classes(
    base: list[Mapping[str, object]] | None, other: list[Mapping[str, object]] | None
) -> dict:
    """The slow log classes of ``other`` against ``base`` (each a list of ``{"fingerprint", "checksum",
    "count", "query_time_s"}``, most total query time first; None: that side has no slow log).
    Returns ``{"compared": bool, "base_classes", "other_classes", "new": [...], "new_count", "gone_count"}``:
    ``new`` the classes (by checksum) of ``other`` that ``base`` lacks, most query time first, at most
    ``NEW_CLASSES_SHOWN``; ``compared`` False when either side has no slow log (then nothing is new).

    >>> c = compare_classes([{"checksum": "A"}], [{"checksum": "B"}, {"checksum": "A"}])
    >>> [x["checksum"] for x in c["new"]], c["gone_count"]
    (['B'], 0)
    """
    compared = base is not None and other is not None
    before = {str(c["checksum"]) for c in base or []}
    after = {str(c["checksum"]) for c in other or []}
    new = [c for c in other or [] if str(c["checksum"]) not in before] if compared else []
    return {
        "compared": compared,
        "base_classes": len(base) if base is not None else None,
        "other_classes": len(other) if other is not None else None,
        "new": [dict(c) for c in new[:NEW_CLASSES_SHOWN]],
        "new_count": len(new),
        "gone_count": len(before - after) if compared else 0,
    }


def slow_log_classes(case: Case, host: str | None = None) -> list[dict[str, object]] | None:
    """The slow log classes of ``case`` (of its host ``host``), most total query time first, at most
    ``SLOW_LOG_CLASSES``: ``{"fingerprint", "checksum", "count", "query_time_s"}`` each; None when
    the case (host) has no slow log."""
    rows = QueryClass.objects.filter(case=case)
    if host is not None:
        rows = rows.filter(host=host)
    out = [
        {
            "fingerprint": fp,
            "checksum": checksum,
            "count": int((digest or {}).get("count") or 0),
            "query_time_s": round(float(total), 6),
        }
        for fp, checksum, total, digest in rows.order_by("-query_time_s", "number").values_list(
            "fingerprint", "checksum", "query_time_s", "digest"
        )[:SLOW_LOG_CLASSES]
    ]
    return out or None


def last_case_of_customer(case: Case, visible: object) -> Case | None:
    """The case of the same customer (``Case.customer``, case-insensitive) created last before
    ``case``, among ``visible`` (a queryset of the cases the user may see); None when ``case`` names
    no customer or there is none."""
    if not (case.customer or "").strip():
        return None
    earlier = visible.filter(customer__iexact=case.customer.strip(), created_at__lt=case.created_at)
    return earlier.exclude(pk=case.pk).order_by("-created_at", "-id").first()


#: Metrics overlaid when none is chosen (the ones each capture of vmstat/processlist has).
DEFAULT_METRICS = ("vmstat.r", "vmstat.b", "vmstat.us", "vmstat.wa", "vmstat.cs", "processlist.active")
#: Metrics compared at most in one request.
MAX_METRICS = 8
#: Points per metric and case sent to the chart.
MAX_POINTS = 1000
#: Prefixes of the series offered for comparison (per-device and per-CPU ones are many; the totals are
#: what a before/after comparison reads).
OFFERED_PREFIXES = ("vmstat.", "processlist.", "mpstat.busy:", "mysqladmin.", "threads.state:", "iostat.")


def _offered(case: Case, host: str | None) -> set[str]:
    rows = Series.objects.filter(case=case)
    if host is not None:
        rows = rows.filter(host=host)
    return {n for n in rows.values_list("name", flat=True) if n.startswith(OFFERED_PREFIXES)}


def metric_choices(a: Case, b: Case, a_host: str | None = None, b_host: str | None = None) -> list[str]:
    """Series names both sides have (what can be overlaid), sorted; a side with a host: that host's."""
    return sorted(_offered(a, a_host) & _offered(b, b_host))


def compare_metrics(
    a: Case, b: Case, names: list[str], a_host: str | None = None, b_host: str | None = None
) -> list[dict[str, object]]:
    """Each metric of ``names`` for both sides on seconds since each side's start (its host's window
    when it is one host): ``[{"name", "a": {"points": [[s, v]...], "median", "p95", "samples"},
    "b": {...}, "change": {"median", "p95", "median_pct", "p95_pct"}}]``. A metric missing on a side
    has ``None`` statistics there."""
    names = list(dict.fromkeys(names))[:MAX_METRICS]
    sides_in = (("a", a, a_host), ("b", b, b_host))
    arrays = {side: series_arrays(case=case, names=names, host=host) for side, case, host in sides_in}
    starts = {side: _window(case, host)[0] for side, case, host in sides_in}
    out = []
    for name in names:
        sides = {side: _side(starts[side], arrays[side].get(name)) for side, _, _ in sides_in}
        out.append({"name": name, **sides, "change": _change(sides["a"], sides["b"])})
    return out


def _window(case: Case, host: str | None) -> tuple[object, object]:
    """(start, end) of the case, or of its host ``host`` when it has a window of its own."""
    if host is not None:
        row = Host.objects.filter(case=case, name=host).values_list("window_start", "window_end").first()
        if row and row[0]:
            return row
    return case.window_start, case.window_end


def _side(start: object, arrays: tuple[np.ndarray, np.ndarray] | None) -> dict[str, object]:
    if arrays is None or not len(arrays[0]):
        return {"points": [], "median": None, "p95": None, "samples": 0}
    ts_us, values = arrays
    start_us = int(start.timestamp() * 1e6) if start else int(ts_us[0])
    rel = np.column_stack([(ts_us - start_us) / 1e6, values])
    real = values[~np.isnan(values)]
    return {
        "points": _points(rel[:, 0], rel[:, 1]),
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


def compare(
    a: Case,
    b: Case,
    metrics: list[str] | None = None,
    a_host: str | None = None,
    b_host: str | None = None,
) -> dict[str, object]:
    """The whole comparison of ``a`` (baseline) and ``b`` as one JSON-ready document; ``a_host`` /
    ``b_host`` (a ``Host.name`` of that case, None: the whole case) compare hosts, e.g. two hosts of
    one case (``a`` is ``b``)."""
    choices = metric_choices(a, b, a_host, b_host)
    chosen = [m for m in (metrics or DEFAULT_METRICS) if m in choices]
    return {
        "a": side_head(a, a_host),
        "b": side_head(b, b_host),
        **compare_cases(case_input(a, a_host), case_input(b, b_host)),
        "slow_log": compare_classes(slow_log_classes(a, a_host), slow_log_classes(b, b_host)),
        "metric_choices": choices,
        "metrics": compare_metrics(a, b, chosen, a_host, b_host),
    }


def side_head(case: Case, host: str | None = None) -> dict[str, object]:
    """Who a side is: the case, and its host when the side is one host (``host`` its name then, and
    ``label`` "#12 db-b"; else the case's hosts joined, and "#12")."""
    start, end = _window(case, host)
    return {
        "id": case.pk,
        "url": f"/cases/{case.pk}/",
        "title": case.title or f"Case {case.pk}",
        "host": host if host is not None else case.host,
        "one_host": host is not None,
        "label": f"#{case.pk} {host}" if host is not None else f"#{case.pk}",
        "window_start": iso_utc(start),
        "window_end": iso_utc(end),
    }


def _points(x: np.ndarray, y: np.ndarray) -> list[list[float | None]]:
    """At most ``MAX_POINTS`` ``[x, y]`` pairs chosen by MinMaxLTTB (peaks kept); NaN -> None."""
    idx = pick_points(x, [y], MAX_POINTS)
    return [[float(t), v] for t, v in zip(x[idx].tolist(), round_values(y[idx]), strict=True)]


def case_input(case: Case, host: str | None = None) -> dict[str, object]:
    """What ``compare_cases`` reads of one case (or of its host ``host``): its findings (``key``,
    ``severity``, ``title``; a host's are those that name it as their host) and its top query
    fingerprints, most frequent first."""
    if host is None:
        return {
            "findings": list(case.findings.values("key", "severity", "title")),
            "fingerprints": list(case.fingerprints or []),
        }
    return {
        "findings": list(case.findings.filter(host=host).values("key", "severity", "title")),
        "fingerprints": host_fingerprints(case, host),
    }


def host_fingerprints(case: Case, host: str) -> list[str]:
    """The ``HOST_FINGERPRINTS`` most frequent query fingerprints of one host: its
    ``processlist.fingerprint:<fingerprint>`` series (active sessions running it, per sample) by
    their sum, largest first."""
    arrays = series_arrays(case=case, prefixes=[FINGERPRINT_PREFIX], host=host)
    totals = {name[len(FINGERPRINT_PREFIX) :]: float(np.nansum(v)) for name, (_, v) in arrays.items()}
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    return [fp for fp, total in ranked[:HOST_FINGERPRINTS] if total > 0]


def compare_choices(case: Case, hosts: list[str], others: list[Case]) -> list[dict[str, object]]:
    """What the baseline can be compared with: each host of ``case`` itself when it has several
    (``value`` "<id>.<index>"), then each of ``others`` (``value`` "<id>"), followed by its hosts when
    it has several."""
    host_rows: dict[int, list[str]] = {}
    for case_id, name in Host.objects.filter(case__in=[case, *others]).values_list("case_id", "name"):
        host_rows.setdefault(case_id, []).append(name)
    out: list[dict[str, object]] = []
    if len(hosts) > 1:
        out += [
            {"value": f"{case.pk}.{i}", "label": f"#{case.pk} this case, host {h}"}
            for i, h in enumerate(hosts)
        ]
    for c in others:
        out.append({"value": str(c.pk), "label": f"#{c.pk} {c.title or f'Case {c.pk}'} {c.host}"})
        names = host_rows.get(c.pk, [])
        if len(names) > 1:
            out += [{"value": f"{c.pk}.{i}", "label": f"#{c.pk} host {h}"} for i, h in enumerate(names)]
    return out
