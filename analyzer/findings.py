"""The result types of the findings engine: frozen, slotted, hashable, easy to compare in tests.

A rule returns a ``Finding`` (or None). The engine turns a rule whose inputs are missing into
``NotEvaluated`` and a rule that raised into ``RuleFailed``; neither stops the other rules.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import pandas as pd


class Severity(enum.StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for the most severe: sort findings by it."""
        return severity_rank(self.value)


#: The one severity order, most severe first (the engine, the web and the API sort by it).
SEVERITY_ORDER: tuple[Severity, ...] = (Severity.CRITICAL, Severity.WARNING, Severity.INFO)


def severity_rank(value: str) -> int:
    """Position of a severity (``"critical"`` ...) in SEVERITY_ORDER; unknown values sort last."""
    for i, sev in enumerate(SEVERITY_ORDER):
        if sev.value == value:
            return i
    return len(SEVERITY_ORDER)


@dataclass(frozen=True, slots=True)
class Window:
    """A closed time interval, UTC."""

    start: pd.Timestamp
    end: pd.Timestamp

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True, slots=True)
class Evidence:
    """One number that made a rule fire, pointing at its series and at the raw lines it came from.

    ``series``: the timeline series (``vmstat.r``, ``processlist.state``); ``member`` and
    ``lines`` (first, last; 1-based) locate the raw capture lines behind the value.
    """

    label: str
    value: float | int | str
    unit: str
    series: str
    member: str | None = None
    lines: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    """A diagnosis, in the order STYLE.md gives: what, how bad, when, why we think so, what to do."""

    key: str
    severity: Severity
    title: str
    explanation: str
    windows: tuple[Window, ...]
    evidence: tuple[Evidence, ...]
    recommendation: str
    caveats: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    confidence: str = ""
    disproof: str = ""
    related: tuple[str, ...] = field(default=())
    rule_version: int = 1


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    """A rule that could not run: the inputs it needs are missing from the bundle."""

    key: str
    missing: tuple[str, ...]

    @property
    def reason(self) -> str:
        return "needs " + " and ".join(self.missing)


@dataclass(frozen=True, slots=True)
class RuleFailed:
    """A rule that raised; ``error`` is ``Type: message``. The case still completes."""

    key: str
    error: str
