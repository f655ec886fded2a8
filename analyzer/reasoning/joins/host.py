"""Joins through one server's devices, threads and counters: the process that takes a device, the
device whose queue the blocked threads wait in, the busy cores behind interrupts and switches.

A host-level join links two findings of the same server only when the effect is a counter the cause
is known to move (a saturated run queue makes rescheduling interrupts and context switches; a
saturated device delays InnoDB's pending reads and writes). Sources: iostat(1), sysstat 12.6; ps(1)
and top(1), procps-ng 4.0; kernel Documentation/admin-guide/iostats.rst.
"""

from __future__ import annotations

import pandas as pd

from analyzer.evidence.threads import in_d_state
from analyzer.findings import Finding, Link
from analyzer.reasoning.links import JoinContext, joins, link, same_host, subject_ids
from analyzer.timeline.windows import within

#: The cause's threads are at least this share of the effect's D-state threads.
D_THREADS_SHARE = 0.5


@joins(("io-consumer", "disk-saturation"), ("disk-saturation", "innodb-pending-io"))
def same_device(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Both findings name one block device (``subjects`` ``device``); InnoDB's pending I/O has no
    device of its own and joins a saturated device of its server."""
    if not same_host(cause, effect):
        return None
    devices = subject_ids(cause, "device")
    theirs = subject_ids(effect, "device")
    shared = devices & theirs if theirs else devices
    if not shared:
        return None
    device = min(shared)
    if effect.key == "innodb-pending-io":
        sentence = (
            f"InnoDB's pending reads and writes wait in the queue of device {device}, the saturated one."
        )
    else:
        who = cause.culprit.statement or cause.culprit.id if cause.culprit else "the process named"
        sentence = (
            f"The requests that fill device {device} are those of {who} (PID "
            f"{cause.culprit.id if cause.culprit else '?'})."
        )
    return link(cause, effect, "device", sentence, cause.evidence[:2])


def _d_rows(ctx: JoinContext, effect: Finding) -> pd.DataFrame | None:
    tl = ctx.timeline(effect)
    if tl is None:
        return None
    ps = tl.frame("ps_threads")
    if not len(ps) or "state" not in ps:
        return None
    ps = ps[in_d_state(ps)]
    return ps[within(ps["ts"], list(effect.windows))] if effect.windows else ps


@joins(("io-consumer", "load-from-uninterruptible-threads"))
def consumer_threads_blocked(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Most D-state threads of the effect belong to the process the cause names (ps PID)."""
    if not same_host(cause, effect) or cause.culprit is None:
        return None
    d = _d_rows(ctx, effect)
    if d is None or not len(d):
        return None
    mine = d["pid"].astype("string") == cause.culprit.id
    share = float(mine.mean())
    if share < D_THREADS_SHARE:
        return None
    return link(
        cause,
        effect,
        "process",
        f"{share:.0%} of the threads in D state belong to PID {cause.culprit.id}, the process named.",
    )


@joins(
    ("commit-serialization", "load-from-uninterruptible-threads"),
    ("disk-saturation", "load-from-uninterruptible-threads"),
)
def server_threads_blocked(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """Most D-state threads of the effect are mysqld's (ps), the server whose commits or device the
    cause names: they wait for the log flush or the device."""
    if not same_host(cause, effect):
        return None
    d = _d_rows(ctx, effect)
    if d is None or not len(d) or "is_mysqld" not in d:
        return None
    share = float(d["is_mysqld"].astype(bool).mean())
    if share < D_THREADS_SHARE:
        return None
    what = "the redo-log flush (fsync)" if cause.key == "commit-serialization" else "the saturated device"
    return link(
        cause,
        effect,
        "thread",
        f"{share:.0%} of the threads in D state are mysqld's threads, waiting for {what}.",
    )


#: Host counters a cause moves, with the sentence that says how (same server only).
HOST_EFFECTS: dict[tuple[str, str], str] = {
    ("cpu-saturation", "interrupt-storm"):
        "rescheduling interrupts follow the runnable threads queued behind the busy cores (vmstat r, in)",
    ("cpu-saturation", "context-switch-storm"):
        "the runnable threads queued behind the busy cores are switched in and out (vmstat r, cs)",
    ("cpu-saturation", "tcp-retransmits"):
        "with no CPU left, acknowledgements go out late and segments are retransmitted, loopback included",
    ("disk-saturation", "interrupt-storm"):
        "the device's completions interrupt the CPUs and wake the waiting threads",
    ("commit-serialization", "iowait-understates-io"):
        "the sessions wait for another thread's redo-log fsync, which the kernel counts as idle, not iowait",
    ("io-consumer", "iowait-understates-io"): "the process named waits on the disk, not MySQL",
    ("long-transaction", "purge-lag"): ("the open transaction's read view holds back the purge of undo "
                                        "records"),
    ("table-cache-full", "table-cache-contention"):
        "the full table cache closes a table for every table it opens, and the sessions queue for it",
    ("innodb-latch-contention", "innodb-semaphore-waits"): "the threads wait on the hot latch",
    ("numa-imbalance", "swap-activity"): "the full NUMA node reclaims and swaps while another node has room",
    ("numa-imbalance", "direct-reclaim-stalls"): "the full NUMA node's allocations reclaim pages directly",
}  # fmt: skip
#: What each host-level join reads, for the catalogue (docs/findings.md).
PAIR_WHY = HOST_EFFECTS


@joins(*HOST_EFFECTS)
def same_server_counter(cause: Finding, effect: Finding, ctx: JoinContext) -> Link | None:
    """The effect is a counter of the same server the cause moves (HOST_EFFECTS); a CPU saturated by
    another process still makes interrupts and switches."""
    if not same_host(cause, effect):
        return None
    why = HOST_EFFECTS[(cause.key, effect.key)]
    return link(cause, effect, "host", f"On the same server, {why}.")
