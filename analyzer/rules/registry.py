"""The rule registry: ``@rule`` records a rule's function under its key with the inputs it needs
(all required), those it can use, and groups of which one will do.

Every input a rule names is checked when ``@rule`` runs, that is when its module is imported, against
the registry of frames (analyzer/timeline/frames.py ``INPUTS``): a mistyped name raises
``DeclarationError`` there, never leaves the rule "not evaluated" in silence.

A rule is a pure function ``(Timeline) -> Finding | None``. Registering is all this module does: the
engine (analyzer/engine.py) imports every family declared in ``RULE_FAMILIES`` and runs what they
registered, so a family module imports this one and never the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analyzer.findings import Finding
from analyzer.timeline.frames import INPUTS, DeclarationError, unknown
from analyzer.timeline.timeline import Timeline

RuleFn = Callable[[Timeline], Finding | None]


@dataclass(frozen=True, slots=True)
class RuleSpec:
    key: str
    version: int
    requires: tuple[str, ...]
    optional: tuple[str, ...]
    fn: RuleFn
    any_of: tuple[tuple[str, ...], ...] = ()

    @property
    def declared(self) -> frozenset[str]:
        """Every input the rule names: required, optional and each ``any_of`` group's."""
        return frozenset((*self.requires, *self.optional, *(n for group in self.any_of for n in group)))


_REGISTRY: dict[str, RuleSpec] = {}
__all__ = ["DeclarationError", "RuleSpec", "registered", "rule"]


def rule(
    *,
    key: str,
    requires: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
    any_of: tuple[tuple[str, ...], ...] = (),
    version: int = 1,
) -> Callable[[RuleFn], RuleFn]:
    """Register a rule under ``key``. ``requires``, ``optional`` and ``any_of`` name ``Timeline.inputs``:
    every name in ``requires`` must be present, and at least one name of each ``any_of`` group
    (``(("vmstat", "mpstat_cpu"),)``: either source of the same measure will do). Raises
    ``DeclarationError`` (analyzer/timeline/frames.py) for a name that is not an input a timeline
    can hold."""
    unknown(
        (*requires, *optional, *(name for group in any_of for name in group)),
        INPUTS,
        what="a frame of analyzer/timeline/frames.py, 'variables' or 'ncpu'",
        where=f"@rule(key={key!r})",
    )

    def register(fn: RuleFn) -> RuleFn:
        if key in _REGISTRY and _REGISTRY[key].fn is not fn:
            raise ValueError(f"rule key {key!r} registered twice")
        _REGISTRY[key] = RuleSpec(
            key, version, tuple(requires), tuple(optional), fn, tuple(map(tuple, any_of))
        )
        return fn

    return register


def registered() -> dict[str, RuleSpec]:
    """Every rule registered so far, by key: those of the families imported (``analyzer.engine.rules``
    imports them all first)."""
    return dict(_REGISTRY)
