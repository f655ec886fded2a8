"""Table cache and InnoDB latch rules (analyzer/rules/caches.py) on real captures: culprit-tablecache
(table_open_cache 64 under 6 sessions reading 400 tables, made by scripts/make_culprit_bundles.sh), the
healthy example bundle, and pt-stalk 3.7.1's SHOW ENGINE INNODB MUTEX listings of Percona Server 8.0
(``../shared/samples/My-gather/pt-stalk/example2``, read in place; the latch tests skip without it),
one of them edited in the test to a hot latch."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import engine
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import read_bundle
from tests.analyzer.context_captures import EXAMPLE2, read

BUNDLES = Path(__file__).resolve().parents[2] / "fixtures" / "bundles"
IDLE_COUNTERS = "mariadb-10.11_mysqladmin_idle.txt"  # 8 s of real counters: the capture's window
#: MariaDB 10.6+ lists no latches for SHOW ENGINE INNODB MUTEX (an empty result on 10.11.19 here), so
#: the listings are real ones of Percona Server 8.0.42 under sysbench (pt-stalk 3.7.1).
LISTINGS = EXAMPLE2 / "2026_04_21_16_51_41-mutex-status1", EXAMPLE2 / "2026_04_21_16_51_41-mutex-status2"


@pytest.fixture
def listings() -> tuple[Path, Path]:
    if not all(p.exists() for p in LISTINGS):
        pytest.skip("../shared/samples is absent")
    return LISTINGS


def _hot(listing: Path) -> bytes:
    """The second listing with one latch made hot: buf0buf.cc:877's waits 2,691 -> 62,691 (line 24)."""
    data = listing.read_bytes()
    hot = data.replace(
        b"sum rwlock: buf0buf.cc:877\twaits=2691\n", b"sum rwlock: buf0buf.cc:877\twaits=62691\n"
    )
    assert hot != data
    return hot


def _bundle(name: str) -> Timeline:
    bundle = read_bundle(BUNDLES / name)
    return Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )


def test_a_full_table_cache_names_table_open_cache_in_its_title() -> None:
    tl = _bundle("culprit-tablecache.tar.gz")
    [f] = engine.run(tl, only=("table-cache-full",)).findings
    assert f.title.startswith("Table cache full: 64 tables open of 64")
    assert f.title.endswith("(table_open_cache = 64)")
    assert f.explanation.startswith("Setting: table_open_cache = 64: ")
    assert (f.culprit.kind, f.culprit.id, f.culprit.statement) == ("setting", "table_open_cache", "64")
    values = {e.label: e.value for e in f.evidence}
    assert values["Open_tables (max)"] == 64
    assert values["Table_open_cache_misses per second (median)"] > 1000  # 6 sessions, one table each query
    listing = next(e for e in f.evidence if e.series == "open_tables.table")
    assert listing.member.endswith("-opentables2") and listing.lines
    assert "SET GLOBAL table_open_cache = 2000;" in f.recommendation


@pytest.mark.parametrize(
    "name", ["ptstalk-mariadb-tmptables.tar.gz", "culprit-rowlock.tar.gz", "overlap-tmp.tar.gz"]
)
def test_the_table_cache_rule_is_silent_when_the_cache_has_room(name: str) -> None:
    assert engine.run(_bundle(name), only=("table-cache-full",)).findings == []


def test_a_hot_latch_is_named_with_its_line(tmp_path: Path, listings: tuple[Path, Path]) -> None:
    """buf0buf.cc:877's waits edited from 2,691 to 62,691 in the second listing: 60,395 more than the
    first listing's 2,296 in the 7 s the counters span, about 8,600/s."""
    _, tl = read(
        tmp_path,
        {
            "mutex-status1": listings[0],
            "mutex-status2": _hot(listings[1]),
            "mysqladmin": IDLE_COUNTERS,
        },
    )
    [f] = engine.run(tl, only=("innodb-latch-contention",)).findings
    assert f.title.startswith("InnoDB latch buf0buf.cc:877 (rwlock): ")
    assert "waited on 60,395 times in 7 s" in f.explanation and "buffer pool pages" in f.explanation
    line = next(e for e in f.evidence if e.label == "latch buf0buf.cc:877: its line")
    assert line.value == "InnoDB\tsum rwlock: buf0buf.cc:877\twaits=62691"
    assert line.member.endswith("-mutex-status2") and line.lines == (24, 24)


def test_the_real_latch_listings_are_quiet(tmp_path: Path, listings: tuple[Path, Path]) -> None:
    """Percona Server 8.0 under sysbench: the hottest latch grew by 395 waits, tens per second."""
    _, tl = read(
        tmp_path,
        {
            "mutex-status1": listings[0],
            "mutex-status2": listings[1],
            "mysqladmin": IDLE_COUNTERS,
        },
    )
    out = engine.run(tl, only=("innodb-latch-contention",))
    assert not out.failed and out.findings == []


def test_one_latch_listing_gives_no_rate(tmp_path: Path, listings: tuple[Path, Path]) -> None:
    _, tl = read(tmp_path, {"mutex-status1": _hot(listings[1]), "mysqladmin": IDLE_COUNTERS})
    assert engine.run(tl, only=("innodb-latch-contention",)).findings == []
