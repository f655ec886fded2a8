"""InnoDB monitor rules: what SHOW ENGINE INNODB STATUS (pt-stalk -innodbstatus1/2) says about latches,
the redo log and pending I/O (purge, transactions and deadlocks: ``analyzer.rules.transactions``).
Source: MySQL 8.4 Reference Manual 17.17.3 "InnoDB Standard Monitor and Lock Monitor Output";
docs/background.md ("Thresholds from common practice").
"""

from __future__ import annotations

import pandas as pd

from analyzer.detect import cite, span, variable_number, with_setting
from analyzer.findings import Finding, Severity
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline

# --- innodb-semaphore-waits ------------------------------------------------------------------
SEMAPHORE_SECONDS = 1.0  # a wait of a second or more is seen by every query on that latch
SEMAPHORE_THREADS_MIN = (
    3  # several threads queued on latches at once (docs/background.md: "3 threads at once")
)
SEMAPHORE_LONG_S = 10.0  # "any wait of seconds": one thread stuck 10 s is already a stall
FATAL_SEMAPHORE_S = 600.0  # innodb_fatal_semaphore_wait_threshold default: the server aborts itself
SEMAPHORE_CRITICAL_S = FATAL_SEMAPHORE_S / 2  # half-way to the self-kill

LATCH_NAMES = {
    "btr0sea": "adaptive hash index", "lock0lock": "lock system", "dict0dict": "data dictionary",
    "buf0buf": "buffer pool", "buf0flu": "buffer pool flushing", "log0log": "redo log", "trx0sys": "transaction system",
    "fil0fil": "tablespace cache", "srv0srv": "server", "row0purge": "purge",
}  # fmt: skip

SEMAPHORE_TEXTS = RuleTexts(
    title="InnoDB latch waits: {threads} threads waiting, up to {longest:.0f} s, mostly on {latch}",
    explanation=(
        "SHOW ENGINE INNODB STATUS lists {threads} threads that waited on an internal latch for "
        "{min_s:.0f} s or "
        "more (longest {longest:.0f} s at {where}). Every query that needs the {latch} waits behind them; at "
        "{fatal:.0f} s (innodb_fatal_semaphore_wait_threshold) InnoDB kills the server on purpose."
    ),
    recommendation=(
        "Find the hot latch and its usual fix:\n"
        "- adaptive hash index (btr0sea): SET GLOBAL innodb_adaptive_hash_index=OFF, or more\n"
        "  innodb_adaptive_hash_index_parts;\n"
        "- data dictionary (dict0dict): DDL or too many tables opened at once (table_open_cache);\n"
        "- buffer pool (buf0buf/buf0flu): more innodb_buffer_pool_instances, storage that keeps up;\n"
        "- lock system (lock0lock): hot rows, long transactions holding many locks."
    ),
    caveats=(
        "Waits of 0 s are normal on a busy server and are not counted.",
        "The monitor is a snapshot: a stall between the two outputs is not seen.",
    ),
    sources=("MySQL 8.4 Reference Manual, InnoDB Standard Monitor Output (SEMAPHORES)",),
    disproof=(
        "If the same threads do not appear in the next monitor output and queries did not slow, it "
        "was a passing wait."
    ),
    confidence="{confidence}",
)


@rule(key="innodb-semaphore-waits", requires=("innodb_status",), optional=("innodb_semaphores",))
def semaphore_waits(tl: Timeline) -> Finding | None:
    """Threads waiting >= SEMAPHORE_SECONDS on latches: SEMAPHORE_THREADS_MIN of them in one
    output, or one for SEMAPHORE_LONG_S. Input: ``innodb_semaphores`` (seconds, wait_file, latch)."""
    sem = tl.frame("innodb_semaphores")
    if not len(sem):
        return None
    long = sem[sem["seconds"] >= SEMAPHORE_SECONDS]
    per_output = long.groupby("ts").size()
    if not len(long) or (
        per_output.max() < SEMAPHORE_THREADS_MIN and long["seconds"].max() < SEMAPHORE_LONG_S
    ):
        return None
    top = long.sort_values("seconds", ascending=False).iloc[0]
    files = long["wait_file"].astype(str).str.split(".").str[0]
    hot = files.value_counts().index[0]
    numbers = {
        "threads": int(per_output.max()),
        "longest": float(long["seconds"].max()),
        "min_s": SEMAPHORE_SECONDS,
        "where": f"{top['wait_file']} line {top['wait_line']}",
        "latch": LATCH_NAMES.get(hot, hot),
        "fatal": FATAL_SEMAPHORE_S,
    }
    status = tl.frame("innodb_status")
    evidence = [
        cite(
            tl,
            "threads waiting >= 1 s (most in one output)",
            numbers["threads"],
            "threads",
            "innodb_semaphores.seconds",
            long,
        ),
        cite(tl, "longest wait", numbers["longest"], "s", "innodb_semaphores.seconds", long),
        cite(tl, "hot latch (file)", f"{hot} ({numbers['latch']})", "", "innodb_semaphores.wait_file", long),
        cite(tl, "what is waited for", str(top["latch"])[:200], "", "innodb_semaphores.latch", long),
    ]
    for _, row in status.iterrows():
        evidence.append(
            cite(
                tl,
                f"OS WAIT ARRAY reservation count at {row['ts']:%H:%M:%S}",
                row["os_wait_reservations"],
                "",
                "innodb_status.os_wait_reservations",
                status,
            )
        )
    severity = Severity.CRITICAL if numbers["longest"] >= SEMAPHORE_CRITICAL_S else Severity.WARNING
    return SEMAPHORE_TEXTS.finding(
        "innodb-semaphore-waits", severity, span(long), evidence, confidence="InnoDB monitor", **numbers
    )


# --- checkpoint-age-high ---------------------------------------------------------------------
CHECKPOINT_WARN = 0.75  # async flushing pressure starts around 75 % of the redo capacity (Percona)
CHECKPOINT_CRITICAL = 0.875  # sync flushing: user threads flush pages themselves, writes stall

CHECKPOINT_TEXTS = RuleTexts(
    title="Redo log {pct:.0f} % full: checkpoint age {age_mib:,.0f} MiB of {cap_mib:,.0f} MiB",
    explanation=(
        "The checkpoint age, redo written since the last checkpoint ({age_mib:,.0f} MiB), reached "
        "{pct:.0f} % of "
        "the redo capacity ({cap_mib:,.0f} MiB, {cap_from}) while the log advanced {log_mib_s:.1f} MiB/s. "
        "Near "
        "the end of the redo log InnoDB must flush dirty pages before it can write more: commits stall."
    ),
    recommendation=(
        "A larger redo log (innodb_redo_log_capacity on MySQL 8.0.30+, innodb_log_file_size otherwise), and\n"
        "innodb_io_capacity / innodb_io_capacity_max that match what the storage sustains."
    ),
    caveats=("The async/sync flushing margins differ between versions; 75 % and 87.5 % are approximations.",),
    sources=(
        "Percona, InnoDB flushing in action",
        "MySQL 8.4 Reference Manual, Optimizing InnoDB Redo Logging",
    ),
    disproof="If the checkpoint age falls back well below the capacity within seconds, flushing kept up.",
    confidence="{confidence}",
)


def redo_capacity(tl: Timeline, st: pd.DataFrame) -> tuple[float | None, str]:
    """The redo capacity in bytes and where it came from: the variables, else ``Max checkpoint age``."""
    cap = variable_number(tl, "innodb_redo_log_capacity")
    if cap:
        return cap, "innodb_redo_log_capacity"
    size = variable_number(tl, "innodb_log_file_size")
    if size:
        files = variable_number(tl, "innodb_log_files_in_group") or 1.0
        return size * files, "innodb_log_file_size x innodb_log_files_in_group"
    if "max_checkpoint_age_bytes" in st and st["max_checkpoint_age_bytes"].notna().any():
        return float(st["max_checkpoint_age_bytes"].max()), "Max checkpoint age in the monitor"
    return None, ""


@rule(key="checkpoint-age-high", requires=("innodb_status",), optional=("variables", "innodb_rates"))
def checkpoint_age_high(tl: Timeline) -> Finding | None:
    """Checkpoint age (LSN - last checkpoint) >= CHECKPOINT_WARN of the redo capacity."""
    st = tl.frame("innodb_status").dropna(subset=["checkpoint_age_bytes"])
    cap, origin = redo_capacity(tl, st)
    if not len(st) or not cap:
        return None
    pct = st["checkpoint_age_bytes"] / cap
    hot = st[(pct >= CHECKPOINT_WARN).to_numpy()]
    if not len(hot):
        return None
    rates = tl.frame("innodb_rates")
    mib = 1024 * 1024
    numbers = {
        "pct": float(pct.max() * 100),
        "age_mib": float(st["checkpoint_age_bytes"].max()) / mib,
        "cap_mib": cap / mib,
        "cap_from": origin,
        "log_mib_s": float(rates["log_bytes_per_s"].max()) / mib if len(rates) else 0.0,
    }
    evidence = [
        cite(
            tl,
            f"checkpoint age at {r.ts:%H:%M:%S}",
            f"{r.checkpoint_age_bytes:,.0f} B = {r.checkpoint_age_bytes / cap * 100:.1f} % of {cap:,.0f} B",
            "",
            "innodb_status.checkpoint_age_bytes",
            st,
        )
        for r in st.itertuples()
    ]
    evidence.append(
        cite(
            tl,
            "log written (between outputs)",
            round(numbers["log_mib_s"], 2),
            "MiB/s",
            "innodb_rates.log_bytes_per_s",
            rates,
        )
    )
    evidence.append(
        cite(
            tl,
            "modified (dirty) pages",
            float(st["modified_pages"].max()),
            "pages",
            "innodb_status.modified_pages",
            st,
        )
    )
    severity = Severity.CRITICAL if pct.max() >= CHECKPOINT_CRITICAL else Severity.WARNING
    found = CHECKPOINT_TEXTS.finding(
        "checkpoint-age-high", severity, span(hot), evidence, confidence="InnoDB monitor", **numbers
    )
    name = "innodb_redo_log_capacity" if origin == "innodb_redo_log_capacity" else "innodb_log_file_size"
    return with_setting(
        tl, found, name, "the redo log this capacity gives fills before pages are flushed.", size=True
    )


# --- innodb-pending-io -----------------------------------------------------------------------
PENDING_COLUMNS = (
    "pending_aio_reads",
    "pending_aio_writes",
    "pending_fsync_log",
    "pending_fsync_pool",
    "pending_reads",
    "pending_writes_lru",
    "pending_writes_flush_list",
    "pending_writes_single_page",
    "pending_log_writes",
)
PENDING_MIN_OUTPUTS = (
    2  # docs/background.md: non-zero "in 2 samples": one snapshot of a busy server may catch one
)

PENDING_TEXTS = RuleTexts(
    title="InnoDB I/O pending in every monitor output ({pending:.0f} operations at most)",
    explanation=(
        "In all {n} monitor outputs InnoDB had I/O waiting to complete (at most {pending:.0f}: {which}). The "
        "storage did not keep up with what InnoDB asked of it; with {free:.0f} free pages in the buffer pool."
    ),
    recommendation=(
        "See disk-saturation and the same minutes of iostat (await, aqu-sz of the data and log devices).\n"
        "Free buffers near 0 with single-page flushes means the buffer pool has no clean pages: a larger\n"
        "innodb_buffer_pool_size, or innodb_lru_scan_depth / more page cleaners."
    ),
    caveats=("Two snapshots 30 s apart are a small sample of the capture.",),
    sources=(
        "MySQL 8.4 Reference Manual, InnoDB Standard Monitor Output (FILE I/O, BUFFER POOL)",
        "MySQL 8.4 Reference Manual, Optimizing InnoDB Disk I/O",
    ),
    disproof="If iostat shows the devices idle in the same minutes, the pending counts are momentary.",
    confidence="{confidence}",
)


@rule(key="innodb-pending-io", requires=("innodb_status",), optional=("iostat",))
def innodb_pending_io(tl: Timeline) -> Finding | None:
    """Pending aio reads/writes, fsyncs or page writes > 0 in every monitor output (at least
    PENDING_MIN_OUTPUTS of them)."""
    st = tl.frame("innodb_status")
    cols = [c for c in PENDING_COLUMNS if c in st]
    if len(st) < PENDING_MIN_OUTPUTS or not cols:
        return None
    total = st[cols].fillna(0).sum(axis=1)
    if not (total > 0).all():
        return None
    worst = st.loc[total.idxmax()]
    which = ", ".join(f"{c.removeprefix('pending_')} {worst[c]:.0f}" for c in cols if worst[c] > 0)
    numbers = {
        "n": len(st),
        "pending": float(total.max()),
        "which": which,
        "free": float(st["free_pages"].min()),
    }
    evidence = [
        cite(
            tl,
            f"pending I/O at {ts:%H:%M:%S}",
            float(t),
            "operations",
            "innodb_status.pending_*",
            st.iloc[[i]],
        )
        for i, (ts, t) in enumerate(zip(st["ts"], total, strict=True))
    ]
    evidence += [
        cite(tl, c.replace("_", " "), float(st[c].max()), "", f"innodb_status.{c}", st)
        for c in cols
        if st[c].max() > 0
    ]
    io = tl.frame("iostat")
    if len(io) and "aqu_sz" in io:
        near = io[
            (io["ts"] >= st["ts"].min() - pd.Timedelta(seconds=60))
            & (io["ts"] <= st["ts"].max() + pd.Timedelta(seconds=60))
        ]
        if len(near):
            evidence.append(
                cite(
                    tl,
                    "iostat aqu-sz (max, same minutes)",
                    round(float(near["aqu_sz"].max()), 2),
                    "requests",
                    "iostat.aqu_sz",
                    near,
                )
            )
    return PENDING_TEXTS.finding(
        "innodb-pending-io",
        Severity.WARNING,
        span(st),
        evidence,
        confidence="InnoDB monitor",
        related=("disk-saturation",),
        **numbers,
    )
