"""The verdict of a case as it is served: the stored one (``Case.verdict``, analyzer/reasoning/verdict.py)
with its finding references expanded into the findings of the document being served.

``Case.verdict`` names findings as ``{"key", "host"}``; the case report, the API, the case page and a
share link each serve their own list of findings (a share link's redacted), and the verdict's
``root_cause``, ``chain``, ``explains`` and ``also_found`` are those very objects. A case analysed
before the verdict was stored has an empty ``Case.verdict``: it is served as None, and the page asks
for a re-analysis.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The verdict's fields that hold findings (one, or a list).
FINDING_LISTS = ("chain", "explains", "also_found")


def _ident(ref: Mapping[str, object]) -> tuple[str, str | None]:
    return (str(ref.get("key")), (ref.get("host") or None))  # type: ignore[return-value]


def expand_verdict(
    verdict: Mapping[str, object] | None, findings: list[dict[str, object]], *, page: bool = False
) -> dict[str, object] | None:
    """``verdict`` (stored: findings as ``{"key", "host"}``; or already expanded: findings as objects,
    which carry their key and host) with every finding replaced by the object of ``findings`` that has
    the same key and host. A reference to a finding the document does not hold is dropped. None for
    an empty verdict (a case not analysed since the verdict was stored).

    ``page``: also ``explained`` (each explained finding with the sentence of the link that explains
    it: ``[{"finding", "because"}]``) and ``headline_rest`` (the headline after the root cause's title),
    for the case page's template.
    """
    if not verdict:
        return None
    by_ident: dict[tuple[str, str | None], dict[str, object]] = {}
    for f in findings:
        by_ident.setdefault(_ident(f), f)

    def one(ref: object) -> dict[str, object] | None:
        return by_ident.get(_ident(ref)) if isinstance(ref, Mapping) else None

    out: dict[str, object] = {**verdict, "root_cause": one(verdict.get("root_cause"))}
    for name in FINDING_LISTS:
        out[name] = [f for f in (one(r) for r in verdict.get(name) or []) if f is not None]
    if page:
        reach = {_ident(f) for f in [out["root_cause"], *out["explains"]] if f}
        because: dict[tuple[str, str | None], str] = {}
        for li in verdict.get("links") or []:
            if _ident(li["cause"]) in reach:
                because.setdefault(_ident(li["effect"]), str(li["sentence"]))
        out["explained"] = [{"finding": f, "because": because.get(_ident(f), "")} for f in out["explains"]]
        root, headline = out["root_cause"], str(verdict.get("headline") or "")
        title = str(root.get("title", "")) if root else ""
        out["headline_rest"] = headline[len(title) :] if title and headline.startswith(title) else ""
    return out
