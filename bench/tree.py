"""A command's whole process tree, measured while it runs: CPU seconds, peak summed PSS and RSS.

``run_tree(argv, ...)`` runs a command as a child of this process and returns a ``TreeRun``:

- **CPU seconds of the tree** (``cpu_s``): user + system of the command and of every descendant,
  from getrusage(2) ``RUSAGE_CHILDREN`` before and after. That counts every process of the tree that
  was waited for: the command itself (waited for here), each of its children that it waited for, and
  so on down (a process's waited-for children are added to its own figure when its parent waits for
  it). A descendant whose parent does not wait for it (the parent exits first, e.g. with
  ``os._exit`` while a parse process still runs) would be reparented to init and lost; so this
  process makes itself a *child subreaper* (prctl(2) ``PR_SET_CHILD_SUBREAPER``): such orphans are
  reparented here instead, and are waited for here once the command has ended (``orphans`` counts
  them). Not counted: a descendant still running when ``orphan_wait_s`` has passed after the command
  (it is killed then, and its CPU up to then is counted), CPU spent on the command's behalf outside
  its tree (the PostgreSQL server's backends: see ``db_cpu_s``; the kernel's own threads, e.g.
  writeback of its files), and this process's own sampling.
- **CPU seen live** (``cpu_polled_s``): the sum over the tree's processes of the last utime + stime
  read from /proc/<pid>/stat at each sample, a lower bound (the last ``SAMPLE_S`` of each process and
  the processes that lived less than one sample are missed): a check of the figure above.
- **Peak summed PSS** (``peak_pss_bytes``): every ``PSS_SAMPLE_S`` seconds, ``Pss`` of
  /proc/<pid>/smaps_rollup summed over every process of the tree; the largest sum. A page shared by
  k processes counts 1/k in each (the pages a forked child shares with its parent count once in the
  sum, not twice as in a sum of RSS); a page of a shared library also mapped outside the tree counts
  only its share.
- **Peak summed RSS** (``peak_rss_bytes``): the same with the resident set size (``statm``), every
  ``SAMPLE_S``, as bench/ratios.py reported before.
- **PostgreSQL backends' CPU** (``db_cpu_s``): when the server runs on this machine, the backends
  whose command line names ``db_name`` (the command's database), last utime + stime seen per
  backend, summed: what the writes cost the server, outside the tree. ``None`` when no postmaster
  is found on this machine.

Linux only: proc(5), prctl(2), getrusage(2), wait4(2).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bench.procstats import children, rss_bytes

#: Seconds between two samples of the tree's resident memory and live CPU.
SAMPLE_S = 0.05
#: Seconds between two samples of the tree's PSS (smaps_rollup walks every mapping: ~0.5 ms a process).
PSS_SAMPLE_S = 0.1
#: prctl(2) option: orphaned descendants are reparented to this process rather than to init.
PR_SET_CHILD_SUBREAPER = 36
_TICK = os.sysconf("SC_CLK_TCK")


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; False where prctl is missing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children_cpu_s() -> float:
    """User + system CPU seconds of every waited-for descendant of this process (RUSAGE_CHILDREN)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def proc_cpu_s(pid: int) -> float | None:
    """utime + stime of a live process from /proc/<pid>/stat (fields 14, 15), None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def pss_bytes(pid: int) -> int:
    """``Pss`` of /proc/<pid>/smaps_rollup in bytes (0 when the process is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def summed(pids: list[int]) -> tuple[int, int]:
    """(PSS, RSS) summed over ``pids``, in bytes: a process gone meanwhile counts 0."""
    return sum(pss_bytes(pid) for pid in pids), sum(rss_bytes(pid) or 0 for pid in pids)


def descendants(roots: list[int]) -> list[int]:
    """``roots`` and every live descendant of them (/proc/<pid>/task/*/children)."""
    out, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children(pid))
    return out


def postmaster_pid() -> int | None:
    """The PostgreSQL postmaster on this machine (a ``postgres`` process whose parent is not one)."""
    comms: dict[int, tuple[str, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                raw = Path(f"/proc/{entry}/stat").read_text()
                comm = raw[raw.index("(") + 1 : raw.rindex(")")]
                comms[int(entry)] = (comm, int(raw.rsplit(")", 1)[1].split()[1]))
    for pid, (comm, ppid) in comms.items():
        if comm == "postgres" and comms.get(ppid, ("",))[0] != "postgres":
            return pid
    return None


@dataclass
class TreeRun:
    """What ``run_tree`` measured (bytes and seconds; see the module's docstring)."""

    returncode: int
    seconds: float
    cpu_s: float
    cpu_polled_s: float
    peak_pss_bytes: int
    peak_rss_bytes: int
    db_cpu_s: float | None
    orphans: int
    killed: str = ""
    stderr: bytes = b""
    pss_samples: int = 0
    seen: dict[int, float] = field(default_factory=dict, repr=False)


class _Watch:
    """The sampling thread of ``run_tree``."""

    def __init__(
        self, proc: subprocess.Popen[bytes], db_name: str | None, max_rss: int, timeout: float
    ) -> None:
        self.proc, self.db_name, self.max_rss, self.timeout = proc, db_name, max_rss, timeout
        self.postmaster = postmaster_pid() if db_name else None
        self.backends: dict[int, float] = {}
        self.not_ours: set[int] = set()
        self.cpu: dict[int, float] = {}
        self.peak_pss = self.peak_rss = self.pss_samples = 0
        self.killed = ""
        self.stop = threading.Event()
        self.t0 = time.perf_counter()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def tree(self) -> list[int]:
        """The command and its descendants, and orphans of it reparented to this process."""
        return descendants(children(os.getpid()))

    def _run(self) -> None:
        next_pss = 0.0
        while not self.stop.is_set():
            pids = self.tree()
            rss = 0
            for pid in pids:
                rss += rss_bytes(pid) or 0
                cpu = proc_cpu_s(pid)
                if cpu is not None:
                    self.cpu[pid] = max(cpu, self.cpu.get(pid, 0.0))
            self.peak_rss = max(self.peak_rss, rss)
            now = time.perf_counter()
            if now >= next_pss:
                self.peak_pss = max(self.peak_pss, summed(pids)[0])
                self.pss_samples += 1
                next_pss = now + PSS_SAMPLE_S
            self._backends()
            if rss > self.max_rss or now - self.t0 > self.timeout:
                self.killed = f"killed at {rss / (1 << 20):,.0f} MiB after {now - self.t0:.0f} s"
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, 9)
                return
            self.stop.wait(SAMPLE_S)

    def _backends(self) -> None:
        if self.postmaster is None:
            return
        for pid in children(self.postmaster):
            if pid in self.not_ours:
                continue
            if pid not in self.backends:
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if f" {self.db_name} ".encode() not in cmdline + b" ":
                    if cmdline.startswith(b"postgres: "):  # a backend's title, set once it is connected
                        self.not_ours.add(pid)
                    continue
            cpu = proc_cpu_s(pid)
            if cpu is not None:
                self.backends[pid] = max(cpu, self.backends.get(pid, 0.0))


def run_tree(
    argv: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdout: IO[bytes] | int | None = None,
    db_name: str | None = None,
    timeout: float = 1800,
    max_rss: int = 1 << 62,
    orphan_wait_s: float = 30,
) -> TreeRun:
    """Run ``argv`` and measure its process tree until it and its orphans have ended (see the
    module's docstring). This process must have no other child running meanwhile, and should be a
    subreaper (``become_subreaper``) for orphans to be counted. Killed (the whole tree) past
    ``timeout`` seconds or ``max_rss`` bytes of summed RSS."""
    cpu0 = children_cpu_s()
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE)
    watch = _Watch(proc, db_name, max_rss, timeout)
    watch.thread.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - t
    orphans = _reap_orphans(orphan_wait_s)
    watch.stop.set()
    watch.thread.join()
    return TreeRun(
        returncode=proc.returncode,
        seconds=seconds,
        cpu_s=children_cpu_s() - cpu0,
        cpu_polled_s=sum(watch.cpu.values()),
        peak_pss_bytes=watch.peak_pss,
        peak_rss_bytes=watch.peak_rss,
        db_cpu_s=sum(watch.backends.values()) if watch.postmaster is not None else None,
        orphans=orphans,
        killed=watch.killed,
        stderr=err or b"",
        pss_samples=watch.pss_samples,
        seen=watch.cpu,
    )


def _reap_orphans(wait_s: float) -> int:
    """Wait for the descendants reparented to this process (subreaper); those still running after
    ``wait_s`` seconds are killed (then waited for). Their CPU then counts in RUSAGE_CHILDREN. Any
    child of this process is an orphan of the command by now: the caller runs nothing else."""

    def kill_rest() -> None:
        for child in children(os.getpid()):
            with contextlib.suppress(OSError):
                os.kill(child, 9)

    timer = threading.Timer(wait_s, kill_rest)
    timer.start()
    reaped = 0
    try:
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                return reaped
            reaped += 1
    finally:
        timer.cancel()
