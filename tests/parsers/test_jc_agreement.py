"""Our parsers against jc (kellyjonbrazil/jc 1.26) on the real captures jc also reads.

Only files the per-parser tests do not already compare with jc (test_vmstat: meltdown, vmstat-at-5-10,
vmstat-1-long, example1 16_43_49-vmstat; test_mpstat: centos mpstat-A-2-5; test_iostat: the sysbench
capture; test_interrupts: jc linux-proc, coreos; test_ps: jc ps-ef x2, coreos ps -elfL). Files jc
itself misreads are left out, with the reason: decimal commas (My-gather -iostat, csd_project mpstat:
jc reads ``0,56`` as 56), mpstat -T (jc shifts the CORE/SOCK/NODE columns of the ``all`` row), the
iostatplot -t capture (jc counts the time lines as 179 extra devices), ps lstart (jc splits the date
into five columns), /proc/interrupts of aarch64 and of the MT6589 phone (jc raises). The files are
parsed with the parser module directly, so a detection bug does not hide a reading one.
"""

from __future__ import annotations

from pathlib import Path

import jc
import pytest

from parsers import interrupts, iostat, mpstat, ps, vmstat
from parsers.base import ClockHints
from tests.parsers.test_vmstat import JC_KEYS

pytestmark = pytest.mark.samples

NO_HINTS = ClockHints()
KIB = 1024
MIB = 1024 * 1024

#: jc vmstat key -> our column (every column both name; None in jc = absent in ours).
VMSTAT_KEYS = JC_KEYS  # jc's vmstat keys -> our columns, kept with the vmstat tests


def _text(samples: Path, rel: str) -> str:
    return (samples / rel).read_text()


# --- vmstat ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "jc/vmstat/centos-7.7/vmstat.out",
        "jc/vmstat/centos-7.7/vmstat-a.out",
        "jc/vmstat/centos-7.7/vmstat-w.out",
        "jc/vmstat/centos-7.7/vmstat-awt.out",
        "jc/vmstat/generic/vmstat-extra-wide.out",
        "percona-toolkit/pt-summary/Linux/002/vmstat",
        "percona-toolkit/pt-summary/Linux/005/vmstat",
        "percona-toolkit/pt-align/002-raw.txt",
        "My-gather/pt-stalk/example1/2026_04_21_16_43_19-vmstat",
        "My-gather/pt-stalk/example1/2026_04_21_16_43_19-vmstat-overall",
        "My-gather/pt-stalk/example2/2026_04_21_16_51_41-vmstat",
    ],
)
def test_vmstat_columns_match_jc(samples: Path, rel: str) -> None:
    text = _text(samples, rel)
    theirs = jc.parse("vmstat", text, quiet=True)
    ours = vmstat.parse(text.splitlines(), member=rel, clock=NO_HINTS).main
    assert len(ours) == len(theirs)
    for key, col in VMSTAT_KEYS.items():
        want = [row[key] for row in theirs]
        if all(v is None for v in want):
            assert col not in ours, col
        else:
            assert ours[col].tolist() == want, col


def test_vmstat_t_timestamps_match_jc(samples: Path) -> None:
    rel = "jc/vmstat/centos-7.7/vmstat-awt.out"
    text = _text(samples, rel)
    theirs = jc.parse("vmstat", text, quiet=True)
    ours = vmstat.parse(text.splitlines(), member=rel, clock=NO_HINTS).main
    assert [t.strftime("%Y-%m-%d %H:%M:%S") for t in ours["ts"]] == [r["timestamp"] for r in theirs]


# --- iostat ---------------------------------------------------------------------------------------

#: Per-file: jc's key for read throughput and the factor from its unit to our bytes/s.
IOSTAT_X = [
    ("jc/iostat/centos-7.7/iostat-x.out", "rkb_s", KIB),
    ("jc/iostat/centos-7.7/iostat-mx.out", "rmb_s", MIB),
    ("jc/iostat/ubuntu-18.04/iostat-x.out", "rkb_s", KIB),
    ("jc/iostat/ubuntu-18.04/iostat-mx.out", "rmb_s", MIB),
    ("jc/iostat/ubuntu-20.10/iostat-x.out", "rkb_s", KIB),
    ("jc/iostat/ubuntu-20.10/iostat-mx.out", "rmb_s", MIB),
    ("sysstat/iostat/expected.iostat-x", "rkb_s", KIB),
    ("sysstat/iostat/expected.iostat-x-ALL", "rkb_s", KIB),
]


def _iostat(samples: Path, rel: str):
    text = _text(samples, rel)
    theirs = jc.parse("iostat", text, quiet=True)
    ours = iostat.parse(text.splitlines(), member=rel, clock=NO_HINTS)
    return ours, [r for r in theirs if r["type"] == "device"], [r for r in theirs if r["type"] == "cpu"]


@pytest.mark.parametrize(("rel", "read_key", "factor"), IOSTAT_X)
def test_iostat_x_devices_match_jc(samples: Path, rel: str, read_key: str, factor: int) -> None:
    ours, dev, _ = _iostat(samples, rel)
    df = ours.frames["iostat"]
    assert df["device"].tolist() == [r["device"] for r in dev]
    assert df["r_per_s"].tolist() == [r["r_s"] for r in dev]
    assert df["w_per_s"].tolist() == [r["w_s"] for r in dev]
    assert df["r_bytes_per_s"].tolist() == pytest.approx([r[read_key] * factor for r in dev])
    assert df["util_pct"].tolist() == [r["percent_util"] for r in dev]
    assert df["aqu_sz"].tolist() == [r.get("aqu_sz", r.get("avgqu_sz")) for r in dev]
    assert df["w_await"].tolist() == [r["w_await"] for r in dev]


@pytest.mark.parametrize(
    "rel",
    [
        "jc/iostat/centos-7.7/iostat.out",
        "jc/iostat/centos-7.7/iostat-1.out",
        "sysstat/iostat/expected.iostat",
        "sysstat/iostat/expected.iostat-dec",
    ],
)
def test_iostat_basic_report_matches_jc(samples: Path, rel: str) -> None:
    ours, dev, _ = _iostat(samples, rel)
    df = ours.frames["iostat"]
    assert df["device"].tolist() == [r["device"] for r in dev]
    assert df["tps"].tolist() == [r["tps"] for r in dev]
    assert df["r_bytes_per_s"].tolist() == pytest.approx([r["kb_read_s"] * KIB for r in dev])
    assert df["w_bytes"].tolist() == pytest.approx([r["kb_wrtn"] * KIB for r in dev])


@pytest.mark.parametrize(
    "rel",
    [
        "jc/iostat/centos-7.7/iostat-1.out",
        "jc/iostat/ubuntu-20.10/iostat-x.out",
        "sysstat/iostat/expected.iostat",
    ],
)
def test_iostat_avg_cpu_matches_jc(samples: Path, rel: str) -> None:
    ours, _, cpu = _iostat(samples, rel)
    df = ours.frames["iostat_cpu"]
    assert df["user"].tolist() == [r["percent_user"] for r in cpu]
    assert df["iowait"].tolist() == [r["percent_iowait"] for r in cpu]
    assert df["idle"].tolist() == [r["percent_idle"] for r in cpu]


# --- mpstat ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "jc/mpstat/centos-7.7/mpstat.out",
        "jc/mpstat/centos-7.7/mpstat-A.out",
        "jc/mpstat/ubuntu-18.04/mpstat-A.out",
        "sysstat/mpstat/expected.mpstat",
        "sysstat/mpstat/expected.mpstat-A",
    ],
)
def test_mpstat_cpu_and_intr_match_jc(samples: Path, rel: str) -> None:
    text = _text(samples, rel)
    theirs = [r for r in jc.parse("mpstat", text, quiet=True) if not r.get("average")]
    ours = mpstat.parse(text.splitlines(), member=rel, clock=NO_HINTS)
    # jc also types the -N (NODE) rows as "cpu"; they carry a "node" key instead of "cpu".
    jc_cpu = [r for r in theirs if r.get("type") == "cpu" and "cpu" in r]
    jc_intr = [r for r in theirs if "intr_s" in r]
    cpu, intr = ours.frames["mpstat_cpu"], ours.frames["mpstat_intr"]
    assert cpu["cpu"].tolist() == [-1 if r["cpu"] == "all" else int(r["cpu"]) for r in jc_cpu]
    assert cpu["usr"].tolist() == [r["percent_usr"] for r in jc_cpu]
    assert cpu["iowait"].tolist() == [r["percent_iowait"] for r in jc_cpu]
    assert cpu["idle"].tolist() == [r["percent_idle"] for r in jc_cpu]
    assert intr["intr_per_s"].tolist() == [r["intr_s"] for r in jc_intr]


# --- /proc/interrupts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "node_exporter/interrupts/interrupts",
        "kernel-measure/interrupts/interrupts.txt",
        "intersched/interrupts/interrupts.txt",
        "sysstat/interrupts/root1-proc-interrupts",
        "sysstat/interrupts/root3-proc-interrupts",
    ],
)
def test_interrupt_counts_match_jc(samples: Path, rel: str) -> None:
    text = _text(samples, rel)
    theirs = jc.parse("proc_interrupts", text, quiet=True)
    main = interrupts.parse(text.splitlines(), member=rel, clock=NO_HINTS).main
    assert main["irq"].nunique() == len(theirs)
    for ref in theirs:
        assert main[main["irq"] == ref["irq"]].sort_values("cpu")["count"].tolist() == ref["interrupts"], ref[
            "irq"
        ]


# --- ps -------------------------------------------------------------------------------------------


def _ps(samples: Path, rel: str):
    text = _text(samples, rel)
    return ps.parse(text.splitlines(), member=rel, clock=NO_HINTS).main, jc.parse("ps", text, quiet=True)


def test_ps_axu_matches_jc(samples: Path) -> None:
    ours, theirs = _ps(samples, "jc/ps/centos-7.7/ps-axu.out")
    assert ours["pid"].tolist() == [r["pid"] for r in theirs]
    assert ours["user"].tolist() == [r["user"] for r in theirs]
    assert ours["stat"].tolist() == [r["stat"] for r in theirs]
    assert ours["pcpu"].tolist() == [r["cpu_percent"] for r in theirs]


def test_ps_alx_matches_jc(samples: Path) -> None:
    ours, theirs = _ps(samples, "coreos-sosreport-master1/ps/ps_alxwww")
    assert ours["pid"].tolist() == [r["pid"] for r in theirs]
    assert ours["ppid"].tolist() == [r["ppid"] for r in theirs]
    assert ours["stat"].tolist() == [r["stat"] for r in theirs]
    assert ours["wchan"].tolist() == ["" if r["wchan"] == "-" else r["wchan"] for r in theirs]


def test_ps_axo_columns_before_lstart_match_jc(samples: Path) -> None:
    rel = "coreos-sosreport-master1/ps/ps_axo_flags_state_uid_pid_ppid_pgid_sid_cls_pri_addr_sz_wchan_lstart_tty_time_cmd"
    ours, theirs = _ps(samples, rel)
    assert ours["pid"].tolist() == [r["pid"] for r in theirs]
    assert ours["state"].tolist() == [r["s"] for r in theirs]
    assert ours["wchan"].tolist() == ["" if r["wchan"] == "-" else r["wchan"] for r in theirs]


@pytest.mark.parametrize(
    "rel",
    [
        "My-gather/pt-stalk/example1/2026_04_21_16_43_19-ps",
        "My-gather/pt-stalk/example1/2026_04_21_16_43_49-ps",
        "My-gather/pt-stalk/example2/2026_04_21_16_51_41-ps",
    ],
)
def test_pt_stalk_ps_eaF_matches_jc(samples: Path, rel: str) -> None:
    ours, theirs = _ps(samples, rel)
    assert ours["pid"].tolist() == [r["pid"] for r in theirs]
    assert ours["ppid"].tolist() == [r["ppid"] for r in theirs]
    assert ours["user"].tolist() == [r["uid"] for r in theirs]


@pytest.mark.parametrize(
    "rel",
    [
        "percona-toolkit/pt-mysql-summary/ps-mysqld-005.txt",
        "percona-toolkit/pt-mysql-summary/ps-mysqld-006.txt",
    ],
)
def test_ps_plain_header_matches_jc(samples: Path, rel: str) -> None:
    ours, theirs = _ps(samples, rel)
    assert ours["pid"].tolist() == [r["pid"] for r in theirs]
    assert ours["stat"].tolist() == [r["stat"] for r in theirs]
