"""parsers/ps.py: every ps flavour read by its header, snapshots, time, oddities and rejections."""

from __future__ import annotations

from pathlib import Path

import jc
import pandas as pd
import pytest

from parsers import ps
from parsers.base import Clock, ClockHints, ParseError

START = ClockHints(start_local=pd.Timestamp("2026-04-21 16:51:41"), interval_s=1.0)


def _parse(path: Path, clock: ClockHints = START) -> ps.ParsedSource:
    with path.open() as fh:
        return ps.parse(fh, member=path.name, clock=clock)


def _row(frame: pd.DataFrame, **where: object) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for col, value in where.items():
        mask &= frame[col] == value
    rows = frame[mask]
    assert len(rows) == 1, rows
    return rows.iloc[0]


# --- the collector's ps -eLo ... wchan:32, two TS snapshots -----------------------------------------


@pytest.fixture
def elo(fixtures: Path) -> ps.ParsedSource:
    return _parse(fixtures / "ps" / "procps-ng-4.0.2_eLo-wchan.txt", ClockHints())


def test_elo_reads_two_snapshots_of_thirty_threads(elo):
    assert (len(elo.main), elo.samples) == (60, 2)
    assert elo.main.groupby("snapshot").size().tolist() == [30, 30]


def test_elo_times_come_from_the_ts_markers(elo):
    assert elo.clock is Clock.TS_MARKER and not elo.ts_is_local
    assert str(elo.start) == "2026-11-22 12:27:17.084825799+00:00"
    assert str(elo.end) == "2026-11-22 12:27:18.099792855+00:00"
    assert elo.meta["utc_offset_s"] == 0


def test_elo_reads_a_threads_wchan(elo):
    row = _row(elo.main, snapshot=0, tid=3781)
    assert (row.pid, row.ppid, row.user, row.stat, row.state, row.comm, row.wchan) == (
        3774,
        1,
        "mysql",
        "Sl",
        "S",
        "mariadbd",
        "io_cqring_wait",
    )
    assert row.line_no == 16


def test_elo_keeps_a_long_wchan_whole(elo):
    assert _row(elo.main, snapshot=1, tid=3787).wchan == "do_sigtimedwait.isra.0"


def test_elo_dash_wchan_is_empty_string(elo):
    assert _row(elo.main, snapshot=0, tid=59).wchan == ""


def test_elo_reads_pcpu_as_percent(elo):
    assert _row(elo.main, snapshot=0, tid=3774).pcpu == 8.3
    assert _row(elo.main, snapshot=1, tid=12286).pcpu == 2.4


def test_elo_second_snapshot_starts_after_its_marker_and_header(elo):
    assert elo.main[elo.main.snapshot == 1].line_no.min() == 35
    assert elo.meta["snapshots"] == [(0, 1, 32), (1, 33, 64)]


# --- ps -eLf, ps alx, ps -eaF (pt-stalk) ------------------------------------------------------------


def test_elf_maps_lwp_to_tid_and_c_to_pcpu(fixtures):
    src = _parse(fixtures / "ps" / "procps-ng-4.0.2_eLf.txt")
    assert len(src.main) == 30
    row = _row(src.main, tid=3774)
    assert (row.pid, row.ppid, row.user, row.pcpu, row.comm) == (3774, 1, "mysql", 8.0, "mariadbd")
    assert pd.isna(row.wchan) and pd.isna(row.stat)


def test_alx_reads_rows_whose_columns_overflowed(fixtures):
    src = _parse(fixtures / "ps" / "procps-ng-4.0.2_alx.txt")
    assert len(src.main) == 27
    assert [w.code for w in src.warnings] == []
    mariadb = _row(src.main, pid=3774)  # VSZ 8591369724 pushes RSS, WCHAN and STAT right
    assert (mariadb.user, mariadb.wchan, mariadb.stat, mariadb.comm) == ("107", "poll_s", "Sl", "mariadbd")
    migration = _row(src.main, pid=18)  # PRI -100 pushes NI left of its column
    assert (migration.comm, migration.wchan, migration.state) == ("[migration/0]", "smpboo", "S")


def test_alx_takes_the_basename_of_the_first_token(fixtures):
    src = _parse(fixtures / "ps" / "procps-ng-4.0.2_alx.txt")
    assert _row(src.main, pid=2189).comm == "postgres"
    assert _row(src.main, pid=2190).comm == "postgres:"  # setproctitle name, first token kept


def test_pt_stalk_eaf_has_no_threads_and_no_wchan(samples):
    src = _parse(samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-ps")
    assert len(src.main) == 16
    assert not src.meta["threads"]
    assert (src.main.tid == src.main.pid).all()
    assert src.main.wchan.isna().all()
    mysqld = _row(src.main, pid=5555)  # SZ 1161740 / RSS 1061220 overflow their columns
    assert (mysqld.pcpu, mysqld.comm, mysqld.user, mysqld.line_no) == (9.0, "mysqld", "mysql", 7)


def test_pt_stalk_eaf_time_is_the_start_and_local(samples):
    src = _parse(samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-ps")
    assert src.clock is Clock.INFERRED and src.ts_is_local
    assert str(src.start) == "2026-04-21 16:51:41+00:00"


# --- sosreport listings (procps-ng 3.3.15) ----------------------------------------------------------


def test_elfl_reads_every_thread_with_its_short_wchan(samples):
    src = _parse(samples / "coreos-sosreport-master1/ps/ps_-elfL")
    assert len(src.main) == 235
    assert _row(src.main, pid=1, tid=1).wchan == "do_epo"
    assert _row(src.main, pid=1472, tid=1491).wchan == "do_epo"
    assert _row(src.main, pid=5996, tid=6000).wchan == "hrtime"
    assert _row(src.main, pid=1022, tid=1029).user == "polkitd"


def test_alxwww_reads_stat_and_wchan(samples):
    src = _parse(samples / "coreos-sosreport-master1/ps/ps_alxwww")
    assert len(src.main) == 132
    row = _row(src.main, pid=1)
    assert (row.stat, row.wchan, row.comm, row.user) == ("Ss", "do_epo", "systemd", "0")


def test_axo_reads_through_the_five_token_lstart(samples):
    name = "ps_axo_flags_state_uid_pid_ppid_pgid_sid_cls_pri_addr_sz_wchan_lstart_tty_time_cmd"
    src = _parse(samples / "coreos-sosreport-master1/ps" / name)
    assert len(src.main) == 132
    assert _row(src.main, pid=962).wchan == "x64_sy"
    row = _row(src.main, pid=1472)  # SZ 2128491 overflows into WCHAN
    assert (row.wchan, row.comm, row.ppid) == ("", "etcd", 1457)


def test_auxm_thread_placeholders_are_rejected(samples):
    with pytest.raises(ParseError) as err:
        _parse(samples / "coreos-sosreport-master1/ps/ps_auxwwwm")
    assert err.value.line_no == 3
    assert "ps -eLo" in err.value.reason


def test_aux_reads_user_stat_and_pcpu(samples):
    src = _parse(samples / "jc/ps/centos-7.7/ps-axu.out")
    assert len(src.main) == 109
    assert src.main.ppid.isna().all()
    row = _row(src.main, pid=6)
    assert (row.user, row.stat, row.comm) == ("root", "R", "[ksoftirqd/0]")


def test_plain_ps_header_is_read(samples):
    src = _parse(samples / "percona-toolkit/pt-mysql-summary/ps-mysqld-005.txt")
    assert src.main.pid.tolist() == [1427, 20928, 29930]
    assert src.main.state.tolist() == ["S", "S", "S"]


@pytest.mark.parametrize("path", ["jc/ps/centos-7.7/ps-ef.out", "jc/ps/ubuntu-18.04/ps-ef.out"])
def test_ps_ef_matches_jc(samples, path):
    text = (samples / path).read_text()
    src = ps.parse(text.splitlines(), member=path, clock=START)
    ref = jc.parse("ps", text, quiet=True)
    assert src.main.pid.tolist() == [r["pid"] for r in ref]
    assert src.main.ppid.tolist() == [r["ppid"] for r in ref]
    assert src.main.user.tolist() == [r["uid"] for r in ref]


def test_elfl_matches_jc(samples):
    text = (samples / "coreos-sosreport-master1/ps/ps_-elfL").read_text()
    src = ps.parse(text.splitlines(), member="ps_-elfL", clock=START)
    ref = jc.parse("ps", text, quiet=True)
    assert src.main.tid.tolist() == [int(r["lwp"]) for r in ref]
    assert src.main.wchan.tolist() == ["" if r["wchan"] == "-" else r["wchan"] for r in ref]
    assert src.main.stat.tolist() == [r["s"] for r in ref]


# --- detection --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "coreos-sosreport-master1/ps/ps_-elfL",
        "coreos-sosreport-master1/ps/ps_alxwww",
        "jc/ps/centos-7.7/ps-axu.out",
        "My-gather/pt-stalk/example1/2026_04_21_16_43_19-ps",
    ],
)
def test_sniff_takes_ps_listings(samples, path):
    assert ps.sniff((samples / path).read_text().splitlines()[:60])


@pytest.mark.parametrize(
    "path",
    [
        "jc/top/centos-7.7/top-b-n3.out",
        "percona-toolkit/pt-summary/Linux/001/processes",
        "percona-toolkit/pt-summary/Linux/005/processes",
        "percona-toolkit/pt-mysql-summary/ps-mysqld-001.txt",
        "sysstat/interrupts/root1-proc-interrupts",
    ],
)
def test_sniff_leaves_top_tables_and_headerless_rows(samples, path):
    assert not ps.sniff((samples / path).read_text().splitlines()[:60])


def test_sniff_looks_past_a_ts_marker(fixtures):
    assert ps.sniff((fixtures / "ps" / "procps-ng-4.0.2_eLo-wchan.txt").read_text().splitlines()[:60])


def test_headerless_ps_ef_is_rejected_at_line_1(samples):
    with pytest.raises(ParseError) as err:
        _parse(samples / "percona-toolkit/pt-mysql-summary/ps-mysqld-001.txt")
    assert err.value.line_no == 1


def test_top_output_is_rejected(samples):
    with pytest.raises(ParseError):
        _parse(samples / "jc/top/centos-7.7/top-b-n3.out")


# --- snapshots, time, oddities ----------------------------------------------------------------------

HEADER = "  PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN"
ROW = " 3774  3779     1 mysql    Sl    0.0 mariadbd        futex_do_wait"


def test_repeated_header_starts_a_snapshot_spaced_by_the_interval():
    src = ps.parse([HEADER, ROW, HEADER, ROW], member="m", clock=START)
    assert src.main.snapshot.tolist() == [0, 1]
    assert [str(t) for t in src.main.ts] == ["2026-04-21 16:51:41+00:00", "2026-04-21 16:51:42+00:00"]


def test_no_start_time_counts_from_the_epoch_with_a_warning():
    src = ps.parse([HEADER, ROW], member="m", clock=ClockHints())
    assert str(src.start) == "1970-01-01 00:00:00+00:00"
    assert [w.code for w in src.warnings] == ["no-start-time"]


def test_unmarked_snapshots_without_interval_warn():
    src = ps.parse([HEADER, ROW, HEADER, ROW], member="m", clock=ClockHints(start_local=pd.Timestamp(0)))
    assert "no-interval" in [w.code for w in src.warnings]


def test_zzz_markers_give_local_wall_clock():
    src = ps.parse(["zzz ***Wed Feb 29 11:00:03 EST 2012", HEADER, ROW], member="m", clock=ClockHints())
    assert src.clock is Clock.TS_MARKER and src.ts_is_local
    assert str(src.start) == "2012-02-29 11:00:03+00:00"


def test_unreadable_row_warns_with_its_line_number():
    src = ps.parse([HEADER, ROW, " 3774  oops"], member="m", clock=START)
    assert len(src.main) == 1
    assert [(w.line_no, w.code) for w in src.warnings] == [(3, "bad-row")]


def test_non_numeric_pid_warns_and_drops_the_row():
    src = ps.parse(
        [HEADER, ROW, " 37x4  3779     1 mysql    Sl    0.0 mariadbd        futex_do_wait"],
        member="m",
        clock=START,
    )
    assert len(src.main) == 1
    assert [(w.line_no, w.code) for w in src.warnings] == [(3, "bad-row")]


def test_comm_with_spaces_in_the_middle_is_kept_whole():
    row = " 4242  4250  4200 alice    Sl    1.0 Web Content     do_epoll_wait"
    src = ps.parse([HEADER, row], member="m", clock=START)
    assert (src.main.comm[0], src.main.wchan[0]) == ("Web Content", "do_epoll_wait")


def test_non_ascii_row_is_read_by_token():
    row = " 4242  4250  4200 jürgen   D     1.0 worker          io_schedule"
    src = ps.parse([HEADER, ROW, row], member="m", clock=START)
    assert _row(src.main, tid=4250).user == "jürgen"
    assert _row(src.main, tid=4250).state == "D"


def test_crlf_lines_are_read():
    src = ps.parse([HEADER + "\r\n", ROW + "\r\n"], member="m", clock=START)
    assert src.main.wchan.tolist() == ["futex_do_wait"]


def test_unknown_column_warns_on_the_header_line():
    header = "  PID   TID FOO  COMMAND"
    src = ps.parse([header, " 3774  3779 x    mariadbd"], member="m", clock=START)
    assert [(w.line_no, w.code) for w in src.warnings] == [(1, "unknown-column")]
    assert src.main.comm.tolist() == ["mariadbd"]


def test_empty_input_gives_an_empty_frame_and_a_warning():
    src = ps.parse([], member="m", clock=ClockHints())
    assert len(src.main) == 0
    assert list(src.main.columns) == list(ps._COLUMNS)
    assert [w.code for w in src.warnings] == ["empty"]


def test_data_before_any_header_is_a_parse_error():
    with pytest.raises(ParseError) as err:
        ps.parse(["TS 1795350437.084825799 2026-11-22 12:27:17", ROW], member="m", clock=START)
    assert err.value.line_no == 2


def test_many_chunks_keep_rows_in_order():
    lines = []
    for snap in range(3):
        lines += [f"TS {1795350437 + snap} 2026-11-22 12:27:1{snap}", HEADER]
        lines += [
            f"{snap + 1:>5} {tid:>5}     1 mysql    S     0.0 mariadbd        futex_do_wait"
            for tid in range(40_000)
        ]
    src = ps.parse(lines, member="m", clock=ClockHints())
    assert len(src.main) == 120_000
    assert src.main.line_no.is_monotonic_increasing
    assert src.main.groupby("snapshot").pid.first().tolist() == [1, 2, 3]
    assert src.main.tid.iloc[-1] == 39_999


def test_blank_lines_before_the_header_are_skipped():
    src = ps.parse(["", "   ", HEADER, ROW], member="m", clock=START)
    assert src.main.line_no.tolist() == [4]


def test_variant_names_the_listing(fixtures: Path) -> None:
    assert _parse(fixtures / "ps" / "procps-ng-4.0.2_eLo-wchan.txt").meta["variant"] == "ps -eLo with wchan"
    assert (
        _parse(fixtures / "ps" / "procps-ng-4.0.2_alx.txt").meta["variant"] == "ps alx with wchan, no threads"
    )


def test_unmarked_snapshot_before_the_first_marker_counts_back_from_it() -> None:
    lines = [HEADER, ROW, "TS 1795350437.0 2026-11-22 12:27:17", HEADER, ROW]
    src = ps.parse(lines, member="m", clock=ClockHints(interval_s=2.0))
    assert src.main["ts"].tolist() == [
        pd.Timestamp("2026-11-22 12:27:15", tz="UTC"),
        pd.Timestamp("2026-11-22 12:27:17", tz="UTC"),
    ]


# --- states: threads of other states counted, not typed (what the ingest asks for) -------------------

KEPT = frozenset({"R", "D"})


def _listing(snapshots: int, threads: int) -> list[str]:
    """A ps -eLo listing of one mysqld: thread t is D when t % 7 == 3, R when t % 11 == 5, else S."""
    lines = []
    for snap in range(snapshots):
        lines += [f"TS {1795350437 + snap}.084825799 2026-11-22 12:27:{17 + snap}", HEADER]
        for tid in range(1000, 1000 + threads):
            stat = "D" if tid % 7 == 3 else "R" if tid % 11 == 5 else "Sl"
            wchan = "io_schedule" if stat == "D" else "-" if stat == "R" else "futex_do_wait"
            lines.append(f" 3774 {tid:>5}     1 mysql    {stat:<5} {tid % 10}.{snap} mariadbd        {wchan}")
    return lines


def _by_state(frame: pd.DataFrame) -> dict[tuple[object, str], int]:
    return {
        (ts, str(state)): int(n)
        for (ts, state), n in frame.groupby(["ts", frame["state"].astype("string")]).size().items()
    }


def test_states_types_only_those_threads_and_counts_every_thread():
    lines = _listing(snapshots=3, threads=500)
    full = ps.parse(lines, member="m", clock=ClockHints())
    lean = ps.parse(lines, member="m", clock=ClockHints(), states=KEPT)
    kept = full.main[full.main["state"].isin(KEPT) | ~full.main["snapshot"].duplicated()]
    pd.testing.assert_frame_equal(lean.main, kept.reset_index(drop=True), check_categorical=False)
    assert lean.main.groupby("snapshot").tid.first().tolist() == [1000, 1000, 1000]  # S, but first
    counts = lean.frames[ps.COUNTS_FRAME]
    pairs = zip(zip(counts.ts, counts.state, strict=True), counts.threads, strict=True)
    assert dict(pairs) == _by_state(full.main)
    assert counts.groupby("ts").threads.sum().tolist() == [500, 500, 500]
    first_rows = full.main.groupby("ts").line_no.agg(["min", "max"])
    lines_of = counts.groupby("ts")[["line_no", "line_end"]].agg({"line_no": "min", "line_end": "max"})
    assert lines_of.to_numpy().tolist() == first_rows.to_numpy().tolist()


def test_states_spanning_chunks_keep_one_first_row_per_snapshot():
    lines = _listing(snapshots=2, threads=ps.CHUNK_ROWS + 900)  # each snapshot over two chunks
    lean = ps.parse(lines, member="m", clock=ClockHints(), states=KEPT)
    s_rows = lean.main[lean.main["state"] == "S"]
    assert s_rows.groupby("snapshot").size().tolist() == [1, 1]
    assert lean.frames[ps.COUNTS_FRAME].groupby("ts").threads.sum().tolist() == [ps.CHUNK_ROWS + 900] * 2


def test_states_counts_odd_sleeping_rows_and_still_reads_the_others(samples):
    overflow = f"{3774:>5} 99999999     1 mysql    Sl    0.0 mariadbd        futex_do_wait"
    garbled_s = " 3774  3780     1 mysql    Sl    x.0 mariadbd        futex_do_wait"
    garbled_d = " 3774  3781     1 mysql    D     x.0 mariadbd        io_schedule"
    lines = [HEADER, ROW, overflow, garbled_s, garbled_d]
    lean = ps.parse(lines, member="m", clock=START, states=KEPT)
    assert lean.main.tid.tolist() == [3779]  # the first row; the D row's %CPU is not a number
    assert [(w.line_no, w.code) for w in lean.warnings] == [(5, "bad-row")]  # its other cells not read
    counts = lean.frames[ps.COUNTS_FRAME]
    assert (counts.state.tolist(), counts.threads.tolist()) == (["S"], [3])
    with pytest.raises(ParseError) as err:  # a ps m listing's '-' PID rows are still refused
        with (samples / "coreos-sosreport-master1/ps/ps_auxwwwm").open() as fh:
            ps.parse(fh, member="ps_auxwwwm", clock=START, states=KEPT)
    assert err.value.line_no == 3


def test_states_is_ignored_without_a_stat_column(samples):
    path = samples / "My-gather/pt-stalk/example2/2026_04_21_16_51_41-ps"  # ps -eaF: no STAT
    with path.open() as fh:
        lean = ps.parse(fh, member=path.name, clock=START, states=KEPT)
    assert list(lean.frames) == [ps.FRAME] and len(lean.main) == 16
