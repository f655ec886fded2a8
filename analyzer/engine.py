"""The engine that runs every rule over a timeline, and the rule families it runs.

A rule is a pure function ``(Timeline) -> Finding | None`` registered with ``@rule``
(analyzer/rules/registry.py), declaring the inputs it needs (all required) and those it can use. The
engine, not the rule, handles absence and failure (the shape of insights-core's ``@rule`` and
troubleshoot's analyzers): missing required input gives ``NotEvaluated``, an exception gives
``RuleFailed``, and the other rules still run.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from analyzer.cluster.rules import cross_host_findings
from analyzer.evidence.slowlog import with_slow_log
from analyzer.findings import Evidence, Finding, Link, NotEvaluated, RuleFailed
from analyzer.reasoning.links import find_links
from analyzer.reasoning.verdict import Verdict, coverage, decide
from analyzer.rules.registry import RuleSpec, registered
from analyzer.timeline.timeline import Timeline
from parsers.passwords import masked

#: The rule families: the modules of analyzer/rules/, each imported once by this module so that its
#: @rule decorators register. Declared, not discovered: a misspelt or missing family raises
#: ``ModuleNotFoundError`` when this module is imported, at start-up, instead of leaving its rules
#: silently unrun.
RULE_FAMILIES = (
    "cpu",
    "memory",
    "io",
    "irq",
    "mysql",
    "sessions",
    "correlated",
    "innodb",
    "transactions",
    "kernel",
    "replication",
    "counters",
    "host",
    "errorlog",
    "caches",
    "waits",
    "statements",
)

FAMILIES = tuple(importlib.import_module(f"analyzer.rules.{family}") for family in RULE_FAMILIES)


def rules() -> dict[str, RuleSpec]:
    """All registered rules by key (every family in ``RULE_FAMILIES`` is imported with this module)."""
    return registered()


@dataclass(slots=True)
class Outcome:
    """What the engine produced: findings (most severe first), rules not evaluated, rules that failed,
    and the version of every rule that ran."""

    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[NotEvaluated] = field(default_factory=list)
    failed: list[RuleFailed] = field(default_factory=list)
    versions: dict[str, int] = field(default_factory=dict)
    #: How the findings explain one another, each shown by a join in the bundle (analyzer/reasoning/links.py).
    links: list[Link] = field(default_factory=list)
    #: The root cause, its chain and fix (analyzer/reasoning/verdict.py), set with the links.
    verdict: Verdict | None = None


def conclude(out: Outcome, timelines: Mapping[str | None, Timeline]) -> Outcome:
    """Fill ``out.links`` from its findings (``analyzer.reasoning.links.find_links``; a join that raised is
    recorded as ``RuleFailed("join:<cause>-><effect>")``), then ``out.verdict`` (``verdict.decide``).
    Returns the outcome with every password masked (``parsers.passwords.masked``: a rule quotes
    statements and command lines in its texts, evidence and culprit), so no finding, link, verdict
    or failure the engine hands on holds one."""
    found = find_links(out.findings, timelines)
    out.links = found.links
    out.failed += [RuleFailed(f"join:{pair}", error) for pair, error in found.failed.items()]
    cover = coverage(len(out.versions), out.not_evaluated, out.failed)
    out.verdict = decide(out.findings, out.links, cover)
    return masked(out)


def run(tl: Timeline, *, only: tuple[str, ...] | None = None) -> Outcome:
    """Run every registered rule (or the keys in ``only``) over ``tl``, then link the findings the
    bundle joins (``conclude``)."""
    return conclude(_run_rules(tl, only=only), {None: tl})


def _run_rules(tl: Timeline, *, only: tuple[str, ...] | None) -> Outcome:
    """Every registered rule (or those of ``only``) over ``tl``, findings most severe first, no links."""
    out = Outcome()
    available = tl.inputs
    for key, spec in sorted(rules().items()):
        if only is not None and key not in only:
            continue
        out.versions[key] = spec.version
        missing = tuple(name for name in spec.requires if name not in available) + tuple(
            " or ".join(group) for group in spec.any_of if not available.intersection(group)
        )
        if missing:
            out.not_evaluated.append(NotEvaluated(key, missing))
            continue
        try:
            finding = spec.fn(tl.only(spec.declared))
        except Exception as exc:  # noqa: BLE001 - a failing rule is recorded, never sinks the case
            out.failed.append(RuleFailed(key, f"{type(exc).__name__}: {exc}"))
            continue
        if finding is not None:
            out.findings.append(with_slow_log(_variables_sourced(finding, tl), tl))
    out.findings.sort(key=lambda f: (f.severity.rank, f.windows[0].start if f.windows else 0, f.key))
    return out


def _variables_sourced(finding: Finding, tl: Timeline) -> Finding:
    """``finding`` with its server variables' evidence (series ``variables`` or ``variables.<name>``,
    its culprit's too) pointing at the pt-mysql-summary line each was read from, when the timeline's
    variables come from one (``Timeline.variables_from``): the one place a rule's evidence names that
    source. Unchanged when they come from ``-variables``."""
    if not tl.variables_from:
        return finding

    def sourced(ev: Evidence) -> Evidence:
        name = ev.series.partition(".")[2] or ev.label.removeprefix("variable ").split(" ")[0]
        origin = tl.variables_from.get(name) if ev.series.split(".")[0] == "variables" else None
        if origin is None or ev.member is not None:
            return ev
        return dataclasses.replace(ev, member=origin[0], lines=(origin[1], origin[1]))

    culprit = finding.culprit
    if culprit is not None:
        culprit = dataclasses.replace(culprit, evidence=tuple(sourced(e) for e in culprit.evidence))
    return dataclasses.replace(finding, evidence=tuple(sourced(e) for e in finding.evidence), culprit=culprit)


#: The key a failure of the cross-host rules is recorded under (``RuleFailed``).
CROSS_HOST_KEY = "cross-host"


def run_hosts(timelines: Mapping[str, Timeline], *, only: tuple[str, ...] | None = None) -> Outcome:
    """Run every rule over each host's timeline (``timelines``: ``Host.name`` -> its Timeline, the
    case's first host first), then, for two hosts or more, the cross-host rules
    (``analyzer.cluster.rules.cross_host_findings``).

    Each rule sees one host's timeline only, so it is calibrated to that host (its CPUs, disks and
    variables). Every finding of a host gets ``host`` (its ``hosts`` stay empty); its ``NotEvaluated``
    and ``RuleFailed`` name the host too. A cross-host finding keeps ``host`` None and its own
    ``hosts``; a failure of the cross-host rules is recorded as ``RuleFailed(CROSS_HOST_KEY)``, the
    hosts' findings kept. Findings are ordered most severe first across hosts, then by start, then by
    host (the case's order) and key; one host keeps ``run``'s order exactly.
    """
    out = Outcome()
    position = {name: i for i, name in enumerate(timelines)}
    for name, tl in timelines.items():
        one = _run_rules(tl, only=only)
        out.findings += [dataclasses.replace(f, host=name) for f in one.findings]
        out.not_evaluated += [dataclasses.replace(n, host=name) for n in one.not_evaluated]
        out.failed += [dataclasses.replace(f, host=name) for f in one.failed]
        out.versions.update(one.versions)
    if len(timelines) < 2:
        return conclude(out, timelines)
    try:
        out.findings += list(cross_host_findings(timelines))
    except Exception as exc:  # noqa: BLE001 - like a rule: recorded, never sinks the case
        out.failed.append(RuleFailed(CROSS_HOST_KEY, f"{type(exc).__name__}: {exc}"))
    out.findings.sort(
        key=lambda f: (
            f.severity.rank,
            0 if f.windows else 1,
            f.windows[0].start.value if f.windows else 0,
            position.get(f.host or "", -1),
            f.key,
        )
    )
    return conclude(out, timelines)
