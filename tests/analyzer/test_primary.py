"""One source, many captures (analyzer/timeline/primary.py): the timeline reads one primary capture per source
and stretch of time, joins captures that follow each other, and says what each member became.

The bundles are made here with the real parsers: pt-stalk ``vmstat 1`` (times inferred from the file
prefix) beside a ``vmstat -t`` of the same minute (per-line times), two collections back to back,
two that partly overlap, 1 s and 5 s captures of one tool, and pt-stalk's ``-overall`` summary.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from analyzer import engine
from analyzer.timeline.timeline import Timeline
from parsers import vmstat
from parsers.base import ClockHints
from parsers.ingest.bundle import read_bundle
from tests.analyzer.captures import VMSTAT_HEADER, vmstat_rows_text
from tests.conftest import SAMPLES

START = pd.Timestamp("2026-11-22 12:27:05")
UTC0 = START.tz_localize("UTC")  # the server clock is UTC
#: The motivating capture: a 2-CPU server at 0 % idle, run queue 26-67 for a whole minute.
SATURATED = [
    {"r": 26 + (i * 7) % 42, "us": 84, "sy": 16, "id": 0, "in": 1300, "cs": 26000} for i in range(60)
]
BOOT = {"r": 2, "us": 3, "sy": 1, "id": 96}
QUIET = {"r": 0, "us": 1, "sy": 1, "id": 98}


def vmstat_t_text(rows: list[dict[str, int]], start: pd.Timestamp, step_s: int = 1) -> str:
    """``vmstat -t`` text (procps-ng 4.0.2 layout, zone UTC): each row stamped ``start + i * step_s``."""
    header = VMSTAT_HEADER.rstrip("\n").split("\n")
    lines = [header[0] + " -----timestamp-----", header[1] + "                 UTC"]
    body = vmstat_rows_text(rows).rstrip("\n").split("\n")[2:]
    for i, row in enumerate(body):
        lines.append(f"{row} {start + pd.Timedelta(seconds=i * step_s):%Y-%m-%d %H:%M:%S}")
    return "\n".join(lines) + "\n"


def ptstalk_vmstat(rows: list[dict[str, int]], start: pd.Timestamp, step_s: int = 1):
    """pt-stalk's ``-vmstat`` (``vmstat 1``, no times: inferred from the prefix) starting at ``start``."""
    member = f"{start:%Y_%m_%d_%H_%M_%S}-vmstat"
    hints = ClockHints(start_local=start, interval_s=float(step_s))
    src = vmstat.parse(vmstat_rows_text(rows).splitlines(keepends=True), member=member, clock=hints)
    src.shift(0)
    return src


def collector_vmstat(
    rows: list[dict[str, int]], start: pd.Timestamp, step_s: int = 1, member: str = "vmstat.txt"
):
    return vmstat.parse(
        vmstat_t_text(rows, start, step_s).splitlines(keepends=True), member=member, clock=ClockHints()
    )


def _cpu_saturation(tl: Timeline):
    return engine.run(tl, only=("cpu-saturation",)).findings


def test_a_vmstat_t_of_the_same_minute_is_primary_and_the_saturation_is_found() -> None:
    ptstalk = ptstalk_vmstat([BOOT] + SATURATED, START)
    collector = collector_vmstat([BOOT] + SATURATED, START + pd.Timedelta(milliseconds=300))
    tl = Timeline.from_sources([ptstalk, collector], ncpu=2)
    [finding] = _cpu_saturation(tl)
    [window] = finding.windows
    alone = _cpu_saturation(
        Timeline.from_sources(
            [collector_vmstat([BOOT] + SATURATED, START + pd.Timedelta(milliseconds=300))], ncpu=2
        )
    )
    assert (finding.key, finding.windows, finding.severity) == (
        alone[0].key,
        alone[0].windows,
        alone[0].severity,
    )
    assert window.seconds == 59  # the whole minute after the since-boot line
    vm = tl.frame("vmstat")
    assert set(vm["member"].astype(str)) == {"vmstat.txt"} and vm["ts"].is_unique
    assert tl.roles["vmstat.txt"].role == "primary"
    assert "per-line times" in tl.roles["vmstat.txt"].reason
    role = tl.roles[ptstalk.member]
    assert role.role == "overlap"
    assert "vmstat.txt covers the same minutes at 1 s with per-line times" in role.reason
    assert "a better clock" in role.reason


def test_read_as_one_series_the_two_captures_break_every_window() -> None:
    """What happened before: the rows interleaved at 0.3 s, cpu-saturation found nothing."""
    from analyzer.timeline.windows import sustained

    both = pd.concat(
        [
            ptstalk_vmstat([BOOT] + SATURATED, START).main,
            collector_vmstat([BOOT] + SATURATED, START + pd.Timedelta(milliseconds=300)).main,
        ]
    )
    both = both[~both["since_boot"]].sort_values("ts")
    hot = (both["r"] >= 4) & (both["id"] <= 5)
    assert (
        len(sustained(both["ts"], hot, min_samples=5)) == 0
    )  # intervals of 0.3/0.7 s: median 0.5, gaps break


def test_two_collections_back_to_back_are_joined_in_time_order() -> None:
    first = ptstalk_vmstat([BOOT] + [QUIET] * 10 + SATURATED[:20], START)
    second = ptstalk_vmstat([BOOT] + SATURATED[:20] + [QUIET] * 10, START + pd.Timedelta(seconds=31))
    tl = Timeline.from_sources([second, first], ncpu=2)
    assert {tl.roles[first.member].role, tl.roles[second.member].role} == {"primary"}
    vm = tl.frame("vmstat")
    assert vm["ts"].is_monotonic_increasing and vm["ts"].is_unique
    assert len(vm) == 60  # both collections, without their since-boot lines
    [finding] = _cpu_saturation(tl)
    [window] = finding.windows  # one load across the boundary: one window
    assert window.start == UTC0 + pd.Timedelta(seconds=11)
    assert window.end == UTC0 + pd.Timedelta(seconds=31 + 20)


def test_partly_overlapping_collections_keep_the_second_only_after_the_first() -> None:
    first = ptstalk_vmstat([BOOT] + SATURATED[:30], START)
    second = ptstalk_vmstat([BOOT] + SATURATED[:30], START + pd.Timedelta(seconds=20))
    tl = Timeline.from_sources([first, second], ncpu=2)
    vm = tl.frame("vmstat")
    assert vm["ts"].is_unique and vm["ts"].is_monotonic_increasing
    assert vm["ts"].max() == UTC0 + pd.Timedelta(seconds=50)
    kept_second = vm[vm["member"].astype(str) == second.member]
    assert kept_second["ts"].min() == UTC0 + pd.Timedelta(seconds=31)
    assert tl.roles[first.member].role == "primary"
    assert tl.roles[second.member].role == "primary"
    assert f"{first.member} is primary where they overlap" in tl.roles[second.member].reason
    [finding] = _cpu_saturation(tl)
    assert [(w.start, w.end) for w in finding.windows] == [
        (UTC0 + pd.Timedelta(seconds=1), UTC0 + pd.Timedelta(seconds=50))
    ]


def test_the_1_s_capture_is_primary_in_its_minute_and_the_5_s_one_around_it() -> None:
    coarse_start = START - pd.Timedelta(minutes=2)
    coarse = collector_vmstat([BOOT] + [QUIET] * 60, coarse_start, step_s=5, member="vmstat-5s.txt")
    fine = ptstalk_vmstat([BOOT] + [QUIET] * 5 + SATURATED[:30] + [QUIET] * 5, START)
    tl = Timeline.from_sources([coarse, fine], ncpu=2)
    vm = tl.frame("vmstat")
    inside = vm[(vm["ts"] >= UTC0) & (vm["ts"] <= UTC0 + pd.Timedelta(seconds=40))]
    assert set(inside["member"].astype(str)) == {fine.member}
    assert (vm["member"].astype(str) == "vmstat-5s.txt").sum() > 40  # the 5 s rows before and after
    assert tl.roles[fine.member].role == "primary"
    assert "a finer interval" in tl.roles["vmstat-5s.txt"].reason
    [finding] = _cpu_saturation(tl)
    alone = _cpu_saturation(
        Timeline.from_sources(
            [ptstalk_vmstat([BOOT] + [QUIET] * 5 + SATURATED[:30] + [QUIET] * 5, START)], ncpu=2
        )
    )
    assert finding.windows == alone[0].windows


def _tar(tmp_path: Path, files: dict[str, str]) -> Path:
    path = tmp_path / "bundle.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_ptstalk_overall_run_is_a_summary_and_a_collector_capture_of_the_same_minute_primary(
    tmp_path: Path,
) -> None:
    prefix = f"{START:%Y_%m_%d_%H_%M_%S}"
    overall = vmstat_rows_text(
        [BOOT, {**SATURATED[0], "r": 45}]
    )  # `vmstat 60 2`: since boot, then the run's mean
    bundle = read_bundle(
        _tar(
            tmp_path,
            {
                f"pt/{prefix}-vmstat": vmstat_rows_text([BOOT] + SATURATED),
                f"pt/{prefix}-vmstat-overall": overall,
                "collect/vmstat-t.txt": vmstat_t_text([BOOT] + SATURATED, START),
            },
        )
    )
    tl = Timeline.from_sources(bundle.sources, ncpu=2, utc_offset_s=0)
    roles = {m.split("/")[-1]: r for m, r in tl.roles.items()}
    assert roles[f"{prefix}-vmstat-overall"].role == "summary"
    assert roles["vmstat-t.txt"].role == "primary"
    assert roles[f"{prefix}-vmstat"].role == "overlap"
    assert "vmstat_overall" not in tl.frames
    [finding] = _cpu_saturation(tl)
    assert finding.windows[0].seconds == 59


def test_a_one_off_ps_beside_a_per_second_listing_is_an_overlap() -> None:
    from parsers import ps
    from tests.analyzer.captures import ps_elo_text

    listing = ps_elo_text([[(3, "D", "mysqld", "unlinkat")]] * 5)
    per_second = ps.parse(listing.splitlines(keepends=True), member="ps-threads.txt", clock=ClockHints())
    one_off = ps.parse(
        ps_elo_text([[(3, "D", "mysqld", "unlinkat")]], first_s=4).splitlines(keepends=True),
        member="2026_04_21_16_51_41-ps",
        clock=ClockHints(),
    )
    tl = Timeline.from_sources([one_off, per_second], ncpu=2)
    assert tl.roles["2026_04_21_16_51_41-ps"].role == "overlap"
    assert set(tl.frame("ps_threads")["member"].astype(str)) == {"ps-threads.txt"}


REAL = SAMPLES / "My-gather" / "pt-stalk" / "example1"


def test_two_real_ptstalk_snapshots_with_overall_runs(tmp_path: Path) -> None:
    """My-gather's example1: two pt-stalk snapshots of one 64-CPU host, 30 s apart, each with
    -vmstat and -vmstat-overall: both -vmstat are primary (they follow each other), both -overall
    runs summaries, and the vmstat series has one row per second."""
    if not REAL.is_dir():
        pytest.skip("../shared/samples is absent")
    files = {f"example1/{p.name}": p.read_text(errors="replace") for p in sorted(REAL.glob("*-vmstat*"))}
    bundle = read_bundle(_tar(tmp_path, files))
    tl = Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu, utc_offset_s=bundle.utc_offset_s)
    roles = {m.split("/")[-1]: r.role for m, r in tl.roles.items()}
    assert sorted(roles.items()) == [
        ("2026_04_21_16_43_19-vmstat", "primary"),
        ("2026_04_21_16_43_19-vmstat-overall", "summary"),
        ("2026_04_21_16_43_49-vmstat", "primary"),
        ("2026_04_21_16_43_49-vmstat-overall", "summary"),
    ]
    vm = tl.frame("vmstat")
    assert vm["ts"].is_unique and vm["ts"].is_monotonic_increasing
