"""Where an ingest's CPU seconds go: read, parse, series, writes, rules (issue 42).

Usage::

    .venv/bin/python bench/stages.py BUNDLE [--before DIR] [--rounds 1] [--json]

Runs the ingest on a running worker (bench/run.py's ingest: ``case_create`` then ``case_ingest`` in a
fresh process whose parse processes are warm; bench/ingest_stage.py) and splits its CPU seconds
(user + system) by stage. With ``--before DIR`` the same ingest runs, alternately, on the code of
another checkout (bench's instrumentation, that checkout's ``analyzer``, ``parsers`` and ``web``).

The stages, all in CPU seconds over ``case_ingest`` (the upload is not counted):

- **read**: the worker process during the parse (``parse_upload``): the archive walk and its
  decompression, cutting members into pieces, taking the parsed pieces back and joining them, less
  the COPY of the kept text (counted in writes);
- **parse**: the parse processes during the parse: decoding, parsing, reducing each piece and
  compressing its text;
- **series**: ``aggregate_series``, in the worker's thread that calls it;
- **timeline**: ``Timeline.from_sources``, in its thread;
- **rules**: ``Analysis.of`` (the rules and the case row's top lists), in the thread that runs it,
  wherever that is (a forked child beside the writes, a thread, the ingest's own thread);
- **writes**: the rest of the worker after the parse (series COPY, sample index, sources, findings,
  the case row, the transaction, the claim), plus the COPY of the kept text during the parse;
- **other**: the total less all of the above (parse processes' CPU outside the parse, e.g. the pool
  closing, and a forked child's own start and pickling).

Not counted: the PostgreSQL server's backend (bench/ratios.py reports it: ``db CPU``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.ingest_stage import ingest_stage  # noqa: E402
from bench.procstats import python  # noqa: E402
from bench.ratios import floor_seconds  # noqa: E402
from bench.tree import become_subreaper  # noqa: E402

STAGES = ("read", "parse", "series", "timeline", "rules", "writes", "other")
KEEP_TEXT = "keep the raw text (COPY of compressed chunks)"


def _sum(records: list[dict[str, Any]], prefix: str, key: str) -> float:
    return sum(r.get(key, 0.0) for r in records if r["stage"].startswith(prefix) and not r.get("forked"))


def profile(ingest: dict[str, Any]) -> dict[str, float]:
    """The CPU seconds of each stage (``STAGES``) and their ``total`` from bench/ingest_stage.py's
    result of one ingest (its stage records, tallies and ``rules_cpu`` events)."""
    records = ingest["stages"]
    total = ingest["ingest_cpu_seconds"]
    parse_stage = next(r for r in records if r["stage"] == "parse (read_bundle)")
    keep = ingest.get("tallies", {}).get(KEEP_TEXT, {}).get("cpu_s", 0.0)
    rules = ingest.get("rules_cpu", [])
    rules_here = sum(r["cpu_s"] for r in rules if r["in_ingest"])
    series = _sum(records, "aggregate_series", "cpu_thread_s")
    timeline = _sum(records, "timeline", "cpu_thread_s")
    after_parse = total["worker"] - parse_stage["cpu_worker_s"]
    out = {
        "read": parse_stage["cpu_worker_s"] - keep,
        "parse": parse_stage["cpu_children_s"],
        "series": series,
        "timeline": timeline,
        "rules": sum(r["cpu_s"] for r in rules),
        "writes": after_parse - series - timeline - rules_here + keep,
    }
    out["other"] = total["worker"] + total["parse processes"] - sum(out.values())
    out["total"] = total["worker"] + total["parse processes"]
    return {k: round(v, 2) for k, v in out.items()}


def run(bundle: Path, root: Path, label: str) -> dict[str, Any]:
    """One ingest of ``bundle`` on the code at ``root``, with the floor timed just before it."""
    floor_s, floor_cpu = floor_seconds(bundle)
    subprocess.run([python(), "-m", "compileall", "-q", "analyzer", "parsers", "web"], cwd=root, check=True)
    ingest = ingest_stage(bundle, timeout=1800, max_rss=8 << 30, keep=False, root=root)
    if "error" in ingest:
        raise SystemExit(
            f"{label}: {ingest['error']} in {ingest.get('in_stage')}: {ingest.get('stderr_tail')}"
        )
    prof = profile(ingest)
    return {
        "checkout": label,
        "bundle": bundle.name,
        "status": ingest["status"],
        "findings": sorted(ingest["findings"]),
        "ingest_seconds": ingest["ingest_seconds"],
        "floor_seconds": round(floor_s, 3),
        "floor_cpu_seconds": round(floor_cpu, 2),
        "cpu": prof,
        "cpu_ratio": round(prof["total"] / max(floor_cpu, 0.01), 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", type=Path, nargs="+")
    p.add_argument("--before", type=Path, metavar="DIR", help="another checkout, run alternately")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    become_subreaper()
    checkouts = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    runs = []
    for i in range(args.rounds):
        order = checkouts if i % 2 == 0 else checkouts[::-1]
        for bundle in args.bundle:
            with bundle.open("rb") as fh:  # into the page cache
                while fh.read(1 << 24):
                    pass
            for label, root in order:
                r = run(bundle.resolve(), root, label)
                r["round"] = i + 1
                runs.append(r)
                print(_line(r), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(runs, indent=2))
    else:
        print(
            f"{'bundle':<24} {'code':<7} "
            + " ".join(f"{s:>8}" for s in (*STAGES, "total"))
            + "   floor  ratio"
        )
        for r in runs:
            print(_line(r))
    return 0 if all(r["status"] == "ready" for r in runs) else 1


def _line(r: dict[str, Any]) -> str:
    cells = " ".join(f"{r['cpu'][s]:8.2f}" for s in (*STAGES, "total"))
    return (
        f"{r['bundle']:<24} {r['checkout']:<7} {cells}  {r['floor_cpu_seconds']:6.2f}  {r['cpu_ratio']:5.2f}x"
    )


if __name__ == "__main__":
    sys.exit(main())
