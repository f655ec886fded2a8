"""Similar cases: the other cases of the team that share a case's finding keys, dominant wait
channels (ps ``wchan`` of D-state threads) and query fingerprints, best first, each with why it
matched.

Each kind is compared as sets (Jaccard index: shared / either) and the three are weighted: a shared
fingerprint or wait channel says more about the cause than a shared finding key (``cpu-saturation``
is common to many unrelated cases). Candidates come from the GIN indexes on the three array columns
(``&&``, overlap), newest first, at most ``MAX_CANDIDATES``, scored here.
"""

from __future__ import annotations

from django.db.models import Q

from analyzer.isotime import iso_utc
from web.models import Case, CaseStatus

#: Weight of each kind in the score (they sum to 1: a case identical in all three scores 1).
WEIGHTS = {"fingerprints": 0.4, "wait_channels": 0.35, "finding_keys": 0.25}
#: Labels of the kinds in the reasons shown.
LABELS = {
    "finding_keys": ("finding", "findings"),
    "wait_channels": ("wait channel", "wait channels"),
    "fingerprints": ("query fingerprint", "query fingerprints"),
}
#: The dominant wait channels and fingerprints compared: the most frequent of each capture.
DOMINANT = {"finding_keys": 50, "wait_channels": 5, "fingerprints": 10}
#: Cases scored at most (the newest that overlap): bounds the time on a team with a long history.
MAX_CANDIDATES = 300
#: Cases shown.
MAX_SIMILAR = 10


def signature(case: Case) -> dict[str, set[str]]:
    """What a case is compared by: its finding keys, dominant wait channels and fingerprints."""
    return {kind: set(list(getattr(case, kind))[:n]) for kind, n in DOMINANT.items()}


def similar_cases(*, case: Case, candidates, limit: int = MAX_SIMILAR) -> list[dict[str, object]]:
    """The cases of ``candidates`` (a queryset: the cases the user may see, ``cases_for``) most like
    ``case``, best first: ``[{"id", "url", "title", "host", "customer", "created_at", "score" (0-1),
    "reasons": [{"kind", "label", "shared": [...], "of": n}]}]``. Only ready cases sharing at least
    one item count; ``case`` itself is left out."""
    mine = signature(case)
    overlap = _overlap(mine)
    if not overlap:
        return []
    rows = (
        candidates.filter(overlap, status=CaseStatus.READY)
        .exclude(pk=case.pk)
        .only("id", "title", "host", "customer", "created_at", *DOMINANT)
        .order_by("-created_at")[:MAX_CANDIDATES]
    )
    scored = []
    for other in rows:
        score, reasons = _score(mine, signature(other))
        if score > 0:
            scored.append((score, other, reasons))
    scored.sort(key=lambda item: (-item[0], -item[1].created_at.timestamp()))
    return [
        {
            "id": other.pk,
            "url": f"/cases/{other.pk}/",
            "title": other.title or f"Case {other.pk}",
            "host": other.host,
            "customer": other.customer,
            "created_at": iso_utc(other.created_at),
            "score": round(score, 3),
            "reasons": reasons,
        }
        for score, other, reasons in scored[:limit]
    ]


def _overlap(mine: dict[str, set[str]]) -> Q:
    """Cases sharing at least one item of ``mine`` (``&&`` on the GIN-indexed arrays); empty: none."""
    overlap = Q()
    for kind, items in mine.items():
        if items:
            overlap |= Q(**{f"{kind}__overlap": sorted(items)})
    return overlap


def _score(mine: dict[str, set[str]], theirs: dict[str, set[str]]) -> tuple[float, list[dict[str, object]]]:
    """Weighted Jaccard index over the three kinds, and the shared items of each kind."""
    score = 0.0
    reasons: list[dict[str, object]] = []
    for kind, weight in WEIGHTS.items():
        a, b = mine[kind], theirs[kind]
        shared = a & b
        if not shared:
            continue
        score += weight * len(shared) / len(a | b)
        one, many = LABELS[kind]
        reasons.append(
            {
                "kind": kind,
                "label": f"{len(shared)} of {len(a)} {one if len(a) == 1 else many} shared",
                "shared": sorted(shared),
                "of": len(a),
            }
        )
    return score, reasons


#: Past resolutions shown at most (similar cases panel; the verdict panel shows the first).
MAX_RESOLUTIONS = 5
#: Characters of a resolution's first line shown in its one-sentence summary.
SUMMARY_CHARS = 200


def past_resolutions(*, case: Case, candidates, limit: int = MAX_RESOLUTIONS) -> list[dict[str, object]]:
    """How the closed cases of ``candidates`` most like ``case`` were fixed, best first (the score of
    ``similar_cases``; any status, as a case closed as "not a database problem" may have failed):
    ``[{"id", "url", "title", "customer", "score", "category", "same", "summary", "resolution",
    "sentence"}]``. ``same``: what they share in words ("tmp-table-churn and 1 query fingerprint");
    ``summary``: the first line of the resolution, Markdown marks dropped; ``sentence``: "Case 123
    (ACME): same ...; fixed: ..." (plain text: the template escapes it)."""
    from web.models import ResolutionCategory

    mine = signature(case)
    overlap = _overlap(mine)
    if not overlap:
        return []
    rows = (
        candidates.filter(overlap, closed_at__isnull=False)
        .exclude(pk=case.pk)
        .exclude(resolution="")
        .only("id", "title", "customer", "created_at", "resolution", "resolution_category", *DOMINANT)
        .order_by("-closed_at")[:MAX_CANDIDATES]
    )
    scored = [(*_score(mine, signature(other)), other) for other in rows]
    scored = [item for item in scored if item[0] > 0]
    scored.sort(key=lambda item: (-item[0], -item[2].created_at.timestamp()))
    out = []
    for score, reasons, other in scored[:limit]:
        same = same_words(reasons)
        summary = resolution_summary(other.resolution)
        who = f"Case {other.pk}" + (f" ({other.customer})" if other.customer else "")
        out.append(
            {
                "id": other.pk,
                "url": f"/cases/{other.pk}/",
                "title": other.title or f"Case {other.pk}",
                "customer": other.customer,
                "score": round(score, 3),
                "category": ResolutionCategory(other.resolution_category).label
                if other.resolution_category in ResolutionCategory.values
                else "",
                "same": same,
                "summary": summary,
                "resolution": other.resolution,
                "sentence": f"{who}: same {same}; fixed: {summary}",
            }
        )
    return out


def same_words(reasons: list[dict[str, object]]) -> str:
    """The shared items in words, findings first: "tmp-table-churn/same-query-pileup, wait channel
    do_unlinkat and query" (at most 3 names a kind; fingerprints are counted, not quoted)."""
    by_kind = {r["kind"]: list(r["shared"]) for r in reasons}  # type: ignore[arg-type]
    parts = []
    for kind in ("finding_keys", "wait_channels"):
        shared = by_kind.get(kind, [])
        if shared:
            names = "/".join(shared[:3]) + (f" (+{len(shared) - 3})" if len(shared) > 3 else "")
            label = (
                "" if kind == "finding_keys" else ("wait channel " if len(shared) == 1 else "wait channels ")
            )
            parts.append(label + names)
    queries = len(by_kind.get("fingerprints", []))
    if queries:
        parts.append("query" if queries == 1 else f"{queries} queries")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def resolution_summary(text: str) -> str:
    """The first non-empty line of a Markdown resolution without its leading marks (``#``, ``-``,
    ``*``, ``>``, ``1.``) and emphasis, cut at ``SUMMARY_CHARS``."""
    for line in (text or "").splitlines():
        line = line.strip().lstrip("#>*-+ ").strip()
        line = line.split(". ", 1)[1] if line[:1].isdigit() and ". " in line[:4] else line
        line = line.replace("**", "").replace("`", "")
        if line:
            return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"
    return ""
