"""Rules over the slow query log's statements, read against what the host shows at the same time.

``slow-log-top-statement``: one class of the slow log (a fingerprint) takes most of the log's
``Query_time`` in the minutes of a window where the server is under pressure: sessions pile up
(``active-sessions-overload``, ``same-query-pileup``) or the host's CPU or disk is saturated
(``cpu-saturation``, ``disk-saturation``; those rules' own windows, computed by the same functions).
The finding blames the statement (a culprit of kind ``statement``, with its figures in the window:
``analyzer.evidence.slowlog``); analyzer/reasoning/joins/statements.py joins it to the pressure
findings through the sessions that run it. Its fix is read from what the log shows of the class:
``Rows_examined`` against ``Rows_sent``, ``Full_scan``, ``Filesort``, temporary tables on disk.

Sources: MySQL 8.4 Reference Manual, "The Slow Query Log"
(https://dev.mysql.com/doc/refman/8.4/en/slow-query-log.html), "Optimizing SELECT Statements"
(https://dev.mysql.com/doc/refman/8.4/en/select-optimization.html), "Internal Temporary Table Use in
MySQL" (https://dev.mysql.com/doc/refman/8.4/en/internal-temporary-tables.html); MariaDB Knowledge
Base, "Slow Query Log Extended Statistics" (https://mariadb.com/kb/en/slow-query-log-extended-statistics/).
"""

from __future__ import annotations

import dataclasses

from analyzer.detect import short_query
from analyzer.evidence.slowlog import FRAMES, ClassInWindow, figures_evidence, window_classes
from analyzer.findings import Culprit, Finding, Severity, Window
from analyzer.rules import cpu, io, sessions  # noqa: F401 - the pressure rules, registered first
from analyzer.rules.registry import registered, rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline

#: The rules whose windows are the pressure a statement is read against, and what each says.
PRESSURE = {
    "active-sessions-overload": "sessions piled up",
    "same-query-pileup": "sessions piled up on one statement",
    "cpu-saturation": "the CPUs were saturated",
    "disk-saturation": "a disk was saturated",
}
#: One class takes "most" of the slow log's time: more than half of its Query_time in those minutes.
TOP_SHARE = 0.5
#: ... over at least this many entries (one long statement is long-running-queries' matter).
MIN_ENTRIES = 10
#: Rows examined per row sent from which a statement reads far more than it returns (an index
#: would let it read the rows it sends): a hundred, as pt-query-digest's reports are read in practice.
EXAMINED_PER_SENT = 100.0


def _inputs() -> tuple[str, ...]:
    names: dict[str, None] = {}
    for key in PRESSURE:
        spec = registered()[key]
        names.update(dict.fromkeys([*spec.requires, *spec.optional, *(n for g in spec.any_of for n in g)]))
    return tuple(names)


SLOW_LOG_TOP_STATEMENT = RuleTexts(
    title="One statement took {share_text} % of the slow log's time while {pressure}: {short}",
    explanation=(
        "In the minutes of the window where {pressure} ({keys}), the slow query log holds {count:,} entries "
        "of {fp} (pt-query-digest checksum {checksum}): {query_time:,.1f} s of Query_time, {share:.0f} % of "
        "the {total:,.1f} s every statement logged there took. {rows}"
    ),
    recommendation="{fix}",
    caveats=(
        (
            "The slow log keeps each class minute by minute: the window's figures are whole minutes, and the "
            "Full_scan, Filesort and temporary-table counts are the whole log's."
        ),
        (
            "With long_query_time above 0 the log holds only the statements slower than it: the share is of "
            "the logged time, not of all the server's work."
        ),
    ),
    sources=(
        "MySQL 8.4 Reference Manual, The Slow Query Log",
        "MySQL 8.4 Reference Manual, Optimizing SELECT Statements",
        "MariaDB Knowledge Base, Slow Query Log Extended Statistics",
    ),
    disproof=(
        "If pt-query-digest over the same minutes ranks another class first, or the processlist of the "
        "window shows the sessions running other statements, this statement is not what loads the server."
    ),
    confidence="slow log and the pressure's own source",
)


def _percent(value: float) -> str:
    """A share for a title: whole percents, one decimal between 99 and 100 (99.8 is not all)."""
    return f"{value:.1f}" if 99 < value < 100 else f"{value:.0f}"


def _rows_sentence(c: ClassInWindow) -> str:
    ratio = c.examined_per_sent
    sent = f"{c.rows_sent:,} rows sent" if c.rows_sent else "no row sent"
    per = f" ({ratio:,.0f} examined per row sent)" if ratio is not None else ""
    return f"They examined {c.rows_examined:,} rows for {sent}{per}."


def _fix(c: ClassInWindow) -> str:
    """What to do, from what the log shows of the class."""
    ratio = c.examined_per_sent
    steps = []
    reads_much = c.rows_examined >= EXAMINED_PER_SENT * max(c.rows_sent, 1) and c.rows_examined >= c.count
    if reads_much:
        per = f"{ratio:,.0f} rows for each row it sends" if ratio is not None else "rows and sends none"
        steps.append(
            f"It examines {per} (Rows_examined {c.rows_examined:,} against Rows_sent {c.rows_sent:,} in the "
            "window): EXPLAIN the example in the slow log and add the index its WHERE or JOIN needs, so it "
            "reads only the rows it returns."
        )
    if c.full_scans:
        steps.append(
            f"{c.full_scans:,.0f} of its entries say Full_scan: Yes: it reads whole tables; a pattern that "
            "cannot use an index (LIKE '%...', a function on the column) needs rewriting or a full-text "
            "index."
        )
    if c.tmp_disk_tables:
        steps.append(
            f"It wrote {c.tmp_disk_tables:,.0f} temporary tables to disk: an index in its GROUP BY or "
            "ORDER BY "
            "order avoids the temporary table; else keep TEXT/BLOB columns out of it, or raise "
            "tmp_table_size "
            "and max_heap_table_size together."
        )
    if c.filesorts:
        steps.append(
            f"{c.filesorts:,.0f} of its entries sort (Filesort: Yes): an index in its ORDER BY order "
            "avoids the sort."
        )
    if not steps:
        steps.append(
            "The log shows no scan or temporary table: it is costly by its number of executions; cache its "
            "result, batch it, or cap its concurrency at the application's connection pool."
        )
    return "\n".join(steps)


def _merged(windows: list[Window]) -> list[Window]:
    """``windows`` in order, those that overlap made one."""
    out: list[Window] = []
    for w in sorted(windows, key=lambda w: w.start):
        if out and w.start <= out[-1].end:
            out[-1] = Window(out[-1].start, max(out[-1].end, w.end))
        else:
            out.append(w)
    return out


def _pressure(tl: Timeline) -> tuple[list[Window], list[str]]:
    """The windows of the pressure rules that fire on ``tl`` (their inputs present), merged, and
    their keys."""
    windows: list[Window] = []
    keys: list[str] = []
    for key in PRESSURE:
        spec = registered()[key]
        if any(name not in tl.inputs for name in spec.requires):
            continue
        found = spec.fn(tl)
        if found is not None and found.windows:
            windows += list(found.windows)
            keys.append(key)
    return _merged(windows), keys


@rule(key="slow-log-top-statement", requires=FRAMES, optional=_inputs())
def slow_log_top_statement(tl: Timeline) -> Finding | None:
    """One slow log class > TOP_SHARE of the Query_time (MIN_ENTRIES entries or more) in the minutes
    of the pressure rules' windows (sessions piling up, CPU or disk saturated).

    Input: ``slowlog_classes`` and ``slowlog_class_minutes`` (parsers/slowlog.py), and the pressure
    rules' inputs (processlist, vmstat, iostat ...). Source: the module docstring.
    """
    windows, keys = _pressure(tl)
    if not windows:
        return None
    classes = window_classes(tl, windows)
    if not classes or classes[0].share <= TOP_SHARE or classes[0].count < MIN_ENTRIES:
        return None
    top = classes[0]
    pressure = " and ".join(dict.fromkeys(PRESSURE[k] for k in keys))
    evidence = figures_evidence(top)
    found = SLOW_LOG_TOP_STATEMENT.finding(
        "slow-log-top-statement",
        Severity.WARNING,
        windows,
        evidence,
        share=100 * top.share,
        share_text=_percent(100 * top.share),
        pressure=pressure,
        short=short_query(top.fingerprint),
        keys=", ".join(keys),
        count=top.count,
        fp=top.fingerprint[:300],
        checksum=top.checksum,
        query_time=top.query_time_s,
        total=top.total_query_time_s,
        rows=_rows_sentence(top),
        fix=_fix(top),
    )
    culprit = Culprit(
        kind="statement", id=top.fingerprint[:500], statement=top.fingerprint[:500], evidence=evidence
    )
    return dataclasses.replace(found, culprit=culprit, subjects=(("statement", top.fingerprint[:500]),))
