"""Simulated sessions and threads, advanced one second at a time, and the processlist and ps
blocks written from them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bench.gen.formats import PS_HEAD
from bench.gen.model import (
    FIRST_CONN_TID,
    MYSQLD_PID,
    PID_MAX,
    SESSION_CHURN_PER_S,
    SHAPES_DEFAULT,
    Shape,
    Spec,
    lerp,
)
from bench.gen.server_data import D_WCHANS, IDLE_WCHAN, QUERIES, QUERY_WEIGHTS, STATE_WEIGHTS, STATES


# ---------------------------------------------------------------------------------------------
# Simulated server state, advanced one second at a time
# ---------------------------------------------------------------------------------------------
@dataclass
class Sessions:
    """The application's connections: id, thread id, host; what each does this second."""

    ids: np.ndarray
    tids: np.ndarray
    hosts: list[str]
    users: list[str]
    last_active: np.ndarray  # second index of the last query (Sleep Time counts from it)
    query_start: np.ndarray  # second index the running query started, -1 when idle
    query: list[str | None]
    state: list[str]
    next_id: int
    next_tid: int
    active: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    blocked: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def _host(rng: np.random.Generator) -> str:
    return f"10.20.{int(rng.integers(1, 9))}.{int(rng.integers(2, 250))}:{int(rng.integers(32768, 60999))}"


def new_sessions(spec: Spec, rng: np.random.Generator) -> Sessions:
    n = spec.sessions
    ids = np.arange(1000, 1000 + n, dtype=np.int64)
    tids = np.arange(FIRST_CONN_TID, FIRST_CONN_TID + n, dtype=np.int64)
    users = ["report" if rng.random() < 0.05 else "app" for _ in range(n)]
    return Sessions(
        ids=ids,
        tids=tids,
        hosts=[_host(rng) for _ in range(n)],
        users=users,
        last_active=-rng.integers(0, 300, n),
        query_start=np.full(n, -1, dtype=np.int64),
        query=[None] * n,
        state=[""] * n,
        next_id=1000 + n,
        next_tid=FIRST_CONN_TID + n,
    )


def _literal(template: str, rng: np.random.Generator) -> str:
    return template.format(
        a=int(rng.integers(1, 9_000_000)), b=int(rng.integers(1, 40)), c=int(rng.integers(100, 99999))
    )


def step_sessions(
    s: Sessions,
    k: int,
    stress: float,
    rng: np.random.Generator,
    shape: Shape = SHAPES_DEFAULT,
    ncpu: int = 64,
    dt: int = 1,
) -> None:
    """Advance the sessions to second ``k`` (``dt`` s after the last step): churn, who runs what, which ones
    are stuck (on I/O, a lock, a commit: the shape's load)."""
    n = len(s.ids)
    churn = np.flatnonzero((rng.random(n) < SESSION_CHURN_PER_S * dt) & (s.query_start < 0))
    for i in churn:
        s.ids[i] = s.next_id
        s.next_id += 1
        s.tids[i] = s.next_tid
        s.next_tid = s.next_tid + 1 if s.next_tid + 1 < PID_MAX else FIRST_CONN_TID + n
        s.hosts[i] = _host(rng)
        s.last_active[i] = k
    # A running query ends this second unless it is stuck (on the stalled disk, a commit...).
    p_stuck = lerp(shape.stuck, stress)
    if shape.active_per_cpu is None:
        p_active = 0.22 + 0.45 * stress
    else:
        # Steady state: a share a of the sessions runs when idle ones start with p and running ones
        # stay with p_stuck: a = p / (1 - p_stuck + p), so p = a (1 - p_stuck) / (1 - a).
        a = min(0.95, lerp(shape.active_per_cpu, stress) * ncpu / max(1, n))
        p_active = a * (1 - p_stuck) / (1 - a)
    running = s.query_start >= 0
    stuck = running & (rng.random(n) < p_stuck)
    ended = running & ~stuck
    s.query_start[ended] = -1
    s.last_active[ended] = k
    start = (s.query_start < 0) & (rng.random(n) < p_active)
    q_idx = rng.choice(len(QUERIES), size=n, p=QUERY_WEIGHTS / QUERY_WEIGHTS.sum())
    st_idx = rng.choice(len(STATES), size=n, p=STATE_WEIGHTS / STATE_WEIGHTS.sum())
    stall_pick = rng.random(n) < lerp(shape.stall_share, stress)
    stall_state = rng.choice(shape.stall_states, size=n)
    for i in np.flatnonzero(start):
        s.query_start[i] = k
        stalled = bool(stall_pick[i])
        template = shape.stall_query if stalled and shape.stall_query else QUERIES[q_idx[i]]
        s.query[i] = _literal(template, rng)
        s.state[i] = STATES[stall_state[i] if stalled else st_idx[i]]
    for i in np.flatnonzero(ended & ~start):
        s.query[i] = None
        s.state[i] = ""
    s.active = s.query_start >= 0
    p_blocked = lerp(shape.blocked, stress)
    if shape.active_per_cpu is None:
        s.blocked = s.active & (k - s.query_start >= dt) & (rng.random(n) < p_blocked)
    else:  # a thread can wait in D from its first second (a file creation, a read)
        s.blocked = s.active & (rng.random(n) < p_blocked)


# ---------------------------------------------------------------------------------------------
# Member writers (one call per second)
# ---------------------------------------------------------------------------------------------
def processlist_block(s: Sessions, k: int) -> str:
    """One ``SHOW FULL PROCESSLIST\\G`` result (MariaDB 10.11): sessions by Id, then ours."""
    out: list[str] = []
    order = np.argsort(s.ids, kind="stable")
    row = 0
    for i in order.tolist():
        row += 1
        q = s.query[i]
        if q is None:
            cmd, time_s, state, info = "Sleep", k - int(s.last_active[i]), "", "NULL"
        else:
            cmd, time_s, state, info = "Query", k - int(s.query_start[i]), s.state[i], q
        out.append(
            f"*************************** {row}. row ***************************\n"
            f"      Id: {s.ids[i]}\n    User: {s.users[i]}\n    Host: {s.hosts[i]}\n      db: shop\n"
            f" Command: {cmd}\n    Time: {time_s}\n   State: {state}\n    Info: {info}\nProgress: 0.000\n"
        )
    row += 1
    out.append(
        f"*************************** {row}. row ***************************\n"
        f"      Id: {s.next_id + 500000 + k}\n    User: root\n    Host: localhost\n      db: NULL\n"
        " Command: Query\n    Time: 0\n   State: starting\n    Info: SHOW FULL PROCESSLIST\nProgress: 0.000\n"
    )
    return "".join(out)


#: System daemons in the ps listing: (comm, user, threads, wchan).
DAEMONS = (
    ("systemd-journal", "root", 1, "ep_poll"),
    ("systemd-udevd", "root", 1, "ep_poll"),
    ("rsyslogd", "syslog", 4, "do_select"),
    ("sshd", "root", 1, "do_select"),
    ("chronyd", "_chrony", 1, "do_select"),
    ("node_exporter", "prometh+", 12, "futex_wait_queue"),
    ("mysqld_exporter", "prometh+", 8, "futex_wait_queue"),
    ("cron", "root", 1, "hrtimer_nanosleep"),
)


@dataclass
class Threads:
    """The ps -eLo rows that do not follow sessions: kernel threads, daemons, mariadbd helpers."""

    before: list[tuple[str, str, str, float]]  # (prefix "PID TID PPID USER", stat, wchan, pcpu)
    mysqld_helpers: list[tuple[int, str, str, float]]  # (tid, stat, wchan, pcpu)
    comm_before: list[str]


def new_threads(spec: Spec, rng: np.random.Generator) -> Threads:
    rows: list[tuple[int, int, int, str, str, str, str]] = []  # pid tid ppid user stat comm wchan
    rows.append((1, 1, 0, "root", "Ss", "systemd", "ep_poll"))
    rows.append((2, 2, 0, "root", "S", "kthreadd", "kthreadd"))
    pid = 3
    for name in ("rcu_gp", "rcu_par_gp", "slub_flushwq", "netns", "mm_percpu_wq", "rcu_tasks_kthre"):
        rows.append((pid, pid, 2, "root", "I<", name, "rescuer_thread"))
        pid += 1
    per_cpu = (
        ("cpuhp/{}", "S", "smpboot_thread_fn"),
        ("migration/{}", "S", "smpboot_thread_fn"),
        ("ksoftirqd/{}", "S", "smpboot_thread_fn"),
        ("kworker/{}:0-events", "I", "worker_thread"),
        ("kworker/{}:0H-kblockd", "I<", "worker_thread"),
    )
    # Fixed rows besides the per-CPU kernel threads: kernel helpers, jbd2 per disk, kswapd, daemons.
    others = len(rows) + spec.disks + 1 + sum(d[2] for d in DAEMONS)
    cpus_listed = spec.cpus
    while cpus_listed and others + len(per_cpu) * cpus_listed + spec.sessions + 10 > spec.threads:
        cpus_listed -= 1
    for cpu in range(cpus_listed):
        for fmt, stat, wchan in per_cpu:
            rows.append((pid, pid, 2, "root", stat, fmt.format(cpu)[:15], wchan))
            pid += 1
    for d in range(spec.disks):
        rows.append((pid, pid, 2, "root", "S", f"jbd2/nvme{d}n1p1-"[:15], "kjournald2"))
        pid += 1
    rows.append((pid, pid, 2, "root", "S", "kswapd0", "kswapd"))
    pid += 1
    dpid = 900
    for comm, user, nthreads, wchan in DAEMONS:
        for t in range(nthreads):
            rows.append((dpid, dpid + t, 1, user, "Ssl" if t == 0 and nthreads > 1 else "Sl", comm, wchan))
        dpid += 20
    # Whatever the budget leaves goes to mariadbd's own threads (InnoDB, thread cache, timers).
    helpers_n = spec.threads - len(rows) - spec.sessions
    if helpers_n < 0:
        rows = rows[:helpers_n]
    helper_wchans = ("futex_wait_queue", "io_uring_cqring_wait", "do_sigtimedwait.isra.0", "ep_poll")
    helpers = [
        (
            MYSQLD_PID + t,
            "Ssl" if t == 0 else "Sl",
            helper_wchans[t % len(helper_wchans)],
            float(rng.uniform(0, 3)),
        )
        for t in range(max(0, helpers_n))
    ]
    before = [
        (f"{p:5d} {t:5d} {pp:5d} {u:<8} ", st, w, float(rng.uniform(0, 0.3)))
        for p, t, pp, u, st, _, w in rows
    ]
    return Threads(before=before, mysqld_helpers=helpers, comm_before=[r[5] for r in rows])


def ps_block(
    th: Threads, s: Sessions, rng: np.random.Generator, stress: float, d_wchans: tuple[str, ...] = D_WCHANS
) -> str:
    """One ``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32`` listing (header included)."""
    out = [PS_HEAD]
    jitter = rng.random(len(th.before))
    for (prefix, stat, wchan, pcpu), comm, j in zip(th.before, th.comm_before, jitter.tolist(), strict=True):
        if stat == "I" and j < 0.02:
            out.append(f"{prefix}R    {pcpu:4.1f} {comm:<15} -\n")
        else:
            out.append(f"{prefix}{stat:<4} {pcpu:4.1f} {comm:<15} {wchan}\n")
    # mariadbd: helpers and connection threads, by TID (the kernel's task order).
    rows: list[tuple[int, str]] = []
    prefix = f"{MYSQLD_PID:5d}"
    pp = f"{1:5d} mysql    "
    for tid, stat, wchan, pcpu in th.mysqld_helpers:
        rows.append((tid, f"{prefix} {tid:5d} {pp}{stat:<4} {pcpu:4.1f} mariadbd        {wchan}\n"))
    r = rng.random(len(s.ids))
    d_pick = rng.integers(0, len(d_wchans), len(s.ids))
    pcpu = np.round(rng.gamma(1.2, 1.5, len(s.ids)), 1)
    for i, tid in enumerate(s.tids.tolist()):
        if s.blocked[i]:
            stat, wchan = "Dl", d_wchans[d_pick[i]]
        elif s.active[i] and r[i] < 0.7:
            stat, wchan = "Rl", "-"
        elif s.active[i]:
            stat, wchan = "Sl", "futex_wait_queue"
        else:
            stat, wchan = "Sl", IDLE_WCHAN
        rows.append(
            (tid, f"{prefix} {tid:5d} {pp}{stat:<4} {min(pcpu[i], 99.9):4.1f} mariadbd        {wchan}\n")
        )
    rows.sort(key=lambda t: t[0])
    out.extend(line for _, line in rows)
    return "".join(out)
