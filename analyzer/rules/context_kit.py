"""Helpers of the InnoDB, kernel-counter and status-counter rules (innodb, kernel, replication,
counters): counters read from the timeline, windows of snapshot samples, evidence citing raw lines.
Detection stays in the rule; its words are an ``analyzer.texts.RuleTexts`` beside it, the confidence
line given per finding (``confidence="{confidence}"``)."""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.findings import Culprit, Evidence, Finding, Window
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


def _bytes(value: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:,.1f} {unit}".replace(".0 ", " ")
    return f"{value:,.0f} bytes"


def ram_bytes(tl: Timeline) -> float | None:
    """The host's RAM from /proc/meminfo (``MemTotal``, the last sample), or None."""
    mem = tl.frame("meminfo")
    if not len(mem) or "field" not in mem:
        return None
    total = mem[(mem["field"] == "MemTotal").to_numpy(dtype=bool)]
    return float(total["kib"].iloc[-1]) * 1024 if len(total) else None


def with_setting(tl: Timeline, finding: Finding, name: str, why: str, *, size: bool = False) -> Finding:
    """``finding`` blaming the server variable ``name`` from ``-variables`` (culprit kind ``setting``,
    its value as ``statement``), with a sentence naming it and ``why`` (what that value does here,
    ``{value}`` filled) appended to its explanation; unchanged when the bundle lacks the variable or the
    finding already names a culprit. ``size``: the value is a byte count, shown in KiB/MiB/GiB too."""
    raw = tl.variables.get(name)
    if raw in (None, "") or finding.culprit is not None:
        return finding
    value = str(raw)
    number = variable_number(tl, name)
    shown = f"{value} ({_bytes(number)})" if size and number is not None else value
    evidence = Evidence(f"variable {name}", value, "", "variables")
    culprit = Culprit(kind="setting", id=name, statement=value, evidence=(evidence,))
    sentence = f" Setting: {name} = {shown}: {why.format(value=shown)}"
    return dataclasses.replace(
        finding,
        explanation=finding.explanation + sentence,
        evidence=finding.evidence + ((evidence,) if evidence not in finding.evidence else ()),
        culprit=culprit,
    )
