"""Joins through the statement the slow query log blames (``slow-log-top-statement``,
analyzer/rules/statements.py): the sessions that pile up, the CPUs or disk the server's sessions
load, and the other findings that name the same statement.

- to a crowd (``active-sessions-overload``, ``same-query-pileup``, ``long-running-queries``): most of
  its active sessions run the statement (``sessions.statement_is_the_crowd``);
- to a saturated CPU or disk (``cpu-saturation`` without a culprit of its own, ``disk-saturation``):
  most active sessions of its windows run the statement, and for the CPUs top shows mysqld taking
  most of the busy CPU (when the bundle has top);
- to ``full-scans`` and ``tmp-table-churn``: the finding names the same statement (its fingerprint):
  the scans or temporary tables the counters measure are this statement's, which the log shows.

Sources: MySQL 8.4 Reference Manual, "The Slow Query Log" and "General Thread States"; top(1),
procps-ng 4.0.
"""

from __future__ import annotations

from analyzer.evidence.consumers import cpu_consumers
from analyzer.findings import Finding, Link
from analyzer.reasoning.joins.sessions import (
    MYSQLD_CPU_SHARE,
    _crowd_link,
    _statement,
    statement_is_the_crowd,
)
from analyzer.reasoning.links import JoinContext, joins, link, same_host, subject_ids

#: The finding these joins start from.
CAUSE = "slow-log-top-statement"

joins((CAUSE, "active-sessions-overload"), (CAUSE, "same-query-pileup"), (CAUSE, "long-running-queries"))(
    statement_is_the_crowd
)


def _class_words(cause: Finding) -> str:
    """``class <checksum> (<share> of the slow log's time)`` from the cause's evidence."""
    ev = {e.label: e.value for e in cause.evidence}
    checksum = ev.get("slow log class (pt-query-digest checksum)", "")
    share = ev.get("share of the window's slow log Query_time")
    return f"class {checksum}" + (f" ({share} % of the slow log's time)" if share is not None else "")


@joins((CAUSE, "cpu-saturation"), (CAUSE, "disk-saturation"))
def statement_loads_the_server(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Most active sessions of the effect's windows run the cause's statement; for the CPUs, top also
    shows mysqld taking at least MYSQLD_CPU_SHARE of the busy CPU (no link when the effect blames
    another process)."""
    tl = ctx.timeline(effect)
    fp = _statement(cause)
    if tl is None or fp is None or not same_host(cause, effect):
        return None
    if effect.key == "cpu-saturation":
        if effect.culprit is not None:
            return None
        used = cpu_consumers(tl, list(effect.windows))
        if used is not None and used.mysqld + used.others > 0:
            if used.mysqld / (used.mysqld + used.others) < MYSQLD_CPU_SHARE:
                return None

    def running(rows):
        return (rows["fingerprint"].astype("string") == fp).fillna(False).to_numpy(dtype=bool)

    what = f"sessions running the statement of the slow log's {_class_words(cause)}"
    return _crowd_link(cause, effect, ctx, running, what)


@joins((CAUSE, "full-scans"), (CAUSE, "tmp-table-churn"))
def same_statement(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The effect names the cause's statement (the same fingerprint)."""
    if not same_host(cause, effect):
        return None
    shared = subject_ids(cause, "statement") & subject_ids(effect, "statement")
    if not shared:
        return None
    what = "full scans" if effect.key == "full-scans" else "temporary tables"
    return link(
        cause,
        effect,
        "session",
        f"The statement the {what} are made by (the one the active sessions ran most) is the slow "
        f"log's {_class_words(cause)}.",
        cause.evidence[:4],
    )
