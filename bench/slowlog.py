"""The slow query log digest against pt-query-digest, on the same generated log (docs/performance.md).

``python -m bench.slowlog [--mb 1024] [--dir DIR] [--skip-pt]``: writes a slow log of about ``--mb``
MB made of the real MariaDB 10.11 log's entries (tests/fixtures/slowlog/), repeated with their times
advanced (``# Time:`` and ``SET timestamp=`` moved ``ROUND_S`` seconds a round, so the log runs forward
as a real one does), then times, each in a process of its own, pt-query-digest 3.2.1
(``--output json``) and Casebook's digest (``parsers.slowlog.parse`` and
``analyzer.statements.querydigest.queries``), ``--rounds`` times each, alternating (Casebook first in
odd rounds, pt-query-digest first in even ones, so a machine whose speed drifts affects both alike),
and prints each run's CPU seconds and wall seconds of the tool's whole process tree and the peak PSS
summed over that tree (``bench.tree.run_tree``: each tool's own figure), then the median speed ratio.
Both read the same plain file, read once first so that both read it from the page cache.

The target (the issue "The slow query log"): at least 5x pt-query-digest's speed, under 500 MiB of
memory at any size.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.procstats import MIB  # noqa: E402
from bench.tree import become_subreaper, run_tree  # noqa: E402

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


def measure(cmd: list[str], stdout: Path) -> dict[str, float]:
    """Run ``cmd`` alone (its output to ``stdout``) and return the CPU seconds (user + system) and wall
    seconds of its process tree and the tree's peak summed PSS (MiB). Raises ``RuntimeError`` when it
    fails."""
    with open(stdout, "wb") as out:
        run = run_tree(cmd, stdout=out, timeout=7200)
    if run.returncode != 0 or run.killed:
        raise RuntimeError(f"{cmd[0]} failed ({run.returncode}, {run.killed}): {run.stderr[-2000:]!r}")
    return {
        "cpu_s": round(run.cpu_s, 1),
        "wall_s": round(run.seconds, 1),
        "peak_pss_mib": round(run.peak_pss_bytes / MIB, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--mb", type=int, default=1024)
    args.add_argument("--dir", type=Path, default=None)
    args.add_argument("--rounds", type=int, default=1, help="runs of each tool, alternating (default 1)")
    args.add_argument("--skip-pt", action="store_true")
    opts = args.parse_args(argv)
    become_subreaper()
    folder = opts.dir or Path(tempfile.mkdtemp(prefix="slowlog-bench-"))
    log = folder / "generated-slow.log"
    size = generate(log, opts.mb) if not log.exists() or log.stat().st_size < opts.mb * 2**20 * 0.9 else 0
    size = size or log.stat().st_size
    with open(log, "rb") as f:  # into the page cache, for both
        while f.read(1 << 24):
            pass
    print(f"log: {log} ({size / 2**20:.0f} MiB)", flush=True)
    tools = {
        "casebook": ([sys.executable, "-c", _CASEBOOK, str(log)], folder / "casebook.json"),
        "pt-query-digest": (["pt-query-digest", "--output", "json", str(log)], folder / "pt.json"),
    }
    if opts.skip_pt:
        del tools["pt-query-digest"]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in tools}
    for r in range(opts.rounds):
        for name in list(tools) if r % 2 == 0 else list(reversed(tools)):
            cmd, out = tools[name]
            runs[name].append(measure(cmd, out))
            extra = out.read_text().strip() if name == "casebook" else ""
            print(f"round {r + 1} {name}: {json.dumps(runs[name][-1])} {extra}", flush=True)
    if not opts.skip_pt:
        pairs = list(zip(runs["casebook"], runs["pt-query-digest"], strict=True))
        cpu = [p["cpu_s"] / max(c["cpu_s"], 0.1) for c, p in pairs]
        wall = [p["wall_s"] / max(c["wall_s"], 0.1) for c, p in pairs]
        print(
            f"speed: {statistics.median(cpu):.1f}x pt-query-digest's (CPU, median of {len(cpu)}), "
            f"{statistics.median(wall):.1f}x (wall)"
        )
    peak = max(r["peak_pss_mib"] for r in runs["casebook"])
    print(f"casebook peak PSS: {peak} MiB (target: under 500)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
