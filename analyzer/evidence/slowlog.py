"""A slow log's classes inside an incident's time windows: what each statement took there.

The slow query log (``parsers.slowlog``) gives each class (a fingerprint of
``analyzer.statements.fingerprint``) minute by minute in ``slowlog_class_minutes``: entries, the sum
of ``Query_time`` (seconds), ``Rows_examined`` and ``Rows_sent``; its whole-log row in
``slowlog_classes`` adds the extras some servers write (``Full_scan``, ``Filesort``,
``Tmp_disk_tables``; MariaDB's ``Tmp_table_on_disk``). A window's figures of a class are the sums over
the minutes that overlap the windows (whole minutes: a minute counts when it starts before a window
ends and ends after it starts), and its **share** is its ``Query_time`` over that of every class in
the same minutes. The extras stay the whole log's (the log does not keep them per minute).

``window_classes(tl, windows)`` gives every class so, most time first; ``class_in_window`` one
fingerprint's figures; ``with_slow_log(finding, tl)`` adds a statement culprit's figures to its
evidence (what ``analyzer.engine`` does to every finding that blames a statement).

Source: MySQL 8.4 Reference Manual, "The Slow Query Log"
(https://dev.mysql.com/doc/refman/8.4/en/slow-query-log.html); MariaDB Knowledge Base, "Slow Query
Log Extended Statistics" (https://mariadb.com/kb/en/slow-query-log-extended-statistics/).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyzer.findings import Evidence, Finding, Window
from analyzer.statements.querydigest import checksum
from analyzer.timeline.timeline import Timeline

_MINUTE = pd.Timedelta(minutes=1)
#: The frames a window's figures read.
FRAMES = ("slowlog_classes", "slowlog_class_minutes")


@dataclass(frozen=True, slots=True)
class ClassInWindow:
    """One class of a slow log inside windows. Times in seconds; ``share`` 0..1 of the slow log's
    ``Query_time`` in the same minutes; ``full_scans``, ``filesorts`` (entries saying Yes),
    ``tmp_disk_tables`` (Percona Server and MySQL 8 sums, else MariaDB's entries with
    ``Tmp_table_on_disk: Yes``): the whole log's, None when the log lacks the field. ``member`` and
    ``lines``: the slow log and the lines of the class's longest entry; ``start``/``end``: the first
    minute counted and the end of the last."""

    fingerprint: str
    checksum: str
    count: int
    query_time_s: float
    share: float
    total_query_time_s: float
    rows_examined: int
    rows_sent: int
    full_scans: float | None
    filesorts: float | None
    tmp_disk_tables: float | None
    member: str | None
    lines: tuple[int, int] | None
    start: pd.Timestamp
    end: pd.Timestamp

    @property
    def examined_per_sent(self) -> float | None:
        """Rows_examined per row sent (None when no row was sent)."""
        return self.rows_examined / self.rows_sent if self.rows_sent else None


def _minutes_in(minutes: pd.Series, windows: list[Window]) -> np.ndarray:
    ts = pd.DatetimeIndex(minutes)
    mask = np.zeros(len(ts), dtype=bool)
    for w in windows:
        mask |= (ts <= pd.Timestamp(w.end)) & (ts + _MINUTE > pd.Timestamp(w.start))
    return mask


def _extra(row: pd.Series, *names: str) -> float | None:
    for name in names:
        if name in row and not pd.isna(row[name]):
            return float(row[name])
    return None


def window_classes(tl: Timeline, windows: list[Window]) -> list[ClassInWindow]:
    """Every class with entries in the minutes of ``windows`` (all the log's minutes when
    ``windows`` is empty), most ``Query_time`` first; empty without a slow log."""
    classes, minutes = tl.frame("slowlog_classes"), tl.frame("slowlog_class_minutes")
    if not len(classes) or not len(minutes) or "class_no" not in minutes:
        return []
    rows = minutes[_minutes_in(minutes["ts"], windows)] if windows else minutes
    if not len(rows):
        return []
    member = rows["member"].astype(str) if "member" in rows else pd.Series("", index=rows.index)
    sums = (
        rows.assign(log=member)
        .groupby(["log", "class_no"], sort=False)
        .agg(
            count=("queries", "sum"),
            query_time_s=("query_time_s", "sum"),
            rows_examined=("rows_examined", "sum"),
            rows_sent=("rows_sent", "sum"),
            start=("ts", "min"),
            end=("ts", "max"),
        )
        .reset_index()
        .sort_values(["query_time_s", "count"], ascending=False, kind="stable")
    )
    total = float(sums["query_time_s"].sum())
    by_log = {
        str(log): part.reset_index(drop=True)
        for log, part in (
            classes.groupby(classes["member"].astype(str), sort=False)
            if "member" in classes
            else [("", classes)]
        )
    }
    out = []
    for s in sums.to_dict("records"):
        part = by_log.get(str(s["log"]))
        if part is None or not 0 <= int(s["class_no"]) < len(part):
            continue
        c = part.iloc[int(s["class_no"])]
        fp = str(c["fingerprint"])
        out.append(
            ClassInWindow(
                fingerprint=fp,
                checksum=checksum(fp),
                count=int(s["count"]),
                query_time_s=float(s["query_time_s"]),
                share=float(s["query_time_s"]) / total if total > 0 else 0.0,
                total_query_time_s=total,
                rows_examined=int(s["rows_examined"]),
                rows_sent=int(s["rows_sent"]),
                full_scans=_extra(c, "full_scans"),
                filesorts=_extra(c, "filesorts"),
                tmp_disk_tables=_extra(c, "tmp_disk_tables", "tmp_tables_on_disk"),
                member=str(s["log"]) or None,
                lines=(int(c["line_no"]), int(c["line_end"])),
                start=pd.Timestamp(s["start"]),
                end=pd.Timestamp(s["end"]) + _MINUTE,
            )
        )
    return out


def class_in_window(tl: Timeline, fingerprint: str, windows: list[Window]) -> ClassInWindow | None:
    """The figures of the class ``fingerprint`` in ``windows`` (see ``window_classes``); None when the
    slow log has no entry of it there (or there is no slow log)."""
    return next((c for c in window_classes(tl, windows) if c.fingerprint == fingerprint), None)


def figures_evidence(c: ClassInWindow) -> tuple[Evidence, ...]:
    """The class's figures as evidence lines (series ``slowlog_class_minutes.*`` and
    ``slowlog_classes.*``, the slow log member and its longest entry's lines)."""
    m, lines = c.member, c.lines
    out = [
        Evidence(
            "slow log class (pt-query-digest checksum)",
            c.checksum,
            "checksum",
            "slowlog_classes.fingerprint",
            m,
            lines,
        ),
        Evidence(
            "slow log entries in the window", c.count, "queries", "slowlog_class_minutes.queries", m, lines
        ),
        Evidence(
            "slow log Query_time in the window",
            round(c.query_time_s, 3),
            "s",
            "slowlog_class_minutes.query_time_s",
            m,
            lines,
        ),
        Evidence(
            "share of the window's slow log Query_time",
            round(100 * c.share, 1),
            "%",
            "slowlog_class_minutes.query_time_s",
            m,
            lines,
        ),
        Evidence(
            "Rows_examined in the window",
            c.rows_examined,
            "rows",
            "slowlog_class_minutes.rows_examined",
            m,
            lines,
        ),
        Evidence("Rows_sent in the window", c.rows_sent, "rows", "slowlog_class_minutes.rows_sent", m, lines),
    ]
    for label, value, series in (
        ("entries with Full_scan: Yes (whole log)", c.full_scans, "slowlog_classes.full_scans"),
        ("entries with Filesort: Yes (whole log)", c.filesorts, "slowlog_classes.filesorts"),
        ("temporary tables on disk (whole log)", c.tmp_disk_tables, "slowlog_classes.tmp_disk_tables"),
    ):
        if value is not None:
            out.append(
                Evidence(label, int(value), "entries" if "entries" in label else "tables", series, m, lines)
            )
    return tuple(out)


def with_slow_log(finding: Finding, tl: Timeline) -> Finding:
    """``finding`` with its statement culprit's slow log figures inside its windows added to the
    culprit's evidence (``figures_evidence``); unchanged when it blames no statement, has figures
    already, or the slow log has no entry of the statement in those windows."""
    c = finding.culprit
    if c is None or c.kind != "statement" or any(e.series.startswith("slowlog_") for e in c.evidence):
        return finding
    if "slowlog_class_minutes" not in tl.frames:
        return finding
    found = class_in_window(tl, c.id, list(finding.windows))
    if found is None:
        return finding
    return dataclasses.replace(
        finding, culprit=dataclasses.replace(c, evidence=c.evidence + figures_evidence(found))
    )
