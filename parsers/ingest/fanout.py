"""One bundle's parse spread over many workers: plan it, parse its parts anywhere, assemble the result.

``read_bundle`` does everything in one process (and its parse processes, on the same host). A
fan-out splits the same work in three, so that the parts can run on any worker of any host that
shares the storage and the database:

1. ``plan_bundle`` walks the archive once, as ``read_bundle`` does (same detection, same pieces),
   but hands every piece to ``put`` (which stores its bytes where every worker can read them) and
   groups consecutive pieces of one member into ``Part`` s of about ``PART_BYTES``. It returns a
   ``Plan``: the parts, and every step ``read_bundle`` would take in member order, as data.
2. ``parse_part`` runs the ``Work`` (parse, the reducer handed in, compressed text) on the pieces of
   one part, wherever it runs: the outcome of each piece (its ``Done``, or the exception).
3. ``assemble`` replays the plan's steps on a fresh reader with the parts' outcomes, then finishes
   the bundle (UTC offset, anchoring, checks) exactly as ``read_bundle`` does: the same ``Bundle``.

Plain Python and pandas, no Django: where parts are stored, how tasks are sent and how outcomes come
back is the caller's business (``web/ingest/fanout.py`` does it with Celery and Django's storage). Plans
and outcomes are pickled by the caller; both are made by this code, never from an upload's bytes
other than as ``bytes`` values inside them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from parsers.base import ClockHints, ParsedSource, ParseError
from parsers.ingest.archive import DEFAULT_LIMITS, Limits
from parsers.ingest.bundle import Bundle, _Reader, walk_into
from parsers.ingest.cutting import Piece
from parsers.ingest.malloc import steady_heap
from parsers.ingest.pieces import Done, Work, _Member
from parsers.rawtext import TextChunk

#: Bytes of text per part (a task of its own): several pieces, so that a one-hour bundle makes a few
#: dozen tasks rather than hundreds, and a long member is still shared between workers.
PART_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class PieceRef:
    """A stored piece: ``key`` (what ``put`` returned) and where it sits in its member."""

    key: str
    first_line: int
    overlap_lines: int
    overlap_bytes: int
    size: int


@dataclass(frozen=True, slots=True)
class Part:
    """Consecutive pieces of one member, parsed together by one task (``index``: its place in the plan)."""

    index: int
    member: str
    fmt: str
    clock: ClockHints
    pieces: tuple[PieceRef, ...]

    @property
    def size(self) -> int:
        return sum(p.size for p in self.pieces)


@dataclass(slots=True)
class Plan:
    """A bundle's parse as parts to run anywhere and the steps that put their outcomes together.

    ``steps``: in member order, ``(method, args)`` of ``_Reader`` to replay, or ``("parts", (member,
    format, placement, part indexes))`` for a member parsed in parts. ``observed``: what the walk saw
    of the bundle as a whole (UTC offsets of the TS markers, the collector's manifest, layouts);
    ``warnings``, ``stopped`` and ``members_seen`` as the walk left them.
    """

    parts: list[Part] = field(default_factory=list)
    steps: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    observed: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    members_seen: int = 0
    stopped: list[str] = field(default_factory=list)


class _Recorder:
    """Stands in for ``pieces.Pipeline`` while planning: stores pieces and records the steps."""

    def __init__(self, put: Callable[[bytes], str], part_bytes: int) -> None:
        self.put = put
        self.part_bytes = part_bytes
        self.parts: list[Part] = []
        self.steps: list[tuple[str, tuple[Any, ...]]] = []

    def pieces(
        self,
        module: ModuleType,
        pieces: Iterable[Piece],
        *,
        member: str,
        clock: ClockHints,
        done: functools.partial,
        large: bool = False,
    ) -> None:
        _, fmt, where = done.args  # _Reader.parsed(member, format, placement)
        indexes: list[int] = []
        batch: list[PieceRef] = []
        for piece in pieces:  # a broken archive raises here: the member gets no step (as in a pipeline)
            batch.append(
                PieceRef(
                    self.put(piece.data),
                    piece.first_line,
                    piece.overlap_lines,
                    piece.overlap_bytes,
                    len(piece.data),
                )
            )
            if sum(p.size for p in batch) >= self.part_bytes:
                indexes.append(self._part(member, module.FORMAT, clock, batch))
                batch = []
        if batch:
            indexes.append(self._part(member, module.FORMAT, clock, batch))
        self.steps.append(("parts", (member, fmt, where, tuple(indexes))))

    def _part(self, member: str, fmt: str, clock: ClockHints, batch: list[PieceRef]) -> int:
        self.parts.append(Part(len(self.parts), member, fmt, clock, tuple(batch)))
        return len(self.parts) - 1

    def later(self, step: functools.partial) -> None:
        args = tuple(
            RuntimeError(f"{type(a).__name__}: {a}")
            if isinstance(a, Exception) and not isinstance(a, ParseError)
            else a
            for a in step.args
        )
        self.steps.append((step.func.__name__, args))


def plan_bundle(
    path: Path | str,
    *,
    put: Callable[[bytes], str],
    display_name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    progress: Callable[[str], None] | None = None,
    reduce: Callable[[ParsedSource], ParsedSource] | None = None,
    keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None = None,
    part_bytes: int | None = None,
    more: Sequence[tuple[Path | str, str]] = (),
) -> Plan:
    """Walk the bundle at ``path`` (then the bundles ``more``, ``(path, file name)`` each, as
    ``read_bundle`` reads a case's added bundles) once and plan its parse (see the module docstring).

    ``put(data)`` stores one piece's bytes (UTF-8, ``\\n`` line ends) and returns a key that
    ``parse_part``'s ``get`` reads back. Members that are neither cut at markers nor small enough to
    be one piece (``cutting.WHOLE_MAX_BYTES``) are parsed here as a stream, with ``reduce`` and
    ``keep_text`` as in ``read_bundle``. Raises ``BundleError`` as ``read_bundle`` does.
    """
    steady_heap()
    bundle = Bundle()
    recorder = _Recorder(put, part_bytes or PART_BYTES)
    reader = _Reader(bundle, recorder, Work(reduce=reduce), keep_text)  # type: ignore[arg-type]
    walk_into(reader, path, limits=limits, display_name=display_name, progress=progress)
    for more_path, more_name in more:
        prefix = reader.next_bundle(more_name)
        walk_into(reader, more_path, limits=limits, display_name=more_name, progress=progress, prefix=prefix)
    return Plan(
        parts=recorder.parts,
        steps=recorder.steps,
        observed=reader.observed(),
        warnings=list(bundle.warnings),
        members_seen=bundle.members_seen,
        stopped=list(bundle.stopped),
    )


def parse_part(
    part: Part,
    *,
    get: Callable[[str], bytes],
    work: Work,
    keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None = None,
) -> list[Done | Exception]:
    """Run ``work`` on each piece of ``part`` (bytes read back by ``get``), one after the other, in
    this process. Returns each piece's ``Done`` (its text handed to ``keep_text`` instead of kept in
    it) or the exception that piece raised; after a piece that is not the format the rest are not
    parsed (``assemble`` ignores them, as a pipeline does)."""
    out: list[Done | Exception] = []
    for ref in part.pieces:
        piece = Piece(get(ref.key), ref.first_line, ref.overlap_lines, ref.overlap_bytes)
        try:
            done = work(part.fmt, piece, member=part.member, clock=part.clock)
        except ParseError as exc:
            out.append(exc)
            break
        except Exception as exc:  # noqa: BLE001 - the member's reason, as a parse process reports it
            out.append(RuntimeError(f"{type(exc).__name__}: {exc}"))
            break
        if keep_text is not None and done.text:
            keep_text(part.member, done.text)
        out.append(Done(done.source))
    return out


def assemble(plan: Plan, outcomes: dict[int, list[Done | Exception]]) -> Bundle:
    """The bundle ``read_bundle`` would have read, from ``plan`` and the outcome of each of its parts
    (``outcomes[part.index]``, as ``parse_part`` returns it). A part with no outcome makes its
    member not used, with the reason."""
    steady_heap()
    bundle = Bundle(warnings=list(plan.warnings), members_seen=plan.members_seen, stopped=list(plan.stopped))
    reader = _Reader(bundle, _Immediately(), Work())  # type: ignore[arg-type]
    reader.restore(plan.observed)
    for method, args in plan.steps:
        if method != "parts":
            getattr(reader, method)(*args)
            continue
        member, fmt, where, indexes = args
        job = _Member(member, functools.partial(reader.parsed, member, fmt, where))
        for index in indexes:
            got = outcomes.get(index)
            if got is None:
                got = [RuntimeError(f"part {index} of the bundle's parse gave no outcome")]
            for outcome in got:
                future: Future = Future()
                if isinstance(outcome, Exception):
                    future.set_exception(outcome)
                else:
                    future.set_result(outcome)
                job.take(future, None)
        job.end()
    reader.finish()
    return bundle


class _Immediately:
    """A pipeline with nothing in flight: every later step runs at once."""

    def later(self, step: Callable[[], None]) -> None:
        step()
