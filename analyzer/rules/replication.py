"""Replication rule: SHOW SLAVE/REPLICA STATUS (pt-stalk -slave-status) of a replica, with the cause
of its lag read from its own capture (``analyzer.cluster.replica_causes``: the SQL thread's State, its lock
waits, Handler_read_rnd_next, the positions over time, SQL_Delay). Sources: MySQL 8.4 Reference
Manual, SHOW REPLICA STATUS; MariaDB Knowledge Base, Replication Thread States."""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.cluster.replica_causes import lag_cause, stopped_fix
from analyzer.cluster.topology import LAG_CRITICAL_S, LAG_S, lag_growth
from analyzer.detect import cite, span
from analyzer.findings import Finding, Severity
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline

LAG_TEXTS = RuleTexts(
    title="Replica {problem}",
    explanation=(
        "SHOW SLAVE STATUS on this server (channel {channel!r}) showed Seconds_Behind_Master up to {lag} "
        "and the "
        "I/O / SQL threads {io} / {sql}. SQL thread state: {state}. {error}{cause}"
    ),
    recommendation="{fix}",
    caveats=("Seconds_Behind_Master compares event timestamps: after a pause of the source it can jump.",),
    sources=(
        "MySQL 8.4 Reference Manual, SHOW REPLICA STATUS",
        "MariaDB Knowledge Base, Replication Thread States",
    ),
    disproof="If the lag falls steadily during the capture, the replica is catching up.",
    confidence="{confidence}",
)


@rule(
    key="replica-lag",
    requires=("replica_status",),
    optional=("processlist", "innodb_trx", "lock_waits", "mysqladmin", "variables", "iostat"),
)
def replica_lag(tl: Timeline) -> Finding | None:
    """Seconds_Behind_Master >= LAG_S in two snapshots or more, or growing (``lag_growth``: 0.3 s per
    second of capture, 10 s reached), or an I/O or SQL thread not running.
    A lagging replica's title, fix and culprit are those of its cause (``lag_cause``); a stopped one's
    title carries the thread, Last_SQL_Errno (or Last_IO_Errno) and the error text."""
    rs = tl.frame("replica_status")
    stopped = rs[
        (rs["io_running"].astype("string") == "No").fillna(False)
        | (rs["sql_running"].astype("string") == "No").fillna(False)
    ]
    lagging = rs[(rs["seconds_behind"] >= LAG_S).fillna(False)]
    _, growing = lag_growth(rs)
    if not len(stopped) and len(lagging) < 2 and not growing:
        return None
    if growing and len(lagging) < 2:  # falling behind, under LAG_S yet: every snapshot tells it
        lagging = rs.dropna(subset=["seconds_behind"])
    rows = stopped if len(stopped) else lagging
    last = rows.iloc[-1]
    lag = float(rs["seconds_behind"].max()) if rs["seconds_behind"].notna().any() else None
    error = str(last["last_sql_error"] or last["last_io_error"] or "")
    cause = None if len(stopped) else lag_cause(tl, rs)
    if cause is not None:
        problem, fix = f"{lag:.0f} s behind its source: {cause.title}", cause.fix
    else:
        problem, fix = _stopped(last, error), stopped_fix(last, "this replica")
    numbers = {
        "problem": problem,
        "channel": str(last["channel"]),
        "lag": f"{lag:.0f} s" if lag is not None else "NULL",
        "io": last["io_running"],
        "sql": last["sql_running"],
        "state": last["sql_state"],
        "error": f"Last error: {error[:300]}" if error else "",
        "fix": fix,
        "cause": f" {cause.explanation}" if cause is not None else "",
    }
    evidence = _lag_evidence(tl, rs, rows, lagging, last, lag, error)
    bad = len(stopped) or (lag is not None and lag >= LAG_CRITICAL_S)
    severity = Severity.CRITICAL if bad else Severity.WARNING
    if cause is not None and cause.intentional:
        severity = Severity.INFO
    finding = LAG_TEXTS.finding(
        "replica-lag",
        severity,
        span(rows),
        [*(cause.evidence if cause else ()), *evidence],
        confidence="SHOW SLAVE STATUS",
        **numbers,
    )
    if cause is None:
        return finding
    return dataclasses.replace(finding, culprit=cause.culprit, subjects=cause.subjects)


def _lag_evidence(
    tl: Timeline,
    rs: pd.DataFrame,
    rows: pd.DataFrame,
    lagging: pd.DataFrame,
    last: pd.Series,
    lag: float | None,
    error: str,
) -> list:
    """replica-lag's own evidence: the maximum lag, the threads' state, the lag's change per second
    (two lagging snapshots or more) and the last error."""
    evidence = [
        cite(
            tl,
            "Seconds_Behind_Master (max)",
            lag if lag is not None else "NULL",
            "s",
            "replica_status.seconds_behind",
            rs,
        ),
        cite(
            tl,
            "Slave_IO_Running / Slave_SQL_Running",
            f"{last['io_running']} / {last['sql_running']}",
            "",
            "replica_status.io_running",
            rows,
        ),
    ]
    if len(lagging) >= 2:
        first, end = lagging.iloc[0], lagging.iloc[-1]
        dt = (end["ts"] - first["ts"]).total_seconds() or 1.0
        evidence.append(
            cite(
                tl,
                "lag change per second",
                round((end["seconds_behind"] - first["seconds_behind"]) / dt, 2),
                "s/s",
                "replica_status.seconds_behind",
                lagging,
            )
        )
    if error:
        evidence.append(cite(tl, "last error", error[:300], "", "replica_status.last_sql_error", rows))
    return evidence


def _stopped(last: pd.Series, error: str) -> str:
    """The title's problem of a stopped replica: which thread, the error number and its text."""
    sql_no = str(last.get("sql_running")) == "No"
    errno = last.get("last_sql_errno" if sql_no else "last_io_errno")
    on = f" on error {errno:.0f}" if errno is not None and pd.notna(errno) and errno else ""
    text = (
        f": {error[:200]}"
        if error
        else ("" if sql_no else ": no error (stopped by hand or by a tool: STOP SLAVE)")
    )
    return f"{'SQL' if sql_no else 'I/O'} thread stopped{on}{text}"
