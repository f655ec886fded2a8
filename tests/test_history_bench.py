"""The history benchmark (bench/history.py) runs end to end on a few cases: it seeds its own database,
signs in as an engineer of one team, and every request it times answers 200 with the cases of that
team only. Figures are not asserted (they are the benchmark's job)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_history_benchmark_times_every_request_on_the_teams_cases() -> None:
    done = subprocess.run(
        [sys.executable, "bench/history.py", "--cases", "120", "--other", "30", "--repeats", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "seeded 120 cases of the team and 30 of another team" in done.stdout, done.stderr[-2000:]
    rows = re.findall(r"^(.+?)\s+([\d.]+)\s+([\d.]+)\s+(\d{3})\s*(\d*)$", done.stdout, re.MULTILINE)
    assert len(rows) == 21, done.stdout
    assert {status for *_, status, _ in rows} == {"200"}
    counts = {label.strip(): int(n) for label, _, _, _, n in rows if n}
    assert counts["list, newest first"] == 120 and counts["API list, page 2"] == 120  # not the other team's
    assert 0 < counts["search a finding key"] < 120 and counts["search a ticket (trigram)"] == 1
    assert "slowest median" in done.stdout
