"""interrupt-storm and interrupt-imbalance, with seed 003 rebuilt from its quoted lines."""

from __future__ import annotations

import statistics

import pytest

from analyzer import engine
from analyzer.findings import NotEvaluated, Severity
from tests.analyzer.captures import (
    idle_timeline,
    interrupts_text,
    mpstat_intr_text,
    os_timeline,
    vmstat_rows_text,
)

# --- seed 003, retyped -------------------------------------------------------------------------
# `vmstat -S m 1` with benchyou (normal: in ~16k/s) then with mysql_random_load (in ~55k/s), on a
# 32-CPU CentOS 7 box; put in one capture: the quiet part first, then the storm.
SEED_003_BOOT = {"r": 2, "b": 0, "in": 4, "cs": 2, "us": 0, "sy": 0, "id": 99}
SEED_003_NORMAL = [
    (2, 16039, 77988, 3, 2, 95),
    (2, 16091, 78926, 3, 2, 95),
    (3, 16347, 81006, 3, 2, 95),
    (0, 15496, 75715, 3, 2, 95),
    (2, 16167, 79352, 3, 2, 95),
]
SEED_003_STORM = [
    (2, 55444, 100207, 18, 2, 80),
    (4, 52949, 98607, 18, 2, 81),
    (2, 56375, 101262, 14, 2, 84),
    (4, 55806, 103715, 19, 2, 80),
    (5, 55854, 98386, 15, 2, 83),
]
# `mpstat -I SUM -P ALL 1` during the storm (05:37:41 PM), intr/s of CPUs 0-31
SEED_003_INTR = [
    2069,
    1159,
    2979,
    1580,
    1627,
    1461,
    1243,
    1825,
    2154,
    1367,
    1277,
    1376,
    4085,
    1601,
    4045,
    1857,
    1692,
    722,
    118,
    1862,
    1637,
    1130,
    1750,
    1653,
    1417,
    1547,
    1500,
    1033,
    20,
    1683,
    888,
    1549,
]
# /proc/interrupts of CPUs 0-3 as quoted (the other CPUs repeat them); the seed says LOC and RES grow fastest
SEED_003_COUNTS = {
    "LOC": [2468939840, 2374791518, 2373834803, 2373613050],
    "IWI": [50073298, 45861632, 45568755, 45833911],
    "RES": [3472920231, 3022439316, 2990464825, 3012790828],
    "CAL": [5131479, 6539715, 17285454, 11211131],
    "TLB": [23094853, 24045725, 24230472, 24271286],
}
# how each CPU's interrupts split between the lines: RES and LOC dominate as in the quoted counters
SPLIT = {"LOC": 0.42, "IWI": 0.01, "RES": 0.55, "CAL": 0.01, "TLB": 0.01}
QUIET_PER_CPU = 501  # 16039/s over 32 CPUs in the normal run
NCPU = 32


def _vm_rows(samples):
    return [{"r": r, "in": i, "cs": cs, "us": us, "sy": sy, "id": idle} for r, i, cs, us, sy, idle in samples]


def _snapshots(
    per_cpu_rates: list[list[float]], split=SPLIT, start=SEED_003_COUNTS
) -> list[dict[str, list[int]]]:
    """Counters that grow by ``per_cpu_rates[k][cpu] x split[line]`` between snapshot k and k+1."""
    ncpu = len(per_cpu_rates[0])
    counts = {irq: [start[irq][c % len(start[irq])] for c in range(ncpu)] for irq in split}
    snaps = [{irq: list(v) for irq, v in counts.items()}]
    for rates in per_cpu_rates:
        for irq, share in split.items():
            counts[irq] = [n + round(rate * share) for n, rate in zip(counts[irq], rates, strict=True)]
        snaps.append({irq: list(v) for irq, v in counts.items()})
    return snaps


def _seed_003(*, with_interrupts: bool = True, with_mpstat: bool = True):
    quiet = [[QUIET_PER_CPU] * NCPU] * 5
    storm = [SEED_003_INTR] * 5
    return os_timeline(
        vm=vmstat_rows_text([SEED_003_BOOT] + _vm_rows(SEED_003_NORMAL + SEED_003_STORM)),
        mpstat_texts=(mpstat_intr_text(quiet + storm),) if with_mpstat else (),
        # snapshot k at START + 1 + k s (:42, :43 ...): the deltas ending at :43..:51 follow the mpstat rates
        interrupts=interrupts_text(_snapshots(quiet[1:] + storm)) if with_interrupts else None,
        ncpu=NCPU,
    )


def _values(finding):
    return {e.label: e.value for e in finding.evidence}


# --- interrupt-storm ---------------------------------------------------------------------------


def test_seed_003_is_an_interrupt_storm_of_loc_and_res() -> None:
    [finding] = engine.run(_seed_003(), only=("interrupt-storm",)).findings
    # 1.7k/s per CPU is under the fixed bar: a storm only against the quiet part of the capture, which a
    # load start also shows, so it is reported as INFO with the numbers and the timer_migration advice
    assert finding.severity is Severity.INFO
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (47, 51)  # the five mysql_random_load seconds
    values = _values(finding)
    assert values["interrupts in (median)"] == 55806
    assert values["interrupts in (max)"] == 56375
    assert values["in per CPU (median)"] == 1744  # 55806 / 32
    assert values["capture's quiet level, in (10th percentile)"] == 15985
    assert values["rise over the quiet level"] == 3.5
    assert values["context switches cs (median)"] == 100207
    assert values["busiest CPU 12, intr/s (mean)"] == 4085.0
    assert values["quietest CPU, intr/s (mean)"] == 20.0
    assert finding.title == "Interrupt storm: 55,806 interrupts/s (1,744 per CPU), mostly RES, LOC, CAL"
    top = [e.label for e in finding.evidence if e.series == "interrupts.per_s" and e.label.startswith("IRQ ")]
    assert top[:2] == ["IRQ RES (Rescheduling interrupts)", "IRQ LOC (Local timer interrupts)"]
    assert values["IRQ RES (Rescheduling interrupts)"] == pytest.approx(sum(SEED_003_INTR) * 0.55, rel=0.01)
    assert values["LOC + RES share of all interrupts"] == pytest.approx(97.0, abs=0.5)
    assert "sysctl -w kernel.timer_migration=0" in finding.recommendation
    assert any("cloud VM" in c for c in finding.caveats)
    vm_ev = next(e for e in finding.evidence if e.label == "interrupts in (median)")
    assert (vm_ev.member, vm_ev.lines) == ("2026_04_21_16_51_41-vmstat", (9, 13))


def test_seed_003_storm_shape_comes_from_proc_interrupts_without_mpstat() -> None:
    [finding] = engine.run(_seed_003(with_mpstat=False), only=("interrupt-storm",)).findings
    assert _values(finding)["in per CPU (median)"] == 1744
    assert "interrupts" in finding.confidence


def test_a_fixed_bar_storm_without_proc_interrupts_asks_for_them() -> None:
    rows = [{}] + [{"in": 26_000, "cs": 30_000}] * 8  # 6.5k interrupts/s on each of 4 CPUs
    [finding] = engine.run(os_timeline(vm=vmstat_rows_text(rows)), only=("interrupt-storm",)).findings
    assert finding.severity is Severity.WARNING
    assert _values(finding)["in per CPU (median)"] == 6500
    assert "cat /proc/interrupts > /tmp/i1" in finding.recommendation


def test_a_storm_above_20k_per_cpu_is_critical() -> None:
    rows = [{}] + [{"in": 90_000, "cs": 30_000}] * 8
    [finding] = engine.run(os_timeline(vm=vmstat_rows_text(rows)), only=("interrupt-storm",)).findings
    assert finding.severity is Severity.CRITICAL


def _load_start():
    """4 CPUs going from idle to busy: timer ticks on every CPU, balanced, LOC far above RES."""
    quiet, busy = [[100.0] * 4] * 5, [[1250.0] * 4] * 6
    split = {"LOC": 0.8, "RES": 0.15, "CAL": 0.05}
    start = {"LOC": [1_000_000] * 4, "RES": [50_000] * 4, "CAL": [9_000] * 4}
    return os_timeline(
        vm=vmstat_rows_text([{}] + [{"in": 400}] * 5 + [{"in": 5000}] * 6),
        interrupts=interrupts_text(_snapshots(quiet[1:] + busy, split, start)),
    )


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda: os_timeline(vm=vmstat_rows_text([{}] + [{"in": 300, "cs": 500}] * 20)),
            id="idle healthy capture",
        ),
        pytest.param(_load_start, id="a load start: interrupts rise 12 x but balanced and timer-led"),
        pytest.param(
            lambda: os_timeline(
                vm=vmstat_rows_text([SEED_003_BOOT] + _vm_rows(SEED_003_NORMAL * 2)), ncpu=NCPU
            ),
            id="seed 003's normal run (16k/s on 32 CPUs)",
        ),
        pytest.param(
            lambda: os_timeline(vm=vmstat_rows_text([{}] + [{"in": 19_600}] * 10)),
            id="4.9k per CPU flat, under the bar",
        ),
        pytest.param(
            lambda: os_timeline(vm=vmstat_rows_text([{}] + [{"in": 26_000}] * 4 + [{"in": 300}] * 6)),
            id="4 s over the bar only",
        ),
    ],
)
def test_interrupt_storm_stays_silent(make) -> None:
    assert engine.run(make(), only=("interrupt-storm",)).findings == []


def test_interrupt_storm_without_ncpu_is_not_evaluated() -> None:
    out = engine.run(os_timeline(vm=vmstat_rows_text([{}] * 5), ncpu=None), only=("interrupt-storm",))
    assert out.not_evaluated == [NotEvaluated("interrupt-storm", ("ncpu",))]


# --- interrupt-imbalance -----------------------------------------------------------------------


def test_seed_003_imbalance_is_per_cpu_interrupts_that_affinity_cannot_move() -> None:
    [finding] = engine.run(_seed_003(), only=("interrupt-imbalance",)).findings
    assert finding.severity is Severity.INFO  # no device IRQ pinned: LOC/RES follow the threads
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (47, 51)
    values = _values(finding)
    assert values["busiest CPU"] == 12
    assert values["CPU 12 intr/s (mean)"] == 4085.0
    assert values["median CPU intr/s (mean)"] == statistics.median(SEED_003_INTR) == 1564.5
    assert values["CPU 18 intr/s (mean), near zero"] == 118.0
    assert values["CPU 28 intr/s (mean), near zero"] == 20.0
    assert values["CPU 12: IRQ RES (Rescheduling interrupts)"] == pytest.approx(4085 * 0.55, abs=1)
    assert "IRQ affinity cannot move them" in finding.explanation
    busiest = next(e for e in finding.evidence if e.label == "busiest CPU")
    assert busiest.series == "mpstat_intr.intr_per_s"


def _nic_pinned(rate: float = 30_000.0):
    """8 CPUs ticking at 250/s; the NIC's IRQ 45 all on CPU 2."""
    start = {"LOC": [5_000_000] * 8, "45": [0, 0, 70_000_000, 0, 0, 0, 0, 0]}
    rates = [[250.0] * 8] * 7
    snaps = _snapshots(rates, {"LOC": 1.0}, start)
    for k, snap in enumerate(snaps):
        snap["45"] = [0, 0, int(70_000_000 + rate * k), 0, 0, 0, 0, 0]
    return os_timeline(interrupts=interrupts_text(snaps), ncpu=8)


def test_a_nic_irq_pinned_to_one_cpu_is_a_warning_naming_it() -> None:
    [finding] = engine.run(_nic_pinned(), only=("interrupt-imbalance",)).findings
    assert finding.severity is Severity.WARNING
    values = _values(finding)
    assert values["busiest CPU"] == 2
    assert values["CPU 2 intr/s (mean)"] == 30_250.0
    assert values["busiest / median"] == 121.0
    assert values["IRQ 45 (eth0-TxRx-45) pinned to CPU 2"] == 30_000.0
    assert "/proc/irq/45/smp_affinity_list" in finding.recommendation
    assert next(e for e in finding.evidence if e.label == "busiest CPU").series == "interrupts.per_s"


def _balanced_busy():
    return os_timeline(
        interrupts=interrupts_text(
            _snapshots([[1000.0] * 8] * 7, {"LOC": 0.9, "RES": 0.1}, {"LOC": [1] * 8, "RES": [1] * 8})
        ),
        ncpu=8,
    )


def _low_rate_skew():
    return os_timeline(
        interrupts=interrupts_text(_snapshots([[400.0] + [20.0] * 7] * 7, {"LOC": 1.0}, {"LOC": [1] * 8})),
        ncpu=8,
    )


def _one_busy_core():
    """A single-threaded load: CPU 1 ticks 1000/s because it is busy, the tickless others barely."""
    return os_timeline(
        interrupts=interrupts_text(
            _snapshots(
                [[30.0, 1100.0] + [30.0] * 6] * 7, {"LOC": 0.9, "RES": 0.1}, {"LOC": [1] * 8, "RES": [1] * 8}
            )
        ),
        ncpu=8,
    )


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_balanced_busy, id="busy and balanced"),
        pytest.param(_one_busy_core, id="one busy core ticking: timer only"),
        pytest.param(_low_rate_skew, id="skewed but light: CPU 0 at 400/s"),
    ],
)
def test_interrupt_imbalance_stays_silent(make) -> None:
    out = engine.run(make(), only=("interrupt-imbalance",))
    assert out.findings == []


def test_the_real_idle_capture_raises_no_interrupt_finding() -> None:
    out = engine.run(idle_timeline(), only=("interrupt-storm", "interrupt-imbalance"))
    assert out.findings == [] and out.not_evaluated == []


def test_interrupt_imbalance_reads_mpstat_alone_without_naming_irq_lines() -> None:
    tl = os_timeline(mpstat_texts=(mpstat_intr_text([[9000.0, 500.0, 400.0, 450.0]] * 8),), ncpu=4)
    [finding] = engine.run(tl, only=("interrupt-imbalance",)).findings
    values = {e.label: e.value for e in finding.evidence}
    assert (values["busiest CPU"], values["median CPU intr/s (mean)"]) == (0, 475.0)
    assert not any(e.series == "interrupts.per_s" for e in finding.evidence)


def test_interrupt_imbalance_without_per_cpu_interrupts_is_not_evaluated() -> None:
    tl = os_timeline(vm=vmstat_rows_text([{}] * 6), ncpu=NCPU)
    out = engine.run(tl, only=("interrupt-imbalance",))
    assert out.not_evaluated == [NotEvaluated("interrupt-imbalance", ("interrupts or mpstat_intr",))]


# --- calibration: interrupts that follow a load are its evidence -----------------------------------


def test_6000_interrupts_per_cpu_of_an_io_load_on_2_cpus_are_not_a_storm() -> None:
    """The I/O completions and rescheduling IPIs of a real 2-CPU I/O load: iowait 40 %, 2 blocked."""
    rows = [{}] + [{"in": 12_000, "cs": 20_000, "b": 2, "us": 10, "sy": 8, "id": 42, "wa": 40}] * 10
    assert (
        engine.run(os_timeline(vm=vmstat_rows_text(rows), ncpu=2), only=("interrupt-storm",)).findings == []
    )


def test_the_same_interrupts_with_no_load_behind_them_are_a_storm() -> None:
    rows = [{}] + [{"in": 12_000, "cs": 20_000, "b": 0, "us": 10, "sy": 8, "id": 82, "wa": 0}] * 10
    [finding] = engine.run(os_timeline(vm=vmstat_rows_text(rows), ncpu=2), only=("interrupt-storm",)).findings
    assert finding.severity is Severity.WARNING


def test_beyond_the_critical_bar_a_storm_is_reported_even_beside_a_load() -> None:
    rows = [{}] + [{"in": 50_000, "cs": 20_000, "b": 2, "us": 10, "sy": 8, "id": 42, "wa": 40}] * 10
    [finding] = engine.run(os_timeline(vm=vmstat_rows_text(rows), ncpu=2), only=("interrupt-storm",)).findings
    assert finding.severity is Severity.CRITICAL
    assert "An I/O load (iowait 40 %, 2 threads blocked on I/O) ran in the same window" in finding.explanation
