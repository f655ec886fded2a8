"""Readers of pt-stalk's host and server members: df, sysctl, netstat, slabinfo, numastat, SHOW OPEN
TABLES, SHOW ENGINE INNODB MUTEX, -trigger and the mysqld error log.

The captures come from tests/fixtures/bundles/ptstalk-mariadb-fullfs-crash.tar.gz (pt-stalk 3.2.1
against MariaDB 10.11 on this machine; see that folder's README), read member by member."""

from __future__ import annotations

import doctest
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from parsers import (
    df,
    mutex_status,
    mysqld_errorlog,
    netstat,
    numastat,
    opentables,
    ptstalk_trigger,
    registry,
    slabinfo,
    sysctl,
)
from parsers._snapshots import UNTIMED
from parsers.base import Clock, ClockHints, ParseError

BUNDLE = "bundles/ptstalk-mariadb-fullfs-crash.tar.gz"
PREFIX = "ptstalk-mariadb-fullfs-crash/2026_11_27_16_10_00-"
MODULES = (
    df,
    mutex_status,
    mysqld_errorlog,
    netstat,
    numastat,
    opentables,
    ptstalk_trigger,
    slabinfo,
    sysctl,
)
EX2 = "My-gather/pt-stalk/example2/2026_04_21_16_51_41-"


def member(fixtures: Path, suffix: str) -> list[str]:
    with tarfile.open(fixtures / BUNDLE) as tar:
        return tar.extractfile(PREFIX + suffix).read().decode().splitlines()


def rows(src):  # noqa: ANN001, ANN201
    """The frame of a source's rows (behind the empty ``untimed`` frame of a source without a time)."""
    return next(frame for name, frame in src.frames.items() if name != UNTIMED)


def _parse(mod, lines, clock: ClockHints | None = None):  # noqa: ANN001, ANN202
    return mod.parse(lines, member="m", clock=clock or ClockHints())


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.FORMAT)
def test_the_docstring_example_runs(mod) -> None:  # noqa: ANN001
    assert doctest.testmod(mod).failed == 0


@pytest.mark.parametrize(
    ("suffix", "fmt"),
    [
        ("df", "df"),
        ("disk-space", "df"),
        ("sysctl", "sysctl"),
        ("netstat", "netstat"),
        ("slabinfo", "slabinfo"),
        ("numastat", "numastat"),
        ("opentables1", "opentables"),
        ("trigger", "ptstalk_trigger"),
        ("log_error", "mysqld_errorlog"),
        ("output", "ptstalk_output"),
    ],
)
def test_each_member_is_detected_by_content(fixtures: Path, suffix: str, fmt: str) -> None:
    assert registry.detect(member(fixtures, suffix)[:60]).FORMAT == fmt


@pytest.mark.parametrize("mod", [m for m in MODULES if m is not ptstalk_trigger], ids=lambda m: m.FORMAT)
def test_empty_input_gives_an_empty_frame(mod) -> None:  # noqa: ANN001
    src = _parse(mod, [])
    assert len(src.main) == 0 and str(src.main["ts"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize(
    ("mod", "lines", "line_no"),
    [
        (df, ["", "hello world"], 2),
        (sysctl, ["# sysctl", "not a setting"], 2),
        (netstat, ["TS 1795794782.9 2026-11-27 15:53:02", "Mem: 12 34"], 2),
        (slabinfo, ["TS 1795794782.9 2026-11-27 15:53:02", "dentry 1 2 3"], 2),
        (numastat, ["numa_hit 12"], 1),
        (opentables, ["", "", "app\tt\t0\t0"], 3),
        (mutex_status, ["InnoDB\trwlock: x\twaits=1"], 1),
        (ptstalk_trigger, ["hello"], 1),
    ],
    ids=lambda v: getattr(v, "FORMAT", None),
)
def test_a_wrong_format_raises_with_its_line_number(mod, lines: list[str], line_no: int) -> None:  # noqa: ANN001
    with pytest.raises(ParseError) as err:
        _parse(mod, lines)
    assert err.value.line_no == line_no


def test_error_log_refuses_text_without_a_time_prefix() -> None:
    with pytest.raises(ParseError) as err:
        _parse(mysqld_errorlog, ["just some text"] * 300)
    assert err.value.line_no == 1


# --- df ---------------------------------------------------------------------------------------
def test_df_reads_every_run_of_the_full_tmpfs(fixtures: Path) -> None:
    src = _parse(df, member(fixtures, "df"))
    fs = rows(src)[rows(src)["mount"] == "/tmp/hmembers/fs"]
    assert src.clock is Clock.TS_MARKER and fs["ts"].nunique() == 12
    assert fs["use_pct"].max() == 96.0 and fs["size_kib"].iloc[0] == 131072.0


def test_disk_space_without_markers_takes_the_capture_start_as_local_time(fixtures: Path) -> None:
    start = pd.Timestamp("2026-11-27 16:01:40")
    src = _parse(df, member(fixtures, "disk-space"), ClockHints(start_local=start))
    assert src.ts_is_local and rows(src)["ts"].iloc[0] == start.tz_localize("UTC")
    assert rows(src)["mount"].tolist() == ["/"]


def test_df_inodes_human_sizes_and_a_wrapped_file_system_name() -> None:
    src = _parse(
        df,
        [
            "Filesystem Inodes IUsed IFree IUse% Mounted on",
            ("/dev/sda1 100 99 1 99% /var/lib/mysql"),
            "Filesystem Size Used Avail Use% Mounted on",
            "/dev/mapper/very-long-volume-name",
            "  1.5G 1.0G 512M 67% /data dir",
        ],
    )
    inode, space = rows(src).iloc[0], rows(src).iloc[1]
    assert inode["inodes_use_pct"] == 99.0 and pd.isna(inode["use_pct"])
    assert space["filesystem"] == "/dev/mapper/very-long-volume-name" and space["mount"] == "/data dir"
    assert space["size_kib"] == 1.5 * 1024 * 1024 and space["avail_kib"] == 512 * 1024


def test_df_short_row_warns_with_its_line_number() -> None:
    src = _parse(df, ["Filesystem 1K-blocks Used Available Use% Mounted on", "tmpfs 10 5"])
    assert [(w.line_no, w.code) for w in src.warnings] == [(2, "odd-line")]


# --- error log --------------------------------------------------------------------------------
def test_error_log_of_the_crash_and_restarts(fixtures: Path) -> None:
    src = _parse(mysqld_errorlog, member(fixtures, "log_error"))
    crash = rows(src)[rows(src)["kind"] == "crash"].iloc[0]
    assert crash["signal"] == 11.0 and crash["prio"] == "ERROR" and crash["line_end"] > crash["line_no"]
    assert src.meta["counts"]["ready"] >= 3 and src.meta["counts"]["crash-recovery"] >= 2
    assert src.meta["aborted_connections"] == 1500 and src.ts_is_local


@pytest.mark.parametrize(
    ("line", "kind", "ts"),
    [
        (
            "2026-04-21T16:02:21.044888Z 0 [ERROR] [MY-012574] [InnoDB] Assertion failure: btr0cur.cc:336",
            "assertion",
            ("2026-04-21 16:02:21.044888"),
        ),
        (
            (
                "2026-04-21T18:02:21.044888+02:00 9 [Warning] [MY-010897] [Repl] Slave SQL for channel '': "
                "Error_code: MY-001062"
            ),
            "replication",
            "2026-04-21 16:02:21.044888",
        ),
        (
            "2026-04-21T16:02:21.044888Z 0 [Warning] InnoDB: A long semaphore wait:",
            "semaphore",
            "2026-04-21 16:02:21.044888",
        ),
        (
            "2026-04-21 16:02:21 0 [ERROR] mysqld: Too many connections",
            "too-many-connections",
            ("2026-04-21 16:02:21"),
        ),
        ("260421  6:02:21 [ERROR] mysqld got signal 6 ;", "crash", "2026-04-21 06:02:21"),
        (
            (
                "2026-04-21 16:02:21 0 [ERROR] mariadbd: Disk full (/tmp/#sql-temptable.MAI); waiting for someone "
                "to free some space..."
            ),
            "error",
            "2026-04-21 16:02:21",
        ),
    ],
)
def test_error_log_line_shapes_of_mysql_and_mariadb(line: str, kind: str, ts: str) -> None:
    src = _parse(mysqld_errorlog, [line])
    assert rows(src)["kind"].tolist() == [kind]
    assert rows(src)["ts"].iloc[0] == pd.Timestamp(ts, tz="UTC")


def test_error_log_notes_are_counted_not_kept() -> None:
    src = _parse(mysqld_errorlog, ["2026-04-21 16:02:21 0 [Note] InnoDB: Buffer pool(s) load completed"])
    assert len(rows(src)) == 0 and src.meta["lines_by_prio"] == {"Note": 1}


# --- sysctl, netstat, slabinfo, numastat, open tables, mutex, trigger ---------------------------
def test_sysctl_of_this_machine(fixtures: Path) -> None:
    src = _parse(sysctl, member(fixtures, "sysctl"))
    assert src.meta["settings"]["net.core.somaxconn"] == "4096" and len(rows(src)) > 1000


def test_netstat_counts_the_time_wait_storm_per_client(fixtures: Path) -> None:
    src = _parse(netstat, member(fixtures, "netstat"))
    tw = rows(src)[(rows(src)["state"] == "TIME_WAIT") & (rows(src)["server_port"] == 33461)]
    assert tw.groupby("ts")["sockets"].sum().max() >= 1500 and set(tw["client"]) == {"127.0.0.1"}
    assert (rows(src).loc[rows(src)["state"] == "LISTEN", "server_port"] == 33461).all()


def test_netstat_ipv6_and_mapped_addresses() -> None:
    src = _parse(
        netstat,
        [
            "Proto Recv-Q Send-Q Local Address Foreign Address State",
            "tcp6 0 0 :::3306 :::* LISTEN",
            ("tcp6 0 0 ::ffff:10.0.0.5:3306 ::ffff:10.0.0.9:5000 SYN_RECV"),
        ],
    )
    assert rows(src)[["state", "client"]].values.tolist() == [["LISTEN", ""], ["SYN_RECV", "10.0.0.9"]]


def test_slabinfo_dentry_cache(fixtures: Path) -> None:
    src = _parse(slabinfo, member(fixtures, "slabinfo"))
    dentry = rows(src)[rows(src)["cache"] == "dentry"]
    assert (
        dentry["ts"].nunique() == 12 and (dentry["size_kib"] > 0).all() and (dentry["objsize_b"] == 192).all()
    )


def test_numastat_per_node_rates(fixtures: Path) -> None:
    src = _parse(numastat, member(fixtures, "numastat"))
    hits = rows(src)[rows(src)["field"] == "numa_hit"]
    assert hits["ts"].nunique() == 3 and hits["per_s"].iloc[1:].notna().all()


def test_numastat_command_table() -> None:
    src = _parse(
        numastat,
        ["                           node0           node1", "numa_hit   100   200", "numa_miss 0 7"],
    )
    assert rows(src)[["node", "field", "value"]].values.tolist()[-1] == [1, "numa_miss", 7.0]


def test_open_tables_listing(fixtures: Path) -> None:
    src = _parse(opentables, member(fixtures, "opentables1"))
    assert src.meta["tables"] == len(rows(src)) > 0 and set(rows(src)["name_locked"]) == {0}


@pytest.mark.samples
def test_mutex_status_of_percona_server(samples: Path) -> None:
    src = _parse(mutex_status, (samples / (EX2 + "mutex-status1")).open())
    assert src.meta["top"]["buf0buf.cc:877"] == 2296 and len(rows(src)) == 23


def test_trigger_of_a_no_stalk_run(fixtures: Path) -> None:
    src = _parse(ptstalk_trigger, member(fixtures, "trigger"))
    assert src.meta["trigger"] == "Not stalking; collect triggered immediately" and not src.meta["stalked"]
    assert "--run-time=14" in src.meta["ran_with"]


def test_trigger_hides_a_password() -> None:
    src = _parse(ptstalk_trigger, ["2026_11_27_15_53_01 pt-stalk ran with --password=s3cret --cycles=5"])
    assert "s3cret" not in src.meta["ran_with"]


def test_output_counts_the_collectors_errors(fixtures: Path) -> None:
    from parsers import ptstalk_output

    src = _parse(ptstalk_output, member(fixtures, "output"))
    assert src.meta["errors"] >= 3 and src.meta["first_errors"][0].startswith("line ")
    assert "collector error line(s)" in src.meta["variant"]


def test_trigger_message_is_in_the_variant_shown_with_the_source(fixtures: Path) -> None:
    src = _parse(ptstalk_trigger, member(fixtures, "trigger"))
    assert src.meta["variant"] == "pt-stalk -trigger: Not stalking; collect triggered immediately"


def test_a_short_slabinfo_row_warns_with_its_line_number() -> None:
    src = _parse(
        slabinfo,
        [
            "slabinfo - version: 2.1",
            "# name <active_objs> : tunables : slabdata <x>",
            "dentry 1 2 192 21 1 : tunables 0 0 0 : slabdata 3 3 0",
            "inode_cache 1 2 : slabdata 3 3 0",
        ],
    )
    assert [(w.line_no, w.code) for w in src.warnings] == [(4, "odd-line")] and len(rows(src)) == 1


def test_a_short_netstat_row_warns_with_its_line_number() -> None:
    src = _parse(
        netstat, ["Proto Recv-Q Send-Q Local Address Foreign Address State", "tcp 0 0 10.0.0.5:3306"]
    )
    assert [(w.line_no, w.code) for w in src.warnings] == [(2, "odd-line")]


def test_a_source_without_any_time_keeps_its_rows_behind_an_empty_main_frame(fixtures: Path) -> None:
    src = _parse(sysctl, member(fixtures, "sysctl"))
    assert list(src.frames) == [UNTIMED, "sysctl"] and (src.samples, src.start) == (0, None)
    assert len(src.frames["sysctl"]) > 1000 and src.frames["sysctl"]["ts"].isna().all()
