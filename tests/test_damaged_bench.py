"""bench/damaged.py runs: it writes its ``vmstat -t`` member, reads it the worker's way in a child and
prints the tree's peak and the child's figures (a renamed import once broke it without a test noticing)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_damaged_input_bench_prints_its_figures() -> None:
    out = subprocess.run(
        [sys.executable, "bench/damaged.py", "--mb", "1", "--processes", "1", "--twice"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    line = re.fullmatch(
        r"vmstat -t member of 1 MB \(([\d,]+) rows, written twice\): peak RSS of the "
        r"process tree "
        r"([\d,]+) MiB; (\{.*\})\n",
        out,
    )
    assert line, out
    rows, figures = int(line[1].replace(",", "")), json.loads(line[3])
    assert int(line[2].replace(",", "")) > 0
    assert figures["samples"] == rows // 2  # the copy is not read
    assert figures["stages"]["worker MiB after the read"] > 0 and not figures["not_used"]
