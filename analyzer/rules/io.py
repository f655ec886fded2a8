"""I/O rules: a disk device saturated (sysstat iostat(1); docs/background.md, "One hot core, disks, swap").

A device is saturated when requests queue for it and wait: ``aqu-sz`` (avgqu-sz, the average
number of requests in flight) above what it serves at once, together with ``r_await``/``w_await``
(ms per request, queue time included) well above its service time. ``%util`` is not the test:
iostat(1) itself says it "does not reflect their performance limits" for devices serving requests
in parallel (RAID arrays, SSDs), and ``svctm``, from which older advice derived util, was deprecated
("Do not trust this field any more", sysstat 11) and removed in sysstat 12.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.detect import (
    column_evidence,
    held_seconds,
    load_rate_evidence,
    per_run,
    status,
    step_seconds,
    sustained_samples,
    within_slack,
)
from analyzer.evidence.consumers import (
    Waiting,
    aio_waiting_program,
    cpu_consumers,
    d_state_programs,
)
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import sustained, within

# Queue: more than two requests in flight on average. One at a time is a serial workload, not a
# queue; Brendan Gregg's USE method reads avgqu-sz > 1 as saturation for a single disk, and with
# await >= AWAIT_MS below Little's law puts at least 100 I/O per second behind it.
AQU_SZ_MIN = 2.0
# Wait: 20 ms per request is 2-4 x a 7200/10k rpm disk's random service time (5-10 ms, docs/background.md)
# and 40-200 x an SSD's: requests spend most of their time queued.
AWAIT_MS = 20.0
# ...or 5 x the device's own service time in this capture (its await while the queue is below one
# request), and at least 5 ms: catches SSDs and cloud volumes queueing well below 20 ms.
AWAIT_BASELINE_FACTOR = 5.0
AWAIT_FLOOR_MS = 5.0
UNQUEUED_AQU_SZ = 1.0  # aqu-sz below one request: await is then the service time, no queue
MIN_UNQUEUED_SAMPLES = 3  # a service-time baseline needs a few unqueued reports, not one lucky one
CRITICAL_AWAIT_MS = 100.0  # a tenth of a second per I/O: every commit and every page read waits that long
MIB = 1024 * 1024


def _await(frame: pd.DataFrame) -> pd.Series:
    """ms per request of the busier direction: r_await where there are reads, w_await where writes
    (``await`` on sysstat versions without the split)."""
    parts = []
    if "r_await" in frame and "r_per_s" in frame:
        parts.append(frame["r_await"].where(frame["r_per_s"] > 0, 0.0))
    if "w_await" in frame and "w_per_s" in frame:
        parts.append(frame["w_await"].where(frame["w_per_s"] > 0, 0.0))
    if not parts and "await" in frame:
        parts.append(frame["await"])
    if not parts:
        return pd.Series(float("nan"), index=frame.index)
    return pd.concat(parts, axis=1).max(axis=1)


DISK_SATURATION = RuleTexts(
    title="Disk {device} saturated: {aqu:.1f} requests queued, {wait:.0f} ms per I/O at {mib:.1f} MiB/s",
    explanation=(
        "For {held:.0f} s device {device} had {aqu:.1f} requests in flight on average and each took about "
        "{wait:.0f} ms, queue included, while it moved {iops:.0f} I/O per second ({mib:.1f} MiB/s). Requests "
        "were waiting for the device: every query that reads a page or commits a transaction on it waits too."
    ),
    recommendation=(
        "Find who does the I/O: pidstat -d 1 (or iotop -o). In MySQL:\n"
        "- innodb_flush_method=O_DIRECT (data not cached twice); set innodb_io_capacity /\n"
        "  innodb_io_capacity_max to what the device sustains, not more;\n"
        "- a RAID controller write cache with battery (BBWC) turns each fsync from milliseconds into\n"
        "  microseconds; keep redo logs / binlogs off a device saturated by data reads;\n"
        "- scheduler: cat /sys/block/{device}/queue/scheduler; mq-deadline or none for SSD/RAID;\n"
        "- otherwise spread the data over more devices or move to a faster one."
    ),
    caveats=(
        (
            "%util near 100 % is not saturation on SSDs, NVMe and RAID arrays, which serve many requests in "
            "parallel (iostat(1)); it is not used here."
        ),
        (
            "svctm is deprecated (sysstat 11: 'Do not trust this field any more') and gone in sysstat 12; it "
            "is not used here."
        ),
        "dm-* and md* devices are stacked on physical disks: the same I/O shows on both.",
        "The first iostat report averages since boot and is left out.",
    ),
    sources=(
        "iostat(1), sysstat 12.6 (aqu-sz, r_await, w_await, %util)",
        'Yoshinori Matsunobu, "Linux performance tuning & stabilization tips" (MySQL Conference & Expo 2010)',
        "Brendan Gregg, The USE Method (disk saturation)",
    ),
    confidence="iostat; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If the application's latency did not rise in the window and the device is a parallel array, "
        "the queue is throughput, not waiting: compare await with the device's specification."
    ),
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Saturated:
    held: float
    aqu: float
    device: str
    windows: list[Window]
    rows: pd.DataFrame
    service_ms: float | None


def _saturated_devices(tl: Timeline) -> list[_Saturated]:
    """Every device with a sustained queue and slow requests, longest first."""
    hits: list[_Saturated] = []
    for run in per_run(tl.frame("iostat")):
        if "aqu_sz" not in run:
            continue  # the default (non -x) report has no queue size: nothing to judge saturation by
        for device, dev in run.groupby("device", sort=False, observed=True):
            dev = dev.sort_values("ts")
            wait = _await(dev)
            unqueued = wait[(dev["aqu_sz"] < UNQUEUED_AQU_SZ) & (wait > 0)]
            service = float(unqueued.median()) if len(unqueued) >= MIN_UNQUEUED_SAMPLES else None
            slow = wait >= AWAIT_MS
            if service is not None:
                slow |= (wait >= AWAIT_BASELINE_FACTOR * service) & (wait >= AWAIT_FLOOR_MS)
            hot = (dev["aqu_sz"] >= AQU_SZ_MIN) & slow
            windows = sustained(dev["ts"], hot, min_samples=sustained_samples(dev["ts"]))
            if windows:
                rows = dev[within(dev["ts"], windows)]
                held = held_seconds(windows, step_seconds(dev["ts"]))
                hits.append(
                    _Saturated(held, float(rows["aqu_sz"].median()), str(device), windows, rows, service)
                )
    return sorted(hits, key=lambda h: (-h.held, -h.aqu, h.device))


@rule(key="disk-saturation", requires=("iostat",), optional=("vmstat", "ncpu"))
def disk_saturation(tl: Timeline) -> Finding | None:
    """For a device: aqu-sz >= AQU_SZ_MIN and await >= AWAIT_MS (or >= AWAIT_BASELINE_FACTOR x its
    unqueued await and >= AWAIT_FLOOR_MS), sustained. Since-boot reports are left out.

    Input: ``iostat`` (``device``, ``aqu_sz`` requests, ``r_await w_await`` ms, ``r_per_s w_per_s``,
    ``r_bytes_per_s w_bytes_per_s`` bytes/s, ``util_pct``). Source: iostat(1), sysstat 12.6;
    docs/background.md.
    """
    hits = _saturated_devices(tl)
    if not hits:
        return None
    hot = hits[0]
    rows = hot.rows
    member, lines = tl.lines_of(rows)

    def med(col: str, scale: float = 1.0, digits: int = 1) -> float:
        return round(float(rows[col].median()) / scale, digits) if col in rows else 0.0

    evidence = (
        [
            Evidence("device", hot.device, "", "iostat.device", member, lines),
            Evidence("aqu-sz (median)", round(hot.aqu, 2), "requests", "iostat.aqu_sz", member, lines),
            Evidence(
                "aqu-sz (max)",
                round(float(rows["aqu_sz"].max()), 2),
                "requests",
                "iostat.aqu_sz",
                member,
                lines,
            ),
        ]
        + [
            Evidence(label, med(col), unit, f"iostat.{col}", member, lines)
            for label, col, unit in (
                ("r_await (median)", "r_await", "ms"),
                ("w_await (median)", "w_await", "ms"),
                ("r/s (median)", "r_per_s", "/s"),
                ("w/s (median)", "w_per_s", "/s"),
            )
        ]
        + [
            Evidence(
                f"{d}MB/s (median)",
                med(f"{d}_bytes_per_s", MIB, 2),
                "MiB/s",
                f"iostat.{d}_bytes_per_s",
                member,
                lines,
            )
            for d in ("r", "w")
        ]
    )
    evidence += column_evidence(tl, rows, "iostat", (("%util (median)", "util_pct", "median1", "%"),))
    if hot.service_ms is not None:
        label = "await with no queue (aqu-sz < 1) in this capture"
        evidence.append(Evidence(label, round(hot.service_ms, 2), "ms", "iostat.r_await"))
    if len(hits) > 1:
        evidence.append(
            Evidence("other saturated devices", ", ".join(h.device for h in hits[1:]), "", "iostat.device")
        )
    vm = tl.frame("vmstat")
    if len(vm) and tl.ncpu:  # the completions and wakeups of this I/O: its evidence, not a storm
        evidence += load_rate_evidence(tl, vm[within(vm["ts"], hot.windows)], tl.ncpu)
    wait = float(_await(rows).median())
    found = DISK_SATURATION.finding(
        "disk-saturation",
        Severity.CRITICAL if wait >= CRITICAL_AWAIT_MS else Severity.WARNING,
        hot.windows,
        evidence,
        related=("swap-activity",),
        device=hot.device,
        aqu=hot.aqu,
        wait=wait,
        held=hot.held,
        mib=med("r_bytes_per_s", MIB, 2) + med("w_bytes_per_s", MIB, 2),
        iops=med("r_per_s") + med("w_per_s"),
    )
    return dataclasses.replace(found, subjects=(("device", hot.device),))


# --- io-consumer -----------------------------------------------------------------------------
#: The disk is busy: at least 1,000 requests per second (reads + writes), or %util at 30 % or more
#: (a single queue busy a third of the time), for 5 s. Not saturation (disk-saturation judges that):
#: enough I/O that whoever makes it is worth naming.
IO_BUSY_IOPS = 1000.0
IO_BUSY_UTIL_PCT = 30.0
#: MySQL is quiet: at most this many active sessions (median, pt-stalk's own queries excluded) ...
IO_MYSQL_QUIET_SESSIONS = 1.0
#: ... and InnoDB's fsyncs (Innodb_data_fsyncs + Innodb_os_log_fsyncs) below this share of the device's
#: requests per second, when -mysqladmin has them.
IO_MYSQL_QUIET_SHARE = 0.10
#: The other process is seen in state D (waiting for I/O) in at least this many rows (top
#: iterations x processes, ps snapshots x threads): one row is a moment, two are a pattern.
IO_D_ROWS_MIN = 2

#: Without a process shown doing the I/O, the finding is raised only when another program runs at
#: all: one taking at least this much CPU (top; 100 = one CPU). Otherwise nothing in the bundle says
#: the I/O is not MySQL's own (a replica applying, background flushing). That program is not named:
#: CPU says nothing of I/O.
IO_OTHER_CPU_MIN_PCT = 5.0
D_STATE_HOW = "{program} sat in state D (waiting for I/O) in {d_rows} process samples{wchan}"
D_STATE_DISPROOF = (
    "If MySQL's own files take the I/O (pidstat -d shows mysqld), the process only waits beside it."
)
IO_CONSUMER = RuleTexts(
    title="Disk {device} busy with {program} (PID {pid}), not MySQL: {iops:,.0f} I/O per second",
    explanation=(
        "{program} (PID {pid}{more}) takes the disk: for {held:.0f} s device {device} served {iops:,.0f} "
        "requests per second ({mib:.1f} MiB/s, %util {util:.0f}) while {how} and MySQL was quiet "
        "({sessions:.0f} active sessions, {fsyncs:.0f} InnoDB fsyncs per second). Any query that reads a "
        "page "
        "or commits waits behind it."
    ),
    recommendation=(
        "Find out why {program} runs now and on this disk: stop it, move it off peak hours, or give it\n"
        "less I/O (ionice -c3 -p {pid}; systemd IOWeight= / IOWriteBandwidthMax= for a service).\n"
        "Keep the datadir, redo log and binary logs on a device such jobs do not share."
    ),
    caveats=(
        (
            "top and ps show a process's state at one instant: a process that waits for I/O briefly and "
            "often "
            "may be missed, another seen once."
        ),
        "iostat counts every request to the device, whoever makes it.",
    ),
    sources=(
        "iostat(1), sysstat 12.6",
        "top(1) and ps(1), procps-ng 4.0 (state D)",
        "pidstat(1) -d, sysstat 12.6",
    ),
    disproof="{disproof}",
    confidence="iostat, top/ps states and the processlist; held {held:.0f} s",
)

#: The device is busy and MySQL quiet, but no process is shown doing the I/O: no per-process I/O
#: (pidstat -d, /proc/PID/io) and no thread in state D on a block-I/O wait channel. The busiest
#: process by CPU is not the disk's consumer: CPU says nothing of I/O.
IO_CONSUMER_NOT_SHOWN = RuleTexts(
    title="Disk {device} busy, not MySQL: {iops:,.0f} I/O per second; the consumer is not shown",
    explanation=(
        "For {held:.0f} s device {device} served {iops:,.0f} requests per second ({mib:.1f} MiB/s, %util "
        "{util:.0f}) while MySQL was quiet ({sessions:.0f} active sessions, {fsyncs:.0f} InnoDB fsyncs per "
        "second): another process does the I/O, but the bundle does not show which. It has no per-process "
        "I/O (pidstat -d, /proc/PID/io), and no process sat in state D waiting for block I/O.{hint}"
    ),
    recommendation=(
        "Name the process while it runs: pidstat -d 1 5 (or iotop -o -b -n 5), or per process\n"
        "  cat /proc/<PID>/io   # read_bytes, write_bytes: bytes it made the block layer read and write\n"
        "Then stop it, move it off peak hours, or give it less I/O (ionice -c3 -p <PID>)."
    ),
    caveats=(
        (
            "Asynchronous and direct I/O (libaio, io_uring, O_DIRECT) keep a disk busy without their "
            "submitter sleeping in state D: only per-process I/O counters name it."
        ),
        "iostat counts every request to the device, whoever makes it.",
    ),
    sources=(
        "iostat(1), sysstat 12.6",
        "pidstat(1) -d, sysstat 12.6",
        "Linux kernel Documentation/filesystems/proc.rst (/proc/PID/io)",
    ),
    disproof="If MySQL's own files take the I/O (pidstat -d shows mysqld), MySQL is the consumer after all.",
    confidence="iostat and the processlist; no per-process I/O in the bundle; held {held:.0f} s",
)


def _busy_device(tl: Timeline) -> tuple[str, list[Window], pd.DataFrame] | None:
    """The device busy (IO_BUSY_IOPS or IO_BUSY_UTIL_PCT) the longest, sustained, or None."""
    best: tuple[float, str, list[Window], pd.DataFrame] | None = None
    for run in per_run(tl.frame("iostat")):
        if "r_per_s" not in run or "w_per_s" not in run:
            continue
        for device, dev in run.groupby("device", sort=False, observed=True):
            dev = dev.sort_values("ts")
            util = dev["util_pct"] if "util_pct" in dev else pd.Series(0.0, index=dev.index)
            hot = ((dev["r_per_s"] + dev["w_per_s"]) >= IO_BUSY_IOPS) | (util >= IO_BUSY_UTIL_PCT)
            windows = sustained(dev["ts"], hot.fillna(False), min_samples=sustained_samples(dev["ts"]))
            held = held_seconds(windows, step_seconds(dev["ts"])) if windows else 0.0
            if windows and (best is None or held > best[0]):
                best = (held, str(device), windows, dev[within(dev["ts"], windows)])
    return None if best is None else best[1:]


def _mysql_quiet(tl: Timeline, windows: list[Window], iops: float) -> tuple[bool, float, float]:
    """(quiet, median active sessions, InnoDB fsyncs per second) in ``windows``."""
    pl = tl.frame("processlist")
    pl = pl[within_slack(pl["ts"], windows, pd.Timedelta(seconds=1))]
    active = pl[pl["active"].astype(bool)].groupby("ts").size() if len(pl) else pd.Series(dtype=float)
    per_snapshot = active.reindex(pl["ts"].unique(), fill_value=0) if len(pl) else active
    sessions = float(per_snapshot.median()) if len(per_snapshot) else 0.0
    fsyncs = 0.0
    for name in ("Innodb_data_fsyncs", "Innodb_os_log_fsyncs"):
        st = status(tl, name).dropna(subset=["per_s"])
        st = st[within_slack(st["ts"], windows, pd.Timedelta(seconds=1))]
        fsyncs += float(st["per_s"].median()) if len(st) else 0.0
    quiet = len(pl) > 0 and sessions <= IO_MYSQL_QUIET_SESSIONS and fsyncs < IO_MYSQL_QUIET_SHARE * iops
    return quiet, sessions, fsyncs


@rule(
    key="io-consumer",
    requires=("iostat", "processlist"),
    optional=("top_procs", "ps_threads", "mysqladmin"),
)
def io_consumer(tl: Timeline) -> Finding | None:
    """A device busy (>= IO_BUSY_IOPS or >= IO_BUSY_UTIL_PCT for 5 s) while MySQL is quiet
    (<= IO_MYSQL_QUIET_SESSIONS active sessions, InnoDB fsyncs < IO_MYSQL_QUIET_SHARE of the I/O).
    Names the process only from per-process I/O evidence: a program seen in state D on a block-I/O
    wait channel (top, ps) in >= IO_D_ROWS_MIN rows (neither pt-stalk nor scripts/collect.sh collects
    pidstat -d or /proc/PID/io). Without it, the finding names the device and says the
    consumer is not shown (when another program runs, >= IO_OTHER_CPU_MIN_PCT CPU): the busiest
    process by CPU is never called the disk's consumer."""
    busy = _busy_device(tl)
    if busy is None:
        return None
    device, windows, rows = busy
    iops = float((rows["r_per_s"] + rows["w_per_s"]).median())
    quiet, sessions, fsyncs = _mysql_quiet(tl, windows, iops)
    if not quiet:
        return None
    d = d_state_programs(tl, windows)
    if d is not None and d.rows < IO_D_ROWS_MIN:
        d = None
    mib = float((rows.get("r_bytes_per_s", 0) + rows.get("w_bytes_per_s", 0)).median()) / MIB
    util = float(rows["util_pct"].median()) if "util_pct" in rows else 0.0
    evidence = column_evidence(
        tl,
        rows,
        "iostat",
        (
            ("writes per second (median)", "w_per_s", "median1", "/s"),
            ("reads per second (median)", "r_per_s", "median1", "/s"),
            ("%util (median)", "util_pct", "median1", "%"),
        ),
    )
    evidence.append(Evidence("active sessions (median)", sessions, "sessions", "processlist.active"))
    numbers = {
        "device": device,
        "iops": iops,
        "mib": mib,
        "util": util,
        "sessions": sessions,
        "fsyncs": fsyncs,
        "held": held_seconds(windows, step_seconds(rows["ts"])),
    }
    if d is None:
        used = cpu_consumers(tl, windows)
        aio = aio_waiting_program(tl, windows)
        others_run = aio is not None or (
            used is not None and bool(used.top) and used.top[0][2] >= IO_OTHER_CPU_MIN_PCT
        )
        return _not_shown(windows, evidence, numbers, aio) if others_run else None
    found = IO_CONSUMER.finding(
        "io-consumer",
        Severity.WARNING,
        windows,
        evidence + list(d.evidence),
        program=d.program,
        pid=d.pid,
        d_rows=d.rows,
        more=f", {d.processes} processes" if d.processes > 1 else "",
        how=D_STATE_HOW.format(
            program=d.program, d_rows=d.rows, wchan=f" (wait channel {d.wchan})" if d.wchan else ""
        ),
        disproof=D_STATE_DISPROOF,
        **numbers,
    )
    return dataclasses.replace(found, culprit=d.culprit(), subjects=(("device", device),))


def _not_shown(
    windows: list[Window], evidence: list[Evidence], numbers: dict, aio: Waiting | None
) -> Finding:
    """io-consumer without a consumer: the device, and what the bundle shows short of per-process
    I/O (``aio``: threads waiting for asynchronous I/O completions: a submitter, not a measure)."""
    hint = ""
    if aio is not None:
        evidence = evidence + list(aio.evidence)
        hint = (
            f" {aio.program} (PID {aio.pid}) has threads waiting for asynchronous I/O completions (wait "
            "channel "
            f"{aio.wchan}): it submits I/O somewhere, which says neither how much nor to which device."
        )
    found = IO_CONSUMER_NOT_SHOWN.finding(
        "io-consumer", Severity.WARNING, windows, evidence, hint=hint, **numbers
    )
    return dataclasses.replace(found, subjects=(("device", numbers["device"]),))
