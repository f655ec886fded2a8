"""Calibrated for the hosts customers run: the rules on generated captures of 2, 16 and 64 CPUs (tens,
hundreds and a thousand sessions), healthy and under the load shapes of the seeds.

The captures come from the project's own generator (bench/generate_bundle.py: ``--host``, ``--shape``,
``--incident``), written to a temporary directory and ingested with the real bundle reader and
parsers. Each is 40 s long with the load from 10 s to 34 s (ramps of 6 s), so the suite stays fast.

- Healthy captures (about one statement per core, 14 of 800 sessions committing on the large host,
  temporary tables and commits at their usual rates) get no warning or critical finding at any size.
- Each load gets its finding inside the load's window; the interrupts and context switches that
  follow it stay evidence of it (no separate storm), and a temporary-table churn whose statements are
  fast is not read as long-running queries.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from analyzer import engine
from analyzer.findings import Severity
from analyzer.timeline.timeline import Timeline
from bench.generate_bundle import HOSTS, Spec, generate
from parsers.ingest.bundle import read_bundle

START = datetime(2026, 4, 21, 14, 0, tzinfo=UTC)
MINUTES = 40 / 60
INCIDENT = (0.25, 0.85)  # load from 10 s to 34 s of the 40
LOAD_FROM = pd.Timestamp(START) + pd.Timedelta(seconds=10)
LOAD_TO = pd.Timestamp(START) + pd.Timedelta(seconds=34)
SIZES = {"2 CPUs": "small", "16 CPUs": "medium", "64 CPUs": "large"}
#: The load shapes of the seeds and the finding each must give.
LOADS = {
    "cpu-bound": "cpu-saturation",
    "io-bound": "disk-saturation",
    "tmp-tables": "tmp-table-churn",  # seed 000
    "commit": "commit-serialization",  # seed 001
}
ALARMS = (Severity.WARNING, Severity.CRITICAL)


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory):
    """(host, shape) -> the engine's outcome on that generated capture (made once per module)."""
    cache: dict[tuple[str, str], engine.Outcome] = {}
    directory: Path = tmp_path_factory.mktemp("generated")

    def run(host: str, shape: str) -> engine.Outcome:
        if (host, shape) not in cache:
            cpus, threads, sessions, disks, irqs = HOSTS[host]
            spec = Spec(
                MINUTES, cpus, threads, sessions, disks, irqs, 20260421, START, shape=shape, incident=INCIDENT
            )
            out = directory / f"{host}-{shape}.tar.gz"
            generate(spec, out, quiet=True)
            bundle = read_bundle(out)
            assert bundle.ncpu == cpus
            tl = Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu, utc_offset_s=bundle.utc_offset_s)
            cache[(host, shape)] = engine.run(tl)
            out.unlink()
        return cache[(host, shape)]

    return run


@pytest.mark.parametrize("size", SIZES)
def test_a_healthy_capture_raises_no_warning_at_any_size(analyzed, size: str) -> None:
    out = analyzed(SIZES[size], "healthy")
    assert out.failed == []
    assert [(f.key, f.title) for f in out.findings if f.severity in ALARMS] == []


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("shape", LOADS)
def test_each_load_gets_its_finding_in_the_loads_window(analyzed, size: str, shape: str) -> None:
    out = analyzed(SIZES[size], shape)
    assert out.failed == []
    [finding] = [f for f in out.findings if f.key == LOADS[shape]]
    assert finding.severity in ALARMS
    slack = pd.Timedelta(seconds=2)  # a rate stamped at t covers the second before it
    for window in finding.windows:
        assert LOAD_FROM - slack <= window.start and window.end <= LOAD_TO + slack, (window, finding.title)
    assert sum(w.seconds for w in finding.windows) >= 5  # sustained, as the rules say


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("shape", LOADS)
def test_the_interrupts_and_switches_of_a_load_are_not_a_separate_storm(
    analyzed, size: str, shape: str
) -> None:
    out = analyzed(SIZES[size], shape)
    storms = [
        f.key
        for f in out.findings
        if f.key in ("interrupt-storm", "context-switch-storm") and f.severity in ALARMS
    ]
    assert storms == []


@pytest.mark.parametrize("size", SIZES)
def test_a_temporary_table_churn_of_fast_statements_is_not_long_running_queries(analyzed, size: str) -> None:
    keys = [f.key for f in analyzed(SIZES[size], "tmp-tables").findings]
    assert "long-running-queries" not in keys


def test_the_io_load_on_2_cpus_shows_its_interrupts_as_evidence_of_the_disk(analyzed) -> None:
    """About 6,000 interrupts/s per CPU on 2 CPUs: I/O completions and rescheduling IPIs of the load."""
    [disk] = [f for f in analyzed("small", "io-bound").findings if f.key == "disk-saturation"]
    per_cpu = {e.label: e.value for e in disk.evidence}["interrupts in per CPU (median)"]
    assert 5_000 <= per_cpu <= 7_000
