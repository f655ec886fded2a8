"""Replication rule: SHOW SLAVE/REPLICA STATUS (pt-stalk -slave-status). Source: MySQL 8.4
Reference Manual, SHOW REPLICA STATUS; FINDINGS.md."""

from __future__ import annotations

from analyzer.detect import cite, span
from analyzer.engine import rule
from analyzer.findings import Finding, Severity
from analyzer.texts import RuleTexts
from analyzer.timeline import Timeline
from analyzer.topology import LAG_CRITICAL_S, LAG_S

LAG_TEXTS = RuleTexts(
    title="Replica {problem}",
    explanation=(
        "SHOW SLAVE STATUS on this server (channel {channel!r}) showed Seconds_Behind_Master up to {lag} and the "
        "I/O / SQL threads {io} / {sql}. SQL thread state: {state}. {error}"
    ),
    recommendation=(
        "Find the SQL thread's bottleneck: single-threaded apply (replica_parallel_workers /\n"
        "slave_parallel_threads on MariaDB), long transactions on the source, a table without primary key\n"
        "(row-based events scan it), or the error to resolve (Last_SQL_Error) before START REPLICA."
    ),
    caveats=("Seconds_Behind_Master compares event timestamps: after a pause of the source it can jump.",),
    sources=("MySQL 8.4 Reference Manual, SHOW REPLICA STATUS", "FINDINGS.md"),
    disproof="If the lag falls steadily during the capture, the replica is catching up.",
    confidence="{confidence}",
)


@rule(key="replica-lag", requires=("replica_status",))
def replica_lag(tl: Timeline) -> Finding | None:
    """Seconds_Behind_Master >= LAG_S in two snapshots or more, or an I/O or SQL thread not running."""
    rs = tl.frame("replica_status")
    stopped = rs[
        (rs["io_running"].astype("string") == "No").fillna(False)
        | (rs["sql_running"].astype("string") == "No").fillna(False)
    ]
    lagging = rs[(rs["seconds_behind"] >= LAG_S).fillna(False)]
    if not len(stopped) and len(lagging) < 2:
        return None
    rows = stopped if len(stopped) else lagging
    last = rows.iloc[-1]
    lag = float(rs["seconds_behind"].max()) if rs["seconds_behind"].notna().any() else None
    problem = "replication stopped" if len(stopped) else f"{lag:.0f} s behind its source"
    error = str(last["last_sql_error"] or last["last_io_error"] or "")
    numbers = {"problem": problem, "channel": str(last["channel"]), "lag": f"{lag:.0f} s" if lag is not None else "NULL",
               "io": last["io_running"], "sql": last["sql_running"], "state": last["sql_state"],
               "error": f"Last error: {error[:300]}" if error else ""}  # fmt: skip
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
    bad = len(stopped) or (lag is not None and lag >= LAG_CRITICAL_S)
    return LAG_TEXTS.finding(
        "replica-lag",
        Severity.CRITICAL if bad else Severity.WARNING,
        span(rows),
        evidence,
        confidence="SHOW SLAVE STATUS",
        **numbers,
    )
