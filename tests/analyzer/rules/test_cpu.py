"""CPU rules: cpu-saturation (run queue), single-cpu-saturation (seed 004), cpu-steal, context-switch-storm.

Each fires on its case with its numbers, stays silent on idle or briefly busy captures and on the
boundaries of its thresholds, and is not evaluated when its inputs are missing.
"""

from __future__ import annotations

import pytest

from analyzer import engine
from analyzer.findings import NotEvaluated, Severity
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import read_bundle
from tests.analyzer.captures import (
    idle_timeline,
    mpstat_cpu_text,
    mpstat_intr_text,
    os_timeline,
    processlist_text,
    timeline,
    vmstat_rows_text,
    vmstat_text,
)

BOOT = (2, 0, 3, 3, 94, 0)  # vmstat's first line: averages since boot


def _run(**kw):
    return engine.run(timeline(**kw), only=("cpu-saturation",))


def test_it_fires_when_r_stays_above_twice_the_cpus_with_no_idle() -> None:
    rows = [BOOT] + [(12, 0, 88, 10, 2, 0)] * 3 + [(20, 1, 90, 10, 0, 0)] * 8 + [(1, 0, 5, 2, 93, 0)] * 3
    out = _run(vm=vmstat_text(rows))
    [finding] = out.findings
    assert finding.key == "cpu-saturation"
    assert finding.severity is Severity.CRITICAL  # median r 20 >= 4 x 4 CPUs
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (42, 52)  # rows 2-12 after the since-boot line at :41
    values = {e.label: e.value for e in finding.evidence}
    assert values["run queue r (max)"] == 20
    assert values["CPUs"] == 4
    assert values["idle id (mean)"] == pytest.approx(0.5, abs=0.1)
    r_evidence = next(e for e in finding.evidence if e.series == "vmstat.r")
    assert r_evidence.member == "2026_04_21_16_51_41-vmstat"
    assert r_evidence.lines == (4, 14)


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([BOOT] + [(0, 0, 1, 1, 98, 0)] * 30, id="idle healthy capture"),
        pytest.param(
            [BOOT] + [(20, 0, 90, 10, 0, 0)] * 4 + [(1, 0, 5, 2, 93, 0)] * 10, id="burst shorter than 5 s"
        ),
        pytest.param([BOOT] + [(7, 0, 90, 10, 0, 0)] * 20, id="r just under 2 x ncpu"),
        pytest.param([BOOT] + [(20, 0, 50, 10, 40, 0)] * 20, id="long queue but 40 % idle"),
    ],
)
def test_it_stays_silent(rows) -> None:
    assert _run(vm=vmstat_text(rows)).findings == []


def test_the_since_boot_line_never_counts() -> None:
    rows = [(50, 0, 99, 1, 0, 0)] + [(0, 0, 1, 1, 98, 0)] * 10
    assert _run(vm=vmstat_text(rows)).findings == []


def test_missing_ncpu_gives_not_evaluated() -> None:
    out = _run(vm=vmstat_text([BOOT] + [(20, 0, 90, 10, 0, 0)] * 10), ncpu=None)
    assert out.not_evaluated == [NotEvaluated("cpu-saturation", ("ncpu",))]


def test_missing_vmstat_gives_not_evaluated() -> None:
    out = _run(pl=processlist_text([[("app", "Query", 0, "Sending data", "SELECT 1")]]))
    assert out.not_evaluated == [NotEvaluated("cpu-saturation", ("vmstat",))]


# =============================================================================================
# single-cpu-saturation, cpu-steal, context-switch-storm
# =============================================================================================


IDLE_CPU = (0.5, 0.5, 0.0, 0.0, 0.0, 0.0)  # (usr, sys, iowait, irq, soft, steal): an idle core
SOFTIRQ_BOUND = (2.0, 8.0, 0.0, 0.0, 90.0, 0.0)  # seed 004: a core at 100 %, mostly handling interrupts
THREAD_BOUND = (97.0, 3.0, 0.0, 0.0, 0.0, 0.0)  # a single thread in user space
OS_KEYS = (
    "single-cpu-saturation",
    "cpu-steal",
    "context-switch-storm",
    "swap-activity",
    "disk-saturation",
    "interrupt-storm",
    "interrupt-imbalance",
)


def _mp(samples, ncpu=8):
    return os_timeline(mpstat_texts=(mpstat_cpu_text(samples, ncpu=ncpu),), ncpu=ncpu)


def _values(finding):
    return {e.label: e.value for e in finding.evidence}


def test_the_real_idle_capture_raises_nothing() -> None:
    out = engine.run(idle_timeline(), only=OS_KEYS)
    assert [(f.key, f.severity) for f in out.findings] == []
    assert out.not_evaluated == [] and out.failed == []


def test_a_real_64_session_load_on_2_cpus_raises_only_cpu_saturation(fixtures) -> None:
    # tests/fixtures/bundles/README.md: sysbench, 64 sessions, on-disk temporary tables, this machine
    bundle = read_bundle(fixtures / "bundles" / "ptstalk-mariadb-tmptables.tar.gz")
    tl = Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu)
    out = engine.run(tl, only=("cpu-saturation", *OS_KEYS))
    assert [(f.key, f.severity) for f in out.findings] == [("cpu-saturation", Severity.CRITICAL)]
    assert out.not_evaluated == []


def test_single_cpu_saturation_fires_on_seed_004s_hot_core() -> None:
    # 8 CPUs: CPU 3 at 100 % (90 % softirq), the rest idle: vmstat would show 88 % idle (seed 004)
    samples = [{c: IDLE_CPU for c in range(8)}] * 2 + [{3: SOFTIRQ_BOUND}] * 8 + [{}] * 2
    out = engine.run(_mp(samples), only=("single-cpu-saturation",))
    [finding] = out.findings
    assert finding.severity is Severity.WARNING
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (44, 51)  # samples 3-10 at START + 3..10 s
    values = _values(finding)
    assert values["hot CPU"] == 3
    assert values["CPU 3 busy (median)"] == 100.0
    assert values["CPU 3 %soft (median)"] == 90.0
    assert values["CPU 3 %irq + %soft share of busy"] == 90.0
    assert values["all-CPU busy (mean)"] == 12.5
    assert "smp_affinity_list" in finding.recommendation and "rps_cpus" in finding.recommendation
    cpu_ev = next(e for e in finding.evidence if e.label == "hot CPU")
    assert cpu_ev.member == "2026_04_21_16_51_41-mpstat"
    assert cpu_ev.lines == (30, 107)  # the CPU 3 rows of reports 3 and 10 (line 5 + cpu + 11 per report)


def test_single_cpu_saturation_names_a_thread_when_the_core_is_in_user_space() -> None:
    out = engine.run(_mp([{5: THREAD_BOUND}] * 6), only=("single-cpu-saturation",))
    [finding] = out.findings
    assert _values(finding)["hot CPU"] == 5
    assert _values(finding)["CPU 5 %usr (median)"] == 97.0
    assert "ps -eLo pid,tid,psr" in finding.recommendation


@pytest.mark.parametrize(
    ("samples", "ncpu"),
    [
        pytest.param([{c: IDLE_CPU for c in range(8)}] * 10, 8, id="idle healthy capture"),
        pytest.param([{3: (79.0, 10.0, 0.0, 0.0, 0.0, 0.0)}] * 10, 8, id="hot core at 89 %, under 90"),
        pytest.param([{3: SOFTIRQ_BOUND}] * 4 + [{}] * 6, 8, id="hot for 4 s, shorter than 5 s"),
        pytest.param(
            [{0: THREAD_BOUND, 1: (60.0, 0, 0, 0, 0, 0), 2: (60.0, 0, 0, 0, 0, 0), 3: (60.0, 0, 0, 0, 0, 0)}]
            * 10,
            4,
            id="average 70 % busy: the whole box is busy",
        ),
        pytest.param(
            [{3: (0.0, 1.0, 99.0, 0.0, 0.0, 0.0)}] * 10, 8, id="one core in iowait is idle, not busy"
        ),
    ],
)
def test_single_cpu_saturation_stays_silent(samples, ncpu) -> None:
    assert engine.run(_mp(samples, ncpu), only=("single-cpu-saturation",)).findings == []


def test_single_cpu_saturation_without_mpstat_is_not_evaluated() -> None:
    out = engine.run(os_timeline(vm=vmstat_rows_text([{}] * 10)), only=("single-cpu-saturation",))
    assert out.not_evaluated == [NotEvaluated("single-cpu-saturation", ("mpstat_cpu",))]


# --- cpu-steal ------------------------------------------------------------------------------


def _steal_rows(st: int, n: int, *, quiet: int = 2) -> list[dict]:
    return (
        [{}]
        + [{"us": 5, "sy": 2, "id": 92, "st": 1}] * quiet
        + [{"us": 40, "sy": 10, "id": 50 - st, "st": st}] * n
    )


def test_cpu_steal_fires_on_sustained_steal_with_per_cpu_detail() -> None:
    samples = [{}] * 2 + [{c: (40.0, 10.0, 0.0, 0.0, 0.0, 25.0 if c < 2 else 15.0) for c in range(4)}] * 6
    tl = os_timeline(
        vm=vmstat_rows_text(_steal_rows(20, 6)), mpstat_texts=(mpstat_cpu_text(samples, ncpu=4),)
    )
    [finding] = engine.run(tl, only=("cpu-steal",)).findings
    assert finding.severity is Severity.WARNING
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (44, 49)
    values = _values(finding)
    assert values["steal st (median)"] == 20.0
    assert values["mpstat %steal, all CPUs (mean of medians)"] == 20.0
    assert values["CPU 0 %steal (median)"] == 25.0
    assert finding.confidence.startswith("vmstat + mpstat agree")


def test_cpu_steal_is_critical_above_30_percent() -> None:
    [finding] = engine.run(os_timeline(vm=vmstat_rows_text(_steal_rows(35, 6))), only=("cpu-steal",)).findings
    assert finding.severity is Severity.CRITICAL
    assert _values(finding)["steal st (max)"] == 35.0


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([{}] + [{"us": 1, "sy": 1, "id": 98, "st": 0}] * 20, id="idle healthy capture"),
        pytest.param(_steal_rows(9, 10), id="steal 9 %, under 10"),
        pytest.param(_steal_rows(25, 4) + [{"st": 0}] * 5, id="steal for 4 s only"),
        pytest.param([{"st": 40}] + [{"st": 0}] * 10, id="only the since-boot line has steal"),
    ],
)
def test_cpu_steal_stays_silent(rows) -> None:
    assert engine.run(os_timeline(vm=vmstat_rows_text(rows)), only=("cpu-steal",)).findings == []


def test_cpu_steal_fires_on_mpstat_alone() -> None:
    samples = [{}] * 2 + [{c: (40.0, 10.0, 0.0, 0.0, 0.0, 20.0) for c in range(4)}] * 6
    [finding] = engine.run(_mp(samples, ncpu=4), only=("cpu-steal",)).findings
    assert _values(finding)["mpstat %steal, all CPUs (mean of medians)"] == 20.0


def test_cpu_steal_without_vmstat_or_mpstat_is_not_evaluated() -> None:
    out = engine.run(
        os_timeline(mpstat_texts=(mpstat_intr_text([[100.0] * 4] * 6),), ncpu=4), only=("cpu-steal",)
    )
    assert out.not_evaluated == [NotEvaluated("cpu-steal", ("vmstat or mpstat_cpu",))]


# --- context-switch-storm -------------------------------------------------------------------


def _cs_rows(values: list[int]) -> list[dict]:
    return [{"cs": 3000}] + [{"cs": v, "in": 9000, "r": 12, "us": 40, "sy": 35, "id": 25} for v in values]


def test_context_switch_storm_fires_above_the_fixed_bar() -> None:
    out = engine.run(
        os_timeline(vm=vmstat_rows_text(_cs_rows([240_000] * 8))), only=("context-switch-storm",)
    )
    [finding] = out.findings
    assert finding.severity is Severity.WARNING
    values = _values(finding)
    assert values["context switches cs (median)"] == 240_000
    assert values["cs per CPU (median)"] == 60_000
    assert values["system CPU sy (mean)"] == 35.0
    assert "rise over the quiet level" not in values  # the whole capture is the storm: no quiet part
    assert "pidstat -wt" in finding.recommendation


def test_context_switch_storm_fires_on_a_rise_over_the_captures_quiet_level() -> None:
    out = engine.run(
        os_timeline(vm=vmstat_rows_text(_cs_rows([8_000] * 5 + [100_000] * 6))),
        only=("context-switch-storm",),
    )
    [finding] = out.findings
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (47, 52)
    values = _values(finding)
    assert values["cs per CPU (median)"] == 25_000
    assert values["capture's quiet level, cs per CPU (10th percentile)"] == 2_000
    assert values["rise over the quiet level"] == 12.5


def test_context_switch_storm_is_critical_above_100k_per_cpu() -> None:
    [finding] = engine.run(
        os_timeline(vm=vmstat_rows_text(_cs_rows([480_000] * 6))), only=("context-switch-storm",)
    ).findings
    assert finding.severity is Severity.CRITICAL


SEED_003_CS = [100207, 98607, 101262, 103715, 98386]  # seed 003's vmstat cs on 32 CPUs: ~3.1k per CPU


@pytest.mark.parametrize(
    ("values", "ncpu"),
    [
        pytest.param([900, 1100, 800, 1000, 950, 1200, 700, 1000], 4, id="idle healthy capture"),
        pytest.param(SEED_003_CS, 32, id="seed 003: 100k/s on 32 CPUs is not a storm"),
        pytest.param([196_000] * 10, 4, id="49k per CPU flat, under the bar"),
        pytest.param(
            [4_000] * 5 + [60_000] * 6, 4, id="15k per CPU after a quiet start: under the 20k floor"
        ),
        pytest.param([8_000] * 5 + [240_000] * 4 + [8_000] * 3, 4, id="storm for 4 s only"),
    ],
)
def test_context_switch_storm_stays_silent(values, ncpu) -> None:
    tl = os_timeline(vm=vmstat_rows_text(_cs_rows(values)), ncpu=ncpu)
    assert engine.run(tl, only=("context-switch-storm",)).findings == []


def test_context_switch_storm_without_ncpu_is_not_evaluated() -> None:
    out = engine.run(
        os_timeline(vm=vmstat_rows_text(_cs_rows([240_000] * 8)), ncpu=None), only=("context-switch-storm",)
    )
    assert out.not_evaluated == [NotEvaluated("context-switch-storm", ("ncpu",))]


def test_context_switch_storm_without_vmstat_is_not_evaluated() -> None:
    out = engine.run(
        os_timeline(mpstat_texts=(mpstat_intr_text([[100.0] * 4] * 3),)), only=("context-switch-storm",)
    )
    assert out.not_evaluated == [NotEvaluated("context-switch-storm", ("vmstat",))]
