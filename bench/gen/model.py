"""The capture plan of the generated bundle: its constants, the load shapes and host sizes
(``Shape``, ``SHAPES``, ``HOSTS``), the plan (``Spec``), a member file being written (``Member``) and the
stress curve over the run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import numpy as np

#: gzip level of ``tar -czf`` (GNU tar runs gzip with its default, -6), what collect.sh produces.
GZIP_LEVEL = 6
#: Write buffer per member file: large enough that per-second writes do not hit the disk one by one.
WRITE_BUFFER_BYTES = 1 << 20
#: The I/O stall covers this fraction of the run (start, end), with ramps of RAMP_S seconds.
INCIDENT = (0.60, 0.70)
RAMP_S = 20
#: procps prints PID/TID in 5 columns while pid_max is 32768 (this machine); keep ids below it.
PID_MAX = 32768
#: The mariadbd process (PID) and where its connection threads' TIDs start.
MYSQLD_PID = 3774
#: Connection threads get TIDs from here up (mariadbd's helper threads sit between MYSQLD_PID and it).
FIRST_CONN_TID = 8000
#: A session disconnects and is replaced (new Id, new TID) with this probability per second:
#: application pools recycle connections slowly.
SESSION_CHURN_PER_S = 0.0008
KERNEL = "5.15.0-105-generic"
HOST = "db-bench-01"
#: RAM of the simulated server (KiB): 512 GiB, a typical 64-core database host.
MEM_TOTAL_KIB = 528_280_000


# ---------------------------------------------------------------------------------------------
# Load shapes: how the server behaves at stress 0 (its quiet level) and 1 (the load window)
# ---------------------------------------------------------------------------------------------
Pair = tuple[float, float]


def lerp(pair: Pair, s: float) -> float:
    """The value of a (quiet, loaded) pair at stress ``s`` in [0, 1]."""
    return pair[0] + (pair[1] - pair[0]) * s


@dataclass(frozen=True)
class Shape:
    """One load shape, after the seeds (../shared/seeds). Every pair is (quiet, loaded); the capture
    moves from the first to the second inside the load window (``Spec.incident``).

    ``active_per_cpu``: running statements per CPU (None: the legacy fixed share of the sessions);
    ``stuck``: probability a running statement is still running a second later; ``stall_states`` and
    ``stall_share``: the states loaded sessions take; ``stall_query``: the one statement they run
    (None: the usual mix); ``blocked``: share of running sessions whose thread sleeps in D, in one of
    ``d_wchans``; ``usr``/``sys``/``iowait``: CPU percent; ``runq_per_cpu``: vmstat r per CPU;
    ``b_per_cpu``: vmstat b per CPU; ``intr_per_cpu``/``cs_per_cpu``: vmstat in/cs per CPU;
    ``r_iops``/``w_iops`` per device, ``r_await``/``w_await`` ms; ``status_boost``: status counter
    rates multiplied at stress 1 (on-disk temporary tables, commits, log fsyncs).
    """

    name: str
    active_per_cpu: Pair | None = None
    stuck: Pair = (0.15, 0.95)
    stall_states: tuple[int, ...] = (0, 5, 4)  # Sending data, Commit, Updating
    stall_share: Pair = (0.0, 0.85)
    stall_query: str | None = None
    blocked: Pair = (0.10, 0.95)
    d_wchans: tuple[str, ...] = (
        "io_schedule",
        "jbd2_log_wait_commit",
        "folio_wait_bit_common",
        "blk_mq_get_tag",
    )
    usr: Pair = (38.0, 30.0)
    usr_sd: Pair = (9.0, 9.0)
    sys: Pair = (7.0, 10.0)
    iowait: Pair = (1.0, 36.0)
    runq_per_cpu: Pair = (0.35, 0.25)
    b_per_cpu: Pair | None = None  # None: the legacy 1 + 12 % of the sessions at stress 1
    intr_per_cpu: Pair = (1200.0, 1800.0)
    mpstat_intr_per_cpu: Pair = (600.0, 1500.0)
    io_irq_boost: float = 2.5
    cs_per_cpu: Pair = (5200.0, 4160.0)
    r_iops: Pair = (110.0, 275.0)
    w_iops: Pair = (900.0, 630.0)
    r_await: Pair = (0.12, 18.12)
    w_await: Pair = (0.05, 45.05)
    util: Pair = (18.0, 98.0)
    status_boost: tuple[tuple[str, float], ...] = ()
    throughput_drop: float = 0.6


#: The GROUP BY of seed 000 / scripts/load_mariadb.py: an on-disk temporary table on every run.
TMP_QUERY = "SELECT grp, COUNT(*), SUM(n) FROM t{b} GROUP BY grp ORDER BY NULL"
QUIET_ACTIVE = (0.8, 0.8)  # a healthy OLTP server runs about one statement per core or less
#: Disks that keep up: the load of these shapes is not on the storage.
QUIET_DISKS = {
    "r_iops": (110, 130),
    "w_iops": (900, 950),
    "r_await": (0.12, 0.2),
    "w_await": (0.05, 0.1),
    "util": (18, 25),
}
SHAPES = {
    # The original benchmark shape: steady OLTP with an I/O stall (disk slow, sessions stuck).
    "io-stall": Shape("io-stall"),
    # No load window at all: the quiet level throughout.
    "healthy": Shape("healthy", active_per_cpu=QUIET_ACTIVE, stuck=(0.15, 0.15), stall_share=(0, 0),
                     blocked=(0.02, 0.02), iowait=(1, 1), usr=(30, 30), sys=(6, 6), b_per_cpu=(0.02, 0.02),
                     **QUIET_DISKS),
    # CPU-bound (USE method): more runnable threads than cores, no idle time.
    "cpu-bound": Shape("cpu-bound", active_per_cpu=(0.8, 6.0), stuck=(0.15, 0.5), stall_states=(0, 3, 7),
                       stall_share=(0, 0.6), blocked=(0.02, 0.01), usr=(30, 82), usr_sd=(9, 2), sys=(6, 17),
                       iowait=(1, 0), runq_per_cpu=(0.35, 3.5), b_per_cpu=(0.02, 0.02), cs_per_cpu=(5200, 9000),
                       intr_per_cpu=(1200, 2000), **QUIET_DISKS),
    # I/O-bound: reads wait for a slow device, threads in D in io_schedule, iowait high.
    "io-bound": Shape("io-bound", active_per_cpu=(0.8, 3.0), stuck=(0.15, 0.6), stall_states=(0, 0, 4),
                      stall_share=(0, 0.8), blocked=(0.02, 0.7), d_wchans=("io_schedule", "blk_mq_get_tag"),
                      usr=(30, 12), sys=(6, 8), iowait=(1, 55), runq_per_cpu=(0.35, 0.3), b_per_cpu=(0.02, 1.5),
                      intr_per_cpu=(1200, 6000), io_irq_boost=3.0, cs_per_cpu=(5200, 7000), r_iops=(110, 900),
                      r_await=(0.12, 45), util=(18, 100)),
    # Seed 000: one GROUP BY on every session builds an on-disk temporary table; threads wait in D in
    # unlinkat on the tmpdir's inode lock (not counted by vmstat b), the CPUs stay 40-50 % idle.
    "tmp-tables": Shape("tmp-tables", active_per_cpu=(0.8, 8.0), stuck=(0.15, 0.3), stall_states=(10, 9, 12),
                        stall_share=(0, 0.9), stall_query=TMP_QUERY, blocked=(0.02, 0.6),
                        d_wchans=("do_unlinkat", "path_openat", "do_unlinkat"), usr=(30, 35), sys=(6, 15),
                        iowait=(1, 3), runq_per_cpu=(0.35, 1.0), b_per_cpu=(0.02, 0.05),
                        status_boost=(("Created_tmp_disk_tables", 60.0), ("Created_tmp_tables", 4.0)), **QUIET_DISKS),
    # Seed 001: commits serialise on the redo-log fsync: most sessions at COMMIT, CPUs idle, low iowait.
    "commit": Shape("commit", active_per_cpu=(0.8, 6.0), stuck=(0.15, 0.5), stall_states=(5, 13, 5),
                    stall_share=(0, 0.8), stall_query="COMMIT", blocked=(0.02, 0.1),
                    d_wchans=("jbd2_log_wait_commit",), usr=(30, 25), sys=(6, 10), iowait=(1, 6),
                    runq_per_cpu=(0.35, 0.3), b_per_cpu=(0.02, 0.1), r_iops=(110, 110), r_await=(0.12, 0.2),
                    w_iops=(900, 2500), w_await=(0.05, 2.0), util=(18, 60), status_boost=(("Com_commit", 3.0), ("Innodb_os_log_fsyncs", 3.0))),
}  # fmt: skip
SHAPES_DEFAULT = SHAPES["io-stall"]
#: Host sizes for --host (CPUs, threads per ps snapshot, sessions, disks, IRQ lines): tens, hundreds
#: and a thousand sessions. ``wide``: the 2.2 GB hour of issue 42 (64 CPUs, 2,000 threads, 1,000
#: sessions) on a host whose 8 NVMe disks and NIC have a queue, so an IRQ line, for many of its CPUs
#: (200 numbered lines; a real 64-CPU host with 8 NVMe disks often has more than 500).
HOSTS = {
    "small": (2, 240, 40, 1, 8),
    "medium": (16, 700, 300, 4, 24),
    "large": (64, 1600, 1000, 8, 60),
    "wide": (64, 2000, 1000, 8, 200),
}


# ---------------------------------------------------------------------------------------------
# The capture plan
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    """What to generate: duration (minutes), machine and server sizes, seed, start time, and the
    sampling interval (seconds between snapshots; counters advance by that much between them)."""

    minutes: float
    cpus: int
    threads: int
    sessions: int
    disks: int
    irqs: int
    seed: int
    start: datetime
    shape: str = "io-stall"
    incident: tuple[float, float] = (0.60, 0.70)
    interval: int = 1  # seconds between samples (collect.sh --interval)

    @property
    def samples(self) -> int:
        return max(2, round(self.minutes * 60 / self.interval))

    @property
    def load(self) -> Shape:
        return SHAPES[self.shape]


@dataclass
class Member:
    """One member file being written: its name in the bundle, scratch path and open handle."""

    name: str
    path: Path
    fh: TextIO
    lines: int = 0

    def write(self, text: str) -> None:
        self.fh.write(text)
        self.lines += text.count("\n")


def ts_line(epoch: float) -> str:
    """collect.sh's ``date '+TS %s.%N %F %T'`` (UTC server: wall clock = UTC)."""
    sec = int(epoch)
    nsec = int(round((epoch - sec) * 1e9))
    if nsec >= 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    wall = datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"TS {sec}.{nsec:09d} {wall}\n"


def hms(epoch: float) -> str:
    """``epoch`` (s, UTC) as ``HH:MM:SS``, the time column of mpstat and of the progress lines."""
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%H:%M:%S")


def stress_curve(n: int, incident: tuple[float, float] = INCIDENT) -> np.ndarray:
    """Load factor per second in [0, 1]: 1 inside the load window (``incident``, fractions of the
    run), ramps of RAMP_S seconds (at most a quarter of the window)."""
    k = np.arange(n, dtype=float)
    a, b = incident[0] * n, incident[1] * n
    ramp = max(1.0, min(RAMP_S, (b - a) / 4))
    up = np.clip((k - a) / ramp, 0, 1)
    down = np.clip((b - k) / ramp, 0, 1)
    return np.minimum(up, down)
