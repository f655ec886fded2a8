"""Two workers, two bundles: does a second worker take a second bundle side by side? (issue 13)

Usage (from the project root, PostgreSQL and Redis up, as after scripts/run)::

    .venv/bin/python bench/workers.py [--minutes 10] [--modes single,fanout] [--json]

1. A scratch database ``<database of CASEBOOK_DATABASE_URL>_workers`` is created and migrated
   (``scripts/start migrate``); it is dropped at the end.
2. For each mode, the product's own processes start on it: the web (``scripts/start web``) and two
   Celery workers (``scripts/start worker``, one task at a time each, on a queue of this run alone),
   ``single``: each bundle one task (its parse processes on the worker's host, the default), or
   ``fanout``: ``CASEBOOK_INGEST_FANOUT=1`` (the parts of each bundle are tasks either worker takes).
3. A generated collection (bench/generate_bundle.py, ``--minutes`` long) is uploaded through the API
   alone, and its time from the upload to ready taken; then two copies are uploaded at once (two
   threads) and the time until both are ready taken.
4. Prints both times, their ratio (the issue's bound: about 1.2x), the CPU count and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.load import _bundle, _drop, _recreate, _upload, _wait_final  # noqa: E402
from tests.servers import CasebookProcesses  # noqa: E402

MODES = ("single", "fanout")


def _measure(stack: CasebookProcesses, bundle: Path, copies: int) -> float:
    """Seconds from the start of ``copies`` simultaneous uploads of ``bundle`` until all are ready."""
    ids: list[int] = []
    lock = threading.Lock()

    def upload(n: int) -> None:
        case_id = _upload(stack, bundle, f"workers: copy {n + 1} of {copies}")
        with lock:
            ids.append(case_id)

    start = time.monotonic()
    threads = [threading.Thread(target=upload, args=(n,)) for n in range(copies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for case_id in ids:
        _wait_final(stack, case_id)
    return time.monotonic() - start


def _run_mode(mode: str, server_url: str, database: str, bundle: Path, workdir: Path) -> dict[str, object]:
    _recreate(server_url, database)
    stack = CasebookProcesses(
        workdir / mode,
        database_url=f"{server_url}/{database}",
        redis_url=os.environ.get("CASEBOOK_REDIS_URL", "redis://127.0.0.1:6379/0"),
        media_root=workdir / mode / "media",
        CASEBOOK_WORKER_CONCURRENCY="1",
        CASEBOOK_PARSE_PROCESSES=os.environ.get("CASEBOOK_PARSE_PROCESSES", str(os.cpu_count() or 1)),
        CASEBOOK_INGEST_FANOUT="1" if mode == "fanout" else "0",
        CASEBOOK_LOG_LEVEL="WARNING",
        CASEBOOK_HEARTBEAT_INTERVAL="10",
        CASEBOOK_STALE_AFTER="60",
        CASEBOOK_SWEEP_INTERVAL="20",
    )
    (workdir / mode).mkdir(parents=True, exist_ok=True)
    try:
        stack.run("migrate")
        stack.start_web()
        stack.start("worker", "worker-1")
        stack.start("worker", "worker-2")
        _measure(stack, bundle, 1)  # warm-up: imports, page cache, first connections
        load_before = os.getloadavg()[0]
        one = _measure(stack, bundle, 1)
        two = _measure(stack, bundle, 2)
        return {
            "mode": mode,
            "one_s": round(one, 2),
            "two_s": round(two, 2),
            "ratio": round(two / one, 2),
            "loadavg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        }
    finally:
        stack.stop_all()
        _drop(server_url, database)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--minutes", type=float, default=10, help="length of the generated collection (default 10)"
    )
    p.add_argument("--modes", default=",".join(MODES), help="single, fanout or both (default)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes):
        p.error(f"--modes: {', '.join(MODES)}")
    base_url = os.environ.get("CASEBOOK_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casebook")
    database = (urlparse(base_url).path.lstrip("/") or "casebook") + "_workers"
    server_url = base_url.rsplit("/", 1)[0]
    workdir = Path(tempfile.mkdtemp(prefix="casebook-workers-"))
    bundle = _bundle(args.minutes, workdir)
    report = {
        "cpus": os.cpu_count(),
        "minutes": args.minutes,
        "bundle_bytes": bundle.stat().st_size,
        "modes": [_run_mode(m, server_url, database, bundle, workdir) for m in modes],
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"bundle      {args.minutes:g}-minute collection, {report['bundle_bytes']:,} bytes; "
        f"{report['cpus']} CPUs"
    )
    print("            two workers (one task at a time each); upload to ready, wall seconds")
    for m in report["modes"]:
        print(
            f"{m['mode']:<11} one bundle {m['one_s']:7.2f} s   two at once {m['two_s']:7.2f} s   "
            f"= {m['ratio']:.2f}x (bound: about 1.2x)   load average {m['loadavg_1m'][0]} -> "
            f"{m['loadavg_1m'][1]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
