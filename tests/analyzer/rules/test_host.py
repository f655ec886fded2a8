"""Host rules (analyzer/rules/host.py, errorlog.py): boundary tables on captures built with the real
readers, the idle healthy capture, missing input, and the real capture of a full file system, a crash
and restarts, a TIME_WAIT storm and back_log above somaxconn."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pytest

from analyzer import engine
from analyzer.findings import Finding
from analyzer.timeline.timeline import Timeline
from parsers import df, mysqld_errorlog, netstat, numastat, slabinfo, sysctl, variables
from parsers.base import ClockHints
from parsers.ingest.bundle import read_bundle
from tests.analyzer.captures import load_timeline

BUNDLE = "bundles/ptstalk-mariadb-fullfs-crash.tar.gz"
TS = "TS 1795794782.0 2026-11-27 15:53:02"
HOST_RULES = (
    "filesystem-full",
    "kernel-settings",
    "client-connection-storm",
    "numa-imbalance",
    "mysqld-errors",
)


def _src(mod, lines: list[str], member: str):  # noqa: ANN001, ANN202
    return mod.parse(lines, member=member, clock=ClockHints())


def _vars(**values: str):  # noqa: ANN202
    return _src(variables, ["Variable_name\tValue", *(f"{k}\t{v}" for k, v in values.items())], "variables")


def _run(key: str, *sources) -> object:  # noqa: ANN001
    tl = Timeline.from_sources(list(sources))
    out = engine.run(tl, only=(key,))
    if out.not_evaluated:
        return out.not_evaluated[0]
    assert not out.failed, out.failed
    return out.findings[0] if out.findings else None


def _df(pct: int, mount: str = "/var/lib/mysql", inodes: bool = False):  # noqa: ANN202
    head = (
        "Filesystem Inodes IUsed IFree IUse% Mounted on"
        if inodes
        else "Filesystem 1K-blocks Used Available Use% Mounted on"
    )
    return _src(df, [TS, head, f"/dev/sdb1 1000 {pct * 10} {1000 - pct * 10} {pct}% {mount}"], "df")


@pytest.mark.parametrize(
    ("pct", "mount", "inodes", "with_vars", "expected"),
    [
        (89, "/var/lib/mysql", False, True, None),
        (90, "/var/lib/mysql", False, True, "warning"),
        (97, "/var/lib/mysql", False, True, "warning"),
        (98, "/var/lib/mysql", False, True, "critical"),
        (99, "/var/lib/mysql", True, True, "critical"),
        (99, "/boot", False, True, "warning"),  # holds none of MySQL's paths: one step lower
        (92, "/boot", False, True, "info"),
        (98, "/data", False, False, "critical"),  # no -variables: every mount may be MySQL's
        (100, "/snap/core/123", False, True, None),  # a read-only image is always full
    ],
)
def test_filesystem_full_boundaries(
    pct: int, mount: str, inodes: bool, with_vars: bool, expected: str | None
) -> None:
    sources = [_df(pct, mount, inodes)]
    if with_vars:
        sources.append(
            _vars(datadir="/var/lib/mysql/", tmpdir="/tmp", log_bin_basename="/var/lib/mysql/binlog")
        )
    f = _run("filesystem-full", *sources)
    assert (f.severity.value if f else None) == expected
    if f is not None:
        assert f.culprit.kind == "filesystem" and f.culprit.id == mount


def test_filesystem_full_names_what_mysql_keeps_there() -> None:
    f = _run("filesystem-full", _df(95), _vars(datadir="/var/lib/mysql/", tmpdir="/var/lib/mysql/tmp"))
    assert "datadir, tmpdir" in f.title and "tmpdir = /var/lib/mysql/tmp" in f.culprit.statement


@pytest.mark.parametrize(
    ("sysctls", "back_log", "expected", "culprit"),
    [
        ({"vm.swappiness": "1", "vm.dirty_ratio": "20", "net.core.somaxconn": "4096"}, "80", None, None),
        ({"vm.swappiness": "30", "vm.dirty_ratio": "40", "net.core.somaxconn": "4096"}, "4096", None, None),
        ({"vm.swappiness": "31", "net.core.somaxconn": "4096"}, "80", "info", "vm.swappiness"),
        ({"vm.dirty_ratio": "41", "vm.swappiness": "60"}, "80", "warning", "vm.dirty_ratio"),
        ({"vm.dirty_ratio": "80", "vm.dirty_bytes": "1000000"}, "80", None, None),  # bytes override the ratio
        ({"net.core.somaxconn": "4095"}, "4096", "warning", "net.core.somaxconn"),
        ({"net.core.somaxconn": "128"}, None, None, None),  # no back_log to compare with
    ],
)
def test_kernel_settings_boundaries(
    sysctls: dict, back_log: str | None, expected: str | None, culprit: str | None
) -> None:
    lines = [TS, *(f"{k} = {v}" for k, v in sysctls.items()), "kernel.pid_max = 4194304"]
    sources = [_src(sysctl, lines, "sysctl")] + ([_vars(back_log=back_log)] if back_log else [])
    f = _run("kernel-settings", *sources)
    assert (f.severity.value if f else None) == expected
    assert (f.culprit.id if f else None) == culprit


def _netstat(tw: int, established: dict[str, int] | None = None, port: int = 3306):  # noqa: ANN202
    lines = [
        TS,
        "Proto Recv-Q Send-Q Local Address Foreign Address State",
        f"tcp 0 0 0.0.0.0:{port} 0.0.0.0:* LISTEN",
    ]
    lines += [f"tcp 0 0 10.0.0.5:{port} 10.0.0.9:{20000 + i} TIME_WAIT" for i in range(tw)]
    for host, n in (established or {}).items():
        lines += [f"tcp 0 0 10.0.0.5:{port} {host}:{30000 + i} ESTABLISHED" for i in range(n)]
    return _src(netstat, lines, "netstat")


@pytest.mark.parametrize(
    ("tw", "established", "expected"),
    [
        (999, None, None),
        (1000, None, "10.0.0.9"),
        (0, {"10.0.0.7": 400, "10.0.0.8": 99}, None),  # fewer than 500 connections
        (0, {"10.0.0.7": 400, "10.0.0.8": 100}, "10.0.0.7"),  # 80 % of 500
        (0, {"10.0.0.7": 399, "10.0.0.8": 101}, None),
        (0, {"10.0.0.7": 900}, None),  # one application server holds them all: not a storm
    ],
)
def test_client_connection_storm_boundaries(tw: int, established: dict | None, expected: str | None) -> None:
    f = _run("client-connection-storm", _netstat(tw, established))
    assert (f.culprit.id if f else None) == expected
    if f is not None:
        assert f.culprit.kind == "host"


def test_client_connection_storm_reads_the_port_from_the_variables() -> None:
    assert _run("client-connection-storm", _netstat(1500, port=3307)) is None
    assert _run("client-connection-storm", _netstat(1500, port=3307), _vars(port="3307")) is not None


def _numastat(miss_per_s: int, hit_per_s: int = 10_000, foreign: bool = False):  # noqa: ANN202
    """Two nodes, pt-stalk's shape: node1 full, its allocations placed on node0 (node0 numa_miss, and
    with ``foreign`` node1 numa_foreign, as /sys/devices/system/node/node1/numastat counts them)."""
    lines = []
    for i in range(3):
        lines += [
            f"TS {1795794782 + i}.0",
            "node0",
            f"numa_hit {hit_per_s * i}",
            (f"numa_miss {miss_per_s * i}"),
            *(["numa_foreign 0"] if foreign else []),
            "node1",
            f"numa_hit {hit_per_s * i}",
            "numa_miss 0",
            *([f"numa_foreign {miss_per_s * i}"] if foreign else []),
        ]
    return _src(numastat, lines, "numastat")


@pytest.mark.parametrize("foreign", [True, False])
def test_numa_imbalance_names_the_full_node(foreign: bool) -> None:
    f = _run("numa-imbalance", _numastat(4000, foreign=foreign))
    assert f.title.startswith("NUMA node 1 full: 4,000 pages/s meant for it went to another node")
    assert f.explanation.startswith("Node 1 ran out of free memory")
    assert "most of it on node 0" in f.explanation
    if foreign:
        assert f.evidence[0].label == "node1 numa_foreign" and f.evidence[0].lines


@pytest.mark.parametrize(("miss", "expected"), [(0, False), (999, False), (1000, True)])
def test_numa_imbalance_boundaries(miss: int, expected: bool) -> None:
    f = _run("numa-imbalance", _numastat(miss), _vars(innodb_numa_interleave="OFF"))
    assert (f is not None) == expected
    if f is not None:
        assert f.culprit.id == "innodb_numa_interleave"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["2026-11-27 15:53:10 0 [Note] /usr/sbin/mysqld: ready for connections."], None),
        (["2026-11-27 15:53:10 7 [Warning] Aborted connection 7 to db: 'app'"], None),
        (
            [
                (
                    "2026-11-27 15:53:10 0 [ERROR] mysqld: Disk full (/tmp/x); waiting for someone to free some "
                    "space..."
                )
            ],
            "warning",
        ),
        (
            [
                "261127 15:53:10 [ERROR] /usr/sbin/mysqld got signal 11 ;",
                ("2026-11-27 15:53:12 0 [Note] /usr/sbin/mysqld: ready for connections."),
            ],
            "critical",
        ),
        (["2026-11-27 12:00:00 0 [ERROR] mysqld: an error hours before the capture"], None),
    ],
)
def test_mysqld_errors_boundaries(lines: list[str], expected: str | None) -> None:
    capture = _df(10)
    f = _run("mysqld-errors", _src(mysqld_errorlog, lines, "log_error"), capture)
    assert (f.severity.value if isinstance(f, Finding) else None) == expected


def test_idle_healthy_capture_fires_none_of_them() -> None:
    out = engine.run(load_timeline("idle"), only=HOST_RULES)
    assert out.findings == [] and {n.key for n in out.not_evaluated} == set(HOST_RULES)


@pytest.mark.parametrize("key", HOST_RULES)
def test_missing_input_gives_not_evaluated(key: str) -> None:
    assert _run(key, _vars(port="3306")).key == key


@functools.cache
def _crash_capture(path: Path):  # noqa: ANN202
    bundle = read_bundle(path)
    tl = Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu, utc_offset_s=bundle.utc_offset_s)
    return bundle, {f.key: f for f in engine.run(tl, only=HOST_RULES).findings}


@pytest.fixture
def crash_capture(fixtures: Path):  # noqa: ANN201
    return _crash_capture(fixtures / BUNDLE)


def test_real_capture_every_member_is_used(crash_capture) -> None:  # noqa: ANN001
    bundle, _ = crash_capture
    assert bundle.not_used == []


def test_real_capture_names_the_full_tmpfs(crash_capture) -> None:  # noqa: ANN001
    f = crash_capture[1]["filesystem-full"]
    assert f.culprit.id == "/tmp/hmembers/fs" and "datadir" in f.culprit.statement and "96 %" in f.title


def test_real_capture_names_somaxconn_and_the_storm_client(crash_capture) -> None:  # noqa: ANN001
    findings = crash_capture[1]
    assert findings["kernel-settings"].culprit.id == "net.core.somaxconn"
    assert "back_log (8192)" in findings["kernel-settings"].title
    storm = findings["client-connection-storm"]
    assert storm.culprit.id == "127.0.0.1" and "TIME_WAIT" in storm.title


def test_real_capture_places_the_crash_and_restarts_on_the_timeline(crash_capture) -> None:  # noqa: ANN001
    f = crash_capture[1]["mysqld-errors"]
    assert f.severity.value == "critical" and "signal 11" in f.title and "2 restart(s)" in f.title
    assert len(f.windows) >= 4 and all(w.start == w.end for w in f.windows)
    assert f.windows[0].start.tzinfo is not None and f.windows[0].start > pd.Timestamp("2026-11-27", tz="UTC")


def _slabinfo(mib_per_s: float, start_gib: float = 1.0, seconds: int = 10):  # noqa: ANN202
    lines = []
    for i in range(seconds + 1):
        kib = start_gib * 1024**2 + mib_per_s * 1024 * i
        slabs = int(kib / 4)
        lines += [
            f"TS {1795794782 + i}.0",
            "slabinfo - version: 2.1",
            f"dentry 100 {slabs * 21} 192 21 1 : tunables 0 0 0 : slabdata {slabs} {slabs} 0",
            "kmalloc-64 100 100 64 64 1 : tunables 0 0 0 : slabdata 2 2 0",
        ]
    return _src(slabinfo, lines, "slabinfo")


@pytest.mark.parametrize(
    ("mib_per_s", "start_gib", "seconds", "fires"),
    [
        (9.9, 1.0, 10, False),
        (10.0, 1.0, 10, True),
        (50.0, 0.1, 10, False),  # still below 1 GiB at the end
        (50.0, 1.0, 9, False),  # too short
    ],
)
def test_slab_cache_growth_boundaries(mib_per_s: float, start_gib: float, seconds: int, fires: bool) -> None:
    f = _run("slab-cache-growth", _slabinfo(mib_per_s, start_gib, seconds))
    assert isinstance(f, Finding) == fires
