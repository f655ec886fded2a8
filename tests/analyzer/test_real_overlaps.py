"""Real collections with overlapping captures (tests/fixtures/bundles/overlap-*.tar.gz, made on this
machine by scripts/make_overlap_bundles.sh): pt-stalk 3.2.1 and scripts/collect.sh captured the same
15 s side by side, against the local MariaDB 10.11, while one load ran. Each bundle holds two captures
of every OS source and of the processlist and status counters, plus pt-stalk's -overall runs.

Each load gets its finding in the load's window (the whole capture: the load ran from 6 s before it
to 9 s after), read from one primary capture per source.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pandas as pd
import pytest

from analyzer import engine
from analyzer.findings import Severity
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import read_bundle

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"
LOADS = {
    "cpu": "cpu-saturation",  # sysbench oltp_point_select, 32 threads on 2 CPUs
    "io": "disk-saturation",  # 48 direct 1 MiB readers keeping the disk's queue full
    "tmp": "tmp-table-churn",  # scripts/load_mariadb.py: 64 sessions, HEAP spilled to Aria
    "commit": "commit-serialization",  # sysbench oltp_write_only, 32 threads, 16 direct readers
}
ALARMS = (Severity.WARNING, Severity.CRITICAL)
#: scripts/make_overlap_bundles.sh: the load starts WARMUP_S (6 s) before the captures and runs
#: LOAD_S (30 s): it ends 24 s after the collector's start.
LOAD_AFTER_START_S = 24


def _load_window(shape: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    """From the collector's manifest (start_epoch): the capture start to the end of the load."""
    with tarfile.open(BUNDLES / f"overlap-{shape}.tar.gz") as tar:
        manifest = tar.extractfile("collector/manifest.txt").read().decode()  # type: ignore[union-attr]
    epoch = float(
        next(v for k, _, v in (line.partition(": ") for line in manifest.splitlines()) if k == "start_epoch")
    )
    start = pd.Timestamp(epoch, unit="s", tz="UTC")
    return start.floor("s"), start + pd.Timedelta(seconds=LOAD_AFTER_START_S)


def _case(shape: str):
    bundle = read_bundle(BUNDLES / f"overlap-{shape}.tar.gz")
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    return bundle, tl, engine.run(tl)


@pytest.mark.parametrize("shape", LOADS)
def test_each_load_gets_its_finding_in_the_loads_window(shape: str) -> None:
    _, _, out = _case(shape)
    assert out.failed == []
    [finding] = [f for f in out.findings if f.key == LOADS[shape]]
    assert finding.severity in ALARMS
    start, end = _load_window(shape)
    assert all(start <= w.start and w.end <= end for w in finding.windows), (finding.windows, start, end)
    assert sum(w.seconds for w in finding.windows) >= 5


@pytest.mark.parametrize("shape", LOADS)
def test_the_collectors_captures_are_primary_and_pt_stalks_overlap(shape: str) -> None:
    _, tl, _ = _case(shape)
    roles = {
        m.split("/")[0] + "/" + m.split("-", 1)[-1] if m.startswith("ptstalk/") else m: r
        for m, r in tl.roles.items()
    }
    for collector, ptstalk in (
        ("vmstat.txt", "vmstat"),
        ("processlist.txt", "processlist"),
        ("iostat.txt", "iostat"),
    ):
        assert roles[f"collector/{collector}"].role == "primary"
        # pt-stalk's capture has inferred times: an overlap, or primary only for the seconds it ran
        # past the collector
        role = roles[f"ptstalk/{ptstalk}"]
        assert role.role == "overlap" or f"collector/{collector} is primary where they overlap" in role.reason
    assert {roles[f"ptstalk/{t}-overall"].role for t in ("vmstat", "mpstat", "iostat")} == {"summary"}
    for name in ("vmstat", "processlist", "iostat", "mpstat_cpu", "mysqladmin"):
        frame = tl.frame(name)
        per_member = frame.groupby("member", observed=True)["ts"].agg(["min", "max"]).sort_values("min")
        # the stretches of the members follow each other: no moment is read from two captures
        assert (per_member["min"].iloc[1:].to_numpy() > per_member["max"].iloc[:-1].to_numpy()).all(), name


def test_the_interrupts_of_the_io_load_are_evidence_of_the_disk_not_a_storm() -> None:
    _, _, out = _case("io")
    assert [
        f.key
        for f in out.findings
        if f.key in ("interrupt-storm", "context-switch-storm") and f.severity in ALARMS
    ] == []
