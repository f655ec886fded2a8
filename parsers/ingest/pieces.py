"""Parse a bundle's members in pieces, several at once, so that a one-hour member is never held whole.

The pieces are cut by ``parsers.ingest.cutting`` (at a ``TS``/``zzz`` marker every ``PIECE_BYTES``,
at line ends, or one piece for a member up to ``WHOLE_MAX_BYTES``), bytes as uploaded with universal
newlines applied, so lines are numbered as the parsers number them.

A piece is decoded (UTF-8 with replacement) and parsed by the format's own ``parse`` where a
runner puts it: in this process (:class:`LocalRunner`) or in a parse process
(``parsers.ingest.pool.PiecePool``). :class:`Work` says what else is done there: a reducer (a
callable handed in by the caller, e.g. the analysis's ``analyzer.timeline.timeline.reduce_piece``) applied to
the parsed piece, and the piece's text compressed into chunks (``parsers.rawtext``), so that only
reduced frames and compressed text come back. :class:`Pipeline` keeps pieces of consecutive
members in flight together and hands back each member's result, in member order.

Every piece after the first starts again with the last snapshot of the one before, so that formats
whose values are rates between snapshots (/proc/interrupts counters) get the rate of their first
snapshot; the rows and warnings of that repeated snapshot are then dropped. Line numbers are
shifted to the member's.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import ModuleType
from typing import Protocol

import numpy as np
import pandas as pd

from parsers import damage, pasted, registry, truncation
from parsers.base import (
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    lines_of,
)
from parsers.ingest.cutting import Piece
from parsers.ingest.joining import join
from parsers.rawtext import TextChunk, chunks_of

#: A member of one piece at least this long goes to parse processes that are already running (started
#: ahead of the bundle, or by a large upload) rather than being parsed here while they wait: this
#: process reads on meanwhile.
WARM_PIECE_BYTES = 1 << 20
#: The line columns of a parsed frame, shifted to the member's lines.
LINE_COLUMNS = ("line_no", "line_end")


def _shift_lines(source: ParsedSource, offset: int, drop_before: int) -> ParsedSource:
    """Line numbers moved by ``offset``; rows and warnings of lines before ``drop_before`` dropped.
    The other columns are shared with ``source``'s frames, not copied."""
    if not offset and not drop_before:
        return source
    frames = {}
    for name, frame in source.frames.items():
        if "line_no" in frame and drop_before:
            frame = _from_line(frame, drop_before - offset)
        shifted = {column: _plus(frame[column], offset) for column in LINE_COLUMNS if column in frame}
        if shifted:
            frame = frame.copy(deep=False)  # the line columns are replaced, the others shared
            for column, values in shifted.items():
                frame[column] = values  # a Series on the frame's index: taken as it is, not copied
        frames[name] = frame
    warnings = [
        _shifted(w, offset)
        for w in source.warnings
        if not drop_before or w.line_no == 0 or w.line_no + offset >= drop_before
    ]
    return dataclasses.replace(source, frames=frames, warnings=warnings)


def _plus(values: pd.Series, offset: int) -> pd.Series:
    """``values`` + ``offset``, of the same dtype: added on the NumPy array for a NumPy integer column
    (no pandas operator on a piece's hundreds of thousands of rows), else as pandas adds."""
    if offset and values.dtype.kind in "iu" and isinstance(values.dtype, np.dtype):
        added = values.to_numpy() + np.array(offset, dtype=values.dtype)
        return pd.Series(added, index=values.index, name=values.name, copy=False)
    return values + offset if offset else values


def _shifted(warning: ParseWarning, offset: int) -> ParseWarning:
    """``warning`` of a piece with its line moved by ``offset`` to the member's; a damage warning's
    message names its line too (``line 12``), moved with it."""
    if not warning.line_no:
        return warning
    message = warning.message
    if offset and warning.code in damage.DAMAGE_CODES:
        message = re.sub(rf"\bline {warning.line_no}\b", f"line {warning.line_no + offset}", message)
    return ParseWarning(warning.line_no + offset, warning.code, message)


def _from_line(frame: pd.DataFrame, first: int) -> pd.DataFrame:
    """The rows of ``frame`` whose ``line_no`` is ``first`` or later: a slice sharing ``frame``'s
    columns when they are its last rows (as parsers give them: the overlap is then a head), else a
    copy of those rows. The index is a fresh ``RangeIndex`` either way."""
    line_no = frame["line_no"]
    if line_no.dtype.kind in "iu" and isinstance(line_no.dtype, np.dtype) and len(frame):
        values = line_no.to_numpy()
        head = int(np.searchsorted(values, first))  # where the kept rows start when in line order
        if (values[:head] < first).all() and (head == len(values) or values[head:].min() >= first):
            if not head:
                return frame
            out = frame.iloc[head:].copy(deep=False)
            out.index = pd.RangeIndex(len(out))
            return out
    return frame[line_no >= first].reset_index(drop=True)


class _Text:
    r"""A piece's text read as a text file: ``read(n)`` by blocks, or its lines cut at ``\n`` only,
    as the member's lines are counted. (``io.StringIO`` would hold it as four bytes a character.)"""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self, n: int = -1) -> str:
        end = len(self.text) if n < 0 else self.pos + n
        out = self.text[self.pos : end]
        self.pos += len(out)
        return out

    def __iter__(self) -> Iterator[str]:
        text = self.text[self.pos :] if self.pos else self.text
        self.pos = len(self.text)
        return iter(lines_of(text))

    def line_blocks(self, size: int) -> Iterator[str]:
        r"""The rest of the text in blocks of whole lines of ``size`` characters or a little more (to
        the next ``\n``; the last block may lack it), for ``parsers.base.raw_blocks``: one copy of
        each block, none of a text of one block."""
        text, pos = self.text, self.pos
        self.pos = len(text)
        if not pos and len(text) <= size:
            if text:
                yield text
            return
        while pos < len(text):
            end = text.find("\n", pos + max(size, 1) - 1) + 1 or len(text)
            yield text[pos:end]
            pos = end


def parse_piece(
    module: ModuleType, piece: Piece, *, member: str, clock: ClockHints, **options: object
) -> ParsedSource:
    """One piece decoded (UTF-8, other bytes as Windows-1252: parsers/pasted.py) and parsed by
    ``module.parse``, its line numbers the member's, the rows and warnings of its overlap (the last snapshot
    of the piece before) dropped.

    ``options``: keyword arguments of ``module.parse`` (``Work.options``). Raises ``ParseError`` (with
    the member's line number) when the piece cannot be read.
    """
    text, not_utf8 = pasted.decode(piece.data)
    text, clipped = damage.clip_long_lines(text, module.FORMAT, piece.data if not_utf8 is None else None)
    if piece.first_line == 1 and piece.last:
        text, twice = damage.drop_second_copy(text)
        clipped += twice
    clipped += damage.nul_warning(text)

    def parse(lines: Iterable[str]) -> ParsedSource:
        return module.parse(lines, member=member, clock=clock, **options)

    try:
        parsed = parse(_Text(text))
    except Exception as exc:  # noqa: BLE001 - a damaged line: salvaged, else raised with the member's line
        parsed = (
            _as_pasted(module, piece, text, member, clock, options) if isinstance(exc, ParseError) else None
        )
        if parsed is None:
            try:
                parsed = damage.parse_salvaging(parse, text, member=member, error=exc)
            except ParseError as final:
                raise ParseError(
                    member, final.line_no + piece.first_line - 1, final.line, final.reason
                ) from final
    parsed.warnings[:0] = clipped
    if not_utf8 is not None:
        parsed.warnings.append(not_utf8)
    damage.check_source(
        parsed, jumps=piece.first_line == 1 and piece.last
    )  # a whole member: else once joined
    if piece.last and (
        cut := damage.truncation_warning(piece.data, 1) or truncation.truncated_block(parsed, text)
    ):
        parsed.warnings.append(cut)
    drop_before = piece.first_line + piece.overlap_lines if piece.overlap_lines else 0
    return _shift_lines(parsed, piece.first_line - 1, drop_before)


def _as_pasted(
    module: ModuleType, piece: Piece, text: str, member: str, clock: ClockHints, options: dict[str, object]
) -> ParsedSource | None:
    """A small whole member the parser refused, read again as a capture pasted into a note: the
    prose and ``#`` lines around it blanked (``parsers.pasted.strip_note``), said in a warning; None
    when that changes nothing or still fails."""
    if piece.first_line != 1 or piece.overlap_lines or len(piece.data) > pasted.PASTED_MAX_BYTES:
        return None
    stripped, skipped = pasted.strip_note(text)
    if not skipped:
        return None
    try:
        parsed = module.parse(_Text(stripped), member=member, clock=clock, **options)
    except ParseError:
        return None
    parsed.warnings.insert(
        0,
        ParseWarning(
            skipped[0],
            "pasted-note",
            f"lines {pasted.ranges(skipped)} skipped: prose or # comments around a pasted capture",
        ),
    )
    return parsed


@dataclass(frozen=True, slots=True)
class Done:
    """A parsed piece (reduced when the work says so) and its new lines as compressed chunks."""

    source: ParsedSource
    text: tuple[TextChunk, ...] = ()


@dataclass(frozen=True, slots=True)
class Work:
    """What a runner does with a piece: parse it, then apply ``reduce`` (a callable, ``ParsedSource``
    -> ``ParsedSource``, handed in by whoever runs the ingest: this package does not know the
    analysis) and, with ``keep_text``, compress the lines the piece adds (not its overlap) into
    ``parsers.rawtext`` chunks. A ``Work`` given to parse processes travels to them by pickle, so its
    reducer must be picklable: a module-level function (pickled by its name) or an instance of a
    module-level class.

    A reducer may tell the parsers what it drops anyway, so that they need not build it: its
    ``parse_options`` attribute (format -> keyword arguments of that format's ``parse``, e.g.
    ``{"ps": {"states": ...}}``) is handed to the parser of each piece (``options``).

    ``memory_bytes``: the memory a parse process that runs this work may take (its data segment,
    ``RLIMIT_DATA``: heap and private mappings, set by the process when it reads the ``Work``,
    ``parsers.ingest.pool.limit_memory``); 0 for no limit. A piece that needs more fails its member
    alone (``pool.OutOfMemory``). Not applied where a piece is parsed in the caller's process."""

    reduce: Callable[[ParsedSource], ParsedSource] | None = None
    keep_text: bool = False
    memory_bytes: int = 0

    def options(self, fmt: str) -> dict[str, object]:
        """Keyword arguments for the parser of ``fmt``: the reducer's ``parse_options`` for it."""
        return dict(getattr(self.reduce, "parse_options", {}).get(fmt, {}))

    def __call__(self, fmt: str, piece: Piece, *, member: str, clock: ClockHints) -> Done:
        module = registry.by_format(fmt)
        source = self.reduced(parse_piece(module, piece, member=member, clock=clock, **self.options(fmt)))
        text: tuple[TextChunk, ...] = ()
        if self.keep_text:
            first = piece.first_line + piece.overlap_lines
            text = tuple(chunks_of(piece.data, first, skip=piece.overlap_bytes))
        return Done(source, text)

    def reduced(self, source: ParsedSource) -> ParsedSource:
        return self.reduce(source) if self.reduce is not None else source


#: Work that only parses.
PARSE_ONLY = Work()


class Runner(Protocol):
    """Runs ``Work`` on pieces: ``submit`` returns a future of its ``Done``, or of the
    ``ParseError`` of a piece that is not the format. ``processes``: pieces it parses at once
    besides this process (0: it parses in this process); ``started``: a piece went to it;
    ``running``: it takes a piece without starting anything (its processes are up, started ahead of
    the bundle or by a piece; always, for one that parses in this process)."""

    processes: int
    started: bool
    running: bool
    work: Work

    def submit(self, fmt: str, piece: Piece, *, member: str, clock: ClockHints) -> Future: ...


class LocalRunner:
    """Parses each piece in this process when it is submitted (the future is done on return)."""

    processes = 0
    started = True
    running = True

    def __init__(self, work: Work = PARSE_ONLY) -> None:
        self.work = work

    def submit(self, fmt: str, piece: Piece, *, member: str, clock: ClockHints) -> Future:
        future: Future = Future()
        try:
            future.set_result(self.work(fmt, piece, member=member, clock=clock))
        except Exception as exc:  # noqa: BLE001 - handed to whoever takes the result, as a pool does
            future.set_exception(exc)
        return future


#: Pieces of a member joined into one part as soon as this many are kept apart (``_Member``): a day
#: of processlist comes back as about 500 reduced pieces, whose frames held apart take half again
#: the memory of the same rows joined (each piece's frame and column objects, its categories).
JOIN_EVERY_PIECES = 32


@dataclass(slots=True)
class _Member:
    """A member whose pieces are in flight; ``done`` gets its joined source or the exception.

    ``kept``: what came back so far, every ``JOIN_EVERY_PIECES`` pieces joined into one part
    (``join``: the same rows, warnings and meta as when all are joined at the end)."""

    name: str
    done: Callable[[ParsedSource | Exception], None]
    kept: list[ParsedSource] = field(default_factory=list)
    error: Exception | None = None
    stopped: bool = False  # a piece failed: later pieces are not read
    aborted: bool = False  # the archive broke inside the member: nothing is reported
    pieces: int = 0  # pieces kept, joined or not
    joined: int = 0  # the leading parts of ``kept`` that are joins of pieces
    main: str | None = None  # the name of the first kept piece's first frame
    in_time: bool = True  # the ``main`` frame of every kept piece is in time order

    def take(self, future: Future, keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None) -> None:
        try:
            done: Done = future.result()
        except ParseError as exc:
            if not self.stopped:
                if self.kept:  # what was read before stays; the cut is named
                    self.kept[-1].warnings.append(
                        ParseWarning(
                            exc.line_no,
                            "cut",
                            f"the rest of the member was not read: line {exc.line_no}: {exc.reason}",
                        )
                    )
                else:
                    self.error = exc
            self.stopped = True
            return
        except Exception as exc:  # noqa: BLE001 - a parser bug or a dead process: the member is not used
            if not self.stopped:
                self.error, self.kept = exc, []
            self.stopped = True
            return
        if self.stopped:
            return
        if keep_text is not None and done.text:
            keep_text(self.name, done.text)
        self._keep(done.source)

    def _keep(self, source: ParsedSource) -> None:
        if not self.pieces:
            self.main = next(iter(source.frames), None)
        self.pieces += 1
        main = source.frames.get(self.main) if self.main is not None else None
        self.in_time = (
            self.in_time and main is not None and "ts" in main and main["ts"].is_monotonic_increasing
        )
        self.kept.append(source)
        if len(self.kept) - self.joined >= JOIN_EVERY_PIECES:
            self.kept[self.joined :] = [join(self.kept[self.joined :])]
            self.joined += 1

    def end(self) -> None:
        if self.aborted:
            return
        if self.error is not None:
            self.done(self.error)
        elif not self.kept:
            self.done(ParseError(self.name, 1, "", "no snapshot found"))
        elif self.pieces == 1:
            self.done(self.kept[0])
        else:  # repeated times across pieces (a long capture written twice) are seen once joined
            joined = join(self.kept)
            if self.in_time:  # a main frame in time order in each piece: one that goes back is damage
                damage.check_source(joined, values=False, only=self.main)
            self.done(joined)


def _in_flight(processes: int) -> int:
    """Pieces in flight for ``processes`` parse processes (0: none, each is parsed when submitted):
    two for each and one more, so that a process that is done finds a piece waiting while the
    worker still waits on an older, slower one (pieces are handed back in order)."""
    return 2 * processes + 1 if processes else 0


class Pipeline:
    """Members parsed piece by piece, pieces of consecutive members in flight together, results
    handed back in the order things were added.

    ``local`` parses a piece in this process; ``pool`` (optional) in parse processes, started for a
    member of two pieces or more, or a large one: a bundle of small members starts none. Once its
    processes run (started ahead, or by a piece), a member of one piece of ``WARM_PIECE_BYTES`` or
    more goes to them too. At most
    ``2 * pool.processes + 1`` pieces wait in flight. ``keep_text(member, chunks)`` receives the text
    chunks of each piece, in order. Use as a context manager; leaving it hands back everything.
    """

    def __init__(
        self,
        *,
        local: Runner,
        pool: Runner | None = None,
        keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None = None,
    ) -> None:
        self.local = local
        self.pool = pool
        self.keep_text = keep_text
        self.queue: deque[tuple[_Member, Future] | Callable[[], None]] = deque()
        self.in_flight = 0

    def pieces(
        self,
        module: ModuleType,
        pieces: Iterable[Piece],
        *,
        member: str,
        clock: ClockHints,
        done: Callable[[ParsedSource | Exception], None],
        large: bool = False,
    ) -> None:
        """Parse the ``pieces`` of ``member`` with ``module``; ``done`` gets the joined source, or the
        exception that made the member unreadable (a ``ParseError`` when its first piece is not the
        format; a later piece that is not keeps what was read before it, with a ``cut`` warning).
        ``large``: worth starting the parse processes for, even as one piece."""
        job = _Member(member, done)
        it = iter(pieces)
        try:
            pool = self.pool
            read = list(itertools.islice(it, 1))
            if pool is not None and pool.started:
                runner: Runner = pool  # pieces go there already: the first is sent before the second is read
            else:
                read += itertools.islice(it, 1)  # a second piece: worth the parse processes
                worth = large or len(read) > 1
                if pool is not None and read and not worth:
                    worth = pool.running and len(read[0].data) >= WARM_PIECE_BYTES
                runner = pool if pool is not None and worth else self.local
            for piece in itertools.chain(read, it):
                if job.stopped:
                    break  # the member is cut: the rest is not parsed (the archive reads past it)
                self.queue.append((job, runner.submit(module.FORMAT, piece, member=member, clock=clock)))
                self.in_flight += 1
                self._drain(_in_flight(runner.processes))
        except BaseException:
            job.aborted = True  # the archive broke inside the member: the caller reports it
            self.queue.append(job.end)
            raise
        self.queue.append(job.end)
        self._drain(self._limit())

    def later(self, step: Callable[[], None]) -> None:
        """Run ``step`` once everything added before it is handed back."""
        self.queue.append(step)
        self._drain(self._limit())

    def _limit(self) -> int:
        return _in_flight(self.pool.processes) if self.pool is not None and self.pool.started else 0

    def _drain(self, limit: int) -> None:
        """Hand back from the front of the queue until at most ``limit`` pieces are in flight."""
        while self.queue:
            front = self.queue[0]
            if isinstance(front, tuple):
                if self.in_flight <= limit:
                    return
                self.queue.popleft()
                self.in_flight -= 1
                job, future = front
                job.take(future, self.keep_text)
            else:
                self.queue.popleft()
                front()

    def close(self) -> None:
        """Hand back everything still in flight."""
        self._drain(0)

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            for item in self.queue:
                if isinstance(item, tuple):
                    item[1].cancel()
            self.queue.clear()
