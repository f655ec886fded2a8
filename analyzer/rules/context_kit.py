"""Helpers of the InnoDB, kernel-counter and status-counter rules (innodb, kernel, replication,
counters): a rule's texts declared as data beside it, counters read from the timeline, windows of
snapshot samples. Detection stays in the rule; the words live in its ``Texts``."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.timeline import Timeline


@dataclass(frozen=True, slots=True)
class Texts:
    """A rule's words as ``str.format`` templates, filled from the numbers its detection returns."""

    title: str
    explanation: str
    recommendation: str
    caveats: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    disproof: str = ""

    def finding(
        self,
        key: str,
        severity: Severity,
        numbers: dict[str, object],
        windows: list[Window],
        evidence: list[Evidence],
        *,
        confidence: str = "",
        related: tuple[str, ...] = (),
    ) -> Finding:
        """The finding, every template filled from ``numbers``."""
        return Finding(
            key=key,
            severity=severity,
            title=self.title.format(**numbers),
            explanation=self.explanation.format(**numbers),
            windows=tuple(windows),
            evidence=tuple(evidence),
            recommendation=self.recommendation.format(**numbers),
            caveats=tuple(c.format(**numbers) for c in self.caveats),
            sources=self.sources,
            confidence=confidence,
            disproof=self.disproof.format(**numbers),
            related=related,
        )


def status_rows(tl: Timeline, variable: str) -> pd.DataFrame:
    """One ``mysqladmin`` status variable (``ts``, ``value``, ``per_s``, ``line_no``, ``member``),
    sorted by time; empty when the bundle does not have it."""
    ma = tl.frame("mysqladmin")
    if not len(ma) or "variable" not in ma:
        return pd.DataFrame(columns=["ts", "value", "per_s", "line_no", "member"])
    rows = ma[(ma["variable"] == variable).to_numpy(dtype=bool, na_value=False)]
    return rows.sort_values("ts", kind="stable").reset_index(drop=True)


def field_rows(tl: Timeline, frame: str, fields: tuple[str, ...]) -> pd.DataFrame:
    """Rows of a long counter frame (``netstat_s``, ``procvmstat``) whose ``field`` is in ``fields``."""
    f = tl.frame(frame)
    if not len(f) or "field" not in f:
        return pd.DataFrame(columns=["ts", "field", "value", "per_s", "line_no", "member"])
    return f[f["field"].isin(fields).to_numpy(dtype=bool)].sort_values("ts", kind="stable")


def growth(rows: pd.DataFrame) -> float:
    """How much a counter grew over the capture, run by run (member): the sum of its non-negative
    per-sample steps (a reset between runs is not growth)."""
    if not len(rows):
        return 0.0
    total = 0.0
    for _, run in rows.groupby("member", observed=True, sort=False) if "member" in rows else [(None, rows)]:
        steps = run.sort_values("ts")["value"].diff()
        total += float(steps[steps > 0].sum())
    return total


def span(rows: pd.DataFrame) -> list[Window]:
    """One window from the first to the last row's time (empty without rows)."""
    if not len(rows):
        return []
    return [Window(rows["ts"].min(), rows["ts"].max())]


def cite(
    tl: Timeline, label: str, value: float | int | str, unit: str, series: str, rows: pd.DataFrame
) -> Evidence:
    """Evidence pointing at the member and raw lines of ``rows``."""
    member, lines = tl.lines_of(rows) if len(rows) else (None, None)
    return Evidence(label, value, unit, series, member, lines)


def variable_number(tl: Timeline, name: str) -> float | None:
    """A numeric server variable from the bundle's -variables, or None."""
    raw = tl.variables.get(name)
    try:
        return float(raw) if raw not in (None, "") else None
    except ValueError:
        return None
