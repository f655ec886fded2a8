"""MySQL rules over temporary tables and the table cache, from the processlist and the counters.

What the field reads in ``SHOW FULL PROCESSLIST`` and ``mysqladmin ext`` (docs/background.md, "Linux load
counts threads in D state"):

- **tmp-table-churn**: sessions in ``removing tmp table`` / ``Creating tmp table`` /
  ``converting HEAP to ...``, or ``Created_tmp_disk_tables`` per second far above what the collector
  causes: every execution creates and deletes a temporary table file in ``tmpdir``. MariaDB reports
  most of it as ``Sending data``, so the counters matter. Strongest when ps shows ``mysqld`` threads
  in D state in file creation/deletion wait channels at the same moment.
- **table-cache-contention** (what followed the tmpdir fix in that incident): many sessions in ``Opening
  tables`` / ``closing tables``: the table cache is too small for the concurrency.

Session-count rules (overload, long queries, lock waits, pile-ups) are in analyzer/rules/sessions.py.

Sessions are counted as docs/background.md says ("Counting sessions and threads right";
analyzer/rules/sessions.py).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.detect import (
    cite,
    count_per_snapshot,
    d_threads_bar,
    held_seconds,
    merge_windows,
    over_quiet,
    per_host,
    short_query,
    snapshots,
    state_in,
    statement_culprit,
    status,
    status_evidence,
    step_seconds,
    sustained_or_extreme,
    top_values,
    variable,
    variables_evidence,
    within_slack,
)
from analyzer.evidence import threads
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.pairing import join_tolerance
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import within

# tmp-table-churn ---------------------------------------------------------------------------------
#: States of a session building, converting or dropping an internal temporary table (MySQL 5.x-8.0
#: "General Thread States"; MariaDB KB "General Thread States": ``Converting HEAP to Aria``).
#: ``Copy to tmp table`` is ALTER TABLE copying rows, not an internal temporary table: left out.
TMP_STATES = frozenset(
    {
        "removing tmp table",
        "creating tmp table",
        "copying to tmp table",
        "copying to tmp table on disk",
        "converting heap to ondisk",
        "converting heap to myisam",
        "converting heap to aria",
    }
)
TMP_STATE_MIN_SESSIONS = 5  # a handful of GROUP BYs building temporary tables at once is any busy server
TMP_STATE_SESSIONS_PER_CPU = 0.25  # ...and a quarter per core on a large one (64 CPUs: 16)
TMP_STATE_MIN_SHARE = 0.20  # >= 20 % of the active sessions in temporary-table states (docs/background.md)
TMP_STATE_MANY_SESSIONS = (
    50  # or >= 50 sessions whatever their share (docs/background.md: ~220 in the tmp-table incident)
)
#: On-disk temporary tables per second. The collector's own statements make a few temporary tables
#: per second (measured here: idle MariaDB 10.11 under SHOW FULL PROCESSLIST + mysqladmin ext every
#: second, 1-3 Created_tmp_tables/s and 0 on disk; pt-stalk's information_schema queries add a few
#: per collection). 20/s is well above that and still far below the thousands of the tmp-table incident
#: (docs/background.md).
TMP_DISK_PER_S_MIN = 20.0
#: Share of all internal temporary tables that went to disk: above a quarter is the classic alarm
#: (MySQLTuner "Temporary tables created on disk" > 25 %); the tmp-table incident's were all on disk.
TMP_DISK_MIN_SHARE = 0.25

# table-cache-contention ------------------------------------------------------------------------
TABLE_CACHE_STATES = frozenset({"opening tables", "opening table", "closing tables"})
TABLE_CACHE_MIN_SESSIONS = 10  # a few sessions opening tables is normal after a restart or DDL
TABLE_CACHE_SESSIONS_PER_CPU = 0.5  # ...and on a large host, half a session per core
TABLE_CACHE_MIN_SHARE = 0.10  # the tmp-table incident after the tmpdir fix: 69 + 45 of ~800 active (14 %)


# -------------------------------------------------------------------------------------------------
# tmp-table-churn
# -------------------------------------------------------------------------------------------------

TMP_TABLE_CHURN = RuleTexts(
    title="{title}",
    explanation=(
        "{setting_text}For {held:.0f} s {what}. Each on-disk temporary table is a file created in {tmpdir} "
        "and deleted "
        "when the query ends: with many sessions doing it at once, the file system serialises them on the "
        "directory's lock and the threads wait in uninterruptible sleep (D), which raises the load average "
        "without using CPU.{ps_confirms}"
    ),
    recommendation=(
        'Put tmpdir on a RAM-backed file system (MySQL manual, "Where MySQL Stores Temporary Files": '
        "tmpdir may be a tmpfs):\n"
        "  mkdir -p /srv/mysqldata/tmpram && chown mysql:mysql /srv/mysqldata/tmpram\n"
        "  mount -t tmpfs -o size=3072M tmpfs /srv/mysqldata/tmpram\n"
        "  echo 'tmpfs /srv/mysqldata/tmpram tmpfs size=3072M 0 0' >> /etc/fstab\n"
        "  # my.cnf, [mysqld]: tmpdir = /srv/mysqldata/tmpram   (tmpdir is not dynamic: restart mysqld)\n"
        "  df -hTP /srv/mysqldata/tmpram; mysql -e \"SHOW GLOBAL VARIABLES LIKE 'tmpdir'\"\n"
        "Then review the query: EXPLAIN shows 'Using temporary'; TEXT/BLOB columns in GROUP BY, ORDER BY or\n"
        "DISTINCT force the temporary table to disk whatever tmp_table_size says: select fewer columns, "
        "cast or\n"
        "drop the TEXT column, add an index that serves the GROUP BY, or cache the result at the application."
    ),
    caveats=(
        (
            "Raising tmp_table_size/max_heap_table_size does not help when the temporary tables go to disk "
            "regardless (TEXT/BLOB columns: raising them from 32M to 64M has been seen to change nothing)."
        ),
        (
            "MariaDB reports most of such a query as 'Sending data' (the spill shows briefly as 'Converting "
            "HEAP to Aria'): the status counters, not the states, carry the evidence there."
        ),
        (
            "Size the tmpfs for the largest temporary table (it uses RAM) and allow the path in "
            "AppArmor/SELinux."
        ),
        (
            "MySQL 8.0.16+ puts on-disk internal temporary tables in InnoDB session temporary tablespaces "
            "(innodb_temp_tablespaces_dir), not as files in tmpdir: move that directory instead."
        ),
        (
            "The collector's own queries create a few temporary tables per second; rates below "
            "{disk_min:g}/s are not counted."
        ),
    ),
    sources=(
        'Brendan Gregg, "Linux Load Averages: Solving the Mystery" (2017)',
        "MySQL manual, Internal Temporary Table Use",
        "MariaDB KB, General Thread States",
    ),
    disproof=(
        "List {tmpdir} twice a second apart (`ls -la {tmpdir} | grep '#sql'`): if no #sql files appear and "
        "vanish, and SHOW GLOBAL STATUS LIKE 'Created_tmp_disk_tables' does not grow, the temporary tables "
        "are "
        "not on disk and this is not the cause."
    ),
)


@dataclasses.dataclass(slots=True)
class _TmpTables:
    """Where temporary tables churn: by processlist states, by status counters, or both."""

    state_windows: list[Window]
    counter_windows: list[Window]
    tmp_n: pd.Series  # sessions in temporary-table states per snapshot
    tmp_share: pd.Series  # their share of the active sessions
    rates: pd.DataFrame  # ts, disk_per_s, all_per_s, share, line_no, member

    @property
    def windows(self) -> list[Window]:
        return merge_windows(self.state_windows + self.counter_windows)


def _tmp_rates(tl: Timeline) -> pd.DataFrame:
    """Created_tmp_disk_tables and Created_tmp_tables per second, and the on-disk share."""
    disk = status(tl, "Created_tmp_disk_tables").dropna(subset=["per_s"])
    if not len(disk):
        return pd.DataFrame()
    every = status(tl, "Created_tmp_tables").dropna(subset=["per_s"])
    rates = disk[["ts", "per_s", "line_no", "member"]].rename(columns={"per_s": "disk_per_s"})
    rates = rates.merge(every[["ts", "per_s"]].rename(columns={"per_s": "all_per_s"}), on="ts", how="left")
    return rates.assign(share=rates["disk_per_s"] / rates["all_per_s"].where(rates["all_per_s"] > 0))


def _tmp_tables(tl: Timeline) -> _TmpTables:
    """Sessions in TMP_STATES (>= max(5, ncpu / 4) and >= 20 % of active, or >= 50), and on-disk
    temporary tables >= 20/s and >= 25 % of all, each over the quiet level and held 5 s."""
    pl = tl.frame("processlist")
    snaps = snapshots(pl)
    active_n = count_per_snapshot(pl, pl["active"])
    tmp_n = count_per_snapshot(pl, pl["active"].astype(bool) & state_in(pl, TMP_STATES))
    tmp_share = tmp_n / active_n.where(active_n > 0)
    many = (tmp_share >= TMP_STATE_MIN_SHARE) | (tmp_n >= TMP_STATE_MANY_SESSIONS)
    bar = per_host(TMP_STATE_MIN_SESSIONS, tl.ncpu, TMP_STATE_SESSIONS_PER_CPU)
    state_windows, _ = sustained_or_extreme(snaps, over_quiet(tmp_n, bar) & many)
    rates = _tmp_rates(tl)
    counter_windows: list[Window] = []
    if len(rates):
        hit = over_quiet(rates["disk_per_s"], TMP_DISK_PER_S_MIN) & (rates["share"] >= TMP_DISK_MIN_SHARE)
        counter_windows, _ = sustained_or_extreme(rates["ts"], hit)
    return _TmpTables(state_windows, counter_windows, tmp_n, tmp_share, rates)


def _tmp_state_evidence(
    tl: Timeline, t: _TmpTables, tmp_rows: pd.DataFrame, snap_in: pd.Series
) -> list[Evidence]:
    """Sessions in temporary-table states: the peak, its share, the top states."""
    if not len(tmp_rows):
        return []
    member, lines = tl.lines_of(tmp_rows)
    peak = int(t.tmp_n[snap_in].max()) if snap_in.any() else 0
    return [
        Evidence(
            "sessions in temporary-table states (max)", peak, "sessions", "processlist.state", member, lines
        ),
        Evidence(
            "their share of active sessions (max)",
            round(float(t.tmp_share[snap_in].max()) * 100, 1),
            "%",
            "processlist.active",
        ),
    ] + [
        Evidence(f"State '{state}'", n, "session-snapshots", "processlist.state", member, lines)
        for state, n in top_values(tmp_rows["state"])
    ]


def _tmp_counter_evidence(tl: Timeline, churn: pd.DataFrame) -> list[Evidence]:
    """On-disk temporary tables per second (median, max) and their share of all temporary tables."""
    if not len(churn):
        return []
    series = "mysqladmin.Created_tmp_disk_tables"
    out = [
        cite(
            tl,
            "Created_tmp_disk_tables per second (median)",
            round(float(churn["disk_per_s"].median()), 1),
            "/s",
            series,
            churn,
        ),
        cite(
            tl,
            "Created_tmp_disk_tables per second (max)",
            round(float(churn["disk_per_s"].max()), 1),
            "/s",
            series,
            churn,
        ),
    ]
    if churn["share"].notna().any():
        share = round(float(churn["share"].median()) * 100, 1)
        out.append(
            Evidence(
                "on-disk share of Created_tmp_tables (median)", share, "%", "mysqladmin.Created_tmp_tables"
            )
        )
    return out


def _tmp_query_evidence(tl: Timeline, in_pl: pd.DataFrame, tmp_rows: pd.DataFrame) -> list[Evidence]:
    """The query behind it: the sessions in temporary-table states, else (MariaDB reports the whole
    query as `Sending data`) the most common query among the active sessions of the window."""
    active_in = in_pl[in_pl["active"].astype(bool) & in_pl["fingerprint"].notna()]
    source_rows = tmp_rows[tmp_rows["fingerprint"].notna()] if len(tmp_rows) else active_in
    if not len(source_rows):
        source_rows = active_in
    if not len(source_rows):
        return []
    fp, n = top_values(source_rows["fingerprint"], 1)[0]
    member, lines = tl.lines_of(source_rows[source_rows["fingerprint"] == fp])
    label = "query building them" if len(tmp_rows) else "most common query among active sessions"
    return [
        Evidence(label, fp[:500], "", "processlist.fingerprint", member, lines),
        Evidence(f"{label}: session-snapshots", n, "session-snapshots", "processlist.fingerprint"),
    ]


def _tmp_setting_text(tl: Timeline) -> str:
    """The settings that send an internal temporary table to disk, from -variables (or '')."""
    sizes = {n: variable(tl, n) for n in ("tmp_table_size", "max_heap_table_size")}
    if not all(sizes.values()):
        return ""
    return (
        f"Settings: tmp_table_size = {sizes['tmp_table_size']}, max_heap_table_size = "
        f"{sizes['max_heap_table_size']}: an in-memory temporary table larger than the smaller of the "
        "two "
        "(or one with a BLOB/TEXT column on older servers) goes to disk. "
    )


def _file_wait_evidence(tl: Timeline, windows: list[Window], tol: pd.Timedelta) -> tuple[list[Evidence], int]:
    """Server threads in D state in file creation/deletion wait channels at the same moments (ps),
    and the sessions behind them (performance_schema.threads). Returns (evidence, peak threads)."""
    ps, pl = tl.frame("ps_threads"), tl.frame("processlist")
    if not threads.has_thread_states(ps):
        return [], 0
    out: list[Evidence] = []
    peak = 0
    side = threads.threads_beside_sessions(ps, pl)
    side = side[within_slack(side.index.to_series(), windows, tol)] if len(side) else side
    file_cols = [c for c in side.columns if c.startswith("wchan:") and threads.is_file_wchan(c[6:])]
    if len(side) and file_cols:
        file_d = side[file_cols].sum(axis=1)
        peak = int(file_d.max())
        if peak > 0:
            out += _file_wait_moment(tl, ps, side, file_cols, file_d.idxmax(), peak)
    pfs = tl.frame("pfs_threads")
    if len(pfs) and "thread_os_id" in pfs:
        behind = threads.sessions_by_wchan(threads.thread_sessions(ps, pfs, pl))
        behind = behind[behind["wchan"].map(threads.is_file_wchan).astype(bool)] if len(behind) else behind
        if len(behind):
            top = behind.iloc[0]
            text = (
                f"{int(top['sessions'])} sessions in '{top['session_state']}' running "
                f"{str(top['fingerprint'])[:300]}"
            )
            out.append(
                Evidence(
                    f"sessions behind the D threads in {top['wchan']}", text, "", "pfs_threads.processlist_id"
                )
            )
    return out, peak


def _file_wait_moment(
    tl: Timeline, ps: pd.DataFrame, side: pd.DataFrame, file_cols: list[str], at: pd.Timestamp, peak: int
) -> list[Evidence]:
    """The moment with the most file-wait D threads: their wait channels beside the sessions' states."""
    row = side.loc[at]
    parts = ", ".join(f"{c[6:]} {int(row[c])}" for c in file_cols if row[c] > 0)
    ps_rows = ps[(ps["ts"] == at) & ps["is_mysqld"].astype(bool) & threads.in_d_state(ps)]
    member, lines = tl.lines_of(ps_rows)
    tmp_at = {c[6:]: row[c] for c in side.columns if c.startswith("state:") and c[6:].lower() in TMP_STATES}
    tmp_text = ", ".join(f"{int(v)} in '{k}'" for k, v in tmp_at.items() if pd.notna(v) and v > 0)
    active_at = row.get("active")
    sessions = (
        f"while {tmp_text}"
        if tmp_text
        else f"while {int(active_at)} sessions were active"
        if pd.notna(active_at)
        else ""
    )
    return [
        Evidence(
            "mysqld threads in D state creating/deleting files (max)",
            peak,
            "threads",
            "ps_threads.wchan",
            member,
            lines,
        ),
        Evidence(
            "at the same moment",
            f"{peak} mysqld threads in D state ({parts}) {sessions}".strip(),
            "",
            "ps_threads.wchan",
            member,
            lines,
        ),
    ]


def _tmp_what(t: _TmpTables, peak_tmp: int, churn: pd.DataFrame) -> str:
    """What was seen, in words: the sessions in temporary-table states, or the on-disk rate."""
    if t.state_windows:
        what = f"up to {peak_tmp} sessions at once were creating or removing internal temporary tables"
    else:
        what = "the server created on-disk temporary tables at a high rate"
    if len(churn):
        rate = float(churn["disk_per_s"].median())
        share = churn["share"].notna().any()
        what += (
            f" ({rate:.0f} on-disk temporary tables per second, "
            f"{float(churn['share'].median()) * 100:.0f} % "
            "of all temporary tables)"
            if share
            else (f" ({rate:.0f} on-disk temporary tables per second)")
        )
    return what


@rule(
    key="tmp-table-churn",
    requires=("processlist",),
    optional=("mysqladmin", "ps_threads", "pfs_threads", "variables", "ncpu"),
)
def tmp_table_churn(tl: Timeline) -> Finding | None:
    """Sessions in temporary-table states (>= max(5, ncpu / 4) and >= 20 % of active, or >= 50), or
    on-disk temporary tables >= 20/s and >= 25 % of all temporary tables, each also twice the
    capture's quiet level when it has one, for 5 s; stronger with mysqld D threads in file
    creation/deletion wait channels at the same moment."""
    t = _tmp_tables(tl)
    windows = t.windows
    if not windows:
        return None
    pl = tl.frame("processlist")
    tol = join_tolerance(pl["ts"])
    in_pl = pl[within_slack(pl["ts"], windows, tol)]
    tmp_rows = in_pl[in_pl["active"].astype(bool) & state_in(in_pl, TMP_STATES)]
    snap_in = within_slack(t.tmp_n.index.to_series(), windows, tol)
    peak_tmp = int(t.tmp_n[snap_in].max()) if snap_in.any() else 0
    churn = t.rates[within_slack(t.rates["ts"], windows, tol)] if len(t.rates) else t.rates
    files, file_peak = _file_wait_evidence(tl, windows, tol)
    evidence = (
        _tmp_state_evidence(tl, t, tmp_rows, snap_in)
        + _tmp_counter_evidence(tl, churn)
        + _tmp_query_evidence(tl, in_pl, tmp_rows)
        + files
    )
    evidence += variables_evidence(
        tl, ("tmpdir", "tmp_table_size", "max_heap_table_size", "internal_tmp_mem_storage_engine", "version")
    )
    agree = (
        (["processlist states"] if t.state_windows else [])
        + (["status counters"] if t.counter_windows and len(churn) else [])
        + (["ps wait channels"] if file_peak > 0 else [])
    )
    severe = file_peak >= max(d_threads_bar(tl.ncpu or 0), 1)
    title = (
        f"Temporary tables on disk: {peak_tmp} sessions creating/removing them"
        if t.state_windows
        else f"{float(churn['disk_per_s'].median()):.0f} on-disk temporary tables per second"
    )
    ps_confirms = (
        (
            f" ps confirms it: up to {file_peak} server threads were in D state in file "
            "creation/deletion "
            "wait channels at the same moments."
        )
        if file_peak
        else ""
    )
    query = next((e for e in evidence if e.series == "processlist.fingerprint" and e.member), None)
    active_in = in_pl[in_pl["active"].astype(bool) & in_pl["fingerprint"].notna()]
    culprit = statement_culprit(tl, active_in, str(query.value)) if query is not None else None
    found = TMP_TABLE_CHURN.finding(
        "tmp-table-churn",
        Severity.CRITICAL if severe else Severity.WARNING,
        windows,
        evidence,
        title=title + (f", by {short_query(str(query.value))}" if query is not None else ""),
        held=held_seconds(windows, step_seconds(snapshots(pl))),
        what=_tmp_what(t, peak_tmp, churn),
        tmpdir=variable(tl, "tmpdir") or "the tmpdir",
        ps_confirms=ps_confirms,
        disk_min=TMP_DISK_PER_S_MIN,
        setting_text=_tmp_setting_text(tl),
        agree=" + ".join(agree) or "processlist",
    )
    return dataclasses.replace(found, culprit=culprit) if culprit is not None else found


# -------------------------------------------------------------------------------------------------
# table-cache-contention
# -------------------------------------------------------------------------------------------------

TABLE_CACHE_CONTENTION = RuleTexts(
    title="{peak} sessions waiting to open or close tables",
    explanation=(
        "For {held:.0f} s up to {peak} active sessions were in 'Opening tables' or 'closing tables'. "
        "When the table cache (table_open_cache) is smaller than the tables the concurrent sessions use, "
        "each query must close a cached table and open another, and those steps serialise on the cache lock."
        "{current_text}"
    ),
    recommendation=(
        'Raise the table cache (dynamic; MySQL manual, "How MySQL Opens and Closes Tables"):\n'
        "  SET GLOBAL table_open_cache = {suggested};\n"
        "  -- and persist it in my.cnf [mysqld]: table_open_cache = {suggested}\n"
        "  -- table_open_cache_instances = 16 (MySQL 5.6.6+, not dynamic) splits the cache lock\n"
        "Check that the process may open that many files: open_files_limit, `ulimit -n`, systemd "
        "LimitNOFILE.\n"
        "Then watch: SHOW GLOBAL STATUS LIKE 'Table_open_cache%'; (misses and overflows should stop growing)."
    ),
    caveats=(
        (
            "Sessions also show 'Opening tables' while waiting for FLUSH TABLES or DDL, or when "
            "table_definition_cache is too small; check for those first."
        ),
        "Each cached table holds file descriptors (two for a MyISAM table): the OS limit must follow.",
    ),
    sources=(
        "MySQL 8.4 Reference Manual, How MySQL Opens and Closes Tables",
        "MySQL manual, How MySQL Opens and Closes Tables",
    ),
    confidence="processlist; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If Table_open_cache_misses and Opened_tables do not grow in the window, the cache is large "
        "enough and the sessions wait for something else (FLUSH TABLES, a metadata lock)."
    ),
)


@rule(key="table-cache-contention", requires=("processlist",), optional=("mysqladmin", "variables"))
def table_cache_contention(tl: Timeline) -> Finding | None:
    """>= max(10, ncpu / 2) active sessions (twice the quiet level when the capture has one) and
    >= 10 % of active in Opening tables / closing tables, for 5 s."""
    pl = tl.frame("processlist")
    snaps = snapshots(pl)
    active_n = count_per_snapshot(pl, pl["active"])
    mask = pl["active"].astype(bool) & state_in(pl, TABLE_CACHE_STATES)
    n = count_per_snapshot(pl, mask)
    share = n / active_n.where(active_n > 0)
    bar = per_host(TABLE_CACHE_MIN_SESSIONS, tl.ncpu, TABLE_CACHE_SESSIONS_PER_CPU)
    windows, _ = sustained_or_extreme(snaps, over_quiet(n, bar) & (share >= TABLE_CACHE_MIN_SHARE))
    if not windows:
        return None
    in_win = within(n.index.to_series(), windows)
    rows = pl[mask & within(pl["ts"], windows)]
    member, lines = tl.lines_of(rows)
    evidence = [
        Evidence(
            "sessions opening/closing tables (max)",
            int(n[in_win].max()),
            "sessions",
            "processlist.state",
            member,
            lines,
        ),
        Evidence(
            "their share of active sessions (max)",
            round(float(share[in_win].max()) * 100, 1),
            "%",
            "processlist.active",
        ),
    ] + [
        Evidence(f"State '{s}'", c, "session-snapshots", "processlist.state", member, lines)
        for s, c in top_values(rows["state"])
    ]
    evidence += status_evidence(
        tl,
        windows,
        join_tolerance(pl["ts"]),
        (
            ("Table_open_cache_misses", "Table_open_cache_misses per second (median)", "rate"),
            ("Table_open_cache_overflows", "Table_open_cache_overflows per second (median)", "rate"),
            ("Opened_tables", "Opened_tables per second (median)", "rate"),
            ("Open_tables", "Open_tables (max)", "max"),
        ),
    )
    evidence += variables_evidence(
        tl, ("table_open_cache", "table_open_cache_instances", "table_definition_cache", "open_files_limit")
    )
    current = variable(tl, "table_open_cache")
    suggested = str(max(int(current) * 4, 4000)) if current is not None and current.isdigit() else "100000"
    return TABLE_CACHE_CONTENTION.finding(
        "table-cache-contention",
        Severity.WARNING,
        windows,
        evidence,
        peak=int(n[in_win].max()),
        held=held_seconds(windows, step_seconds(snaps)),
        suggested=suggested,
        current_text=f" table_open_cache is {current}." if current is not None else "",
    )
