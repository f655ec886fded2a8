"""``analyzer.engine.conclude``: the outcome the engine hands on (findings, links, verdict) holds no
password, whatever a rule quoted (parsers/passwords.py)."""

from __future__ import annotations

import pandas as pd

from analyzer import engine
from analyzer.findings import Culprit, Evidence, Finding, Severity, Window
from analyzer.reasoning.verdict import verdict_refs

T = pd.Timestamp("2026-04-21 16:51:41", tz="UTC")
STATEMENT = "ALTER USER 'app'@'%' IDENTIFIED BY 'Lock-S3cret'"


def _lock_waits() -> Finding:
    return Finding(
        key="lock-waits",
        severity=Severity.CRITICAL,
        title=f"20 sessions waited on a lock held by {STATEMENT}",
        explanation=f"Session 17 ran {STATEMENT} for 42 s while mysqldump -uroot -pDump-S3cret ran.",
        windows=(Window(T, T + pd.Timedelta(seconds=42)),),
        evidence=(
            Evidence(f"holder {STATEMENT}", 20, "sessions", "processlist.waiting", "processlist", (9, 9)),
        ),
        recommendation="Kill session 17.",
        culprit=Culprit(
            kind="session", id="17", user="root", host="10.0.0.5", statement=STATEMENT, blocks=20
        ),
    )


def test_no_finding_nor_verdict_of_the_outcome_holds_a_password() -> None:
    out = engine.conclude(engine.Outcome(findings=[_lock_waits()], versions={"lock-waits": 1}), {})
    found = out.findings[0]
    assert found.culprit.statement == "ALTER USER 'app'@'%' IDENTIFIED BY '***'"
    assert "-p***" in found.explanation and found.evidence[0].value == 20
    assert out.verdict.root_cause is found  # the verdict names the very finding, masked once
    text = repr(out) + repr(verdict_refs(out.verdict))
    assert "Lock-S3cret" not in text and "Dump-S3cret" not in text
    assert found.severity is Severity.CRITICAL and found.windows[0].start == T
