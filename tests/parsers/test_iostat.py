"""Tests for parsers/iostat.py: own fixtures (sysstat 12.6.1), real captures read in place, jc."""

from __future__ import annotations

import bz2
from pathlib import Path

import jc
import pandas as pd
import pytest

from parsers import iostat
from parsers.base import Clock, ClockHints, ParseError

NO_HINTS = ClockHints()
KIB = 1024


def _parse(path: Path, clock: ClockHints = NO_HINTS):
    opener = bz2.open if path.suffix == ".bz2" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return iostat.parse(f, member=path.name, clock=clock)


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def _codes(src) -> list[str]:
    return [w.code for w in src.warnings]


# --- own fixtures --------------------------------------------------------------------------------


def test_x_reads_devices_and_avg_cpu(fixtures: Path) -> None:
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_x.txt")
    dev, cpu = src.frames["iostat"], src.frames["iostat_cpu"]
    assert len(dev) == 2 and len(cpu) == 2
    assert dev["device"].tolist() == ["vda", "vda"]
    assert dev.loc[1, "w_bytes_per_s"] == 614400.00 * KIB
    assert dev.loc[1, "wareq_sz_kib"] == 1024.00
    assert cpu.loc[1, "iowait"] == 19.80


def test_first_report_is_since_boot(fixtures: Path) -> None:
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_x.txt")
    assert src.frames["iostat"]["since_boot"].tolist() == [True, False]
    assert src.frames["iostat_cpu"]["since_boot"].tolist() == [True, False]


def test_sysstat_12_discard_and_flush_columns(fixtures: Path) -> None:
    dev = _parse(fixtures / "iostat" / "iostat-12.6.1_x.txt").frames["iostat"]
    for col in ("d_per_s", "d_bytes_per_s", "d_await", "dareq_sz_kib", "f_per_s", "f_await", "drqm_pct"):
        assert col in dev.columns
    assert "svctm" not in dev.columns


def test_t_stamps_are_per_line_local(fixtures: Path) -> None:
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_xt.txt")
    assert src.clock is Clock.PER_LINE and src.ts_is_local is True
    assert (src.start, src.end) == (_ts("2026-11-22 12:26:45"), _ts("2026-11-22 12:26:46"))
    assert src.frames["iostat"].loc[0, "r_bytes_per_s"] == 4252.67 * KIB


def test_iso_t_stamps_with_offset_are_true_utc(fixtures: Path) -> None:
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_xt_iso.txt")
    assert src.clock is Clock.PER_LINE and src.ts_is_local is False
    assert (src.start, src.end) == (_ts("2026-11-22 12:26:57"), _ts("2026-11-22 12:26:58"))
    assert src.meta["utc_offset_s"] == 0


def test_m_units_become_bytes(fixtures: Path) -> None:
    dev = _parse(fixtures / "iostat" / "iostat-12.6.1_dxm.txt").frames["iostat"]
    assert dev.loc[0, "r_bytes_per_s"] == 4.18 * KIB * KIB
    assert dev.loc[1, "w_bytes_per_s"] == 0.01 * KIB * KIB


def test_no_times_use_start_plus_interval(fixtures: Path) -> None:
    hints = ClockHints(start_local=pd.Timestamp("2026-11-22 12:26:50"), interval_s=1.0)
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_dx_no-times.txt", hints)
    assert src.clock is Clock.INFERRED and src.ts_is_local is True
    assert src.main["ts"].tolist() == [
        _ts("2026-11-22 12:26:50"),
        _ts("2026-11-22 12:26:51"),
        _ts("2026-11-22 12:26:52"),
    ]
    assert src.warnings == []


def test_no_times_and_no_start_go_to_epoch_with_warning(fixtures: Path) -> None:
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_dx_no-times.txt")
    assert src.start == _ts("1970-01-01 00:00:00")
    assert _codes(src) == ["assumed-interval", "no-start-time"]


def test_ts_marker_before_every_report(fixtures: Path) -> None:
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_dx_ts-markers.txt")
    assert src.clock is Clock.TS_MARKER and src.ts_is_local is False
    assert src.main["ts"].tolist() == [
        pd.Timestamp(1795350420092802137, unit="ns", tz="UTC"),
        pd.Timestamp(1795350420097400599, unit="ns", tz="UTC"),
    ]
    assert src.main["since_boot"].tolist() == [True, True]  # each run's only report


def test_one_marker_then_untimed_reports_are_inferred_from_it(fixtures: Path) -> None:
    lines = (fixtures / "iostat" / "iostat-12.6.1_dx_no-times.txt").read_text().splitlines()
    src = iostat.parse(
        ["TS 1795350410.5 2026-11-22 12:26:50", *lines], member="m", clock=ClockHints(interval_s=1.0)
    )
    assert src.clock is Clock.INFERRED and src.ts_is_local is False
    assert src.main["ts"].tolist() == [
        pd.Timestamp(1795350410.5, unit="s", tz="UTC"),
        pd.Timestamp(1795350411.5, unit="s", tz="UTC"),
        pd.Timestamp(1795350412.5, unit="s", tz="UTC"),
    ]


def test_short_report(fixtures: Path) -> None:
    dev = _parse(fixtures / "iostat" / "iostat-12.6.1_dxs.txt").frames["iostat"]
    assert dev.loc[0, "tps"] == 337.51
    assert dev.loc[0, "bytes_per_s"] == 23897.08 * KIB
    assert (dev.loc[0, "rqm_per_s"], dev.loc[0, "areq_sz_kib"], dev.loc[0, "aqu_sz"]) == (198.25, 70.80, 0.15)


def test_human_units_with_device_last(fixtures: Path) -> None:
    dev = _parse(fixtures / "iostat" / "iostat-12.6.1_dh.txt").frames["iostat"]
    assert dev["device"].tolist() == ["vda", "vda"]
    assert dev.loc[0, "r_bytes_per_s"] == pytest.approx(4.2 * KIB**2)
    assert dev.loc[0, "w_bytes"] == pytest.approx(4.0 * KIB**3)
    assert dev.loc[1, "d_bytes_per_s"] == pytest.approx(56.0 * KIB)


# --- real captures, read in place ------------------------------------------------------------------


@pytest.mark.samples
def test_iostatplot_xmt_180_reports_12h_stamps(samples: Path) -> None:
    src = _parse(samples / "iostatplot/iostat/iostat.out")
    dev = src.frames["iostat"]
    assert src.samples == 180 and src.clock is Clock.PER_LINE
    assert (src.start, src.end) == (_ts("2016-03-15 09:34:00"), _ts("2016-03-15 09:36:59"))
    assert dev.loc[0, "r_bytes_per_s"] == 0.13 * KIB * KIB
    assert (dev.loc[0, "svctm"], dev.loc[0, "areq_sz_kib"]) == (1.06, 111.93 / 2)


@pytest.mark.samples
def test_pdsh_output_keeps_the_first_host(samples: Path) -> None:
    src = _parse(samples / "iostatplot/iostat/iostat2.out")
    assert src.samples == 4 and src.meta["pdsh_host"] == "object3"
    assert (src.start, src.end) == (_ts("2016-03-15 20:12:48"), _ts("2016-03-15 20:13:03"))
    assert src.frames["iostat"].loc[0, "r_per_s"] == 15.92
    assert "other-hosts" in _codes(src)


@pytest.mark.samples
def test_leading_space_on_every_line(samples: Path) -> None:
    src = _parse(samples / "iostatplot/iostat/iostat3.out")
    assert src.samples == 4
    assert (src.start, src.end) == (_ts("2016-03-15 20:54:35"), _ts("2016-03-15 20:54:50"))
    assert src.frames["iostat"].loc[1, "r_per_s"] == 144.60
    assert src.frames["iostat_cpu"].loc[0, "user"] == 4.63


@pytest.mark.samples
def test_sysbench_transitional_columns(samples: Path) -> None:
    hints = ClockHints(start_local=pd.Timestamp("2018-10-23 10:00:00"), interval_s=1.0)
    src = _parse(samples / "hustjieke-sysbench/iostat/iostat.txt", hints)
    dev = src.frames["iostat"]
    assert src.samples == 160 and len(dev) == 480
    assert (src.start, src.end) == (_ts("2018-10-23 10:00:00"), _ts("2018-10-23 10:02:39"))
    assert dev.loc[0, "w_bytes_per_s"] == 23906.67 * KIB
    assert dev.loc[2, "util_pct"] == 10.48
    assert src.meta["ncpu"] == 24


@pytest.mark.samples
def test_pt_stalk_decimal_commas_and_dotted_date(samples: Path) -> None:
    hints = ClockHints(start_local=pd.Timestamp("2026-04-21 16:43:19"), interval_s=1.0)
    src = _parse(samples / "My-gather/pt-stalk/example1/2026_04_21_16_43_19-iostat", hints)
    dev = src.frames["iostat"]
    assert src.samples == 30 and len(dev) == 240
    assert (src.start, src.end) == (_ts("2026-04-21 16:43:19"), _ts("2026-04-21 16:43:48"))
    assert dev.loc[2, ["device", "r_per_s"]].tolist() == ["dm-2", 567.07]
    assert src.meta["sysstat_date"] == "2026-03-13" and src.meta["ncpu"] == 64


@pytest.mark.samples
def test_pt_stalk_example2_iostat(samples: Path) -> None:
    hints = ClockHints(start_local=pd.Timestamp("2026-04-21 16:51:41"), interval_s=1.0)
    src = _parse(samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-iostat", hints)
    assert src.samples == 30
    assert (src.start, src.end) == (_ts("2026-04-21 16:51:41"), _ts("2026-04-21 16:52:10"))
    assert src.frames["iostat"].loc[6, "r_bytes_per_s"] == 15745.42 * KIB


@pytest.mark.samples
def test_oswatcher_sysstat7_with_time_lines(samples: Path) -> None:
    src = _parse(samples / "plot-oswatcher/oswatcher-iostat/dm02cel01.aim.com_iostat_12.02.29.1100.dat.bz2")
    dev = src.frames["iostat"]
    assert src.samples == 720 and src.clock is Clock.HEADER_TIME
    assert (src.start, src.end) == (_ts("2012-02-29 11:01:52"), _ts("2012-02-29 12:01:47"))
    assert dev.loc[0, "r_bytes_per_s"] == 3378.88 * 512
    assert dev.loc[0, "areq_sz_kib"] == 154.81 / 2
    assert "r_await" not in dev.columns


@pytest.mark.samples
def test_sysstat_c_t_only_cpu_frame(samples: Path) -> None:
    src = _parse(samples / "sysstat/iostat/expected.iostat-ct")
    assert next(iter(src.frames)) == "iostat_cpu"
    assert src.samples == 2
    assert (src.start, src.end) == (_ts("2020-06-01 12:53:20"), _ts("2020-06-01 12:53:21"))


@pytest.mark.samples
def test_sysstat_h_human_units(samples: Path) -> None:
    dev = _parse(samples / "sysstat/iostat/expected.iostat-h").frames["iostat"]
    assert len(dev) == 22
    assert dev.loc[0, "r_bytes_per_s"] == pytest.approx(222.1 * KIB)
    assert dev.loc[0, "r_bytes"] == pytest.approx(1.5 * KIB**3)


@pytest.mark.samples
def test_jc_centos_device_colon_and_avgrq_sectors(samples: Path) -> None:
    dev = _parse(samples / "jc/iostat/centos-7.7/iostat-x.out").frames["iostat"]
    assert dev["device"].tolist() == ["sda", "dm-0", "dm-1"]
    assert dev.loc[0, "areq_sz_kib"] == 52.53 / 2
    assert dev.loc[0, "aqu_sz"] == 0.0 and dev.loc[0, "svctm"] == 0.52


@pytest.mark.samples
def test_matches_jc_on_the_sysbench_capture(samples: Path) -> None:
    path = samples / "hustjieke-sysbench/iostat/iostat.txt"
    ours = _parse(path).frames["iostat"]
    theirs = [r for r in jc.parse("iostat", path.read_text(), quiet=True) if r["type"] == "device"]
    assert ours["device"].tolist() == [r["device"] for r in theirs]
    assert ours["r_per_s"].tolist() == [r["r_s"] for r in theirs]
    assert ours["w_bytes_per_s"].tolist() == [r["wkb_s"] * KIB for r in theirs]
    assert ours["aqu_sz"].tolist() == [r["aqu_sz"] for r in theirs]
    assert ours["util_pct"].tolist() == [r["percent_util"] for r in theirs]


# --- variants and oddities -----------------------------------------------------------------------

BANNER = "Linux 3.10.0-1062.1.2.el7.x86_64 (localhost.localdomain) \t11/30/2021 \t_x86_64_\t(1 CPU)"


def test_old_h_device_name_alone_on_its_line() -> None:
    lines = [
        BANNER,
        "",
        "Device:            tps    kB_read/s    kB_wrtn/s    kB_read    kB_wrtn",
        "sda",
        "                  0.24         5.28         1.10     203305      42368",
    ]
    dev = iostat.parse(lines, member="m", clock=NO_HINTS).frames["iostat"]
    assert dev[["device", "tps", "line_no"]].values.tolist() == [["sda", 0.24, 4]]
    assert dev.loc[0, "r_bytes"] == 203305 * KIB


def test_short_row_warns_with_its_line_number() -> None:
    lines = [
        BANNER,
        "",
        "Device:            tps    kB_read/s    kB_wrtn/s    kB_read    kB_wrtn",
        "sda               0.24         5.28         1.10     203305      42368",
        "dm-0              0.25         4.42",
    ]
    src = iostat.parse(lines, member="m", clock=NO_HINTS)
    assert src.main["device"].tolist() == ["sda"]
    assert [(w.line_no, w.code) for w in src.warnings if w.code == "bad-row"] == [(5, "bad-row")]


def test_unknown_column_is_kept_and_warned() -> None:
    lines = [BANNER, "", "Device   r/s   foo/s", "sda      1.00   2.00"]
    src = iostat.parse(lines, member="m", clock=NO_HINTS)
    assert src.main["foo_per_s"].tolist() == [2.0]
    assert (3, "unknown-column") in [(w.line_no, w.code) for w in src.warnings]


def test_not_iostat_raises_with_line_number() -> None:
    with pytest.raises(ParseError) as err:
        iostat.parse(["", "", "hello world"], member="x.txt", clock=NO_HINTS)
    assert err.value.line_no == 3


def test_empty_member_gives_empty_frames_and_a_warning() -> None:
    src = iostat.parse([], member="m", clock=NO_HINTS)
    assert src.samples == 0 and len(src.frames["iostat"]) == 0
    assert _codes(src) == ["empty"]


def test_sniff_accepts_iostat_and_rejects_mpstat(fixtures: Path) -> None:
    head = (fixtures / "iostat" / "iostat-12.6.1_dx_ts-markers.txt").read_text().splitlines()
    assert iostat.sniff(head) is True
    mp_head = (fixtures / "mpstat" / "mpstat-12.6.1_P-ALL.txt").read_text().splitlines()
    assert iostat.sniff(mp_head) is False


def test_collector_one_ts_line_before_iso_stamped_run(fixtures: Path) -> None:
    # scripts/collect.sh writes one TS line, then execs `iostat -dxk -t I N` with S_TIME_FORMAT=ISO.
    lines = (fixtures / "iostat" / "iostat-12.6.1_xt_iso.txt").read_text().splitlines()
    src = iostat.parse(["TS 1795350416.9 2026-11-22 12:26:56", *lines], member="iostat.txt", clock=NO_HINTS)
    assert src.clock is Clock.PER_LINE and src.ts_is_local is False
    assert (src.start, src.end) == (_ts("2026-11-22 12:26:57"), _ts("2026-11-22 12:26:58"))
    assert src.main["since_boot"].tolist() == [True, False]


def test_variant_names_sysstat_12_columns(fixtures: Path) -> None:
    src = _parse(fixtures / "iostat" / "iostat-12.6.1_x.txt")
    assert src.meta["variant"] == "sysstat 12 -x (r_await, aqu-sz, d/s, f/s)"


def test_variant_names_older_extended_columns() -> None:
    lines = [
        "Linux 3.10.0-1062 (db1) \t04/21/2026 \t_x86_64_\t(2 CPU)",
        "",
        "Device:  rrqm/s wrqm/s  r/s  w/s rkB/s wkB/s avgrq-sz avgqu-sz await r_await w_await svctm %util",
        "sda        0.00   0.10 1.00 2.00  4.00  8.00     8.00     0.01  0.50    0.40    0.55  0.30  0.09",
    ]
    src = iostat.parse(lines, member="m", clock=NO_HINTS)
    assert src.meta["variant"] == "sysstat 10-11 -dx (avgqu-sz, svctm)"
