"""Times, absolute values and per-second rates of ``mysqladmin extended-status`` rows
(``parsers.mysqladmin``): absolute (``ext -i``) or relative (``ext -r -i``) mode, the interval, one
time per table, and the counters' rates carried from chunk to chunk. Not a format.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from parsers._mysqladmin_cells import State
from parsers.base import ClockHints, ParseWarning, start_or_epoch

#: Gauges: status variables that are a current reading, not a counter since start-up (MySQL 8.0
#: manual, "Server Status Variables"; MariaDB KB "Server Status Variables"). Their ``per_s`` is NaN.
GAUGES = frozenset(
    {
        "Aria_pagecache_blocks_not_flushed",
        "Aria_pagecache_blocks_unused",
        "Aria_pagecache_blocks_used",
        "Delayed_insert_threads",
        "Innodb_async_reads_pending",
        "Innodb_async_writes_pending",
        "Key_blocks_warm",
        "Innodb_buffer_pool_bytes_data",
        "Innodb_buffer_pool_bytes_dirty",
        "Innodb_buffer_pool_pages_data",
        "Innodb_buffer_pool_pages_dirty",
        "Innodb_buffer_pool_pages_free",
        "Innodb_buffer_pool_pages_latched",
        "Innodb_buffer_pool_pages_misc",
        "Innodb_buffer_pool_pages_old",
        "Innodb_buffer_pool_pages_total",
        "Innodb_checkpoint_age",
        "Innodb_checkpoint_max_age",
        "Innodb_data_pending_fsyncs",
        "Innodb_data_pending_reads",
        "Innodb_data_pending_writes",
        "Innodb_history_list_length",
        "Innodb_ibuf_free_list",
        "Innodb_ibuf_segment_size",
        "Innodb_ibuf_size",
        "Innodb_mem_adaptive_hash",
        "Innodb_mem_dictionary",
        "Innodb_mem_total",
        "Innodb_num_open_files",
        "Innodb_os_log_pending_fsyncs",
        "Innodb_os_log_pending_writes",
        "Innodb_page_size",
        "Innodb_redo_log_capacity_resized",
        "Innodb_redo_log_logical_size",
        "Innodb_redo_log_physical_size",
        "Innodb_row_lock_current_waits",
        "Innodb_row_lock_time_avg",
        "Innodb_row_lock_time_max",
        "Innodb_undo_tablespaces_active",
        "Innodb_undo_tablespaces_explicit",
        "Innodb_undo_tablespaces_implicit",
        "Innodb_undo_tablespaces_total",
        "Key_blocks_not_flushed",
        "Key_blocks_unused",
        "Key_blocks_used",
        "Last_query_cost",
        "Last_query_partial_plans",
        "Max_used_connections",
        "Memory_used",
        "Memory_used_initial",
        "Mysqlx_worker_threads",
        "Mysqlx_worker_threads_active",
        "Not_flushed_delayed_rows",
        "Ongoing_anonymous_transaction_count",
        "Open_files",
        "Open_streams",
        "Open_table_definitions",
        "Open_tables",
        "Performance_schema_session_connect_attrs_longest_seen",
        "Prepared_stmt_count",
        "Qcache_free_blocks",
        "Qcache_free_memory",
        "Qcache_queries_in_cache",
        "Qcache_total_blocks",
        "Rpl_semi_sync_master_clients",
        "Rpl_semi_sync_master_net_avg_wait_time",
        "Rpl_semi_sync_master_tx_avg_wait_time",
        "Rpl_semi_sync_master_wait_sessions",
        # MySQL 8.0.26+ names of the same gauges (rpl_semi_sync_source plugin)
        "Rpl_semi_sync_source_clients",
        "Rpl_semi_sync_source_net_avg_wait_time",
        "Rpl_semi_sync_source_tx_avg_wait_time",
        "Rpl_semi_sync_source_wait_sessions",
        "Slave_open_temp_tables",
        "Replica_open_temp_tables",
        "Slave_heartbeat_period",
        "Slaves_connected",
        "Ssl_session_cache_size",
        "Ssl_used_session_cache_entries",
        "Tc_log_max_pages_used",
        "Tc_log_page_size",
        "Threads_cached",
        "Threads_connected",
        "Threads_running",
        "Threadpool_idle_threads",
        "Threadpool_threads",
        "Tmp_space_used",
        "wsrep_cert_deps_distance",
        "wsrep_cluster_conf_id",
        "wsrep_cluster_size",
        "wsrep_desync_count",
        "wsrep_flow_control_paused",
        "wsrep_local_index",
        "wsrep_local_recv_queue",
        "wsrep_local_recv_queue_avg",
        "wsrep_local_send_queue",
        "wsrep_local_send_queue_avg",
        "wsrep_local_state",
        "wsrep_open_transactions",
        "wsrep_protocol_version",
    }
)

#: Monotone counters used to tell absolute from relative when ``Uptime`` is missing.
_MONOTONE = ("Questions", "Queries", "Bytes_received", "Bytes_sent", "Com_select", "Handler_read_rnd_next")


@dataclass(frozen=True, slots=True)
class Part:
    """The rows of one chunk in file order: ``ts`` (naive UTC datetime64[ns]), ``line_no``, variable
    numbers (``State.names``), absolute ``value`` and ``per_s``."""

    ts: np.ndarray
    line_no: np.ndarray
    var: np.ndarray
    value: np.ndarray
    per_s: np.ndarray


def timed(
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    table_marker: list[tuple[pd.Timestamp | None, bool, int]],
    header_lines: np.ndarray,
    state: State,
    clock: ClockHints,
    warnings: list[ParseWarning],
) -> Part:
    """Mode and interval (from the first chunk), one time per table, then absolute values and rates."""
    table, line_no, var, value = rows
    if state.mode is None or state.interval_s is None:
        small = (table <= 1) | (var == state.ids.get("Uptime", -1))
        df = pd.DataFrame(
            {
                "table": table[small],
                "line_no": line_no[small],
                "variable": np.asarray([state.names[i] for i in var[small]], dtype=object),
                "value": value[small],
            }
        )
        if state.mode is None:
            state.mode = _detect_mode(df)
        if state.interval_s is None:
            state.interval_s = _interval(df, state, clock, warnings)
    table_ts = _table_times(table_marker, state, clock, warnings)
    ts = table_ts[table - state.tables]
    return _rates(table, line_no, var, value, ts, state, header_lines, warnings)


def _detect_mode(df: pd.DataFrame) -> str:
    """``relative`` when the second table's monotone counters are below the first table's: the first
    of ``Uptime``, then ``_MONOTONE``, that both tables show, with a first value above 0, decides."""
    two = df[df["table"] <= 1]
    if two["table"].nunique() < 2:
        return "absolute"
    table = two["table"].to_numpy()
    tables = sorted(set(table.tolist()))
    variable = two["variable"].to_numpy()
    value = two["value"].to_numpy(dtype="float64")
    for name in ("Uptime", *_MONOTONE):
        first: dict[int, float] = {}  # table -> the variable's first value in it (not NaN)
        for i in np.flatnonzero(variable == name).tolist():
            if not np.isnan(value[i]):
                first.setdefault(int(table[i]), float(value[i]))
        if len(first) == len(tables) and first[tables[0]] > 0:
            return "relative" if first[tables[1]] < first[tables[0]] else "absolute"
    return "absolute"


def _interval(df: pd.DataFrame, state: State, clock: ClockHints, warnings: list[ParseWarning]) -> float:
    """Seconds between tables: from ``Uptime`` when the chunk shows it, else the hint, else 1."""
    up = df.loc[df["variable"] == "Uptime", ["table", "value"]].drop_duplicates("table")
    measured: float | None = None
    if len(up) >= 2:
        steps = (
            up["value"].iloc[1:].to_numpy() if state.mode == "relative" else np.diff(up["value"].to_numpy())
        )
        steps = steps[steps > 0]
        if len(steps):
            measured = float(np.median(steps))
    if measured is not None:
        if clock.interval_s and abs(clock.interval_s - measured) >= 1:
            warnings.append(
                ParseWarning(
                    0,
                    "interval-mismatch",
                    f"Uptime steps by {measured:g} s between tables; the layout said {clock.interval_s:g} s",
                )
            )
        return measured
    return float(clock.interval_s or 1.0)


def _table_times(
    table_marker: list[tuple[pd.Timestamp | None, bool, int]],
    state: State,
    clock: ClockHints,
    warnings: list[ParseWarning],
) -> np.ndarray:
    """One timestamp per table of the chunk, as naive UTC ``datetime64[ns]`` (local when inferred)."""
    step = pd.Timedelta(seconds=state.interval_s or 1.0)
    out: list[pd.Timestamp] = []
    for i, (marker_ts, wall_only, since) in enumerate(table_marker):
        if marker_ts is not None:
            out.append(marker_ts + since * step)
            state.local = state.local or wall_only
            continue
        start = start_or_epoch(clock, warnings).tz_localize("UTC")
        state.local = True
        out.append(start + (state.tables + i) * step)
    return pd.DatetimeIndex(out).as_unit("ns").tz_convert(None).to_numpy()


def _rates(
    table: np.ndarray,
    line_no: np.ndarray,
    var: np.ndarray,
    written: np.ndarray,
    ts: np.ndarray,
    state: State,
    header_lines: np.ndarray,
    warnings: list[ParseWarning],
) -> Part:
    """Absolute ``value`` and per-second ``per_s`` for the chunk, carrying the last table forward.

    Rows are sorted by (variable, table) so that each row's predecessor is the same variable's
    previous table; a variable's first row in the chunk takes its predecessor from ``state``. The
    result is in file order again.
    """
    names = state.names
    order = np.lexsort((table, var))
    sv = var[order]
    n = len(sv)
    first = np.ones(n, dtype=bool)
    first[1:] = sv[1:] != sv[:-1]
    written = written[order]
    heads = [names[i] for i in sv[first]]
    carry_val = np.array([state.prev_value.get(v, np.nan) for v in heads], dtype="float64")
    carry_ts = np.array(
        [state.prev_ts.get(v, np.datetime64("NaT", "ns")) for v in heads], dtype="datetime64[ns]"
    )
    if state.mode == "relative":
        group = np.cumsum(first) - 1
        carry_sum = np.array([state.running.get(v, 0.0) for v in heads], dtype="float64")
        absolute = pd.Series(written).groupby(group).cumsum().to_numpy() + carry_sum[group]
        delta = written.copy()
        # a variable's first table (the run's first, or a variable new in this table) holds a total
        delta[first] = np.where(np.isnan(carry_val), np.nan, written[first])
    else:
        absolute = written
        prev = np.empty_like(written)
        prev[1:] = written[:-1]
        prev[first] = carry_val
        delta = written - prev
    ts = ts[order]
    prev_ts = np.empty_like(ts)
    prev_ts[1:] = ts[:-1]
    prev_ts[first] = carry_ts
    dt = (ts - prev_ts) / np.timedelta64(1, "s")
    with np.errstate(invalid="ignore", divide="ignore"):
        per_s = np.where(dt > 0, delta / dt, np.nan)
    is_gauge = np.fromiter((name in GAUGES for name in names), dtype=bool, count=len(names))
    gauge = is_gauge[sv]
    per_s[gauge] = np.nan
    down = (per_s < 0) & ~gauge
    if down.any():
        tab = table[order][down]
        for t in np.unique(tab):
            k = int((tab == t).sum())
            header = int(header_lines[int(t) - state.tables])
            warnings.append(
                ParseWarning(
                    header, "counter-decrease", f"{k} counters went down (server restart or FLUSH STATUS?)"
                )
            )
        per_s[down] = np.nan
    last = np.ones(n, dtype=bool)
    last[:-1] = sv[:-1] != sv[1:]
    for v, a, t in zip(sv[last].tolist(), absolute[last], ts[last], strict=True):
        name = names[v]
        state.prev_value[name] = a
        state.prev_ts[name] = t
        state.running[name] = a
    back = np.empty_like(order)
    back[order] = np.arange(n)  # sorted position of each row in file order
    return Part(ts[back], line_no, var, absolute[back], per_s[back])
