"""Parse the pieces of a bundle's members in parallel, in child processes.

A one-hour bundle is mostly three or four snapshot members (processlist, ps, /proc/interrupts,
mysqladmin) cut into pieces of a few MB (``parsers/ingest/pieces.py``); the pieces parse independently.
``PiecePool(processes=N, work=...)`` keeps N child processes (``python -m parsers.ingest.pool``) and gives
each piece to whichever is free; the caller only reads the archive and cuts it meanwhile. The
children are started with ``subprocess`` (not ``multiprocessing``) so that a pool also works inside
a daemonic process such as a Celery prefork worker, and lazily: a bundle of small members starts none.

A worker starts the parse processes of its next bundle ahead (``keep_warm``: when it starts and after
each bundle); ``warmed`` hands them to that bundle, which closes them at the end of its parse.

Each child runs the pool's ``parsers.ingest.pieces.Work`` on a piece: it decodes and parses it, applies
the reducer the caller handed in with the ``Work`` and compresses the piece's text when asked, so that
only reduced frames and compressed text cross the pipe. The ``Work`` itself is the first message a
child reads (its reducer pickled by reference: a module-level function or an instance of a
module-level class). Requests and replies are pickles over the child's stdin and stdout; both ends
are this project's code, and what a child reads of the upload is only ever bytes inside a request,
never a pickle made from it.

A child holds its data segment to the ``Work``'s ``memory_bytes`` (``limit_memory``), so that one
member that swells in parsing (a hostile upload) cannot take the worker's host: the piece that
passes it fails with ``OutOfMemory``, its member is not used with that reason, the child is replaced
and the rest of the bundle is read. A child killed outright (the kernel's OOM killer) is a
``PoolError`` the same way.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import queue
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

from parsers import registry
from parsers.base import ClockHints, ParseError
from parsers.ingest import children

#: Seconds a child gets to exit after its stdin is closed, before it is killed.
from parsers.ingest.cutting import Piece
from parsers.ingest.malloc import release_memory, resident_bytes
from parsers.ingest.pieces import PARSE_ONLY, Done, Work

EXIT_WAIT_S = 5.0
#: A parse process that holds more than this after a piece hands its free memory back at once (a
#: piece of 8 MiB needs 100-250 MB while it is parsed; the process itself, 70 MB).
TRIM_ABOVE_BYTES = 320 << 20
#: A parse process that holds more than this when the member changes hands its free memory back.
TRIM_ON_CHANGE_ABOVE_BYTES = 144 << 20


class PoolError(RuntimeError):
    """A parse process died or broke the protocol (killed for memory, crashed)."""


class OutOfMemory(PoolError):
    """A parse process ran out of the memory its ``Work`` allows it (``Work.memory_bytes``) while it
    parsed a piece: that piece's member is not used; the process is replaced."""


class _Child:
    """One ``python -m parsers.ingest.pool`` process and its pipes."""

    def __init__(self, work: Work) -> None:
        self.proc = children.start()
        self.work: Work | None = work  # sent with the first request

    def send_work(self) -> None:
        """Send the ``Work`` now (the child imports its reducer's module on reading it) rather than
        with the first request. A child that died meanwhile is found out by ``call``."""
        assert self.proc.stdin is not None
        if self.work is not None:
            with contextlib.suppress(OSError):
                pickle.dump(self.work, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                self.proc.stdin.flush()
                self.work = None

    def call(self, request: tuple[Any, ...]) -> Done:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            if self.work is not None:
                pickle.dump(self.work, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
                self.work = None
            pickle.dump(request, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.proc.stdin.flush()
            kind, *payload = pickle.load(self.proc.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            try:
                code = self.proc.wait(timeout=EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                code = None
            raise PoolError(f"the parse process ended (exit status {code}): {type(exc).__name__}") from exc
        if kind == "ok":
            return payload[0]
        if kind == "parse-error":
            raise ParseError(*payload)
        if kind == "out-of-memory":
            raise OutOfMemory(payload[0])
        raise PoolError(payload[0])

    def hang_up(self) -> None:
        """Close the child's stdin: it ends its loop and exits."""
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()

    def close(self) -> None:
        self.hang_up()
        try:
            self.proc.wait(timeout=EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


class PiecePool:
    """``processes`` child processes running ``work`` on pieces (see the module docstring); a context
    manager. ``submit`` returns a ``Future`` whose result is the piece's ``Done`` (line numbers the
    member's), or raises ``ParseError`` (the piece is not the format) or ``PoolError`` (the process
    died; it is replaced by a fresh one for the next piece).
    """

    def __init__(self, processes: int, *, work: Work = PARSE_ONLY) -> None:
        if processes < 1:
            raise ValueError("a pool needs at least one process")
        self.processes = processes
        self.work = work
        self._idle: queue.SimpleQueue[_Child] = queue.SimpleQueue()
        self._all: list[_Child] = []
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=processes, thread_name_prefix="parse-piece")
        self.started = False

    def warm(self) -> None:
        """Start every child now and hand it the ``Work``, so that its imports (about half a second
        of CPU: pandas, the parsers, the reducer's module) run while the caller reads the small
        members that come before the large ones. ``started`` stays False: members are still sent
        here only when they are worth it (``parsers.ingest.pieces.Pipeline``)."""
        with self._lock:
            while len(self._all) < self.processes:
                child = _Child(self.work)
                child.send_work()
                self._all.append(child)
                self._idle.put(child)

    @property
    def running(self) -> bool:
        """Whether its processes are up: started ahead (``warm``) or by an earlier piece."""
        with self._lock:
            return bool(self._all)

    def submit(self, fmt: str, piece: Piece, *, member: str, clock: ClockHints) -> Future:
        self.started = True
        return self._executor.submit(self._run, ("parse", fmt, piece, member, clock))

    def _run(self, request: tuple[Any, ...]) -> Done:
        try:
            child = self._idle.get_nowait()
        except queue.Empty:
            child = _Child(self.work)
            with self._lock:
                self._all.append(child)
        try:
            result = child.call(request)
        except PoolError:
            child.close()
            with self._lock:
                self._all.remove(child)
            raise
        self._idle.put(child)
        return result

    def alive(self) -> bool:
        """True while every child started so far runs."""
        with self._lock:
            return all(child.proc.poll() is None for child in self._all)

    def ready(self) -> None:
        """Return once every child has read the ``Work`` (its imports done) and waits for a piece.
        A child that died meanwhile is found out by the next piece, as always."""
        with self._lock:
            children = list(self._all)
        for child in children:
            with contextlib.suppress(PoolError, ParseError, ValueError):  # ValueError: a closed pipe
                child.call(("ready",))

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            children, self._all = self._all, []
        for child in children:
            child.hang_up()  # all at once: they exit side by side, not one after the other
        for child in children:
            child.close()

    def __enter__(self) -> PiecePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Pools started ahead of their bundle (``keep_warm``), by (processes, work), waiting for ``warmed``.
_WAITING: dict[tuple[int, Work], PiecePool] = {}
_WAITING_LOCK = threading.Lock()


@contextlib.contextmanager
def warmed(processes: int, *, work: Work = PARSE_ONLY) -> Iterator[PiecePool]:
    """A ``PiecePool(processes, work=work)`` for one bundle: the one ``keep_warm`` started ahead,
    its children already imported (about 0.3 s of CPU each: pandas, the parsers, the reducer's
    module), else a new one. Closed at the end of the block once a piece went to it, so that the
    parse processes' memory is handed back before the analysis (``keep_warm`` starts the next
    bundle's); a pool no piece went to (a bundle of small members) waits on for the next one."""
    key = (processes, work)
    with _WAITING_LOCK:
        pool = _WAITING.pop(key, None)
    if pool is not None and not pool.alive():  # one died while it waited (killed for memory)
        pool.close()
        pool = None
    pool = pool or PiecePool(processes, work=work)
    unused = False
    try:
        yield pool
        unused = not pool.started and bool(pool._all) and pool.alive()
    finally:
        with _WAITING_LOCK:
            if unused and key not in _WAITING:
                _WAITING[key] = pool
                pool = None
        if pool is not None:
            pool.close()


def keep_warm(processes: int, *, work: Work = PARSE_ONLY, wait: bool = False) -> None:
    """Start the parse processes of the next ``warmed(processes, work=work)`` now, unless some wait
    already: a worker process does this when it starts and after each bundle, so that no bundle
    waits for them. With ``wait``, return once they are ready (their imports done)."""
    key = (processes, work)
    with _WAITING_LOCK:
        if key in _WAITING:
            return
        pool = _WAITING[key] = PiecePool(processes, work=work)
    try:
        pool.warm()
    except BaseException:  # a Work that cannot be pickled, a process that cannot start
        with _WAITING_LOCK:
            _WAITING.pop(key, None)
        pool.close()
        raise
    if wait:
        pool.ready()


def close_waiting() -> None:
    """Close the pools that wait for a bundle (their children exit)."""
    with _WAITING_LOCK:
        pools = list(_WAITING.values())
        _WAITING.clear()
    for pool in pools:
        pool.close()


atexit.register(close_waiting)


def _serve(stdin: IO[bytes], stdout: IO[bytes], work: Work) -> None:
    """The child's loop: one request in, one reply out, until stdin closes.

    Memory a piece freed stays in the process for the next one (glibc keeps it), which spares the
    fresh pages a trim would cost on every piece; it is handed back (``release_memory``) when the
    member changes while the process holds more than ``TRIM_ON_CHANGE_ABOVE_BYTES`` (a day's
    processlist pieces leave about 200 MB that its mysqladmin pieces would only hold; the hundreds of
    small hourly files of an OSWatcher archive change member at every piece and leave little), and
    after any piece that left the process above ``TRIM_ABOVE_BYTES``."""
    last_member = None
    while True:
        try:
            request = pickle.load(stdin)
        except EOFError:
            return
        if request[0] == "ready":  # the Work is read: its imports are done
            pickle.dump(("ok", None), stdout, protocol=pickle.HIGHEST_PROTOCOL)
            stdout.flush()
            continue
        _, fmt, piece, member, clock = request
        if (
            member != last_member
            and last_member is not None
            and resident_bytes() > TRIM_ON_CHANGE_ABOVE_BYTES
        ):
            release_memory()
        last_member = member
        try:
            reply: tuple[Any, ...] = ("ok", work(fmt, piece, member=member, clock=clock))
        except ParseError as exc:
            reply = ("parse-error", exc.member, exc.line_no, exc.line, exc.reason)
        except MemoryError:
            request = piece = None  # what the piece held is let go before the reply is made
            reply = ("out-of-memory", _out_of_memory(work.memory_bytes))
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which names the member
            reply = ("error", f"{type(exc).__name__}: {exc}")
        request = piece = None
        pickle.dump(reply, stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()
        if reply[0] == "out-of-memory":
            return  # its heap is in pieces: a fresh process takes the next piece
        reply = None
        if resident_bytes() > TRIM_ABOVE_BYTES:
            release_memory()


def limit_memory(limit_bytes: int) -> None:
    """Hold this process's data segment (heap and private mappings, ``RLIMIT_DATA``, setrlimit(2),
    counted since Linux 4.7) to ``limit_bytes`` (0: no limit): past it an allocation fails, which
    Python raises as ``MemoryError``. The data segment rather than the address space
    (``RLIMIT_AS``): the shared libraries and the reserved but unused address space that malloc's
    arenas and thread stacks take do not count. Never above a hard limit already set."""
    if limit_bytes <= 0:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit_bytes = min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit_bytes, hard))


def _out_of_memory(limit_bytes: int) -> str:
    """The reason a member is not used when its piece took a parse process past its limit."""
    within = f" (its limit: {limit_bytes / 2**20:,.0f} MiB)" if limit_bytes else ""
    return f"the parse process ran out of memory reading it{within}"


def main(argv: list[str] | None = None) -> int:
    """``python -m parsers.ingest.pool``: read the ``Work`` (the first pickle on stdin; its reducer's
    module is imported then) and import every parser, both before it answers ``ready``, so that a
    process started ahead pays none of it during a bundle (about 0.1 s of CPU); then serve requests
    on stdin until it closes, and end without the interpreter's teardown (another 0.1 s of a process
    that imported pandas, which the worker would wait for at the end of every parse)."""
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    try:
        work = pickle.load(stdin)
    except EOFError:
        return 0
    if not isinstance(work, Work):
        raise SystemExit(f"a parse process needs a Work first, not {type(work).__name__}")
    limit_memory(work.memory_bytes)
    os.dup2(2, 1)  # anything printed by a library goes to stderr, never into the replies
    registry.parsers()
    _serve(stdin, stdout, work)
    sys.stderr.flush()
    os._exit(0)  # every reply is flushed: no interpreter teardown for the worker to wait on


if __name__ == "__main__":
    sys.exit(main())
