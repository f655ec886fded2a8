"""Bundles of several hosts built from a real pt-stalk capture (tests/fixtures/bundles), for the
tests of issue 22: each host a copy of the same collection whose own headers name another host
(pt-stalk's ``-hostname``, the sysstat banners ``Linux ... (vm)``, the ``hostname`` variable), so
that every host holds the same minutes, as a cluster's nodes captured at once."""

from __future__ import annotations

import io
import re
import tarfile
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "bundles"
#: A pt-stalk collection of MariaDB under a temporary-table load, captured on this machine (host "vm").
PTSTALK = FIXTURES / "ptstalk-mariadb-tmptables.tar.gz"


def collection(source: Path = PTSTALK) -> dict[str, bytes]:
    """The members of the real capture: base name -> bytes."""
    out: dict[str, bytes] = {}
    with tarfile.open(source) as tar:
        for info in tar.getmembers():
            if info.isfile():
                out[Path(info.name).name] = tar.extractfile(info).read()  # type: ignore[union-attr]
    return out


def renamed(members: dict[str, bytes], host: str, *, was: str = "vm") -> dict[str, bytes]:
    """The same capture as taken on ``host``: its -hostname, sysstat banners and hostname variable."""
    out = {}
    for name, data in members.items():
        if name.endswith("-hostname"):
            data = f"{host}\n".encode()
        data = data.replace(f"({was})".encode(), f"({host})".encode())
        data = data.replace(f"hostname\t{was}\n".encode(), f"hostname\t{host}\n".encode())
        out[name] = data
    return out


def write_tar(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return path


#: Members whose content names their host (the -hostname file, the sysstat banners, the variables).
NAMING = ("-hostname", "-variables", "-iostat", "-iostat-overall", "-mpstat", "-mpstat-overall")


def hosts_tarball(path: Path, hosts: list[str], *, named: bool = True) -> Path:
    """A tarball ``incident/<host>/<prefix>-<suffix>`` per host, each the real collection renamed to
    that host. ``named=False`` leaves out every member whose content names a host (``NAMING``):
    only the directory names it."""
    members = collection()
    files: dict[str, bytes] = {}
    for host in hosts:
        for name, data in renamed(members, host).items():
            if named or not name.endswith(NAMING):
                files[f"incident/{host}/{name}"] = data
    return write_tar(path, files)


def host_bundle(path: Path, host: str) -> Path:
    """One host's own bundle (``<host>/<prefix>-<suffix>``), to add to a case beside another's."""
    return write_tar(path, {f"pt-stalk/{n}": d for n, d in renamed(collection(), host).items()})


def with_cpus(procstat: bytes, ncpu: int) -> bytes:
    """A pt-stalk ``-procstat`` (/proc/stat snapshots) of a server of ``ncpu`` CPUs: idle rows
    ``cpu2`` .. ``cpu<ncpu-1>`` added after ``cpu1`` in every snapshot (the CPU count is read from the
    ``cpuN`` rows)."""
    extra = "".join(f"cpu{i} 100 0 100 10000 0 0 0 0 0 0\n" for i in range(2, ncpu)).encode()
    return re.sub(rb"(cpu1 [^\n]*\n)", lambda m: m.group(1) + extra, procstat)
