"""One call worked out in a forked child of this process, its result sent back pickled.

The ingest's rules run beside its writes: in a thread they would share this process's interpreter
lock with the writes (series aggregation, COPY), and the two would take turns on one core while
the other core, the parse processes' during the parse, stays half idle. A child made by fork(2)
holds the parent's frames as they are, shared copy-on-write, so nothing is copied to it; only its
result is pickled back through a pipe.

``start(fn, *args)`` forks at once and returns ``Forked``; ``Forked.result(timeout_s)`` waits
for the child and returns what ``fn`` returned, or raises what it raised. ``ForkLost``: the child
ended without an answer (killed, or its result could not be pickled); ``ForkTimedOut`` (a
``ForkLost``): it gave none within ``timeout_s`` and was killed; the caller then works it out
itself. Only the calling thread exists in the child (fork(2)), which touches no
database connection, lock or file of the parent, and ends with ``os._exit``.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ForkLost(RuntimeError):
    """The child ended without sending a result (its exit status is in the message), or one that
    could not be read back."""


class ForkTimedOut(ForkLost):
    """The child gave no result within the time it was given; it was killed and reaped."""


class Forked(Generic[T]):
    """A call under way in a forked child (``start``)."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self._fd = pid, fd
        self._done = False

    def result(self, timeout_s: float | None = None) -> T:
        """What the call returned. Raises what it raised (pickled back), or ``ForkLost``. Once.
        ``timeout_s``: seconds to wait for the whole answer (``None``: as long as it takes); past
        them the child is killed and reaped, and ``ForkTimedOut`` is raised."""
        if self._done:
            raise ForkLost("the result of this child was taken already")
        try:
            data = self._read(timeout_s)
        except ForkTimedOut:
            self.cancel()
            raise
        self._done = True
        os.close(self._fd)
        _, status = os.waitpid(self.pid, 0)
        if not data:
            raise ForkLost(f"child {self.pid} ended without a result (wait status {status})")
        try:
            ok, value = pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - e.g. an exception class that does not unpickle
            raise ForkLost(f"child {self.pid}: its result could not be read ({exc!r})") from exc
        if ok:
            return value
        raise value

    def _read(self, timeout_s: float | None) -> bytes:
        """Everything the child writes to the pipe, up to its end; ``ForkTimedOut`` once
        ``timeout_s`` seconds have passed without the end."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        parts: list[bytes] = []
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                    raise ForkTimedOut(f"child {self.pid} gave no result within {timeout_s} s")
            part = os.read(self._fd, 1 << 20)
            if not part:
                return b"".join(parts)
            parts.append(part)

    def cancel(self) -> None:
        """Kill the child, whose result is no longer wanted, and reap it; ``result()`` then raises
        ``ForkLost``. Nothing once the result was taken (the child is reaped: its pid may be
        another process's by then)."""
        if self._done:
            return
        self._done = True
        os.kill(self.pid, signal.SIGKILL)  # not reaped yet: the pid is still the child's
        os.close(self._fd)
        os.waitpid(self.pid, 0)


def start(fn: Callable[..., T], *args: object) -> Forked[T]:
    """Fork now; the child calls ``fn(*args)`` and sends back its result (or its exception) pickled.
    The parent's objects are frozen out of the garbage collector across the fork (``gc.freeze``,
    unless some are frozen already), so that a collection in the child does not write to, and so
    copy, every page of the parent's heap.
    Raises ``OSError`` when the system cannot fork."""
    read_fd, write_fd = os.pipe()
    freeze = not gc.get_freeze_count()  # objects someone else froze stay so
    if freeze:
        gc.freeze()
    try:
        pid = os.fork()
    except OSError:
        if freeze:
            gc.unfreeze()
        os.close(read_fd)
        os.close(write_fd)
        raise
    if pid == 0:  # the child: never returns
        _child(fn, args, read_fd, write_fd)
    if freeze:
        gc.unfreeze()
    os.close(write_fd)
    return Forked(pid, read_fd)


def _child(fn: Callable[..., object], args: tuple[object, ...], read_fd: int, write_fd: int) -> None:
    status = 1
    try:
        os.close(read_fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the parent's handlers are not this child's
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            payload = pickle.dumps((True, fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - sent to the parent, raised there
            payload = _pickled_error(exc)
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(payload)
        status = 0
    finally:
        os._exit(status)


def _pickled_error(exc: BaseException) -> bytes:
    try:
        return pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that does not pickle is sent as its text
        return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
