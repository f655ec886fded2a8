"""Causal links between findings, each shown by a join in the bundle, never by time overlap.

A finding explains another only when a **join function** finds, in the bundle, the thing both are
about: the same MySQL sessions or thread ids (the waiters in ``-lock-waits`` are the active sessions
of the other finding; the replica's SQL thread is the waiter), the same statement fingerprint, the
same OS process or threads (``top``, ``ps``), the same block device, the same server for host-level
counters, or across hosts the replication or Galera topology (analyzer/cluster/topology.py). Two findings
that only happened at the same time are not linked: the verdict (analyzer/reasoning/verdict.py) lists them
under "also found".

The registry API (what a family module of join functions uses):

- ``@joins("cause-key", "effect-key", ...)`` registers a function
  ``(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None`` for each ``(cause, effect)``
  pair of keys it is given as ``("a", "b")`` tuples, or for one pair given as two strings. The engine
  calls it for every pair of findings with those keys (on the same host or on two hosts: the function
  decides; ``same_host(cause, effect)`` is the usual first test). It returns ``None`` when the bundle
  does not show the join, even if the two findings' windows overlap.
- ``link(cause, effect, join, sentence, evidence)`` builds the ``Link``: ``join`` one of
  ``analyzer.findings.JOIN_KINDS``, ``sentence`` one sentence saying how the cause explains the effect
  and naming what joins them (ids, devices, processes; never raw SQL: a link is served on redacted
  share links), ``evidence`` the lines that show the join.
- ``JoinContext`` gives the join the timelines: ``ctx.timeline(finding)`` (the finding's host's
  timeline, None for a cross-host finding or an unknown host), ``ctx.timelines`` (host name ->
  Timeline) and ``ctx.replication`` (``topology.replication_links`` of the case, computed once).
- ``JOIN_FAMILIES`` names the modules under ``analyzer/reasoning/joins/`` holding join functions; each is
  imported once when this module is (a new family: add its module name here).
- ``find_links(findings, timelines)`` runs every registered join over every pair of findings and
  returns the links, strongest first (registry order), without a cycle; a join function that raises
  is recorded in ``Links.failed`` (``key -> error``) and the others still run.

Findings carry the ids their joins read in ``Finding.subjects`` (``(kind, id)`` pairs: ``session``
processlist Ids, ``thread`` OS TIDs, ``process`` PIDs, ``device`` names, ``statement`` fingerprints),
or name them in their ``culprit``; a join function may also read the timeline frames the rule read.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from analyzer.findings import Evidence, Finding, Link
from analyzer.timeline.timeline import Timeline

JoinFn = Callable[[Finding, Finding, "JoinContext"], Link | None]

#: The modules of analyzer/reasoning/joins/ holding join functions, imported at the end of this module.
JOIN_FAMILIES: tuple[str, ...] = ("sessions", "host", "replication", "statements")

_JOINS: dict[tuple[str, str], list[JoinFn]] = {}


def joins(*pairs: tuple[str, str] | str) -> Callable[[JoinFn], JoinFn]:
    """Register a join function for ``(cause_key, effect_key)`` pairs: ``@joins("a", "b")`` or
    ``@joins(("a", "b"), ("a", "c"))``. A pair may hold several functions: the first that returns a
    Link wins. Raises ValueError on a pair whose cause and effect are one key."""
    if len(pairs) == 2 and all(isinstance(p, str) for p in pairs):
        pairs = ((str(pairs[0]), str(pairs[1])),)

    def register(fn: JoinFn) -> JoinFn:
        for pair in pairs:
            cause, effect = pair  # type: ignore[misc]
            if cause == effect:
                raise ValueError(f"a join needs two keys, got {pair}")
            if fn not in _JOINS.setdefault((cause, effect), []):
                _JOINS[(cause, effect)].append(fn)
        return fn

    return register


def registered() -> dict[tuple[str, str], tuple[JoinFn, ...]]:
    """Every registered join: ``(cause_key, effect_key) -> its functions``, in registration order."""
    return {pair: tuple(fns) for pair, fns in _JOINS.items()}


@dataclass
class JoinContext:
    """What a join function reads besides the two findings: each host's timeline (``timelines``:
    ``Host.name`` -> Timeline; a one-host analysis outside a case uses the key None)."""

    timelines: Mapping[str | None, Timeline]

    def timeline(self, f: Finding) -> Timeline | None:
        """The timeline of ``f``'s host (None for a cross-host finding without a host of its own)."""
        if f.host in self.timelines:
            return self.timelines[f.host]
        if f.host is None and not f.hosts and len(self.timelines) == 1:
            return next(iter(self.timelines.values()))
        return None

    @functools.cached_property
    def replication(self) -> list:
        """The replication channels between the case's hosts (``topology.replication_links``)."""
        from analyzer.cluster.topology import replication_links  # noqa: PLC0415 - only joins across hosts need it

        named = {k: v for k, v in self.timelines.items() if k is not None}
        return replication_links(named) if len(named) > 1 else []


def ident(f: Finding) -> tuple[str, str | None]:
    """How a link names a finding: ``(key, host)``."""
    return (f.key, f.host)


def same_host(cause: Finding, effect: Finding) -> bool:
    """Both findings are about one server (the same ``host``, neither a cross-host finding)."""
    return cause.host == effect.host and not cause.hosts and not effect.hosts


def subject_ids(f: Finding, kind: str) -> frozenset[str]:
    """The ids of ``kind`` the finding is about (``Finding.subjects``), plus its culprit's id when the
    culprit is of that kind."""
    ids = {i for k, i in f.subjects if k == kind}
    if f.culprit is not None and f.culprit.kind == kind:
        ids.add(f.culprit.id)
    return frozenset(ids)


def link(
    cause: Finding, effect: Finding, join: str, sentence: str, evidence: Iterable[Evidence] = ()
) -> Link:
    """The ``Link`` from ``cause`` to ``effect`` (see the module docstring for each argument)."""
    return Link(ident(cause), ident(effect), join, sentence, tuple(evidence))


@dataclass
class Links:
    """What ``find_links`` returns: the links, strongest first, and the joins that raised
    (``"cause->effect" -> "Type: message"``)."""

    links: list[Link] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def _reaches(edges: Mapping[tuple, set[tuple]], start: tuple, goal: tuple) -> bool:
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return False


def find_links(findings: list[Finding], timelines: Mapping[str | None, Timeline]) -> Links:
    """Every join the bundle shows between two of ``findings`` (see the module docstring), in registry
    order; a link that would close a cycle is left out (the earlier, stronger one stays), and so is a
    second link between the same two findings."""
    ctx = JoinContext(timelines)
    out = Links()
    edges: dict[tuple, set[tuple]] = {}
    for (cause_key, effect_key), fns in _JOINS.items():
        causes = [f for f in findings if f.key == cause_key]
        effects = [f for f in findings if f.key == effect_key]
        for cause in causes:
            for effect in effects:
                a, b = ident(cause), ident(effect)
                if b in edges.get(a, ()) or _reaches(edges, b, a):
                    continue
                for fn in fns:
                    try:
                        found = fn(cause, effect, ctx)
                    except Exception as exc:  # noqa: BLE001 - one broken join never sinks the verdict
                        out.failed[f"{cause_key}->{effect_key}"] = f"{type(exc).__name__}: {exc}"
                        continue
                    if found is not None:
                        out.links.append(found)
                        edges.setdefault(a, set()).add(b)
                        break
    return out


# Last, once the registry exists: import every join family (each registers with @joins).
for _family in JOIN_FAMILIES:
    importlib.import_module(f"analyzer.reasoning.joins.{_family}")
