"""Hosts of a bundle (parsers/ingest/hosts.py, issue 22): every member placed on the host its own
headers name, each host settled on its own clock and CPUs, "one source, many captures" within a host.
The bundles are a real pt-stalk capture made on this machine (tests/fixtures/bundles), copied per
host with its -hostname, sysstat banners and hostname variable rewritten (tests/multihost.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analyzer.timeline import primary
from analyzer.timeline.timeline import Timeline
from parsers.base import Clock, ParsedSource
from parsers.ingest import hosts
from parsers.ingest.bundle import read_bundle
from tests.multihost import PTSTALK, host_bundle, hosts_tarball


def _roles(bundle, host) -> dict[str, str]:  # noqa: ANN001
    tl = Timeline.from_sources(host.sources(bundle), ncpu=host.ncpu, host=host.name)
    return {m: r.role for m, r in tl.roles.items()}


def test_a_one_host_bundle_reads_as_before() -> None:
    b = read_bundle(PTSTALK)
    assert [h.name for h in b.hosts] == ["vm"]
    assert (b.host, b.ncpu, b.utc_offset_s, b.layout) == ("vm", 2, 0, "pt-stalk")
    assert b.warnings == []
    assert b.hosts[0].name_origin.startswith("pt-stalk -hostname of its collection")
    assert {reason for _, reason in b.host_of.values()} == {b.hosts[0].name_origin}


def test_two_hosts_of_the_same_minutes_keep_every_primary_capture(tmp_path: Path) -> None:
    """The issue's bundle: db-a/ and db-b/, each a pt-stalk collection of the same minutes. Before,
    db-b's 19 captures were `overlap` and the warnings said they came from another server."""
    b = read_bundle(hosts_tarball(tmp_path / "two.tgz", ["db-a", "db-b"]))
    assert [h.name for h in b.hosts] == ["db-a", "db-b"]
    assert b.warnings == []  # no "captured on another server", no overlap warning
    one = read_bundle(PTSTALK)
    alone = _roles(one, one.hosts[0])
    for host in b.hosts:
        assert all(m.startswith(f"incident/{host.name}/") for m in host.members)
        assert (host.ncpu, host.kernel, host.utc_offset_s) == (2, "6.18.44-fc-v769", 0)
        roles = _roles(b, host)
        assert primary.OVERLAP not in roles.values()
        # each host's roles are exactly those of the capture read alone
        assert {m.rsplit("/", 1)[1]: r for m, r in roles.items()} == {
            m.rsplit("/", 1)[1]: r for m, r in alone.items()
        }
    a, c = (Timeline.from_sources(h.sources(b)) for h in b.hosts)
    assert (
        len(a.frames["vmstat"])
        == len(c.frames["vmstat"])
        == len(Timeline.from_sources(one.sources).frames["vmstat"])
    )


def test_a_directory_per_host_names_the_hosts_when_nothing_inside_does(tmp_path: Path) -> None:
    b = read_bundle(hosts_tarball(tmp_path / "dirs.tgz", ["db-a", "db-b"], named=False))
    assert [h.name for h in b.hosts] == ["db-a", "db-b"]
    assert b.hosts[1].name_origin == "its directory db-b/ (a directory per host; no host named inside)"
    assert all(primary.OVERLAP not in _roles(b, h).values() for h in b.hosts)


def test_a_bundle_of_eight_hosts(tmp_path: Path) -> None:
    names = [f"node{i}" for i in range(8)]
    b = read_bundle(hosts_tarball(tmp_path / "eight.tgz", names))
    assert [h.name for h in b.hosts] == names
    assert all(len(h.members) == 24 for h in b.hosts)
    assert b.warnings == []


def test_added_bundles_merge_hosts_by_name_and_one_source_many_captures_holds_within_a_host(
    tmp_path: Path,
) -> None:
    """A second bundle of db-b (the same minutes again) joins db-b: its captures compete with db-b's
    own (one is `overlap`), never with db-a's."""
    two = hosts_tarball(tmp_path / "two.tgz", ["db-a", "db-b"])
    more = [
        (host_bundle(tmp_path / "b.tgz", "DB-B"), "db-b-again.tgz"),
        (host_bundle(tmp_path / "c.tgz", "db-c"), "c.tgz"),
    ]
    b = read_bundle(two, more=more)
    assert [h.name for h in b.hosts] == ["db-a", "db-b", "db-c"]
    db_b = b.hosts[1]
    assert sum(m.startswith("db-b-again.tgz/pt-stalk/") for m in db_b.members) == 24
    roles_b = _roles(b, db_b)
    assert primary.OVERLAP in roles_b.values()
    overlapped = [m for m, r in roles_b.items() if r == primary.OVERLAP]
    assert all(m.startswith(("incident/db-b/", "db-b-again.tgz/")) for m in overlapped)
    assert primary.OVERLAP not in _roles(b, b.hosts[0]).values()
    assert b.host_of["c.tgz/pt-stalk/2026_11_22_12_30_43-vmstat"][0] == "db-c"


def _src(member: str, fmt: str = "vmstat", **meta: object) -> ParsedSource:
    frame = pd.DataFrame({"ts": pd.Series([], dtype="datetime64[ns, UTC]")})
    return ParsedSource(format=fmt, member=member, frames={fmt: frame}, clock=Clock.INFERRED, meta=dict(meta))


def test_the_clues_in_their_order() -> None:
    sources = [
        _src("x/2026_01_01_00_00_00-hostname", "hostname", host="db-a"),
        _src("x/2026_01_01_00_00_00-vmstat"),
        # a MySQL Shell member names its instance: honoured before the collection's -hostname
        _src(
            "x/2026_01_01_00_00_00-shell",
            "shell",
            host="db2_3306",
            host_origin="MySQL Shell instance prefix 'db2_3306'",
        ),
        # a banner naming another host inside a collection stays with the collection (and is warned of)
        _src("x/2026_01_01_00_00_00-iostat", "iostat", host="elsewhere"),
        _src("archive/oswvmstat/db9.example.com_vmstat_12.02.29.1100.dat"),
        _src("loose/sar.txt", "sar", host="DB9"),
        _src("m/manifest.txt", "manifest", manifest={"hostname": "collector-host"}),
        _src("m/vmstat.txt"),
    ]
    placed = hosts.assign(sources)
    got = {m: h for m, (h, _) in placed.host_of.items()}
    assert got["x/2026_01_01_00_00_00-vmstat"] == "db-a"
    assert got["x/2026_01_01_00_00_00-shell"] == "db2_3306"
    assert placed.host_of["x/2026_01_01_00_00_00-shell"][1] == "MySQL Shell instance prefix 'db2_3306'"
    assert got["x/2026_01_01_00_00_00-iostat"] == "db-a"
    assert got["archive/oswvmstat/db9.example.com_vmstat_12.02.29.1100.dat"] == "db9.example.com"
    assert got["loose/sar.txt"] == "db9.example.com"  # one host, two spellings
    assert got["m/vmstat.txt"] == "collector-host"
    assert [name for name, _ in placed.hosts] == ["db-a", "db2_3306", "db9.example.com", "collector-host"]
    mismatches = hosts.banner_mismatches(sources, placed)
    assert [(s.member, named, host) for s, named, host in mismatches] == [
        ("x/2026_01_01_00_00_00-iostat", "elsewhere", "db-a")
    ]


def test_a_bundle_that_names_no_host() -> None:
    placed = hosts.assign([_src("vmstat.txt")])
    assert placed.host_of["vmstat.txt"] == (hosts.UNKNOWN_HOST, "no host is named in the bundle")
    assert placed.placeholder


@pytest.mark.parametrize("hostile", ["db<script>", "a b\nc", "x" * 400])
def test_host_names_from_uploads_are_cleaned(hostile: str) -> None:
    placed = hosts.assign(
        [
            _src("d/2026_01_01_00_00_00-hostname", "hostname", host=hostile),
            _src("d/2026_01_01_00_00_00-vmstat"),
        ]
    )
    name = placed.host_of["d/2026_01_01_00_00_00-vmstat"][0]
    assert name == hosts.clean_host(hostile) and len(name) <= 255 and "<" not in name and " " not in name


def test_a_bundle_naming_more_hosts_than_a_case_holds() -> None:
    """A hostile bundle of 100 loose sysstat files, each naming its own host: 64 hosts at most."""
    sources = [_src(f"sar{i}.txt", "sar", host=f"h{i}") for i in range(hosts.MAX_HOSTS + 36)]
    placed = hosts.assign(sources)
    assert len(placed.hosts) == hosts.MAX_HOSTS
    assert len(placed.overflow) == 36
    assert placed.host_of["sar99.txt"] == ("h0", f"more than {hosts.MAX_HOSTS} hosts are named: read with h0")


def test_two_servers_of_one_machine_named_with_their_ports_stay_two() -> None:
    """MySQL Shell names sandbox instances host:port: one machine's two servers are two hosts, while
    one server's two spellings (a domain or not) are one."""
    origin = "MySQL Shell instance file"
    sources = [
        _src("diag/127.0.0.1_3310.global_variables.tsv", "shell", host="127.0.0.1:3310", host_origin=origin),
        _src("diag/127.0.0.1_3320.global_variables.tsv", "shell", host="127.0.0.1:3320", host_origin=origin),
        _src("diag/db1_3306.global_variables.tsv", "shell", host="db1.example.com:3306", host_origin=origin),
        _src("diag/db1_3306.SHOW_GLOBAL_STATUS.tsv", "shell", host="DB1:3306", host_origin=origin),
    ]
    placed = hosts.assign(sources)
    assert [name for name, _ in placed.hosts] == ["127.0.0.1:3310", "127.0.0.1:3320", "db1.example.com:3306"]
