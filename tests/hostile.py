"""Hostile uploads made on the spot: the two archives of the issue "One hostile upload never takes the
workers", at any size.

- ``long_name_bomb``: a ``.tar.zst`` whose first header is a GNU long-name header (type ``L``) that
  declares ``declared`` bytes (512 MiB in the issue: a 17 KB upload), followed by that many zeros
  and then one real member. tarfile, left to itself, reads the whole long name into memory.
- ``zeros_bomb``: a ``.tar.zst`` holding ``zeros`` bytes of zeros (32 GiB in the issue: about 1 MB of
  zstd) in a member the ingest does not use, after an optional capture.

Both are written by streaming zeros through zstd (level 1: 2 GiB a second here; a 128 KiB block of
zeros compresses to a few bytes), never held whole.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import zstandard

#: Zeros handed to the compressor at a time.
CHUNK_BYTES = 1 << 20
#: A block of a tar archive.
BLOCK = tarfile.BLOCKSIZE


def _header(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.type = kind
    info.mtime = 1_776_790_301  # 2026-04-21 16:51:41 UTC
    return info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")


def _zeros(out: zstandard.ZstdCompressionWriter, count: int) -> None:
    """``count`` zeros, padded to a whole tar block."""
    padded = -(-count // BLOCK) * BLOCK
    chunk = bytes(CHUNK_BYTES)
    while padded:
        n = min(padded, CHUNK_BYTES)
        out.write(chunk[:n])
        padded -= n


def _member(out: zstandard.ZstdCompressionWriter, name: str, data: bytes) -> None:
    out.write(_header(name, len(data)))
    out.write(data)
    out.write(bytes(-len(data) % BLOCK))


def _writer(path: Path) -> tuple[io.BufferedWriter, zstandard.ZstdCompressionWriter]:
    fh = path.open("wb")
    return fh, zstandard.ZstdCompressor(level=1).stream_writer(fh, closefd=False)


def long_name_bomb(path: Path, *, declared: int = 512 << 20, then: tuple[str, bytes] = ("x", b"x\n")) -> Path:
    """A ``.tar.zst`` at ``path``: a GNU long-name header declaring ``declared`` bytes (all zeros),
    then the member ``then`` (name, data), then the end of the archive."""
    fh, out = _writer(path)
    with fh, out:
        out.write(_header("././@LongLink", declared, tarfile.GNUTYPE_LONGNAME))
        _zeros(out, declared)
        _member(out, *then)
        out.write(bytes(2 * BLOCK))
    return path


def zeros_bomb(
    path: Path,
    *,
    zeros: int = 32 << 30,
    name: str = "pt/core.bin",
    before: tuple[tuple[str, bytes], ...] = (),
) -> Path:
    """A ``.tar.zst`` at ``path``: the members ``before`` (name, data), then ``zeros`` zeros in the
    member ``name`` (no capture format: the ingest reads its first lines and no more)."""
    fh, out = _writer(path)
    with fh, out:
        for member in before:
            _member(out, *member)
        out.write(_header(name, zeros))
        _zeros(out, zeros)
        out.write(bytes(2 * BLOCK))
    return path
