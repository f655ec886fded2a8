"""The benchmark (bench/) still runs end to end on a small generated bundle: every member parsed, the
ingest ready, the stage wrappers in place. Figures are not asserted (they are the benchmark's job)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"vmstat", "mpstat", "iostat", "ps", "interrupts", "processlist"}


def _small_bundle(tmp_path: Path) -> Path:
    """Six seconds of the benchmark's bundle (64 CPUs, 2,000 threads, 1,000 sessions)."""
    bundle = tmp_path / "bench.tar.gz"
    subprocess.run(
        [sys.executable, "bench/generate_bundle.py", "--minutes", "0.1", "--out", str(bundle), "--quiet"],
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    return bundle


def test_the_benchmark_reports_every_parser_and_a_ready_ingest(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    done = subprocess.run(
        [sys.executable, "bench/run.py", str(bundle), "--json", "--timeout", "300"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    parsed = {p["format"] for p in report["parsers"] if not p.get("error") and p["rows"] > 0}
    assert SOURCES <= parsed, report["parsers"]
    assert all(not p.get("error") for p in report["parsers"])
    ingest = report["ingest"]
    assert ingest["status"] == "ready", ingest.get("failure_reason") or ingest.get("error")
    assert ingest["sources"] == 11 and ingest["series"] > 100 and ingest["raw_chunks"]["chunks"] > 0
    stages = {s["stage"] for s in ingest["stages"]}
    assert {"parse (read_bundle)", "rules (engine.run_hosts)", "write series"} <= stages
    assert set(ingest["ingest_cpu_seconds"]) == {"worker", "parse processes"}
    assert report["gzip_wc"]["lines"] > 0


def test_the_ratio_benchmark_runs_the_command_line_ingest_and_reports_floor_and_peak(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    done = subprocess.run(
        [sys.executable, "bench/ratios.py", str(bundle), "--rounds", "1", "--json", "--timeout", "600"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    (run,) = report["runs"]
    assert run["status"] == "ready" and run["checkout"] == "after"
    assert run["floor_seconds"] > 0 and run["cpu_seconds"] > 0 and run["floor_cpu_seconds"] > 0
    assert run["ratio"] == pytest.approx(run["seconds"] / run["floor_seconds"], abs=0.006)
    # the tree: Django and pandas in the command's process alone take well over 50 MiB
    assert run["peak_rss_bytes"] > 50 << 20
    # shared pages count once in the PSS sum: the parse processes share their interpreter's pages
    assert 50 << 20 < run["peak_pss_bytes"] < run["peak_rss_bytes"]
    floor_cpu = max(run["floor_cpu_seconds"], 0.01)  # a floor of a few MB may round to 0.00 s
    assert run["cpu_ratio"] == pytest.approx(run["cpu_seconds"] / floor_cpu, abs=0.006)
    # read live, the tree's CPU is a lower bound of what getrusage counts once every process is reaped
    assert 0 < run["cpu_polled_seconds"] <= run["cpu_seconds"] + 0.05
    assert run["db_cpu_seconds"] is None or run["db_cpu_seconds"] > 0
    (row,) = report["summary"]
    assert row["findings_lost"] == [] and row["runs"] == 1


def test_the_stage_profile_splits_the_ingest_cpu_by_stage(tmp_path: Path) -> None:
    bundle = _small_bundle(tmp_path)
    done = subprocess.run(
        [sys.executable, "bench/stages.py", str(bundle), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = json.loads(done.stdout)
    cpu = run["cpu"]
    assert run["status"] == "ready" and run["checkout"] == "after"
    assert set(cpu) == {"read", "parse", "series", "timeline", "rules", "writes", "other", "total"}
    assert sum(v for k, v in cpu.items() if k != "total") == pytest.approx(cpu["total"], abs=0.05)
    # every stage worked; the rules ran (timed in their forked child or not)
    assert all(cpu[k] > 0 for k in ("read", "parse", "series", "rules", "writes")), cpu
