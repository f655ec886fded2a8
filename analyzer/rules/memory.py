"""Memory rules: the server swapping (docs/background.md, "One hot core, disks, swap").

Yoshinori Matsunobu, "Linux performance tuning & stabilization tips" (2010): swap is bad, because pages the
database expects in memory are written to disk (``so``, swap-out) and read back at random (``si``,
swap-in); but no swap at all is worse, because the OOM killer then kills the largest process,
mysqld, and crash recovery follows. vmstat ``si``/``so`` above zero for several samples in a row
means memory is oversubscribed now, not once.
"""

from __future__ import annotations

from analyzer.detect import column_evidence, held_seconds, per_run, step_seconds
from analyzer.findings import Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import sustained, within

# vmstat si/so are KiB/s. Any non-zero value is paging to or from swap; a single sample can be a
# long-idle daemon's pages coming back, three in a row is the machine doing it now ("several samples",
# docs/background.md).
SWAP_MIN_SAMPLES = 3
# 1 MiB/s is 256 pages/s of 4 KiB, each a random disk I/O: on an HDD (~5 ms per I/O, docs/background.md) that
# is
# more than the disk serves in a second, and the database stalls on its own memory.
SWAP_HEAVY_KIB_S = 1024


SWAP_ACTIVITY = RuleTexts(
    title="Server swapping: si {si:.0f} KiB/s, so {so:.0f} KiB/s for {held:.0f} s",
    explanation=(
        "For {held:.0f} s the server paged memory to or from swap. {what}. Memory that MySQL expects to "
        "read in nanoseconds then costs a disk I/O."
    ),
    recommendation=(
        "Keep the OS from swapping the database out, but keep swap:\n"
        "  sysctl -w vm.swappiness=1    # kernel 3.5+ and RHEL/CentOS 2.6.32-303+ (6.4+): 0 there means "
        "never swap, then OOM\n"
        "  sysctl -w vm.swappiness=0    # only on older kernels\n"
        "  echo 'vm.swappiness = 1' > /etc/sysctl.d/90-mysql.conf   # persist\n"
        "Do not disable swap (swapoff -a): without it the OOM killer kills the largest process, mysqld.\n"
        "Leave the OS headroom: size innodb_buffer_pool_size (plus per-session buffers x max_connections)\n"
        "below RAM, use innodb_flush_method=O_DIRECT so data is not cached twice, and check which process\n"
        "is swapped: grep VmSwap /proc/*/status | sort -k2 -n | tail"
    ),
    caveats=(
        "vmstat -S m rounds si/so below 1 MB/s to 0, so light swapping can be invisible in such captures.",
        (
            "Swapping while free memory looks plentiful points at one NUMA node running out: "
            "innodb_numa_interleave=ON or numactl --interleave=all."
        ),
        "Large file copies (backups) fill the page cache and push process memory out.",
    ),
    sources=(
        'Yoshinori Matsunobu, "Linux performance tuning & stabilization tips" (MySQL Conference & Expo 2010)',
        (
            "Percona blog, OOM relation to vm.swappiness=0 in new kernel (Ovais Tariq, 2014); kernel commit "
            "fe35004fbf9e (3.5-rc1)"
        ),
        "vmstat(8)",
    ),
    confidence="vmstat; held {held:.0f} s in {n_windows} window(s)",
    disproof=(
        "If swpd does not change and si/so fall to 0 right after the window, it was a one-off "
        "page-in, not memory pressure."
    ),
)
SWAPPED_OUT = (
    "Pages were written out to swap (so) while the capture ran: memory is short now, and the kernel "
    "is evicting process memory, possibly the InnoDB buffer pool, to disk"
)
SWAPPED_IN = (
    "Pages swapped out earlier are being read back (si) as processes touch them: each is a random "
    "disk read the query waits for; memory was short before the capture, not necessarily now"
)


@rule(key="swap-activity", requires=("vmstat",))
def swap_activity(tl: Timeline) -> Finding | None:
    """vmstat si > 0 or so > 0 for at least SWAP_MIN_SAMPLES consecutive samples.

    Input: ``vmstat`` (``si so`` KiB/s; ``swpd_kib free_kib cache_kib buff_kib`` KiB).
    Source: vmstat(8); docs/background.md.
    """
    windows: list[Window] = []
    step = 1.0
    for run in per_run(tl.frame("vmstat")):
        if "si" not in run or "so" not in run:
            continue
        found = sustained(run["ts"], (run["si"] > 0) | (run["so"] > 0), min_samples=SWAP_MIN_SAMPLES)
        if found:
            windows, step = windows + found, step_seconds(run["ts"])
    if not windows:
        return None
    vm = tl.frame("vmstat")
    rows = vm[within(vm["ts"], windows)]
    si_med, so_med = int(rows["si"].median()), int(rows["so"].median())
    evidence = column_evidence(
        tl,
        rows,
        "vmstat",
        (
            ("swap-in si (median)", "si", "median0", "KiB/s"),
            ("swap-in si (max)", "si", "max", "KiB/s"),
            ("swap-out so (median)", "so", "median0", "KiB/s"),
            ("swap-out so (max)", "so", "max", "KiB/s"),
            ("swap used swpd (first)", "swpd_kib", "first", "KiB"),
            ("swap used swpd (last)", "swpd_kib", "last", "KiB"),
            ("free memory (min)", "free_kib", "min", "KiB"),
            ("page cache (min)", "cache_kib", "min", "KiB"),
            ("buffers (min)", "buff_kib", "min", "KiB"),
        ),
    )
    heavy = float(rows["si"].median()) + float(rows["so"].median()) >= SWAP_HEAVY_KIB_S
    return SWAP_ACTIVITY.finding(
        "swap-activity",
        Severity.CRITICAL if heavy else Severity.WARNING,
        windows,
        evidence,
        related=("disk-saturation",),
        si=si_med,
        so=so_med,
        held=held_seconds(windows, step),
        what=SWAPPED_OUT if bool((rows["so"] > 0).any()) else SWAPPED_IN,
    )
