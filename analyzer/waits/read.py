"""The waits frame of a timeline: for each snapshot and server, every session waiting, what for.

A session whose State and Command name no wait (``NOTHING``: running, or idle with no transaction
open) is no row, unless a transaction or a lock wait of the same moment names it (then it waits for
a row lock or its client): most of a day's sessions are such, and ``snapshots`` gives the moments.

``waits(tl)`` reads (frames of ``analyzer.timeline.Timeline``; columns as ``parsers/__init__.py``
and the parsers' docstrings give them):

- ``processlist`` (``ts id user host command time_s state active``): each session's State, or its
  Command when the State is empty, looked up in ``analyzer.waits.states`` once per distinct (State,
  Command) of the capture. The collector's own session (its SHOW PROCESSLIST or information_schema
  read: Command Query, not ``active``, not an internal user) is left out: it waits for nothing of
  the workload. Without a processlist, ``pfs_threads`` (performance_schema.threads, its sessions
  only) stands in.
- ``innodb_trx`` (``trx_id state thread_id``), else the monitor's ``innodb_transactions``
  (``trx_id state lock_wait thread_id``): the session's transaction id; a transaction in
  ``LOCK WAIT`` turns a session whose State names no wait (``updating``, ``executing``) into a
  ``ROW_LOCK`` waiter; an open transaction of a session in ``Sleep`` makes it ``CLIENT`` (the
  transaction waits for its application). A transaction whose session the kept processlist lacks
  (the timeline keeps few idle sessions) becomes a row of its own (``source_frame`` ``innodb_trx``
  or ``innodb_status``), its resource read from its transaction state.
- ``lock_waits`` (``waiting_thread waiting_table``): its waiting sessions are ``ROW_LOCK`` waiters
  (when their State names no wait), the locked table their ``object``; ``pfs_metadata_locks`` (``PENDING``
  rows): the object a metadata-lock waiter waits for.
- ``ps_threads`` (``state wchan``): server threads in uninterruptible sleep (``D``), a row each
  (``source_frame`` ``ps``, ``state`` and ``object`` the wait channel), their session when
  performance_schema.threads joins their TID (``analyzer.evidence.threads.thread_sessions``), their resource
  from ``WCHAN_RESOURCES``.

Transactions, lock waits and threads are paired with the processlist snapshot nearest in time
within ``analyzer.timeline.pairing.MIN_TOLERANCE`` (the same moment; pt-stalk starts them in the same second).
Returns a frame of ``analyzer.waits.model.WAIT_COLUMNS`` (empty, with those columns, when the
timeline has none of these frames). Pure: no I/O, no clock.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from analyzer.evidence import threads
from analyzer.timeline import pairing
from analyzer.timeline.timeline import ACTIVE_COMMANDS, INTERNAL_USERS, Timeline, value_is
from analyzer.waits.model import WAIT_COLUMNS, Resource
from analyzer.waits.states import lookup, meaning

#: Resources as the ``resource`` column's categories, in declaration order.
RESOURCE_TYPE = pd.CategoricalDtype([r.value for r in Resource])
#: Kernel wait channels of a thread in ``D`` state, by a part of the function's name (first match
#: wins), and the resource: the block layer's I/O waits (Linux Documentation/block, ``io_schedule``
#: in kernel/sched/core.c; ``blk_mq_get_tag``: no free request tag on the device; ``folio_wait_bit``,
#: ``wait_on_page_bit``: a page under I/O; ``sync_dirty_buffer``, fs/buffer.c: a buffer written and
#: waited for; ``iomap_dio_rw``, fs/iomap/direct-io.c: an O_DIRECT read or write waited for) are disk I/O. A
#: journal commit or an fsync (fs/jbd2,
#: fs/xfs/xfs_log.c, ``file_write_and_wait_range``) is ``FSYNC_RESOURCE_OF_SESSION`` for a client
#: session (it syncs at commit: the redo and binary logs) and disk I/O for any other thread. Other
#: channels (directory locks, futexes, NFS) name no resource of this model: ``UNKNOWN``, reported.
WCHAN_RESOURCES: tuple[tuple[str, Resource], ...] = (
    ("io_schedule", Resource.DISK_IO),
    ("blk_mq_get_tag", Resource.DISK_IO),
    ("bit_wait_io", Resource.DISK_IO),
    ("wait_on_page", Resource.DISK_IO),
    ("folio_wait", Resource.DISK_IO),
    ("balance_dirty_pages", Resource.DISK_IO),
    ("sync_dirty_buffer", Resource.DISK_IO),
    ("iomap_dio_rw", Resource.DISK_IO),
)
FSYNC_WCHAN_PARTS = ("jbd2", "xlog", "xfs_log_force", "fsync", "file_write_and_wait", "fdatawait")
FSYNC_RESOURCE_OF_SESSION = Resource.LOG_FLUSH


def server_of(variables: dict[str, str]) -> str | None:
    """``mariadb`` or ``mysql`` from the ``version`` / ``version_comment`` variables; None without
    them (``SHOW VARIABLES``: MariaDB's version says ``-MariaDB``)."""
    text = f"{variables.get('version', '')} {variables.get('version_comment', '')}".lower()
    if "mariadb" in text:
        return "mariadb"
    return "mysql" if variables.get("version") else None


def wchan_resource(wchan: str, *, session: bool) -> Resource:
    """The resource a thread sleeping in ``wchan`` waits for (see ``WCHAN_RESOURCES``).

    >>> wchan_resource("jbd2_log_wait_commit", session=True)
    <Resource.LOG_FLUSH: 'redo or binlog flush'>
    >>> wchan_resource("io_schedule", session=False)
    <Resource.DISK_IO: 'disk I/O'>
    """
    low = wchan.lower()
    if any(part in low for part in FSYNC_WCHAN_PARTS):
        return FSYNC_RESOURCE_OF_SESSION if session else Resource.DISK_IO
    return next((r for part, r in WCHAN_RESOURCES if part in low), Resource.UNKNOWN)


def _text(frame: pd.DataFrame, column: str) -> pd.Series:
    if column not in frame:
        return pd.Series(pd.NA, index=frame.index, dtype="string")
    return frame[column].astype("string")


def _ids(values: pd.Series) -> pd.Series:
    if pd.api.types.is_integer_dtype(values.dtype):  # Int32 ids and Time as the timeline keeps them
        return values.astype("Int64")
    return pd.to_numeric(values, errors="coerce").round().astype("Int64")


def _resources(states: pd.Categorical, commands: pd.Categorical, server: str | None) -> pd.Categorical:
    """The resource of every row, ``meaning`` looked up once per distinct (state, command): the
    pairs are numbered from each column's own codes (a few dozen states over millions of rows)."""
    s_codes, s_names = _codes(states)
    c_codes, c_names = _codes(commands)
    pair = (s_codes.astype("int64") + 1) * (len(c_names) + 1) + (c_codes + 1)
    codes, uniques = pd.factorize(pair)
    names = (
        np.r_[[None], np.asarray(s_names, dtype=object)],
        np.r_[[None], np.asarray(c_names, dtype=object)],
    )
    values = np.array(
        [
            _resource(names[0][u // (len(c_names) + 1)], names[1][u % (len(c_names) + 1)], server).value
            for u in uniques
        ],
        dtype=object,
    )
    return pd.Categorical(values[codes] if len(codes) else [], dtype=RESOURCE_TYPE)


def _codes(values: pd.Categorical) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values)``, read from the category's own codes (every category kept, used or not)."""
    return np.asarray(values.codes), values.categories.to_numpy(dtype=object)


def _resource(state: object, command: object, server: str | None) -> Resource:
    """The resource of one (State, Command): ``meaning``'s, ``UNKNOWN`` when no entry knows it, and
    ``NOTHING`` for a row with neither (a table row left blank says nothing of a wait)."""
    state = str(state) if pd.notna(state) and str(state).strip() else None
    command = str(command) if pd.notna(command) and str(command).strip() else None
    if state is None and command is None:
        return Resource.NOTHING
    found = meaning(state, command, server)
    return found.resource if found is not None else Resource.UNKNOWN


#: The columns of a waits row read from the processlist and from performance_schema.threads.
PROCESSLIST_COLUMNS = {"user": "user", "client": "host", "db": "db", "command": "command", "state": "state"}
PFS_COLUMNS = {
    "user": "processlist_user",
    "client": "processlist_host",
    "db": "processlist_db",
    "command": "processlist_command",
    "state": "processlist_state",
}


def _sessions(tl: Timeline, server: str | None) -> pd.DataFrame:
    """The processlist (or, without one, performance_schema.threads' sessions) as waits rows: the
    sessions that may wait for something (``_may_wait``), the others no rows."""
    pl = tl.frame("processlist")
    if len(pl) and "id" in pl:
        read = ("ts", "id", "user", "host", "db", "command", "time_s", "state", "active")
        pl = pl[[c for c in read if c in pl]]  # a day's millions of rows: only the columns read
        keep = np.ones(len(pl), dtype=bool)
        if "active" in pl and "command" in pl:
            own = value_is(pl["command"], lambda s: s.isin(ACTIVE_COMMANDS)) & ~pl["active"].to_numpy(
                dtype=bool
            )
            own &= ~value_is(pl["user"], lambda s: s.isin(INTERNAL_USERS)) if "user" in pl else True
            keep &= ~own
        resource = _resources(_category(pl, "state"), _category(pl, "command"), server)
        keep &= _may_wait(pl["ts"], pl["id"], resource, tl)  # before a row of the rest is copied
        return _session_rows(pl[keep], "id", "time_s", PROCESSLIST_COLUMNS, "processlist", resource[keep])
    th = tl.frame("pfs_threads")
    if not len(th) or "processlist_id" not in th:
        return pd.DataFrame(columns=[c for c in WAIT_COLUMNS if c != "resource"])
    th = th[th["processlist_id"].notna()]
    if "processlist_host" in th:
        th = th.assign(processlist_host=_text(th, "processlist_host").str.replace(r":\d+$", "", regex=True))
    out = _session_rows(th, "processlist_id", "processlist_time_s", PFS_COLUMNS, "threads", None)
    out["resource"] = _resources(out["state"].array, out["command"].array, server)
    return out[_may_wait(out["ts"], out["session"], out["resource"].array, tl)].reset_index(drop=True)


def _session_rows(
    frame: pd.DataFrame,
    id_column: str,
    time_column: str,
    columns: dict[str, str],
    source: str,
    resource: pd.Categorical | None,
) -> pd.DataFrame:
    """Waits rows of the sessions of ``frame``: their Id and Time (``id_column``, ``time_column``),
    the text ``columns`` (waits column -> ``frame``'s) as categories, ``source`` their
    ``source_frame``, and ``resource`` when already read."""
    out = pd.DataFrame(
        {
            "ts": frame["ts"].array,
            "session": _ids(frame[id_column]).array,
            **{name: _category(frame, column) for name, column in columns.items()},
            "time_s": _ids(frame[time_column]).array if time_column in frame else pd.NA,
            "source_frame": _one(source, len(frame)),
        }
    )
    if resource is not None:
        out["resource"] = resource
    return out


def _paired(left_ts: pd.Series, right: pd.DataFrame) -> pd.DataFrame:
    """``right`` with ``ts`` moved to the nearest distinct time of ``left_ts`` within
    ``pairing.MIN_TOLERANCE`` (rows of no such moment dropped)."""
    if not len(right) or not len(left_ts):
        return right.iloc[0:0]
    pairs = pairing.pair_moments(right["ts"], left_ts, tolerance=pairing.MIN_TOLERANCE).dropna()
    moved = right.assign(ts=pd.to_datetime(right["ts"], utc=True).astype("datetime64[ns, UTC]"))
    moved = moved.merge(pairs, on="ts").drop(columns=["ts"]).rename(columns={"other_ts": "ts"})
    return moved


def _transactions(tl: Timeline) -> pd.DataFrame:
    """``ts session trx_id trx_state lock_wait source_frame``: INNODB_TRX, else the monitor's list."""
    trx = tl.frame("innodb_trx")
    if len(trx) and "thread_id" in trx:
        state = _text(trx, "state")
        return pd.DataFrame(
            {
                "ts": trx["ts"],
                "session": _ids(trx["thread_id"]),
                "trx_id": _text(trx, "trx_id"),
                "trx_state": state,
                "lock_wait": state.eq("LOCK WAIT").fillna(False).to_numpy(),
                "source_frame": "innodb_trx",
            }
        )
    mon = tl.frame("innodb_transactions")
    if len(mon) and "thread_id" in mon:
        mon = mon[~_text(mon, "state").eq("not started").fillna(False).to_numpy()]
        lock_wait = mon["lock_wait"].fillna(False).astype(bool).to_numpy() if "lock_wait" in mon else False
        return pd.DataFrame(
            {
                "ts": mon["ts"],
                "session": _ids(mon["thread_id"]),
                "trx_id": _text(mon, "trx_id"),
                "trx_state": _text(mon, "state"),
                "lock_wait": lock_wait,
                "source_frame": "innodb_status",
            }
        )
    return pd.DataFrame(columns=["ts", "session", "trx_id", "trx_state", "lock_wait", "source_frame"])


def _with_transactions(rows: pd.DataFrame, tl: Timeline, server: str | None) -> pd.DataFrame:
    """``rows`` with each session's transaction (see the module docstring), and the transactions
    of sessions ``rows`` lacks as rows of their own."""
    trx = _paired(rows["ts"], _transactions(tl).dropna(subset=["session"]))
    trx = trx.drop_duplicates(["ts", "session"])
    if not len(trx):
        return rows.assign(trx_id=pd.Series(pd.NA, index=rows.index, dtype="string"))
    merged = rows.merge(trx.drop(columns=["source_frame"]), on=["ts", "session"], how="left", indicator=True)
    known = merged["_merge"].eq("both").to_numpy()
    resource = merged["resource"].astype(object).to_numpy().copy()
    waits_none = resource == Resource.NOTHING.value
    lock_wait = merged["lock_wait"].fillna(False).astype(bool).to_numpy()
    resource[known & lock_wait & waits_none] = Resource.ROW_LOCK.value
    sleeping = merged["command"].eq("Sleep").fillna(False).to_numpy()
    resource[known & ~lock_wait & sleeping & waits_none] = Resource.CLIENT.value
    merged["resource"] = pd.Categorical(resource, dtype=RESOURCE_TYPE)
    merged = merged.drop(columns=["_merge", "trx_state", "lock_wait"])
    alone = trx.merge(
        rows[["ts", "session"]].drop_duplicates(), on=["ts", "session"], how="left", indicator=True
    )
    alone = alone[alone["_merge"].eq("left_only").to_numpy()]
    if len(alone):
        found = [lookup(s, "trx_state", server=server) if pd.notna(s) else None for s in alone["trx_state"]]
        kinds = [(m.resource if m is not None else Resource.UNKNOWN).value for m in found]
        kinds = np.where(alone["lock_wait"].to_numpy(dtype=bool), Resource.ROW_LOCK.value, kinds)
        extra = pd.DataFrame(
            {
                "ts": alone["ts"],
                "session": alone["session"],
                "trx_id": alone["trx_id"],
                "state": alone["trx_state"],
                "source_frame": alone["source_frame"],
                "resource": pd.Categorical(kinds, dtype=RESOURCE_TYPE),
            }
        )
        merged = pd.concat([merged, extra], ignore_index=True)
    return merged


def _lock_waiters(rows: pd.DataFrame, tl: Timeline) -> pd.DataFrame:
    """``rows`` with the sessions pt-stalk ``-lock-waits`` lists as waiting (``waiting_thread``) at
    the same moment read as ``ROW_LOCK`` when their State names no wait (``updating``)."""
    lw = tl.frame("lock_waits")
    if not len(lw) or "waiting_thread" not in lw or not len(rows):
        return rows
    found = _paired(
        rows["ts"], pd.DataFrame({"ts": lw["ts"], "session": _ids(lw["waiting_thread"])}).dropna()
    )
    hit = rows[["ts", "session"]].merge(
        found.drop_duplicates().assign(_w=True), on=["ts", "session"], how="left"
    )
    waiting = (
        hit["_w"].fillna(False).astype(bool).to_numpy()
        & rows["resource"].eq(Resource.NOTHING.value).to_numpy()
    )
    resource = rows["resource"].astype(object).to_numpy().copy()
    resource[waiting] = Resource.ROW_LOCK.value
    return rows.assign(resource=pd.Categorical(resource, dtype=RESOURCE_TYPE))


def _objects(rows: pd.DataFrame, tl: Timeline) -> pd.Series:
    """What each row waits on when the bundle says: the locked table of a row-lock waiter
    (``lock_waits.waiting_table``), the object of a pending metadata lock (``pfs_metadata_locks``)."""
    out = pd.Series(pd.NA, index=rows.index, dtype="string")
    lw = tl.frame("lock_waits")
    if len(lw) and {"waiting_thread", "waiting_table"} <= set(lw.columns):
        found = pd.DataFrame(
            {"ts": lw["ts"], "session": _ids(lw["waiting_thread"]), "object": _text(lw, "waiting_table")}
        )
        out = _fill(out, rows, _paired(rows["ts"], found.dropna()), Resource.ROW_LOCK)
    ml = tl.frame("pfs_metadata_locks")
    if len(ml) and {"lock_status", "processlist_id"} <= set(ml.columns):
        ml = ml[_text(ml, "lock_status").eq("PENDING").fillna(False).to_numpy()]
        name = (
            _text(ml, "object_type").fillna("")
            + " "
            + _text(ml, "object_schema").fillna("")
            + "."
            + _text(ml, "object_name").fillna("")
        ).str.rstrip(".")
        found = pd.DataFrame({"ts": ml["ts"], "session": _ids(ml["processlist_id"]), "object": name})
        for resource in (Resource.METADATA_LOCK, Resource.GLOBAL_READ_LOCK):
            out = _fill(out, rows, _paired(rows["ts"], found.dropna()), resource)
    return out


def _fill(out: pd.Series, rows: pd.DataFrame, found: pd.DataFrame, resource: Resource) -> pd.Series:
    """``out`` with ``found``'s object for the rows of ``resource`` at the same (ts, session)."""
    if not len(found):
        return out
    key = (
        rows[["ts", "session"]]
        .reset_index()
        .merge(found.drop_duplicates(["ts", "session"]), on=["ts", "session"])
    )
    key = key[rows.loc[key["index"], "resource"].eq(resource.value).to_numpy()]
    out.loc[key["index"].to_numpy()] = key["object"].to_numpy()
    return out


def _threads(tl: Timeline) -> pd.DataFrame:
    """Server threads in ``D`` state as waits rows (``source_frame`` ``ps``), with their session
    when performance_schema.threads joins their TID."""
    ps = tl.frame("ps_threads")
    if not threads.has_thread_states(ps) or "wchan" not in ps:
        return pd.DataFrame(columns=WAIT_COLUMNS)
    mask = threads.in_d_state(ps) & (ps["is_mysqld"].to_numpy(dtype=bool) if "is_mysqld" in ps else True)
    pfs = tl.frame("pfs_threads")
    # without performance_schema.threads to join, only the columns read here are copied (a day's
    # threads in D state are hundreds of thousands of rows)
    d = ps[mask] if len(pfs) else ps.loc[mask, [c for c in ("ts", "tid", "wchan") if c in ps]]
    if not len(d):
        return pd.DataFrame(columns=WAIT_COLUMNS)
    wchan = _text(d, "wchan").fillna("").replace("", threads.NO_WCHAN)
    session = pd.Series(pd.NA, index=d.index, dtype="Int64")
    joined = threads.thread_sessions(d, pfs)
    if len(joined):
        by_tid = joined.drop_duplicates(["ts", "tid"]).set_index(["ts", "tid"])["processlist_id"]
        keys = pd.MultiIndex.from_arrays([d["ts"], _ids(d["tid"])])
        session = pd.Series(by_tid.reindex(keys).to_numpy(), index=d.index).astype("Int64")
    known = session.notna().to_numpy()
    codes, names = pd.factorize(wchan)
    by_name = [(wchan_resource(n, session=False).value, wchan_resource(n, session=True).value) for n in names]
    kinds = [by_name[c][int(k)] for c, k in zip(codes, known, strict=True)] if len(codes) else []
    channel = pd.Categorical.from_codes(codes, categories=pd.Index(np.asarray(names, dtype=object)))
    return pd.DataFrame(
        {
            "ts": d["ts"],
            "session": session,
            "state": channel,
            "object": channel,
            "source_frame": _one("ps", len(d)),
            "resource": pd.Categorical(kinds, dtype=RESOURCE_TYPE),
        }
    )


#: The inputs ``waits`` reads (the module docstring; ``variables`` for the server's flavour), for the
#: ``optional`` of a rule that calls it.
WAITS_INPUTS = (
    "innodb_transactions",
    "innodb_trx",
    "lock_waits",
    "pfs_metadata_locks",
    "pfs_threads",
    "processlist",
    "ps_threads",
    "variables",
)


#: The waits frame's text columns held as categories: a day of 1,000 sessions a snapshot is millions
#: of rows of a few names each (a code a row, not a string reference per column).
TEXT_COLUMNS = (
    "host",
    "user",
    "client",
    "db",
    "command",
    "state",
    "object",
    "source_frame",
    "holder_kind",
    "holder_id",
)


def _one(name: str, n: int) -> pd.Categorical:
    """``name`` ``n`` times, as a category."""
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), categories=[name])


def _category(frame: pd.DataFrame, column: str) -> pd.Categorical:
    """``frame[column]`` as a category (all missing when ``frame`` lacks it), without a hash per row
    when it is one already or is all missing."""
    if column not in frame:
        return pd.Categorical.from_codes(np.full(len(frame), -1, dtype=np.int8), categories=[])
    values = frame[column]
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.array
    if values.isna().all():
        return pd.Categorical.from_codes(np.full(len(frame), -1, dtype=np.int8), categories=[])
    return pd.Categorical(values.astype("string"))


def _stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """``parts`` one under the other, a text column (``TEXT_COLUMNS``) a category of the names of all
    parts (``union_categoricals``) rather than the strings ``pd.concat`` makes of categories that
    differ."""
    columns = list(dict.fromkeys(c for p in parts for c in p.columns))
    out = {}
    for column in columns:
        if column in TEXT_COLUMNS:
            cats = [_category(p, column) for p in parts]
            cats = [  # names, whatever dtype each part's categories had (str, object, none at all)
                pd.Categorical.from_codes(
                    c.codes, categories=pd.Index(c.categories.astype(str), dtype=object)
                )
                for c in cats
            ]
            out[column] = pd.Categorical(union_categoricals(cats, ignore_order=True))
        else:
            values = [p[column] if column in p else pd.Series(pd.NA, index=p.index) for p in parts]
            out[column] = pd.concat(values, ignore_index=True)
    return pd.DataFrame(out)


def _may_wait(ts: pd.Series, ids: pd.Series, resource: pd.Categorical, tl: Timeline) -> np.ndarray:
    """Which of the sessions (``ts``, ``ids`` their processlist Id, ``resource`` what their State or
    Command names) may wait for something: those of a resource, and those waiting for ``NOTHING``
    by their State that a transaction or a lock wait of the same moment names (``_with_transactions``
    and ``_lock_waiters`` make them waiters). The others, most of a day's sessions (running or
    idle), are no rows of the waits frame."""
    keep = np.asarray(resource != Resource.NOTHING.value, dtype=bool)
    lw = tl.frame("lock_waits")
    named = [_transactions(tl)[["ts", "session"]]]
    if len(lw) and "waiting_thread" in lw:
        named.append(pd.DataFrame({"ts": lw["ts"], "session": _ids(lw["waiting_thread"])}))
    named = [n.dropna() for n in named if len(n)]
    if not named or keep.all():
        return keep
    found = _paired(ts, pd.concat(named, ignore_index=True)).drop_duplicates()
    if not len(found):
        return keep
    maybe = ~keep & _ids(ids).isin(found["session"].unique()).fillna(False).to_numpy(dtype=bool)
    if maybe.any():
        at = pd.MultiIndex.from_arrays([ts[maybe], _ids(ids[maybe])])
        keep[np.flatnonzero(maybe)[at.isin(pd.MultiIndex.from_frame(found[["ts", "session"]]))]] = True
    return keep


def snapshots(tl: Timeline) -> pd.Series:
    """The times of the snapshots the waits frame reads sessions from (the processlist's, else
    performance_schema.threads'), sorted, indexed by themselves: a snapshot where no session waits
    has no row in the waits frame but is a moment of the capture."""
    for name in ("processlist", "pfs_threads"):
        frame = tl.frame(name)
        if len(frame) and "ts" in frame:
            ts = pd.DatetimeIndex(np.unique(frame["ts"].to_numpy(dtype="datetime64[ns]"))).tz_localize("UTC")
            return pd.Series(ts, index=ts)
    return pd.Series([], dtype="datetime64[ns, UTC]")


def waits(tl: Timeline) -> pd.DataFrame:
    """The waits frame of ``tl`` (see the module docstring), in ``WAIT_COLUMNS``, sorted by ``ts``."""
    server = server_of(tl.variables)
    rows = _sessions(tl, server)
    if len(rows) or len(_transactions(tl)):
        rows = _lock_waiters(_with_transactions(rows, tl, server), tl)
        if "resource" in rows:  # a session waiting for nothing is no row (see _may_wait)
            rows = rows[~rows["resource"].eq(Resource.NOTHING.value).to_numpy()]
        rows = rows.assign(object=_objects(rows, tl))
    parts = [frame for frame in (rows, _threads(tl)) if len(frame)]
    del rows
    rows = _stacked(parts) if len(parts) > 1 else (parts[0] if parts else _threads(tl))
    del parts  # a day's sessions are millions of rows: the parts go before the frame is typed
    out = pd.DataFrame(
        {c: rows[c] if c in rows else pd.Series(pd.NA, index=rows.index) for c in WAIT_COLUMNS},
        index=rows.index,
        copy=False,
    ).reset_index(drop=True)
    del rows
    out["ts"] = pd.to_datetime(out["ts"], utc=True).astype("datetime64[ns, UTC]")
    out["host"] = _one(tl.host, len(out)) if tl.host is not None else _category(out, "host")
    out["trx_id"] = out["trx_id"].astype("string")
    for column in TEXT_COLUMNS:
        out[column] = _category(out, column)
    out["session"] = out["session"].astype("Int64")
    out["time_s"] = _ids(out["time_s"]) if len(out) else out["time_s"].astype("Int64")
    out["resource"] = out["resource"].astype(RESOURCE_TYPE)
    if not out["ts"].is_monotonic_increasing:  # sorted column by column: never two copies of the frame
        order = np.argsort(out["ts"].to_numpy(dtype="datetime64[ns]"), kind="stable")
        for column in WAIT_COLUMNS:
            out[column] = out[column].array.take(order)
    return out
