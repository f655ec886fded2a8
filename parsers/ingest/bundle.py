"""Read a whole bundle: walk it safely, detect each member by content, parse it, put it on UTC.

``read_bundle(path)`` is the single entry point the ingest task uses (and the one to use in scripts).
A member that cannot be parsed is listed under ``not_used`` with its reason (the parse error names
its line); it never sinks the rest of the bundle.

Time (DESIGN.md, "Time: the hard part"): sources with absolute time (TS epochs, ISO times with an
offset) are already UTC. Sources read in the server's wall clock (``ParsedSource.ts_is_local``:
sysstat time of day, pt-stalk prefixes, OSWatcher ``zzz`` lines) are shifted by the server's UTC
offset, taken from the collector manifest (``date +%z``) or else from the ``TS`` markers of the same
bundle (epoch versus wall clock). When neither exists they are kept as if UTC, with a warning.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import itertools
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import BinaryIO, TextIO

import pandas as pd

from parsers import damage, mysqlsh_layout, pasted, registry
from parsers.base import (
    Clock,
    ClockHints,
    ParsedSource,
    ParseError,
    parse_ts_line,
)
from parsers.ingest import cutting, hosts, pieces
from parsers.ingest.archive import (
    DEFAULT_LIMITS,
    BundleError,
    LimitExceeded,
    Limits,
    Member,
    Refused,
    safe_name,
    walk,
)
from parsers.ingest.cutting import split, whole
from parsers.ingest.hosts import clean_host
from parsers.ingest.malloc import resident_bytes, steady_heap
from parsers.ingest.pieces import LocalRunner, Pipeline, Work
from parsers.ingest.pool import PoolError, warmed
from parsers.layout import Placement, error_log_dirs, offset_from_z, place, read_manifest
from parsers.rawtext import TextChunk, TextChunker

log = logging.getLogger(__name__)

#: Bytes read at a time for a member's first lines (format detection, markers).
HEAD_BYTES = 64 << 10
#: At most this much is read for the first lines of a member whose lines are very long.
HEAD_MAX_BYTES = 1 << 20
#: Lines read from /proc/stat (pt-stalk -procstat) to count `cpuN` rows: 1 TS + 1 total + N CPUs.
PROCSTAT_HEAD_LINES = 1100
#: An upload at least this large (compressed) starts its parse processes at once (``PiecePool.warm``),
#: it surely holds a member cut in pieces, and the processes' start then overlaps the first reads.
WARM_BYTES = 4 << 20
#: Where a CPU count is read, most trusted first (the collector's manifest `nproc` comes before all).
NCPU_ORIGINS = ("procstat", "interrupts", "banner")
#: Two sources whose windows are further apart than this do not describe the same moment.
OVERLAP_SLACK = pd.Timedelta(seconds=5)


@dataclass(frozen=True, slots=True)
class NotUsed:
    """A member that gave no source, and why (format not recognised, parse error, refused)."""

    member: str
    reason: str


@dataclass(slots=True)
class BundleHost:
    """One server of a bundle (``parsers.ingest.hosts``): its name and how it was found, the members
    placed on it, and what a bundle of that host alone would say of it: its CPUs, kernel, layout and
    UTC offset (seconds east of UTC, with its origin)."""

    name: str
    name_origin: str = ""
    members: list[str] = field(default_factory=list)
    kernel: str | None = None
    ncpu: int | None = None
    layout: str = "loose"
    utc_offset_s: int | None = None
    utc_offset_origin: str | None = None

    def sources(self, bundle: Bundle) -> list[ParsedSource]:
        mine = set(self.members)
        return [s for s in bundle.sources if s.member in mine]


@dataclass(slots=True)
class Bundle:
    """Everything read from one bundle (or several bundles of one case, read as one). Times in
    ``sources`` are UTC. ``host``, ``kernel``, ``ncpu``, ``utc_offset_s`` and ``layout`` are the first
    host's; ``hosts`` holds every host (first first), ``host_of`` the host and reason of each member."""

    sources: list[ParsedSource] = field(default_factory=list)
    not_used: list[NotUsed] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    host: str | None = None
    kernel: str | None = None
    ncpu: int | None = None
    utc_offset_s: int | None = None
    utc_offset_origin: str | None = None
    layout: str = "loose"
    members_seen: int = 0
    #: seconds subtracted from each member's times after it was parsed (UTC offset, anchoring), for
    #: whoever stored rows of it before (the ingest writes per-sample detail while parsing)
    shifted: dict[str, float] = field(default_factory=dict)
    hosts: list[BundleHost] = field(default_factory=list)
    #: member -> (host name, why that host)
    host_of: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: why the walk of an upload stopped before its end (a limit passed, the archive broken after
    #: its first members), each also in ``warnings``
    stopped: list[str] = field(default_factory=list)

    def by_format(self, name: str) -> list[ParsedSource]:
        return [s for s in self.sources if s.format == name]

    @property
    def window(self) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        spans = [(s.start, s.end) for s in self.sources if s.samples]
        if not spans:
            return None
        return min(a for a, _ in spans), max(b for _, b in spans)


def read_bundle(
    path: Path | str,
    *,
    display_name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    progress: Callable[[str], None] | None = None,
    reduce: Callable[[ParsedSource], ParsedSource] | None = None,
    keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None = None,
    processes: int = 0,
    more: Sequence[tuple[Path | str, str]] = (),
    uploaded_at: pd.Timestamp | None = None,
    memory_bytes: int = 0,
) -> Bundle:
    """Parse every member of the bundle at ``path`` (and of the bundles ``more``, as one).

    Members are parsed piece by piece (parsers/ingest/pieces.py): snapshot captures are cut at their
    markers, other members up to ``WHOLE_MAX_BYTES`` are one piece, longer ones are read as a stream
    here. With ``processes`` > 0, pieces are parsed by that many parse processes (parsers/ingest/pool.py),
    started only for a member of several pieces or a large one, while this process reads on.

    ``reduce`` (a callable, ``ParsedSource`` -> ``ParsedSource``; picklable by reference when
    ``processes`` > 0, see ``pieces.Work``) is applied to each parsed piece where it was parsed (times
    not yet shifted to UTC when ``ts_is_local``); the bundle keeps only what it returns, so a large
    member is never held whole. The caller hands it in: the ingest passes the analysis's
    ``analyzer.timeline.timeline.reduce_piece``; None keeps every parsed frame whole.

    ``keep_text(member, chunks)`` receives, in order, the text of every member handed to a parser as
    compressed chunks of whole lines (``parsers.rawtext``), numbered as the parsers number them:
    the ingest keeps them to show raw lines and to read a snapshot's sessions and threads back.

    ``more``: further bundles of the same case, ``(path, file name)`` each, read after the first as
    one bundle: their members are named ``<file name>/<member>`` and their hosts merged with the
    first's by name (``parsers.ingest.hosts``). Each is held to ``limits`` on its own.

    ``memory_bytes``: the memory each parse process may take (``Work.memory_bytes``; 0: no limit).

    ``uploaded_at``: when the upload was received (UTC), the last evidence of the date of a capture
    whose rows have a time of day and no date (``ClockHints.day``; before it, the collector
    manifest's start and the member's time in the archive).

    Raises ``parsers.ingest.archive.BundleError`` only when the container itself is unreadable before any
    member was read; limits passed midway become a warning and the members read so far are kept.
    """
    if processes:
        steady_heap()  # this process keeps and joins what the parse processes send back
    bundle = Bundle()
    work = Work(reduce=reduce, keep_text=keep_text is not None, memory_bytes=memory_bytes)
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(warmed(processes, work=work)) if processes else None
        if pool is not None and Path(path).stat().st_size >= WARM_BYTES:
            pool.warm()  # a large upload: the parse processes start while the small members are read
        pipeline = stack.enter_context(Pipeline(local=LocalRunner(work), pool=pool, keep_text=keep_text))
        reader = _Reader(bundle, pipeline, work, keep_text)
        reader.uploaded_at = uploaded_at
        walk_into(reader, path, limits=limits, display_name=display_name, progress=progress)
        for more_path, more_name in more:
            prefix = reader.next_bundle(more_name)
            walk_into(
                reader, more_path, limits=limits, display_name=more_name, progress=progress, prefix=prefix
            )
    reader.finish()
    return bundle


def walk_into(
    reader: _Reader,
    path: Path | str,
    *,
    limits: Limits,
    display_name: str | None,
    progress: Callable[[str], None] | None,
    prefix: str = "",
) -> None:
    """Walk the bundle at ``path`` and hand each member to ``reader`` (``read_bundle``'s loop, also
    used to plan a fan-out): limits passed midway and a container that breaks after its first member
    become warnings of the reader's bundle. ``prefix`` is put before every member name (a case's
    added bundle)."""
    bundle = reader.b
    seen = bundle.members_seen
    try:
        for entry in walk(Path(path), limits=limits, display_name=display_name):
            bundle.members_seen += 1
            if prefix:
                entry = dataclasses.replace(entry, name=prefix + entry.name)
            if isinstance(entry, Refused):
                reader.not_used(entry.name, entry.reason)
                continue
            if progress:
                progress(entry.name)
            reader.read(entry)
    except LimitExceeded as exc:
        bundle.warnings.append(str(exc))
        bundle.stopped.append(str(exc))
    except BundleError as exc:
        if bundle.members_seen == seen:
            if prefix:  # an added bundle that cannot be read: the others still are
                bundle.warnings.append(f"{display_name}: {exc}; nothing was read from it")
                return
            raise
        bundle.warnings.append(f"{exc}; the members before it were read")
        bundle.stopped.append(str(exc))


class _Tee:
    """A text stream read line by line, whose text is also handed to ``sink`` in blocks of about
    ``TEE_CHARS`` characters."""

    TEE_CHARS = 1 << 20

    def __init__(self, text: Iterable[str], sink: Callable[[str], None]) -> None:
        self.text = text
        self.sink = sink

    def __iter__(self) -> Iterator[str]:
        lines: list[str] = []
        size = 0
        for line in self.text:
            lines.append(line)
            size += len(line)
            if size >= self.TEE_CHARS:
                self.sink("".join(lines))
                lines, size = [], 0
            yield line
        if lines:
            self.sink("".join(lines))


class _Prefixed(io.RawIOBase):
    """``prefix`` (bytes already read) followed by the rest of ``raw``."""

    def __init__(self, prefix: bytes, raw: BinaryIO) -> None:
        self.prefix = memoryview(prefix)
        self.raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.prefix:
            n = min(len(buf), len(self.prefix))
            buf[:n] = self.prefix[:n]
            self.prefix = self.prefix[n:]
            return n
        data = self.raw.read(len(buf))
        buf[: len(data)] = data
        return len(data)


def _text(prefix: bytes, raw: BinaryIO) -> TextIO:
    """``prefix`` + ``raw`` as the parsers read text: UTF-8 with replacement, universal newlines."""
    return io.TextIOWrapper(
        io.BufferedReader(_Prefixed(prefix, raw), 1 << 20),
        encoding="utf-8",
        errors=pasted.ERRORS,
        newline=None,
    )


def head_of(raw: BinaryIO) -> tuple[bytes, list[str]]:
    """The first bytes of a member (at least ``registry.HEAD_LINES`` lines, or all of a short
    member, or ``HEAD_MAX_BYTES`` of one whose lines are that long) and its first lines as text
    (UTF-8 with replacement, universal newlines, without line ends): what detection looks at."""
    data = raw.read(HEAD_BYTES)
    while len(data) < HEAD_MAX_BYTES and data.count(b"\n") + data.count(b"\r") < registry.HEAD_LINES:
        more = raw.read(HEAD_BYTES)
        if not more:
            break
        data += more
    text = data.decode("utf-8", pasted.ERRORS).replace("\r\n", "\n").replace("\r", "\n")
    return data, text.split("\n")[: registry.HEAD_LINES]


def opened(member: Member) -> tuple[BinaryIO, bytes, list[str], str | None]:
    """``member`` opened to be read: its stream, first bytes and first lines (``head_of``), and, for
    a member starting with a UTF-16 byte-order mark, the stream transcoded to UTF-8 and the warning
    that says so (else None)."""
    raw = member.open()
    first, head = head_of(raw)
    if first[:2] in damage.UTF16_BOMS and (utf8 := damage.transcode_utf16(first + raw.read())):
        raw = io.BytesIO(utf8)
        first, head = head_of(raw)
        return raw, first, head, f"{member.name} is UTF-16 (it starts with a byte-order mark): read as such"
    return raw, first, head, None


def parse_stream(
    module: ModuleType, text: Iterable[str], *, member: str, clock: ClockHints, **options: object
) -> ParsedSource:
    """A member too long to hold (over ``cutting.WHOLE_MAX_BYTES``) parsed as a stream of ``text``
    blocks (``damage.segments``): its lines cut as a piece's are (``damage.LineCutter``), its times
    and values checked (``damage.check_source``). Raises what ``module.parse`` raises."""
    lines = damage.LineCutter(text, module.FORMAT)
    parsed = module.parse(lines, member=member, clock=clock, **options)
    parsed.warnings[:0] = lines.warnings
    damage.check_source(parsed)
    return parsed


def _held(first: bytes, raw: BinaryIO) -> bytes:
    """A member's ``first`` bytes and the rest of ``raw`` up to one byte over
    ``cutting.WHOLE_MAX_BYTES`` (longer: the member is read as a stream)."""
    most = cutting.WHOLE_MAX_BYTES
    return first + raw.read(most + 1 - len(first)) if len(first) <= most else first


def read_one(
    module: ModuleType, first: bytes, raw: BinaryIO, *, member: str, clock: ClockHints
) -> ParsedSource:
    """One member (its ``first`` bytes, then the rest of ``raw``) read by ``module`` as
    ``read_bundle`` reads it, in this process and unreduced: whole, with the damage checks and the
    second reading of a capture pasted into a note (``pieces.parse_piece``) when it is at most
    ``cutting.WHOLE_MAX_BYTES``, else as a stream (``parse_stream``). ``python -m parsers`` reads a
    file with it. Raises ``ParseError`` naming the member and the line."""
    data = _held(first, raw)
    if len(data) <= cutting.WHOLE_MAX_BYTES:
        return pieces.parse_piece(module, whole(data), member=member, clock=clock)
    return parse_stream(module, damage.segments(_text(data, raw)), member=member, clock=clock)


def clock_hints(
    member: Member,
    where: Placement,
    *,
    manifest: dict[str, str] | None = None,
    uploaded_at: pd.Timestamp | None = None,
) -> ClockHints:
    """The clock hints of ``member``: its layout's start and interval (``where``), and the bundle's
    best evidence of the date (``ClockHints.day``): the collector ``manifest``'s start (when it was
    read before the member), else the member's file time (in the archive, or the lone file's), else the
    upload's time (``uploaded_at``, UTC)."""
    day: pd.Timestamp | None = pd.to_datetime((manifest or {}).get("start_local"), errors="coerce")
    day_from = "the collector manifest's start"
    if pd.isna(day) and member.mtime:
        day, day_from = pd.Timestamp(member.mtime, unit="s"), "the member's file time"
    if pd.isna(day) and uploaded_at is not None:
        day, day_from = pd.Timestamp(uploaded_at), "the upload's time"
    if pd.isna(day):
        return ClockHints(start_local=where.start_local, interval_s=where.interval_s)
    day = day.tz_convert("UTC").tz_localize(None) if day.tzinfo is not None else day
    return ClockHints(
        start_local=where.start_local, interval_s=where.interval_s, day=day.normalize(), day_from=day_from
    )


class _Reader:
    """Reads members one by one for a bundle: detects each, hands its pieces to ``pipeline``, and
    collects what comes back in member order. Every step that must wait for the members before it is
    handed to ``pipeline.later`` as a ``functools.partial`` of one of this reader's methods with
    plain arguments, so that a fan-out can record the steps and replay them on another reader
    (``parsers.ingest.fanout``)."""

    def __init__(
        self,
        bundle: Bundle,
        pipeline: Pipeline,
        work: Work,
        keep_text: Callable[[str, tuple[TextChunk, ...]], None] | None = None,
    ) -> None:
        self.b = bundle
        self.pipeline = pipeline
        self.work = work
        self.keep_text = keep_text
        self.offsets: Counter[int] = Counter()
        self.manifest: dict[str, str] = {}
        self.layouts: Counter[str] = Counter()
        #: UTC offsets of the TS markers in each member's first lines (a host's own clock)
        self.member_offsets: dict[str, Counter[int]] = {}
        #: the member-name prefix and file name of each bundle read (the first: "" and its name)
        self.prefixes: list[str] = [""]
        self.names: list[str] = [""]
        #: when the upload was received (UTC), the last evidence of a capture's date (``_hints``)
        self.uploaded_at: pd.Timestamp | None = None

    def next_bundle(self, name: str) -> str:
        """Start reading a further bundle of the case, called ``name``: the prefix of its members."""
        base = safe_name(name) or f"bundle-{len(self.prefixes) + 1}"
        prefix = f"{base}/"
        if prefix in self.prefixes:
            prefix = f"bundle-{len(self.prefixes) + 1}-{prefix}"
        self.prefixes.append(prefix)
        self.names.append(name)
        return prefix

    def not_used(self, member: str, reason: str) -> None:
        """List ``member`` as not used, in member order (after what is still being parsed)."""
        self.pipeline.later(functools.partial(self.add_not_used, member, reason))

    def add_not_used(self, member: str, reason: str) -> None:
        self.b.not_used.append(NotUsed(member, reason))

    def add_warning(self, warning: str) -> None:
        self.b.warnings.append(warning)

    def add_source(self, source: ParsedSource) -> None:
        self.b.sources.append(source)

    def observed(self) -> dict[str, object]:
        """What this reader saw of the bundle as a whole while reading (not in member order)."""
        return {
            "offsets": self.offsets,
            "manifest": self.manifest,
            "layouts": self.layouts,
            "member_offsets": self.member_offsets,
            "prefixes": self.prefixes,
            "names": self.names,
        }

    def restore(self, observed: dict[str, object]) -> None:
        """Take over what another reader ``observed`` of the same bundle."""
        self.offsets = observed["offsets"]  # type: ignore[assignment]
        self.manifest = observed["manifest"]  # type: ignore[assignment]
        self.layouts = observed["layouts"]  # type: ignore[assignment]
        self.member_offsets = observed.get("member_offsets", {})  # type: ignore[assignment]
        self.prefixes = observed.get("prefixes", [""])  # type: ignore[assignment]
        self.names = observed.get("names", [""])  # type: ignore[assignment]

    def read(self, member: Member) -> None:
        try:
            self._read(member)
        except BundleError as exc:  # the archive broke or hit a limit inside this member: stop the walk
            self.not_used(member.name, str(exc))
            raise

    def _read(self, member: Member) -> None:
        where = place(member.name)
        self.layouts[where.layout] += 1
        raw, first, head, utf16 = opened(member)
        if utf16:
            self.pipeline.later(functools.partial(self.add_warning, utf16))
        if not any(line.strip() for line in head):
            self.not_used(member.name, "empty")
            return
        for line in head:
            marker = parse_ts_line(line) if line.startswith("TS") else None
            if marker is not None and marker.utc_offset_s is not None:
                self.offsets[marker.utc_offset_s] += 1
                self.member_offsets.setdefault(member.name, Counter())[marker.utc_offset_s] += 1
        if where.layout == "collector":
            self.manifest = read_manifest("".join(itertools.islice(_text(first, raw), 560)))
            self._context(member.name, "manifest", {"manifest": dict(self.manifest)})
            return
        if where.suffix == "hostname":
            host = clean_host(head[0])
            if host != (head[0].strip() or None) or sum(1 for line in head if line.strip()) > 1:
                self.pipeline.later(
                    functools.partial(
                        self.add_warning,
                        f"{member.name}: line 1 {damage.quote(head[0])} and no other should be a host "
                        f"name: {'kept as ' + host if host else 'not used'}",
                    )
                )
            self._context(member.name, "hostname", {"host": host})
            return
        if where.suffix == "procstat":
            lines = [ln.rstrip("\n") for ln in itertools.islice(_text(first, raw), PROCSTAT_HEAD_LINES)]
            cpus = {ln.split()[0] for ln in lines if re.match(r"^cpu\d+\s", ln)}
            if cpus:
                self._context(member.name, "procstat", {"ncpu": len(cpus)})
                return
        module = registry.detect(head)
        if module is None:
            first_line = next((ln for ln in head if ln.strip()), "")[:80]
            self.not_used(member.name, f"format not recognised (first line: {first_line!r})")
            return
        hints = self._hints(member, where)
        done = functools.partial(self.parsed, member.name, module.FORMAT, where)
        if cutting.in_snapshots(module.FORMAT, head):
            size = cutting.piece_bytes(resident_bytes(), member.size, module.FORMAT)
            cut = split(first, raw, piece_bytes=size)
            self.pipeline.pieces(module, cut, member=member.name, clock=hints, done=done)
            return
        data = _held(first, raw)
        if len(data) <= cutting.WHOLE_MAX_BYTES:
            large = len(data) >= cutting.PIECE_BYTES
            self.pipeline.pieces(
                module, [whole(data)], member=member.name, clock=hints, done=done, large=large
            )
            return
        if cutting.in_lines(module.FORMAT, head):  # rows that stand alone: cut at line ends, in pieces
            cut = cutting.split_lines(b"", _Prefixed(data, raw), header_lines=cutting.LINE_HEADER_LINES)
            self.pipeline.pieces(module, cut, member=member.name, clock=hints, done=done, large=True)
            return
        # too long to hold: read as a stream here, its text kept block by block
        text: Iterable[str] = damage.segments(_text(data, raw))  # a long line never read whole
        chunker = TextChunker()
        if self.keep_text is not None:
            keep = functools.partial(self.keep_text, member.name)
            text = _Tee(text, lambda block: keep(tuple(chunker.feed(block))))
        try:
            options = self.work.options(module.FORMAT)
            source: ParsedSource | Exception = self.work.reduced(
                parse_stream(module, text, member=member.name, clock=hints, **options)
            )
        except BundleError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported as the member's reason, like a piece's
            source = exc
        if self.keep_text is not None:
            self.keep_text(member.name, tuple(chunker.close()))
        self.pipeline.later(functools.partial(done, source))

    def _hints(self, member: Member, where: Placement) -> ClockHints:
        """The clock hints of ``member`` (``clock_hints``), with the manifest read so far."""
        return clock_hints(member, where, manifest=self.manifest, uploaded_at=self.uploaded_at)

    def parsed(self, member: str, fmt: str, where: Placement, source: ParsedSource | Exception) -> None:
        """A member's source (or the exception that made it unreadable), in member order."""
        if isinstance(source, ParseError):
            self.b.not_used.append(NotUsed(member, f"{fmt}: {source}"))
            return
        if isinstance(source, PoolError):  # the parse process ran out of memory, or died
            log.warning("parser %s on %s: %s", fmt, member, source)
            self.b.not_used.append(NotUsed(member, f"{fmt}: {source}"))
            return
        if isinstance(source, Exception):
            log.error("parser %s failed on %s", fmt, member, exc_info=source)
            self.b.not_used.append(NotUsed(member, f"{fmt} parser failed: {type(source).__name__}: {source}"))
            return
        if where.suffix == "vmstat-overall" and "vmstat" in source.frames:
            # `vmstat $RUN_TIME 2`: one average over the whole run, not a point of the 1 s series.
            source.frames = {"vmstat_overall": source.frames["vmstat"]}
            source.meta["variant"] = f"{source.meta.get('variant', 'vmstat')} (pt-stalk run average)"
        # its host, CPUs and kernel are read from every source at the end, host by host (``finish``)
        self.b.sources.append(source)

    def _context(self, member: str, fmt: str, meta: dict[str, object]) -> None:
        frame = pd.DataFrame(
            {"ts": pd.Series([], dtype="datetime64[ns, UTC]"), "line_no": pd.Series([], dtype="int64")}
        )
        source = ParsedSource(format=fmt, member=member, frames={fmt: frame}, clock=Clock.INFERRED, meta=meta)
        self.pipeline.later(functools.partial(self.add_source, source))

    def finish(self) -> None:
        """Place every member on its host (``parsers.ingest.hosts.assign``), then settle each host as a
        bundle of its own: its CPUs, kernel, layout and UTC offset, its local times shifted by its own
        offset, its timeless captures anchored, its overlaps and stray banners checked."""
        b = self.b
        for member, seconds in mysqlsh_layout.settle(b.sources).items():  # MySQL Shell: hosts, clocks, rates
            b.shifted[member] = b.shifted.get(member, 0.0) + seconds
        error_log_dirs(b.sources)  # several nodes' error logs, a directory each
        placed = hosts.assign(b.sources, prefixes=self.prefixes, names=self.names)
        b.host_of = placed.host_of
        several = len(placed.hosts) > 1
        for name, origin in placed.hosts:
            host = BundleHost(name=name, name_origin=origin, members=placed.members(name))
            self._settle(host, several)
            b.hosts.append(host)
        first = b.hosts[0] if b.hosts else BundleHost(name=hosts.UNKNOWN_HOST)
        if not b.hosts:  # nothing parsed: what the walk saw still describes the bundle
            self._settle(first, False)
        b.host = None if placed.placeholder or not b.hosts else first.name
        b.kernel, b.ncpu, b.layout = first.kernel, first.ncpu, first.layout
        b.utc_offset_s, b.utc_offset_origin = first.utc_offset_s, first.utc_offset_origin
        self._check_banners(placed)
        if placed.overflow:
            n, some = len(placed.overflow), ", ".join(placed.overflow[:3])
            b.warnings.append(
                f"More than {hosts.MAX_HOSTS} hosts are named in the bundle: {n} member(s) of further hosts "
                f"are read with their bundle's first host ({some} ...)"
            )

    def _settle(self, host: BundleHost, several: bool) -> None:
        b = self.b
        sources = host.sources(b)
        manifests = [s.meta["manifest"] for s in sources if s.format == "manifest"]
        m: dict[str, str] = manifests[0] if manifests else ({} if several else self.manifest)  # type: ignore[assignment]
        if m:
            host.layout = "collector"
        elif several:
            layouts = Counter(place(s.member).layout for s in sources)
            host.layout = layouts.most_common(1)[0][0] if layouts else "loose"
        else:
            host.layout = self.layouts.most_common(1)[0][0] if self.layouts else "loose"
        # CPU counts by how much they are worth: /proc/stat and /proc/interrupts list the CPUs of
        # this server; a sysstat banner may come from a file taken elsewhere (NCPU_ORIGINS order).
        ncpus: dict[str, list[int]] = {}
        for s in sources:
            if s.meta.get("ncpu"):
                kind = s.format if s.format in ("procstat", "interrupts") else "banner"
                ncpus.setdefault(kind, []).append(int(s.meta["ncpu"]))  # type: ignore[arg-type]
        if m.get("nproc", "").isdigit():
            host.ncpu = int(m["nproc"])
        else:
            for kind in NCPU_ORIGINS:
                if ncpus.get(kind):
                    host.ncpu = Counter(ncpus[kind]).most_common(1)[0][0]
                    break
        kernel = m.get("kernel") or next(
            (str(s.meta["kernel"]) for s in sources if s.meta.get("kernel")), None
        )
        host.kernel = kernel[:100] if kernel else None
        offsets = self.offsets
        if several:
            offsets = Counter()
            for member in host.members:
                offsets.update(self.member_offsets.get(member, Counter()))
        if m.get("utc_offset") and offset_from_z(m["utc_offset"]) is not None:
            host.utc_offset_s, host.utc_offset_origin = offset_from_z(m["utc_offset"]), "manifest (date +%z)"
        elif offsets:
            host.utc_offset_s, host.utc_offset_origin = (
                offsets.most_common(1)[0][0],
                "TS markers (epoch vs wall clock)",
            )
        who = f"{host.name}: the" if several else "The"
        local = [s for s in sources if s.ts_is_local]
        if local:
            if host.utc_offset_s is None:
                members = ", ".join(s.member for s in local[:5])
                b.warnings.append(
                    f"{who} server's UTC offset is unknown (no TS marker with a wall-clock time, no "
                    f"manifest): times read in local time ({members}) are shown as if UTC."
                )
            for source in local:
                self._shift(source, host.utc_offset_s or 0)
        self._anchor_timeless(sources)
        self._check_overlap(sources)

    def _shift(self, source: ParsedSource, seconds: float) -> None:
        source.shift(seconds)
        if seconds:
            self.b.shifted[source.member] = self.b.shifted.get(source.member, 0.0) + seconds

    def _anchor_timeless(self, sources: list[ParsedSource]) -> None:
        """A capture with no time of its own (a bare `vmstat 1`, parsed from the Unix epoch with a
        ``no-start-time`` warning) is placed at the start of the other sources' window: captures sent
        together were taken together, and 1970 on the shared axis would hide every other source."""
        timeless = [s for s in sources if s.samples and any(w.code == "no-start-time" for w in s.warnings)]
        timed = [s for s in sources if s.samples and s not in timeless]
        if not timeless or not timed:
            return
        anchor = min(s.start for s in timed)
        for source in timeless:
            self._shift(source, (source.start - anchor).total_seconds())
            self.b.warnings.append(
                f"{source.member} ({source.format}) has no time of its own: it is placed at the start of the "
                f"other captures ({anchor:%Y-%m-%d %H:%M:%S} UTC), as if taken with them"
            )

    def _check_banners(self, placed: hosts.Assignment) -> None:
        """A capture whose own header names another host than the one its collection places it on
        was probably taken on another server (a member placed on its own host is not warned of)."""
        several = len(placed.hosts) > 1
        for s, named, host in hosts.banner_mismatches(self.b.sources, placed):
            where = f"it is read with {host}'s captures" if several else f"the bundle is from {host}"
            self.b.warnings.append(
                f"{s.member} ({s.format}) names host {named} in its header, but {where}: "
                "it may have been captured on another server"
            )

    def _check_overlap(self, sources: list[ParsedSource]) -> None:
        timed = [s for s in sources if s.samples]
        if len(timed) < 2:
            return
        for s in timed:
            others = [o for o in timed if o is not s]
            if not any(s.start <= o.end + OVERLAP_SLACK and o.start <= s.end + OVERLAP_SLACK for o in others):
                self.b.warnings.append(
                    f"{s.member} ({s.format}, {s.start:%Y-%m-%d %H:%M:%S} to {s.end:%H:%M:%S} UTC) does not "
                    "overlap any other source: check its clock"
                )
