"""Load test: locust against a real gunicorn on loopback, while an ingest runs (issue 13).

Usage (from the project root, PostgreSQL and Redis up, as after scripts/run)::

    .venv/bin/python bench/load.py [--users 10,50] [--seconds 60] [--minutes 10] [--json]

What it does, bounded in users (at most 50), time (at most 300 s a level) and place (127.0.0.1 only):

1. A scratch database ``<database of CASEBOOK_DATABASE_URL>_load`` is created and migrated
   (``scripts/start migrate``) with a fresh engineer login; it is dropped at the end (``--keep`` keeps it).
2. The product's own processes start on it: the web (``scripts/start web``: gunicorn, 2 workers by
   default) on a free loopback port and a Celery worker (``scripts/start worker``) on a queue of this
   run alone.
3. A generated collection (bench/generate_bundle.py, ``--minutes`` long: 64 CPUs, 2,000 threads and
   1,000 sessions a second) is uploaded twice through the API: one case to read, and one that is
   re-analyzed each time it ends, so that an ingest runs during the whole measurement.
4. For each user count, ``locust --headless`` (bench/locustfile.py: the case list, the case page,
   its timeline whole and zoomed, the moment panel; 1-3 s between clicks; one signed-in session)
   runs ``--seconds``, all users started at once.
5. Prints, per request and level: requests, failures, median (p50), p95, p99 and the slowest, in
   milliseconds, requests per second; the ingests that ran meanwhile; the load average.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlparse

import psycopg
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.servers import CasebookProcesses, wait_for  # noqa: E402 - after the path is set

MAX_USERS = 50
MAX_SECONDS = 300
#: Seconds a case gets to be ingested before the run gives up.
INGEST_TIMEOUT_S = 900


def main() -> int:
    args = _args()
    users = [int(u) for u in args.users.split(",")]
    if not all(0 < u <= MAX_USERS for u in users) or not 0 < args.seconds <= MAX_SECONDS:
        sys.exit(f"users must be 1..{MAX_USERS} and --seconds 1..{MAX_SECONDS}")
    base_url = os.environ.get("CASEBOOK_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casebook")
    database = (urlparse(base_url).path.lstrip("/") or "casebook") + "_load"
    server_url = base_url.rsplit("/", 1)[0]
    workdir = Path(tempfile.mkdtemp(prefix="casebook-load-"))
    _recreate(server_url, database)
    stack = CasebookProcesses(
        workdir,
        database_url=f"{server_url}/{database}",
        redis_url=os.environ.get("CASEBOOK_REDIS_URL", "redis://127.0.0.1:6379/0"),
        media_root=workdir / "media",
        CASEBOOK_WEB_WORKERS=str(args.web_workers),
        CASEBOOK_PARSE_PROCESSES=os.environ.get("CASEBOOK_PARSE_PROCESSES", str(os.cpu_count() or 1)),
        CASEBOOK_LOG_LEVEL="WARNING",  # one line per request would be written to disk at 50 users
        # The production defaults, not the shortened ones of the fault tests.
        CASEBOOK_HEARTBEAT_INTERVAL="10",
        CASEBOOK_STALE_AFTER="60",
        CASEBOOK_SWEEP_INTERVAL="20",
    )
    stack.password = stack.env["CASEBOOK_ADMIN_PASSWORD"] = secrets.token_urlsafe(16)
    report: dict[str, object] = {
        "cpus": os.cpu_count(),
        "users": users,
        "seconds": args.seconds,
        "ingest": not args.without_ingest,
    }
    try:
        stack.run("migrate")
        stack.start_web()
        stack.start("worker")
        bundle = _bundle(args.minutes, workdir)
        report["bundle"] = {"minutes": args.minutes, "bytes": bundle.stat().st_size}
        target = _upload(stack, bundle, "load: the case read")
        _wait_final(stack, target)
        window = _window(server_url, database, target)
        churn = _Churn(stack, _upload(stack, bundle, "load: the case re-analyzed meanwhile"))
        if args.without_ingest:  # for comparison: the same requests with the worker idle
            _wait_final(stack, churn.case_id)
        else:
            churn.start()
        levels = []
        for count in users:
            before = (churn.completed, len(churn.samples), os.getloadavg()[0])
            errors, stats = _locust(
                stack, workdir, count, args.seconds, target, window, churn.session.cookies["sessionid"]
            )
            samples = churn.samples[before[1] :]
            levels.append(
                {
                    "users": count,
                    "requests": stats,
                    "errors": errors,
                    "ingests_completed": churn.completed - before[0],
                    "ingest_running_pct": round(100 * sum(samples) / max(1, len(samples))),
                    "loadavg_1m": [round(before[2], 2), round(os.getloadavg()[0], 2)],
                }
            )
        if churn.is_alive():
            churn.stop()
        report["levels"] = levels
    finally:
        stack.stop_all()
        if not args.keep:
            _drop(server_url, database)
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument(
        "--users", default="10,50", help="concurrent users per level, comma-separated (default 10,50)"
    )
    p.add_argument("--seconds", type=int, default=60, help="length of each level (default 60)")
    p.add_argument("--minutes", type=float, default=10, help="length of the generated capture (default 10)")
    p.add_argument("--web-workers", type=int, default=2, help="gunicorn workers (default 2, as scripts/run)")
    p.add_argument(
        "--without-ingest", action="store_true", help="no ingest during the levels (for comparison)"
    )
    p.add_argument("--keep", action="store_true", help="keep the scratch database")
    p.add_argument("--json", action="store_true", help="a JSON report instead of the table")
    return p.parse_args()


def _recreate(server_url: str, database: str) -> None:
    _drop(server_url, database)
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')


def _drop(server_url: str, database: str) -> None:
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def _bundle(minutes: float, workdir: Path) -> Path:
    out = workdir / f"collection-{minutes:g}m.tar.gz"
    subprocess.run(
        [sys.executable, "bench/generate_bundle.py", "--minutes", str(minutes), "--out", str(out), "--quiet"],
        cwd=ROOT,
        check=True,
        timeout=INGEST_TIMEOUT_S,
        stdout=subprocess.DEVNULL,
    )
    return out


def _upload(stack: CasebookProcesses, path: Path, title: str) -> int:
    with path.open("rb") as fh:
        answer = requests.post(
            f"{stack.base_url}/api/cases/",
            headers=stack.api_headers(),
            files={"bundle": (path.name, fh)},
            data={"title": title},
            timeout=INGEST_TIMEOUT_S,
        )
    answer.raise_for_status()
    return int(answer.json()["id"])


def _status(stack: CasebookProcesses, case_id: int) -> str:
    answer = requests.get(
        f"{stack.base_url}/api/cases/{case_id}/status/", headers=stack.api_headers(), timeout=60
    )
    answer.raise_for_status()
    return str(answer.json()["status"])


def _wait_final(stack: CasebookProcesses, case_id: int) -> None:
    status = wait_for(
        f"case {case_id} ingested",
        lambda: (s := _status(stack, case_id)) in ("ready", "failed") and s,
        timeout_s=INGEST_TIMEOUT_S,
        every_s=1,
    )
    if status != "ready":
        sys.exit(f"case {case_id} {status}")


def _window(server_url: str, database: str, case_id: int) -> tuple[int, int]:
    with psycopg.connect(f"{server_url}/{database}") as conn:
        start, end = conn.execute(
            "SELECT extract(epoch FROM window_start) * 1000, extract(epoch FROM window_end) * 1000 "
            "FROM web_case WHERE id = %s",
            (case_id,),
        ).fetchone()
    return int(start), int(end)


class _Churn(threading.Thread):
    """Keeps one case ingesting: re-analyzes it (the web's own button) each time it ends."""

    def __init__(self, stack: CasebookProcesses, case_id: int) -> None:
        super().__init__(daemon=True)
        self.stack, self.case_id = stack, case_id
        self.completed = 0
        self.samples: list[bool] = []  # every half second: was an ingest running?
        self._halt = threading.Event()
        self.session = requests.Session()
        self.session.get(f"{stack.base_url}/accounts/login/", timeout=60)
        self.session.post(
            f"{stack.base_url}/accounts/login/",
            data={
                "username": stack.user,
                "password": stack.password,
                "csrfmiddlewaretoken": self.session.cookies["csrftoken"],
            },
            headers={"Referer": f"{stack.base_url}/accounts/login/"},
            timeout=60,
        )

    def running(self) -> bool:
        return _status(self.stack, self.case_id) in ("queued", "parsing", "analyzing")

    def run(self) -> None:
        while not self._halt.wait(0.5):
            running = self.running()
            self.samples.append(running)
            if running:
                continue
            self.completed += 1
            self.session.post(
                f"{self.stack.base_url}/cases/{self.case_id}/reanalyze/",
                headers={
                    "X-CSRFToken": self.session.cookies["csrftoken"],
                    "Referer": f"{self.stack.base_url}/cases/{self.case_id}/",
                },
                timeout=60,
            )

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=30)


def _locust(
    stack: CasebookProcesses,
    workdir: Path,
    users: int,
    seconds: int,
    case_id: int,
    window: tuple[int, int],
    session_id: str,
) -> tuple[list[str], list[dict[str, object]]]:
    prefix = workdir / f"locust-{users}"
    env = {
        **os.environ,
        "LOAD_SESSION_ID": session_id,
        "LOAD_CASE_ID": str(case_id),
        "LOAD_WINDOW_START_MS": str(window[0]),
        "LOAD_WINDOW_END_MS": str(window[1]),
    }
    subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(ROOT / "bench" / "locustfile.py"), "--headless"]
        + ["-u", str(users), "-r", str(users), "--run-time", f"{seconds}s", "--stop-timeout", "10"]
        + ["--host", stack.base_url, "--csv", str(prefix), "--only-summary", "--loglevel", "WARNING"]
        + ["--exit-code-on-error", "0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=seconds + 120,
        stdout=subprocess.DEVNULL,
        stderr=(workdir / f"locust-{users}.log").open("wb"),
    )
    with open(f"{prefix}_failures.csv", newline="") as fh:
        errors = [f"{row['Occurrences']} x {row['Name']}: {row['Error'][:200]}" for row in csv.DictReader(fh)]
    with open(f"{prefix}_stats.csv", newline="") as fh:
        return errors, [
            {
                "name": row["Name"],
                "requests": int(row["Request Count"]),
                "failures": int(row["Failure Count"]),
                "p50_ms": _ms(row["50%"]),
                "p95_ms": _ms(row["95%"]),
                "p99_ms": _ms(row["99%"]),
                "max_ms": round(float(row["Max Response Time"])),
                "per_s": round(float(row["Requests/s"]), 1),
            }
            for row in csv.DictReader(fh)
        ]


def _ms(value: str) -> int | None:
    return None if value in ("", "N/A") else round(float(value))


def _print(report: dict) -> None:
    bundle = report["bundle"]
    meanwhile = (
        (
            f"while a {bundle['minutes']:g}-minute capture ({bundle['bytes'] / 2**20:.1f} MiB) is ingested "
            "again and again"
        )
        if report["ingest"]
        else f"reading a {bundle['minutes']:g}-minute capture, no ingest running"
    )
    print(
        f"Casebook load test: gunicorn on 127.0.0.1, {report['cpus']} CPUs, {report['seconds']} s per level, "
        + meanwhile
    )
    for level in report["levels"]:
        print(
            f"\n{level['users']} users: an ingest running {level['ingest_running_pct']} % of the time "
            f"({level['ingests_completed']} completed); load average {level['loadavg_1m'][0]} -> "
            f"{level['loadavg_1m'][1]}"
        )
        print(
            f"  {'request':<18} {'count':>6} {'errors':>6} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} "
            f"{'max ms':>7} {'req/s':>6}"
        )
        for r in level["requests"]:
            print(
                f"  {r['name']:<18} {r['requests']:>6} {r['failures']:>6} {r['p50_ms'] or '-':>7} "
                f"{r['p95_ms'] or '-':>7} {r['p99_ms'] or '-':>7} {r['max_ms']:>7} {r['per_s']:>6}"
            )
        for error in level["errors"]:
            print(f"  error: {error}")


if __name__ == "__main__":
    raise SystemExit(main())
