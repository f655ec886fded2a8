"""Packing the generated members into the gzip'd tar (streamed, never whole in memory) and the
collector's manifest."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

from bench.gen.model import GZIP_LEVEL, HOST, KERNEL, Member, Spec


class _CountingWriter:
    """A write-only file object that counts the bytes going through it (the tar stream size)."""

    def __init__(self, raw: gzip.GzipFile) -> None:
        self.raw = raw
        self.count = 0

    def write(self, data: bytes) -> int:
        self.count += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


def pack(out: Path, top: str, members: dict[str, Member], spec: Spec, t0: float) -> int:
    """Stream the member files into ``out`` as a gzip'd tar (one directory, like collect.sh)."""
    mtime = int(t0 + spec.samples * spec.interval + 2)
    with (
        out.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL, mtime=mtime) as gz,
    ):
        counter = _CountingWriter(gz)
        with tarfile.open(fileobj=counter, mode="w|", format=tarfile.GNU_FORMAT) as tar:  # type: ignore[arg-type]
            info = tarfile.TarInfo(top)
            info.type, info.mode, info.mtime, info.uname, info.gname = (
                tarfile.DIRTYPE,
                0o755,
                mtime,
                "root",
                "root",
            )
            tar.addfile(info)
            for m in members.values():
                info = tarfile.TarInfo(m.name)
                info.size, info.mode, info.mtime, info.uname, info.gname = (
                    m.path.stat().st_size,
                    0o644,
                    mtime,
                    "root",
                    "root",
                )
                with m.path.open("rb") as fh:
                    tar.addfile(info, fh)
                m.path.unlink()
        return counter.count


def write_manifest(m: Member, spec: Spec, t0: float) -> None:
    """Write the head of collect.sh's ``manifest.txt`` for ``spec`` starting at ``t0`` (epoch s) into
    ``m``."""
    n = spec.samples
    lines = {
        "casebook_collector": "1",
        "collector_version": "1",
        "hostname": HOST,
        "nproc": str(spec.cpus),
        "kernel": KERNEL,
        "utc_offset": "+0000",
        "timezone": "UTC",
        "start_epoch": f"{t0:.9f}",
        "start_local": spec.start.strftime("%Y-%m-%d %H:%M:%S"),
        "interval": str(spec.interval),
        "duration": str(n * spec.interval),
        "max_mb": "4096",
        "samples_planned": str(n),
        "lc_all": "C",
        "s_time_format": "ISO",
        "mysql_opts": "-uroot -h127.0.0.1",
        "version.vmstat": "vmstat from procps-ng 4.0.2",
        "version.mpstat": "sysstat version 12.6.1",
        "version.iostat": "sysstat version 12.6.1",
        "version.ps": "ps from procps-ng 4.0.2",
        "version.server": "10.11.19-MariaDB-0+deb12u1-log",
        "command.vmstat.txt": f"vmstat -t -n {spec.interval} {n + 1}",
        "clock.vmstat.txt": "per-line (vmstat -t, zone named in the header); first line since boot",
        "command.mpstat.txt": f"mpstat -P ALL {spec.interval} {n}",
        "clock.mpstat.txt": "header+time-of-day (ISO banner date, HH:MM:SS per row, local time)",
        "command.mpstat-intr.txt": f"mpstat -I SUM -P ALL {spec.interval} {n}",
        "clock.mpstat-intr.txt": "header+time-of-day (ISO banner date, HH:MM:SS per row, local time)",
        "command.iostat.txt": f"iostat -dxk -t {spec.interval} {n + 1}",
        "clock.iostat.txt": "per-line (iostat -t, ISO with UTC offset); first report since boot",
        "command.meminfo.txt": "cat /proc/meminfo",
        "command.variables.txt": "mysql -uroot -h127.0.0.1 -e 'SHOW GLOBAL VARIABLES'",
        "skipped.pfs-threads.txt": "performance_schema is OFF (@@performance_schema = 0)",
        "command.ps-threads.txt": "ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32",
        "clock.ps-threads.txt": "ts-marker (a TS line before each snapshot)",
        "command.interrupts.txt": "cat /proc/interrupts",
        "clock.interrupts.txt": "ts-marker (a TS line before each snapshot)",
        "command.processlist.txt": "mysql -uroot -h127.0.0.1 -e 'SHOW FULL PROCESSLIST\\G'",
        "clock.processlist.txt": "ts-marker (a TS line before each snapshot)",
        "command.mysqladmin.txt": "mysqladmin -uroot -h127.0.0.1 extended-status",
        "clock.mysqladmin.txt": "ts-marker (a TS line before each snapshot)",
    }
    m.write("".join(f"{k}: {v}\n" for k, v in lines.items()))


def finish_manifest(m: Member, spec: Spec, t0: float, n: int) -> None:
    """Write the manifest's closing lines (end, ``n`` samples, how it stopped) into ``m``."""
    m.write(
        f"end_epoch: {t0 + n * spec.interval + 1.2:.9f}\nsamples: {n}\nstopped_by: duration\nmissing: none\n"
    )
