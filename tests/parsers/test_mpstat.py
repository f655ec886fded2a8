"""Tests for parsers/mpstat.py: own fixtures (sysstat 12.6.1), real captures read in place, jc."""

from __future__ import annotations

from pathlib import Path

import jc
import pandas as pd
import pytest

from parsers import mpstat
from parsers.base import Clock, ClockHints, ParseError

NO_HINTS = ClockHints()


def _parse(path: Path, clock: ClockHints = NO_HINTS):
    with path.open(encoding="utf-8") as f:
        return mpstat.parse(f, member=path.name, clock=clock)


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def _codes(src) -> list[str]:
    return [w.code for w in src.warnings]


# --- own fixtures --------------------------------------------------------------------------------


def test_p_all_has_two_reports_of_all_plus_two_cpus(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL.txt")
    cpu = src.frames["mpstat_cpu"]
    assert src.samples == 2
    assert cpu["cpu"].tolist() == [-1, 0, 1, -1, 0, 1]
    assert (src.start, src.end) == (_ts("2026-11-22 12:26:38"), _ts("2026-11-22 12:26:39"))
    assert cpu.loc[0, "usr"] == 67.50 and cpu.loc[1, "sys"] == 15.00


def test_time_of_day_on_header_date_is_local(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL.txt")
    assert src.clock is Clock.HEADER_TIME
    assert src.ts_is_local is True


def test_banner_gives_host_kernel_ncpu_and_date(fixtures: Path) -> None:
    meta = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL.txt").meta
    assert (meta["host"], meta["kernel"], meta["ncpu"], meta["sysstat_date"]) == (
        "vm",
        "6.18.44-fc-v769",
        2,
        "2026-11-22",
    )


def test_average_rows_are_not_samples(fixtures: Path) -> None:
    cpu = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL.txt").frames["mpstat_cpu"]
    assert cpu["line_no"].max() == 11  # the Average: block starts at line 13


def test_iso_banner_date(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL_iso.txt")
    assert src.start == _ts("2026-11-22 12:26:43")
    assert src.frames["mpstat_cpu"].loc[1, "usr"] == 100.0


def test_report_without_interval_is_marked_since_boot(fixtures: Path) -> None:
    cpu = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL_since-boot.txt").frames["mpstat_cpu"]
    assert cpu["since_boot"].tolist() == [True, True, True]
    assert cpu.loc[0, "steal"] == 0.04


def test_interval_reports_are_not_since_boot(fixtures: Path) -> None:
    cpu = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL.txt").frames["mpstat_cpu"]
    assert not cpu["since_boot"].any()


def test_one_header_with_a_row_per_report(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_1_3.txt")
    cpu = src.frames["mpstat_cpu"]
    assert src.samples == 3
    assert cpu["ts"].tolist() == [
        _ts("2026-11-22 12:33:22"),
        _ts("2026-11-22 12:33:23"),
        _ts("2026-11-22 12:33:24"),
    ]
    assert cpu["idle"].tolist() == [48.48, 49.75, 49.00]


def test_ts_markers_give_utc_times(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_P-ALL_ts-markers.txt")
    assert src.clock is Clock.TS_MARKER and src.ts_is_local is False
    assert src.samples == 2
    assert src.start == pd.Timestamp(1795350413066697185, unit="ns", tz="UTC")
    assert src.meta["utc_offset_s"] == 0


def test_i_sum_fills_intr_frame_and_makes_it_main(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_I-SUM_P-ALL.txt")
    intr = src.frames["mpstat_intr"]
    assert next(iter(src.frames)) == "mpstat_intr"
    assert src.samples == 2
    assert intr["intr_per_s"].tolist() == [721.0, 382.0, 352.0, 775.0, 423.0, 365.0]
    assert intr["cpu"].tolist() == [-1, 0, 1, -1, 0, 1]


def test_i_cpu_is_long_hard_irq_rows(fixtures: Path) -> None:
    irq = _parse(fixtures / "mpstat" / "mpstat-12.6.1_I-CPU.txt").frames["mpstat_irq"]
    loc = irq[(irq["irq"] == "LOC") & (irq["cpu"] == 0)]
    assert len(irq) == 70  # 35 IRQ columns x 2 CPUs, Average rows left out
    assert set(irq["kind"]) == {"hard"}
    assert loc["per_s"].tolist() == [263.0]
    assert loc["line_no"].tolist() == [4]


def test_i_scpu_is_soft_irq_rows(fixtures: Path) -> None:
    irq = _parse(fixtures / "mpstat" / "mpstat-12.6.1_I-SCPU.txt").frames["mpstat_irq"]
    block = irq[(irq["irq"] == "BLOCK") & (irq["cpu"] == 1)]
    assert set(irq["kind"]) == {"soft"}
    assert block["per_s"].tolist() == [1219.0]


def test_a_fills_every_frame_and_skips_node(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_A.txt")
    assert [len(src.frames[k]) for k in ("mpstat_cpu", "mpstat_intr", "mpstat_irq")] == [3, 3, 90]
    assert src.meta["node_sections_skipped"] == 1
    assert src.samples == 1


# --- real captures, read in place ------------------------------------------------------------------


@pytest.mark.samples
def test_sysstat_a_four_reports_node_skipped(samples: Path) -> None:
    src = _parse(samples / "sysstat/mpstat/expected.mpstat-A")
    cpu, irq = src.frames["mpstat_cpu"], src.frames["mpstat_irq"]
    assert src.samples == 4
    assert (src.start, src.end) == (_ts("2020-06-01 12:53:21"), _ts("2020-06-01 12:53:24"))
    assert cpu.loc[(cpu["cpu"] == 3), "nice"].iloc[0] == 99.55
    assert irq.loc[(irq["irq"] == "LOC") & (irq["cpu"] == 1), "per_s"].iloc[0] == 11720.31
    assert src.meta["node_sections_skipped"] == 4


@pytest.mark.samples
def test_sysstat_two_digit_year_06_01_20_is_ambiguous(samples: Path) -> None:
    src = _parse(samples / "sysstat/mpstat/expected.mpstat")
    assert src.start == _ts("2020-06-01 12:53:20")
    assert ("ambiguous-date", 1) in [(w.code, w.line_no) for w in src.warnings]


@pytest.mark.samples
def test_sysstat_epoch_rows_are_per_line_utc(samples: Path) -> None:
    src = _parse(samples / "sysstat/mpstat/expected.mpstat-U")
    assert src.clock is Clock.PER_LINE and src.ts_is_local is False
    assert src.samples == 2
    assert src.main["ts"].tolist() == [
        pd.Timestamp(1591016001, unit="s", tz="UTC"),
        pd.Timestamp(1591016002, unit="s", tz="UTC"),
    ]
    assert src.main["usr"].tolist() == [2.15, 2.28]


@pytest.mark.samples
def test_sysstat_topology_columns_ignored(samples: Path) -> None:
    src = _parse(samples / "sysstat/mpstat/expected.mpstat-T")
    cpu = src.frames["mpstat_cpu"]
    assert len(cpu) == 17 and src.samples == 2
    assert "core" not in cpu.columns
    assert cpu.loc[0, "usr"] == 2.15 and cpu.loc[0, "cpu"] == -1
    assert cpu.loc[4, "nice"] == 99.55


@pytest.mark.samples
def test_sysstat_i_all_without_cpu_section(samples: Path) -> None:
    src = _parse(samples / "sysstat/mpstat/expected.mpstat-I")
    assert next(iter(src.frames)) == "mpstat_intr"
    assert src.frames["mpstat_intr"]["intr_per_s"].tolist() == [57.08, 60.37, 73.64, 53.54]
    assert src.frames["mpstat_intr"]["since_boot"].all()


@pytest.mark.samples
def test_jc_centos_12h_times_and_block_iopoll_softirq(samples: Path) -> None:
    src = _parse(samples / "jc/mpstat/centos-7.7/mpstat-A-2-5.out")
    irq = src.frames["mpstat_irq"]
    assert src.samples == 5
    assert (src.start, src.end) == (_ts("2022-03-11 15:16:17"), _ts("2022-03-11 15:16:25"))
    assert irq.loc[irq["irq"] == "BLOCK_IOPOLL", "kind"].unique().tolist() == ["soft"]
    assert src.frames["mpstat_intr"]["intr_per_s"].iloc[0] == 55.5


@pytest.mark.samples
def test_jc_ubuntu_a_one_report_with_node_section(samples: Path) -> None:
    src = _parse(samples / "jc/mpstat/ubuntu-18.04/mpstat-A.out")
    irq = src.frames["mpstat_irq"]
    assert src.samples == 1 and src.start == _ts("2022-03-14 08:50:55")
    assert irq.loc[irq["irq"] == "RCU", "per_s"].tolist() == [1134.22]
    assert src.meta["node_sections_skipped"] == 1
    assert src.frames["mpstat_cpu"]["since_boot"].all()


@pytest.mark.samples
def test_decimal_commas_and_iso_date(samples: Path) -> None:
    src = _parse(samples / "csd_project/mpstat/mpstat.log")
    cpu = src.frames["mpstat_cpu"]
    assert src.samples == 1 and src.start == _ts("2016-12-10 17:06:05")
    assert cpu["usr"].tolist() == [0.56, 0.98, 0.13]
    assert cpu.loc[2, "idle"] == 99.87
    assert src.warnings == []


@pytest.mark.samples
def test_matches_jc_on_the_centos_a_capture(samples: Path) -> None:
    path = samples / "jc/mpstat/centos-7.7/mpstat-A-2-5.out"
    ours = _parse(path)
    theirs = jc.parse("mpstat", path.read_text(), quiet=True)
    jc_cpu = [r for r in theirs if r["type"] == "cpu" and not r.get("average")]
    jc_intr = [r for r in theirs if "intr_s" in r and not r.get("average")]
    jc_loc = [r["loc_s"] for r in theirs if "loc_s" in r and not r.get("average")]
    assert len(jc_cpu) == 10
    cpu, intr = ours.frames["mpstat_cpu"], ours.frames["mpstat_intr"]
    assert cpu["usr"].tolist() == [r["percent_usr"] for r in jc_cpu]
    assert cpu["idle"].tolist() == [r["percent_idle"] for r in jc_cpu]
    assert intr["intr_per_s"].tolist() == [r["intr_s"] for r in jc_intr]
    irq = ours.frames["mpstat_irq"]
    assert irq.loc[irq["irq"] == "LOC", "per_s"].tolist() == jc_loc


# --- variants and oddities, lines retyped or built from the fixtures ------------------------------

BANNER = "Linux 6.18.44-fc-v769 (vm) \t11/22/26 \t_x86_64_\t(2 CPU)"
HEADER_24H = "{t}     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle"
ROW_24H = "{t}     all    2.04    0.00    4.08    0.00    0.00    0.00    0.00    0.00    0.00   93.88"


def test_seed_i_sum_without_blank_lines_12h_clock() -> None:
    # Retyped from shared/seeds/003 (mpstat -I SUM -P ALL 1 on a 32-CPU host).
    lines = [
        "Linux 3.10.0-1127.19.1.el7.x86_64 (yejr.run)  09/28/2020  _x86_64_ (32 CPU)",
        "05:37:40 PM  CPU    intr/s",
        "05:37:41 PM  all  51833.00",
        "05:37:41 PM    0   2069.00",
        "05:37:41 PM    1   1159.00",
    ]
    src = mpstat.parse(lines, member="seed003", clock=NO_HINTS)
    intr = src.frames["mpstat_intr"]
    assert intr["intr_per_s"].tolist() == [51833.0, 2069.0, 1159.0]
    assert src.start == _ts("2020-09-28 17:37:41")
    assert src.meta["ncpu"] == 32


def test_midnight_roll_over_moves_to_next_day() -> None:
    lines = [
        BANNER,
        "",
        HEADER_24H.format(t="23:59:58"),
        ROW_24H.format(t="23:59:59"),
        ROW_24H.format(t="00:00:00"),
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert src.main["ts"].tolist() == [_ts("2026-11-22 23:59:59"), _ts("2026-11-23 00:00:00")]


def test_sysstat_7_columns_with_trailing_intr() -> None:
    lines = [
        "Linux 2.6.18-194.el5 (db1) \t02/29/12",
        "",
        "11:00:01     CPU   %user   %nice    %sys %iowait    %irq   %soft  %steal   %idle    intr/s",
        "11:00:02     all    1.00    0.00    0.50    0.25    0.00    0.00    0.00   98.25   1020.00",
        "11:00:02       0    2.00    0.00    1.00    0.50    0.00    0.00    0.00   96.50    510.00",
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    cpu, intr = src.frames["mpstat_cpu"], src.frames["mpstat_intr"]
    assert cpu["usr"].tolist() == [1.0, 2.0] and cpu["sys"].tolist() == [0.5, 1.0]
    assert "gnice" not in cpu.columns
    assert intr["intr_per_s"].tolist() == [1020.0, 510.0]
    assert src.start == _ts("2012-02-29 11:00:02")


def test_day_first_date_decided_from_values() -> None:
    lines = [
        BANNER.replace("11/22/26", "21/04/2026"),
        "",
        HEADER_24H.format(t="10:00:00"),
        ROW_24H.format(t="10:00:01"),
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert src.start == _ts("2026-04-21 10:00:01")
    assert "ambiguous-date" not in _codes(src)


def test_ambiguous_date_decided_by_start_hint() -> None:
    lines = [
        BANNER.replace("11/22/26", "04/05/2026"),
        "",
        HEADER_24H.format(t="10:00:00"),
        ROW_24H.format(t="10:00:01"),
    ]
    hint = ClockHints(start_local=pd.Timestamp("2026-05-04 09:59:00"))
    src = mpstat.parse(lines, member="m", clock=hint)
    assert src.start == _ts("2026-05-04 10:00:01")
    assert src.meta["date_order"] == "DMY"


def test_ambiguous_date_assumes_month_first_and_warns() -> None:
    lines = [
        BANNER.replace("11/22/26", "04/05/2026"),
        "",
        HEADER_24H.format(t="10:00:00"),
        ROW_24H.format(t="10:00:01"),
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert src.start == _ts("2026-04-05 10:00:01")
    assert "ambiguous-date" in _codes(src)


def test_pdsh_prefix_keeps_first_host_and_warns() -> None:
    lines = [
        f"db1: {BANNER}",
        "db1: ",
        "db1: " + HEADER_24H.format(t="10:00:00"),
        "db2: " + ROW_24H.format(t="10:00:01"),
        "db1: " + ROW_24H.format(t="10:00:01"),
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert src.main["line_no"].tolist() == [5]
    assert src.meta["pdsh_host"] == "db1"
    assert "other-hosts" in _codes(src)


def test_leading_space_lines_are_read() -> None:
    lines = [" " + BANNER, " ", " " + HEADER_24H.format(t="10:00:00"), " " + ROW_24H.format(t="10:00:01")]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert src.main["usr"].tolist() == [2.04]


def test_short_row_warns_with_its_line_number() -> None:
    lines = [
        BANNER,
        "",
        HEADER_24H.format(t="10:00:00"),
        ROW_24H.format(t="10:00:01"),
        "10:00:01       0    2.02",
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert len(src.main) == 1
    assert [(w.line_no, w.code) for w in src.warnings] == [(5, "bad-row")]


def test_bad_number_warns_with_its_line_number() -> None:
    row = ROW_24H.format(t="10:00:01").replace("93.88", "9x.88")
    lines = [BANNER, "", HEADER_24H.format(t="10:00:00"), ROW_24H.format(t="10:00:01"), row]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert len(src.main) == 1
    assert [(w.line_no, w.code) for w in src.warnings] == [(5, "bad-number")]


def test_unknown_column_is_kept_and_warned() -> None:
    lines = [
        BANNER,
        "",
        "10:00:00     CPU    %usr   %idle   %wait",
        "10:00:01     all    2.00   97.00    1.00",
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert src.main["wait_pct"].tolist() == [1.0]
    assert [(w.line_no, w.code) for w in src.warnings] == [(3, "unknown-column")]


def test_not_mpstat_raises_with_line_number() -> None:
    with pytest.raises(ParseError) as err:
        mpstat.parse(["", "procs -----------memory----------"], member="vmstat.txt", clock=NO_HINTS)
    assert err.value.line_no == 2


def test_empty_member_gives_empty_frames_and_a_warning() -> None:
    src = mpstat.parse([], member="m", clock=NO_HINTS)
    assert src.samples == 0 and len(src.frames["mpstat_cpu"]) == 0
    assert _codes(src) == ["empty"]


def test_sniff_accepts_mpstat_and_rejects_iostat(fixtures: Path) -> None:
    head = (fixtures / "mpstat" / "mpstat-12.6.1_I-SUM_P-ALL.txt").read_text().splitlines()
    assert mpstat.sniff(["TS 1795350413.066 2026-11-22 12:26:53", *head]) is True
    iostat_head = (fixtures / "iostat" / "iostat-12.6.1_x.txt").read_text().splitlines()
    assert mpstat.sniff(iostat_head) is False


def test_collector_one_ts_line_before_a_continuous_run(fixtures: Path) -> None:
    # scripts/collect.sh writes one TS line, then execs `mpstat -P ALL I N`: the rows keep their
    # own clock and the marker gives the server's UTC offset (+01:00 here).
    lines = (fixtures / "mpstat" / "mpstat-12.6.1_P-ALL.txt").read_text().splitlines()
    src = mpstat.parse(["TS 1795350397.2 2026-11-22 13:26:37", *lines], member="mpstat.txt", clock=NO_HINTS)
    assert src.clock is Clock.HEADER_TIME and src.ts_is_local is True
    assert src.start == _ts("2026-11-22 12:26:38")
    assert src.meta["utc_offset_s"] == 3600


def test_variant_names_the_options(fixtures: Path) -> None:
    src = _parse(fixtures / "mpstat" / "mpstat-12.6.1_I-SUM_P-ALL.txt")
    assert src.meta["variant"] == "mpstat -I SUM -P ALL"


def test_variant_names_the_locale() -> None:
    lines = [
        "Linux 5.14.0-611 (node0) \t13.03.2026 \t_x86_64_\t(2 CPU)",
        "",
        "03:14:19 PM  CPU    %usr   %idle",
        "03:14:20 PM  all    0,56   99,44",
    ]
    src = mpstat.parse(lines, member="m", clock=NO_HINTS)
    assert src.meta["variant"] == "mpstat, decimal comma, 12 h AM/PM times, DD.MM.YYYY dates"
