"""parsers.pt_summary: pt-summary's report (percona-toolkit 3.2.1) on a real Debian 12 machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers import pt_summary, registry
from parsers.base import ClockHints, ParseError

REPORT = "summaries/pt-summary-3.2.1_debian12.out"


def _parse(path: Path):
    with path.open() as fh:
        return pt_summary.parse(fh, member=path.name, clock=ClockHints())


@pytest.fixture
def report(fixtures: Path):
    return _parse(fixtures / REPORT)


def test_it_is_detected_by_its_header_and_nothing_else_claims_it(fixtures: Path) -> None:
    head = (fixtures / REPORT).read_text().splitlines()[: registry.HEAD_LINES]
    assert registry.detect(head) is pt_summary
    assert not pt_summary.sniff(["# Percona Toolkit MySQL Summary Report ####"])
    assert not pt_summary.sniff(["procs -----------memory---------- ---swap--", "# Percona Toolkit System"])


def test_the_host_and_its_kernel_and_cpus_go_to_the_host_header(report) -> None:
    assert (report.meta["host"], report.meta["kernel"], report.meta["ncpu"]) == ("vm", "6.18.44-fc-v1300", 2)
    assert report.meta["report_time"] == "2026-12-07T02:16:16Z" and report.meta["local_tz"] == "UTC +0000"


def test_every_fact_of_the_header_with_its_line(report) -> None:
    facts, lines = report.meta["facts"], report.meta["fact_lines"]
    assert facts == {
        "platform": "Linux",
        "release": "Debian GNU/Linux 12 (bookworm) (bookworm)",
        "kernel": "6.18.44-fc-v1300",
        "virtualized": "No virtualization detected",
        "sockets": "1",
        "cores": "2",
        "threads": "2",
        "hyperthreading": "no",
        "cpu_speeds": "2x2596.124",
        "cpu_models": "2xAMD EPYC",
        "cpu_model": "AMD EPYC",
        "memory_total": "23.5G",
        "swap_total": "0.0",
        "swap_used": "0.0",
        "swappiness": "60",
        "raid_controller": "No RAID controller detected",
    }
    assert (lines["kernel"], lines["sockets"], lines["cpu_model"], lines["memory_total"]) == (7, 13, 15, 18)
    assert (lines["swap_total"], lines["raid_controller"]) == (20, 51)
    assert report.meta["raid"] == ["Controller: No RAID controller detected"]


def test_file_systems_with_size_use_type_and_mount(report) -> None:
    fs = report.frames["host_filesystems"]
    assert len(fs) == 8 and fs["ts"].isna().all()
    root = fs.iloc[0]
    assert (root["filesystem"], root["size"], root["size_bytes"], root["used_pct"]) == (
        "/dev/vda",
        "252G",
        252 << 30,
        26.0,
    )
    assert (root["type"], root["mount"], root["line_no"]) == ("ext4", "/", 31)
    assert root["options"] == "rw,relatime,discard,resv_strict,resuid=65534,resgid=65534"
    assert list(fs["mount"].iloc[1:3]) == ["/dev", "/sys/fs/cgroup"]
    assert report.meta["filesystems"][0] == {
        "filesystem": "/dev/vda",
        "size": "252G",
        "used_pct": 26.0,
        "type": "ext4",
        "mount": "/",
        "line": 31,
    }


def test_disks_with_their_scheduler_and_queue_size(report) -> None:
    disks = report.frames["host_disks"]
    assert disks[["line_no", "device", "scheduler", "queue_size"]].values.tolist() == [
        [40, "vda", "mq-deadline", 256.0]
    ]
    assert report.meta["disks"] == [
        {"device": "vda", "scheduler": "mq-deadline", "queue_size": 256.0, "line": 40}
    ]


def test_every_name_value_line_is_a_fact_row_with_its_section(report) -> None:
    facts = report.frames["host_facts"]
    row = facts[facts["name"] == "Swappiness"].iloc[0]
    assert (row["section"], row["value"], row["line_no"]) == ("Memory", "60", 26)
    assert facts["line_no"].is_monotonic_increasing and len(facts) == 32  # every "name | value" line


def test_a_report_is_no_sample_it_widens_no_window(report) -> None:
    assert report.samples == 0 and report.start is None and list(report.frames)[0] == "untimed"
    assert report.warnings == []


def test_a_scheduler_among_others_and_a_comma_locale_size() -> None:
    src = pt_summary.parse(
        [
            "# Percona Toolkit System Summary Report ######",
            "# Mounted Filesystems ####",
            "  Filesystem  Size Used Type  Opts         Mountpoint",
            "  tmpfs       3,2G   1% tmpfs rw,nosuid    /run/user/1000",
            "  /dev/sdb1   bad row",
            "# Disk Schedulers And Queue Size ####",
            "         sda | noop deadline [cfq] 128",
            "# The End ####",
        ],
        member="pt-summary.out",
        clock=ClockHints(),
    )
    fs = src.frames["host_filesystems"].iloc[0]
    assert (fs["size_bytes"], fs["mount"]) == (round(3.2 * (1 << 30)), "/run/user/1000")
    assert src.frames["host_disks"][["scheduler", "queue_size"]].values.tolist() == [["cfq", 128.0]]
    assert [(w.line_no, w.code) for w in src.warnings] == [(5, "odd-line")]


def test_a_report_cut_short_warns_at_its_last_line(fixtures: Path) -> None:
    lines = (fixtures / REPORT).read_text().splitlines()[:45]
    src = pt_summary.parse(lines, member="pt-summary.out", clock=ClockHints())
    assert [(w.line_no, w.code) for w in src.warnings] == [(45, "truncated")]
    assert src.meta["facts"]["memory_total"] == "23.5G"


def test_another_file_raises_at_its_first_line() -> None:
    with pytest.raises(ParseError, match="line 2: not a report") as err:
        pt_summary.parse(["", "procs -----------memory----------"], member="x", clock=ClockHints())
    assert err.value.whole
    with pytest.raises(ParseError, match="empty"):
        pt_summary.parse([], member="x", clock=ClockHints())
