"""The archive walk within limits, whatever the archive holds: tar extension headers (GNU long names
and links, pax headers) over a small cap refuse their member without being held, sparse files are
refused, and every decompressed byte counts, members skipped unread included (the issue "One
hostile upload never takes the workers")."""

from __future__ import annotations

import io
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest
import zstandard

from parsers.ingest.archive import (
    MAX_CHAINED_HEADERS,
    MAX_HEADER_BYTES,
    LimitExceeded,
    Limits,
    Member,
    Refused,
    walk,
)
from tests.hostile import long_name_bomb, zeros_bomb

VMSTAT = b"""procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 1  0      0 104588 104337 236728    0    0     5    93    0    1  3  3 94  0  0
"""
#: Limits under which a small hostile archive is read through: only the header cap applies.
ROOMY = Limits(max_ratio=1_000_000)


def _entries(path: Path, limits: Limits = ROOMY) -> list[tuple[str, str | bytes]]:
    out: list[tuple[str, str | bytes]] = []
    for entry in walk(path, limits=limits):
        if isinstance(entry, Member):
            out.append((entry.name, entry.open().read()))
        else:
            out.append((entry.name, "refused: " + entry.reason))
    return out


def _packed(path: Path, raw: bytes) -> Path:
    path.write_bytes(zstandard.ZstdCompressor().compress(raw))
    return path


def _tar_bytes(entries: list[tuple[tarfile.TarInfo, bytes]], fmt: int = tarfile.GNU_FORMAT) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for info, data in entries:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def test_a_long_name_under_the_cap_is_read_as_the_members_name(tmp_path: Path) -> None:
    name = "pt/" + "d" * 3000 + "/2026_04_21_16_51_41-vmstat"
    path = _packed(tmp_path / "b.tar.zst", _tar_bytes([(tarfile.TarInfo(name), VMSTAT)]))
    assert _entries(path) == [(name, VMSTAT)]


def test_a_long_name_header_over_the_cap_refuses_its_member_and_the_walk_goes_on(tmp_path: Path) -> None:
    path = long_name_bomb(tmp_path / "b.tar.zst", declared=MAX_HEADER_BYTES + 1, then=("pt/vmstat", VMSTAT))
    raw = zstandard.ZstdDecompressor().decompress(path.read_bytes(), max_output_size=1 << 24)
    path = _packed(path, raw[: -2 * tarfile.BLOCKSIZE] + _tar_bytes([(tarfile.TarInfo("pt/after"), VMSTAT)]))
    assert _entries(path) == [
        (
            "pt/vmstat",
            "refused: its GNU long-name header declares 65,537 bytes, over the 65,536-byte cap for a header",
        ),
        ("pt/after", VMSTAT),
    ]


def test_a_pax_header_over_the_cap_refuses_its_member(tmp_path: Path) -> None:
    big = tarfile.TarInfo("pt/big")
    big.pax_headers = {"comment": "x" * MAX_HEADER_BYTES}
    raw = _tar_bytes([(big, VMSTAT), (tarfile.TarInfo("pt/small"), VMSTAT)], tarfile.PAX_FORMAT)
    entries = _entries(_packed(tmp_path / "b.tar.zst", raw))
    assert entries[0][0] == "pt/big"
    assert entries[0][1].startswith("refused: its pax header declares 65,5")  # type: ignore[union-attr]
    assert entries[1] == ("pt/small", VMSTAT)


def test_the_cap_is_a_limit(tmp_path: Path) -> None:
    path = _packed(tmp_path / "b.tar.zst", _tar_bytes([(tarfile.TarInfo("pt/" + "n" * 2000), VMSTAT)]))
    [(name, reason)] = _entries(path, Limits(max_ratio=1_000_000, max_header_bytes=1024))
    assert (
        reason
        == "refused: its GNU long-name header declares 2,004 bytes, over the 1,024-byte cap for a header"
    )


def test_a_chain_of_extension_headers_refuses_its_member(tmp_path: Path) -> None:
    one = _tar_bytes([(tarfile.TarInfo("pt/" + "n" * 600), b"")])
    long_header = one[: 3 * tarfile.BLOCKSIZE]  # the L header and its two blocks of name
    raw = long_header * (MAX_CHAINED_HEADERS + 1) + _tar_bytes(
        [(tarfile.TarInfo("pt/x"), VMSTAT), (tarfile.TarInfo("pt/y"), VMSTAT)]
    )
    refused, after = _entries(_packed(tmp_path / "b.tar.zst", raw))
    # named by the long name of the headers before the one refused
    assert refused == (
        "pt/" + "n" * 600,
        f"refused: more than {MAX_CHAINED_HEADERS} extension headers in a row",
    )
    assert after == ("pt/y", VMSTAT)


def test_a_sparse_file_is_refused_without_its_map_read(tmp_path: Path) -> None:
    sparse = tarfile.TarInfo("pt/sparse")
    sparse.type = tarfile.GNUTYPE_SPARSE
    raw = _tar_bytes([(sparse, b"s" * 100), (tarfile.TarInfo("pt/after"), VMSTAT)])
    assert _entries(_packed(tmp_path / "b.tar.zst", raw)) == [
        ("pt/sparse", "refused: a sparse file (GNU tar --sparse): not a capture"),
        ("pt/after", VMSTAT),
    ]


def test_a_members_bytes_count_once(tmp_path: Path) -> None:
    raw = _tar_bytes([(tarfile.TarInfo("a.txt"), b"a" * 5000)])
    path = tmp_path / "a.tar"
    path.write_bytes(raw)
    # header, data and padding 6,144, the end header 512: read once within 7,000 (counted twice, 11,000)
    assert _entries(path, Limits(max_total_bytes=7000)) == [("a.txt", b"a" * 5000)]


def test_a_member_skipped_unread_counts_against_the_ratio(tmp_path: Path) -> None:
    path = zeros_bomb(tmp_path / "z.tar.zst", zeros=1 << 30, before=(("pt/vmstat", VMSTAT),))
    limits = Limits(max_ratio=200)
    assert path.stat().st_size * 200 < 1 << 30
    entries = walk(path, limits=limits)
    first = next(entries)
    assert first.open().read() == VMSTAT
    zeros = next(entries)
    assert zeros.name == "pt/core.bin"
    assert zeros.open().read(1 << 16) == bytes(1 << 16)  # its first lines only, like an unused member
    with pytest.raises(
        LimitExceeded, match=r"^pt/core.bin: uncompressed data passed .* \(compression ratio limit\)"
    ):
        next(entries)


def test_a_member_skipped_unread_counts_against_the_total(tmp_path: Path) -> None:
    path = zeros_bomb(tmp_path / "z.tar.zst", zeros=8 << 20, before=(("pt/vmstat", VMSTAT),))
    entries = walk(path, limits=Limits(max_total_bytes=4 << 20, max_ratio=1_000_000))
    assert next(entries).open().read() == VMSTAT
    next(entries)
    with pytest.raises(LimitExceeded, match="pt/core.bin: .* \\(total size limit\\)"):
        next(entries)


def _peak_while(fn: object) -> tuple[int, float]:
    tracemalloc.start()
    start = time.monotonic()
    try:
        fn()  # type: ignore[operator]
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, time.monotonic() - start


def test_the_issues_17_kb_long_name_bomb_ends_at_once_holding_nothing(tmp_path: Path) -> None:
    """The issue's archive itself: a GNU long-name header declaring 512 MiB in about 17 KB of zstd."""
    path = long_name_bomb(tmp_path / "bomb.tar.zst", declared=512 << 20)
    assert path.stat().st_size < 32 << 10

    def read() -> None:
        with pytest.raises(LimitExceeded) as raised:
            _entries(path, Limits())
        assert "its GNU long-name header declares 536,870,912 bytes, over the 65,536-byte cap" in str(
            raised.value
        )
        assert "(compression ratio limit); the rest of the bundle is refused" in str(raised.value)

    peak, seconds = _peak_while(read)
    assert peak < 16 << 20, f"{peak:,} bytes held reading it"
    assert seconds < 10


def test_the_issues_1_mb_upload_of_32_gib_of_zeros_stops_at_the_ratio(tmp_path: Path) -> None:
    """The issue's other archive: 32 GiB of zeros in about 1 MB of zstd, in a member the ingest does
    not use (its first lines are read, as an unrecognised member's are, and no more)."""
    path = zeros_bomb(tmp_path / "zeros.tar.zst", zeros=32 << 30, before=(("pt/vmstat", VMSTAT),))
    assert path.stat().st_size < 2 << 20

    def read() -> None:
        entries = walk(path, limits=Limits())
        assert next(entries).open().read() == VMSTAT
        next(entries).open().read(1 << 20)
        with pytest.raises(LimitExceeded, match=r"pt/core.bin: .*\(compression ratio limit\)"):
            next(entries)

    peak, seconds = _peak_while(read)
    assert peak < 16 << 20, f"{peak:,} bytes held reading it"
    assert seconds < 10


def test_a_refused_entry_is_reported_not_raised(tmp_path: Path) -> None:
    path = long_name_bomb(tmp_path / "b.tar.zst", declared=MAX_HEADER_BYTES * 2)
    assert [type(e) for e in walk(path, limits=ROOMY)] == [Refused]
