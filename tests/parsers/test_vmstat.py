"""parsers/vmstat.py: every accepted variant, the real samples, warnings, errors."""

from __future__ import annotations

from pathlib import Path

import jc
import numpy as np
import pandas as pd
import pytest

from parsers import vmstat
from parsers.base import Clock, ClockHints, ParseError

START = pd.Timestamp("2026-04-21 16:43:19")
HINTS = ClockHints(start_local=START, interval_s=1.0)
UTC = "UTC"


def _parse(path: Path, clock: ClockHints = HINTS, **kw: object) -> vmstat.ParsedSource:
    with path.open() as fh:
        return vmstat.parse(fh, member=path.name, clock=clock, **kw)


def _ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz=UTC)


# ---------------------------------------------------------------------------------------------
# sniff
# ---------------------------------------------------------------------------------------------
def test_sniff_accepts_a_header_after_ts_and_banner_lines(fixtures: Path) -> None:
    head = (fixtures / "vmstat" / "procps-ng-4.0.2_1_2_ts-markers.txt").read_text().splitlines()
    assert vmstat.sniff(head)


@pytest.mark.parametrize("bsd", ["freebsd_001", "netbsd_001", "openbsd_001"])
def test_sniff_rejects_bsd_vmstat(samples: Path, bsd: str) -> None:
    head = (samples / "percona-toolkit/pt-summary/BSD" / bsd / "vmstat").read_text().splitlines()
    assert not vmstat.sniff(head)


def test_sniff_rejects_vmstat_disk_mode(samples: Path) -> None:
    head = (samples / "jc/vmstat/centos-7.7/vmstat-dt.out").read_text().splitlines()
    assert not vmstat.sniff(head)


# ---------------------------------------------------------------------------------------------
# own fixtures (procps-ng 4.0.2)
# ---------------------------------------------------------------------------------------------
def test_plain_report_infers_times_from_the_start_hint(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_1_3.txt")
    df = src.main
    assert len(df) == 3
    assert df["ts"].tolist() == [
        _ts("2026-04-21 16:43:19"),
        _ts("2026-04-21 16:43:20"),
        _ts("2026-04-21 16:43:21"),
    ]
    assert src.clock is Clock.INFERRED and src.ts_is_local
    assert df["ts_source"].tolist() == ["inferred"] * 3


def test_plain_report_reads_first_row_values(fixtures: Path) -> None:
    row = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_1_3.txt").main.iloc[0]
    assert (row["line_no"], row["r"], row["b"], row["free_kib"], row["cache_kib"]) == (
        3,
        66,
        0,
        23722348,
        623524,
    )
    assert (row["bi"], row["bo"], row["in"], row["cs"], row["us"], row["id"], row["st"]) == (
        2144,
        6483,
        570,
        1587,
        16,
        78,
        0,
    )


def test_first_row_of_a_run_is_marked_since_boot(fixtures: Path) -> None:
    df = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_1_3.txt").main
    assert df["since_boot"].tolist() == [True, False, False]


def test_t_flag_gives_per_line_utc_times(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_t_1_3.txt")
    assert src.clock is Clock.PER_LINE and not src.ts_is_local
    assert src.meta["timezone"] == "UTC"
    assert src.start == _ts("2026-11-22 12:27:06") and src.end == _ts("2026-11-22 12:27:08")
    assert src.main["ts_source"].tolist() == ["line"] * 3


def test_t_flag_in_a_local_zone_is_marked_local(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_t_1_2_pst.txt")
    assert src.ts_is_local and src.meta["timezone"] == "PST"
    assert src.start == _ts("2026-11-22 04:27:12")


def test_wide_active_layout_reads_inact_active_and_gu(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_w_a_1_3.txt")
    df = src.main
    assert "buff_kib" not in df and "cache_kib" not in df
    assert (df["inact_kib"].iat[0], df["active_kib"].iat[0], df["gu"].iat[0]) == (450520, 226512, 0)
    assert src.meta["variant"] == "procps-ng 4 wide -a"
    assert src.meta["columns"][-1] == "gu"


def test_s_m_unit_is_converted_to_kib_when_given(fixtures: Path) -> None:
    df = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_S_m_1_3.txt", unit="m").main
    assert df["free_kib"].iat[0] == pytest.approx(24248 * 1_000_000 / 1024)
    assert df["cs"].iat[0] == 1785  # not a memory column: untouched


def test_oswatcher_zzz_markers_start_new_runs(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_1_3_oswatcher-zzz.txt")
    df = src.main
    assert src.clock is Clock.TS_MARKER and src.ts_is_local  # zzz carries the wall clock only
    assert df["since_boot"].tolist() == [True, False, False, True, False, False]
    assert df["ts"].iat[0] == _ts("2026-11-22 12:27:13") and df["ts"].iat[2] == _ts("2026-11-22 12:27:15")
    assert df["ts"].iat[3] == _ts("2026-11-22 12:27:15") and df["line_no"].iat[3] == 10


def test_ts_markers_give_utc_times(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_1_2_ts-markers.txt")
    df = src.main
    assert src.clock is Clock.TS_MARKER and not src.ts_is_local
    assert df["ts"].iat[0] == pd.Timestamp(1795350437454900741, unit="ns", tz=UTC)
    assert df["ts"].iat[3] == pd.Timestamp(1795350438460263823 + 1_000_000_000, unit="ns", tz=UTC)
    assert df["since_boot"].tolist() == [True, False, True, False]
    assert src.meta["utc_offset_s"] == 0


def test_no_start_time_counts_from_the_epoch_with_a_warning(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_1_3.txt", clock=ClockHints())
    assert src.start == _ts("1970-01-01 00:00:00")
    assert [w.code for w in src.warnings] == ["no-start-time"]


# ---------------------------------------------------------------------------------------------
# oddities, errors
# ---------------------------------------------------------------------------------------------
HEADER = [
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----",
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st",
]
ROW = " 1  0      0 491008 199604 741304    0    0     2     1  147   54  4  1 95  0  0"


def test_unreadable_line_warns_with_its_line_number() -> None:
    src = vmstat.parse([*HEADER, ROW, "vmstat: killed", ROW], member="v", clock=HINTS)
    assert len(src.main) == 2
    assert [(w.line_no, w.code) for w in src.warnings] == [(4, "unreadable-line")]


def test_short_row_warns_and_is_skipped() -> None:
    src = vmstat.parse([*HEADER, ROW, " 1  0      0 4910", ROW], member="v", clock=HINTS)
    assert src.main["line_no"].tolist() == [3, 5]
    assert [(w.line_no, w.code) for w in src.warnings] == [(4, "short-row")]


def test_long_row_warns_and_is_skipped() -> None:
    src = vmstat.parse([*HEADER, ROW, ROW + "  7", ROW], member="v", clock=HINTS)
    assert src.main["line_no"].tolist() == [3, 5]
    assert [(w.line_no, w.code) for w in src.warnings] == [(4, "long-row")]


def test_bad_number_warns_and_is_skipped() -> None:
    src = vmstat.parse([*HEADER, ROW, ROW.replace("147", "1x7"), ROW], member="v", clock=HINTS)
    assert src.main["line_no"].tolist() == [3, 5]
    assert [(w.line_no, w.code) for w in src.warnings] == [(4, "bad-number")]


def test_unknown_column_is_kept_with_a_warning() -> None:
    header = [HEADER[0], HEADER[1] + " zz"]
    src = vmstat.parse([*header, ROW + "  3"], member="v", clock=HINTS)
    assert src.main["zz"].iat[0] == 3
    assert [(w.line_no, w.code) for w in src.warnings] == [(2, "unknown-column")]


def test_row_before_any_header_raises_with_its_line_number() -> None:
    with pytest.raises(ParseError) as err:
        vmstat.parse(["", ROW], member="v", clock=HINTS)
    assert err.value.line_no == 2


def test_bsd_layout_raises(samples: Path) -> None:
    with pytest.raises(ParseError) as err:
        _parse(samples / "percona-toolkit/pt-summary/BSD/freebsd_001/vmstat")
    assert err.value.line_no == 2


def test_empty_input_gives_an_empty_frame() -> None:
    src = vmstat.parse([], member="v", clock=HINTS)
    assert len(src.main) == 0 and list(src.main.columns[:3]) == ["ts", "line_no", "since_boot"]
    assert [w.code for w in src.warnings] == ["empty"]


def test_file_object_and_list_of_lines_give_the_same_frame(samples: Path) -> None:
    path = samples / "201701-meltdown-OLTP-ro/vmstat/thr128-vmstat.out"
    from_file = _parse(path).main
    from_list = vmstat.parse(path.read_text().splitlines(), member="v", clock=HINTS).main
    pd.testing.assert_frame_equal(from_file, from_list)


def test_chunks_split_anywhere_give_the_same_frame(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = samples / "201701-meltdown-OLTP-ro/vmstat/thr128-vmstat.out"
    whole = _parse(path).main
    monkeypatch.setattr(vmstat, "CHUNK_CHARS", 997)  # a prime: chunks end mid-line
    pd.testing.assert_frame_equal(_parse(path).main, whole)


# ---------------------------------------------------------------------------------------------
# real samples
# ---------------------------------------------------------------------------------------------
SAMPLES = [
    # path, rows, first ts, last ts, since_boot rows
    (
        "My-gather/pt-stalk/example1/2026_04_21_16_43_19-vmstat",
        30,
        "2026-04-21 16:43:19",
        "2026-04-21 16:43:48",
        1,
    ),
    (
        "My-gather/pt-stalk/example2/2026_04_21_16_51_41-vmstat",
        30,
        "2026-04-21 16:43:19",
        "2026-04-21 16:43:48",
        1,
    ),
    (
        "201701-meltdown-OLTP-ro/vmstat/thr128-vmstat.out",
        901,
        "2026-04-21 16:43:19",
        "2026-04-21 16:58:19",
        1,
    ),
    ("percona-toolkit/pt-summary/Linux/001/vmstat", 5, "2026-04-21 16:43:19", "2026-04-21 16:43:23", 1),
    ("percona-toolkit/pt-summary/Linux/002/vmstat", 5, "2026-04-21 16:43:19", "2026-04-21 16:43:23", 1),
    ("percona-toolkit/pt-summary/Linux/005/vmstat", 5, "2026-04-21 16:43:19", "2026-04-21 16:43:23", 1),
    ("percona-toolkit/pt-align/002-raw.txt", 5, "2026-04-21 16:43:19", "2026-04-21 16:43:23", 1),
    ("jc/vmstat/ubuntu-18.04/vmstat-1-long.out", 37, "2026-04-21 16:43:19", "2026-04-21 16:43:55", 1),
    ("jc/vmstat/centos-7.7/vmstat.out", 1, "2026-04-21 16:43:19", "2026-04-21 16:43:19", 1),
    ("jc/vmstat/centos-7.7/vmstat-w.out", 1, "2026-04-21 16:43:19", "2026-04-21 16:43:19", 1),
    ("jc/vmstat/generic/vmstat-extra-wide.out", 1, "2026-04-21 16:43:19", "2026-04-21 16:43:19", 1),
    ("jc/vmstat/centos-7.7/vmstat-a.out", 1, "2026-04-21 16:43:19", "2026-04-21 16:43:19", 1),
    ("jc/vmstat/centos-7.7/vmstat-awt.out", 1, "2021-09-16 20:31:30", "2021-09-16 20:31:30", 1),
    ("jc/vmstat/centos-7.7/vmstat-at-5-10.out", 4, "2021-09-16 20:33:13", "2021-09-16 20:33:28", 1),
]


@pytest.mark.samples
@pytest.mark.parametrize(("rel", "rows", "first", "last", "boot"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_sample_counts_and_window(
    samples: Path, rel: str, rows: int, first: str, last: str, boot: int
) -> None:
    src = _parse(samples / rel)
    assert src.samples == rows
    assert (src.start, src.end) == (_ts(first), _ts(last))
    assert int(src.main["since_boot"].sum()) == boot
    assert src.warnings == []


@pytest.mark.samples
def test_old_procps_without_st_has_no_st_column(samples: Path) -> None:
    src = _parse(samples / "percona-toolkit/pt-summary/Linux/001/vmstat")
    assert "st" not in src.main and src.meta["variant"] == "procps (no st)"


@pytest.mark.samples
def test_trailing_tabs_and_repeated_headers_keep_every_row(samples: Path) -> None:
    df = _parse(samples / "201701-meltdown-OLTP-ro/vmstat/thr128-vmstat.out").main
    assert (df["line_no"].iat[0], df["line_no"].iat[-1]) == (3, 987)
    assert (df["r"].iat[-1], df["cs"].iat[-1]) == (136, 253236)
    assert df["since_boot"].iat[21] == np.False_  # first row after the first repeated header


@pytest.mark.samples
def test_pt_stalk_sample_values(samples: Path) -> None:
    df = _parse(samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-vmstat").main
    assert (df["r"].iat[0], df["free_kib"].iat[0], df["cs"].iat[0]) == (12, 104588800, 1)
    assert (df["bo"].iat[7], df["cs"].iat[7], df["wa"].iat[7]) == (106892, 160243, 2)


JC_KEYS = {
    "runnable_procs": "r",
    "uninterruptible_sleeping_procs": "b",
    "virtual_mem_used": "swpd_kib",
    "free_mem": "free_kib",
    "buffer_mem": "buff_kib",
    "cache_mem": "cache_kib",
    "inactive_mem": "inact_kib",
    "active_mem": "active_kib",
    "swap_in": "si",
    "swap_out": "so",
    "blocks_in": "bi",
    "blocks_out": "bo",
    "interrupts": "in",
    "context_switches": "cs",
    "user_time": "us",
    "system_time": "sy",
    "idle_time": "id",
    "io_wait_time": "wa",
    "stolen_time": "st",
}


@pytest.mark.samples
@pytest.mark.parametrize(
    "rel",
    [
        "201701-meltdown-OLTP-ro/vmstat/thr128-vmstat.out",
        "jc/vmstat/centos-7.7/vmstat-at-5-10.out",
        "jc/vmstat/ubuntu-18.04/vmstat-1-long.out",
        "My-gather/pt-stalk/example1/2026_04_21_16_43_49-vmstat",
    ],
)
def test_values_match_jc(samples: Path, rel: str) -> None:
    text = (samples / rel).read_text()
    expected = jc.parse("vmstat", text, quiet=True)
    df = vmstat.parse(text.splitlines(), member=rel, clock=HINTS).main
    assert len(df) == len(expected)
    for key, col in JC_KEYS.items():
        want = [row[key] for row in expected]
        if all(v is None for v in want):
            assert col not in df
            continue
        assert df[col].tolist() == want, col


def test_variant_names_procps_t_and_its_zone(fixtures: Path) -> None:
    src = _parse(fixtures / "vmstat" / "procps-ng-4.0.2_t_1_2_pst.txt")
    assert src.meta["variant"] == "procps-ng -t (PST times)"


def test_text_that_is_not_vmstat_raises_with_its_first_line() -> None:
    with pytest.raises(ParseError, match=r"^m line 2: no vmstat header"):
        vmstat.parse(["\n", "hello\n", "world\n"], member="m", clock=ClockHints())
