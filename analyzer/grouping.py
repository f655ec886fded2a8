"""Group findings that share one root cause, so the case page shows one explanation, not unrelated alarms.

In seed 000 the load of 588, the D-state threads in ``unlinkat``, the 700 sessions running one query
and the idle CPUs were one story: the query built on-disk temporary tables and the file system
serialised their creation and deletion. In seed 001 the idle CPUs with low iowait were the commits
queued on the redo-log fsync. ``EXPLAINS`` encodes such links; ``group`` applies them.

How a group is written into the findings (``Finding.related``, set with ``dataclasses.replace``):
- an explained finding gets ``related = (root_key, ...)``: the **first** key is its root cause, and a
  sentence naming the root cause is appended to its explanation;
- the root finding gets ``related`` = the keys it explains (in the findings' order), and a sentence
  listing them.
A finding neither explains nor is explained keeps ``related`` as the rule set it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from analyzer.findings import Finding


@dataclass(frozen=True, slots=True)
class Explains:
    """``root`` explains ``explained`` when both fired in overlapping windows; ``why`` says how."""

    root: str
    explained: str
    why: str


#: Links between findings, strongest first: an explained finding is attached to the first root in
#: this order that fired in an overlapping window. Must stay acyclic (tests check it).
EXPLAINS: tuple[Explains, ...] = (
    # seed 000: the temporary tables are the root cause; tmpdir on tmpfs removed the load.
    Explains("tmp-table-churn", "load-from-uninterruptible-threads",
             "the threads in D state are creating and deleting the on-disk temporary tables' files"),
    Explains("tmp-table-churn", "iowait-understates-io",
             "the CPUs are idle because the threads wait on temporary-table files, which is not counted as iowait"),
    Explains("tmp-table-churn", "same-query-pileup",
             "the piled-up query builds an on-disk temporary table on every run, so each run waits on the file "
             "system and the sessions pile up"),
    Explains("tmp-table-churn", "active-sessions-overload",
             "the statements stay active while they wait to create and delete temporary-table files"),
    # seed 001: commits serialised on the redo-log fsync.
    Explains("commit-serialization", "iowait-understates-io",
             "the sessions wait for another thread's redo-log fsync, which the kernel counts as idle, not iowait"),
    Explains("commit-serialization", "active-sessions-overload",
             "most active sessions are queued in the commit phase"),
    Explains("commit-serialization", "load-from-uninterruptible-threads",
             "threads in D state wait for the log flush (fsync)"),
    # Cause before consequence (issue 23): the blocking transaction and the deadlocks come before the
    # lock waits they cause.
    Explains("long-transaction", "lock-waits",
             "the sessions wait for the locks the open transaction holds"),
    Explains("innodb-deadlock", "lock-waits",
             "the deadlocked transactions hold and wait for the same locks the other sessions queue for"),
    # Locks: sessions queued behind a blocker look active, idle and long-running.
    Explains("lock-waits", "long-running-queries",
             "the long Time values are sessions waiting for a lock, or the blocker holding it"),
    Explains("lock-waits", "active-sessions-overload", "the active sessions are queued behind locks"),
    Explains("lock-waits", "iowait-understates-io", "the queued sessions wait for locks, with the CPUs idle"),
    # Concurrency of one query.
    Explains("same-query-pileup", "active-sessions-overload", "most active sessions run the one query"),
    Explains("same-query-pileup", "cpu-saturation", "the run queue is the piled-up query's sessions"),
    Explains("active-sessions-overload", "cpu-saturation", "the run queue is the crowd of active statements"),
    Explains("table-cache-contention", "active-sessions-overload",
             "the active sessions wait to open and close tables"),
    # Another process takes the disk, or a setting or a latch is where the work queues (issue 23).
    Explains("io-consumer", "disk-saturation", "the process named takes the device, not MySQL"),
    Explains("io-consumer", "iowait-understates-io", "the process named waits on the disk, not MySQL"),
    Explains("table-cache-full", "table-cache-contention",
             "the full table cache closes a table for every table it opens, and the sessions queue for it"),
    Explains("innodb-latch-contention", "innodb-semaphore-waits", "the threads wait on the hot latch"),
    Explains("numa-imbalance", "swap-activity", "the full node reclaims and swaps while another node has room"),
    Explains("numa-imbalance", "direct-reclaim-stalls", "the full node's allocations reclaim pages directly"),
    # The device itself is saturated.
    Explains("disk-saturation", "load-from-uninterruptible-threads", "the threads in D state wait for the saturated device"),
    # Consequences of a load are its evidence: I/O completions and the IPIs that wake their threads,
    # threads switched in and out behind busy cores (a storm is reported only beyond what they explain).
    Explains("disk-saturation", "interrupt-storm", "the device's completions interrupt the CPUs and wake the waiting threads"),
    Explains("cpu-saturation", "interrupt-storm", "rescheduling interrupts follow the runnable threads queued behind busy cores"),
    Explains("cpu-saturation", "context-switch-storm", "the runnable threads queued behind busy cores are switched in and out"),
    # The InnoDB and kernel context (issue 11): consequences of a cause another finding names.
    Explains("long-transaction", "purge-lag", "the open transaction's read view holds back the purge of undo records"),
    Explains("disk-saturation", "innodb-pending-io", "InnoDB's reads and writes wait in the saturated device's queue"),
    Explains("cpu-saturation", "tcp-retransmits",
             "with no CPU left, acknowledgements are sent late and segments are retransmitted, loopback included"),
)  # fmt: skip

#: Two findings belong together when their windows overlap within this slack: sources sample at
#: different moments, and a sustained window starts a few samples later in one source than another.
OVERLAP_SLACK = pd.Timedelta(seconds=30)


def _overlap(a: Finding, b: Finding) -> bool:
    if not a.windows or not b.windows:
        return True
    return any(
        wa.start <= wb.end + OVERLAP_SLACK and wb.start <= wa.end + OVERLAP_SLACK
        for wa in a.windows
        for wb in b.windows
    )


def parents(findings: list[Finding]) -> dict[str, tuple[str, str]]:
    """For each explained finding's key, its direct explainer and why: ``key -> (root_key, why)``."""
    present = {f.key: f for f in findings}
    out: dict[str, tuple[str, str]] = {}
    for link in EXPLAINS:
        if link.explained in out or link.root not in present or link.explained not in present:
            continue
        if _overlap(present[link.root], present[link.explained]):
            out[link.explained] = (link.root, link.why)
    return out


def group(findings: list[Finding]) -> list[Finding]:
    """Attach explained findings to their root cause (see the module docstring); order is kept.

    ``findings``: the engine's findings. Returns new Finding objects (frozen: ``dataclasses.replace``).
    """
    parent = parents(findings)
    if not parent:
        return list(findings)
    by_key = {f.key: f for f in findings}

    def root_of(key: str) -> str:
        seen = {key}
        while key in parent and parent[key][0] not in seen:
            key = parent[key][0]
            seen.add(key)
        return key

    members: dict[str, list[str]] = {}
    for f in findings:
        if f.key in parent:
            members.setdefault(root_of(f.key), []).append(f.key)
    out: list[Finding] = []
    for f in findings:
        if f.key in parent:
            root = root_of(f.key)
            direct, why = parent[f.key]
            related = (root,) + ((direct,) if direct != root else ()) + f.related
            text = f" Root cause: {by_key[root].title} ({root}): {why}."
            if direct != root:
                text = (
                    f" Explained by {by_key[direct].title} ({direct}): {why}; that finding is itself grouped "
                    f"under {by_key[root].title} ({root})."
                )
            out.append(
                dataclasses.replace(
                    f, related=tuple(dict.fromkeys(related)), explanation=f.explanation + text
                )
            )
        elif f.key in members:
            keys = members[f.key]
            direct_keys = [k for k in keys if parent[k][0] == f.key]
            through = [k for k in keys if parent[k][0] != f.key]
            text = " This root cause also explains: " + "; ".join(
                f"{by_key[k].title} ({k})" for k in direct_keys
            )
            if through:
                text += "; and, through them: " + "; ".join(f"{by_key[k].title} ({k})" for k in through)
            related = tuple(dict.fromkeys(tuple(keys) + f.related))
            out.append(dataclasses.replace(f, related=related, explanation=f.explanation + text + "."))
        else:
            out.append(f)
    return out
