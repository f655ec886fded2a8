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

import functools
import io
import itertools
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import pandas as pd

from parsers import registry
from parsers.archive import DEFAULT_LIMITS, BundleError, LimitExceeded, Limits, Member, Refused, walk
from parsers.base import Clock, ClockHints, ParsedSource, ParseError, parse_marker, parse_ts_line
from parsers.layout import offset_from_z, place, read_manifest
from parsers.pieces import SNAPSHOT_FORMATS, PieceRunner, parse_in_pieces

log = logging.getLogger(__name__)

#: Lines read from /proc/stat (pt-stalk -procstat) to count `cpuN` rows: 1 TS + 1 total + N CPUs.
PROCSTAT_HEAD_LINES = 1100
#: Host names shown in pages come from uploads: keep the characters a host name may have.
HOST_CHARS = re.compile(r"[^A-Za-z0-9._:-]")
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
class Bundle:
    """Everything read from one bundle. Times in ``sources`` are UTC."""

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

    def by_format(self, name: str) -> list[ParsedSource]:
        return [s for s in self.sources if s.format == name]

    @property
    def window(self) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        spans = [(s.start, s.end) for s in self.sources if s.samples]
        if not spans:
            return None
        return min(a for a, _ in spans), max(b for _, b in spans)


def clean_host(value: str | None) -> str | None:
    """A host name reduced to safe characters (at most 255), or None when nothing is left."""
    if not value:
        return None
    cleaned = HOST_CHARS.sub("", value.strip())[:255]
    return cleaned or None


def read_bundle(
    path: Path | str,
    *,
    display_name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    progress: Callable[[str], None] | None = None,
    on_source: Callable[[ParsedSource], ParsedSource] | None = None,
    on_text: Callable[[str, str], None] | None = None,
    runner: PieceRunner | None = None,
) -> Bundle:
    """Parse every member of the bundle at ``path``.

    ``on_source`` sees each source as soon as its member is parsed (a large snapshot capture piece
    by piece, see parsers/pieces.py; times not yet shifted to UTC when ``ts_is_local``) and returns
    the source to keep: the ingest writes the per-sample detail
    there and keeps a reduced copy, so a large bundle is never held whole.

    ``on_text(member, text)`` sees, in order and block by block, the text of every member handed to
    a parser, exactly as the parser reads it (UTF-8 with replacement, universal newlines), so its
    ``line_no`` values count lines of that text: the ingest keeps it to show raw lines and to read a
    snapshot's sessions and threads back.

    ``runner`` (a ``parsers.pool.PiecePool``) parses the pieces of large snapshot captures in
    parallel; ``on_source`` then sees pieces the runner's reducer already reduced.

    Raises ``parsers.archive.BundleError`` only when the container itself is unreadable before any
    member was read; limits passed midway become a warning and the members read so far are kept.
    """
    bundle = Bundle()
    reader = _Reader(bundle, on_source, on_text, runner)
    try:
        for entry in walk(Path(path), limits=limits, display_name=display_name):
            bundle.members_seen += 1
            if isinstance(entry, Refused):
                bundle.not_used.append(NotUsed(entry.name, entry.reason))
                continue
            if progress:
                progress(entry.name)
            reader.read(entry)
    except LimitExceeded as exc:
        bundle.warnings.append(str(exc))
    except BundleError as exc:
        if not bundle.members_seen:
            raise
        bundle.warnings.append(f"{exc}; the members before it were read")
    reader.finish()
    return bundle


class _Tee:
    """A text stream read by ``read(n)`` or line by line, whose text is also handed to ``sink`` (in
    blocks of about ``TEE_CHARS`` characters when read line by line)."""

    TEE_CHARS = 1 << 20

    def __init__(self, text: TextIO, sink: Callable[[str], None]) -> None:
        self.text = text
        self.sink = sink

    def read(self, n: int = -1) -> str:
        block = self.text.read(n)
        if block:
            self.sink(block)
        return block

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


class _Reader:
    def __init__(
        self,
        bundle: Bundle,
        on_source: Callable[[ParsedSource], ParsedSource] | None = None,
        on_text: Callable[[str, str], None] | None = None,
        runner: PieceRunner | None = None,
    ) -> None:
        self.b = bundle
        self.on_source = on_source
        self.on_text = on_text
        self.runner = runner
        self.offsets: Counter[int] = Counter()
        self.manifest: dict[str, str] = {}
        self.hosts: list[str] = []
        # CPU counts by how much they are worth: /proc/stat and /proc/interrupts list the CPUs of
        # this server; a sysstat banner may come from a file taken elsewhere (NCPU_ORIGINS order).
        self.ncpus: dict[str, list[int]] = {}
        self.layouts: Counter[str] = Counter()

    def read(self, member: Member) -> None:
        try:
            self._read(member)
        except BundleError as exc:  # the archive broke or hit a limit inside this member: stop the walk
            self.b.not_used.append(NotUsed(member.name, str(exc)))
            raise

    def _read(self, member: Member) -> None:
        where = place(member.name)
        self.layouts[where.layout] += 1
        text = io.TextIOWrapper(member.open(), encoding="utf-8", errors="replace", newline=None)
        head_raw = list(itertools.islice(text, registry.HEAD_LINES))
        head = [line.rstrip("\r\n") for line in head_raw]
        if not any(line.strip() for line in head):
            self.b.not_used.append(NotUsed(member.name, "empty"))
            return
        for line in head:
            marker = parse_ts_line(line) if line.startswith("TS") else None
            if marker is not None and marker.utc_offset_s is not None:
                self.offsets[marker.utc_offset_s] += 1
        if where.layout == "collector":
            self.manifest = read_manifest("".join(head_raw) + "".join(itertools.islice(text, 500)))
            self._context(member.name, "manifest", {"manifest": dict(self.manifest)})
            return
        if where.suffix == "hostname":
            host = clean_host(head[0])
            if host:
                self.hosts.append(host)
            self._context(member.name, "hostname", {"host": host})
            return
        if where.suffix == "procstat":
            lines = head + [ln.rstrip("\n") for ln in itertools.islice(text, PROCSTAT_HEAD_LINES)]
            cpus = {ln.split()[0] for ln in lines if re.match(r"^cpu\d+\s", ln)}
            if cpus:
                self.ncpus.setdefault("procstat", []).append(len(cpus))
                self._context(member.name, "procstat", {"ncpu": len(cpus)})
                return
        module = registry.detect(head)
        if module is None:
            first = next((ln for ln in head if ln.strip()), "")[:80]
            self.b.not_used.append(NotUsed(member.name, f"format not recognised (first line: {first!r})"))
            return
        hints = ClockHints(start_local=where.start_local, interval_s=where.interval_s)
        in_pieces = module.FORMAT in SNAPSHOT_FORMATS and any(parse_marker(line) for line in head)
        rest: Iterable[str] = text
        if self.on_text is not None:
            self.on_text(member.name, "".join(head_raw))
            rest = _Tee(text, functools.partial(self.on_text, member.name))
        try:
            if in_pieces:
                source = parse_in_pieces(
                    module,
                    head_raw,
                    rest,
                    member=member.name,
                    clock=hints,
                    on_piece=self.on_source,
                    runner=self.runner,
                )
            else:
                source = module.parse(itertools.chain(head_raw, rest), member=member.name, clock=hints)
        except ParseError as exc:
            self.b.not_used.append(NotUsed(member.name, f"{module.FORMAT}: {exc}"))
            return
        except BundleError:
            raise
        except Exception as exc:  # noqa: BLE001 - a parser bug must not sink the bundle; it is reported
            log.exception("parser %s failed on %s", module.FORMAT, member.name)
            self.b.not_used.append(
                NotUsed(member.name, f"{module.FORMAT} parser failed: {type(exc).__name__}: {exc}")
            )
            return
        if where.suffix == "vmstat-overall" and "vmstat" in source.frames:
            # `vmstat $RUN_TIME 2`: one average over the whole run, not a point of the 1 s series.
            source.frames = {"vmstat_overall": source.frames["vmstat"]}
            source.meta["variant"] = f"{source.meta.get('variant', 'vmstat')} (pt-stalk run average)"
        if self.on_source is not None and not in_pieces:
            source = self.on_source(source)
        self.b.sources.append(source)
        meta = source.meta
        if meta.get("host"):
            self.hosts.append(str(meta["host"]))
        if meta.get("ncpu"):
            kind = "interrupts" if source.format == "interrupts" else "banner"
            self.ncpus.setdefault(kind, []).append(int(meta["ncpu"]))  # type: ignore[arg-type]
        if meta.get("kernel") and not self.b.kernel:
            self.b.kernel = str(meta["kernel"])[:100]
        variables = meta.get("variables")
        if isinstance(variables, dict) and variables.get("hostname"):
            self.hosts.append(str(variables["hostname"]))

    def _context(self, member: str, fmt: str, meta: dict[str, object]) -> None:
        frame = pd.DataFrame(
            {"ts": pd.Series([], dtype="datetime64[ns, UTC]"), "line_no": pd.Series([], dtype="int64")}
        )
        self.b.sources.append(
            ParsedSource(format=fmt, member=member, frames={fmt: frame}, clock=Clock.INFERRED, meta=meta)
        )

    def finish(self) -> None:
        b = self.b
        m = self.manifest
        b.layout = "collector" if m else (self.layouts.most_common(1)[0][0] if self.layouts else "loose")
        b.host = clean_host(m.get("hostname")) or (clean_host(self.hosts[0]) if self.hosts else None)
        if m.get("nproc", "").isdigit():
            b.ncpu = int(m["nproc"])
        else:
            for kind in NCPU_ORIGINS:
                if self.ncpus.get(kind):
                    b.ncpu = Counter(self.ncpus[kind]).most_common(1)[0][0]
                    break
        b.kernel = (m.get("kernel") or b.kernel or None) and (m.get("kernel") or b.kernel)[:100]
        if m.get("utc_offset") and offset_from_z(m["utc_offset"]) is not None:
            b.utc_offset_s, b.utc_offset_origin = offset_from_z(m["utc_offset"]), "manifest (date +%z)"
        elif self.offsets:
            b.utc_offset_s, b.utc_offset_origin = (
                self.offsets.most_common(1)[0][0],
                "TS markers (epoch vs wall clock)",
            )
        local = [s for s in b.sources if s.ts_is_local]
        if local:
            if b.utc_offset_s is None:
                b.warnings.append(
                    "The server's UTC offset is unknown (no TS marker with a wall-clock time, no manifest): "
                    "times read in local time ("
                    + ", ".join(s.member for s in local[:5])
                    + ") are shown as if UTC."
                )
            for source in local:
                self._shift(source, b.utc_offset_s or 0)
        self._anchor_timeless()
        self._check_overlap()
        self._check_hosts()

    def _shift(self, source: ParsedSource, seconds: float) -> None:
        source.shift(seconds)
        if seconds:
            self.b.shifted[source.member] = self.b.shifted.get(source.member, 0.0) + seconds

    def _anchor_timeless(self) -> None:
        """A capture with no time of its own (a bare `vmstat 1`, parsed from the Unix epoch with a
        ``no-start-time`` warning) is placed at the start of the other sources' window: captures sent
        together were taken together, and 1970 on the shared axis would hide every other source."""
        timeless = [
            s for s in self.b.sources if s.samples and any(w.code == "no-start-time" for w in s.warnings)
        ]
        timed = [s for s in self.b.sources if s.samples and s not in timeless]
        if not timeless or not timed:
            return
        anchor = min(s.start for s in timed)
        for source in timeless:
            self._shift(source, (source.start - anchor).total_seconds())
            self.b.warnings.append(
                f"{source.member} ({source.format}) has no time of its own: it is placed at the start of the "
                f"other captures ({anchor:%Y-%m-%d %H:%M:%S} UTC), as if taken with them"
            )

    def _check_hosts(self) -> None:
        """A capture whose own header names another host was probably taken on another server."""
        host = (self.b.host or "").lower()
        for s in self.b.sources:
            named = clean_host(str(s.meta.get("host") or ""))
            if host and named and named.lower().split(".")[0] != host.split(".")[0]:
                self.b.warnings.append(
                    f"{s.member} ({s.format}) names host {named} in its header, but the bundle is from {self.b.host}: "
                    "it may have been captured on another server"
                )

    def _check_overlap(self) -> None:
        timed = [s for s in self.b.sources if s.samples]
        if len(timed) < 2:
            return
        for s in timed:
            others = [o for o in timed if o is not s]
            if not any(s.start <= o.end + OVERLAP_SLACK and o.start <= s.end + OVERLAP_SLACK for o in others):
                self.b.warnings.append(
                    f"{s.member} ({s.format}, {s.start:%Y-%m-%d %H:%M:%S} to {s.end:%H:%M:%S} UTC) does not "
                    "overlap any other source: check its clock"
                )
