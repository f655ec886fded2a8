"""What each piece of an ingest gets, wherever it is parsed (``ingest_work``), and the start of
``manage.py analyze --sync`` before Django sets up: its parse processes (``start_parse_processes``)
and the read of its bundle (``read_ahead``, taken by the ingest through ``take_read_ahead``).

No Django import here beyond its lazy settings: ``manage.py`` calls ``read_ahead`` before
``django.setup()``, so that the bundle is read and parsed while the command's own process sets Django
up, checks the migrations and keeps the upload (about 2 s of a cold start on two cores).
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from analyzer.timeline.timeline import reduce_piece
from parsers.base import ParsedSource
from parsers.ingest.archive import Limits
from parsers.ingest.bundle import Bundle, read_bundle
from parsers.ingest.pieces import Work
from parsers.ingest.pool import keep_warm
from parsers.rawtext import TextChunk

log = logging.getLogger(__name__)

#: What the ingest keeps of each parsed piece, handed to the pipeline and applied where the piece was
#: parsed (parsers/ingest/pieces.py).
PIECE_REDUCER = reduce_piece


def ingest_work(reduce: Callable[[ParsedSource], ParsedSource] = PIECE_REDUCER) -> Work:
    """What each piece of an ingest gets: reduced by ``reduce`` (the pipeline's reducer), its text
    kept; the same ``Work`` as ``read_bundle`` builds from what the pipeline hands it, so that parse
    processes started ahead are the ones an ingest takes."""
    return Work(reduce=reduce, keep_text=True, memory_bytes=parse_memory_bytes())


def parse_processes() -> int:
    """``CASEBOOK_PARSE_PROCESSES``, read from the settings module without setting Django up."""
    from django.conf import settings  # noqa: PLC0415 - lazy: reads DJANGO_SETTINGS_MODULE only

    return int(settings.CASEBOOK_PARSE_PROCESSES or 0)


def parse_memory_bytes() -> int:
    """``CASEBOOK_PARSE_MEMORY_MB`` in bytes (0: no limit), read without setting Django up: what
    each parse process may hold (``parsers.ingest.pool.limit_memory``)."""
    from django.conf import settings  # noqa: PLC0415 - lazy: reads DJANGO_SETTINGS_MODULE only

    return max(0, int(settings.CASEBOOK_PARSE_MEMORY_MB)) << 20


def start_parse_processes() -> None:
    """Start the ingest's parse processes now (``parse_processes()`` of them), without waiting for
    them: ``manage.py analyze --sync`` calls it first thing. The ingest takes them
    (``parsers.ingest.pool.warmed``); a bundle that needs none leaves them to be closed at exit."""
    if parse_processes() > 0:
        keep_warm(parse_processes(), work=ingest_work())


def upload_limits() -> Limits:
    """The limits every walk of an upload is held to (settings ``CASEBOOK_MAX_*``, read without
    setting Django up)."""
    from django.conf import settings  # noqa: PLC0415 - lazy: reads DJANGO_SETTINGS_MODULE only

    return Limits(
        max_members=settings.CASEBOOK_MAX_MEMBERS,
        max_total_bytes=settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES,
        max_ratio=settings.CASEBOOK_MAX_RATIO,
    )


def read_upload(
    path: Path,
    *,
    display_name: str,
    uploaded_at: pd.Timestamp,
    progress: Callable[[str], None],
    keep_text: Callable[[str, tuple[TextChunk, ...]], None],
    limits: Limits,
    more: list[tuple[Path, str]] | None = None,
) -> Bundle:
    """``read_bundle`` as an ingest reads an upload (and the bundles ``more`` added to its case):
    under ``limits`` (``upload_limits()``), each piece reduced by ``PIECE_REDUCER`` in the
    ``parse_processes()`` parse processes, its text handed to ``keep_text``. ``uploaded_at``: the
    last evidence of the date of a capture with times of day and no date."""
    return read_bundle(
        path,
        display_name=display_name,
        limits=limits,
        progress=progress,
        reduce=PIECE_REDUCER,
        keep_text=keep_text,
        processes=parse_processes(),
        more=more or (),
        uploaded_at=uploaded_at,
        memory_bytes=parse_memory_bytes(),
    )


def analyze_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``manage.py analyze``: its command adds them to Django's parser, and
    ``read_ahead`` reads the command line with them before Django sets up."""
    parser.add_argument(
        "bundle",
        type=Path,
        nargs="+",
        help="a .tar[.gz|.bz2|.xz|.zst], .zip or single capture file; several: one case of them all",
    )
    parser.add_argument("--json", action="store_true", help="print the case report as one JSON document")
    parser.add_argument(
        "--sync", action="store_true", help="run the ingest task inline instead of on a worker"
    )
    parser.add_argument("--title", default="", help="a title for the case")
    parser.add_argument(
        "--team",
        default="",
        help="the team the case belongs to (default: the default team; with --user, his only team, "
        "and required when he is in several)",
    )
    parser.add_argument(
        "--user", default="", help="the engineer the case is uploaded as (his teams' rule applies)"
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the worker")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="report the ready case of an identical upload (same sha256) instead of a new one",
    )


def _identity(path: Path) -> tuple[int, int, int, int]:
    """What says that a file is still the one that was read: device, inode, size, mtime (ns)."""
    st = path.stat()
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class ReadAhead:
    """One bundle read by ``read_bundle`` in a thread of this process while Django sets up: the
    pieces go to the parse processes ``start_parse_processes`` started; what the ingest would be
    told on the way (each member's progress, each member's compressed text) waits in a queue for
    the ingest (``bundle``), which replays it in its own thread, where its database connection is.
    The upload time given to the read (for captures with a time of day and no date) is the
    command's start."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.identity = _identity(path)
        self.uploaded_at = pd.Timestamp.now(tz="UTC")
        self.limits = upload_limits()
        self._events: queue.SimpleQueue[tuple[str, object, object]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._read, name="read-ahead", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        put = self._events.put
        try:
            bundle = read_upload(
                self.path,
                display_name=self.path.name,
                uploaded_at=self.uploaded_at,
                progress=lambda member: put(("progress", member, None)),
                keep_text=lambda member, chunks: put(("text", member, chunks)),
                limits=self.limits,
            )
        except BaseException as exc:  # noqa: BLE001 - raised again where the ingest takes the bundle
            put(("error", exc, None))
        else:
            put(("done", bundle, None))

    def bundle(
        self, *, keep_text: Callable[[str, tuple[TextChunk, ...]], None], progress: Callable[[str], None]
    ) -> Bundle:
        """The bundle, once read: meanwhile every member's progress and text are handed to
        ``progress`` and ``keep_text`` in this thread, in the order the read gave them. Raises what
        ``read_bundle`` raised."""
        while True:
            kind, first, second = self._events.get()
            if kind == "text":
                keep_text(first, second)  # type: ignore[arg-type]
            elif kind == "progress":
                progress(first)  # type: ignore[arg-type]
            elif kind == "error":
                raise first  # type: ignore[misc]
            else:
                return first  # type: ignore[return-value]


_ahead: ReadAhead | None = None


def read_ahead(argv: list[str]) -> ReadAhead | None:
    """For ``manage.py analyze ARGS`` (``argv``: the arguments after ``analyze``): with ``--sync``,
    start the parse processes, and for one bundle (without ``--reuse``, which may not read it, nor
    the fan-out, which parses elsewhere) start reading it too (``ReadAhead``); None when nothing is
    read ahead. Settings are read without setting Django up."""
    global _ahead  # noqa: PLW0603 - one command, one bundle read ahead
    from django.conf import settings  # noqa: PLC0415 - lazy: reads DJANGO_SETTINGS_MODULE only

    parser = argparse.ArgumentParser(add_help=False)
    analyze_arguments(parser)
    try:
        args, _ = parser.parse_known_args(argv)
    except SystemExit:  # the command's own parser says what is wrong
        return None
    if not args.sync:
        return None
    start_parse_processes()
    if len(args.bundle) != 1 or args.reuse or settings.CASEBOOK_INGEST_FANOUT or not args.bundle[0].is_file():
        return None
    if os.environ.get("CASEBOOK_READ_AHEAD", "1") == "0":
        return None
    _ahead = ReadAhead(args.bundle[0])
    return _ahead


def take_read_ahead(*, original_name: str, size: int, limits: Limits) -> ReadAhead | None:
    """The bundle read ahead, for the ingest of an upload named ``original_name`` of ``size`` bytes
    read under ``limits``: given once, and only when it is that file, unchanged since it was read
    (device, inode, size and modification time), under the same limits; else None (the ingest reads
    the stored upload)."""
    global _ahead  # noqa: PLW0603
    ahead, _ahead = _ahead, None
    if ahead is None:
        return None
    try:
        same = _identity(ahead.path) == ahead.identity
    except OSError:
        same = False
    if same and ahead.path.name == original_name and ahead.identity[2] == size and ahead.limits == limits:
        return ahead
    log.warning("the bundle read ahead (%s) is not the upload; it is read again", ahead.path)
    return None
