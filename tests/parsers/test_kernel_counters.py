"""/proc/diskstats (and vmstat -d/-D), netstat -s and /proc/vmstat: captures made here, pt-diskstats
and pt-stalk samples."""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pytest

from parsers import diskstats, netstat_s, procvmstat, registry
from parsers.base import ClockHints, ParseError
from tests.analyzer.context_captures import FIXTURES, SAMPLES

HINTS = ClockHints()


def read(module, name: str):
    with (FIXTURES / name).open() as fh:
        return module.parse(fh, member=name, clock=HINTS)


def counters(name: str, device: str) -> list[list[int]]:
    """The counters of ``device`` in each snapshot, read from the file with split()."""
    return [
        [int(x) for x in ln.split()[3:14]]
        for ln in (FIXTURES / name).read_text().splitlines()
        if ln.split()[2:3] == [device]
    ]


def test_diskstats_rates_are_what_iostat_computes() -> None:
    src = read(diskstats, "linux_diskstats.txt")
    vda = src.main[src.main["device"] == "vda"].reset_index(drop=True)
    raw = counters("linux_diskstats.txt", "vda")
    assert src.clock == "ts-marker" and len(vda) == len(raw) == 8
    dt = (vda["ts"].iloc[1] - vda["ts"].iloc[0]).total_seconds()
    a, b = raw[0], raw[1]
    assert vda["r_per_s"].iloc[1] == pytest.approx((b[0] - a[0]) / dt)
    assert vda["w_bytes_per_s"].iloc[1] == pytest.approx((b[6] - a[6]) * 512 / dt)
    if b[4] > a[4]:
        assert vda["w_await"].iloc[1] == pytest.approx((b[7] - a[7]) / (b[4] - a[4]))
    assert vda["aqu_sz"].iloc[1] == pytest.approx((b[10] - a[10]) / dt / 1000)
    assert vda["util_pct"].iloc[1] == pytest.approx(min((b[9] - a[9]) / dt / 10, 100))
    assert np.isnan(vda["r_per_s"].iloc[0])  # first snapshot: no rate


def test_vmstat_d_t_is_read_with_its_per_line_times() -> None:
    src = read(diskstats, "procps_vmstat-d-t.txt")
    assert src.clock == "per-line" and src.meta["variant"].startswith("vmstat -d")
    assert src.main["ts"].nunique() == 3 and src.main["aqu_sz"].isna().all()


def test_vmstat_big_d_gives_the_sum_of_all_disks() -> None:
    src = read(diskstats, "procps_vmstat-D.txt")
    text = (FIXTURES / "procps_vmstat-D.txt").read_text().splitlines()
    reads = [int(ln.split()[0]) for ln in text if ln.strip().endswith("total reads")]
    assert src.main["device"].astype(str).unique().tolist() == ["(all disks)"]
    assert src.main["reads"].tolist() == reads and src.clock == "ts-marker"


@pytest.mark.samples
@pytest.mark.parametrize(
    "path", sorted(glob.glob(str(SAMPLES / "percona-toolkit/pt-diskstats/*.txt"))) or ["absent"]
)
def test_pt_diskstats_samples(path: str) -> None:
    if path == "absent":
        pytest.skip("../shared/samples is absent")
    text = Path(path).read_text()
    with open(path) as fh:
        src = diskstats.parse(fh, member=Path(path).name, clock=HINTS)
    assert src.main["ts"].nunique() == sum(ln.startswith("TS") for ln in text.splitlines())
    assert (src.main[["r_per_s", "w_per_s", "util_pct"]].dropna() >= 0).all().all()


def test_an_old_partition_line_is_skipped_with_a_warning() -> None:
    lines = [
        "TS 1776790303.0 2026-04-21 16:51:43",
        "   8    0 sda 10 0 80 5 0 0 0 0 0 10 5",
        "   8    1 sda1 3 24 0 0",
    ]
    src = diskstats.parse(lines, member="d", clock=HINTS)
    assert [(w.line_no, w.code) for w in src.warnings] == [(3, "old-partition-line")]


def test_diskstats_text_that_is_not_raises_with_its_line() -> None:
    with pytest.raises(ParseError, match="d line 2"):
        diskstats.parse(["TS 1776790303.0 2026-04-21 16:51:43", "hello there"], member="d", clock=HINTS)


def test_netstat_s_maps_sentences_to_kernel_names_and_rates() -> None:
    src = read(netstat_s, "linux_netstat_s_listen-overflow.txt")
    over = src.main[src.main["field"] == "ListenOverflows"]
    text = (FIXTURES / "linux_netstat_s_listen-overflow.txt").read_text().splitlines()
    values = [
        int(ln.split()[0])
        for ln in text
        if ln.strip().endswith("times the listen queue of a socket overflowed")
    ]
    # net-tools prints a TcpExt sentence only once its counter is non-zero: absent from the first snapshot
    assert over["value"].tolist() == values and len(values) == 4
    assert over["per_s"].iloc[-1] > 0
    assert {"OutSegs", "RetransSegs", "InSegs", "ListenDrops", "CurrEstab"} <= set(
        src.main["field"].astype(str)
    )
    assert src.main.loc[over.index[0], "line_no"] == next(
        i for i, ln in enumerate(text, 1) if "listen queue" in ln
    )


def test_netstat_s_keeps_named_counters_and_digits_in_names() -> None:
    text = [
        "Ip:",
        "    5 total packets received",
        "IcmpMsg:",
        "        InType3: 7",
        "TcpExt:",
        ("    TCPBacklogCoalesce: 223"),
        "    Quick ack mode was activated 8 times",
    ]
    src = netstat_s.parse(text, member="n", clock=ClockHints(start_local=None))
    got = dict(zip(src.main["field"].astype(str), src.main["value"], strict=True))
    assert got == {
        "Ip: # total packets received": 5,
        "IcmpMsg: InType3: #": 7,
        ("TcpExt: TCPBacklogCoalesce: #"): 223,
        "TcpExt: Quick ack mode was activated # times": 8,
    }


def test_netstat_s_counter_before_a_section_raises() -> None:
    with pytest.raises(ParseError, match="n line 1: not netstat -s"):
        netstat_s.parse(["    5 total packets received"], member="n", clock=HINTS)


def test_procvmstat_rates_from_the_counters() -> None:
    src = read(procvmstat, "linux_procvmstat.txt")
    fault = src.main[src.main["field"] == "pgfault"]
    text = (FIXTURES / "linux_procvmstat.txt").read_text().splitlines()
    values = [int(ln.split()[1]) for ln in text if ln.startswith("pgfault ")]
    assert fault["value"].tolist() == values
    dt = (fault["ts"].iloc[1] - fault["ts"].iloc[0]).total_seconds()
    assert fault["per_s"].iloc[1] == pytest.approx((values[1] - values[0]) / dt)
    assert src.meta["variant"].endswith("allocstall_* per zone (kernel >= 4.8)")


def test_procvmstat_odd_line_warns_and_a_bad_start_raises() -> None:
    src = procvmstat.parse(
        ["TS 1776790303.0 2026-04-21 16:51:43", "nr_free_pages 10", "what is this", "pgfault 3"],
        member="v",
        clock=HINTS,
    )
    assert [(w.line_no, w.code) for w in src.warnings] == [(3, "odd-line")]
    with pytest.raises(ParseError, match="v line 1"):
        procvmstat.parse(["hello world"], member="v", clock=HINTS)


@pytest.mark.samples
@pytest.mark.parametrize(
    "suffix,module", [("netstat_s", netstat_s), ("procvmstat", procvmstat), ("diskstats", diskstats)]
)
def test_pt_stalk_3_7_samples(suffix: str, module) -> None:
    path = SAMPLES / f"My-gather/pt-stalk/example2/2026_04_21_16_51_41-{suffix}"
    if not path.exists():
        pytest.skip("../shared/samples is absent")
    with path.open() as fh:
        src = module.parse(fh, member=path.name, clock=HINTS)
    assert src.main["ts"].nunique() == 30 and src.clock == "ts-marker"
    assert str(src.main["ts"].min()) == "2026-04-21 16:51:43.009325313+00:00"


@pytest.mark.parametrize(
    "name,fmt",
    [
        ("linux_diskstats.txt", "diskstats"),
        ("procps_vmstat-d-t.txt", "diskstats"),
        ("procps_vmstat-D.txt", "diskstats"),
        ("linux_netstat_s_idle.txt", "netstat_s"),
        ("linux_procvmstat.txt", "procvmstat"),
    ],
)
def test_detection(name: str, fmt: str) -> None:
    head = (FIXTURES / name).read_text().splitlines()[:60]
    assert registry.detect(head).FORMAT == fmt


@pytest.mark.parametrize(
    "name,module,column",
    [
        ("linux_diskstats.txt", diskstats, "r_per_s"),
        ("linux_netstat_s_idle.txt", netstat_s, "per_s"),
        ("linux_procvmstat.txt", procvmstat, "per_s"),
    ],
)
def test_pieces_cut_at_markers_give_the_rates_and_lines_of_one_reading(
    name: str, module, column: str
) -> None:
    import io

    from parsers.ingest import cutting, pieces

    data = (FIXTURES / name).read_bytes()
    cut = list(cutting.split(b"", io.BytesIO(data), piece_bytes=len(data) // 3))
    assert len(cut) >= 3
    joined = pieces.join([pieces.parse_piece(module, p, member=name, clock=HINTS) for p in cut]).main
    whole = read(module, name).main
    assert joined["line_no"].tolist() == whole["line_no"].tolist()
    assert np.allclose(joined[column].to_numpy(), whole[column].to_numpy(), equal_nan=True)
