"""The load test (bench/load.py) still runs end to end: gunicorn and a worker started by scripts/start
on a scratch database, an ingest kept running, locust against the web on loopback, figures printed.
A few users for a few seconds here; the figures in the README come from 10 and 50 users."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURED = {"case list", "case page", "timeline", "timeline zoomed", "moment"}


def test_the_load_test_reports_every_request_with_its_percentiles() -> None:
    result = subprocess.run(
        [sys.executable, "bench/load.py", "--users", "3", "--seconds", "8", "--minutes", "0.5", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    (level,) = report["levels"]
    assert level["users"] == 3 and 0 <= level["ingest_running_pct"] <= 100
    rows = {row["name"]: row for row in level["requests"]}
    # Which requests a few seconds of random clicks reach varies; only those of bench/locustfile.py.
    assert len(set(rows) & MEASURED) >= 2 and set(rows) <= MEASURED | {"Aggregated"}
    total = rows["Aggregated"]
    assert total["failures"] == 0 and total["requests"] >= 5
    assert 0 < total["p50_ms"] <= total["p95_ms"]


def test_the_load_test_refuses_more_than_it_is_bounded_to() -> None:
    result = subprocess.run(
        [sys.executable, "bench/load.py", "--users", "500"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "users must be 1..50" in result.stderr
