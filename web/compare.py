"""Two cases side by side: which findings appeared, disappeared or changed severity, and which query
fingerprints are new or gone. A pure function over plain data (no ORM): the API and the compare page
feed it what ``selectors.compare_input`` reads, so both say the same thing.

Typical use: the same host before and after a fix (``base`` = before), or two hosts of one cluster
(``base`` = the healthy one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: Severity ranks, worst first (analyzer.findings.Severity values).
SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}


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
