"""The verdict: the root cause of a capture, the chain from it to the worst symptom, the fix.

From the findings and the links the bundle shows between them (analyzer/reasoning/links.py), as a senior
engineer reads a capture:

- **candidates** are the findings no link explains;
- a finding that names a **holder** the bundle shows (a session, transaction or account holding what
  others wait for: ``analyzer.waits.holders``) ranks first; a finding blaming a **setting** ranks
  after every finding naming a holder (a setting is the culprit only when the bundle shows none);
- the **root cause** is the candidate with the longest chain of links to a symptom; then a finding
  that can be a cause ahead of a measure that is by nature an effect (``SYMPTOMS``: a saturated CPU
  or disk, a crowd of sessions, queued threads, unless it names a culprit of its own, such as another
  process taking the CPUs); then the most severe; then the one naming its cause best (a session,
  transaction, process, setting or file system ahead of a statement, a statement ahead of nothing);
  then the first in the findings' order. An info-level finding (an old event, such as a deadlock just
  before the capture) never beats a warning or a critical one;
- the **chain** runs from the root cause through its links to the worst finding it explains (most
  severe, then farthest); **explains** lists every finding the root cause reaches through links,
  **also found** every other finding (found at the same time, perhaps, but not joined);
- the **fix** is the root cause's recommendation; when the root cause names no culprit, explains
  nothing and shows no contention in place of a holder, the bundle shows no cause, and the fix says so
  before the finding's general advice;
- the **headline** is the root cause's title, with the culprit it blames when the title does not
  name it yet (the holder of a lock, the setting and its value);
- a capture without a warning or critical finding is **healthy**: "No problem found in this capture",
  its info findings under also found.

Pure: findings and links in, a ``Verdict`` out; ``verdict_refs`` gives it as the JSON stored with a
case, findings as ``{"key", "host"}`` references.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from analyzer.findings import Finding, Link, NotEvaluated, RuleFailed, Severity, evidence_json
from analyzer.isotime import iso_utc

HEALTHY_HEADLINE = "No problem found in this capture"
#: Said before the root cause's general advice when the bundle shows no cause for it.
NO_CAUSE_SHOWN = (
    "The capture shows no cause for this finding (no culprit named, nothing it explains); in general: "
)
#: How strongly a finding names its cause, by culprit kind (lower first): a holder or a setting the
#: reader can act on, then a statement or a client host, then a measure without a culprit.
NAMED_CAUSE_TIER = {
    "session": 0,
    "transaction": 0,
    "account": 0,
    "process": 0,
    "thread": 0,
    "setting": 0,
    "filesystem": 0,
    "statement": 1,
    "host": 1,
}
#: Culprit kinds that hold what others wait for (analyzer.waits.holders): a finding naming one is the
#: root cause ahead of a deeper chain or a setting.
HOLDER_KINDS = frozenset({"session", "transaction", "account"})
#: The series of evidence saying what the bundle shows in place of a holder (the contention among the
#: sessions, analyzer/rules/waits.py): a root cause with it is shown, its fix is not NO_CAUSE_SHOWN.
SHOWN_SERIES = "holders.contention"
#: Findings whose culprit holds what the sessions wait for: the headline says "held by".
HELD_BY_KEYS = frozenset({"lock-waits", "sessions-waiting", "purge-lag", "thread-pool-wait"})
ANONYMOUS_TIER = 2
#: Measures that are by nature the effect of something else (a saturated resource, a crowd, queued
#: threads): without a culprit of their own, they rank after every finding that can be a cause.
SYMPTOMS = frozenset({
    "cpu-saturation", "single-cpu-saturation", "active-sessions-overload", "load-from-uninterruptible-threads",
    "iowait-understates-io", "interrupt-storm", "context-switch-storm", "disk-saturation",
    "long-running-queries", "tcp-retransmits", "innodb-pending-io",
})  # fmt: skip

Ident = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of the rule set ran: rules evaluated, not evaluated (inputs missing), failed, and the
    inputs whose absence kept rules from running."""

    evaluated: int = 0
    not_evaluated: int = 0
    failed: int = 0
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """See the module docstring. ``chain`` starts with ``root_cause``; ``explains`` holds every finding the
    root cause reaches (chain included, root excluded); ``when`` the root cause's span (UTC)."""

    state: str
    headline: str
    root_cause: Finding | None
    chain: tuple[Finding, ...] = ()
    explains: tuple[Finding, ...] = ()
    also_found: tuple[Finding, ...] = ()
    links: tuple[Link, ...] = ()
    fix: str = ""
    when: tuple[pd.Timestamp, pd.Timestamp] | None = None
    confidence: str = ""
    check: str = ""
    coverage: Coverage = field(default_factory=Coverage)


def ident(f: Finding) -> Ident:
    return (f.key, f.host)


def _children(links: Iterable[Link]) -> dict[Ident, list[Ident]]:
    out: dict[Ident, list[Ident]] = {}
    for li in links:
        out.setdefault(li.cause, []).append(li.effect)
    return out


def _paths(start: Ident, children: dict[Ident, list[Ident]]) -> dict[Ident, list[Ident]]:
    """The longest path from ``start`` to every finding it reaches (links have no cycle)."""
    best: dict[Ident, list[Ident]] = {start: [start]}
    stack = [[start]]
    while stack:
        path = stack.pop()
        for nxt in children.get(path[-1], ()):
            if nxt in path:
                continue
            longer = path + [nxt]
            if len(longer) > len(best.get(nxt, [])):
                best[nxt] = longer
                stack.append(longer)
    return best


def _tier(f: Finding) -> int:
    return NAMED_CAUSE_TIER.get(f.culprit.kind, ANONYMOUS_TIER) if f.culprit else ANONYMOUS_TIER


def _holder(f: Finding) -> bool:
    """The finding names a holder the bundle shows (``HOLDER_KINDS``) and is not informational."""
    return f.culprit is not None and f.culprit.kind in HOLDER_KINDS and f.severity is not Severity.INFO


def _culprit_phrase(f: Finding) -> str:
    """What the culprit is, for a headline: ``session 12 (backup@10.0.0.9)``, ``innodb_buffer_pool_size =
    128M``."""
    c = f.culprit
    if c is None:
        return ""
    if c.kind == "setting":
        return f"{c.id} = {c.statement}" if c.statement else c.id
    if c.kind == "process":
        return f"{(c.statement or '').split(' ', 1)[0] or 'process'} (PID {c.id})"
    if c.kind == "account":
        return f"account {c.id}"
    if c.kind in ("session", "transaction"):
        account = f" ({c.user or '?'}@{c.host})" if c.host else (f" ({c.user})" if c.user else "")
        return f"{c.kind} {c.id}{account}"
    return ""


def headline(f: Finding) -> str:
    """The root cause's title, with its culprit when the title does not name it yet."""
    phrase = _culprit_phrase(f)
    c = f.culprit
    if not phrase or c is None or c.id in f.title:
        return f.title
    joiner = (
        "; the setting:" if c.kind == "setting" else "; held by" if f.key in HELD_BY_KEYS else "; culprit:"
    )
    return f"{f.title}{joiner} {phrase}"


def coverage(rules_run: int, not_evaluated: Iterable[NotEvaluated], failed: Iterable[RuleFailed]) -> Coverage:
    """``Coverage`` from the engine's outcome (``rules_run``: the rules it ran, ``Outcome.versions``)."""
    not_evaluated, failed = list(not_evaluated), list(failed)
    missing = sorted(
        {part.strip() for n in not_evaluated for m in n.missing for part in m.split(" or ") if part.strip()}
    )
    return Coverage(
        max(0, rules_run - len(not_evaluated) - len(failed)), len(not_evaluated), len(failed), tuple(missing)
    )


def decide(findings: list[Finding], links: list[Link], cover: Coverage | None = None) -> Verdict:
    """The verdict of ``findings`` (the engine's, most severe first) joined by ``links`` (see the module
    docstring). ``cover``: how much of the rule set ran (``coverage``)."""
    cover = cover or Coverage()
    problems = [f for f in findings if f.severity is not Severity.INFO]
    if not problems:
        return Verdict(
            "healthy", HEALTHY_HEADLINE, None, also_found=tuple(findings), links=tuple(links), coverage=cover
        )
    by_id = {ident(f): f for f in findings}
    links = [li for li in links if li.cause in by_id and li.effect in by_id]
    children = _children(links)
    explained = {li.effect for li in links}
    order = {ident(f): i for i, f in enumerate(findings)}
    candidates = [f for f in findings if ident(f) not in explained] or problems
    paths = {ident(f): _paths(ident(f), children) for f in candidates}
    held = any(_holder(f) for f in candidates)

    def rank(f: Finding) -> tuple:
        depth = max(len(p) for p in paths[ident(f)].values()) - 1
        symptom = f.key in SYMPTOMS and f.culprit is None
        setting = held and f.culprit is not None and f.culprit.kind == "setting"
        return (
            f.severity is Severity.INFO,
            not _holder(f),
            setting,
            -depth,
            symptom,
            f.severity.rank,
            _tier(f),
            order[ident(f)],
        )

    root = min(candidates, key=rank)
    reach = paths[ident(root)]
    others = [k for k in reach if k != ident(root)]
    worst = min(others, key=lambda k: (by_id[k].severity.rank, -len(reach[k]), order[k])) if others else None
    chain = tuple(by_id[k] for k in reach[worst]) if worst else (root,)
    explains = tuple(f for f in findings if ident(f) in reach and f is not root)
    also = tuple(f for f in findings if ident(f) not in reach)
    named = root.culprit is not None or bool(explains) or any(e.series == SHOWN_SERIES for e in root.evidence)
    windows = root.windows
    return Verdict(
        "problem",
        headline(root),
        root,
        chain,
        explains,
        also,
        tuple(links),
        root.recommendation if named else NO_CAUSE_SHOWN + root.recommendation,
        (windows[0].start, max(w.end for w in windows)) if windows else None,
        root.confidence,
        root.disproof,
        cover,
    )


def ref(f: Finding) -> dict[str, str | None]:
    """A finding as the stored verdict names it: ``{"key", "host"}``."""
    return {"key": f.key, "host": f.host}


def link_json(li: Link) -> dict[str, object]:
    """A link as JSON: ``{"cause": {"key","host"}, "effect": {...}, "join", "sentence", "evidence"}``."""
    return {
        "cause": {"key": li.cause[0], "host": li.cause[1]},
        "effect": {"key": li.effect[0], "host": li.effect[1]},
        "join": li.join,
        "sentence": li.sentence,
        "evidence": [evidence_json(e) for e in li.evidence],
    }


def verdict_refs(v: Verdict) -> dict[str, object]:
    """The verdict as stored with a case (``Case.verdict``): the JSON contract of docs/api.md with every
    finding as a ``{"key", "host"}`` reference, which the web expands into the served findings."""
    return {
        "state": v.state,
        "headline": v.headline,
        "root_cause": ref(v.root_cause) if v.root_cause else None,
        "chain": [ref(f) for f in v.chain],
        "explains": [ref(f) for f in v.explains],
        "also_found": [ref(f) for f in v.also_found],
        "links": [link_json(li) for li in v.links],
        "fix": v.fix,
        "when": [iso_utc(t, timespec="microseconds") for t in v.when] if v.when else None,
        "confidence": v.confidence,
        "check": v.check,
        "coverage": {
            "evaluated": v.coverage.evaluated,
            "not_evaluated": v.coverage.not_evaluated,
            "failed": v.coverage.failed,
            "missing": list(v.coverage.missing),
        },
    }
