"""Holder reader (see analyzer.waits.holders): the thread pool's worker slots, ``Resource.CPU``.

With ``thread_handling=pool-of-threads`` (MariaDB, Percona Server) a connection has no thread of its
own: ``thread_pool_size`` thread groups (one per CPU by default) each run about one statement at a
time, and the connections of a group queue for it, their logins too. The pool adds a thread to a
group only when its running statement waits (I/O, a lock) or has run longer than
``thread_pool_stall_limit`` (ms), the group is then stalled. A statement that keeps a CPU busy for
seconds therefore holds its group: the connections behind it get no thread, and a connection whose
login no thread has run has no session in the processlist, though ``Threads_connected`` counts it.

Read when the server runs the pool (``-variables``) and connections get no thread: ``Threads_connected``
stays ``UNSEEN_MIN`` or more above the sessions the processlist shows (``processlist_sessions``) in
``STARVED_MIN_SNAPSHOTS`` snapshots or more, or ``Threadpool_threads`` reaches
``thread_pool_max_threads`` (the pool cannot grow). The holders are the client statements seen
running through those snapshots for ``HOLDER_MIN_S`` or more, inside the stall limit (past it the
pool may add a thread, unless it is at its maximum): named only when there are as many as thread
groups, every group occupied; else the holding says what the bundle shows, with no holder. Sources:
MariaDB Server documentation, "Thread Pool in MariaDB", "Thread Groups in the Unix Implementation of
the Thread Pool", "Thread Pool System and Status Variables". Pure: no I/O, no clock, no Django.
"""

from __future__ import annotations

import pandas as pd

from analyzer.detect import cite, status, variable_number
from analyzer.findings import Culprit, Evidence, Window
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holding import HOLDER_MIN_S, Holding, reads
from analyzer.waits.model import Resource

#: ``thread_handling`` of a server running the thread pool (MariaDB "Thread Pool System and Status
#: Variables"; Percona Server uses the same value).
POOL_HANDLING = "pool-of-threads"
#: Connections counted but not seen, at least this many at once: a queue (as the waits rule's
#: WAIT_MIN_SESSIONS), not a login passing between two samples.
UNSEEN_MIN = 3
#: ... in this many snapshots or more.
STARVED_MIN_SNAPSHOTS = 2
#: A mysqladmin sample and a processlist snapshot of one collection are this close at most.
MATCH_TOLERANCE = pd.Timedelta(seconds=2)
#: The pool variables quoted as evidence.
POOL_VARIABLES = (
    "thread_handling",
    "thread_pool_size",
    "thread_pool_stall_limit",
    "thread_pool_oversubscribe",
    "thread_pool_max_threads",
)
#: Holders listed in the text and the fix, longest running first.
HOLDERS_LISTED = 5


def _seen(tl: Timeline) -> pd.DataFrame:
    """Sessions per processlist snapshot, idle ones included: ``ts seen`` (``processlist_sessions``,
    else the processlist's rows)."""
    counts = tl.frame("processlist_sessions")
    if len(counts) and "sessions" in counts:
        per = counts.groupby("ts")["sessions"].sum()
    else:
        pl = tl.frame("processlist")
        per = pl.groupby("ts").size() if len(pl) else pd.Series(dtype="int64")
    return pd.DataFrame({"ts": per.index, "seen": per.to_numpy(dtype="float64")})


def unseen_connections(tl: Timeline) -> pd.DataFrame:
    """Per processlist snapshot: ``ts seen connected unseen`` (``Threads_connected`` of the nearest
    mysqladmin sample within MATCH_TOLERANCE minus the sessions the processlist shows), plus the
    matched mysqladmin rows' ``line_no`` and ``member``; empty without both."""
    seen = _seen(tl)
    connected = status(tl, "Threads_connected")
    if not len(seen) or not len(connected):
        return pd.DataFrame(columns=["ts", "seen", "connected", "unseen", "line_no", "member"])
    right = connected[["ts", "value", "line_no", "member"]].rename(columns={"value": "connected"})
    both = pd.merge_asof(
        seen.sort_values("ts"),
        right.sort_values("ts"),
        on="ts",
        direction="nearest",
        tolerance=MATCH_TOLERANCE,
    ).dropna(subset=["connected"])
    return both.assign(unseen=both["connected"] - both["seen"])


def _running(tl: Timeline, window: Window) -> pd.DataFrame:
    """Client statements running in ``window``, one row per session's last run (its Time never falling
    between its snapshots); ``held_s`` the span of its snapshots, at most its Time (a new statement in
    every snapshot, Time 0, runs none long): ``id user host fingerprint first last time_first time_last
    held_s``."""
    pl = tl.frame("processlist")
    if not len(pl) or not {"id", "active", "time_s"} <= set(pl.columns):
        return pd.DataFrame(columns=["id", "held_s", "time_last"])
    rows = pl[pl["active"].astype(bool).to_numpy() & pl["ts"].between(window.start, window.end).to_numpy()]
    out = []
    for sid, mine in rows.sort_values("ts").groupby("id", sort=False):
        t = pd.to_numeric(mine["time_s"], errors="coerce").astype("float64")
        restarts = (t.diff() < 0).astype("int64").cumsum()
        run = mine[(restarts == restarts.iloc[-1]).to_numpy()]
        fp = (
            run["fingerprint"].astype("string").dropna()
            if "fingerprint" in run
            else pd.Series(dtype="string")
        )
        out.append(
            {
                "id": int(sid),
                "user": str(run["user"].iloc[-1]),
                "host": str(run["host"].iloc[-1]),
                "fingerprint": str(fp.iloc[-1]) if len(fp) else None,
                "first": run["ts"].iloc[0],
                "last": run["ts"].iloc[-1],
                "time_first": float(t[run.index].iloc[0]),
                "time_last": float(t[run.index].iloc[-1]),
                "held_s": min(
                    (run["ts"].iloc[-1] - run["ts"].iloc[0]).total_seconds(), float(t[run.index].iloc[-1])
                ),
                "rows": run,
            }
        )
    found = pd.DataFrame(out)
    return found.sort_values("time_last", ascending=False) if len(found) else found


@reads(Resource.CPU, always=True, inputs=("processlist", "processlist_sessions", "mysqladmin", "variables"))
def thread_pool(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The statements holding every thread group of the pool while connections get no thread (see
    the module docstring); [] when the server does not run the pool or every connection has one."""
    if str(tl.variables.get("thread_handling", "")).strip().lower() != POOL_HANDLING:
        return []
    per = unseen_connections(tl)
    starved = per[per["unseen"] >= UNSEEN_MIN] if len(per) else per
    threads = status(tl, "Threadpool_threads")
    max_threads = variable_number(tl, "thread_pool_max_threads")
    at_max = bool(max_threads) and len(threads) and float(threads["value"].max()) >= float(max_threads or 0)
    if len(starved) < STARVED_MIN_SNAPSHOTS and not at_max:
        return []
    rows = starved if len(starved) >= STARVED_MIN_SNAPSHOTS else threads
    window = Window(rows["ts"].min(), rows["ts"].max())
    groups = int(variable_number(tl, "thread_pool_size") or tl.ncpu or 1)
    stall_s = (variable_number(tl, "thread_pool_stall_limit") or 0.0) / 1000.0
    waiting = int(starved["unseen"].max()) if len(starved) else 0
    evidence = _pool_evidence(tl, starved, threads, waiting)
    running = _running(tl, window)
    if len(running):
        inside = (running["time_first"] < stall_s) if stall_s and not at_max else True
        running = running[(running["held_s"] >= HOLDER_MIN_S) & inside]
    pool = f"{groups} thread group(s) (thread_pool_size)"
    connections = (
        f"Threads_connected {int(starved['connected'].min())}-{int(starved['connected'].max())} "
        "against "
        f"{int(starved['seen'].min())}-{int(starved['seen'].max())} sessions in the "
        "processlist: up to "
        f"{waiting} connections get no thread"
        if len(starved)
        else f"Threadpool_threads at thread_pool_max_threads {max_threads:.0f}"
    )
    if len(running) < groups:
        busy = ", ".join(f"session {r.id} ({r.time_last:.0f} s)" for r in running.itertuples())
        return [
            Holding(
                Resource.CPU,
                tl.host,
                None,
                shown_by=connections,
                waiters=waiting,
                windows=(window,),
                object=f"thread pool, {pool}",
                contention=f"{connections}; {len(running)} long statement(s) for {pool}"
                + (f": {busy}" if busy else ""),
                fix="Look at information_schema.THREAD_POOL_GROUPS (QUEUE_LENGTH, IS_STALLED) and "
                "THREAD_POOL_QUEUES while it happens.",
                evidence=tuple(evidence),
            )
        ]
    return [
        _holding(tl, running.head(max(groups, 1)), groups, stall_s, window, waiting, connections, evidence)
    ]


def _pool_evidence(
    tl: Timeline, starved: pd.DataFrame, threads: pd.DataFrame, waiting: int
) -> list[Evidence]:
    """The pool's variables, the connections counted against the sessions shown, the pool's threads."""
    evidence = [
        Evidence(f"variable {n}", tl.variables[n], "", f"variables.{n}")
        for n in POOL_VARIABLES
        if n in tl.variables
    ]
    if len(starved):
        evidence += [
            cite(
                tl,
                "Threads_connected (max) while connections get no thread",
                int(starved["connected"].max()),
                "connections",
                "mysqladmin.Threads_connected",
                starved,
            ),
            Evidence(
                "sessions the processlist shows (min)",
                int(starved["seen"].min()),
                "sessions",
                "processlist_sessions.sessions",
            ),
            Evidence(
                "connections counted but not in the processlist (max)",
                waiting,
                "connections",
                "mysqladmin.Threads_connected",
            ),
        ]
    idle = status(tl, "Threadpool_idle_threads")
    for name, found in (("Threadpool_threads", threads), ("Threadpool_idle_threads", idle)):
        if len(found):
            evidence.append(
                cite(tl, f"{name} (max)", int(found["value"].max()), "threads", f"mysqladmin.{name}", found)
            )
    return evidence


def _holding(
    tl: Timeline,
    held: pd.DataFrame,
    groups: int,
    stall_s: float,
    window: Window,
    waiting: int,
    connections: str,
    evidence: list[Evidence],
) -> Holding:
    """The longest-running statement as holder, the others holding the other groups named with it."""
    top = held.iloc[0]
    ev = list(evidence)
    for r in held.head(HOLDERS_LISTED).itertuples():
        ev.append(
            cite(
                tl,
                f"session {r.id}: Time over its snapshots",
                (f"{r.time_first:.0f} -> {r.time_last:.0f}"),
                "s",
                "processlist.time_s",
                r.rows,
            )
        )
    since = top["last"] - pd.Timedelta(seconds=float(top["time_last"]))
    holder = Culprit(
        kind="session",
        id=str(top["id"]),
        user=top["user"],
        host=top["host"],
        statement=top["fingerprint"],
        since=since.floor("s"),
        blocks=waiting,
        evidence=tuple(ev),
    )
    ids = [str(i) for i in held["id"].head(HOLDERS_LISTED)]
    each = "; ".join(
        f"session {r.id} ({r.user}@{r.host}) runs {r.fingerprint or 'a statement'} in every snapshot from "
        f"{r.first:%H:%M:%S} to {r.last:%H:%M:%S} (Time {r.time_first:.0f} -> {r.time_last:.0f} s)"
        for r in held.head(HOLDERS_LISTED).itertuples()
    )
    stall = (
        (
            f"; under thread_pool_stall_limit ({stall_s:g} s) the pool counts no group stalled and adds "
            "no thread"
        )
        if stall_s
        else ""
    )
    shown_by = f"{each}, holding {len(held)} of {groups} thread group(s){stall}; {connections}"
    ncpu = tl.ncpu or 0
    more = (
        f"one thread group per CPU (thread_pool_size = {ncpu}; it is {groups})"
        if ncpu > groups
        else f"thread_pool_size (one per CPU, {groups} now)"
    )
    fix = (
        f"KILL {'; KILL '.join(ids)};  -- the statement holding the pool's thread group(s): the connections "
        f"queued behind it get a thread again. Then {more}, and a shorter thread_pool_stall_limit (the "
        "default "
        "500 ms) or a larger thread_pool_oversubscribe, so that one long statement does not hold its group's "
        "queue; run long reports on a replica or through extra_port (one thread per connection)."
    )
    return Holding(
        Resource.CPU,
        tl.host,
        holder,
        shown_by=shown_by,
        held_s=float(top["held_s"]),
        age_s=float(top["time_last"]),
        waiters=waiting,
        windows=(window,),
        object=f"thread pool, {groups} thread group(s) (thread_pool_size)",
        fix=fix,
        evidence=tuple(ev),
    )
