"""Process figures of the benchmark (bench/run.py): peak and current RSS of a process and its
children, CPU seconds of the worker and of its parse processes, cProfile on demand (--profile).

Linux only: reads /proc/<pid>/{stat,statm,task/*/children} (proc(5)) and getrusage(2).
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20
#: With --profile, the benchmark processes dump cProfile stats into the directory this names.
PROFILE_ENV = "CASEBOOK_BENCH_PROFILE"


def maxrss_bytes() -> int:
    """Peak resident set size of this process (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def children(pid: int | str = "self") -> list[int]:
    """The live child processes of a process (of the ingest: its parse processes)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(child) for child in fh.read().split())
    return out


def _live_cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a live process, from /proc/<pid>/stat (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick  # utime, stime (proc(5) fields 14, 15)


def cpu_seconds(*, system_only: bool = False) -> dict[str, float]:
    """User + system CPU seconds of this process (``worker``) and of its child processes (``parse
    processes``: those that ended, from getrusage, and those still running, kept by the worker
    between bundles, from /proc); with ``system_only`` the system (kernel) part only."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = [_live_cpu_seconds(pid) for pid in children()]
    if system_only:
        return {"worker": me.ru_stime, "parse processes": kids.ru_stime + sum(s for _, s in live)}
    return {
        "worker": me.ru_utime + me.ru_stime,
        "parse processes": kids.ru_utime + kids.ru_stime + sum(u + s for u, s in live),
    }


def system_cpu_seconds() -> dict[str, float]:
    """The system (kernel) part of ``cpu_seconds``: page faults of fresh memory, pipes, files."""
    return cpu_seconds(system_only=True)


def rss_bytes(pid: int | str = "self") -> int | None:
    """Current resident set size of a process, from /proc/<pid>/statm (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def tree_rss_bytes(pid: int | str = "self") -> int:
    """Resident set size of a process and all its descendants (the ingest's parse processes)."""
    total, todo = 0, [os.getpid() if pid == "self" else int(pid)]
    while todo:
        current = todo.pop()
        total += rss_bytes(current) or 0
        todo.extend(children(current))
    return total


@contextlib.contextmanager
def profiled(name: str):  # noqa: ANN201 - context manager
    """cProfile the block into $CASEBOOK_BENCH_PROFILE/<name>.prof when --profile asked for it."""
    where = os.environ.get(PROFILE_ENV)
    if not where:
        yield
        return
    import cProfile

    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        prof.dump_stats(str(Path(where) / f"{name}.prof"))


def cpu_s() -> float:
    """User + system CPU seconds of this process so far (getrusage(2))."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def python() -> str:
    """The project's virtualenv Python (.venv/bin/python), else this interpreter."""
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def mib(n: float | None) -> str:
    """``n`` bytes as whole MiB for the report (``-`` for None)."""
    return "-" if n is None else f"{n / MIB:,.0f} MiB"
