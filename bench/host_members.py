"""Parse time and peak memory of the host members' readers on an hour-long pt-stalk capture shape.

Writes, in a temporary folder, one hour (``--seconds``, default 3600) of what pt-stalk 3.2.1 writes
every second, in the line shapes of tests/fixtures/bundles/ptstalk-mariadb-fullfs-crash.tar.gz
(net-tools 2.10, procps-ng 4.0.2, kernel 6.x): ``-netstat`` with ``--sockets`` sockets a snapshot
(default 2,000: a busy server's connections from 20 application hosts), ``-df`` with 8 mounts,
``-slabinfo`` with 230 caches, ``-numastat`` with 2 nodes; then parses each member with its reader
in this process and prints its size, lines, seconds and the peak resident size of the process::

    .venv/bin/python bench/host_members.py [--seconds 3600] [--sockets 2000]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from parsers import df, netstat, numastat, slabinfo
from parsers.base import ClockHints

EPOCH = 1795794782


def _ts(i: int) -> str:
    t = time.gmtime(EPOCH + i)
    return f"TS {EPOCH + i}.012877364 {time.strftime('%Y-%m-%d %H:%M:%S', t)}\n"


def write(folder: Path, seconds: int, sockets: int) -> dict[str, Path]:
    paths = {name: folder / name for name in ("netstat", "df", "slabinfo", "numastat")}
    with paths["netstat"].open("w") as fh:
        for i in range(seconds):
            fh.write(_ts(i))
            fh.write("Active Internet connections (servers and established)\n")
            fh.write(
                "Proto Recv-Q Send-Q Local Address           Foreign Address         State       "
                "PID/Program name\n"
            )
            fh.write(
                "tcp        0      0 0.0.0.0:3306            0.0.0.0:*               LISTEN      "
                "1234/mysqld\n"
            )
            for s in range(sockets):
                state = "TIME_WAIT" if s % 10 == 0 else "ESTABLISHED"
                fh.write(
                    f"tcp        0      0 10.0.0.5:3306           10.0.1.{s % 20}:{30000 + s:<5}        "
                    f"{state:<11} 1234/mysqld\n"
                )
    with paths["df"].open("w") as fh:
        for i in range(seconds):
            fh.write(_ts(i) + "Filesystem              1K-blocks     Used Available Use% Mounted on\n")
            for m in range(8):
                fh.write(
                    f"/dev/sd{chr(97 + m)}1        264212084 {25127160 + i} {81263752 - i}  24% /data{m}\n"
                )
    with paths["slabinfo"].open("w") as fh:
        for i in range(seconds):
            fh.write(_ts(i) + "slabinfo - version: 2.1\n")
            for c in range(230):
                fh.write(
                    f"cache_{c:<12} {189588 + i} 190323    192   21    1 : tunables    0    0    0 : "
                    "slabdata   9063   9063      0\n"
                )
    with paths["numastat"].open("w") as fh:
        for i in range(seconds):
            fh.write(_ts(i))
            for n in range(2):
                fh.write(
                    f"node{n}\nnuma_hit {15058776462 + i * 1000}\nnuma_miss 0\nnuma_foreign 34\n"
                    f"interleave_hit 8251347\nlocal_node {15055215456 + i * 1000}\nother_node 3432634\n"
                )
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=3600)
    ap.add_argument("--sockets", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write(Path(tmp), args.seconds, args.sockets)
        for mod, name in ((netstat, "netstat"), (df, "df"), (slabinfo, "slabinfo"), (numastat, "numastat")):
            path = paths[name]
            lines = sum(1 for _ in path.open())
            start = time.perf_counter()
            with path.open() as fh:
                src = mod.parse(fh, member=name, clock=ClockHints())
            took = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{name:9} {path.stat().st_size / 1e6:8.1f} MB {lines:>10,} lines {took:7.2f} s "
                f"{lines / took / 1e6:5.2f} M lines/s rows {len(src.main):>9,} peak RSS {peak:6.0f} MiB"
            )


if __name__ == "__main__":
    main()
