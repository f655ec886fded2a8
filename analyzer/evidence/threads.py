"""Join OS threads (ps) to MySQL sessions (processlist, performance_schema.threads) at the same moment.

The lesson of the incidents in docs/background.md is that the explanation appears only when the two sides are
read side
by side: "547 mysqld threads in D state in ``unlinkat`` while 217 sessions are in ``removing tmp
table``". Two joins:

- **by moment** (any bundle with ps threads and a processlist): each ps snapshot is paired with the
  nearest processlist snapshot within a tolerance, and the counts of D-state ``mysqld``/``mariadbd``
  threads by ``wchan`` are put next to the counts of active sessions by ``State``
  (``threads_beside_sessions``);
- **exact** (pt-stalk ``-threads``: ``performance_schema.threads``): ps ``TID`` =
  ``THREAD_OS_ID`` -> ``PROCESSLIST_ID`` -> that session's ``State`` and query fingerprint, so the
  page can name the sessions behind each wait channel (``thread_sessions``, ``sessions_by_wchan``).

Inputs are the timeline frames (``parsers/__init__.py`` schemas): ``ps_threads`` (``ts``, ``tid``,
``state``, ``wchan``, ``comm``; ``is_mysqld`` added by the timeline), ``processlist`` (``ts``, ``id``,
``state``, ``info``; ``active`` and ``fingerprint`` added by the timeline) and ``pfs_threads``
(``ts``, ``thread_os_id``, ``processlist_id``, ``name``, ``processlist_state``, ``processlist_info``).
Every function is pure: frames in, a new DataFrame out. Times are UTC.

Sources: procps ps(1) (STAT ``D`` = uninterruptible sleep, WCHAN = the kernel function the thread
sleeps in); MySQL 8.0 manual, "The threads Table" (THREAD_OS_ID is the thread id the OS reports,
``gettid()``, which ps prints as TID/LWP).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.statements.fingerprint import fingerprints
from analyzer.timeline.pairing import pair_moments
from analyzer.timeline.timeline import value_is

#: performance_schema.threads is captured once per pt-stalk collection while ps runs every second;
#: the THREAD_OS_ID -> PROCESSLIST_ID pairing holds for a connection's life (one thread per
#: connection; pooled connections live for minutes), so a snapshot this old still maps threads.
PFS_MAP_TOLERANCE = pd.Timedelta(minutes=2)
#: The process names of the server (MySQL/Percona ``mysqld``, MariaDB 10.5+ ``mariadbd``).
MYSQLD_COMMS = frozenset({"mysqld", "mariadbd"})
#: Label for threads sleeping with no wait channel (ps prints ``-``) or listings without WCHAN.
NO_WCHAN = "(none)"
#: Label for a session with no State (NULL or empty), as in the ``COMMIT`` rows of a server whose commits
#: serialise (docs/background.md).
NO_STATE = "(none)"


#: What a thread sleeping in a wait channel is doing, by a part of the kernel function's name; the
#: first match wins. Older kernels print the syscall (``unlinkat``, docs/background.md), newer ones the inner
#: function (``do_unlinkat``, ``rwsem_down_write_slowpath``); ``wchan:32`` may still cut it short.
#: Sources: the Linux source (fs/namei.c, mm/mmap.c, block/, fs/jbd2/), Brendan Gregg "Linux Load
#: Averages: Solving the Mystery" (2017) for D-state lock waits that count in the load average.
WCHAN_MEANINGS: tuple[tuple[str, str], ...] = (
    ("unlink", "deleting files (unlinkat: removing a directory entry, under the directory's lock)"),
    ("rmdir", "deleting directories"),
    ("path_openat", "creating or opening files (path lookup and create under the directory's lock)"),
    ("filename_create", "creating files (waiting for the directory's lock)"),
    ("lookup_open", "creating or opening files (waiting for the directory's lock)"),
    ("open_last_lookups", "creating or opening files (waiting for the directory's lock)"),
    ("do_sys_open", "opening or creating files"),
    ("filp_open", "opening or creating files"),
    ("vm_mmap", "mapping memory (waiting for the process's mmap_lock, e.g. many threads allocating)"),
    ("vm_munmap", "unmapping memory (waiting for the process's mmap_lock)"),
    ("rwsem_down", "waiting for a kernel read-write lock (a directory's inode lock or the mmap_lock)"),
    ("down_write", "waiting for a kernel read-write lock (a directory's inode lock or the mmap_lock)"),
    ("down_read", "waiting for a kernel read-write lock (a directory's inode lock or the mmap_lock)"),
    ("jbd2", "waiting for the ext4 journal to commit (fsync)"),
    ("xlog", "waiting for the XFS log to be forced to disk (fsync)"),
    ("xfs_log_force", "waiting for the XFS log to be forced to disk (fsync)"),
    ("fsync", "waiting for fsync"),
    ("file_write_and_wait", "waiting for fsync/fdatasync to write back the file"),
    ("fdatawait", "waiting for fsync/fdatasync to write back the file"),
    ("balance_dirty_pages", "writes throttled: too many dirty pages in the page cache"),
    ("io_schedule", "waiting for block-device I/O"),
    ("blk_mq_get_tag", "waiting for a free request slot on a saturated block device"),
    ("wait_on_page", "waiting for a page to be read from or written to disk"),
    ("folio_wait", "waiting for a page to be read from or written to disk"),
    ("bit_wait_io", "waiting for block-device I/O"),
    ("nfs", "waiting for an NFS server"),
    ("rpc_wait", "waiting for an NFS/RPC server"),
    ("mutex_lock", "waiting for a kernel mutex"),
    ("futex", "waiting for a user-space lock (futex)"),
)
#: Wait channels of file creation and deletion: D threads there while sessions create and remove
#: temporary tables tie the load to tmpdir (docs/background.md: ``unlinkat``).
FILE_WCHAN_PARTS = (
    "unlink",
    "rmdir",
    "path_openat",
    "filename_create",
    "lookup_open",
    "open_last_lookups",
    "do_sys_open",
    "filp_open",
)


def wchan_meaning(wchan: str) -> str:
    """What a thread sleeping in ``wchan`` is doing, in words (empty when unknown).

    >>> wchan_meaning("do_unlinkat")
    "deleting files (unlinkat: removing a directory entry, under the directory's lock)"
    """
    low = wchan.lower()
    for part, meaning in WCHAN_MEANINGS:
        if part in low:
            return meaning
    return ""


def is_file_wchan(wchan: str) -> bool:
    """Whether ``wchan`` is a file creation/deletion wait channel (``unlinkat``, ``path_openat``...)."""
    low = wchan.lower()
    return any(part in low for part in FILE_WCHAN_PARTS)


def _mysqld_mask(ps: pd.DataFrame) -> pd.Series:
    if "is_mysqld" in ps:
        return ps["is_mysqld"].astype(bool)
    return pd.Series(value_is(ps["comm"], lambda s: s.isin(MYSQLD_COMMS)), index=ps.index)


def in_d_state(ps: pd.DataFrame) -> np.ndarray:
    """Which rows of a ``ps_threads`` frame are threads in state D (uninterruptible sleep)."""
    return value_is(ps["state"], lambda s: s == "D")


def _wchan_labels(ps: pd.DataFrame) -> pd.Series:
    if "wchan" not in ps:
        return pd.Series(NO_WCHAN, index=ps.index, dtype="string")
    return ps["wchan"].astype("string").fillna("").replace("", NO_WCHAN)


def has_thread_states(ps: pd.DataFrame) -> bool:
    """Whether a ps frame says which state each thread is in (``ps -eaF`` has no STAT column)."""
    return len(ps) > 0 and "state" in ps and bool(ps["state"].notna().any())


def d_threads_by_wchan(ps: pd.DataFrame, *, mysqld_only: bool = True) -> pd.DataFrame:
    """Threads in state ``D`` (uninterruptible sleep) per ps snapshot, by wait channel.

    ``ps``: a ``ps_threads`` frame. Returns index ``ts`` (every snapshot, also those with no D
    thread), one column per wchan (``(none)`` for ``-``), values = threads; columns ordered by their
    total, largest first. Only ``mysqld``/``mariadbd`` threads unless ``mysqld_only`` is False.
    """
    if not has_thread_states(ps):
        return pd.DataFrame(index=pd.Index([], name="ts"))
    all_ts = pd.Index(ps["ts"].drop_duplicates().sort_values(), name="ts")
    mask = pd.Series(in_d_state(ps), index=ps.index)
    if mysqld_only:
        mask &= _mysqld_mask(ps)
    rows = ps[mask]
    if not len(rows):
        return pd.DataFrame(index=all_ts)
    counts = rows.assign(_w=_wchan_labels(rows)).groupby(["ts", "_w"]).size().unstack(fill_value=0)
    counts = counts.reindex(all_ts, fill_value=0)
    counts = counts[counts.sum().sort_values(ascending=False, kind="stable").index]
    counts.columns = [str(c) for c in counts.columns]
    counts.columns.name = None
    return counts


def session_states(processlist: pd.DataFrame, *, active_only: bool = True) -> pd.DataFrame:
    """Sessions per processlist snapshot by ``State``: index ``ts`` (every snapshot), one column per
    state (``(none)`` for NULL/empty), ordered by total. Only active sessions (Command Query/Execute,
    not the collector's own) unless ``active_only`` is False."""
    if not len(processlist):
        return pd.DataFrame(index=pd.Index([], name="ts"))
    all_ts = pd.Index(processlist["ts"].drop_duplicates().sort_values(), name="ts")
    rows = (
        processlist[processlist["active"].astype(bool)]
        if active_only and "active" in processlist
        else processlist
    )
    if not len(rows):
        return pd.DataFrame(index=all_ts)
    states = rows["state"].astype("string").fillna("").replace("", NO_STATE)
    counts = (
        rows.assign(_s=states)
        .groupby(["ts", "_s"])
        .size()
        .unstack(fill_value=0)
        .reindex(all_ts, fill_value=0)
    )
    counts = counts[counts.sum().sort_values(ascending=False, kind="stable").index]
    counts.columns = [str(c) for c in counts.columns]
    counts.columns.name = None
    return counts


def threads_beside_sessions(
    ps: pd.DataFrame,
    processlist: pd.DataFrame,
    *,
    tolerance: pd.Timedelta | None = None,
    mysqld_only: bool = True,
) -> pd.DataFrame:
    """D-state server threads by wchan next to active sessions by State, one row per ps snapshot.

    Returns index ``ts`` (the ps snapshot) and columns ``processlist_ts`` (nearest processlist
    snapshot within ``tolerance``, NaT when none), ``d_threads`` (D-state threads), ``wchan:<name>``
    (D-state threads in that wait channel), ``active`` (active sessions) and ``state:<name>``
    (active sessions in that State); session columns are NaN where no snapshot was paired.
    Empty when ps has no thread states.
    """
    d = d_threads_by_wchan(ps, mysqld_only=mysqld_only)
    if not len(d):
        return pd.DataFrame()
    out = pd.DataFrame(index=d.index)
    out["d_threads"] = d.sum(axis=1).astype("int64")
    for col in d.columns:
        out[f"wchan:{col}"] = d[col]
    pairs = pair_moments(
        d.index.to_series(),
        processlist["ts"] if len(processlist) else pd.Series([], dtype="datetime64[ns, UTC]"),
        tolerance=tolerance,
    )
    out["processlist_ts"] = pairs.set_index("ts")["other_ts"].reindex(out.index)
    states = session_states(processlist)
    if len(states):
        active = states.sum(axis=1)
        paired = out["processlist_ts"]
        out["active"] = active.reindex(paired).to_numpy()
        for col in states.columns:
            out[f"state:{col}"] = states[col].reindex(paired).to_numpy()
    return out


#: The columns ``thread_sessions`` returns.
THREAD_SESSION_COLUMNS = (
    "ts",
    "tid",
    "os_state",
    "wchan",
    "pcpu",
    "thread_name",
    "processlist_id",
    "session_state",
    "info",
    "fingerprint",
    "time_s",
    "line_no",
    "member",
)


def thread_sessions(
    ps: pd.DataFrame,
    pfs: pd.DataFrame,
    processlist: pd.DataFrame | None = None,
    *,
    tolerance: pd.Timedelta | None = None,
    map_tolerance: pd.Timedelta = PFS_MAP_TOLERANCE,
) -> pd.DataFrame:
    """Exact join of server OS threads to MySQL sessions: ps TID = performance_schema THREAD_OS_ID.

    ``ps``: ``ps_threads``; ``pfs``: ``pfs_threads`` (``thread_os_id``, ``processlist_id``, ``name``,
    ``processlist_state``, ``processlist_info``); ``processlist`` (optional): its State and Info at
    the nearest snapshot (within ``tolerance``) win over the threads table's own copy, which may be
    older. Each ps snapshot uses the nearest ``pfs`` snapshot within ``map_tolerance``.

    Returns one row per server thread that maps to a session: ``ts`` (ps snapshot), ``tid``,
    ``os_state`` (R/S/D...), ``wchan``, ``pcpu``, ``thread_name`` (``thread/sql/one_connection``),
    ``processlist_id``, ``session_state``, ``info``, ``fingerprint``, ``time_s`` (NA without a
    processlist), ``line_no``/``member`` of the ps row.
    """
    cols = list(THREAD_SESSION_COLUMNS)
    if not len(ps) or not len(pfs) or "thread_os_id" not in pfs:
        return pd.DataFrame(columns=cols)
    threads = ps[_mysqld_mask(ps)]
    if not len(threads):
        return pd.DataFrame(columns=cols)
    pfs_pairs = pair_moments(threads["ts"], pfs["ts"], tolerance=map_tolerance).rename(
        columns={"other_ts": "pfs_ts"}
    )
    left = threads.merge(pfs_pairs, on="ts", how="left")
    left["tid"] = pd.to_numeric(left["tid"], errors="coerce").astype("Int64")
    right = pfs[pfs["processlist_id"].notna() & pfs["thread_os_id"].notna()]
    right = pd.DataFrame(
        {
            "pfs_ts": right["ts"],
            "tid": pd.to_numeric(right["thread_os_id"], errors="coerce").astype("Int64"),
            "processlist_id": pd.to_numeric(right["processlist_id"], errors="coerce").astype("Int64"),
            "thread_name": right["name"].astype("string") if "name" in right else pd.NA,
            "pfs_state": right["processlist_state"].astype("string")
            if "processlist_state" in right
            else pd.NA,
            "pfs_info": right["processlist_info"].astype("string") if "processlist_info" in right else pd.NA,
        }
    ).drop_duplicates(["pfs_ts", "tid"])
    joined = left.merge(right, on=["pfs_ts", "tid"], how="inner")
    joined["session_state"] = joined["pfs_state"]
    joined["info"] = joined["pfs_info"]
    joined["time_s"] = pd.Series(pd.NA, index=joined.index, dtype="Int64")
    seen = pd.Series(False, index=joined.index)
    if processlist is not None and len(processlist) and len(joined):
        joined, seen = _with_processlist(joined, processlist, tolerance)
    joined["fingerprint"] = fingerprints(joined["info"]) if len(joined) else pd.Series([], dtype="string")
    if "pl_fingerprint" in joined:
        # the processlist of the same moment wins over performance_schema's copy of the statement
        joined["fingerprint"] = joined["pl_fingerprint"].where(seen, joined["fingerprint"])
    joined["os_state"] = joined["state"].astype("string")
    joined["wchan"] = _wchan_labels(joined)
    if "member" not in joined:
        joined["member"] = pd.NA
    return joined[cols].sort_values(["ts", "tid"], kind="stable").reset_index(drop=True)


def _with_processlist(
    joined: pd.DataFrame, processlist: pd.DataFrame, tolerance: pd.Timedelta | None
) -> tuple[pd.DataFrame, pd.Series]:
    """``joined`` (``thread_sessions``' rows) with the State, fingerprint and Time of the processlist
    snapshot nearest each ps snapshot (within ``tolerance``), and which rows the processlist saw."""
    pl_pairs = pair_moments(joined["ts"], processlist["ts"], tolerance=tolerance).rename(
        columns={"other_ts": "pl_ts"}
    )
    joined = joined.merge(pl_pairs, on="ts", how="left")
    pl = pd.DataFrame(
        {
            "pl_ts": processlist["ts"],
            "processlist_id": pd.to_numeric(processlist["id"], errors="coerce").astype("Int64"),
            "pl_state": processlist["state"].astype("string"),
            "pl_fingerprint": processlist["fingerprint"].astype("string"),
            "pl_time": pd.to_numeric(processlist["time_s"], errors="coerce").astype("Int64"),
            "pl_seen": True,
        }
    ).drop_duplicates(["pl_ts", "processlist_id"])
    joined = joined.merge(pl, on=["pl_ts", "processlist_id"], how="left")
    seen = joined["pl_seen"].fillna(False).astype(bool)
    joined["session_state"] = joined["pl_state"].where(seen, joined["session_state"])
    joined["time_s"] = joined["pl_time"]
    return joined, seen


def sessions_by_wchan(joined: pd.DataFrame, *, os_state: str = "D") -> pd.DataFrame:
    """Which sessions sit behind each wait channel: from ``thread_sessions`` output, the threads in
    ``os_state`` counted by (``wchan``, ``session_state``, ``fingerprint``).

    Returns columns ``wchan``, ``session_state``, ``fingerprint``, ``threads`` (thread-snapshots),
    ``sessions`` (distinct processlist ids), ``snapshots``; largest ``threads`` first.
    """
    cols = ["wchan", "session_state", "fingerprint", "threads", "sessions", "snapshots"]
    if not len(joined):
        return pd.DataFrame(columns=cols)
    rows = joined[joined["os_state"].astype("string").eq(os_state).fillna(False).astype(bool)]
    if not len(rows):
        return pd.DataFrame(columns=cols)
    rows = rows.assign(
        session_state=rows["session_state"].astype("string").fillna("").replace("", NO_STATE),
        fingerprint=rows["fingerprint"].astype("string").fillna(""),
    )
    out = (
        rows.groupby(["wchan", "session_state", "fingerprint"], dropna=False)
        .agg(threads=("tid", "size"), sessions=("processlist_id", "nunique"), snapshots=("ts", "nunique"))
        .reset_index()
        .sort_values(["threads", "wchan"], ascending=[False, True], kind="stable")
        .reset_index(drop=True)
    )
    return out[cols]
