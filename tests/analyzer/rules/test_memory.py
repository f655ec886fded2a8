"""swap-activity: vmstat si/so above zero for several samples in a row (seed 004)."""

from __future__ import annotations

import pytest

from analyzer import engine
from analyzer.findings import NotEvaluated, Severity
from tests.analyzer.captures import idle_timeline, mpstat_cpu_text, os_timeline, vmstat_rows_text


def _run(rows):
    return engine.run(os_timeline(vm=vmstat_rows_text(rows)), only=("swap-activity",))


def _values(finding):
    return {e.label: e.value for e in finding.evidence}


QUIET = {"swpd": 812_000, "free": 310_000, "cache": 1_900_000}


def test_it_fires_when_the_server_swaps_out_and_in() -> None:
    # a backup fills the page cache; mysqld's pages go to swap and come back (seed 004)
    swapping = [
        {
            "si": 120 + 10 * i,
            "so": 3400 + 100 * i,
            "swpd": 812_000 + 3500 * (i + 1),
            "free": 150_000 - 1000 * i,
            "cache": 1_400_000,
            "wa": 20,
            "id": 60,
        }
        for i in range(5)
    ]
    out = _run([QUIET, QUIET, QUIET] + swapping + [QUIET])
    [finding] = out.findings
    assert finding.severity is Severity.CRITICAL  # si + so ~3.7 MiB/s
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (44, 48)
    values = _values(finding)
    assert values["swap-in si (median)"] == 140
    assert values["swap-out so (max)"] == 3800
    assert values["swap used swpd (first)"] == 815_500
    assert values["swap used swpd (last)"] == 829_500
    assert values["free memory (min)"] == 146_000
    assert values["page cache (min)"] == 1_400_000
    assert "vm.swappiness=1" in finding.recommendation and "swapoff" in finding.recommendation
    si = next(e for e in finding.evidence if e.series == "vmstat.si")
    assert (si.member, si.lines) == ("2026_04_21_16_51_41-vmstat", (6, 10))


def test_swap_in_only_is_a_warning_about_pages_coming_back() -> None:
    out = _run([QUIET] + [{**QUIET, "si": 40}] * 4 + [QUIET] * 3)
    [finding] = out.findings
    assert finding.severity is Severity.WARNING
    assert _values(finding)["swap-out so (max)"] == 0
    assert "read back" in finding.explanation


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param([QUIET] * 20, id="idle healthy capture with old swap in use"),
        pytest.param([QUIET] + [{**QUIET, "si": 64}] * 2 + [QUIET] * 5, id="two samples, not several"),
        pytest.param(
            [QUIET, {**QUIET, "si": 8}, QUIET, {**QUIET, "si": 12}, QUIET, {**QUIET, "so": 4}, QUIET],
            id="isolated page-ins",
        ),
        pytest.param([{**QUIET, "si": 900, "so": 900}] + [QUIET] * 10, id="swap only in the since-boot line"),
    ],
)
def test_it_stays_silent(rows) -> None:
    assert _run(rows).findings == []


def test_the_real_idle_capture_does_not_fire() -> None:
    assert engine.run(idle_timeline(), only=("swap-activity",)).findings == []


def test_missing_vmstat_gives_not_evaluated() -> None:
    tl = os_timeline(mpstat_texts=(mpstat_cpu_text([{}] * 3, ncpu=2),))
    assert engine.run(tl, only=("swap-activity",)).not_evaluated == [
        NotEvaluated("swap-activity", ("vmstat",))
    ]
