"""The mysqld error log (pt-stalk ``-log_error``, a ``*.err`` file): crashes, restarts, assertion
failures, ``[ERROR]`` lines, long semaphore waits, "Too many connections" and replication errors,
inside the capture or just before it, each placed on the timeline as a window of its own.

Source: MySQL 8.4 Reference Manual, "The Error Log"; MariaDB Knowledge Base, "Error Log".
"""

from __future__ import annotations

import pandas as pd

from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline

#: Events this long before the first sample of the other sources still explain the capture (a crash
#: an hour before a collection is usually why someone ran it).
JUST_BEFORE = pd.Timedelta(hours=1)
#: Kinds that make the finding critical: mysqld died or stopped itself.
CRITICAL_KINDS = frozenset({"crash", "assertion", "crash-recovery"})
#: Kinds that are problems (the others, start/ready/shutdown, are the restarts they cause).
PROBLEM_KINDS = (
    "crash",
    "assertion",
    "crash-recovery",
    "semaphore",
    "too-many-connections",
    "replication",
    "error",
)
#: Events placed on the timeline (as windows of the finding) at most.
MAX_WINDOWS = 20
#: What each kind is called in the texts.
KIND_WORDS = {
    "crash": "crash",
    "assertion": "assertion failure",
    "crash-recovery": "restart after an unclean stop (crash recovery)",
    "semaphore": "InnoDB long semaphore wait",
    "too-many-connections": "Too many connections",
    "replication": "replication error",
    "error": "[ERROR] line",
    "ready": "ready for connections",
}

TEXTS = RuleTexts(
    title="mysqld error log: {headline}",
    explanation=("The error log has {summary} {where}. {first_sentence}{restarts}"),
    recommendation=(
        "Read the error log around these times. A crash: its signal and stack trace, the statements running\n"
        "just before (the processlist); report it with the server version. Crash recovery after a kill -9 "
        "or\n"
        "an OOM kill: dmesg (Out of memory: Killed process ... mysqld). Semaphore waits: see\n"
        "innodb-semaphore-waits. Too many connections: see connection-saturation."
    ),
    caveats=(
        "pt-stalk copies the error log with tail -f: only its last 10 lines before the capture are seen.",
        (
            "MariaDB and MySQL 5.6 write the server's wall-clock time; it is placed on UTC with the bundle's "
            "offset."
        ),
    ),
    sources=("MySQL 8.4 Reference Manual, The Error Log", "MariaDB Knowledge Base, Error Log"),
    disproof="If the errors come from a test or a planned restart, they are not the incident.",
    confidence="{events} event(s) read from {member}",
)


@rule(key="mysqld-errors", requires=("mysqld_errors",))
def mysqld_errors(tl: Timeline) -> Finding | None:
    """Problem events (PROBLEM_KINDS) in the capture or up to JUST_BEFORE before it."""
    ev = tl.frame("mysqld_errors").sort_values("ts", kind="stable")
    window = tl.capture_window(exclude=("mysqld_errors",))
    if window is not None:
        ev = ev[(ev["ts"] >= window[0] - JUST_BEFORE) & (ev["ts"] <= window[1] + pd.Timedelta(seconds=60))]
    problems = ev[ev["kind"].isin(PROBLEM_KINDS)]
    if not len(problems):
        return None
    counts = problems["kind"].value_counts()
    ordered = [k for k in PROBLEM_KINDS if k in counts]
    severity = Severity.CRITICAL if CRITICAL_KINDS.intersection(ordered) else Severity.WARNING
    first = problems[problems["kind"] == ordered[0]].iloc[0]
    signal = f" (signal {int(first['signal'])})" if pd.notna(first["signal"]) else ""
    ready = ev[ev["kind"] == "ready"]
    after = ready[ready["ts"] >= first["ts"]]
    restarts = (
        " mysqld was ready for connections again "
        f"{(after['ts'].iloc[0] - first['ts']).total_seconds():.0f} s later; "
        f"{len(after)} restart(s) followed."
        if len(after)
        else " No 'ready for connections' follows it in the log."
    )
    member = str(first["member"]) if "member" in ev else "the error log"
    evidence = [
        Evidence(
            f"{KIND_WORDS[k]} (count)",
            int(counts[k]),
            "",
            "mysqld_errors.kind",
            member,
            _lines(problems[problems["kind"] == k]),
        )
        for k in ordered
    ]
    evidence.append(
        Evidence(
            f"first {KIND_WORDS[ordered[0]]}",
            str(first["message"])[:200],
            "",
            "mysqld_errors.message",
            member,
            (int(first["line_no"]), int(first["line_end"])),
        )
    )
    shown = ev[ev["kind"].isin((*PROBLEM_KINDS, "ready"))].head(MAX_WINDOWS)
    windows = [Window(t, t) for t in shown["ts"]]
    when = pd.Timestamp(first["ts"]).strftime("%H:%M:%S")
    return TEXTS.finding(
        "mysqld-errors",
        severity,
        windows,
        evidence,
        headline=f"{KIND_WORDS[ordered[0]]}{signal} at {when} UTC"
        + (f", {len(after)} restart(s)" if len(after) and ordered[0] in CRITICAL_KINDS else ""),
        summary=", ".join(f"{int(counts[k])} {KIND_WORDS[k]}" for k in ordered),
        where="in or just before the capture" if window is not None else "",
        first_sentence=(
            f"The first, at {when} UTC (line {int(first['line_no'])}): {str(first['message'])[:160]}."
        ),
        restarts=restarts,
        events=len(problems),
        member=member,
    )


def _lines(rows: pd.DataFrame) -> tuple[int, int]:
    return int(rows["line_no"].min()), int(rows["line_end"].max())
