"""One timeline per case: every parsed source's frames on UTC, joined by name, with derived columns.

``Timeline.from_sources`` keeps, for each source and stretch of time, the rows of its primary capture
(``analyzer.timeline.primary``: finest interval, then clock, then coverage; overlapping captures and
pt-stalk's ``-overall`` summaries never reach a rule or a chart), joins the frames of the same name in time
order (two pt-stalk collections of the same host, back to back, give one vmstat series), adds a
``member`` column so evidence can point at raw lines, and derives what the rules share:

- ``vmstat`` without its since-boot rows (they average since boot: not this capture's behaviour);
- (``prepare``, per source) ``processlist`` with ``active`` (docs/background.md, "Counting sessions and
  threads right": Command ``Query`` or ``Execute``, not the collector's own SHOW PROCESSLIST, not
  system/daemon rows) and ``fingerprint`` (pt-fingerprint style, ``analyzer.statements.fingerprint``);
- ``ps_threads`` with ``is_mysqld`` (``mysqld`` or ``mariadbd``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analyzer.statements.fingerprint import fingerprint_all, texts_holding
from analyzer.timeline import accounts, irqs, primary
from analyzer.timeline.context import derive as derive_context
from analyzer.timeline.variables import server_variables
from parsers._processlist_rows import SERVER_USERS
from parsers.base import ParsedSource

#: Commands of sessions that run a statement (prepared statements show `Execute`).
ACTIVE_COMMANDS = frozenset({"Query", "Execute"})
#: Command of an idle session (connected, waiting for its client's next statement).
IDLE_COMMANDS = frozenset({"Sleep"})
#: Users of server-internal rows that are never client work (``parsers._processlist_rows.SERVER_USERS``).
INTERNAL_USERS = frozenset(u.decode() for u in SERVER_USERS)
#: The user of a replica's SQL, I/O and worker threads and of Galera's applier threads.
REPLICATION_USER = "system user"
#: The collectors' own statements (pt-stalk, MySQL Shell's collectDiagnostics, scripts/collect.sh,
#: mysqladmin ext) would count themselves as load, or be named as the statement behind a finding: every
#: ``SHOW ...`` (mysqladmin sends `show /*!50002 GLOBAL */ status`), and every read of
#: information_schema, performance_schema or sys (INNODB_TRX, lock waits, threads). Leading comments skipped.
OWN_QUERY = (
    r"^\s*(?:/\*.*?\*/\s*)*show\b"
    r"|^\s*(?:/\*.*?\*/\s*)*select\b.*?\bfrom\s+`?(?:information_schema|performance_schema|sys)`?\s*\."
)


def is_collector_statement(text: str) -> bool:
    """Whether ``text`` (a processlist Info or a fingerprint) is a collector's own statement
    (``OWN_QUERY``): never client load, never a culprit.

    >>> is_collector_statement("select trx_id, trx_mysql_thread_id from information_schema.innodb_trx")
    True
    >>> is_collector_statement("SHOW /*!50002 GLOBAL */ STATUS")
    True
    >>> is_collector_statement("select count(*) from shop.items where pad like ?")
    False
    """
    return bool(re.search(OWN_QUERY, text or "", flags=re.IGNORECASE | re.DOTALL))


_OWN_QUERY = re.compile(OWN_QUERY, re.IGNORECASE | re.DOTALL)
#: Text a collector's statement holds (``OWN_QUERY``: ``show``, or a read of ``information_schema``,
#: ``performance_schema`` or ``sys``), lower-cased: a statement without any of them is not one.
_OWN_QUERY_WORDS = ("show", "_schema", "sys")


def collector_statements(texts: list[str]) -> np.ndarray:
    """``is_collector_statement`` of each of ``texts`` (distinct processlist Info texts), a bool array.

    The pattern runs only on the texts that hold one of ``_OWN_QUERY_WORDS``, found by a substring
    search over all the texts joined and lower-cased at once (when they are ASCII, so that lower-casing
    is the pattern's case folding and keeps every offset): a piece of a processlist has thousands of
    distinct statements and a handful of the collector's.

    >>> collector_statements(["SHOW FULL PROCESSLIST", "SELECT 1", "", "select * from sys.x"]).tolist()
    [True, False, False, True]
    """
    own = np.zeros(len(texts), dtype=bool)
    joined = "\x00".join(texts)
    if not joined.isascii():
        own[:] = [_OWN_QUERY.search(text) is not None for text in texts]
        return own
    for i in texts_holding(texts, joined.lower(), _OWN_QUERY_WORDS):
        own[i] = _OWN_QUERY.search(texts[i]) is not None
    return own


MYSQLD_COMMS = frozenset({"mysqld", "mariadbd"})


#: Text columns of the processlist kept as categories: a few distinct values repeated millions of times.
PROCESSLIST_CATEGORIES = ("user", "host", "db", "command", "state", "fingerprint", "member")
#: processlist columns the analysis keeps (the rest is per-sample detail, stored apart).
PROCESSLIST_KEPT = ("ts", "line_no", "line_end", "id", "user", "host", "command", "time_s", "state", "info")
#: The frame of a reduced source that keeps the line range of each of its samples (``ts``,
#: ``line_no`` first line, ``line_end`` last line), as the main frame had them before rows were dropped.
SAMPLE_LINES = "sample_lines"
#: Status variables of the cross-host rules (analyzer/cluster/rules.py, analyzer/cluster/offsets.py): the
#: write rate
#: and binlog growth of a replication source; Galera's flow control, queues and seqno per node.
CLUSTER_STATUS = (
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Binlog_bytes_written",
    "wsrep_flow_control_paused",
    "wsrep_flow_control_paused_ns",
    "wsrep_flow_control_sent",
    "wsrep_flow_control_recv",
    "wsrep_local_recv_queue",
    "wsrep_local_recv_queue_avg",
    "wsrep_local_send_queue",
    "wsrep_local_send_queue_avg",
    "wsrep_last_committed",
    "wsrep_local_commits",
    "wsrep_received",
    "wsrep_cluster_size",
    # a Galera node's own state over time (1 Joining, 2 Donor/Desynced, 3 Joined, 4 Synced), its
    # desync requests and its certification conflicts
    "wsrep_local_state",
    "wsrep_desync_count",
    "wsrep_local_cert_failures",
    "wsrep_local_bf_aborts",
    # a semi-sync source's replicas and waits (analyzer.waits.holders.replication); master: MariaDB, MySQL <
    # 8.0.26
    *(f"Rpl_semi_sync_{s}_{n}" for s in ("master", "source") for n in ("clients", "no_tx", "yes_tx", "wait_sessions")),
)  # fmt: skip
#: ``mysqladmin ext`` variables the analysis reads; the others are dropped (``detect.status`` refuses them).
STATUS_KEPT = frozenset(
    {
        "Com_commit",
        "Created_tmp_disk_tables",
        # the counter rules (analyzer/rules/counters.py)
        "Aborted_clients",
        "Aborted_connects",
        "Binlog_cache_disk_use",
        "Binlog_cache_use",
        "Connection_errors_max_connections",
        "Connections",
        "Handler_read_first",
        "Handler_read_key",
        "Handler_read_last",
        "Handler_read_next",
        "Handler_read_prev",
        "Handler_read_rnd",
        "Handler_read_rnd_next",
        "Innodb_buffer_pool_read_requests",
        "Innodb_buffer_pool_reads",
        "Innodb_buffer_pool_wait_free",
        "Innodb_log_waits",
        "Max_used_connections",
        "Select_full_join",
        "Threads_created",
        "Created_tmp_tables",
        "Innodb_data_fsyncs",
        "Innodb_os_log_fsyncs",
        "Innodb_row_lock_current_waits",
        # purge behind (MariaDB status; analyzer.waits.holders.purge.purge)
        "Innodb_history_list_length",
        # the deadlock rate (MariaDB; innodb-deadlock, the row-lock contention of
        # analyzer.waits.holders.locks)
        "Innodb_deadlocks",
        "Open_tables",
        "Opened_tables",
        # open files against open_files_limit (analyzer/waits/holders/slots.py)
        "Open_files",
        "Questions",
        "Table_open_cache_misses",
        "Table_open_cache_overflows",
        "Threads_connected",
        "Threads_running",
        *(f"Threadpool_{n}" for n in ("threads", "idle_threads")),  # the thread pool: waits/holders/pool.py
        # the cross-host rules (analyzer/cluster/rules.py): a source's write rate, Galera flow control
        *CLUSTER_STATUS,
    }
)
#: Frames of a row per CPU or per block device per sample (mpstat, ``mpstat -I``, iostat), kept in
#: narrow types (``_narrow_per_cpu``): a day of a 64-CPU server's mpstat is 560,000 rows.
PER_CPU_FRAMES = ("mpstat_cpu", "mpstat_intr", "mpstat_irq", "iostat")
#: Thread states kept one row per thread; sleeping (S) and idle kernel (I) threads are only counted.
THREAD_STATES_KEPT = frozenset({"R", "D", "Z", "T", "t", "X", "W"})


def session_is_active(pl: pd.DataFrame, *, own: np.ndarray | None = None) -> pd.Series:
    """Per session (row of a ``processlist`` frame with ``user``, ``command`` and ``info``): True when it
    runs client work (docs/background.md, "Counting sessions and threads right"): Command in
    ``ACTIVE_COMMANDS``, not the collector's own statement (``OWN_QUERY``), not an internal user.
    ``own``: the rows that run the collector's own statement, when the caller knows them already."""
    if own is None:
        info = pl["info"].astype("string").fillna("") if "info" in pl else pd.Series("", index=pl.index)
        own = info.str.contains(OWN_QUERY, flags=re.IGNORECASE | re.DOTALL, regex=True).to_numpy(dtype=bool)
    user = pl["user"].astype("string").fillna("") if "user" in pl else pd.Series("", index=pl.index)
    command = pl["command"].astype("string").fillna("") if "command" in pl else pd.Series("", index=pl.index)
    return (command.isin(ACTIVE_COMMANDS) & ~own & ~user.isin(INTERNAL_USERS)).astype(bool)


def value_is(values: pd.Series, test: Callable[[pd.Series], pd.Series]) -> np.ndarray:
    """``test`` (a vectorised test on a ``string`` Series: ``lambda s: s == "D"``) for each row of
    ``values``, as a bool array (missing values: False). A category is tested once per distinct
    value: the timeline's text columns are categories of a few values over millions of rows."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        hit = test(pd.Series(values.cat.categories.astype("string"))).fillna(False).to_numpy(dtype=bool)
        return np.append(hit, False)[values.cat.codes.to_numpy()]  # code -1 (missing) takes the False
    return test(values.astype("string")).fillna(False).to_numpy(dtype=bool)


def _statements(info: pd.Series, cache: dict[str, str] | None) -> tuple[pd.Categorical, np.ndarray]:
    """The fingerprint of each row's statement (a category; missing for no statement) and whether it
    is the collector's own (``OWN_QUERY``), each worked out once per distinct statement: a
    processlist repeats its statements across sessions and snapshots."""
    codes, uniques = pd.factorize(info, use_na_sentinel=True)
    texts = np.asarray(uniques, dtype=object).tolist()
    if not isinstance(info.dtype, pd.StringDtype):  # a ``string`` column holds str values only
        texts = [str(text) for text in texts]
    own = collector_statements(texts)
    stated = np.fromiter(map(bool, texts), dtype=bool, count=len(texts))  # an empty Info has no fingerprint
    prints = np.full(len(texts), None, dtype=object)
    prints[stated] = fingerprint_all(list(filter(None, texts)), cache)
    fp_codes, fp_names = pd.factorize(prints, use_na_sentinel=True)
    present = codes >= 0
    row_fp = np.where(present, fp_codes[np.where(present, codes, 0)] if len(fp_codes) else -1, -1)
    row_own = present & (own[np.where(present, codes, 0)] if len(own) else False)
    # A collector's statement has no fingerprint: no rule can name it as the statement behind anything.
    row_fp = np.where(row_own, -1, row_fp)
    return pd.Categorical.from_codes(row_fp, categories=pd.Index(fp_names, dtype=object)), row_own


def prepare(source: ParsedSource, *, cache: dict[str, str] | None = None) -> ParsedSource:
    """The source reduced to what the analysis keeps, with the derived columns the rules share.

    ``processlist``: adds ``active`` and ``fingerprint``, keeps ``PROCESSLIST_KEPT`` but ``info``
    (the statement text is stored apart as per-sample detail; rules read its fingerprint);
    ``processlist_sessions`` (``ts``, ``sessions``) counts every session of each snapshot (or sums
    what a parser given ``PARSE_OPTIONS`` counted), and only the rows the rules read stay
    (``_sessions_kept``): a day of 1,000 mostly idle sessions is not held one row each.
    ``ps_threads``: adds ``is_mysqld``, drops the piece's ``snapshot`` numbers; ``ps_state_counts`` (``ts``,
    ``state``, ``threads``) counts every thread by state, and only threads in ``THREAD_STATES_KEPT`` stay one
    row each (plus the first row of every snapshot, so that each snapshot is still seen); a ps parser given
    ``PARSE_OPTIONS`` did both already. ``mysqladmin``: only the
    ``STATUS_KEPT`` variables. ``interrupts``: the minor IRQ lines folded (``irqs.fold_minor_irqs``).
    ``PER_CPU_FRAMES`` (mpstat, iostat): integers narrowed, ``device`` a category (``_narrow_per_cpu``).
    ``SAMPLE_LINES``: the line range of each sample of the main frame, as parsed. Text columns
    become categories. Idempotent; ``cache`` carries fingerprints across calls (statement -> fingerprint).
    """
    frames = dict(source.frames)
    main = next(iter(frames.values()), None)
    if SAMPLE_LINES not in frames and main is not None and "ts" in main and "line_no" in main:
        # a parser that counted the rows it did not keep gives their line range with the counts
        frames[SAMPLE_LINES] = _sample_lines(frames.get("ps_state_counts", main))
    pl = frames.get("processlist")
    if pl is not None and "info" in pl:
        pl = pl[[c for c in PROCESSLIST_KEPT if c in pl]]
        fingerprint, own = _statements(pl["info"], cache)
        pl = pl.drop(columns=["info"]).assign(active=session_is_active(pl, own=own), fingerprint=fingerprint)
        counted = frames.get("processlist_sessions")  # the parser counted them (``PARSE_OPTIONS``)
        frames["processlist_sessions"] = (
            counted.groupby("ts", sort=True)["sessions"].sum().astype("int32").reset_index()
            if counted is not None
            else pl.groupby("ts", sort=True).size().rename("sessions").astype("int32").reset_index()
        )
        kept = _sessions_kept(pl)
        frames["processlist_accounts"] = accounts.counted(frames.get("processlist_accounts"), pl[~kept])
        pl = pl[kept].reset_index(drop=True)
        if "host" in pl:
            pl = pl.assign(host=accounts.without_port(pl["host"]))
        narrow = {c: "int32" for c in ("line_no", "line_end") if c in pl and pl[c].notna().all()}
        pl = pl.astype({**{c: "category" for c in PROCESSLIST_CATEGORIES if c in pl}, **narrow})
        frames["processlist"] = _narrow(pl, ("time_s", "id"))
    ps = frames.get("ps_threads")
    if ps is not None and "is_mysqld" not in ps:
        mysqld = value_is(ps["comm"], lambda s: s.isin(MYSQLD_COMMS)) if "comm" in ps else False
        ps = ps.assign(is_mysqld=np.zeros(len(ps), dtype=bool) | mysqld)
        counted = frames.get("ps_state_counts")
        if counted is not None:  # the parser counted and kept the threads (``PARSE_OPTIONS``)
            frames["ps_state_counts"] = counted[["ts", "state", "threads"]]
        elif "state" in ps and ps["state"].notna().any():
            state = ps["state"].astype("string")
            frames["ps_state_counts"] = (
                ps.assign(state=state).groupby(["ts", "state"]).size().rename("threads").reset_index()
            )
            keep = state.isin(THREAD_STATES_KEPT).fillna(False) | ~ps["ts"].duplicated()
            ps = ps[keep.to_numpy()].reset_index(drop=True)
        # ``snapshot`` numbers the snapshots of a parsed piece: ``ts`` names them across pieces
        ps = ps.drop(columns=["snapshot"], errors="ignore")
        frames["ps_threads"] = _narrow(ps, ("line_no", "pid", "tid", "ppid"))
    ma = frames.get("mysqladmin")
    if ma is not None and len(ma) and "variable" in ma:
        kept = value_is(ma["variable"], lambda s: s.isin(STATUS_KEPT))
        if not kept.all():
            ma = ma[kept].reset_index(drop=True)
            frames["mysqladmin"] = ma.assign(
                variable=ma["variable"].astype("category").cat.remove_unused_categories()
            )
    for name in PER_CPU_FRAMES:
        if frames.get(name) is not None and len(frames[name]):
            frames[name] = _narrow_per_cpu(frames[name])
    it = frames.get("interrupts")
    if it is not None and len(it) and "per_s" in it and not source.meta.get("interrupts_reduced"):
        frames["interrupts"] = irqs.fold_minor_irqs(it)
        source = dataclasses.replace(source, meta={**source.meta, "interrupts_reduced": True})
    return dataclasses.replace(source, frames=frames)


def _narrow(frame: pd.DataFrame, columns: tuple[str, ...], bits: int = 32) -> pd.DataFrame:
    """``columns`` of ``frame`` that are 64-bit integers (``int64``, nullable ``Int64``) as ``bits``-bit
    ones (32 or 16) when every value fits (line numbers, pids, tids, Time in seconds in 32; CPU
    numbers in 16): lossless, a half or a quarter of the bytes of a day-long capture's rows."""
    info = np.iinfo(f"int{bits}")
    types = {}
    for column in columns:
        if column not in frame or str(frame[column].dtype) not in ("int64", "Int64") or not len(frame):
            continue
        low, high = frame[column].min(), frame[column].max()
        if pd.isna(low) or (info.min <= low and high <= info.max):
            types[column] = f"int{bits}" if str(frame[column].dtype) == "int64" else f"Int{bits}"
    return frame.astype(types) if types else frame


def _narrow_per_cpu(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame of ``PER_CPU_FRAMES`` in narrow types: ``line_no`` 32-bit, ``cpu`` 16-bit (-1, the
    all-CPU row, and CPU numbers), ``device`` a category (a few block devices repeated every sample)."""
    frame = _narrow(_narrow(frame, ("line_no",)), ("cpu",), bits=16)
    if "device" in frame and not isinstance(frame["device"].dtype, pd.CategoricalDtype):
        frame = frame.astype({"device": "category"})
    return frame


def _sessions_kept(pl: pd.DataFrame) -> np.ndarray:
    """The processlist rows the rules read (a bool per row of a frame in snapshot order): every active
    session; the first and the last row of each snapshot (every snapshot stays seen, and the line
    range of the rows is the capture's); and of the idle (``Sleep``) client sessions of each snapshot
    the first with the longest ``Time`` (what ``lock-waits`` names as a possible blocker: the longest idle
    session at any moment is the first such row of some snapshot). The other idle sessions are
    counted in ``processlist_sessions`` only; their lines stay in the kept text. The ``system user``
    rows stay too: a replica's SQL, I/O and worker threads (and Galera's appliers), whose State says
    why a replica is behind (analyzer/cluster/replica_causes.py); a server has a handful of them."""
    ts = pl["ts"].to_numpy(dtype="datetime64[ns]")  # not Timestamp objects, one per row
    n = len(ts)
    keep = pl["active"].to_numpy(dtype=bool).copy()
    if not n:
        return keep
    new = np.ones(n, dtype=bool)
    new[1:] = ts[1:] != ts[:-1]
    keep |= new
    keep |= np.append(new[1:], True)  # the last row of each snapshot
    if "user" in pl:
        keep |= value_is(pl["user"], lambda s: s == REPLICATION_USER)
    if "command" in pl:
        sleeping = value_is(pl["command"], lambda s: s.isin(IDLE_COMMANDS))
        if "user" in pl:  # the longest idle *client* session: the server's own threads cannot hold a lock
            sleeping = sleeping & ~value_is(pl["user"], lambda s: s.isin(INTERNAL_USERS))
        if sleeping.any():
            time_s = pd.to_numeric(pl["time_s"], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
            rows = pd.DataFrame(
                {"snap": np.cumsum(new)[sleeping], "t": np.nan_to_num(time_s[sleeping], nan=-1.0)}
            )
            keep[np.flatnonzero(sleeping)[rows.groupby("snap")["t"].idxmax().to_numpy()]] = True
    return keep


#: What ``reduce_piece`` drops, its parsers need not build (``parsers.ingest.pieces.Work``): ps
#: threads outside ``THREAD_STATES_KEPT`` and idle processlist sessions (``IDLE_COMMANDS``, but the
#: rows ``_sessions_kept`` keeps) are counted by the parser, not typed row by row.
PARSE_OPTIONS = {"ps": {"states": THREAD_STATES_KEPT}, "processlist": {"idle": IDLE_COMMANDS}}

#: Distinct statements whose fingerprint ``reduce_piece`` remembers (then it starts afresh).
MAX_CACHED_FINGERPRINTS = 20_000
_fingerprint_cache: dict[str, str] = {}


def reduce_piece(source: ParsedSource) -> ParsedSource:
    """``prepare`` with fingerprints remembered across the calls of this process (bounded by
    ``MAX_CACHED_FINGERPRINTS``): what an ingest applies to each parsed piece of a capture, in
    the worker or in a parse process (``parsers.ingest.pool``), before the full frames are dropped."""
    if len(_fingerprint_cache) > MAX_CACHED_FINGERPRINTS:
        _fingerprint_cache.clear()
    return prepare(source, cache=_fingerprint_cache)


reduce_piece.parse_options = PARSE_OPTIONS  # type: ignore[attr-defined]


def _sample_lines(main: pd.DataFrame) -> pd.DataFrame:
    """Per distinct ``ts`` of a main frame: its first line (``line_no``) and last (``line_end``, or
    ``line_no`` where rows have no end)."""
    last = main["line_end"] if "line_end" in main else main["line_no"]
    ts = main["ts"]
    if (
        len(ts)
        and ts.is_monotonic_increasing
        and main["line_no"].dtype.kind in "iu"
        and last.dtype.kind in "iu"
    ):
        # in time order, as parsers give their rows: each sample's rows are one run
        t = ts.to_numpy(dtype="datetime64[ns]").view("int64")
        first = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
        return pd.DataFrame(
            {
                "ts": ts.iloc[first].reset_index(drop=True),
                "line_no": np.minimum.reduceat(main["line_no"].to_numpy(dtype="int64"), first),
                "line_end": np.maximum.reduceat(last.to_numpy(dtype="int64"), first),
            }
        )
    lines = pd.DataFrame(
        {"ts": main["ts"], "line_no": main["line_no"], "line_end": last.fillna(main["line_no"])}
    )
    return (
        lines.groupby("ts", sort=True)
        .agg(line_no=("line_no", "min"), line_end=("line_end", "max"))
        .reset_index()
        .astype({"line_no": "int64", "line_end": "int64"})
    )


def _labels(values: pd.Series) -> pd.Series:
    """Text values as labels (missing -> "(none)", empty -> "(empty)"), as a category relabelled per
    distinct value: a one-hour processlist has millions of rows and a few hundred distinct states."""
    if not isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype("category")
    cats = values.cat.categories.astype("string")
    codes, uniques = pd.factorize(np.array([*cats.where(cats != "", "(empty)"), "(none)"], dtype=object))
    # a missing value has code -1, which picks the last label: "(none)"
    return pd.Series(
        pd.Categorical.from_codes(codes[values.cat.codes.to_numpy()], uniques), index=values.index
    )


def _joined(chunks: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames of one name joined and sorted by ``ts`` (stable), copying only when needed: a
    one-hour capture's processlist frame is hundreds of MB."""
    frame = chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)
    if "member" in frame and not isinstance(frame["member"].dtype, pd.CategoricalDtype):
        frame["member"] = frame["member"].astype("category")  # members whose categories differ
    if not frame["ts"].is_monotonic_increasing:
        frame = frame.sort_values("ts", kind="stable")
    return frame.reset_index(drop=True)


@dataclass(slots=True)
class Timeline:
    """The aligned data of one case. ``frames``: name -> DataFrame sorted by ``ts`` (UTC)."""

    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    ncpu: int | None = None
    host: str | None = None
    utc_offset_s: int | None = None
    variables: dict[str, str] = field(default_factory=dict)
    #: name -> (member, line) of each of ``variables`` read from a pt-mysql-summary report, when the
    #: bundle has no ``-variables`` (``from_sources``); empty when they come from ``-variables``.
    variables_from: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: member -> what it became (``analyzer.timeline.primary.Role``: primary, overlap or summary, and why).
    roles: dict[str, primary.Role] = field(default_factory=dict)
    #: First and last time (UTC) of each frame's timed rows over the whole timeline, computed once; a
    #: view (``only``) keeps them, so a rule reading one frame still knows the capture's window.
    spans: dict[str, tuple[pd.Timestamp, pd.Timestamp]] = field(default_factory=dict)

    @classmethod
    def from_sources(
        cls,
        sources: Iterable[ParsedSource],
        *,
        ncpu: int | None = None,
        host: str | None = None,
        utc_offset_s: int | None = None,
    ) -> Timeline:
        """Join the frames of every source by name, keeping for each source and stretch of time only
        its primary capture (``analyzer.timeline.primary.select``); ``roles`` records what each member became.
        ``variables`` and ``variables_from``: ``analyzer.timeline.variables.server_variables``."""
        parts: dict[str, list[pd.DataFrame]] = {}
        cache: dict[str, str] = {}
        prepared = [prepare(source, cache=cache) for source in sources]
        selection = primary.select(prepared)
        variables, variables_from = server_variables(prepared)
        for source in prepared:
            for name, frame in source.frames.items():
                keep = selection.kept.get(name, {}).get(source.member)
                if keep is not None and not keep.all():
                    frame = frame[keep]
                if len(frame) and name != SAMPLE_LINES:
                    member = pd.Categorical.from_codes(np.zeros(len(frame), dtype="int8"), [source.member])
                    parts.setdefault(name, []).append(frame.assign(member=member))
        frames = {name: _joined(chunks) for name, chunks in parts.items()}
        tl = cls(frames=frames, ncpu=ncpu, host=host, utc_offset_s=utc_offset_s, variables=variables)
        tl.variables_from = variables_from
        tl.roles = selection.roles
        tl._derive()
        return tl

    def _derive(self) -> None:
        vm = self.frames.get("vmstat")
        if vm is not None and "since_boot" in vm:
            since_boot = vm["since_boot"].to_numpy(dtype=bool, na_value=False)
            lead = int(np.argmin(since_boot)) if not since_boot.all() else len(since_boot)
            if not since_boot[lead:].any():  # the since-boot report leads: a slice, not a copy of the rows
                self.frames["vmstat"] = vm.iloc[lead:].reset_index(drop=True)
            else:
                self.frames["vmstat"] = vm[~since_boot].reset_index(drop=True)
        derive_context(self.frames)  # the InnoDB and kernel context (diskstats -> iostat ...)

    @property
    def inputs(self) -> frozenset[str]:
        """Names a rule can require: the non-empty frames, ``variables`` and ``ncpu`` when known."""
        names = {name for name, frame in self.frames.items() if len(frame)}
        if self.variables:
            names.add("variables")
        if self.ncpu:
            names.add("ncpu")
        return frozenset(names)

    def only(self, names: Iterable[str]) -> Timeline:
        """The same timeline holding only the inputs ``names`` (frames, and ``variables`` when named):
        what the engine hands a rule, so that a rule reads no input it does not declare. The frames are
        shared, not copied; ``ncpu``, ``host`` and the UTC offset describe the server and stay."""
        keep = frozenset(names)
        spans = self.frame_spans()
        view = Timeline(
            frames={k: v for k, v in self.frames.items() if k in keep},
            ncpu=self.ncpu,
            host=self.host,
            utc_offset_s=self.utc_offset_s,
            variables=self.variables if "variables" in keep else {},
            variables_from=self.variables_from if "variables" in keep else {},
            spans=spans,
        )
        view.roles = self.roles
        return view

    def frame_spans(self) -> dict[str, tuple[pd.Timestamp, pd.Timestamp]]:
        """``spans``, computed from the frames on first use (NaT, the time of a member read without
        any, ignored)."""
        if not self.spans:
            for name, frame in self.frames.items():
                if len(frame) and "ts" in frame:
                    first, last = frame["ts"].min(), frame["ts"].max()
                    if pd.notna(first):
                        self.spans[name] = (first, last)
        return self.spans

    def capture_window(self, *, exclude: Iterable[str] = ()) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        """First and last time of the whole capture's timed rows (frames named in ``exclude`` left
        out), also in a view a rule is handed; None when nothing is timed."""
        left_out = frozenset(exclude)
        spans = [span for name, span in self.frame_spans().items() if name not in left_out]
        return (min(a for a, _ in spans), max(b for _, b in spans)) if spans else None

    def frame(self, name: str) -> pd.DataFrame:
        """The frame ``name`` (an empty frame with a ``ts`` column when the bundle has none)."""
        found = self.frames.get(name)
        if found is None:
            return pd.DataFrame({"ts": pd.Series([], dtype="datetime64[ns, UTC]")})
        return found

    @property
    def window(self) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        starts = [f["ts"].min() for f in self.frames.values() if len(f)]
        ends = [f["ts"].max() for f in self.frames.values() if len(f)]
        return (min(starts), max(ends)) if starts else None

    def lines_of(self, frame: pd.DataFrame) -> tuple[str | None, tuple[int, int] | None]:
        """The member and (first, last) raw line numbers behind the rows of ``frame`` (first member)."""
        if not len(frame) or "line_no" not in frame:
            return None, None
        member = str(frame["member"].iloc[0]) if "member" in frame else None
        rows = frame[frame["member"] == member] if member is not None else frame
        last_col = "line_end" if "line_end" in rows else "line_no"
        return member, (int(rows["line_no"].min()), int(rows[last_col].max()))

    def processlist_counts(
        self, column: str = "state", *, active_only: bool = True, top: int | None = None
    ) -> pd.DataFrame:
        """Sessions per snapshot by ``column`` (state, command, fingerprint): index ts, one column per
        value; only the ``top`` most frequent values when given (a capture can hold 10,000 query
        fingerprints: a dense table of all of them would not fit in memory)."""
        pl = self.frame("processlist")
        if not len(pl):
            return pd.DataFrame()
        rows = pl[["ts", column]]  # only what is counted: a long capture has millions of rows
        if active_only:
            rows = rows[pl["active"].to_numpy(dtype=bool)]
        values = _labels(rows[column])
        if top is not None:
            keep = values.value_counts().index[:top]
            rows, values = rows[values.isin(keep).to_numpy()], values[values.isin(keep)]
        counts = rows.assign(_v=values).groupby(["ts", "_v"], observed=True).size().unstack(fill_value=0)
        counts.columns = pd.Index([str(c) for c in counts.columns], name="_v")
        counts = counts[sorted(counts.columns)]
        all_ts = pd.Index(pl["ts"].drop_duplicates().sort_values())
        return counts.reindex(all_ts, fill_value=0)
