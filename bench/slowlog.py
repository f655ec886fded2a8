"""The slow query log digest against pt-query-digest, on the same generated log (docs/performance.md).

``python -m bench.slowlog [--mb 1024] [--dir DIR] [--skip-pt]``: writes a slow log of about ``--mb``
MB made of the real MariaDB 10.11 log's entries (tests/fixtures/slowlog/), repeated with their times
advanced (``# Time:`` and ``SET timestamp=`` moved ``ROUND_S`` seconds a round, so the log runs forward
as a real one does), then times, each in a process of its own, pt-query-digest 3.2.1
(``--output json``) and Casebook's digest (``parsers.slowlog.parse`` and
``analyzer.statements.querydigest.queries``), and prints CPU seconds, wall seconds, peak RSS and the speed
ratio. Both read the same plain file.

The target (the issue "The slow query log"): at least 5x pt-query-digest's speed, under 500 MiB of
memory at any size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "fixtures"
    / "slowlog"
    / "mariadb-10.11_query_plan-explain_sysbench.log"
)
#: Seconds the times of each repeated round move forward (the real log spans 39 s).
ROUND_S = 40
_HEADER = re.compile(r"^(?:\S*mariadbd, Version: .*|Tcp port: .*|Time\s+Id\s+Command\s+Argument)\n", re.M)
_TIME = re.compile(r"^(# Time: )(\d{6}) +(\d{1,2}):(\d\d):(\d\d)$", re.M)
_SET = re.compile(r"^SET timestamp=(\d+);$", re.M)

_CASEBOOK = """
import json, sys
from analyzer.statements.querydigest import queries
from parsers.base import ClockHints
from parsers.slowlog import parse
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    src = parse(f, member=sys.argv[1], clock=ClockHints())
out = queries(src.frames["slowlog_classes"])
print(json.dumps({"classes": len(out), "entries": src.meta["entries"]}))
"""


def generate(path: Path, mb: int) -> int:
    """Write a log of about ``mb`` MB at ``path`` (the header once, then rounds of the real entries
    with their times advanced); returns its size in bytes."""
    body = _HEADER.sub("", SOURCE.read_text())
    header = "".join(m.group(0) for m in list(_HEADER.finditer(SOURCE.read_text()))[:3])
    target = mb << 20
    written = 0
    with path.open("w") as out:
        out.write(header)
        k = 0
        while written < target:
            shift = k * ROUND_S

            def moved(m: re.Match[str], shift: int = shift) -> str:
                s = int(m.group(3)) * 3600 + int(m.group(4)) * 60 + int(m.group(5)) + shift
                day = int(m.group(2)) + s // 86400  # the sample's day: 261207 (not past a month's end here)
                s %= 86400
                return f"{m.group(1)}{day:06d} {s // 3600:2d}:{s // 60 % 60:02d}:{s % 60:02d}"

            text = _SET.sub(
                lambda m, shift=shift: f"SET timestamp={int(m.group(1)) + shift};", _TIME.sub(moved, body)
            )
            out.write(text)
            written += len(text)
            k += 1
    return path.stat().st_size


def measure(cmd: list[str], stdout: Path | None = None) -> dict[str, float]:
    """Run ``cmd`` alone and return its CPU seconds (user + system), wall seconds and peak RSS (MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(stdout or os.devnull, "w") as out:
        subprocess.run(cmd, check=True, stdout=out)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of children is the largest of any child so far: each tool runs after the smaller one
    return {
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "peak_rss_mib": round(after.ru_maxrss / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--mb", type=int, default=1024)
    args.add_argument("--dir", type=Path, default=None)
    args.add_argument("--skip-pt", action="store_true")
    opts = args.parse_args(argv)
    folder = opts.dir or Path(tempfile.mkdtemp(prefix="slowlog-bench-"))
    log = folder / "generated-slow.log"
    size = generate(log, opts.mb)
    print(f"log: {log} ({size / 2**20:.0f} MiB)", flush=True)
    ours = measure([sys.executable, "-c", _CASEBOOK, str(log)], folder / "casebook.json")
    print(f"casebook: {json.dumps(ours)} {(folder / 'casebook.json').read_text().strip()}", flush=True)
    if not opts.skip_pt:
        pt = measure(["pt-query-digest", "--output", "json", str(log)], folder / "pt.json")
        print(f"pt-query-digest: {json.dumps(pt)}", flush=True)
        print(
            f"speed: {pt['cpu_s'] / max(ours['cpu_s'], 0.1):.1f}x pt-query-digest's (CPU), "
            f"{pt['wall_s'] / max(ours['wall_s'], 0.1):.1f}x (wall)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
