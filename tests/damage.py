"""Damage done to real captures, the way uploads arrive damaged: one function per kind, each taking a
member's bytes and a seeded ``random.Random`` and giving the damaged bytes. Used by the damage fuzz
test (tests/parsers/test_damage_fuzz.py) and by bench/damaged.py; plain Python, no Django.
"""

from __future__ import annotations

import io
import random
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

#: The length of the garbage line of ``huge_line``: well over ``parsers.base.MAX_LINE_CHARS``.
HUGE_LINE_BYTES = 5 << 20
#: A snapshot marker at the start of a line (pt-stalk ``TS``, OSWatcher ``zzz``).
MARKER = re.compile(rb"^(?:TS |zzz )", re.M)
#: A run of digits between blanks: a number in a column.
NUMBER = re.compile(rb"(?<=[ \t])\d+(?=[ \t\n])")


def _line_starts(data: bytes) -> list[int]:
    return [0] + [m.end() for m in re.finditer(rb"\n", data) if m.end() < len(data)]


def truncate_mid_line(data: bytes, rng: random.Random) -> bytes:
    """Cut inside a line of the second half (a full disk, a killed collector)."""
    starts = _line_starts(data) + [len(data) + 1]
    full = [i for i in range(len(starts) - 1) if starts[i + 1] - starts[i] > 2]  # lines of 2+ characters
    if not full:
        return data[: max(1, len(data) // 2)]
    i = rng.choice(full[len(full) // 2 :])
    end = starts[i + 1] - 1
    return data[: starts[i] + max(1, (end - starts[i]) // 2)]


def truncate_mid_block(data: bytes, rng: random.Random) -> bytes:
    """Cut at a line end inside the last snapshot (after its marker), or at a line end past half."""
    markers = [m.start() for m in MARKER.finditer(data)]
    if len(markers) >= 2:
        last = markers[-1]
        ends = [i + 1 for i in range(last, len(data) - 1) if data[i] == 10]
        if len(ends) >= 2:
            return data[: ends[len(ends) // 2]]
    starts = _line_starts(data)
    return data[: starts[max(1, len(starts) * 2 // 3)]] if len(starts) > 2 else data


def nul_bytes(data: bytes, rng: random.Random) -> bytes:
    """A run of NUL bytes inside one line (a crash while the file was written)."""
    at = rng.randrange(len(data)) if data else 0
    return data[:at] + b"\x00" * rng.randint(1, 64) + data[at:]


def byte_flips(data: bytes, rng: random.Random) -> bytes:
    """A few random bytes replaced by random bytes."""
    out = bytearray(data)
    for _ in range(min(len(out), rng.randint(1, 8))):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def huge_line(data: bytes, rng: random.Random) -> bytes:
    """One garbage line of ``HUGE_LINE_BYTES`` inserted at a line start."""
    starts = _line_starts(data)
    at = starts[rng.randrange(len(starts))] if data else 0
    junk = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789 ,;:=") for _ in range(4096))
    line = (junk * (HUGE_LINE_BYTES // len(junk) + 1))[:HUGE_LINE_BYTES] + b"\n"
    return data[:at] + line + data[at:]


def crlf(data: bytes, rng: random.Random) -> bytes:
    """Every line end written as ``\\r\\n`` (a copy through Windows)."""
    return data.replace(b"\n", b"\r\n")


def utf16(data: bytes, rng: random.Random) -> bytes:
    """The text re-encoded as UTF-16 with its BOM (saved by a Windows editor)."""
    return data.decode("utf-8", "replace").encode("utf-16")


def twice(data: bytes, rng: random.Random) -> bytes:
    """The whole content written twice (a rerun appending to the same file)."""
    return data + (b"" if data.endswith(b"\n") else b"\n") + data


def blocks_out_of_order(data: bytes, rng: random.Random) -> bytes:
    """Two snapshots (or, without markers, two halves) swapped."""
    markers = [m.start() for m in MARKER.finditer(data)]
    if len(markers) >= 3:
        i = rng.randrange(len(markers) - 2)
        a, b, c = markers[i], markers[i + 1], markers[i + 2]
        return data[:a] + data[b:c] + data[a:b] + data[c:]
    starts = _line_starts(data)
    if len(starts) < 8:
        return data
    n = len(starts)
    a, b, c = starts[n // 3], starts[n * 2 // 3], starts[n - 1]  # the header stays first
    return data[:a] + data[b:c] + data[a:b] + data[c:]


def digits_replaced(data: bytes, rng: random.Random) -> bytes:
    """A few numbers in columns replaced by letters (``12`` -> ``xq``)."""
    spans = [m.span() for m in NUMBER.finditer(data)]
    out = bytearray(data)
    for a, b in rng.sample(spans, min(len(spans), rng.randint(1, 5))):
        out[a:b] = bytes(rng.choice(b"xqz") for _ in range(b - a))
    return bytes(out)


def empty(data: bytes, rng: random.Random) -> bytes:
    """The file empty (the collector died before writing)."""
    return b""


def negative_numbers(data: bytes, rng: random.Random) -> bytes:
    """A few numbers in columns made negative (``151`` -> ``-151``)."""
    spans = [m.span() for m in NUMBER.finditer(data)]
    chosen = sorted(rng.sample(spans, min(len(spans), rng.randint(1, 5))), reverse=True)
    out = bytearray(data)
    for a, _ in chosen:
        out[a:a] = b"-"
    return bytes(out)


#: Every kind of damage, by name.
MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate-mid-line": truncate_mid_line,
    "truncate-mid-block": truncate_mid_block,
    "nul-bytes": nul_bytes,
    "byte-flips": byte_flips,
    "huge-line": huge_line,
    "crlf": crlf,
    "utf16": utf16,
    "twice": twice,
    "blocks-out-of-order": blocks_out_of_order,
    "digits-replaced": digits_replaced,
    "empty": empty,
    "negative-numbers": negative_numbers,
}


def tarball(path: Path, members: dict[str, bytes]) -> Path:
    """A gzipped tar at ``path`` holding ``members`` (name -> bytes), in that order."""
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
