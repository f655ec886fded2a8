"""The words of a rule, declared beside its detection function as templates.

insights-core keeps each rule's message in a module-level ``CONTENT`` template filled from the rule's
keyed response (``docs/embedded_content.rst``); Casebook does the same: a rule measures, returns the
numbers, and its ``RuleTexts`` turns them into the title, explanation, recommendation, caveats and
confidence of a ``Finding``. Templates use ``str.format`` fields (``{held:.0f}``, ``{ncpu}``); a
field missing from the numbers raises ``KeyError`` (a rule that forgot a number fails loudly,
and the engine records it as ``RuleFailed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from analyzer.findings import Evidence, Finding, Severity, Window

#: The usual confidence line: which sources agree, and how long the condition held.
HELD = "{agree} agree; held {held:.0f} s in {n_windows} window(s)"


@dataclass(frozen=True, slots=True)
class RuleTexts:
    """Templates of one rule's texts. ``caveats`` and ``sources`` are tuples of templates."""

    title: str
    explanation: str
    recommendation: str
    caveats: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    disproof: str = ""
    confidence: str = HELD

    def finding(
        self,
        key: str,
        severity: Severity,
        windows: Iterable[Window],
        evidence: Iterable[Evidence],
        *,
        related: tuple[str, ...] = (),
        **values: object,
    ) -> Finding:
        """The ``Finding`` with every template filled from ``values`` (plus ``n_windows``).

        ``values``: the numbers and phrases the detection measured, by the field names the templates
        use. Raises KeyError when a template names a field that ``values`` lacks.
        """
        windows = tuple(windows)
        fields = {"n_windows": len(windows), **values}

        def fill(template: str) -> str:
            return template.format(**fields)

        return Finding(
            key=key,
            severity=severity,
            title=fill(self.title),
            explanation=fill(self.explanation),
            windows=windows,
            evidence=tuple(evidence),
            recommendation=fill(self.recommendation),
            caveats=tuple(fill(c) for c in self.caveats),
            sources=tuple(fill(s) for s in self.sources),
            confidence=fill(self.confidence),
            disproof=fill(self.disproof),
            related=related,
        )
