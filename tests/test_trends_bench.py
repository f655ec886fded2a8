"""The trends benchmark (bench/trends.py) runs end to end on a few cases: it seeds its own database
(cases, findings, the trends' columns), signs in as an engineer of one team, and every request it
times answers 200 counting that team's cases only. Figures are not asserted (they are the benchmark's
job)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_trends_benchmark_times_every_request_on_the_teams_cases() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "bench/trends.py",
            "--cases",
            "120",
            "--other",
            "30",
            "--findings",
            "900",
            "--repeats",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "seeded 120 cases of the team, 30 of another team and 900 findings" in done.stdout, done.stderr[
        -2000:
    ]
    rows = re.findall(r"^(.+?)\s+([\d.]+)\s+([\d.]+)\s+(\d{3})\s+(\d+)$", done.stdout, re.MULTILINE)
    assert len(rows) == 10, done.stdout
    assert {status for *_, status, _ in rows} == {"200"}
    counts = {label.strip(): int(n) for label, _, _, _, n in rows}
    # Two years hold every case of the team and none of the other team's; shorter ranges hold fewer.
    assert counts["API, two years by week"] == counts["page, two years by week"] == 120
    assert (
        counts["API, last 4 weeks"] <= counts["API, last 13 weeks (default)"] <= counts["API, last 52 weeks"]
    )
    assert counts["API, last 52 weeks"] == counts["API, 52 weeks as CSV"] == counts["page, last 52 weeks"]
    assert "plan of the buckets' query" in done.stdout and "slowest median" in done.stdout
