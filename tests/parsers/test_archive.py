"""The safe archive walk: every container kind, and hostile archives refused with a reason."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from parsers.ingest.archive import BundleError, LimitExceeded, Limits, Member, Refused, walk

VMSTAT = b"""procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 1  0      0 104588 104337 236728    0    0     5    93    0    1  3  3 94  0  0
"""


def _tar(path: Path, entries: list[tarfile.TarInfo | tuple[str, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
            else:
                name, data = entry
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def _read_all(path: Path, **kw: object) -> list[tuple[str, str | bytes]]:
    out: list[tuple[str, str | bytes]] = []
    for entry in walk(path, **kw):
        if isinstance(entry, Member):
            out.append((entry.name, entry.open().read()))
        else:
            out.append((entry.name, "refused: " + entry.reason))
    return out


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:bz2", "w:xz"])
def test_it_reads_tar_members_whatever_the_compression(tmp_path: Path, mode: str) -> None:
    path = _tar(tmp_path / "bundle.bin", [("pt/2026_04_21_16_51_41-vmstat", VMSTAT)], mode)
    assert _read_all(path) == [("pt/2026_04_21_16_51_41-vmstat", VMSTAT)]


def test_it_reads_a_zstd_tar(tmp_path: Path) -> None:
    import zstandard

    plain = _tar(tmp_path / "b.tar", [("vmstat.txt", VMSTAT)], "w")
    packed = tmp_path / "b.tar.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    assert _read_all(packed) == [("vmstat.txt", VMSTAT)]


def test_it_reads_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("dir/vmstat.txt", VMSTAT)
    assert _read_all(path) == [("dir/vmstat.txt", VMSTAT)]


def test_a_single_file_is_one_member_named_by_the_upload(tmp_path: Path) -> None:
    path = tmp_path / "upload-123"
    path.write_bytes(VMSTAT)
    assert _read_all(path, display_name="vmstat.out") == [("vmstat.out", VMSTAT)]


def test_a_gzipped_single_file_is_decompressed(tmp_path: Path) -> None:
    path = tmp_path / "vmstat.gz"
    path.write_bytes(gzip.compress(VMSTAT))
    assert _read_all(path) == [("vmstat.gz", VMSTAT)]


def test_a_compressed_member_inside_a_tar_is_decompressed(tmp_path: Path) -> None:
    path = _tar(tmp_path / "b.tgz", [("osw/x.dat.gz", gzip.compress(VMSTAT))])
    assert _read_all(path) == [("osw/x.dat.gz", VMSTAT)]


def test_it_refuses_traversal_and_absolute_paths(tmp_path: Path) -> None:
    path = _tar(
        tmp_path / "evil.tgz", [("../../evil.sh", b"x"), ("/etc/cron.d/evil", b"x"), ("ok.txt", VMSTAT)]
    )
    got = _read_all(path)
    assert got[0] == ("../../evil.sh", "refused: unsafe path (absolute or with '..')")
    assert got[1] == ("/etc/cron.d/evil", "refused: unsafe path (absolute or with '..')")
    assert got[2] == ("ok.txt", VMSTAT)


def test_it_refuses_links_and_devices(tmp_path: Path) -> None:
    sym = tarfile.TarInfo("link")
    sym.type, sym.linkname = tarfile.SYMTYPE, "/etc/shadow"
    hard = tarfile.TarInfo("hard")
    hard.type, hard.linkname = tarfile.LNKTYPE, "ok.txt"
    dev = tarfile.TarInfo("dev")
    dev.type, dev.devmajor, dev.devminor = tarfile.CHRTYPE, 1, 3
    fifo = tarfile.TarInfo("fifo")
    fifo.type = tarfile.FIFOTYPE
    path = _tar(tmp_path / "links.tgz", [("ok.txt", VMSTAT), sym, hard, dev, fifo])
    got = dict(_read_all(path))
    assert got["ok.txt"] == VMSTAT
    assert got["link"] == "refused: link to '/etc/shadow' not followed"
    assert got["hard"] == "refused: link to 'ok.txt' not followed"
    assert got["dev"] == got["fifo"] == "refused: device, FIFO or other special file"


def test_it_refuses_a_zip_symlink_and_traversal(tmp_path: Path) -> None:
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as zf:
        link = zipfile.ZipInfo("link")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("../up.txt", b"x")
    got = dict(_read_all(path))
    assert got == {
        "link": "refused: symbolic link not followed",
        "../up.txt": "refused: unsafe path (absolute or with '..')",
    }


def test_a_decompression_bomb_stops_at_the_ratio_limit(tmp_path: Path) -> None:
    bomb = gzip.compress(b"0" * (20 * 1024 * 1024), compresslevel=9)  # 20 MiB of zeros in ~20 KiB
    path = _tar(tmp_path / "bomb.tgz", [("ok.txt", VMSTAT), ("zeros.gz", bomb)])
    entries = walk(path, limits=Limits(max_ratio=100))
    first = next(entries)
    assert first.open().read() == VMSTAT
    second = next(entries)
    with pytest.raises(LimitExceeded, match="compression ratio limit"):
        second.open().read()


def test_the_total_size_limit_counts_bytes_read_not_sizes_declared(tmp_path: Path) -> None:
    path = _tar(tmp_path / "big.tar", [("a.txt", b"x" * 5000), ("b.txt", b"y" * 5000)], "w")
    entries = walk(path, limits=Limits(max_total_bytes=8000))
    assert len(next(entries).open().read()) == 5000
    with pytest.raises(LimitExceeded, match="total size limit"):
        next(entries).open().read()


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    path = _tar(tmp_path / "many.tgz", [(f"f{i}", b"x") for i in range(5)])
    with pytest.raises(LimitExceeded, match="more than 3 entries"):
        _read_all(path, limits=Limits(max_members=3))


def test_a_truncated_archive_is_a_bundle_error(tmp_path: Path) -> None:
    whole = _tar(tmp_path / "b.tgz", [(f"f{i}", VMSTAT * 200) for i in range(3)]).read_bytes()
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(BundleError, match="truncated or corrupt"):
        _read_all(cut)


def test_refused_entries_are_reported_not_raised(tmp_path: Path) -> None:
    path = _tar(tmp_path / "x.tgz", [("../x", b"1")])
    assert [type(e) for e in walk(path)] == [Refused]


def test_a_truncated_compressed_single_file_is_a_bundle_error(tmp_path: Path) -> None:
    path = tmp_path / "vmstat.gz"
    path.write_bytes(gzip.compress(VMSTAT * 50)[:30])
    with pytest.raises(BundleError, match="truncated or corrupt"):
        _read_all(path)
