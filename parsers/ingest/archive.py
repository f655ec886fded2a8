"""Safe, streaming walk over an uploaded bundle: tar (plain, gzip, bzip2, xz, zstd), zip, or one file.

Every byte is treated as hostile. Members are read as streams, never extracted under names taken
from the archive; the names are only labels. Refused, with the reason kept for the case page:
absolute paths, ``..`` components, symbolic and hard links, device files and FIFOs, members past
``Limits.max_members``, and reading past ``Limits.max_total_bytes`` of uncompressed data or past
``Limits.max_ratio`` times the size of the upload (a decompression bomb). Sizes are counted as the
bytes are actually read, never taken from headers. A compressed single member (``x.dat.bz2``, a
gzip'd capture) is decompressed transparently, counted against the same limits.

In a tar every byte that comes out of the decompressor counts, whatever it is: headers, the members
read, and the members skipped unread (a member the ingest does not use is read through and thrown
away, not seeked past for free). tarfile is never let to hold an extension header (a GNU long name or
long link, a pax header) larger than ``Limits.max_header_bytes``, nor a chain of more than
``MAX_CHAINED_HEADERS`` of them: such a header is skipped unread, counted, and the member it
belongs to refused with the reason; a sparse file is refused without its map being read.

The container type is recognised by its magic bytes, never by the file name.
"""

from __future__ import annotations

import bz2
import datetime
import io
import lzma
import posixpath
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard
from isal import igzip, isal_zlib

GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP_MAGIC = b"PK\x05\x06"
#: ustar magic sits at offset 257 of the first 512-byte tar header block.
TAR_MAGIC_OFFSET = 257


#: What the decompressors and tarfile raise on truncated or corrupt input.
_CORRUPT = (
    EOFError,
    OSError,
    zlib.error,
    isal_zlib.error,
    lzma.LZMAError,
    zstandard.ZstdError,
    tarfile.TarError,
)


#: The largest tar extension header read (a GNU long name or long link, a pax header), in bytes:
#: tarfile holds one whole in memory before the member it describes. A path is at most 4 KiB on
#: Linux (PATH_MAX) and a pax header of real captures a few hundred bytes; a hostile header may
#: declare gigabytes in a few KB of zstd.
MAX_HEADER_BYTES = 64 << 10
#: Extension headers in a row before a member (a pax header, a long name, a long link: 3 at most
#: in what GNU tar, bsdtar and Python write); past it the member is refused. tarfile reads such a
#: chain recursively, holding every header of it.
MAX_CHAINED_HEADERS = 8


class BundleError(ValueError):
    """The upload as a whole cannot be read (not an archive we know, truncated, over the limits)."""


class LimitExceeded(BundleError):
    """Reading went past one of ``Limits``: the rest of the bundle is refused, what was read is kept."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what one bundle may make us read (defaults also set in web/settings.py).

    ``max_members``: entries looked at. ``max_total_bytes``: uncompressed bytes read in all.
    ``max_ratio``: uncompressed bytes read / upload size; text captures compress about 10-20x, so
    200x is far past any real bundle and typical of a zip or gzip bomb. ``max_header_bytes``: the
    largest tar extension header (GNU long name or link, pax) that is read (``MAX_HEADER_BYTES``).
    """

    max_members: int = 5000
    max_total_bytes: int = 16 * 1024**3
    max_ratio: int = 200
    max_header_bytes: int = MAX_HEADER_BYTES


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Member:
    """A regular file inside the bundle. ``open()`` gives a binary stream (usable once, in order).
    ``mtime``: its modification time as the archive records it (seconds since the epoch; a zip's,
    which has no zone, read as UTC; a lone file's, the file's), None when there is none."""

    name: str
    size: int | None
    open: Callable[[], BinaryIO]
    mtime: float | None = None


@dataclass(frozen=True, slots=True)
class Refused:
    """An entry that was not read, and why (shown on the case page under "not used")."""

    name: str
    reason: str


class _Budget:
    """Counts uncompressed bytes across the whole bundle and stops at the limits."""

    def __init__(self, limits: Limits, upload_size: int) -> None:
        self.limits = limits
        self.cap = min(limits.max_total_bytes, max(upload_size, 1) * limits.max_ratio)
        self.used = 0

    def charge(self, n: int, name: str) -> None:
        self.used += n
        if self.used > self.cap:
            which = "total size" if self.cap == self.limits.max_total_bytes else "compression ratio"
            raise LimitExceeded(
                f"{name}: uncompressed data passed {self.cap:,} bytes ({which} limit); the rest of the "
                "bundle is refused"
            )


#: Bytes a member's reader asks of the decompressed stream at a time (the caller's buffer is filled
#: by several reads): the decompressors' own bytes objects of this size come from the heap and are
#: reused, where larger ones would be fresh mappings in a worker that fixes the mmap threshold.
READ_BYTES = 512 << 10


class _CountingReader(io.RawIOBase):
    """A read-only stream that charges every byte it yields to the bundle's budget (None: the bytes
    were charged already, where they were decompressed; only errors are turned into ``BundleError``)."""

    def __init__(self, raw: BinaryIO, budget: _Budget | None, name: str) -> None:
        self._raw = raw
        self._budget = budget
        self._name = name

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray | memoryview) -> int:
        try:
            # straight into the caller's buffer, at most READ_BYTES at a time: the decompressors
            # make a bytes object of what they return, which stays below the mmap threshold
            n = self._raw.readinto(memoryview(buf)[:READ_BYTES])
        except _CORRUPT as exc:
            raise BundleError(f"{self._name}: archive is truncated or corrupt ({exc})") from exc
        if n and self._budget is not None:
            self._budget.charge(n, self._name)
        return n or 0


class _TarStream(io.RawIOBase):
    """The decompressed stream a tar is read from, every byte of it charged to the bundle's budget:
    headers, members read and members skipped. tarfile seeks only forward here; a seek is a read
    whose bytes are thrown away (a decompressor cannot skip without decompressing, and what it
    decompresses is what the limits are about). ``label`` names what is being read, for the message
    of a limit passed; ``chained`` counts the extension headers read in a row (``_BoundedTarInfo``)."""

    def __init__(self, raw: BinaryIO, budget: _Budget) -> None:
        self._raw = raw
        self._budget = budget
        self._pos = 0
        self.label = "the archive's first header"
        self.chained = 0

    @property
    def max_header_bytes(self) -> int:
        return self._budget.limits.max_header_bytes

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def _charge(self, n: int) -> None:
        self._pos += n
        self._budget.charge(n, self.label)

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all that is left when negative): short only at the end of the data."""
        parts: list[bytes] = []
        left = size
        while left:
            try:  # at most READ_BYTES at a time: the decompressors' bytes stay below the mmap threshold
                data = self._raw.read(READ_BYTES if left < 0 else min(left, READ_BYTES))
            except _CORRUPT as exc:
                raise BundleError(f"{self.label}: archive is truncated or corrupt ({exc})") from exc
            if not data:
                break
            self._charge(len(data))
            parts.append(data)
            left -= len(data) if left > 0 else 0
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readinto(self, buf: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self._pos + offset if whence == io.SEEK_CUR else -1
        if target < self._pos:
            raise OSError(f"a tar stream is read forward only (at {self._pos}, asked for {offset}, {whence})")
        while self._pos < target and self.read(min(target - self._pos, READ_BYTES)):
            pass  # read and dropped: counted like any other byte
        return self._pos


#: tarfile's extension header types, by what this module calls them in a reason.
_EXTENSION_HEADERS = {
    tarfile.GNUTYPE_LONGNAME: "GNU long-name",
    tarfile.GNUTYPE_LONGLINK: "GNU long-link",
    tarfile.XHDTYPE: "pax",
    tarfile.XGLTYPE: "pax global",
    tarfile.SOLARIS_XHDTYPE: "Solaris pax",
}


class _BoundedTarInfo(tarfile.TarInfo):
    """tarfile's header reader, bounded: an extension header over ``Limits.max_header_bytes`` (or past
    ``MAX_CHAINED_HEADERS`` in a row) is skipped without being held, and the member it belongs to
    comes back with ``refused`` set; so does a sparse file, whose map is not read. Only for a tar read
    from a ``_TarStream`` (its ``fileobj``). The hooks are tarfile's own (``_proc_member``: "can be
    overridden in a subclass", CPython's Lib/tarfile.py)."""

    __slots__ = ("refused",)

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        self.refused: str | None = None

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        stream: _TarStream = tarfile_.fileobj  # type: ignore[assignment]
        kind = _EXTENSION_HEADERS.get(self.type)
        if kind is None:
            stream.chained = 0
            if self.type == tarfile.GNUTYPE_SPARSE:
                return self._skip_sparse(tarfile_)
            return super()._proc_member(tarfile_)
        stream.chained += 1
        cap = stream.max_header_bytes
        if self.size > cap:
            return self._refuse_next(
                tarfile_,
                f"its {kind} header declares {self.size:,} bytes, over the {cap:,}-byte cap for a header",
            )
        if stream.chained > MAX_CHAINED_HEADERS:
            return self._refuse_next(tarfile_, f"more than {MAX_CHAINED_HEADERS} extension headers in a row")
        return super()._proc_member(tarfile_)

    def _refuse_next(self, tarfile_: tarfile.TarFile, reason: str) -> tarfile.TarInfo:
        """Skip this header's data and every extension header after it (read and dropped, counted),
        then read the member's own header: returned with ``refused`` = ``reason``."""
        stream: _TarStream = tarfile_.fileobj  # type: ignore[assignment]
        stream.label = f"the entry at byte {self.offset:,} of the archive ({reason})"
        header = self
        while header.type in _EXTENSION_HEADERS:
            stream.seek(stream.tell() + header._block(header.size))
            try:
                header = type(self).frombuf(
                    stream.read(tarfile.BLOCKSIZE), tarfile_.encoding, tarfile_.errors
                )
            except tarfile.HeaderError as exc:
                raise tarfile.SubsequentHeaderError(str(exc)) from None
            header.offset = stream.tell() - tarfile.BLOCKSIZE
        stream.chained = 0
        if header.type == tarfile.GNUTYPE_SPARSE:
            header = header._skip_sparse(tarfile_)
        else:
            header._proc_builtin(tarfile_)
        header.offset = self.offset
        header.refused = reason
        return header

    def _skip_sparse(self, tarfile_: tarfile.TarInfo) -> tarfile.TarInfo:
        """A GNU sparse file (type ``S``): its extension blocks read and dropped, never its map."""
        stream: _TarStream = tarfile_.fileobj  # type: ignore[attr-defined]
        extended = self._sparse_structs[1]
        while extended:
            block = stream.read(tarfile.BLOCKSIZE)
            extended = len(block) == tarfile.BLOCKSIZE and bool(block[504])
        self.offset_data = stream.tell()
        tarfile_.offset = self.offset_data + self._block(self.size)  # type: ignore[attr-defined]
        self.refused = "a sparse file (GNU tar --sparse): not a capture"
        return self

    def _proc_gnusparse_10(self, next: tarfile.TarInfo, pax_headers: dict, tarfile_: tarfile.TarFile) -> None:  # noqa: A002 - tarfile's name
        """A pax sparse file of format 1.0: refused, its map (at the start of its data) not read."""
        next.sparse = []
        next.refused = "a sparse file (GNU tar --sparse): not a capture"  # type: ignore[attr-defined]


def _decompressor(buffered: io.BufferedReader) -> BinaryIO | None:
    """The decompressor ``buffered``'s magic bytes call for, None when they call for none."""
    head = buffered.peek(8)[:8]
    if head.startswith(GZIP_MAGIC):
        # ISA-L's gzip reader: the same format as the gzip module, inflated about 3x faster
        return igzip.GzipFile(fileobj=buffered)  # type: ignore[return-value]
    if head.startswith(BZIP2_MAGIC):
        return bz2.BZ2File(buffered)  # type: ignore[return-value]
    if head.startswith(XZ_MAGIC):
        return lzma.LZMAFile(buffered)  # type: ignore[return-value]
    if head.startswith(ZSTD_MAGIC):
        return zstandard.ZstdDecompressor().stream_reader(buffered)  # type: ignore[return-value]
    return None


def _decompressing(raw: BinaryIO) -> BinaryIO:
    """Wrap ``raw`` in the decompressor its magic bytes call for (or return it buffered as is)."""
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw, 1 << 20)  # type: ignore[arg-type]
    return _decompressor(buffered) or buffered  # type: ignore[return-value]


def _counted(raw: BinaryIO, budget: _Budget, name: str, *, charged: bool = False) -> BinaryIO:
    """Decompress a member if it is itself compressed, charging the uncompressed bytes read
    (``charged``: ``raw``'s own bytes are charged already, as a tar's are by its ``_TarStream``; only
    what a decompressor makes of them is). An archive cut short inside the member's first bytes
    raises ``BundleError`` naming the member."""
    try:
        buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw, 1 << 20)  # type: ignore[arg-type]
        inner = _decompressor(buffered)
    except _CORRUPT as exc:
        raise BundleError(f"{name}: archive is truncated or corrupt ({exc})") from exc
    count = None if charged and inner is None else budget
    return io.BufferedReader(_CountingReader(inner or buffered, count, name), 1 << 20)  # type: ignore[return-value]


def safe_name(name: str) -> str | None:
    """The normalised member name, or None when it is absolute or climbs out with ``..``.

    >>> safe_name("./pt/2026_04_21_16_51_41-vmstat"), safe_name("../../etc/passwd"), safe_name("/etc/x")
    ('pt/2026_04_21_16_51_41-vmstat', None, None)
    """
    if not name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return None
    parts = name.replace("\\", "/").split("/")
    if any(p == ".." for p in parts):
        return None
    norm = posixpath.normpath("/".join(parts))
    return None if norm in (".", "") else norm


def _container_kind(path: Path) -> str:
    with path.open("rb") as fh:
        head = fh.read(TAR_MAGIC_OFFSET + 8)
    if head.startswith((ZIP_MAGIC, EMPTY_ZIP_MAGIC)):
        return "zip"
    if head[TAR_MAGIC_OFFSET : TAR_MAGIC_OFFSET + 5] == b"ustar":
        return "tar"
    if head.startswith((GZIP_MAGIC, BZIP2_MAGIC, XZ_MAGIC, ZSTD_MAGIC)):
        # A compressed tar or a single compressed capture: look inside.
        with path.open("rb") as fh:
            try:
                inner = _decompressing(fh).read(TAR_MAGIC_OFFSET + 8)
            except _CORRUPT as exc:
                raise BundleError(f"the compressed upload is truncated or corrupt ({exc})") from exc
        return "tar" if inner[TAR_MAGIC_OFFSET : TAR_MAGIC_OFFSET + 5] == b"ustar" else "file"
    return "file"


def walk(
    path: Path, *, limits: Limits = DEFAULT_LIMITS, display_name: str | None = None
) -> Iterator[Member | Refused]:
    """Yield the regular files of the bundle at ``path`` as ``Member`` streams, and ``Refused`` entries.

    ``display_name`` names a single-file upload (default: the file's name). Raises ``BundleError``
    when the container itself is unreadable and ``LimitExceeded`` when the limits are passed (the
    members yielded before stay valid). Each ``Member.open()`` must be consumed before the next
    member is requested: tar streams are read once, front to back.
    """
    path = Path(path)
    budget = _Budget(limits, path.stat().st_size)
    kind = _container_kind(path)
    if kind in ("zip", "tar"):
        entries = _walk_zip(path, limits, budget) if kind == "zip" else _walk_tar(path, limits, budget)
        yield from _first_copies(entries)
    else:
        name = safe_name(display_name or path.name) or "upload"

        def opener() -> BinaryIO:
            return _counted(path.open("rb"), budget, name)

        yield Member(name=name, size=None, open=opener, mtime=path.stat().st_mtime)


def _first_copies(entries: Iterator[Member | Refused]) -> Iterator[Member | Refused]:
    """``entries`` with each member name once: a member stored twice (a ``tar -r`` rerun, an
    archive of an archive's extraction) is read from its first copy; the next copy is listed
    ``Refused`` once, saying so, and any further copy is skipped unread."""
    seen: dict[str, int] = {}
    for entry in entries:
        if isinstance(entry, Member):
            copies = seen.get(entry.name, 0)
            seen[entry.name] = copies + 1
            if copies == 1:
                yield Refused(
                    entry.name,
                    "stored twice in the archive: the first copy is read, the others are dropped",
                )
            if copies:
                continue
        yield entry


def _walk_tar(path: Path, limits: Limits, budget: _Budget) -> Iterator[Member | Refused]:
    with path.open("rb") as fh:
        stream = _TarStream(_decompressing(fh), budget)
        try:
            # "r:" (not the stream mode "r|"): the members' bytes are read from the decompressed
            # stream where they are, not copied through tarfile's stream buffer; tarfile only ever
            # seeks forward here, which the _TarStream does by reading (a member left unread is
            # read through, every byte counted)
            tar = tarfile.open(fileobj=stream, mode="r:", tarinfo=_BoundedTarInfo)  # type: ignore[call-overload]
        except _CORRUPT as exc:
            raise BundleError(f"not a readable tar archive (truncated or corrupt: {exc})") from exc
        count = 0
        try:
            for info in tar:
                count += 1
                if count > limits.max_members:
                    raise LimitExceeded(
                        f"more than {limits.max_members} entries; the rest of the bundle is refused"
                    )
                yield from _tar_entry(tar, info, stream, budget)
                tar.members.clear()  # tarfile keeps every header it read: none is looked up again
        except _CORRUPT as exc:
            raise BundleError(f"archive is truncated or corrupt after {count} entries: {exc}") from exc


def _tar_entry(
    tar: tarfile.TarFile, info: tarfile.TarInfo, stream: _TarStream, budget: _Budget
) -> Iterator[Member | Refused]:
    """What one tar header gives: a ``Member``, a ``Refused``, or nothing (a directory). ``stream``
    is labelled with its name until the next header: a limit passed while the member is read, or
    while it is read through unused, names it."""
    name = safe_name(info.name)
    label = info.name[:300]
    stream.label = f"{label} (or the header after it)"
    if getattr(info, "refused", None):
        yield Refused(name or label, info.refused)  # type: ignore[attr-defined]
        return
    if name is None:
        yield Refused(label, "unsafe path (absolute or with '..')")
        return
    if info.isdir():
        return
    if info.issym() or info.islnk():
        yield Refused(name, f"link to {info.linkname[:200]!r} not followed")
        return
    if not info.isfile():
        yield Refused(name, "device, FIFO or other special file")
        return
    if info.sparse is not None:
        yield Refused(name, "a sparse file (GNU tar --sparse): not a capture")
        return
    extracted = tar.extractfile(info)
    if extracted is None:  # pragma: no cover - isfile() members always extract
        return
    stream.label = name
    yield Member(
        name=name,
        size=info.size,
        open=lambda f=extracted, n=name: _counted(f, budget, n, charged=True),
        mtime=float(info.mtime) if info.mtime else None,
    )


def _zip_time(info: zipfile.ZipInfo) -> float | None:
    """A zip entry's time (a local date and time without zone, read as UTC) in seconds since the
    epoch; None for the format's empty date (1980-01-01 00:00)."""
    if info.date_time[:3] == (1980, 1, 1) and info.date_time[3:] == (0, 0, 0):
        return None
    return datetime.datetime(*info.date_time, tzinfo=datetime.UTC).timestamp()


def _walk_zip(path: Path, limits: Limits, budget: _Budget) -> Iterator[Member | Refused]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"not a readable zip archive: {exc}") from exc
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_members:
            raise LimitExceeded(
                f"{len(infos)} entries, more than {limits.max_members}; the bundle is refused"
            )
        for info in infos:
            name = safe_name(info.filename)
            if name is None:
                yield Refused(info.filename[:300], "unsafe path (absolute or with '..')")
                continue
            if info.is_dir():
                continue
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                yield Refused(name, "symbolic link not followed")
                continue
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: written without Unix file-type bits
                yield Refused(name, "device, FIFO or other special file")
                continue
            yield Member(
                name=name,
                size=info.file_size,
                open=lambda i=info, n=name: _counted(zf.open(i), budget, n),
                mtime=_zip_time(info),
            )
