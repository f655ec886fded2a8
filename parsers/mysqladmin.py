"""Parse ``mysqladmin extended-status`` captures (pt-stalk ``-mysqladmin``) into status counters and rates.

Accepts:
    ``mysqladmin ext -i N -c M`` (absolute values, what pt-stalk runs: ``ext -i$OPT_SLEEP_COLLECT
    -c$cnt``), ``mysqladmin ext -r -i N`` (relative: the first table absolute, every later one the
    difference from the previous table), a single ``SHOW GLOBAL STATUS`` printed by ``mysql -t``,
    with or without ``TS`` / ``zzz`` markers before the tables; MySQL 5.x-8.x, Percona Server and
    MariaDB variable sets (long names widen the table, which is read by its ``|`` borders).
    Absolute vs relative is read from the data: in a relative capture the second table's ``Uptime``
    (or, without it, most of a few monotone counters) is smaller than the first table's.

Sample input (``mysqladmin ext -i1 -c3``, mysqladmin Ver 10.0 Distrib 10.11.19-MariaDB, filtered)::

    +--------------------------------------------------+--------------------------------------------------+
    | Variable_name                                    | Value                                            |
    +--------------------------------------------------+--------------------------------------------------+
    | Aborted_clients                                  | 0                                                |
    | Bytes_sent                                       | 263416547                                        |
    | Compression                                      | OFF                                              |
    | Created_tmp_disk_tables                          | 2661                                             |
    | Threads_running                                  | 64                                               |
    | Uptime                                           | 310                                              |
    +--------------------------------------------------+--------------------------------------------------+

Output:
    frame ``mysqladmin`` (long, one row per variable per table, in file order):
        ``ts`` datetime64[ns, UTC]: the table's time (see below);
        ``line_no`` int64: the variable's line;
        ``variable`` category: the status variable as the server spells it (``Threads_running``);
        ``value`` float64: the absolute reading (a relative capture is summed back to absolute values,
            exactly as mysqladmin differenced them);
        ``per_s`` float64: for counters, the change since the previous table divided by the seconds
            between the two tables (NaN for a variable's first table, and where the counter went down:
            server restart or ``FLUSH STATUS``); always NaN for gauges (``GAUGES``: Threads_running,
            Open_tables, Innodb_buffer_pool_pages_free ...), whose ``value`` is the reading.
    Time: ``TS``/``zzz`` markers when present (``Clock.TS_MARKER``; a table with no new marker gets the
    last marker plus the interval); else ``clock.start_local`` + i x interval (``Clock.INFERRED``,
    ``ts_is_local``). The interval is read from the data when it can be (``Uptime`` steps: relative
    ``Uptime`` values, or the median step of absolute ones), else ``clock.interval_s``, else 1 s.
    ``meta``: ``mode`` (``absolute``/``relative``), ``interval_s``, ``tables``, ``variant``
    (``mysqladmin ext absolute, MariaDB``).

Warnings:
    ``no-start-time`` (no marker and no start time: times count from 1970-01-01), ``non-numeric-value``
    (once per variable that is not a known string variable), ``counter-decrease`` (once per table where
    counters went down), ``interval-mismatch`` (the data's interval differs from the layout's),
    ``odd-line`` (a line inside the capture that is no table row, border or marker).

Errors:
    ``ParseError`` at the first line that is neither blank, marker nor a ``Variable_name | Value`` table
    header, border or row before the first table, or when no table is found.

>>> lines = ["+---------+-------+", "| Variable_name | Value |", "+---------+-------+",
...          "| Questions | 100 |", "| Threads_running | 3 |", "| Uptime | 10 |", "+---------+-------+",
...          "| Variable_name | Value |", "| Questions | 160 |", "| Threads_running | 5 |", "| Uptime | 12 |"]
>>> src = parse(lines, member="m", clock=ClockHints(start_local=pd.Timestamp("2026-04-21 16:51:41")))
>>> src.meta["mode"], src.meta["interval_s"]
('absolute', 2.0)
>>> src.main.loc[src.main.variable == "Questions", ["value", "per_s"]].to_numpy().tolist()
[[100.0, nan], [160.0, 30.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers.base import (
    Clock,
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    empty_frame,
    line_chunks,
    parse_marker,
    start_or_epoch,
)

FORMAT = "mysqladmin"

#: Sniffing: at least this many ``| name | value |`` rows in the head, and this share of their names
#: starting with a capital letter (status variables are ``Aborted_clients``, ``Com_select``; system
#: variables, which ``parsers.variables`` reads, are all lower case: ``autocommit``, ``basedir``).
SNIFF_MIN_ROWS = 3
SNIFF_MIN_CAPITAL_SHARE = 0.8

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
        "Tmp_space_used",
        "wsrep_cert_deps_distance",
        "wsrep_cluster_conf_id",
        "wsrep_cluster_size",
        "wsrep_flow_control_paused",
        "wsrep_local_index",
        "wsrep_local_recv_queue",
        "wsrep_local_recv_queue_avg",
        "wsrep_local_send_queue",
        "wsrep_local_send_queue_avg",
        "wsrep_local_state",
        "wsrep_protocol_version",
    }
)

#: Status variables whose value is text (``ON``/``OFF``, a date, a cipher name, empty, ``NULL``):
#: skipped without a warning. ``mysqladmin -r`` prints them as 0 (it runs ``strtoull`` on every
#: value), even in its first table, so they must be known by name, not recognised by their value.
KNOWN_STRING_VARIABLES = frozenset(
    {
        "Binlog_snapshot_file",
        "Caching_sha2_password_rsa_public_key",
        "Compression",
        "Compression_algorithm",
        "Current_tls_ca",
        "Current_tls_capath",
        "Current_tls_cert",
        "Current_tls_cipher",
        "Current_tls_ciphersuites",
        "Current_tls_crl",
        "Current_tls_crlpath",
        "Current_tls_key",
        "Current_tls_version",
        "Innodb_buffer_pool_dump_status",
        "Innodb_buffer_pool_load_incomplete",
        "Innodb_buffer_pool_load_status",
        "Innodb_buffer_pool_resize_status",
        "Innodb_redo_log_enabled",
        "Innodb_redo_log_read_only",
        "Innodb_redo_log_resize_status",
        "Innodb_redo_log_uuid",
        "Max_memory_used",  # MariaDB 10.11 prints NULL
        "Max_used_connections_time",
        "Mysqlx_address",
        "Mysqlx_socket",
        "Mysqlx_ssl_cipher",
        "Mysqlx_ssl_cipher_list",
        "Mysqlx_ssl_server_not_after",
        "Mysqlx_ssl_server_not_before",
        "Mysqlx_ssl_version",
        "Resource_group_supported",
        "Rpl_semi_sync_master_status",
        "Rpl_semi_sync_slave_status",
        "Rpl_semi_sync_source_status",
        "Rpl_semi_sync_replica_status",
        "Rpl_status",
        "Rsa_public_key",
        "Slave_running",
        "Replica_running",
        "Ssl_cipher",
        "Ssl_cipher_list",
        "Ssl_server_not_after",
        "Ssl_server_not_before",
        "Ssl_session_cache_mode",
        "Ssl_version",
        "Telemetry_traces_supported",
        "wsrep_cluster_capabilities",
        "wsrep_cluster_state_uuid",
        "wsrep_cluster_status",
        "wsrep_connected",
        "wsrep_evs_delayed",
        "wsrep_evs_evict_list",
        "wsrep_evs_repl_latency",
        "wsrep_evs_state",
        "wsrep_flow_control_active",
        "wsrep_flow_control_requested",
        "wsrep_flow_control_status",
        "wsrep_gcomm_uuid",
        "wsrep_incoming_addresses",
        "wsrep_local_state_comment",
        "wsrep_local_state_uuid",
        "wsrep_provider_capabilities",
        "wsrep_provider_name",
        "wsrep_provider_vendor",
        "wsrep_provider_version",
        "wsrep_ready",
    }
)
#: Families of text-valued status variables (build capabilities ``Innodb_have_lz4``, TLS details,
#: Galera's ``wsrep_monitor_status (L/A/C)`` whose name holds spaces).
KNOWN_STRING_PREFIXES = ("Innodb_have_", "Current_tls_", "Mysqlx_ssl_", "wsrep_monitor_status")

#: Status variable families only one server flavour has (MariaDB KB "Server Status Variables":
#: Aria engine; Galera's wsrep_* in MariaDB and Percona XtraDB Cluster).
FLAVOUR_PREFIXES = (("MariaDB", "Aria_"), ("Galera", "wsrep_"))

#: Monotone counters used to tell absolute from relative when ``Uptime`` is missing.
_MONOTONE = ("Questions", "Queries", "Bytes_received", "Bytes_sent", "Com_select", "Handler_read_rnd_next")

_HEADER = re.compile(r"^\|\s*Variable_name\s*\|\s*Value\s*\|\s*$")
_ROW = re.compile(r"^\|\s*(\S+)\s*\|")


def _is_string_variable(name: str) -> bool:
    return name in KNOWN_STRING_VARIABLES or name.startswith(KNOWN_STRING_PREFIXES)


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a ``| Variable_name | Value |`` table of status (capitalised) names.

    ``head``: the member's first decoded lines, TS markers allowed. A ``SHOW VARIABLES`` table (lower
    case names) and a ``SHOW PROCESSLIST`` table (``| Id | User |`` header) are refused.
    """
    if not any(_HEADER.match(line.strip()) for line in head):
        return False
    names = [m.group(1) for line in head if (m := _ROW.match(line.strip())) and m.group(1) != "Variable_name"]
    if len(names) < SNIFF_MIN_ROWS:
        return False
    capital = sum(1 for n in names if n[:1].isupper())
    return capital / len(names) >= SNIFF_MIN_CAPITAL_SHARE


@dataclass(slots=True)
class _State:
    """What carries from one chunk to the next."""

    tables: int = 0  # tables already emitted
    mode: str | None = None
    interval_s: float | None = None
    marker_ts: pd.Timestamp | None = None  # last marker seen, and tables read since it
    marker_wall_only: bool = False
    since_marker: int = 0
    prev_value: dict[str, float] = field(default_factory=dict)
    prev_ts: dict[str, np.datetime64] = field(default_factory=dict)
    running: dict[str, float] = field(default_factory=dict)  # relative mode: the sum so far
    string_vars: set[str] = field(default_factory=set)
    used_markers: bool = False
    local: bool = False


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a mysqladmin extended-status capture (lines of text) into the ``mysqladmin`` frame.

    Rates are per second; see the module docstring for modes, clocks and warnings. Raises
    ``ParseError`` when the member is not this format.
    """
    warnings: list[ParseWarning] = []
    state = _State()
    frames: list[pd.DataFrame] = []
    for base, lines in line_chunks(stream, _last_table_start):
        if lines or not frames:
            frames.append(_chunk(lines, base, state, clock, member, warnings))
    if state.tables == 0 and base + len(lines) > 1:
        raise ParseError(member, 1, lines[0] if lines else "", "no 'Variable_name | Value' table found")
    main = pd.concat(frames, ignore_index=True)
    main["variable"] = main["variable"].astype("category")
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"mysqladmin": main},
        clock=Clock.TS_MARKER if state.used_markers else Clock.INFERRED,
        warnings=warnings,
        meta={
            "mode": state.mode or "absolute",
            "interval_s": state.interval_s,
            "tables": state.tables,
            "variant": _variant(state, set(main["variable"].cat.categories)),
        },
        ts_is_local=state.local,
    )


def _variant(state: _State, names: set[str]) -> str:
    """``mysqladmin ext absolute, MariaDB``: mode, a single table, the server flavour its variables show."""
    mode = state.mode or "absolute"
    clues = [f"mysqladmin ext {'-r relative' if mode == 'relative' else mode}"]
    if state.tables == 1:
        clues.append("one table")
    clues += [flavour for flavour, prefix in FLAVOUR_PREFIXES if any(n.startswith(prefix) for n in names)]
    return ", ".join(clues)


def _last_table_start(buf: list[str]) -> int:
    """Index where the last table of ``buf`` begins (its markers and top border included), or 0."""
    i = len(buf) - 1
    while i > 0 and not _HEADER.match(buf[i].rstrip("\r\n")):
        i -= 1
    while i > 0 and not buf[i - 1].startswith("|"):
        i -= 1
    return i


#: A table row: ``| name | value |``; the value may be empty or hold spaces (``Buffer pool(s) load
#: completed at 261122 12:22:36``); its trailing padding is stripped later, only where needed.
_ROW_FULL = re.compile(r"^\| *(\S+(?: \S+)*) *\| ?([^|\n]*)\|[ \t\r]*$", re.M)


def _split(lines: list[str]) -> tuple[np.ndarray, list[str], list[str], np.ndarray]:
    """Cut a chunk into its table rows: (row line indices, names, raw values, other line indices).

    ``lines`` may keep their line ends. One regex pass over the joined rows does the bulk; the rows
    found must be exactly the lines that start with ``|``, else the odd ones are located one by one.
    """
    first = np.array([ln[:1] for ln in lines], dtype="<U1") if lines else np.array([], dtype="<U1")
    is_row = first == "|"
    row_idx = np.flatnonzero(is_row)
    other_idx = np.flatnonzero(~is_row & (first != "+"))
    joined = "".join(lines) if lines and lines[0].endswith("\n") else "\n".join(lines)
    pairs = _ROW_FULL.findall(joined)
    if len(pairs) != len(row_idx):  # a `|` line that is not a two-column row: find it
        keep, pairs = [], []
        for i in row_idx:
            m = _ROW_FULL.match(lines[i].rstrip("\r\n"))
            if m:
                keep.append(i)
                pairs.append(m.groups())
            else:
                other_idx = np.append(other_idx, i)
        row_idx = np.asarray(keep, dtype="int64")
        other_idx.sort()
    names = [p[0] for p in pairs]
    values = [p[1] for p in pairs]
    return row_idx, names, values, other_idx


def _chunk(
    raw: list[str], base: int, state: _State, clock: ClockHints, member: str, warnings: list[ParseWarning]
) -> pd.DataFrame:
    """Parse complete tables (``raw`` lines starting at line ``base``) into frame rows."""
    row_idx, names, values, other_idx = _split(raw)
    lines = raw
    names_a = np.asarray(names, dtype=object)
    header = names_a == "Variable_name"
    header_idx = row_idx[header]
    # markers, blank and odd lines: few, read one by one
    marker_idx: list[int] = []
    marker_at: list[tuple[pd.Timestamp, bool]] = []
    first_table = int(header_idx[0]) if len(header_idx) else len(lines)
    # before the first table, the first line that is neither blank nor a marker is an error
    bad_row = int(row_idx[0]) if state.tables == 0 and len(row_idx) and row_idx[0] < first_table else None
    for i in other_idx:
        if bad_row is not None and i > bad_row:
            break
        line = lines[i].rstrip("\r\n")
        if not line.strip():
            continue
        m = parse_marker(line) if line[:1] in ("T", "z") else None
        if m is not None:
            marker_idx.append(int(i))
            marker_at.append((m.ts, m.utc is None))
            state.used_markers = True
        elif state.tables == 0 and i < first_table:
            raise ParseError(member, base + int(i), line, "not a mysqladmin extended-status table")
        else:
            warnings.append(ParseWarning(base + int(i), "odd-line", f"not a table row: {line[:80]!r}"))
    if bad_row is not None:
        line = lines[bad_row].rstrip()
        raise ParseError(member, base + bad_row, line, "table row before any 'Variable_name | Value' header")
    # one time per table, from the marker in force
    table_marker: list[tuple[pd.Timestamp | None, bool, int]] = []
    mk = 0
    for h in header_idx:
        while mk < len(marker_idx) and marker_idx[mk] < h:
            state.marker_ts, state.marker_wall_only = marker_at[mk]
            state.since_marker = 0
            mk += 1
        table_marker.append((state.marker_ts, state.marker_wall_only, state.since_marker))
        state.since_marker += 1
    for j in range(mk, len(marker_idx)):  # markers after the last table of the chunk
        state.marker_ts, state.marker_wall_only = marker_at[j]
        state.since_marker = 0
    if not len(header_idx):
        return empty_frame(variable="str", value="float64", per_s="float64")
    table = np.cumsum(header) - 1 + state.tables
    data = ~header
    df = pd.DataFrame(
        {
            "table": table[data],
            "line_no": row_idx[data] + base,
            "variable": names_a[data],
            "raw": np.asarray(values, dtype=object)[data],
        }
    )
    header_lines = header_idx + base
    out = _to_frame(df, table_marker, header_lines, state, clock, warnings)
    state.tables += len(header_idx)
    return out


def _to_frame(
    df: pd.DataFrame,
    table_marker: list[tuple[pd.Timestamp | None, bool, int]],
    header_lines: np.ndarray,
    state: _State,
    clock: ClockHints,
    warnings: list[ParseWarning],
) -> pd.DataFrame:
    """Type one chunk of complete tables: numbers, absolute values, per-second rates, timestamps."""
    uniq = pd.unique(df["variable"])
    state.string_vars.update(n for n in uniq if _is_string_variable(n))
    df = df[~df["variable"].isin(state.string_vars)]
    num = pd.to_numeric(df["raw"], errors="coerce")
    bad = num.isna().to_numpy()
    if bad.any():
        odd = df.loc[bad, ["variable", "line_no", "raw"]].drop_duplicates("variable")
        for name, line_no, raw in odd.itertuples(index=False):
            warnings.append(
                ParseWarning(
                    int(line_no),
                    "non-numeric-value",
                    f"{name} = {raw.strip()!r} is not a number; variable skipped",
                )
            )
            state.string_vars.add(name)
        df = df[~df["variable"].isin(state.string_vars)]
        num = num[df.index]
    df = df.assign(value=num.to_numpy(dtype="float64")).drop(columns="raw").reset_index(drop=True)

    if state.mode is None:
        state.mode = _detect_mode(df)
    if state.interval_s is None:
        state.interval_s = _interval(df, state, clock, warnings)
    table_ts = _table_times(table_marker, state, clock, warnings)
    df["ts"] = table_ts[df["table"].to_numpy() - state.tables]
    return _rates(df, state, header_lines, warnings)


def _detect_mode(df: pd.DataFrame) -> str:
    """``relative`` when the second table's monotone counters are below the first table's."""
    two = df[df["table"] <= 1]
    if two["table"].nunique() < 2:
        return "absolute"
    wide = two.pivot_table(index="table", columns="variable", values="value", aggfunc="first")
    for name in ("Uptime", *_MONOTONE):
        if name in wide and wide[name].notna().all() and wide[name].iloc[0] > 0:
            return "relative" if wide[name].iloc[1] < wide[name].iloc[0] else "absolute"
    return "absolute"


def _interval(df: pd.DataFrame, state: _State, clock: ClockHints, warnings: list[ParseWarning]) -> float:
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
    state: _State,
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
    df: pd.DataFrame, state: _State, header_lines: np.ndarray, warnings: list[ParseWarning]
) -> pd.DataFrame:
    """Absolute ``value`` and per-second ``per_s`` for the chunk, carrying the last table forward.

    Rows are sorted by (variable, table) so that each row's predecessor is the same variable's
    previous table; a variable's first row in the chunk takes its predecessor from ``state``.
    """
    codes, uniques = pd.factorize(df["variable"].to_numpy(dtype=object))
    order = np.lexsort((df["table"].to_numpy(), codes))
    s = df.iloc[order]
    sv = s["variable"].to_numpy(dtype=object)
    is_gauge = np.fromiter((u in GAUGES for u in uniques), dtype=bool, count=len(uniques))
    first = np.ones(len(s), dtype=bool)
    first[1:] = sv[1:] != sv[:-1]
    written = s["value"].to_numpy(dtype="float64")
    heads = sv[first]
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
    ts = s["ts"].to_numpy(dtype="datetime64[ns]")
    prev_ts = np.empty_like(ts)
    prev_ts[1:] = ts[:-1]
    prev_ts[first] = carry_ts
    dt = (ts - prev_ts) / np.timedelta64(1, "s")
    with np.errstate(invalid="ignore", divide="ignore"):
        per_s = np.where(dt > 0, delta / dt, np.nan)
    gauge = is_gauge[codes[order]]
    per_s[gauge] = np.nan
    down = (per_s < 0) & ~gauge
    if down.any():
        tab = s["table"].to_numpy()[down]
        for t in np.unique(tab):
            n = int((tab == t).sum())
            header = int(header_lines[int(t) - state.tables])
            warnings.append(
                ParseWarning(
                    header, "counter-decrease", f"{n} counters went down (server restart or FLUSH STATUS?)"
                )
            )
        per_s[down] = np.nan
    last = np.ones(len(s), dtype=bool)
    last[:-1] = sv[:-1] != sv[1:]
    for v, a, t in zip(sv[last], absolute[last], ts[last], strict=True):
        state.prev_value[v] = a
        state.prev_ts[v] = t
        state.running[v] = a
    out = pd.DataFrame(
        {
            "ts": ts,
            "line_no": s["line_no"].to_numpy(),
            "variable": sv,
            "value": absolute,
            "per_s": per_s,
        },
        index=s.index,
    ).sort_index()
    out["ts"] = out["ts"].dt.tz_localize("UTC")
    return out.reset_index(drop=True)
