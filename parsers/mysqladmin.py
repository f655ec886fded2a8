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

import numpy as np
import pandas as pd

from parsers import _mysqladmin_cells as reading
from parsers._mysqladmin_cells import State
from parsers._mysqladmin_rates import GAUGES as GAUGES
from parsers._mysqladmin_rates import Part, timed
from parsers.base import (
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    empty_frame,
    line_chunks,
    parse_marker,
)
from parsers.sensitive import SERVER

FORMAT = "mysqladmin"
TRAITS = FormatTraits(
    short_lines=True,
    unsigned=True,
    capped_pct=False,
    blocks=Blocks.ROWS,
    markers=True,  # a TS line before each table: one `extended-status` run per table, absolute tables
)

#: Sniffing: at least this many ``| name | value |`` rows in the head, and this share of their names
#: starting with a capital letter (status variables are ``Aborted_clients``, ``Com_select``; system
#: variables, which ``parsers.variables`` reads, are all lower case: ``autocommit``, ``basedir``).
SNIFF_MIN_ROWS = 3
SNIFF_MIN_CAPITAL_SHARE = 0.8

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


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a mysqladmin extended-status capture (lines of text) into the ``mysqladmin`` frame.

    Rates are per second; see the module docstring for modes, clocks and warnings. Raises
    ``ParseError`` when the member is not this format.
    """
    warnings: list[ParseWarning] = []
    state = State()
    parts: list[Part | None] = []
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


def _frame(parts: list[Part | None], state: State) -> pd.DataFrame:
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


def _variant(state: State, names: set[str]) -> str:
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


def _chunk(
    raw: list[str], base: int, state: State, clock: ClockHints, member: str, warnings: list[ParseWarning]
) -> Part | None:
    """Parse complete tables (``raw`` lines starting at line ``base``) into rows; None without a table."""
    lines = raw
    first = np.array(lines, dtype="<U1") if lines else np.array([], dtype="<U1")
    is_row = first == "|"
    row_idx = np.flatnonzero(is_row)
    other_idx = np.flatnonzero(~is_row & (first != "+"))
    joined = "".join(lines) if lines and lines[0].endswith("\n") else "\n".join(lines)
    got = reading.matrix(lines, joined, row_idx, state)
    if got is None:
        cut = reading.cells(joined, len(row_idx), state)
        got = None if cut is None else (cut[0], reading.Values.of_cells(cut[1], lead=True))
    if got is not None:
        ids, values = got
    else:  # the regex, and line by line where it does not find every row
        row_idx, names, cells, other_idx = reading.split_rows(lines)
        ids = np.array([state.id_of(n) for n in names], dtype=np.int64)
        values = reading.Values.of_cells(cells, lead=False)
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
    out = timed(out, table_marker, header_lines, state, clock, warnings)
    state.tables += len(header_idx)
    return out


def _typed(
    table: np.ndarray,
    line_no: np.ndarray,
    var: np.ndarray,
    values: reading.Values,
    rows: np.ndarray,
    state: State,
    warnings: list[ParseWarning],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Drop the text variables (known by name, or found with a value that is not a number, with one
    ``non-numeric-value`` warning per variable); (table, line_no, var, value) of the rest.
    ``values`` at ``rows`` are the value cells of the other arrays' rows."""
    names = state.names
    state.string_vars.update(n for n in (names[i] for i in np.unique(var)) if _is_string_variable(n))
    text = np.fromiter((n in state.string_vars for n in names), dtype=bool, count=len(names))
    keep = np.flatnonzero(~text[var])
    num = reading.numbers(values, rows[keep])
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


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SERVER  # numbers and names of the server only
