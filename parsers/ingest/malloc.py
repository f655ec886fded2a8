"""Memory of the processes that read bundles: glibc malloc tuning, trimming and the resident size.

Used by the ingest (``parsers.ingest.bundle``, ``fanout``, ``pieces``, ``pool``: the worker keeps
and joins pieces, its parse processes read them) and by ``web.ingest.pipeline`` around a case's ingest.
Source: glibc manual, "Memory Allocation Tunables" and ``mallopt(3)``, ``malloc_trim(3)``; proc(5)
for ``/proc/self/statm``. Without glibc every call here does nothing (``resident_bytes``: 0 where
there is no ``/proc``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

_libc_name = ctypes.util.find_library("c")
#: glibc, for malloc_trim (None elsewhere: then freed memory is only reused, not handed back).
_LIBC = ctypes.CDLL(_libc_name) if _libc_name and hasattr(ctypes.CDLL(_libc_name), "malloc_trim") else None


#: glibc ``mallopt`` parameter: the size from which an allocation gets its own mapping.
M_MMAP_THRESHOLD = -3
#: Arrays of a MiB or more (columns of parsed pieces, joined frames) are mapped, never carved from the heap.
MMAP_THRESHOLD_BYTES = 1 << 20


#: The glibc tunables (``GLIBC_TUNABLES``, read when a process starts) of the processes that read
#: bundles: the worker (scripts/start worker) and its parse processes (``parsers.ingest.pool``).
#: ``glibc.malloc.hugetlb=1`` maps malloc's large blocks with transparent huge pages
#: (``madvise(MADV_HUGEPAGE)``; the kernel's THP mode ``madvise`` or ``always``): a fresh 12 MiB
#: piece then costs 6 page faults, not 3,072 (146 such blocks: 0.15 s against 1.1 s here). A
#: process started with ``GLIBC_TUNABLES`` already set keeps its own; no effect before glibc 2.35.
MALLOC_TUNABLES = "glibc.malloc.hugetlb=1"


def steady_heap() -> None:
    """Fix glibc's mmap threshold at ``MMAP_THRESHOLD_BYTES`` (``mallopt(M_MMAP_THRESHOLD)``).

    glibc raises the threshold each time a mapped block is freed (up to 32 MiB), after which the
    columns of later pieces come from the heap, where they fragment it around the frames that are
    kept: a day-long capture's ingest then holds hundreds of MB it no longer uses. With a fixed
    threshold a freed column goes back to the OS at once (13 % less peak on a 10-minute bundle). For
    the process that keeps and joins the reduced pieces, not for those that parse: every large
    array then costs fresh pages, about 30 % more CPU in a parse. Safe to call again. No effect
    without glibc."""
    if _LIBC is not None:
        _LIBC.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


def resident_bytes() -> int:
    """This process's resident set size in bytes (``/proc/self/statm``, proc(5)); 0 where there is none."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def release_memory() -> None:
    """Hand freed memory back to the OS (glibc ``malloc_trim``). glibc keeps the small blocks of a
    parsed piece's frames in its heap after they are freed, while large arrays come from their own
    mappings: without this the resident size of a parse grows to the sum of what it ever held."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
