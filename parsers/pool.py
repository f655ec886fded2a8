"""Parse the pieces of large snapshot captures in parallel, in child processes.

A one-hour bundle is mostly three or four snapshot members (processlist, ps, /proc/interrupts,
mysqladmin) cut into pieces of a few MB (``parsers/pieces.py``); the pieces parse independently.
``PiecePool(processes=N)`` keeps N child processes (``python -m parsers.pool``) and parses a piece
in whichever is free; the caller reads the archive, keeps the raw text and joins the results in
order meanwhile. The children are started with ``subprocess`` (not ``multiprocessing``) so that a
pool also works inside a daemonic process such as a Celery prefork worker, and lazily: a bundle
without a member of two pieces or more starts none.

Each child runs ``parse_piece`` and then, when the pool was given one, a reducer named by its
import path (``"analyzer.timeline:reduce_piece"``), so that only the reduced frames cross the pipe.
Requests and replies are pickles over the child's stdin and stdout; both ends are this project's
code, and what a child reads is only ever text of the upload, never a pickle made from it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from parsers import registry
from parsers.base import ClockHints, ParsedSource, ParseError
from parsers.pieces import Piece, parse_piece

#: The directory that holds the ``parsers`` package: the children's import path.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: Seconds a child gets to exit after its stdin is closed, before it is killed.
EXIT_WAIT_S = 5.0


class PoolError(RuntimeError):
    """A parse process died or broke the protocol (killed for memory, crashed)."""


def _load(path: str) -> Callable[[ParsedSource], ParsedSource]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class _Child:
    """One ``python -m parsers.pool`` process and its pipes."""

    def __init__(self, reduce: str | None) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
        args = [sys.executable, "-m", "parsers.pool", *(["--reduce", reduce] if reduce else [])]
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=PROJECT_ROOT
        )

    def call(self, request: tuple[Any, ...]) -> ParsedSource:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
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
        raise PoolError(payload[0])

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


class PiecePool:
    """``processes`` child processes parsing pieces (see the module docstring); a context manager.

    ``reduce``: ``"module:function"`` applied in the child to each parsed piece (``ParsedSource`` ->
    ``ParsedSource``), or None. ``submit`` returns a ``Future`` whose result is the piece's
    ``ParsedSource`` (line numbers the member's), or raises ``ParseError`` (the piece is not the
    format) or ``PoolError`` (the process died; it is replaced by a fresh one for the next piece).
    """

    def __init__(self, processes: int, *, reduce: str | None = None) -> None:
        if processes < 1:
            raise ValueError("a pool needs at least one process")
        self.processes = processes
        self.reduce = reduce
        self._idle: queue.SimpleQueue[_Child] = queue.SimpleQueue()
        self._all: list[_Child] = []
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=processes, thread_name_prefix="parse-piece")

    def submit(self, module: ModuleType, piece: Piece, *, member: str, clock: ClockHints) -> Future:
        return self._executor.submit(self._run, ("parse", module.FORMAT, piece, member, clock))

    def _run(self, request: tuple[Any, ...]) -> ParsedSource:
        try:
            child = self._idle.get_nowait()
        except queue.Empty:
            child = _Child(self.reduce)
            with self._lock:
                self._all.append(child)
        try:
            result = child.call(request)
        except PoolError:
            child.close()
            raise
        self._idle.put(child)
        return result

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            children, self._all = self._all, []
        for child in children:
            child.close()

    def __enter__(self) -> PiecePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(
    stdin: IO[bytes], stdout: IO[bytes], reduce: Callable[[ParsedSource], ParsedSource] | None
) -> None:
    """The child's loop: one request in, one reply out, until stdin closes."""
    while True:
        try:
            request = pickle.load(stdin)
        except EOFError:
            return
        _, fmt, piece, member, clock = request
        parsed = None
        try:
            parsed = parse_piece(registry.by_format(fmt), piece, member=member, clock=clock)
            reply: tuple[Any, ...] = ("ok", reduce(parsed) if reduce else parsed)
        except ParseError as exc:
            reply = ("parse-error", exc.member, exc.line_no, exc.line, exc.reason)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which names the member
            reply = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(reply, stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()
        parsed = reply = None
        if _LIBC is not None:
            _LIBC.malloc_trim(0)  # hand the piece's memory back to the OS (glibc keeps freed arenas)


_libc_name = ctypes.util.find_library("c")
_LIBC = ctypes.CDLL(_libc_name) if _libc_name and hasattr(ctypes.CDLL(_libc_name), "malloc_trim") else None


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    reduce = _load(args[1]) if args[:1] == ["--reduce"] else None
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed by a library goes to stderr, never into the replies
    _serve(stdin, stdout, reduce)
    return 0


if __name__ == "__main__":
    sys.exit(main())
