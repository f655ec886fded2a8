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
from collections.abc import Callable, Iterable
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
    """What carries from one chunk to the next.

    Variables are numbered in the order first seen: ``names`` (number -> name), ``ids`` (name ->
    number) and ``cells`` (a row's raw name cell, padding included -> number).
    """

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
    names: list[str] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)
    cells: dict[str, int] = field(default_factory=dict)
    byte_cells: dict[bytes, int] = field(default_factory=dict)  # the same, as bytes
    layouts: dict[bytes, np.ndarray] = field(default_factory=dict)  # see _run_ids

    def id_of(self, name: str) -> int:
        """The number of variable ``name`` (a new one when first seen)."""
        got = self.ids.get(name)
        if got is None:
            got = self.ids[name] = len(self.names)
            self.names.append(name)
        return got


@dataclass(frozen=True, slots=True)
class _Part:
    """The rows of one chunk in file order: ``ts`` (naive UTC datetime64[ns]), ``line_no``, variable
    numbers (``_State.names``), absolute ``value`` and ``per_s``."""

    ts: np.ndarray
    line_no: np.ndarray
    var: np.ndarray
    value: np.ndarray
    per_s: np.ndarray


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a mysqladmin extended-status capture (lines of text) into the ``mysqladmin`` frame.

    Rates are per second; see the module docstring for modes, clocks and warnings. Raises
    ``ParseError`` when the member is not this format.
    """
    warnings: list[ParseWarning] = []
    state = _State()
    parts: list[_Part | None] = []
    for base, lines in line_chunks(stream, _last_table_start):
        if lines or not parts:
            parts.append(_chunk(lines, base, state, clock, member, warnings))
    if state.tables == 0 and base + len(lines) > 1:
        raise ParseError(member, 1, lines[0] if lines else "", "no 'Variable_name | Value' table found")
    main = _frame(parts, state)
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


def _frame(parts: list[_Part | None], state: _State) -> pd.DataFrame:
    """The ``mysqladmin`` frame from the chunks' rows; ``variable`` a category of the names present
    (sorted, as ``astype("category")`` orders them)."""
    kept = [p for p in parts if p is not None]
    if not kept:
        empty = pd.concat([_empty() for _ in parts], ignore_index=True)
        empty["variable"] = empty["variable"].astype("category")
        return empty
    var = np.concatenate([p.var for p in kept])
    present = np.flatnonzero(np.bincount(var, minlength=len(state.names)))
    categories = pd.Index(np.asarray([state.names[i] for i in present], dtype=object)).sort_values()
    remap = np.full(len(state.names), -1, dtype=np.int64)
    remap[present] = categories.get_indexer([state.names[i] for i in present])
    ts = np.concatenate([p.ts for p in kept]).view(np.int64)
    return pd.DataFrame(
        {
            "ts": pd.DatetimeIndex(ts, dtype="datetime64[ns, UTC]", copy=False),
            "line_no": np.concatenate([p.line_no for p in kept]),
            "variable": pd.Categorical.from_codes(remap[var], categories=categories),
            "value": np.concatenate([p.value for p in kept]),
            "per_s": np.concatenate([p.per_s for p in kept]),
        },
        copy=False,
    )


def _empty() -> pd.DataFrame:
    return empty_frame(variable="str", value="float64", per_s="float64")


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


def _cells(text: str, rows: int, state: _State) -> tuple[np.ndarray, list[str]] | None:
    """The variable numbers and raw value cells of the ``rows`` table rows of ``text``, read with one
    ``split("|")``; None unless every line holding a ``|`` is a row that ``_ROW_FULL`` matches (starts
    with ``|``, exactly three of them, a name of single-space separated words, blanks after the
    last), in which case the cells are that regex's groups (a value cell keeps its leading space)."""
    if not rows:
        return None
    if not text.endswith("\n"):
        text += "\n"
    pieces = text.split("|")
    if len(pieces) != 3 * rows + 1 or (pieces[0] and not pieces[0].endswith("\n")):
        return None
    heads, values, tails = pieces[1::3], pieces[2::3], pieces[3::3]
    last = tails.pop()  # the end of the last row's line, and what follows it
    plain = tails.count("\n")  # the rest of a row's line is mostly just its end
    odd = [tail for tail in tails if tail != "\n"] if plain < len(tails) else []
    newlines = pieces[0].count("\n") + plain
    for tail in [*odd, last]:
        end = tail.find("\n")
        if end < 0 or tail[:end].strip(" \t\r") or (tail is not last and not tail.endswith("\n")):
            return None
        newlines += tail.count("\n")
    if newlines != text.count("\n"):  # a name or value cell runs over a line end
        return None
    cells = state.cells
    try:
        ids = np.fromiter(map(cells.__getitem__, heads), dtype=np.int64, count=rows)
    except KeyError:
        for head in set(heads).difference(cells):
            name = head.strip(" ")
            if name.split() != name.split(" "):
                return None  # not `\S+(?: \S+)*` between the padding
            cells[head] = state.id_of(name)
        ids = np.fromiter(map(cells.__getitem__, heads), dtype=np.int64, count=rows)
    return ids, values


#: A value cell that is only a run of 1 to 15 ASCII digits between spaces is read here: below 2**53
#: every reader gives the same float. The others go through ``pd.to_numeric``.
MAX_PLAIN_DIGITS = 15
_POW10 = 10 ** np.arange(MAX_PLAIN_DIGITS, dtype=np.int64)


def _plain_block(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, values) for a block of same-width cells (uint8 ASCII, one cell per row): the cells that
    are plain non-negative integers, and their values as float64 (0 elsewhere), digit by digit."""
    k, width = block.shape
    if not k or not width:
        return np.zeros(k, dtype=bool), np.zeros(k, dtype=np.float64)
    flat = np.ascontiguousarray(block).reshape(-1)
    digit = (flat - 48) < 10
    bad = np.zeros(k, dtype=bool)
    bad[np.flatnonzero(~digit & (flat != 32)) // width] = True  # a character that is neither
    pos = np.flatnonzero(digit)
    row = pos // width
    run = np.ones(len(pos), dtype=bool)  # a digit that starts a run of digits in its cell
    run[1:] = (pos[1:] != pos[:-1] + 1) | (row[1:] != row[:-1])
    good = ~bad & (np.bincount(row[run], minlength=k) == 1)
    good &= np.bincount(row, minlength=k) <= MAX_PLAIN_DIGITS
    keep = good[row]
    pos, row = pos[keep], row[keep]
    last = np.ones(len(pos), dtype=bool)
    last[:-1] = row[1:] != row[:-1]
    end = np.zeros(k, dtype=np.int64)
    end[row[last]] = pos[last]
    weight = _POW10[end[row] - pos]
    # sums of integers below 2**53: exact in float64
    got = np.bincount(row, weights=(flat[pos] - 48).astype(np.int64) * weight, minlength=k)
    return good, got


class _Values:
    """The value cells of a chunk's rows: ``plain`` (plain integers, see :func:`_plain_block`) with
    their ``ints`` (float64), and ``text(i)``: cell ``i`` as ``_ROW_FULL``'s value group."""

    def __init__(self, plain: np.ndarray, ints: np.ndarray, text: Callable[[int], str]) -> None:
        self.plain, self.ints, self.text = plain, ints, text

    @classmethod
    def of_cells(cls, cells: list[str], lead: bool) -> _Values:
        """From cell strings; ``lead``: each still has the blank after its ``|`` (dropped in ``text``)."""
        n = len(cells)
        plain = np.zeros(n, dtype=bool)
        ints = np.zeros(n, dtype=np.float64)
        joined = "".join(cells)
        if n and joined.isascii():
            data = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
            lens = np.fromiter(map(len, cells), dtype=np.int64, count=n)
            cuts = np.flatnonzero(np.diff(lens)) + 1  # runs of cells of one width: one block each
            starts = np.concatenate([[0], cuts]).tolist()
            ends = np.concatenate([cuts, [n]]).tolist()
            offsets = np.concatenate([[0], np.cumsum(lens)]).tolist()
            for a, b in zip(starts, ends, strict=True):
                block = data[offsets[a] : offsets[b]].reshape(b - a, int(lens[a]))
                plain[a:b], ints[a:b] = _plain_block(block)
        if lead:
            return cls(plain, ints, lambda i: cells[i][1:] if cells[i][:1] == " " else cells[i])
        return cls(plain, ints, cells.__getitem__)


def _matrix(
    lines: list[str], joined: str, row_idx: np.ndarray, state: _State
) -> tuple[np.ndarray, _Values] | None:
    """Variable numbers and value cells of the table rows (``lines[row_idx]``), read as blocks of bytes:
    the rows of one width are a matrix whose ``|`` columns are the same in every row. None unless
    every line ends with its only line end and every row is one that ``_ROW_FULL`` matches (exactly
    three ``|``, a name of single-space separated words, blanks after the last ``|``); then the cells
    are that regex's groups."""
    n = len(row_idx)
    if not n or not joined.isascii():
        return None
    data = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    lens = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    ends = np.cumsum(lens)
    if int(ends[-1]) != len(data) or not lens.all() or (data[ends - 1] != 10).any():
        return None
    if np.count_nonzero(data == 10) != len(lines):
        return None
    starts = ends - lens
    width = lens[row_idx]
    ids = np.empty(n, dtype=np.int64)
    plain = np.empty(n, dtype=bool)
    ints = np.empty(n, dtype=np.float64)
    texts: list[tuple[np.ndarray, np.ndarray]] = []
    for w in np.unique(width).tolist():
        sel = np.flatnonzero(width == w)
        rows = row_idx[sel]
        # runs of consecutive row lines: one contiguous stretch of bytes each
        cut = np.flatnonzero(np.diff(rows) != 1) + 1
        run_a = np.concatenate([[0], cut]).tolist()
        run_b = np.concatenate([cut, [len(rows)]]).tolist()
        first = starts[rows].tolist()
        views = [
            data[first[a] : first[a] + (b - a) * w].reshape(b - a, w)
            for a, b in zip(run_a, run_b, strict=True)
        ]
        m = views[0] if len(views) == 1 else np.concatenate(views)
        pipes = np.flatnonzero(m[0] == 124)
        if len(pipes) != 3 or np.count_nonzero(m == 124) != 3 * len(m):
            return None
        p2, p3 = int(pipes[1]), int(pipes[2])
        if not ((m[:, p2] == 124).all() and (m[:, p3] == 124).all()):
            return None
        tail = m[:, p3 + 1 : w - 1]
        if tail.size and not ((tail == 32) | (tail == 9) | (tail == 13)).all():
            return None
        got = _run_ids([v[:, 1:p2] for v in views], state)
        if got is None:
            return None
        ids[sel] = got
        block = m[:, p2 + 1 : p3]
        plain[sel], ints[sel] = _plain_block(block)
        texts.append((sel, block))
    where = np.empty((n, 2), dtype=np.int64)
    for g, (sel, _) in enumerate(texts):
        where[sel, 0] = g
        where[sel, 1] = np.arange(len(sel))

    def text(i: int) -> str:
        g, j = where[i].tolist()
        cell = texts[g][1][j].tobytes().decode("ascii")
        return cell[1:] if cell[:1] == " " else cell

    return ids, _Values(plain, ints, text)


#: Name columns of tables already read (bytes -> variable numbers); cleared past this many.
MAX_LAYOUTS = 64


def _run_ids(blocks: list[np.ndarray], state: _State) -> np.ndarray | None:
    """Variable numbers of the rows of each block of name cells (bytes, padding included); a table
    that repeats one seen before costs a dictionary look-up. None when a cell is not a valid name."""
    out = []
    for block in blocks:
        key = block.tobytes()
        got = state.layouts.get(key)
        if got is None:
            got = np.empty(len(block), dtype=np.int64)
            for j, raw in enumerate(block):
                cell = raw.tobytes()
                v = state.byte_cells.get(cell)
                if v is None:
                    name = cell.decode("ascii").strip(" ")
                    if name.split() != name.split(" "):
                        return None  # not `\S+(?: \S+)*` between the padding
                    v = state.byte_cells[cell] = state.id_of(name)
                got[j] = v
            if len(state.layouts) >= MAX_LAYOUTS:
                state.layouts.clear()
            state.layouts[key] = got
        out.append(got)
    return out[0] if len(out) == 1 else np.concatenate(out)


def _numbers(values: _Values, rows: np.ndarray) -> np.ndarray:
    """The value cells at ``rows`` as float64, exactly as ``pd.to_numeric(..., errors="coerce")``
    reads that column: NaN where it is not a number.

    Plain integers are read already (``values.ints``); ``pd.to_numeric`` reads the others, with one
    plain ``"0"`` added when there were plain ones, so that it sees the same kinds of value (ints,
    floats, unsigned, missing) as in the whole column and picks the same result type.
    """
    plain, out = values.plain[rows], values.ints[rows]
    if plain.all():
        return out
    rest = np.flatnonzero(~plain)
    raw = [values.text(i) for i in rows[rest].tolist()]
    if len(rest) == len(rows):
        return _to_numeric(raw)
    raw.append("0")
    num = pd.to_numeric(pd.Series(np.asarray(raw, dtype=object)), errors="coerce")
    if num.dtype.kind not in "iuf":
        return _to_numeric([values.text(i) for i in rows.tolist()])
    out[rest] = num.to_numpy(dtype="float64")[:-1]
    return out


def _to_numeric(raw: list[str]) -> np.ndarray:
    return pd.to_numeric(pd.Series(np.asarray(raw, dtype=object)), errors="coerce").to_numpy(dtype="float64")


def _chunk(
    raw: list[str], base: int, state: _State, clock: ClockHints, member: str, warnings: list[ParseWarning]
) -> _Part | None:
    """Parse complete tables (``raw`` lines starting at line ``base``) into rows; None without a table."""
    lines = raw
    first = np.array(lines, dtype="<U1") if lines else np.array([], dtype="<U1")
    is_row = first == "|"
    row_idx = np.flatnonzero(is_row)
    other_idx = np.flatnonzero(~is_row & (first != "+"))
    joined = "".join(lines) if lines and lines[0].endswith("\n") else "\n".join(lines)
    got = _matrix(lines, joined, row_idx, state)
    if got is None:
        cut = _cells(joined, len(row_idx), state)
        got = None if cut is None else (cut[0], _Values.of_cells(cut[1], lead=True))
    if got is not None:
        ids, values = got
    else:  # the regex, and line by line where it does not find every row
        row_idx, names, cells, other_idx = _split(lines)
        ids = np.array([state.id_of(n) for n in names], dtype=np.int64)
        values = _Values.of_cells(cells, lead=False)
    vn = state.ids.get("Variable_name")
    header = ids == vn if vn is not None else np.zeros(len(ids), dtype=bool)
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
        return None
    table = np.cumsum(header) - 1 + state.tables
    data = np.flatnonzero(~header)
    header_lines = header_idx + base
    out = _typed(table[data], row_idx[data] + base, ids[data], values, data, state, warnings)
    out = _timed(out, table_marker, header_lines, state, clock, warnings)
    state.tables += len(header_idx)
    return out


def _typed(
    table: np.ndarray,
    line_no: np.ndarray,
    var: np.ndarray,
    values: _Values,
    rows: np.ndarray,
    state: _State,
    warnings: list[ParseWarning],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Drop the text variables (known by name, or found with a value that is not a number, with one
    ``non-numeric-value`` warning per variable); (table, line_no, var, value) of the rest.
    ``values`` at ``rows`` are the value cells of the other arrays' rows."""
    names = state.names
    state.string_vars.update(n for n in (names[i] for i in np.unique(var)) if _is_string_variable(n))
    text = np.fromiter((n in state.string_vars for n in names), dtype=bool, count=len(names))
    keep = np.flatnonzero(~text[var])
    num = _numbers(values, rows[keep])
    bad = np.flatnonzero(np.isnan(num))
    if len(bad):
        seen: set[int] = set()
        for i in bad.tolist():
            v = int(var[keep[i]])
            if v in seen:
                continue
            seen.add(v)
            raw = values.text(int(rows[keep[i]]))
            warnings.append(
                ParseWarning(
                    int(line_no[keep[i]]),
                    "non-numeric-value",
                    f"{names[v]} = {raw.strip()!r} is not a number; variable skipped",
                )
            )
            state.string_vars.add(names[v])
        still = ~np.isin(var[keep], np.fromiter(seen, dtype=np.int64, count=len(seen)))
        keep, num = keep[still], num[still]
    return table[keep], line_no[keep], var[keep], num


def _timed(
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    table_marker: list[tuple[pd.Timestamp | None, bool, int]],
    header_lines: np.ndarray,
    state: _State,
    clock: ClockHints,
    warnings: list[ParseWarning],
) -> _Part:
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
    table: np.ndarray,
    line_no: np.ndarray,
    var: np.ndarray,
    written: np.ndarray,
    ts: np.ndarray,
    state: _State,
    header_lines: np.ndarray,
    warnings: list[ParseWarning],
) -> _Part:
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
    return _Part(ts[back], line_no, var, absolute[back], per_s[back])
