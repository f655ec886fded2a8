"""Benchmark a bundle end to end (issue 4, "Speed and memory"): decompression baseline, each parser
on one core, and the whole ingest from upload to READY with its PostgreSQL writes.

Usage::

    .venv/bin/python bench/run.py BUNDLE [--json] [--skip-parsers] [--skip-ingest]
                                         [--timeout 1800] [--max-rss-gib 8] [--keep-case]
                                         [--profile DIR]

What it prints (bench/README.md explains each figure and the targets):

1. ``gzip -dc BUNDLE | wc -l``: wall time over the same bytes (best of three, page cache warm). The
   yardstick of the ingest target (<= 5x, then 3x).
2. Per parser: each member is first decompressed to a scratch file under /tmp (not timed), then read
   in a fresh process exactly as ``parsers/ingest/bundle.py`` reads it (``io.TextIOWrapper`` utf-8 with
   ``errors="replace"``, the first ``registry.HEAD_LINES`` lines to ``registry.detect``, then
   ``registry.by_format(FORMAT).parse(chain(head, rest), member=..., clock=ClockHints(...))``); timed:
   that parse call. Reported: MB/s of member text (MB = 10^6 bytes), rows/s of the main frame, CPU
   seconds (user+sys; > wall means more than one core was used), peak RSS of that process.
3. Ingest: a fresh process with ``DJANGO_SETTINGS_MODULE=web.settings`` and
   ``CASEBOOK_DATABASE_URL=postgres://postgres@127.0.0.1:5432/casebook_bench`` (created afresh and
   migrated; uploads stored under /tmp/casebook-bench-media) runs
   ``web.cases.services.case_create(user=None, file=File(fh), original_name=..., enqueue=False)`` (timed as
   "upload") then ``web.ingest.tasks.case_ingest(case_id=...)`` (timed as "ingest": the body the Celery
   worker runs). Reported: wall times, ingest / gzip|wc ratio, peak RSS (``ru_maxrss``), the case's
   final status, and a breakdown by stage (parse per member, timeline, rules, aggregate, COPY writes)
   with the peak RSS seen in each stage (sampled every 0.2 s). The stage wrappers are installed in the
   benchmark process only; no project code is changed. The case is deleted afterwards unless
   ``--keep-case``.

The benchmark process is killed (and the stage it was in reported) past ``--timeout`` seconds or
``--max-rss-gib`` of resident memory, so that a runaway ingest cannot take the machine down.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.ingest_stage import RSS_SAMPLE_S, ingest_one, ingest_stage  # noqa: E402
from bench.procstats import MIB, PROFILE_ENV, cpu_s, maxrss_bytes, mib, profiled, python, rss_bytes  # noqa: E402

#: Targets of DESIGN.md ("Targets").
PARSER_TARGET_MB_S = 50.0
INGEST_TARGET_RATIO = 5.0
INGEST_NEXT_TARGET_RATIO = 3.0
RSS_TARGET_BYTES = 1 << 30
#: Members smaller than this are context (meminfo, variables): their MB/s is dominated by start-up
#: costs and is not held to the parser target.
PARSER_TARGET_MIN_BYTES = 1_000_000
MB = 1e6


# ---------------------------------------------------------------------------------------------
# (1) gzip -dc | wc -l
# ---------------------------------------------------------------------------------------------
def gzip_wc(bundle: Path, repeats: int = 3) -> dict[str, Any]:
    """Best wall time of ``gzip -dc BUNDLE | wc -l`` over ``repeats`` runs; the line count."""
    with bundle.open("rb") as fh:  # warm the page cache so that every stage reads the same way
        while fh.read(1 << 24):
            pass
    best, lines = float("inf"), 0
    for _ in range(repeats):
        t = time.perf_counter()
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", 'gzip -dc -- "$1" | wc -l', "gzip-wc", str(bundle)],
            capture_output=True,
            text=True,
            check=True,
        )
        best = min(best, time.perf_counter() - t)
        lines = int(done.stdout.strip())
    return {"seconds": round(best, 3), "lines": lines}


# ---------------------------------------------------------------------------------------------
# (2) Parsers, one member per process
# ---------------------------------------------------------------------------------------------
def parse_one(path: Path, member: str) -> dict[str, Any]:
    """Child side: parse ``path`` as the ingest parses a member, in this one process, and report as
    JSON: snapshot captures cut into pieces at their markers, any other member as one piece; timed:
    each piece decoded and parsed (``parsers.ingest.pieces.parse_piece``), not the reading and cutting nor
    the join of the pieces (the ingest's figures have those)."""
    import pandas as pd  # noqa: F401 - imported before the clock starts, like in the worker

    from parsers import registry
    from parsers.base import ClockHints
    from parsers.ingest import cutting, pieces
    from parsers.ingest.bundle import head_of
    from parsers.layout import place

    size = path.stat().st_size
    where = place(member)
    with path.open("rb") as raw:
        first, head = head_of(raw)
        module = registry.detect(head)
        if module is None:
            return {"member": member, "bytes": size, "format": None, "error": "format not recognised"}
        fmt = module.FORMAT
        hints = ClockHints(start_local=where.start_local, interval_s=where.interval_s)
        # One-time costs (the reader's and pandas' first calls, caches) are paid once by a
        # long-lived parse process, not per member: the first lines are parsed once, untimed.
        with contextlib.suppress(Exception):
            pieces.parse_piece(
                module, cutting.whole(first[: first.rfind(b"\n") + 1]), member=member, clock=hints
            )
        if cutting.in_snapshots(fmt, head):
            cut = cutting.split(first, raw)
        else:
            cut = iter([cutting.whole(first + raw.read())])
        rss_before = rss_bytes()
        wall = cpu = 0.0
        parsed = []
        try:
            with profiled(f"parse-{Path(member).name}"):
                for piece in cut:  # reading and cutting the member are not the parser's time
                    cpu0, t0 = cpu_s(), time.perf_counter()
                    parsed.append(pieces.parse_piece(module, piece, member=member, clock=hints))
                    wall, cpu = wall + time.perf_counter() - t0, cpu + cpu_s() - cpu0
        except Exception as exc:  # noqa: BLE001 - reported as the member's result, like bundle.py
            return {"member": member, "bytes": size, "format": fmt, "error": f"{type(exc).__name__}: {exc}"}
    source = pieces.join(parsed)
    frames = {name: len(frame) for name, frame in source.frames.items()}
    # What the result keeps (the rest of the peak RSS was transient): deep, so strings count.
    frame_bytes = int(sum(frame.memory_usage(deep=True).sum() for frame in source.frames.values()))
    main_rows = len(source.main)
    return {
        "member": member,
        "format": fmt,
        "bytes": size,
        "seconds": round(wall, 4),
        "cpu_seconds": round(cpu, 4),
        "mb_per_s": round(size / MB / wall, 1) if wall > 0 else None,
        "mb_per_cpu_s": round(size / MB / cpu, 1) if cpu > 0 else None,
        "rows": main_rows,
        "rows_per_s": round(main_rows / wall) if wall > 0 else None,
        "frames": frames,
        "samples": source.samples,
        "warnings": len(source.warnings),
        "warning_examples": [str(w) for w in source.warnings[:3]],
        "rss_before_bytes": rss_before,
        "peak_rss_bytes": maxrss_bytes(),
        "frame_bytes": frame_bytes,
    }


def parsers_stage(bundle: Path, scratch: Path, timeout: float) -> list[dict[str, Any]]:
    """Decompress each member to ``scratch`` (untimed), then time its parser in a fresh process."""
    results: list[dict[str, Any]] = []
    with tarfile.open(bundle, mode="r|*") as tar:
        for info in tar:
            if not info.isfile():
                continue
            name = info.name
            base = name.rsplit("/", 1)[-1]
            if base == "manifest.txt":
                continue  # context read by bundle.py itself, not a parser
            path = scratch / base
            src = tar.extractfile(info)
            if src is None:
                continue
            with path.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            try:
                done = subprocess.run(
                    [python(), str(Path(__file__).resolve()), "--_parse-one", str(path), name],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                if done.returncode != 0:
                    tail = done.stderr.strip().splitlines()[-3:]
                    result = {"member": name, "bytes": path.stat().st_size, "error": " | ".join(tail)}
                else:
                    result = json.loads(done.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                result = {"member": name, "bytes": path.stat().st_size, "error": f"timeout after {timeout} s"}
            finally:
                path.unlink()
            results.append(result)
            print(f"  parsed {base}", file=sys.stderr)
    return results


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------
def bundle_facts(bundle: Path) -> dict[str, Any]:
    """Compressed size; uncompressed text bytes per member (read from the tar headers)."""
    members: dict[str, int] = {}
    with tarfile.open(bundle, mode="r|*") as tar:
        for info in tar:
            if info.isfile():
                members[info.name] = info.size
    return {
        "path": str(bundle),
        "compressed_bytes": bundle.stat().st_size,
        "text_bytes": sum(members.values()),
        "members": members,
    }


def print_report(report: dict[str, Any]) -> None:
    facts, gz = report["bundle"], report["gzip_wc"]
    print(f"bundle      {facts['path']}")
    print(
        f"            {facts['compressed_bytes'] / MIB:,.1f} MiB compressed, "
        f"{facts['text_bytes'] / MIB:,.1f} MiB "
        f"of text in {len(facts['members'])} members, {gz['lines']:,} lines"
    )
    rate = facts["text_bytes"] / MB / gz["seconds"]
    print(f"\n(1) gzip -dc | wc -l          {gz['seconds']:8.2f} s   ({rate:,.0f} MB/s of text)")
    if report.get("parsers") is not None:
        print(
            f"\n(2) parsers, one fresh process per member (target >= {PARSER_TARGET_MB_S:g} MB per CPU "
            "second)"
        )
        print(
            f"    {'member':<18}{'format':<12}{'MB':>9}{'wall s':>9}{'cpu s':>8}{'MB/s':>8}"
            f"{'rows':>12}{'rows/s':>12}{'peak RSS':>11}{'frames':>11}{'warn':>6}  target"
        )
        for r in report["parsers"]:
            base = r["member"].rsplit("/", 1)[-1]
            if r.get("error"):
                print(f"    {base:<18}{str(r.get('format')):<12}{r['bytes'] / MB:9.1f}  ERROR {r['error']}")
                continue
            verdict = (
                "n/a (small)"
                if r["bytes"] < PARSER_TARGET_MIN_BYTES
                else ("ok" if (r["mb_per_cpu_s"] or 0) >= PARSER_TARGET_MB_S else "MISSED")
            )
            print(
                "    "
                f"{base:<18}{r['format']:<12}{r['bytes'] / MB:9.1f}{r['seconds']:9.2f}{r['cpu_seconds']:8.2f}"
                f"{r['mb_per_s']:8.1f}{r['mb_per_cpu_s'] or 0:8.1f}{r['rows']:12,}{r['rows_per_s']:12,}{mib(r['peak_rss_bytes']):>11}"
                f"{mib(r.get('frame_bytes')):>11}{r['warnings']:6}  {verdict}"
            )
    ing = report.get("ingest")
    if ing is None:
        return
    print("\n(3) ingest: case_create + case_ingest, PostgreSQL casebook_bench")
    if ing.get("error"):
        print(f"    FAILED TO FINISH: {ing['error']}")
        print(
            f"    in stage: {' > '.join(ing['in_stage']) or '-'}; elapsed {ing['elapsed_seconds']} s; "
            f"max RSS seen {mib(ing['max_rss_seen_bytes'])}"
        )
        for s in ing["stages_done"]:
            print(
                f"      done: {'  ' * s['depth']}{s['stage']:<40}{s['seconds']:9.2f} s  peak "
                f"{mib(s['peak_rss_bytes'])}"
            )
        for line in ing["stderr_tail"]:
            print(f"    stderr: {line}")
        return
    ratio = ing["ingest_seconds"] / gz["seconds"]
    verdict = (
        "ok"
        if ratio <= INGEST_NEXT_TARGET_RATIO
        else ("ok (first step)" if ratio <= INGEST_TARGET_RATIO else "MISSED")
    )
    print(f"    upload (case_create)     {ing['upload_seconds']:9.2f} s")
    print(
        f"    ingest (case_ingest)     {ing['ingest_seconds']:9.2f} s   = {ratio:.1f}x gzip|wc "
        f"(target <= {INGEST_TARGET_RATIO:g}x, then {INGEST_NEXT_TARGET_RATIO:g}x): {verdict}"
    )
    cpu = ing.get("ingest_cpu_seconds")
    if cpu:
        print(
            f"    CPU                      {sum(cpu.values()):9.2f} s   worker {cpu['worker']:.2f} s + parse "
            f"processes {cpu['parse processes']:.2f} s (user + system; {os.cpu_count()} CPUs)"
        )
    system = ing.get("ingest_system_cpu_seconds")
    if system:
        print(
            f"      of which system          {sum(system.values()):5.2f} s   worker {system['worker']:.2f} "
            "s + parse "
            f"processes {system['parse processes']:.2f} s (page faults of fresh memory, pipes, files)"
        )
    tree = ing.get("peak_tree_rss_bytes", ing["peak_rss_bytes"])
    rss_ok = "ok" if tree < RSS_TARGET_BYTES else "MISSED"
    print(
        f"    peak RSS                 {mib(tree):>11}   (target < 1 GiB): {rss_ok}   worker process, plus "
        "its "
        f"parse processes (sampled every {RSS_SAMPLE_S:g} s); the worker alone: {mib(ing['peak_rss_bytes'])}"
    )
    split = ing.get("peak_split")
    if split and split[0]:
        print(
            f"      at the largest sample    {mib(split[0]):>11}   worker {mib(split[1])} + parse processes "
            f"{mib(split[0] - split[1])}, in stage {split[2]!r}"
        )
    print(
        "    final status             "
        f"{ing['status']}{'  ' + ing['failure_reason'] if ing['failure_reason'] else ''}"
    )
    print(
        f"    rows written             {ing['series']:,} series ({ing['series_points']:,} points), "
        f"{ing['raw_chunks']['chunks']:,} raw "
        f"chunks ({(ing['raw_chunks']['bytes'] or 0) / MIB:,.1f} MiB); {ing['sources']} sources, "
        f"{len(ing['findings'])} findings"
    )
    if ing["not_used"]:
        print(f"    not used                 {ing['not_used']}")
    print("    stages (wall s, peak RSS sampled inside):")
    for s in sorted(ing["stages"], key=lambda s: s.get("order", 0)):
        print(
            f"      {'  ' * s['depth']}{s['stage']:<44}{s['seconds']:9.2f} s  {mib(s['peak_rss_bytes']):>10}"
            + ("   in a forked child, beside the writes" if s.get("forked") else "")
        )
    print("    inside the parse, summed over calls:")
    for label, t in ing.get("tallies", {}).items():
        print(f"      {label:<46}{t['seconds']:9.2f} s  ({t['calls']:,} calls)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", type=Path, nargs="?")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--skip-parsers", action="store_true")
    p.add_argument("--skip-ingest", action="store_true")
    p.add_argument("--timeout", type=float, default=1800, help="per benchmark process (s; default 1800)")
    p.add_argument("--max-rss-gib", type=float, default=8, help="kill the ingest past this RSS (default 8)")
    p.add_argument("--keep-case", action="store_true", help="keep the case in casebook_bench afterwards")
    p.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="write cProfile stats (parse-<member>.prof, ingest.prof) to DIR; timings then include "
        "the profiler's overhead: use them to find hot functions, not as figures",
    )
    p.add_argument("--_parse-one", nargs=2, metavar=("PATH", "MEMBER"), help=argparse.SUPPRESS)
    p.add_argument("--_ingest-one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args._parse_one:
        print(json.dumps(parse_one(Path(args._parse_one[0]), args._parse_one[1])))
        return 0
    if args.bundle is None:
        p.error("the following arguments are required: bundle")
    if args._ingest_one:
        ingest_one(args.bundle.resolve(), args.keep_case)
        return 0
    bundle = args.bundle.resolve()
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        os.environ[PROFILE_ENV] = str(args.profile.resolve())
    report: dict[str, Any] = {"bundle": bundle_facts(bundle), "machine": {"cpus": os.cpu_count()}}
    report["gzip_wc"] = gzip_wc(bundle)
    if not args.skip_parsers:
        scratch = Path(tempfile.mkdtemp(prefix="casebook-bench-members-"))
        try:
            report["parsers"] = parsers_stage(bundle, scratch, args.timeout)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if not args.skip_ingest:
        # the project's bytecode, as a deployed install has it (Dockerfile, scripts/setup.sh): parse
        # processes then do not compile the sources again where PYTHONDONTWRITEBYTECODE is set
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "analyzer", "parsers", "web"], cwd=ROOT, check=True
        )
        print("  ingesting ...", file=sys.stderr)
        report["ingest"] = ingest_stage(
            bundle, args.timeout, int(args.max_rss_gib * (1 << 30)), args.keep_case
        )
        if "ingest_seconds" in report["ingest"]:
            report["ingest"]["ratio_to_gzip_wc"] = round(
                report["ingest"]["ingest_seconds"] / report["gzip_wc"]["seconds"], 2
            )
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
