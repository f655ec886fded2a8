"""The start of a parse process (``python -m parsers.ingest.pool``), importable without pandas.

``manage.py analyze --sync`` starts its parse processes first thing (``start_early``): they import
pandas and the parsers (about 0.7 s of CPU each) while the command imports its own, instead of after
it. A ``PiecePool`` child takes one of those (``start``) before it starts a new process. Each child
gets the same environment: the project on its import path, one BLAS thread, malloc's huge pages.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
from pathlib import Path
from typing import IO

from parsers.ingest.malloc import MALLOC_TUNABLES

#: The directory that holds the ``parsers`` package: the children's import path.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: NumPy's BLAS (OpenBLAS) starts a thread per CPU in every process for its matrix products (the
#: parsers' digit sums) and those threads spin while they wait: in parse processes that already
#: fill the CPUs they only take time from each other.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: Bytes a pipe to or from a child holds (``F_SETPIPE_SZ``; Linux's default is 64 KiB): a piece of
#: several MB then crosses in a few writes rather than a hundred, with as many fewer wake-ups.
PIPE_BYTES = 1 << 20

#: Processes started by ``start_early`` that no pool has taken yet.
_early: list[subprocess.Popen[bytes]] = []


def _widen(pipe: IO[bytes] | None) -> None:
    """Ask for ``PIPE_BYTES`` in ``pipe`` (or up to /proc/sys/fs/pipe-max-size); nothing where the
    system refuses or has no such call."""
    if pipe is None or not hasattr(fcntl, "F_SETPIPE_SZ"):
        return
    for size in (PIPE_BYTES, 256 << 10):
        with contextlib.suppress(OSError):
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, size)
            return


def _new() -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    for name in BLAS_THREADS:  # one thread each: the pool is the parallelism (see BLAS_THREADS)
        env.setdefault(name, "1")
    env.setdefault("GLIBC_TUNABLES", MALLOC_TUNABLES)
    proc = subprocess.Popen(
        [sys.executable, "-m", "parsers.ingest.pool"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=PROJECT_ROOT,
    )
    _widen(proc.stdin)
    _widen(proc.stdout)
    return proc


def exec_tuned() -> None:
    """Run this program again in place (``os.execv``: the same interpreter, options and arguments,
    ``sys.orig_argv``) with a worker's malloc tunables (``GLIBC_TUNABLES=MALLOC_TUNABLES``, as
    scripts/start gives a worker and ``_new`` a parse process) when its environment sets none:
    glibc reads them only when a process starts. For ``manage.py analyze --sync``, which then reads
    and joins a bundle's pieces as a worker does. Returns when the variable is set (even empty)."""
    if "GLIBC_TUNABLES" in os.environ:
        return
    os.environ["GLIBC_TUNABLES"] = MALLOC_TUNABLES
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, sys.orig_argv)


def start_early(processes: int) -> None:
    """Start ``processes`` parse processes now, for the pools of this process to take (``start``).
    One that no pool takes reads the end of its stdin when this process exits, and ends."""
    _early.extend(_new() for _ in range(max(0, processes) - len(_early)))


def start() -> subprocess.Popen[bytes]:
    """A parse process with its pipes: one ``start_early`` started that is still alive, else a new one.
    It waits for its ``Work`` on stdin (``parsers.ingest.pool``)."""
    while _early:
        proc = _early.pop(0)
        if proc.poll() is None:
            return proc
    return _new()
