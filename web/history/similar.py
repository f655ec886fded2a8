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
    overlap = Q()
    for kind, items in mine.items():
        if items:
            overlap |= Q(**{f"{kind}__overlap": sorted(items)})
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
            "created_at": other.created_at.isoformat().replace("+00:00", "Z"),
            "score": round(score, 3),
            "reasons": reasons,
        }
        for score, other, reasons in scored[:limit]
    ]


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
