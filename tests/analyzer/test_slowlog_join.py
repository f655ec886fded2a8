"""The slow query log joined to the incident: a statement culprit carries its class's figures in the
incident's window, and ``slow-log-top-statement`` blames the class that takes most of the slow log's
time while sessions pile up or the CPUs are saturated (analyzer/evidence/slowlog.py,
analyzer/rules/statements.py, analyzer/reasoning/joins/statements.py).

The staged incident is tests/fixtures/bundles/slowlog-fullscan.tar.gz (scripts/make_slowlog_bundle.sh):
8 sessions repeat a full scan and sort of 200,000 rows while 2 run point selects, MariaDB's slow log
shipped beside the pt-stalk collection.
"""

from __future__ import annotations

import pandas as pd

from analyzer.evidence.slowlog import class_in_window, window_classes, with_slow_log
from analyzer.findings import Culprit, Finding, Severity, Window
from analyzer.timeline.timeline import Timeline
from tests.analyzer.test_bundle_verdicts import _bundle

SCAN = "select id, pad from items where pad like ? order by pad desc limit ?"


def _figures(culprit: Culprit) -> dict[str, object]:
    return {e.label: e.value for e in culprit.evidence}


def test_the_verdicts_culprit_statement_carries_its_class_with_its_share_of_the_time() -> None:
    v = _bundle("slowlog-fullscan").verdict
    root = v.root_cause
    assert root.key == "slow-log-top-statement"
    assert root.culprit.kind == "statement" and root.culprit.id == SCAN
    figures = _figures(root.culprit)
    assert figures["slow log class (pt-query-digest checksum)"] == "D44D8335A3124B05FAEE34E72DA78788"
    assert figures["share of the window's slow log Query_time"] >= 90
    assert figures["slow log entries in the window"] >= 10
    assert figures["Rows_sent in the window"] == 0 and figures["Rows_examined in the window"] >= 1_000_000
    assert "% of the slow log's time while sessions piled up" in root.title
    # the fix reads what the log shows: rows examined against sent, full scans, sorts
    assert "Rows_examined" in v.fix and "Full_scan: Yes" in v.fix and "Filesort: Yes" in v.fix
    # the crowd and the scans are the statement's, joined by the sessions that run it
    assert {f.key for f in v.explains} >= {"active-sessions-overload", "full-scans"}


def test_the_full_scans_statement_culprit_carries_the_same_figures() -> None:
    out = _bundle("slowlog-fullscan")
    scans = next(f for f in out.findings if f.key == "full-scans")
    figures = _figures(scans.culprit)
    assert scans.culprit.id == SCAN
    assert figures["share of the active sessions running it"] == 100.0
    assert figures["slow log class (pt-query-digest checksum)"] == "D44D8335A3124B05FAEE34E72DA78788"
    assert figures["share of the window's slow log Query_time"] >= 90
    ev = next(e for e in scans.culprit.evidence if e.label == "slow log entries in the window")
    assert ev.member.endswith("vm-slow.log") and ev.lines is not None


def _timeline() -> Timeline:
    """Two classes over two minutes: ``a`` 9 s then 1 s, ``b`` 1 s then 9 s."""
    t0 = pd.Timestamp("2026-12-07 04:00", tz="UTC")
    classes = pd.DataFrame(
        {
            "ts": [t0, t0],
            "fingerprint": ["select a", "select b"],
            "line_no": [10, 20],
            "line_end": [12, 22],
            "full_scans": [3.0, float("nan")],
            "filesorts": [0.0, float("nan")],
            "tmp_disk_tables": [float("nan")] * 2,
            "member": ["s.log", "s.log"],
        }
    )
    minutes = pd.DataFrame(
        {
            "ts": [t0, t0, t0 + pd.Timedelta(minutes=1), t0 + pd.Timedelta(minutes=1)],
            "class_no": [0, 1, 0, 1],
            "queries": [9, 1, 1, 9],
            "query_time_s": [9.0, 1.0, 1.0, 9.0],
            "rows_examined": [900, 1, 100, 9],
            "rows_sent": [9, 1, 1, 9],
            "member": ["s.log"] * 4,
        }
    )
    return Timeline(frames={"slowlog_classes": classes, "slowlog_class_minutes": minutes})


def test_a_windows_figures_are_the_sums_of_the_minutes_it_overlaps() -> None:
    tl = _timeline()
    t0 = pd.Timestamp("2026-12-07 04:00", tz="UTC")
    first = [Window(t0 + pd.Timedelta(seconds=10), t0 + pd.Timedelta(seconds=50))]
    top = window_classes(tl, first)[0]
    assert (top.fingerprint, top.count, top.query_time_s, round(top.share, 2)) == ("select a", 9, 9.0, 0.9)
    assert (top.rows_examined, top.rows_sent, top.full_scans, top.tmp_disk_tables) == (900, 9, 3.0, None)
    both = class_in_window(tl, "select b", [Window(t0, t0 + pd.Timedelta(seconds=70))])
    assert (both.count, both.query_time_s, both.share) == (10, 10.0, 0.5)
    assert class_in_window(tl, "select c", first) is None


def test_a_finding_without_a_statement_culprit_or_slow_log_is_left_as_it_is() -> None:
    t0 = pd.Timestamp("2026-12-07 04:00", tz="UTC")
    f = Finding(
        "x",
        Severity.WARNING,
        "t",
        "e",
        (Window(t0, t0),),
        (),
        "r",
        culprit=Culprit(kind="statement", id="select a"),
    )
    assert with_slow_log(f, Timeline()) is f
    other = Finding("x", Severity.WARNING, "t", "e", (Window(t0, t0),), (), "r")
    assert with_slow_log(other, _timeline()) is other
    added = with_slow_log(f, _timeline())
    assert _figures(added.culprit)["slow log entries in the window"] == 9
