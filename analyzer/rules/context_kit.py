"""Helpers of the InnoDB, kernel-counter and status-counter rules (innodb, kernel, replication,
counters): counters read from the timeline, windows of snapshot samples, evidence citing raw lines.
Detection stays in the rule; its words are an ``analyzer.texts.RuleTexts`` beside it, the confidence
line given per finding (``confidence="{confidence}"``)."""

from __future__ import annotations

import pandas as pd

from analyzer.findings import Evidence, Window
from analyzer.timeline import Timeline


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
