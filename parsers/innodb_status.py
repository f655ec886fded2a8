"""Parse SHOW ENGINE INNODB STATUS (pt-stalk ``-innodbstatus1`` / ``-innodbstatus2``): the InnoDB monitor.

Accepts:
    ``mysql -e 'SHOW ENGINE INNODB STATUS\\G'`` (pt-stalk), the bare monitor text (error log,
    ``innodb_status_output``, a paste), ``mysql -B`` output where the status is one line with
    ``\\n`` escapes; one or several monitor outputs per member, each optionally after a ``TS``
    marker. Versions: MySQL 5.5-5.7 (``Mutex spin waits``, ``Pending normal aio reads: 0 [0, 0]``,
    ``YYMMDD HH:MM:SS`` header), MySQL 8.0/8.4 and Percona Server 8.0 (``Log buffer assigned up
    to``, ``Checkpoint age``/``Max checkpoint age`` since 8.0.30, header with thread id), Percona
    Server 5.x (``Checkpoint age target``), MariaDB 10.x/11.x (``Pending flushes (fsync): 0``, no
    row-operation counters when idle, a ``0x...`` thread id in the header).

Sample input (``SHOW ENGINE INNODB STATUS\\G``, Percona Server 8.0.42, pt-stalk 3.7.1)::

    =====================================
    2026-04-21 16:51:42 139787482629888 INNODB MONITOR OUTPUT
    =====================================
    Per second averages calculated from the last 26 seconds
    ----------
    SEMAPHORES
    ----------
    OS WAIT ARRAY INFO: reservation count 157492
    --Thread 139788369176320 has waited at buf0buf.cc line 3207 for 0 seconds the semaphore:
    Mutex at 0x7f23342f75d0, Mutex BUF_POOL_LRU_LIST created buf0buf.cc:1316, locked by nobody
    ------------
    TRANSACTIONS
    ------------
    History list length 133
    ---TRANSACTION 68798, ACTIVE 0 sec starting index read
    1 lock struct(s), heap size 1128, 0 row lock(s)
    MySQL thread id 1116, OS thread handle 139788241831680, query id 590416 _gateway 172.31.10.1 sysbench updating
    UPDATE sbtest9 SET k=k+1 WHERE id=351342
    ---
    LOG
    ---
    Log sequence number          3016146630
    Last checkpoint at           2991045688

Output (``ts``: the monitor header's time, the server's wall clock, ``ts_is_local``; or the ``TS``
marker before it):
    ``innodb_status`` (one row per monitor output): ``ts``, ``line_no``, ``line_end`` int64, and
    float64 columns (NaN when the version does not print them): ``averaged_s`` (s), ``os_wait_reservations``,
    ``os_wait_signals``, ``semaphore_waits`` (threads waiting), ``semaphore_max_wait_s`` (s),
    ``trx_id_counter``, ``history_list_length`` (undo log records not yet purged), ``transactions_active``,
    ``oldest_active_s`` (s), ``lock_wait_transactions``, ``pending_aio_reads``, ``pending_aio_writes``,
    ``pending_ibuf_reads``, ``pending_log_io``, ``pending_sync_io``, ``pending_fsync_log``,
    ``pending_fsync_pool``, ``os_file_reads``, ``os_file_writes``, ``os_fsyncs``, ``lsn``,
    ``log_flushed_lsn``, ``pages_flushed_lsn``, ``checkpoint_lsn``, ``checkpoint_age_bytes``
    (``lsn`` - ``checkpoint_lsn``), ``max_checkpoint_age_bytes``, ``pending_log_writes``,
    ``pending_chkp_writes``, ``log_ios``, ``pool_pages``, ``pool_bytes``, ``free_pages``,
    ``database_pages``, ``modified_pages``, ``pending_reads``, ``pending_writes_lru``,
    ``pending_writes_flush_list``, ``pending_writes_single_page``, ``hit_rate_per_1000``,
    ``queries_inside``, ``queries_queued``, ``read_views``, ``rows_inserted``, ``rows_updated``,
    ``rows_deleted``, ``rows_read`` (counters since start), ``deadlock_age_s`` (s from the latest
    detected deadlock to this output; NaN when none is shown).
    ``innodb_semaphores``: ``ts``, ``line_no``, ``thread`` string, ``wait_file`` string
    (``btr0sea.cc``), ``wait_line`` int64, ``seconds`` float64, ``latch`` string (the line that
    says what is waited for, e.g. ``S-lock on RW-latch ... created in file dict0dict.cc line 1107``).
    ``innodb_transactions``: ``ts``, ``line_no``, ``line_end``, ``trx_id`` string, ``state`` string
    (``ACTIVE``, ``ACTIVE (PREPARED)``, ``not started``, ``COMMITTED IN MEMORY``), ``active_s``
    float64, ``operation`` string, ``lock_wait`` bool, ``lock_structs``, ``row_locks``,
    ``undo_entries``, ``thread_id``, ``query_id`` float64, ``client`` string (host, user, state),
    ``query`` string.
    ``innodb_deadlock``: one row per transaction of the latest deadlock shown: ``ts``, ``line_no``,
    ``n`` int64 (1, 2 ...), ``trx_id``, ``thread_id`` float64, ``query`` string, ``waits_for``
    string, ``holds`` string, ``rolled_back`` bool, ``age_s`` float64.
    ``meta``: ``variant`` (the flavour the lines show), ``samples``.

Warnings: ``truncated`` (no ``END OF INNODB MONITOR OUTPUT``), ``no-start-time``.

Errors: ``ParseError`` (member, line) when no ``INNODB MONITOR OUTPUT`` header is found, or a
header's time cannot be read.

Source: MySQL 8.4 Reference Manual 17.17.3 "InnoDB Standard Monitor and Lock Monitor Output";
storage/innobase srv0srv.cc, lock0lock.cc, log0log.cc (MySQL and MariaDB).

>>> src = parse(["=====", "2026-04-21 16:51:42 0x7f16 INNODB MONITOR OUTPUT", "History list length 133",
...   "Log sequence number 3016146630", "Last checkpoint at  2991045688", "END OF INNODB MONITOR OUTPUT"],
...   member="i", clock=ClockHints())
>>> src.main[["history_list_length", "checkpoint_age_bytes"]].values.tolist()
[[133.0, 25100942.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from parsers.base import (
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    iter_lines,
    parse_marker,
)
from parsers.sensitive import Sensitive

FORMAT = "innodb_status"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

_HEADER = re.compile(
    r"^(?:\S+\s+)?(?P<t>\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}:\d{2}|\d{6} {1,2}\d{1,2}:\d{2}:\d{2})"
    r"(?: (?:0x)?[0-9a-f]+)? INNODB MONITOR OUTPUT"
)
_END = "END OF INNODB MONITOR OUTPUT"
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}:\d{2}|\d{6} {1,2}\d{1,2}:\d{2}:\d{2})")

#: Single-value lines: regex -> the columns its groups fill (first occurrence per output wins:
#: the per-instance BUFFER POOL sections repeat the names after the totals).
_SCALARS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(p), cols)
    for p, cols in (
        (r"^Per second averages calculated from the last (\d+) seconds", ("averaged_s",)),
        (r"^OS WAIT ARRAY INFO: reservation count (\d+)", ("os_wait_reservations",)),
        (r"signal count (\d+)", ("os_wait_signals",)),
        (r"^Trx id counter (\d+)", ("trx_id_counter",)),
        (r"^History list length (\d+)", ("history_list_length",)),
        ((r"^Pending normal aio reads: ?(\d+)?(?: ?\[([\d, ]*)\])?\s*,?\s*aio writes: ?(\d+)?(?: ?\[([\d, "
          r"]*)\])?"), ("_r", "_rb", "_w", "_wb")),
        (r"^ ?ibuf aio reads:? ?(\d+)?,? log i/o's:? ?(\d+)?,? sync i/o's:? ?(\d+)?", ("pending_ibuf_reads", "pending_log_io", "pending_sync_io")),
        (r"^Pending flushes \(fsync\) log: (\d+); buffer pool: (\d+)", ("pending_fsync_log", "pending_fsync_pool")),
        (r"^Pending flushes \(fsync\): (\d+)", ("pending_fsync_log",)),
        (r"^(\d+) OS file reads, (\d+) OS file writes, (\d+) OS fsyncs", ("os_file_reads", "os_file_writes", "os_fsyncs")),
        (r"^Log sequence number\s+(\d+)$", ("lsn",)),
        (r"^Log flushed up to\s+(\d+)$", ("log_flushed_lsn",)),
        (r"^Pages flushed up to\s+(\d+)$", ("pages_flushed_lsn",)),
        (r"^Last checkpoint at\s+(\d+)$", ("checkpoint_lsn",)),
        (r"^Max checkpoint age\s+(\d+)", ("max_checkpoint_age_bytes",)),
        (r"^(\d+) pending log (?:writes|flushes), (\d+) pending chkp writes", ("pending_log_writes", "pending_chkp_writes")),
        (r"^(\d+) log i/o's done", ("log_ios",)),
        (r"^Buffer pool size\s+(\d+)$", ("pool_pages",)),
        (r"^Buffer pool size, bytes\s+(\d+)", ("pool_bytes",)),
        (r"^Free buffers\s+(\d+)", ("free_pages",)),
        (r"^Database pages\s+(\d+)", ("database_pages",)),
        (r"^Modified db pages\s+(\d+)", ("modified_pages",)),
        (r"^Pending reads:?\s+(\d+)", ("pending_reads",)),
        (r"^Pending writes: LRU (\d+), flush list (\d+)(?:,? single page (\d+))?", ("pending_writes_lru", "pending_writes_flush_list", "pending_writes_single_page")),
        (r"^Buffer pool hit rate (\d+) / 1000", ("hit_rate_per_1000",)),
        (r"^(\d+) queries inside InnoDB, (\d+) queries in queue", ("queries_inside", "queries_queued")),
        (r"^(\d+) read views open inside InnoDB", ("read_views",)),
        (r"^Number of rows inserted (\d+), updated (\d+), deleted (\d+), read (\d+)", ("rows_inserted", "rows_updated", "rows_deleted", "rows_read")),
    )
)  # fmt: skip
COLUMNS = (
    "averaged_s", "os_wait_reservations", "os_wait_signals", "semaphore_waits", "semaphore_max_wait_s",
    "trx_id_counter", "history_list_length", "transactions_active", "oldest_active_s",
    "lock_wait_transactions", "pending_aio_reads", "pending_aio_writes", "pending_ibuf_reads",
    "pending_log_io", "pending_sync_io", "pending_fsync_log", "pending_fsync_pool", "os_file_reads",
    "os_file_writes", "os_fsyncs", "lsn", "log_flushed_lsn", "pages_flushed_lsn", "checkpoint_lsn",
    "checkpoint_age_bytes", "max_checkpoint_age_bytes", "pending_log_writes", "pending_chkp_writes",
    "log_ios", "pool_pages", "pool_bytes", "free_pages", "database_pages", "modified_pages",
    "pending_reads", "pending_writes_lru", "pending_writes_flush_list", "pending_writes_single_page",
    "hit_rate_per_1000", "queries_inside", "queries_queued", "read_views", "rows_inserted",
    "rows_updated", "rows_deleted", "rows_read", "deadlock_age_s",
)  # fmt: skip
_SEMAPHORE = re.compile(r"^--Thread (\d+) has waited at (\S+) line (\d+) for ([\d.]+) seconds the semaphore")
_TRX = re.compile(
    r"^---TRANSACTION (?:(\d+) )?(\S+?),\s+(ACTIVE(?: \(PREPARED\))?|not started|COMMITTED IN MEMORY|"
    r"ROLLED BACK|PREPARED)(?:,? (\d+) sec)?\s*(.*)$"
)
_DL_TRX = re.compile(
    r"^TRANSACTION (?:(\d+) )?(\S+?), (ACTIVE(?: \(PREPARED\))?|not started)(?:,? (\d+) sec)?"
)
#: Deadlock parts: MySQL numbers each (``*** (1) HOLDS THE LOCK(S):``); MariaDB numbers only the
#: transaction and says ``*** WAITING FOR THIS LOCK TO BE GRANTED:`` / ``*** CONFLICTING WITH:`` after it.
_DL_PART = re.compile(
    r"^\*\*\* (?:\((\d+)\) )?(TRANSACTION|WAITING FOR THIS LOCK|HOLDS THE LOCK|CONFLICTING WITH)"
)
_LOCKS = re.compile(
    r"(?:LOCK WAIT )?(\d+) lock struct\(s\), heap size \d+, (\d+) row lock\(s\)(?:, undo log entries (\d+))?"
)
_THREAD = re.compile(r"^(?:MySQL|MariaDB) thread id (\d+), OS thread handle \S+?,? query id (\d+)\s*(.*)$")
_SECTION_RULE = re.compile(r"^-{3,}$|^={3,}$")
_TRX_DETAIL = (
    "mysql tables in use",
    "Trx read view",
    "------- TRX HAS BEEN",
    "RECORD LOCKS",
    "TABLE LOCK",
    "Record lock",
    " ",
    "Trx #rec lock",
    "---BUFFER POOL",
    "*** ",
    "Trx has approximately",
    "Trx id counter",
)


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds an ``INNODB MONITOR OUTPUT`` header (or ``Type: InnoDB`` with
    ``Status:``, the start of ``SHOW ENGINE INNODB STATUS\\G``)."""
    if any("INNODB MONITOR OUTPUT" in line for line in head):
        return True
    keys = [line.strip() for line in head]
    return "Type: InnoDB" in keys and any(k.startswith("Status:") for k in keys)


def _lines(stream: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Lines numbered; a ``mysql -B`` line holding the whole status with ``\\n`` escapes is expanded
    (its pieces keep that line's number)."""
    for no, line in iter_lines(stream):
        if "\\n" in line and "INNODB MONITOR OUTPUT" in line:
            for piece in line.replace("\\t", "\t").split("\\n"):
                yield no, piece
        else:
            yield no, line


def _stamp(text: str, member: str, no: int) -> pd.Timestamp:
    fmt = "%Y-%m-%d %H:%M:%S" if "-" in text else "%y%m%d %H:%M:%S"
    try:
        return pd.to_datetime(re.sub(r" +", " ", text), format=fmt)
    except ValueError:
        raise ParseError(member, no, text, f"unreadable monitor time {text!r}") from None


class _Sample:
    """What one monitor output says, filled line by line."""

    def __init__(self, ts: pd.Timestamp, line_no: int) -> None:
        self.ts = ts
        self.line_no = line_no
        self.line_end = line_no
        self.values: dict[str, float] = {}
        self.semaphores: list[dict] = []
        self.trx: list[dict] = []
        self.deadlock: list[dict] = []
        self.deadlock_at: pd.Timestamp | None = None
        self.section = ""
        self.complete = False
        self.flags: set[str] = set()

    def scalar(self, line: str) -> None:
        for flag in _FLAVOUR_LINES:
            if line.startswith(flag):
                self.flags.add(flag)
        for rx, cols in _SCALARS:
            m = rx.search(line)
            if m is None:
                continue
            for col, value in zip(cols, m.groups(), strict=True):
                if col == "_rb" or col == "_wb":
                    target = "pending_aio_reads" if col == "_rb" else "pending_aio_writes"
                    if value is not None and target not in self.values:
                        self.values[target] = float(
                            sum(int(x) for x in value.replace(" ", "").split(",") if x)
                        )
                elif col in ("_r", "_w"):
                    target = "pending_aio_reads" if col == "_r" else "pending_aio_writes"
                    if value is not None:
                        self.values[target] = float(value)
                elif value is not None and col not in self.values:
                    self.values[col] = float(value)

    def transaction(self, no: int, line: str) -> bool:
        m = _TRX.match(line)
        if m:
            self.trx.append(
                {
                    "line_no": no,
                    "line_end": no,
                    "trx_id": m.group(2),
                    "state": m.group(3),
                    "active_s": float(m.group(4)) if m.group(4) else np.nan,
                    "operation": m.group(5).strip(),
                    "lock_wait": False,
                    "query": [],
                }
            )
            return True
        if not self.trx:
            return False
        t = self.trx[-1]
        lm = _LOCKS.search(line)
        if lm and "lock_structs" not in t:
            t.update(lock_structs=float(lm.group(1)), row_locks=float(lm.group(2)))
            t["undo_entries"] = float(lm.group(3)) if lm.group(3) else np.nan
            t["lock_wait"] = t["lock_wait"] or line.startswith("LOCK WAIT")
        elif (tm := _THREAD.match(line)) is not None:
            t.update(thread_id=float(tm.group(1)), query_id=float(tm.group(2)), client=tm.group(3).strip())
        elif line.startswith("------- TRX HAS BEEN WAITING"):
            t["lock_wait"] = True
        elif "thread_id" in t and not line.startswith(_TRX_DETAIL) and line.strip():
            t["query"].append(line)
        else:
            return True
        t["line_end"] = no
        return True

    def deadlock_line(self, no: int, line: str) -> None:
        if self.deadlock_at is None and (m := _STAMP.match(line)):
            self.deadlock_at = pd.to_datetime(re.sub(r" +", " ", m.group(1)), errors="coerce", format="mixed")
            return
        head = _DL_PART.match(line)
        if head:
            current = getattr(self, "_dl_part", (0, ""))[0]
            n = int(head.group(1)) if head.group(1) else current
            if not n:
                return
            while len(self.deadlock) < n:
                self.deadlock.append(
                    {"line_no": no, "n": len(self.deadlock) + 1, "query": [], "waits_for": "", "holds": ""}
                )
            self._dl_part = (n, head.group(2))
            return
        if line.startswith("*** WE ROLL BACK TRANSACTION"):
            rolled = re.search(r"\((\d+)\)", line)
            for d in self.deadlock:
                d["rolled_back"] = bool(rolled) and d["n"] == int(rolled.group(1))
            self._dl_part = (0, "")
            return
        n, part = getattr(self, "_dl_part", (0, ""))
        if not n:
            return
        d = self.deadlock[n - 1]
        if part == "TRANSACTION":
            if (m := _DL_TRX.match(line)) is not None:
                d["trx_id"] = m.group(2)
            elif (tm := _THREAD.match(line)) is not None:
                d["thread_id"] = float(tm.group(1))
            elif "thread_id" in d and line.strip() and not line.startswith(_TRX_DETAIL + ("LOCK WAIT",)):
                d["query"].append(line)
        elif line.startswith(("RECORD LOCKS", "TABLE LOCK")):
            key = "waits_for" if part.startswith("WAITING") else "holds"
            if not d[key]:
                d[key] = line.strip()


def _samples(lines: Iterable[tuple[int, str]], member: str, warnings: list[ParseWarning]) -> list[_Sample]:
    samples: list[_Sample] = []
    cur: _Sample | None = None
    marker_ts: pd.Timestamp | None = None
    prev = ""
    for no, line in lines:
        if line.startswith("TS "):
            marker = parse_marker(line)
            if marker is not None:
                marker_ts = marker.ts
                continue
        hm = _HEADER.match(line) if "INNODB MONITOR OUTPUT" in line else None
        if hm:
            if cur is not None and not cur.complete:
                warnings.append(ParseWarning(cur.line_no, "truncated", "monitor output without its END line"))
            cur = _Sample(_stamp(hm.group("t"), member, no), no)
            cur.marker_ts = marker_ts  # type: ignore[attr-defined]
            marker_ts = None
            samples.append(cur)
            continue
        if cur is None or cur.complete:
            continue
        cur.line_end = no
        if _END in line:
            cur.complete = True
            continue
        if _SECTION_RULE.match(prev) and line.strip() and line.strip().upper() == line.strip():
            cur.section = line.strip()
        prev = line
        if _SECTION_RULE.match(line):
            continue
        if cur.section == "LATEST DETECTED DEADLOCK":
            cur.deadlock_line(no, line)
            continue
        if cur.section == "SEMAPHORES" and (sm := _SEMAPHORE.match(line)):
            cur.semaphores.append(
                {
                    "line_no": no,
                    "thread": sm.group(1),
                    "wait_file": sm.group(2),
                    "wait_line": int(sm.group(3)),
                    "seconds": float(sm.group(4)),
                    "latch": "",
                }
            )
            continue
        if (
            cur.section == "SEMAPHORES"
            and cur.semaphores
            and not cur.semaphores[-1]["latch"]
            and line.strip()
        ):
            if not line.startswith(("OS WAIT", "--Thread", "Mutex spin", "RW-")):
                cur.semaphores[-1]["latch"] = line.strip()[:300]
        if cur.section == "TRANSACTIONS" and cur.transaction(no, line):
            continue
        cur.scalar(line)
    if cur is not None and not cur.complete:
        warnings.append(ParseWarning(cur.line_no, "truncated", "monitor output without its END line"))
    return samples


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read SHOW ENGINE INNODB STATUS output(s) into the frames of the module docstring."""
    warnings: list[ParseWarning] = []
    samples = _samples(_lines(stream), member, warnings)
    if not samples:
        raise ParseError(member, 1, "", "no 'INNODB MONITOR OUTPUT' header: not SHOW ENGINE INNODB STATUS")
    marked = all(getattr(s, "marker_ts", None) is not None for s in samples)
    times = [s.marker_ts if marked else s.ts.tz_localize("UTC") for s in samples]  # type: ignore[attr-defined]
    rows, sems, trxs, dls = [], [], [], []
    for s, ts in zip(samples, times, strict=True):
        v = dict(s.values)
        v["semaphore_waits"] = float(len(s.semaphores))
        v["semaphore_max_wait_s"] = max((x["seconds"] for x in s.semaphores), default=0.0)
        active = [t for t in s.trx if t["state"].startswith("ACTIVE")]
        v["transactions_active"] = float(len(active))
        v["oldest_active_s"] = float(np.nanmax([t["active_s"] for t in active])) if active else 0.0
        v["lock_wait_transactions"] = float(sum(t["lock_wait"] for t in s.trx))
        if "lsn" in v and "checkpoint_lsn" in v:
            v["checkpoint_age_bytes"] = v["lsn"] - v["checkpoint_lsn"]
        age = (s.ts - s.deadlock_at).total_seconds() if s.deadlock_at is not None else np.nan
        v["deadlock_age_s"] = age
        rows.append(
            {"ts": ts, "line_no": s.line_no, "line_end": s.line_end, **{c: v.get(c, np.nan) for c in COLUMNS}}
        )
        sems += [{"ts": ts, **x} for x in s.semaphores]
        for t in s.trx:
            trxs.append(
                {
                    "ts": ts,
                    **{k: t.get(k, np.nan) for k in _TRX_COLUMNS},
                    "query": "\n".join(t["query"])[:4000],
                }
            )
        for d in s.deadlock:
            dls.append(
                {
                    "ts": ts,
                    "line_no": d["line_no"],
                    "n": d["n"],
                    "trx_id": d.get("trx_id", ""),
                    "thread_id": d.get("thread_id", np.nan),
                    "query": "\n".join(d["query"])[:4000],
                    "waits_for": d["waits_for"],
                    "holds": d["holds"],
                    "rolled_back": bool(d.get("rolled_back", False)),
                    "age_s": age,
                }
            )
    frames = {
        "innodb_status": _frame(rows, {"line_end": "int64", **dict.fromkeys(COLUMNS, "float64")}),
        "innodb_semaphores": _frame(sems, _SEMAPHORE_DTYPES),
        "innodb_transactions": _frame(trxs, {"line_end": "int64", **_TRX_COLUMNS_DTYPES, "query": "string"}),
        "innodb_deadlock": _frame(dls, _DEADLOCK_DTYPES),
    }
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames=frames,
        clock=Clock.TS_MARKER if marked else Clock.PER_LINE,
        warnings=warnings,
        meta={"samples": len(samples), "variant": _variant(rows[0], samples[0])},
        ts_is_local=not marked,
    )


_TRX_COLUMNS_DTYPES = {
    "trx_id": "string", "state": "string", "active_s": "float64", "operation": "string", "lock_wait": "bool",
    "lock_structs": "float64", "row_locks": "float64", "undo_entries": "float64", "thread_id": "float64",
    "query_id": "float64", "client": "string",
}  # fmt: skip
_TRX_COLUMNS = ("line_no", "line_end", *_TRX_COLUMNS_DTYPES)
_SEMAPHORE_DTYPES = {
    "thread": "string",
    "wait_file": "string",
    "wait_line": "int64",
    "seconds": "float64",
    "latch": "string",
}
_DEADLOCK_DTYPES = {
    "n": "int64",
    "trx_id": "string",
    "thread_id": "float64",
    "query": "string",
    "waits_for": "string",
    "holds": "string",
    "rolled_back": "bool",
    "age_s": "float64",
}


def _frame(rows: list[dict], dtypes: dict[str, str]) -> pd.DataFrame:
    cols = {"ts": "datetime64[ns, UTC]", "line_no": "int64", **dtypes}
    if not rows:
        return pd.DataFrame({c: pd.Series([], dtype=d) for c, d in cols.items()})
    frame = pd.DataFrame(rows, columns=list(cols))
    for c, d in cols.items():
        if d == "string":
            frame[c] = frame[c].where(frame[c].notna(), None).astype("string")
        elif d == "bool":
            frame[c] = frame[c].fillna(False).astype(bool)
        elif c == "ts":
            frame[c] = pd.to_datetime(frame[c], utc=True).astype("datetime64[ns, UTC]")
        else:
            frame[c] = frame[c].astype(d)
    return frame


#: Lines whose presence tells the server's family (first match in this order names it).
_FLAVOUR_LINES = {
    "Checkpoint age target": "Percona Server 5.x",
    "Mutex spin waits": "MySQL 5.5-5.6",
    "Log buffer assigned up to": "MySQL/Percona 8.0+",
    "RW-sx spins": "MySQL 5.7",
    "Pending flushes (fsync):": "MariaDB 10.x/11.x",
    "Percent of dirty pages": "MariaDB 10.x/11.x",
}


def _variant(row: dict, sample: _Sample) -> str:
    """The flavour the output's lines show (``_FLAVOUR_LINES``)."""
    flavour = next((name for line, name in _FLAVOUR_LINES.items() if line in sample.flags), "MySQL 5.x")
    if "Log buffer assigned up to" in sample.flags and not np.isnan(row["max_checkpoint_age_bytes"]):
        flavour += " with checkpoint age lines"
    return f"SHOW ENGINE INNODB STATUS, {flavour}"


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("mysql",),
    statements=("innodb_transactions.query", "innodb_deadlock.query"),
    clients=("innodb_transactions.client",),
    line_patterns=(
        # A record's fields in a lock or foreign key report: the row's own values.
        # A long field is cut: "asc <value>...(total 300 bytes);".
        re.compile(
            r"\b\d+: len \d+; hex (?P<literal>[0-9a-fA-F]+)(?:\.\.\.)?; asc (?P<literal_2>.*?)"
            r"(?:;;|\.\.\.\(total \d+ bytes\);)"
        ),
        re.compile(r"\b(?:MySQL|MariaDB) thread id \d+, OS thread handle \S+,? query id \d+ (?P<host>\S+)"),
    ),
    # The statement under a transaction's "MySQL thread id ..." line, until the next detail line (a
    # section's title comes after a line of dashes: "SET" or "WHERE" alone on a line does not end it).
    statement_after=re.compile(r"^(?:MySQL|MariaDB) thread id \d+, OS thread handle"),
    statement_until=re.compile(
        r"^(?:---|\*\*\* |RECORD LOCKS|TABLE LOCK|Record lock|Trx |mysql tables in use|LOCK WAIT|"
        r"\d+ lock struct|\s*\d+: len|[-=]{3,}\s*$|END OF|TRANSACTION \d|"
        r"(?:MySQL|MariaDB) thread id)"
    ),
)
