"""Parse the MySQL / MariaDB / Percona Server slow query log into a per-minute series and a digest of
its statements by class (as pt-query-digest groups them), read in a stream, in bounded memory.

Accepts:
    MySQL 5.7, 8.0 and 8.4 (``# Time: 2026-12-07T01:34:07.123456Z`` with ``log_timestamps=UTC``, or an
    offset such as ``+01:00`` with ``log_timestamps=SYSTEM``; ``# User@Host: ... Id: 8``; the
    ``log_slow_extra`` fields of 8.0.14+); MySQL 5.6 and MariaDB 10.x (``# Time: 261207  2:34:07``,
    the server's wall clock, written only when the second changes; MariaDB's ``# Thread_id``/``Schema``
    line and its ``log_slow_verbosity`` extras: ``Rows_affected``, ``Bytes_sent``, ``Tmp_tables``,
    ``Full_scan``, ``Filesort`` ..., ``# explain:`` lines); Percona Server's extended fields
    (``Rows_affected``, ``Bytes_sent``, ``Tmp_tables``, ``Tmp_disk_tables``, ``Full_scan``,
    ``Filesort``, the ``InnoDB_*`` fields, ``Thread_id``). Shapes: ``SET timestamp=``; ``use db;``;
    statements over many lines; administrator commands (``# administrator command: Quit;``); the
    server's header (``mysqld, Version: ... started with:``, ``Tcp port:``, ``Time Id Command
    Argument``) repeated at each restart or log reopen, wherever it falls; a log cut mid-entry.

Sample input (MariaDB 10.11.19, ``long_query_time=0``, ``log_slow_verbosity=query_plan,explain``,
sysbench 1.0.20 ``oltp_read_write``; tests/fixtures/slowlog/README.md)::

    /usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
    Tcp port: 3399  Unix socket: /tmp/slowfx/run/mysqld.sock
    Time		    Id Command	Argument
    # Time: 261207  2:34:07
    # User@Host: app[app] @  [127.0.0.1]
    # Thread_id: 10  Schema: sbtest  QC_hit: No
    # Query_time: 0.002281  Lock_time: 0.000134  Rows_sent: 13  Rows_examined: 2000
    # Rows_affected: 0  Bytes_sent: 328
    # Full_scan: Yes  Full_join: No  Tmp_table: No  Tmp_table_on_disk: No
    # Filesort: No  Filesort_on_disk: No  Merge_passes: 0  Priority_queue: No
    SET timestamp=1796607247;
    SELECT id, k FROM sbtest1 WHERE c LIKE '%7777%';

An entry starts at a ``# Time:`` or ``# User@Host:`` line that follows a line other than a ``#``
line; its statement is its first line that is none of ``#`` lines, ``use``, ``SET timestamp=`` (or
``insert_id``/``last_insert_id``), up to the next entry or header, less its last ``;``. An entry's
time is its own ``# Time:`` line, else the last one before it (pt-query-digest's rule), else its
``SET timestamp``. Wall-clock times (no zone) are put on UTC by the server's offset, which the log
itself gives: the ``SET timestamp`` epoch against the wall clock of the same entry (rounded to
the quarter hour); else the bundle's offset (``ClockHints.utc_offset_s``); else they stay the
wall clock (``ts_is_local``: the bundle shifts ``slowlog``; the classes' first and last seen then
stay on the wall clock, said in a warning).

Output:
    frame ``slowlog`` (the main series, one row per minute with entries): ``ts`` datetime64[ns, UTC]
    (the minute, ``ts_source`` ``line``), ``line_no``/``line_end`` int64 (first and last line of
    its entries), ``queries`` int64, ``query_time_s``, ``lock_time_s`` float64 (sums, seconds),
    ``rows_sent``, ``rows_examined`` int64 (sums).
    frame ``slowlog_classes`` (one row per class: a fingerprint of ``analyzer.statements.fingerprint``), in
    order of first appearance: ``ts`` (the log's first minute, on every row: the digest is of the
    whole log), ``fingerprint`` str, ``queries`` int64, ``query_time_s``,
    ``query_time_max_s``, ``query_time_min_s``, ``query_time_p95_s`` (pt-query-digest's 95th
    percentile, ``analyzer.statements.querydigest.pct_95``), ``lock_time_s``, ``lock_time_max_s``,
    ``lock_time_p95_s`` (the same percentile of ``Lock_time``) float64,
    ``rows_sent``, ``rows_sent_max``, ``rows_examined``, ``rows_examined_max`` int64, the extras'
    sums (float64, NaN when no entry of the class has the field): ``rows_affected``, ``bytes_sent``,
    ``tmp_tables``, ``tmp_disk_tables``, ``full_scans``, ``filesorts`` and ``tmp_tables_on_disk``
    (entries saying ``Yes``: MariaDB's and Percona Server's ``Tmp_table_on_disk``),
    ``innodb_io_r_ops``, ``innodb_io_r_wait_s``, ``innodb_rec_lock_wait_s``,
    ``innodb_queue_wait_s``, ``innodb_pages_distinct``; ``first_seen``, ``last_seen``,
    ``example_ts`` datetime64[ns, UTC]; ``example`` str (the statement of the class's longest entry,
    the last of equals, as pt-query-digest picks it; at most ``EXAMPLE_CHARS``), ``schema``,
    ``user``, ``host`` str (of that entry), ``line_no``/``line_end`` int64 (its lines).
    frame ``slowlog_class_minutes`` (one row per class and minute it has entries, by minute then
    class): ``ts`` (the minute, as in ``slowlog``), ``class_no`` int64 (the class's row in
    ``slowlog_classes``, 0-based), ``queries`` int64, ``query_time_s``, ``query_time_max_s``,
    ``lock_time_s``, ``lock_time_max_s`` float64 (sums and greatest, seconds), ``rows_sent``,
    ``rows_sent_max``, ``rows_examined``, ``rows_examined_max`` int64: a time window's figures of a
    class are the sums (greatest) of its minutes (a 95th percentile is not: it is of the whole log).
    frame ``slowlog_clients`` (one row per user, host, address and schema seen): ``ts`` (as in
    ``slowlog_classes``), ``first_seen``, ``line_no``, ``user``, ``host``, ``ip``, ``schema``, ``queries``.
    ``meta``: ``variant``, ``server_version`` (from the header), ``entries``, ``utc_offset_s``
    when the log gave it, ``time_style`` (``utc``, ``offset`` or ``wall-clock``).

Warnings: ``cut-entry`` (an entry without statement or ``Query_time``: a log cut mid-entry, not
counted), ``no-entry`` (lines before the first entry that are not the header), ``wall-clock``
(times with no zone and no offset found), ``long-entry`` (an entry over ``MAX_ENTRY_CHARS``, cut).

Errors: ``ParseError`` when no entry is found in a member whose lines are not only a header.

Sources: MySQL 8.4 Reference Manual, "The Slow Query Log" (``log_slow_extra``, ``log_timestamps``);
MariaDB Knowledge Base, "Slow Query Log Extended Statistics" (``log_slow_verbosity``); Percona
Server 8.0 documentation, "Slow query log" (extended fields); percona-toolkit 3.2.1
``SlowLogParser`` (what ends an entry, what a statement is).

>>> src = parse(["# Time: 2026-12-07T01:34:07.000100Z", "# User@Host: app[app] @ localhost []  Id:     8",
...              "# Query_time: 0.25  Lock_time: 0.001 Rows_sent: 1  Rows_examined: 10", "use shop;",
...              "SET timestamp=1796607247;", "SELECT * FROM orders WHERE id = 7;"], member="s", clock=ClockHints())
>>> src.frames["slowlog_classes"][["fingerprint", "queries", "query_time_s", "schema"]].values.tolist()
[['select * from orders where id = ?', 1, 0.25, 'shop']]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers._slowlog_classes import (
    _SUMS,
    EXTRA_FIELDS,
    FLAG_FIELDS,
    _class_minutes_frame,
    _Digest,
    _fold_clients,
    _fold_minutes,
)
from parsers.base import (
    OFFSET_QUANTUM_S,
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    raw_blocks,
    text_chunks,
)
from parsers.sensitive import Sensitive

FORMAT = "slowlog"
TRAITS = FormatTraits(short_lines=False, unsigned=True, capped_pct=False, blocks=Blocks.NONE, markers=False)

#: An entry is cut past this many characters (a garbage member without entry starts is never held).
MAX_ENTRY_CHARS = 32 << 20
#: Characters read at a time: whole entries of about 16 MB, each read with a few passes of NumPy
#: and regular expressions over all of it (4 MB blocks cost 20 % more CPU: pandas' fixed costs per
#: block); what a block holds while it is read stays near 150 MB.
BLOCK_CHARS = 16 << 20
_NS = 1_000_000_000

_HEADER = re.compile(
    rb"^(?:(?:[^#\n][^\n]*?)?(?:mysqld|mariadbd)(?:\.exe)?, Version: [^\n]*|T[cC][pP] [pP]ort: [^\n]*"
    rb"|Time\s+Id\s+Command\s+Argument[ \t]*)$",
    re.M,
)
_VERSION = re.compile(rb"(?:mysqld|mariadbd)(?:\.exe)?, Version: (\S+)(?: \(([^)]*)\))?")
_TIME = re.compile(rb"# Time: ([^\n]*)")
_USER_HOST = re.compile(
    rb"# User@Host: ([^\[\n]*)\[[^\]\n]*\] @ ?([^\[\n]*?) ?\[([^\]\n]*)\](?:\s+Id:\s*(\d+))?"
)
_QUERY_TIME = re.compile(
    rb"# Query_time: ([0-9.]+)\s+Lock_time: ([0-9.]+)\s+Rows_sent: (\d+)\s+Rows_examined: (\d+)"
)
_SET_TIMESTAMP = re.compile(rb"SET timestamp=(\d+)")
_USE = re.compile(rb"use ([^;\n]+);")
_SCHEMA = re.compile(rb"Schema: ([^\s]*)")
# Led by the literal name (searched for fast); a match outside the entry's meta lines is dropped.
_EXTRA_RE = {name: re.compile(name + rb": ([0-9.]+)") for name in EXTRA_FIELDS}
_FLAG_RE = {name: re.compile(name + rb": (Yes|No)\b") for name in FLAG_FIELDS}
#: Lines before a statement that are not part of it (pt-query-digest's SlowLogParser).
_PRE_STATEMENT = (b"use ", b"SET timestamp=", b"SET last_insert_id=", b"SET insert_id=")


def sniff(head: list[str]) -> bool:
    """True when a head line is a slow log entry's ``# User@Host:`` or ``# Query_time:`` line."""
    return any(line.startswith(("# User@Host: ", "# Query_time: ")) for line in head)


def _entry_start(text: str) -> int:
    """Where the last entry of ``text`` starts (a ``cut`` of ``parsers.base.text_chunks``): its
    ``# Time:`` or ``# User@Host:`` line after a line that is not a ``#`` line; 0 when there is none
    but the first; the end of the last whole line past ``MAX_ENTRY_CHARS``."""
    end = len(text)
    while True:
        at = max(text.rfind("\n# Time: ", 0, end), text.rfind("\n# User@Host: ", 0, end))
        if at < 0:
            return text.rfind("\n") + 1 if len(text) > MAX_ENTRY_CHARS else 0
        before = text.rfind("\n", 0, at) + 1
        if text[before] != "#" or text.startswith("# administrator command: ", before):
            return at + 1
        end = at


def _heads(arr: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The first four bytes of each line (starting at byte ``starts`` of ``arr``) as one uint32."""
    last = len(arr) - 1
    head = np.zeros(len(starts), dtype=np.uint32)
    for k in range(4):
        head |= arr[np.minimum(starts + k, last)].astype(np.uint32) << (8 * k)
    return head


def _starts(
    arr: np.ndarray, starts: np.ndarray, prefix: bytes, heads: np.ndarray | None = None
) -> np.ndarray:
    """Whether each line (starting at byte ``starts`` of ``arr``) begins with ``prefix``: its first
    four bytes compared at once (``heads``), the rest only on the lines that pass."""
    heads = _heads(arr, starts) if heads is None else heads
    hit = heads == np.frombuffer(prefix[:4].ljust(4, b"\0"), dtype="<u4")[0] if len(prefix) >= 4 else None
    if hit is None:
        hit = np.ones(len(starts), dtype=bool)
        rest = range(len(prefix))
    else:
        rest = range(4, len(prefix))
    cand = np.flatnonzero(hit)
    last = len(arr) - 1
    keep = np.ones(len(cand), dtype=bool)
    for k in rest:
        keep &= arr[np.minimum(starts[cand] + k, last)] == prefix[k]
    out = np.zeros(len(starts), dtype=bool)
    out[cand[keep]] = True
    return out


@dataclass(slots=True)
class _Entries:
    """One block's entries: byte offsets of each entry's start, statement start and end (its meta
    lines are ``[start, statement)``), line numbers, and the block's bytes."""

    data: bytes
    start: np.ndarray
    stmt: np.ndarray
    end: np.ndarray
    line_no: np.ndarray
    line_end: np.ndarray
    headers: list[re.Match[bytes]]
    preamble_lines: int
    arr: np.ndarray
    line_starts: np.ndarray
    heads: np.ndarray

    def lines_with(self, prefix: bytes) -> list[int]:
        """Byte offsets of the lines that begin with ``prefix``."""
        return self.line_starts[_starts(self.arr, self.line_starts, prefix, self.heads)].tolist()

    def owner(self, positions: list[int]) -> np.ndarray:
        """The entry each byte position is in the meta lines of (-1: none)."""
        pos = np.asarray(positions, dtype=np.int64)
        i = np.searchsorted(self.start, pos, side="right") - 1
        ok = i >= 0
        ok[ok] &= pos[ok] < self.stmt[i[ok]]
        return np.where(ok, i, -1)


def _entries(data: bytes, first_line: int) -> _Entries:
    """The entries of a block of whole lines (``data`` ends with a newline)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    ls = np.r_[0, nl[:-1] + 1].astype(np.int64)
    first = arr[np.minimum(ls, len(arr) - 1)]
    heads = _heads(arr, ls)
    admin = _starts(arr, ls, b"# administrator command: ", heads)
    meta = (first == 35) & ~admin
    headers = _headers(data)
    header_line = np.zeros(len(ls), dtype=bool)
    header_line[np.searchsorted(ls, [m.start() for m in headers])] = True
    pre = meta | header_line
    for prefix in _PRE_STATEMENT:
        pre |= _starts(arr, ls, prefix, heads)
    opens = _starts(arr, ls, b"# Time: ", heads) | _starts(arr, ls, b"# User@Host: ", heads)
    after_meta = np.r_[False, meta[:-1]]
    lines = np.flatnonzero(opens & ~after_meta)
    n = len(ls)
    ends = np.r_[lines[1:], n]
    # the statement: the first line of the entry that is not a meta or pre-statement line
    body = np.flatnonzero(~pre)
    k = np.searchsorted(body, lines)
    stmt_line = (
        np.where(k < len(body), body[np.minimum(k, len(body) - 1)], n)
        if len(body)
        else np.full(len(lines), n)
    )
    stmt_line = np.where(stmt_line < ends, stmt_line, ends)
    # a header after the statement ends the entry there (the server restarted after it was written)
    hdr = np.flatnonzero(header_line)
    end_line = ends
    if len(hdr):
        h = np.searchsorted(hdr, stmt_line)
        end_line = np.minimum(ends, np.where(h < len(hdr), hdr[np.minimum(h, len(hdr) - 1)], n))
    bounds = np.r_[ls, len(arr)]
    preamble = lines[0] if len(lines) else n
    preamble_lines = int(np.count_nonzero(~header_line[:preamble] & (arr[ls[:preamble]] != 10)))
    stmt = bounds[stmt_line] + np.where(admin[np.minimum(stmt_line, n - 1)] & (stmt_line < n), 2, 0)
    return _Entries(
        data=data,
        start=bounds[lines],
        stmt=stmt,
        end=bounds[end_line],
        line_no=lines + first_line,
        line_end=np.maximum(end_line - 1, lines) + first_line,
        headers=headers,
        preamble_lines=preamble_lines,
        arr=arr,
        line_starts=ls,
        heads=heads,
    )


#: Literal parts of the header's lines: a header line is looked for only where one occurs.
_HEADER_WORDS = (b", Version: ", b"Tcp port: ", b"TCP Port: ", b"Id Command")


def _headers(data: bytes) -> list[re.Match[bytes]]:
    """The header lines of a block (``_HEADER``), in order."""
    found: dict[int, re.Match[bytes]] = {}
    for word in _HEADER_WORDS:
        at = data.find(word)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            m = _HEADER.match(data, start)
            if m is not None:
                found[start] = m
            at = data.find(word, at + 1)
    return [found[k] for k in sorted(found)]


def _matches(
    e: _Entries, pattern: re.Pattern[bytes], line: bytes = b""
) -> tuple[np.ndarray, list[tuple[bytes, ...]]]:
    """The entries ``pattern`` is found in the meta lines of (index array) and its groups there;
    with ``line``, only at the start of the lines that begin with it (a pattern led by ``^`` would be
    tried at every position of the block, where a literal is searched for)."""
    if line:
        match = pattern.match
        data = e.data
        found = [(pos, m.groups()) for pos in e.lines_with(line) if (m := match(data, pos)) is not None]
    else:
        found = [(m.start(), m.groups()) for m in pattern.finditer(e.data)]
    if not found:
        return np.empty(0, dtype=np.int64), []
    owner = e.owner([pos for pos, _ in found])
    keep = np.flatnonzero(owner >= 0)
    return owner[keep], [found[i][1] for i in keep.tolist()]


def _numbers(values: Iterable[bytes]) -> np.ndarray:
    """Numbers written in the log (``0.000212``, ``2000``) as float64."""
    return np.array(list(values), dtype="S").astype("float64")


def _texts(values: list[bytes]) -> list[str]:
    """Byte strings decoded (UTF-8, bad bytes replaced) at once."""
    joined = b"\x00".join(values).decode("utf-8", "replace")
    out = joined.split("\x00")
    return out if len(out) == len(values) else [v.decode("utf-8", "replace") for v in values]


def _column(n: int, idx: np.ndarray, values: np.ndarray | list[object], fill: object) -> np.ndarray:
    out = np.full(n, fill, dtype=object if isinstance(fill, str) else "float64")
    if len(idx):
        out[idx] = values
    return out


_NAT = np.iinfo(np.int64).min
_ZONED = re.compile(r"(?:Z|[+-]\d{2}:?\d{2})$")


def _wall_ns(values: list[str]) -> np.ndarray:
    """Wall-clock ``# Time:`` values (``261207 2:34:07`` of MySQL 5.6 and MariaDB, white space
    collapsed; or ISO without a zone) as int64 ns (``_NAT`` where unreadable)."""
    out = np.full(len(values), _NAT, dtype=np.int64)
    short = np.array([len(v) > 6 and v[6] == " " for v in values])
    for mask, fmt in ((short, "%y%m%d %H:%M:%S"), (~short, "ISO8601")):
        if mask.any():
            picked = [v for v, m in zip(values, mask.tolist(), strict=True) if m]
            out[mask] = pd.to_datetime(picked, format=fmt, errors="coerce").as_unit("ns").asi8
    return out


@dataclass(slots=True)
class _Clock:
    """The log's time as read so far: the last ``# Time:`` (UTC ns), the wall-clock offsets the
    ``SET timestamp`` epochs gave, the styles of ``# Time:`` seen."""

    hint_offset_s: int | None
    last_ns: int = _NAT
    offsets: Counter[int] = field(default_factory=Counter)
    styles: Counter[str] = field(default_factory=Counter)
    unresolved: int = 0

    @property
    def offset_s(self) -> int | None:
        if self.offsets:
            return self.offsets.most_common(1)[0][0]
        return self.hint_offset_s

    def times(self, e: _Entries, set_s: np.ndarray) -> np.ndarray:
        """Each entry's time, int64 ns UTC (``_NAT`` when nothing tells it)."""
        n = len(e.start)
        own = np.full(n, _NAT, dtype=np.int64)
        idx, groups = _matches(e, _TIME, b"# Time: ")
        if len(idx):
            raw = [g[0].decode("ascii", "replace").strip() for g in groups]
            zoned = np.array([bool(_ZONED.search(r)) for r in raw])
            ns = np.full(len(raw), _NAT, dtype=np.int64)
            if zoned.any():
                z = [r for r, is_z in zip(raw, zoned.tolist(), strict=True) if is_z]
                ns[zoned] = pd.to_datetime(z, utc=True, format="ISO8601", errors="coerce").as_unit("ns").asi8
                self.styles["utc" if z[-1].endswith("Z") else "offset"] += len(z)
            if not zoned.all():
                w = [" ".join(r.split()) for r, is_z in zip(raw, zoned.tolist(), strict=True) if not is_z]
                wall_ns = _wall_ns(w)
                self.styles["wall-clock"] += len(w)
                rows = idx[~zoned]
                paired = (set_s[rows] >= 0) & (wall_ns != _NAT)
                if paired.any():
                    diff = wall_ns[paired] // _NS - set_s[rows][paired]
                    quantized = np.round(diff / OFFSET_QUANTUM_S).astype(np.int64) * OFFSET_QUANTUM_S
                    self.offsets.update(quantized.tolist())
                offset = self.offset_s
                if offset is None:
                    self.unresolved += len(w)
                    ns[~zoned] = wall_ns
                else:
                    ns[~zoned] = np.where(wall_ns != _NAT, wall_ns - offset * _NS, _NAT)
            own[idx] = ns
        # an entry without its own time has the last one before it (pt-query-digest's rule)
        known = np.where(own != _NAT, np.arange(n), -1)
        last = np.maximum.accumulate(known) if n else known
        ts = np.where(last >= 0, own[np.maximum(last, 0)], self.last_ns)
        if n and last[-1] >= 0:
            self.last_ns = int(own[last[-1]])
        # before any # Time: line, the SET timestamp epoch
        return np.where((ts == _NAT) & (set_s >= 0), set_s * _NS, ts)


def _statements(e: _Entries) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's statement as (start, end) byte offsets: its lines less the last line end and
    one ``;`` (pt-query-digest's ``s/;\\n#?\\Z//``); an entry with none has ``end <= start``."""
    arr = np.frombuffer(e.data, dtype=np.uint8)
    end = e.end.copy()
    has = end > e.stmt
    back = np.maximum(end - 1, 0)
    end = np.where(has & (arr[back] == 10), end - 1, end)
    back = np.maximum(end - 1, 0)
    end = np.where((end > e.stmt) & (arr[back] == 59), end - 1, end)
    return e.stmt, end


def _frame(e: _Entries, clock: _Clock) -> tuple[pd.DataFrame, int]:
    """The entries of a block that have a ``Query_time`` and a statement, one row each, and how
    many others there were (cut entries)."""
    n = len(e.start)
    idx, groups = _matches(e, _QUERY_TIME, b"# Query_time: ")
    qt = np.full((n, 4), np.nan)
    if len(idx):
        qt[idx] = _numbers(v for g in groups for v in g).reshape(-1, 4)
    idx, groups = _matches(e, _SET_TIMESTAMP, b"SET timestamp=")
    set_s = np.full(n, -1, dtype=np.int64)
    set_s[idx] = [int(g[0]) for g in groups]
    ts = clock.times(e, set_s)
    s_start, s_end = _statements(e)
    ok = ~np.isnan(qt[:, 0]) & (s_end > s_start)
    rows = np.flatnonzero(ok)
    data = e.data
    frame = pd.DataFrame(
        {
            "statement": _texts(
                [data[a:b] for a, b in zip(s_start[rows].tolist(), s_end[rows].tolist(), strict=True)]
            ),
            "query_time_s": qt[rows, 0],
            "lock_time_s": qt[rows, 1],
            "rows_sent": qt[rows, 2],
            "rows_examined": qt[rows, 3],
            "ts": pd.to_datetime(np.where(ts[rows] == _NAT, _NAT, ts[rows]).astype("datetime64[ns]")),
            "line_no": e.line_no[rows],
            "line_end": e.line_end[rows],
        }
    )
    idx, groups = _matches(e, _USER_HOST, b"# User@Host: ")
    for name, k in (("user", 0), ("host", 1), ("ip", 2)):
        frame[name] = _column(n, idx, _texts([g[k].strip() for g in groups]), "")[rows]
    frame["host"] = frame["host"].where(frame["host"] != "", frame["ip"])
    schema = np.full(n, "", dtype=object)
    idx, groups = _matches(e, _SCHEMA)
    schema[idx] = _texts([g[0] for g in groups])
    idx, groups = _matches(e, _USE, b"use ")
    schema[idx] = [s.strip("`") for s in _texts([g[0].strip() for g in groups])]
    frame["schema"] = schema[rows]
    for name, pattern in _EXTRA_RE.items():
        if name + b": " in data:
            idx, groups = _matches(e, pattern)
            col = EXTRA_FIELDS[name]
            values = _column(n, idx, _numbers(g[0] for g in groups), np.nan)[rows]
            frame[col] = values if col not in frame else frame[col].fillna(pd.Series(values))
    for name, pattern in _FLAG_RE.items():
        if name + b": " in data:
            idx, groups = _matches(e, pattern)
            flags = _column(n, idx, [float(g[0] == b"Yes") for g in groups], np.nan)
            frame[FLAG_FIELDS[name]] = flags[rows]
    return frame, n - len(rows)


@dataclass(slots=True)
class _Seen:
    """What ``parse`` says of the log besides its entries: server versions in its headers, entries
    without a statement or ``Query_time`` (the first one's line), stray lines before the first entry."""

    versions: list[str] = field(default_factory=list)
    headers: int = 0
    cut: int = 0
    cut_line: int = 0
    stray: int = 0
    stray_line: int = 0


def _read_block(e: _Entries, clock: _Clock, digest: _Digest, seen: _Seen, first_line: int) -> None:
    for m in e.headers:
        seen.headers += 1
        v = _VERSION.search(m.group(0))
        if v is not None:
            seen.versions.append(v.group(1).decode("ascii", "replace"))
    if e.preamble_lines and not seen.stray:
        seen.stray_line = first_line
    seen.stray += e.preamble_lines
    frame, cut = _frame(e, clock)
    if cut:
        ok = set(frame["line_no"].tolist())
        first_cut = next((int(x) for x in e.line_no.tolist() if x not in ok), 0)
        seen.cut_line = seen.cut_line or first_cut
        seen.cut += cut
    digest.add(frame)


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a slow query log into ``slowlog``, ``slowlog_classes`` and ``slowlog_clients``; see the
    module docstring."""
    time = _Clock(hint_offset_s=clock.utc_offset_s)
    digest = _Digest()
    seen = _Seen()
    for first_line, text in text_chunks(raw_blocks(stream, BLOCK_CHARS), _entry_start):
        data = text.encode("utf-8", "replace")
        _read_block(_entries(data, first_line), time, digest, seen, first_line)
    if not digest.entries and (seen.cut or seen.stray):
        raise ParseError(
            member,
            seen.cut_line or seen.stray_line or 1,
            "",
            "no slow log entry with a Query_time and a statement",
        )
    warnings = _warnings(seen, time)
    minutes = (
        _fold_minutes(digest.minutes)
        if digest.minutes
        else pd.DataFrame(columns=["ts", "queries", "line_no", "line_end", *_SUMS])
    )
    minutes["ts"] = (
        pd.to_datetime(minutes["ts"]).dt.tz_localize("UTC")
        if len(minutes)
        else pd.Series([], dtype="datetime64[ns, UTC]")
    )
    minutes = minutes.astype(
        {
            "queries": "int64",
            "line_no": "int64",
            "line_end": "int64",
            "rows_sent": "int64",
            "rows_examined": "int64",
        }
    )
    minutes.insert(1, "ts_source", "line")
    clients = (
        _fold_clients(digest.clients)
        if digest.clients
        else pd.DataFrame(columns=["user", "host", "ip", "schema", "queries", "ts", "line_no"])
    )
    clients["ts"] = (
        pd.to_datetime(clients["ts"]).dt.tz_localize("UTC")
        if len(clients)
        else pd.Series([], dtype="datetime64[ns, UTC]")
    )
    clients = clients[["ts", "line_no", "user", "host", "ip", "schema", "queries"]].astype(
        {"line_no": "int64", "queries": "int64"}
    )
    classes = digest.classes_frame()
    # every frame has a ts (the timeline joins frames by it): the log's first minute on every row of
    # the digest, which is of the whole log (a class's own first time, as ts, would read as a clock
    # jump to the damage checks when a class first appears days after the others)
    start = minutes["ts"].min() if len(minutes) else pd.NaT
    classes.insert(0, "ts", pd.Series([start] * len(classes), dtype="datetime64[ns, UTC]"))
    clients = clients.rename(columns={"ts": "first_seen"})
    clients.insert(0, "ts", pd.Series([start] * len(clients), dtype="datetime64[ns, UTC]"))
    meta = _meta(seen, time, digest, classes)
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={
            "slowlog": minutes,
            "slowlog_classes": classes,
            "slowlog_class_minutes": _class_minutes_frame(digest.class_minutes),
            "slowlog_clients": clients,
        },
        clock=Clock.PER_LINE,
        warnings=warnings,
        meta=meta,
        ts_is_local=bool(time.unresolved),
    )


def _warnings(seen: _Seen, time: _Clock) -> list[ParseWarning]:
    out = []
    if seen.stray:
        out.append(
            ParseWarning(
                seen.stray_line, "no-entry", f"{seen.stray} lines before the first entry were skipped"
            )
        )
    if seen.cut:
        out.append(
            ParseWarning(
                seen.cut_line,
                "cut-entry",
                (
                    f"{seen.cut} entries without a Query_time line or a statement (a log cut mid-entry) are "
                    "not counted"
                ),
            )
        )
    if time.unresolved:
        out.append(
            ParseWarning(
                0,
                "wall-clock",
                "the # Time: lines are the server's wall clock and no SET timestamp line gives its offset: "
                "the first and last seen of each class stay on that clock",
            )
        )
    return out


def _meta(seen: _Seen, time: _Clock, digest: _Digest, classes: pd.DataFrame) -> dict[str, object]:
    style = time.styles.most_common(1)[0][0] if time.styles else "none"
    version = seen.versions[-1] if seen.versions else None
    server = f"server {version}" if version else "server version unknown"
    flavour = {
        "utc": "ISO times in UTC (MySQL 5.7+, log_timestamps=UTC)",
        "offset": "ISO times with an offset (MySQL 5.7+, log_timestamps=SYSTEM)",
        "wall-clock": "wall-clock times (MariaDB, MySQL 5.6)",
        "none": "no # Time: lines",
    }[style]
    meta: dict[str, object] = {
        "variant": f"slow query log, {server}, {flavour}, {digest.entries} entries, {len(classes)} classes",
        "entries": digest.entries,
        "time_style": style,
        "headers": seen.headers,
    }
    if version:
        meta["server_version"] = version
    if "wall-clock" in time.styles and time.offset_s is not None:
        meta["utc_offset_s"] = time.offset_s
    return meta


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    statements=("slowlog_classes.example",),
    users=("slowlog_classes.user", "slowlog_clients.user"),
    hosts=("slowlog_classes.host", "slowlog_clients.host", "slowlog_clients.ip"),
    schemas=("slowlog_classes.schema", "slowlog_clients.schema"),
    line_patterns=(
        re.compile(
            r"^# User@Host: (?P<user>[^\[\s]*)\[(?P<user_2>[^\]]*)\] @ ?(?P<host>[^\s\[]*) "
            r"?\[(?P<host_2>[^\]]*)\]"
        ),
        re.compile(r"\bSchema: (?P<schema>[^\s]+)"),
        re.compile(r"^use `?(?P<schema>[^`;]+)`?;"),
        re.compile(r"^# administrator command: (?P<statement>.*)"),
        # every line that is none of the entry's own lines is statement text
        re.compile(
            r"^(?!#|use |SET (?:timestamp|last_insert_id|insert_id)=|\S*(?:mysqld|mariadbd)(?:\.exe)?, "
            r"Version: "
            r"|T[cC][pP] [pP]ort: |Time\s+Id\s+Command)(?P<statement>.+)"
        ),
    ),
)
