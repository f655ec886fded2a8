"""Peak memory and time of ingesting one very large member: ``vmstat -t`` of valid lines.

    .venv/bin/python bench/damaged.py [--mb 100 300] [--processes 2] [--twice]

For each size, writes a bundle holding one ``vmstat -t 1`` capture of that many MB: the header and
first row of a real ``vmstat -t 1 2`` run here (procps-ng, read at start), then rows one second
apart with the same columns. With ``--twice`` the member is its first half written twice (a rerun
appending to the same file: every time repeated). The bundle is read the worker's way
(``read_bundle`` with the ingest's reducer, ``processes`` parse processes, the text kept by a sink
that compresses and drops it), then the timeline and the rules run, in a child process; this
process samples the resident size of the child and its parse processes every 50 ms (as bench/run.py
does) and prints the peak of the tree, the seconds, the samples kept and the member's warnings.
No database: the ingest's writes are not part of this figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.procstats import tree_rss_bytes  # noqa: E402

#: Rows written at a time by ``write_member``.
WRITE_ROWS = 100_000
#: Seconds between two samples of the tree's resident size.
RSS_SAMPLE_S = 0.05


def _vmstat_head() -> tuple[str, str]:
    """The two header lines and one row of a real ``vmstat -t 1 2`` run here."""
    out = subprocess.run(
        ["vmstat", "-t", "1", "2"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TZ": "UTC"},
    ).stdout.splitlines()
    return "\n".join(out[:2]) + "\n", out[-1]


def write_member(path: Path, mb: int, *, twice: bool) -> int:
    """A ``vmstat -t 1`` capture of ``mb`` MB at ``path`` (its first half twice with ``twice``);
    returns the rows written. Written a block of rows at a time: this process stays small, so
    that the child it starts afterwards does not inherit its peak (``ru_maxrss`` survives fork and
    exec, and the child's "worker peak" would be this process's)."""
    header, row = _vmstat_head()
    values = row.rsplit(None, 2)[0]
    start = int(time.mktime(time.strptime("2026-01-05 00:00:00", "%Y-%m-%d %H:%M:%S")))
    target = mb << 20
    rows = target // (len(values) + 21)
    if twice:
        rows //= 2
    with path.open("w") as out:
        for _copy in range(2 if twice else 1):
            out.write(header)
            for block in range(0, rows, WRITE_ROWS):
                out.write(
                    "".join(
                        f"{values} {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(start + i))}\n"
                        for i in range(block, min(rows, block + WRITE_ROWS))
                    )
                )
    return rows * (2 if twice else 1)


def child(bundle: str, processes: int) -> None:
    """The ingest's read and analysis of ``bundle`` (run in the measured child)."""
    from analyzer import engine
    from analyzer.timeline.timeline import Timeline, reduce_piece
    from parsers.ingest.bundle import read_bundle
    from parsers.ingest.malloc import resident_bytes
    from parsers.rawtext import TextChunk

    def sink(member: str, chunks: tuple[TextChunk, ...]) -> None:
        del chunks  # compressed where read, then dropped (the ingest writes them to the database)

    started = time.monotonic()
    stages = {}
    b = read_bundle(Path(bundle), reduce=reduce_piece, keep_text=sink, processes=processes)
    stages["worker MiB after the read"] = resident_bytes() >> 20
    stages["worker peak so far"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    tl = Timeline.from_sources(b.sources, ncpu=b.ncpu, host=b.host, utc_offset_s=b.utc_offset_s)
    stages["after the timeline"] = resident_bytes() >> 20
    stages["peak so far"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    outcome = engine.run(tl)
    stages["after the rules"] = resident_bytes() >> 20
    stages["worker peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    source = b.sources[0] if b.sources else None
    print(
        json.dumps(
            {
                "seconds": round(time.monotonic() - started, 1),
                "stages": stages,
                "samples": source.samples if source else 0,
                "window": [str(x) for x in b.window] if b.window else None,
                "warnings": [w.as_dict() for w in source.warnings][:3] if source else [],
                "bundle_warnings": b.warnings[:3],
                "not_used": [n.reason for n in b.not_used],
                "findings": [f.key for f in outcome.findings],
            }
        )
    )


def measure(bundle: Path, processes: int) -> tuple[int, str]:
    """Run ``child`` on ``bundle`` in a process; the peak resident size of its tree and its output."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", str(bundle), "--processes", str(processes)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_bytes(proc.pid))
        time.sleep(RSS_SAMPLE_S)
    return peak, proc.stdout.read() if proc.stdout else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--twice", action="store_true", help="the member's first half written twice")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.processes)
        return
    for mb in args.mb:
        with tempfile.TemporaryDirectory() as tmp:
            member = Path(tmp) / "2026_01_05_00_00_00-vmstat"
            rows = write_member(member, mb, twice=args.twice)
            bundle = Path(tmp) / "bundle.tar.gz"
            with tarfile.open(bundle, "w:gz", compresslevel=1) as tar:
                tar.add(member, arcname=f"big/{member.name}")
            member.unlink()
            peak, out = measure(bundle, args.processes)
        print(
            f"vmstat -t member of {mb} MB ({rows:,} rows{', written twice' if args.twice else ''}): "
            f"peak RSS of the process tree {peak / (1 << 20):,.0f} MiB; {out.strip()}"
        )


if __name__ == "__main__":
    main()
