"""Memory rules: the server swapping (seed 004).

Seed 004 (Yoshinori Matsunobu, Linux tuning for MySQL servers): swap is bad, because pages the
database expects in memory are written to disk (``so``, swap-out) and read back at random (``si``,
swap-in); but no swap at all is worse, because the OOM killer then kills the largest process,
mysqld, and crash recovery follows. vmstat ``si``/``so`` above zero for several samples in a row
means memory is oversubscribed now, not once.
"""

from __future__ import annotations

from analyzer.detect import held_seconds, per_run, step_seconds
from analyzer.engine import rule
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.timeline import Timeline
from analyzer.windows import sustained, within

# vmstat si/so are KiB/s. Any non-zero value is paging to or from swap; a single sample can be a
# long-idle daemon's pages coming back, three in a row is the machine doing it now ("several samples",
# FINDINGS.md).
SWAP_MIN_SAMPLES = 3
# 1 MiB/s is 256 pages/s of 4 KiB, each a random disk I/O: on an HDD (~5 ms per I/O, seed 004) that is
# more than the disk serves in a second, and the database stalls on its own memory.
SWAP_HEAVY_KIB_S = 1024


@rule(key="swap-activity", requires=("vmstat",))
def swap_activity(tl: Timeline) -> Finding | None:
    """vmstat si > 0 or so > 0 for at least SWAP_MIN_SAMPLES consecutive samples.

    Input: ``vmstat`` (``si so`` KiB/s; ``swpd_kib free_kib cache_kib buff_kib`` KiB).
    Source: seed 004; vmstat(8).
    """
    windows: list[Window] = []
    step = 1.0
    for run in per_run(tl.frame("vmstat")):
        if "si" not in run or "so" not in run:
            continue
        found = sustained(run["ts"], (run["si"] > 0) | (run["so"] > 0), min_samples=SWAP_MIN_SAMPLES)
        if found:
            windows += found
            step = step_seconds(run["ts"])
    if not windows:
        return None
    vm = tl.frame("vmstat")
    rows = vm[within(vm["ts"], windows)]
    member, lines = tl.lines_of(rows)
    held = held_seconds(windows, step)
    si_med, so_med = float(rows["si"].median()), float(rows["so"].median())
    swap_out = bool((rows["so"] > 0).any())
    evidence = [
        Evidence("swap-in si (median)", int(si_med), "KiB/s", "vmstat.si", member, lines),
        Evidence("swap-in si (max)", int(rows["si"].max()), "KiB/s", "vmstat.si", member, lines),
        Evidence("swap-out so (median)", int(so_med), "KiB/s", "vmstat.so", member, lines),
        Evidence("swap-out so (max)", int(rows["so"].max()), "KiB/s", "vmstat.so", member, lines),
    ]
    for col, label in (
        ("swpd_kib", "swap used swpd"),
        ("free_kib", "free memory"),
        ("cache_kib", "page cache"),
        ("buff_kib", "buffers"),
    ):
        if col in rows:
            if col == "swpd_kib":
                evidence.append(
                    Evidence(
                        f"{label} (first)", int(rows[col].iloc[0]), "KiB", f"vmstat.{col}", member, lines
                    )
                )
                evidence.append(
                    Evidence(
                        f"{label} (last)", int(rows[col].iloc[-1]), "KiB", f"vmstat.{col}", member, lines
                    )
                )
            else:
                evidence.append(
                    Evidence(f"{label} (min)", int(rows[col].min()), "KiB", f"vmstat.{col}", member, lines)
                )
    heavy = si_med + so_med >= SWAP_HEAVY_KIB_S
    if swap_out:
        what = (
            "Pages were written out to swap (so) while the capture ran: memory is short now, and the kernel "
            "is evicting process memory, possibly the InnoDB buffer pool, to disk"
        )
    else:
        what = (
            "Pages swapped out earlier are being read back (si) as processes touch them: each is a random "
            "disk read the query waits for; memory was short before the capture, not necessarily now"
        )
    return Finding(
        key="swap-activity",
        severity=Severity.CRITICAL if heavy else Severity.WARNING,
        title=f"Server swapping: si {int(si_med)} KiB/s, so {int(so_med)} KiB/s for {held:.0f} s",
        explanation=(
            f"For {held:.0f} s the server paged memory to or from swap. {what}. Memory that MySQL expects to "
            "read in nanoseconds then costs a disk I/O."
        ),
        windows=tuple(windows),
        evidence=tuple(evidence),
        recommendation=(
            "Keep the OS from swapping the database out, but keep swap:\n"
            "  sysctl -w vm.swappiness=1    # kernel 3.5+ and RHEL/CentOS 2.6.32-303+ (6.4+): 0 there means never swap, then OOM\n"
            "  sysctl -w vm.swappiness=0    # only on older kernels\n"
            "  echo 'vm.swappiness = 1' > /etc/sysctl.d/90-mysql.conf   # persist\n"
            "Do not disable swap (swapoff -a): without it the OOM killer kills the largest process, mysqld.\n"
            "Leave the OS headroom: size innodb_buffer_pool_size (plus per-session buffers x max_connections)\n"
            "below RAM, use innodb_flush_method=O_DIRECT so data is not cached twice, and check which process\n"
            "is swapped: grep VmSwap /proc/*/status | sort -k2 -n | tail"
        ),
        caveats=(
            "vmstat -S m rounds si/so below 1 MB/s to 0, so light swapping can be invisible in such captures.",
            "Swapping while free memory looks plentiful points at one NUMA node running out: innodb_numa_interleave=ON or numactl --interleave=all.",
            "Large file copies (backups) fill the page cache and push process memory out (seed 004).",
        ),
        sources=(
            "seed 004 (Yoshinori Matsunobu: swap is bad, the OOM killer is worse)",
            "Percona blog, OOM relation to vm.swappiness=0 in new kernel (Ovais Tariq, 2014); kernel commit fe35004fbf9e (3.5-rc1)",
            "vmstat(8)",
        ),
        confidence=f"vmstat; held {held:.0f} s in {len(windows)} window(s)",
        disproof="If swpd does not change and si/so fall to 0 right after the window, it was a one-off page-in, not memory pressure.",
        related=("disk-saturation",),
    )
