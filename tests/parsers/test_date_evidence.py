"""A capture with a time of day and no date is put on the date the bundle itself gives, said in a warning."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pandas as pd

from parsers.ingest.bundle import read_bundle
from tests.conftest import FIXTURES

#: sysstat 12.6.1 ``mpstat -P ALL 1 2`` run here (tests/fixtures/mpstat), its banner left out: times
#: of day (``12:26:38``) and no date, as pasted into a ticket.
MPSTAT = (FIXTURES / "mpstat" / "mpstat-12.6.1_P-ALL.txt").read_text().split("\n", 1)[1].encode()
#: 2026-11-22 12:27:00 UTC, the file time a tar records for the member.
MTIME = 1795350420


def _tar(path: Path, members: list[tuple[str, bytes, int]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data, mtime in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tar.addfile(info, io.BytesIO(data))
    return path


def _mpstat(bundle: object) -> object:
    return next(s for s in bundle.sources if s.format == "mpstat")


def test_the_member_file_time_gives_the_date_of_its_times_of_day(tmp_path: Path) -> None:
    source = _mpstat(read_bundle(_tar(tmp_path / "b.tar.gz", [("notes/mpstat.txt", MPSTAT, MTIME)])))
    assert source.start == pd.Timestamp("2026-11-22 12:26:38", tz="UTC")  # no offset known: kept as if UTC
    said = {w.code: w for w in source.warnings}["date-from-bundle"]
    assert (
        said.message == "no banner date: times of day put on 2026-11-22, the date of the member's file time"
    )
    assert "no-start-time" not in {w.code for w in source.warnings}


def test_the_collector_manifest_start_comes_before_the_file_time(tmp_path: Path) -> None:
    manifest = b"casebook_collector: 1\nstart_local: 2026-11-20 23:59:58\nutc_offset: +0000\n"
    path = _tar(
        tmp_path / "b.tar.gz",
        [("casebook-db1-x/manifest.txt", manifest, MTIME), ("casebook-db1-x/mpstat.txt", MPSTAT, MTIME)],
    )
    source = _mpstat(read_bundle(path))
    assert source.start.date().isoformat() == "2026-11-20"
    assert {w.code: w.message for w in source.warnings}["date-from-bundle"].endswith(
        "the date of the collector manifest's start"
    )


def test_without_a_file_time_the_upload_time_gives_the_date(tmp_path: Path) -> None:
    path = _tar(tmp_path / "b.tar.gz", [("notes/mpstat.txt", MPSTAT, 0)])
    source = _mpstat(read_bundle(path, uploaded_at=pd.Timestamp("2026-11-23 08:00", tz="UTC")))
    assert source.start == pd.Timestamp("2026-11-23 12:26:38", tz="UTC")
    assert {w.code: w.message for w in source.warnings}["date-from-bundle"].endswith(
        "the date of the upload's time"
    )


def test_without_any_evidence_the_times_stay_on_1970_and_say_so(tmp_path: Path) -> None:
    source = _mpstat(read_bundle(_tar(tmp_path / "b.tar.gz", [("notes/mpstat.txt", MPSTAT, 0)])))
    assert source.start.date().isoformat() == "1970-01-01"
    assert "no-start-time" in {w.code for w in source.warnings}


def test_a_banner_date_is_never_replaced_by_the_bundle_s(tmp_path: Path) -> None:
    whole = (FIXTURES / "mpstat" / "mpstat-12.6.1_P-ALL.txt").read_bytes()
    source = _mpstat(
        read_bundle(_tar(tmp_path / "b.tar.gz", [("notes/mpstat.txt", whole, MTIME + 86400 * 30)]))
    )
    assert source.start.date().isoformat() == "2026-11-22"
    assert "date-from-bundle" not in {w.code for w in source.warnings}
