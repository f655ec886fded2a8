"""disk-saturation: a device with requests queued and waiting, sustained (seed 004; iostat(1))."""

from __future__ import annotations

import pytest

from analyzer import engine
from analyzer.findings import NotEvaluated, Severity
from tests.analyzer.captures import idle_timeline, iostat_dx_text, os_timeline, vmstat_rows_text

BOOT = {
    "sda": {
        "r_s": 12.0,
        "rkB_s": 400.0,
        "r_await": 1.2,
        "w_s": 30.0,
        "wkB_s": 900.0,
        "w_await": 2.0,
        "aqu_sz": 0.05,
        "util": 2.0,
    }
}
IDLE = {"sda": {"w_s": 1.0, "wkB_s": 4.0, "w_await": 0.5, "aqu_sz": 0.0, "util": 0.1}}
# an HDD flooded with writes: 900 w/s, 56.25 MiB/s, 38 requests in flight, 45 ms each
HDD_FLOODED = {
    "sdb": {
        "r_s": 20.0,
        "rkB_s": 320.0,
        "r_await": 30.0,
        "w_s": 900.0,
        "wkB_s": 57600.0,
        "w_await": 45.0,
        "aqu_sz": 38.0,
        "util": 100.0,
    }
}


def _run(reports):
    return engine.run(os_timeline(iostat_text=iostat_dx_text(reports)), only=("disk-saturation",))


def _values(finding):
    return {e.label: e.value for e in finding.evidence}


def test_it_fires_on_a_device_with_a_long_queue_and_slow_requests() -> None:
    out = _run([BOOT] + [IDLE] * 2 + [{**IDLE, **HDD_FLOODED}] * 6 + [IDLE])
    [finding] = out.findings
    assert finding.severity is Severity.WARNING
    [window] = finding.windows
    assert (window.start.second, window.end.second) == (44, 49)
    values = _values(finding)
    assert values["device"] == "sdb"
    assert values["aqu-sz (median)"] == 38.0
    assert values["w_await (median)"] == 45.0
    assert values["w/s (median)"] == 900.0
    assert values["wMB/s (median)"] == 56.25
    assert values["%util (median)"] == 100.0
    assert (
        finding.title == "Disk sdb saturated: 38.0 requests queued, 45 ms per I/O at 56.6 MiB/s"
    )  # reads + writes
    assert any("svctm" in c for c in finding.caveats) and any("%util" in c for c in finding.caveats)
    device = next(e for e in finding.evidence if e.label == "device")
    assert device.member == "2026_04_21_16_51_41-iostat"


def test_it_fires_on_an_ssd_queueing_far_above_its_own_service_time() -> None:
    quiet = {"nvme0n1": {"r_s": 800.0, "rkB_s": 12800.0, "r_await": 0.2, "aqu_sz": 0.16, "util": 20.0}}
    queued = {"nvme0n1": {"r_s": 4000.0, "rkB_s": 64000.0, "r_await": 6.0, "aqu_sz": 24.0, "util": 100.0}}
    out = _run([BOOT] + [quiet] * 5 + [queued] * 6)
    [finding] = out.findings
    values = _values(finding)
    assert values["device"] == "nvme0n1"
    assert values["r_await (median)"] == 6.0
    assert values["await with no queue (aqu-sz < 1) in this capture"] == 0.2


def test_it_is_critical_when_requests_wait_100_ms() -> None:
    slow = {"sdb": {**HDD_FLOODED["sdb"], "w_await": 140.0}}
    [finding] = _run([BOOT] + [slow] * 6).findings
    assert finding.severity is Severity.CRITICAL


@pytest.mark.parametrize(
    "reports",
    [
        pytest.param([BOOT] + [IDLE] * 10, id="idle healthy capture"),
        pytest.param(
            [BOOT]
            + [{"nvme0n1": {"r_s": 9000.0, "rkB_s": 144000.0, "r_await": 0.8, "aqu_sz": 3.0, "util": 100.0}}]
            * 8,
            id="SSD at 100 % util, requests served fast",
        ),
        pytest.param(
            [BOOT]
            + [{"sda": {"r_s": 125.0, "rkB_s": 2000.0, "r_await": 8.0, "aqu_sz": 1.0, "util": 100.0}}] * 8,
            id="HDD serving one request at a time",
        ),
        pytest.param(
            [BOOT]
            + [{"sda": {"w_s": 10.0, "wkB_s": 400.0, "w_await": 50.0, "aqu_sz": 0.5, "util": 40.0}}] * 8,
            id="a few slow writes, no queue",
        ),
        pytest.param([HDD_FLOODED] + [IDLE] * 8, id="only the since-boot report is saturated"),
        pytest.param([BOOT] + [HDD_FLOODED] * 4 + [IDLE] * 4, id="saturated for 4 s only"),
    ],
)
def test_it_stays_silent(reports) -> None:
    assert _run(reports).findings == []


def test_the_real_idle_capture_does_not_fire() -> None:
    assert engine.run(idle_timeline(), only=("disk-saturation",)).findings == []


def test_missing_iostat_gives_not_evaluated() -> None:
    out = engine.run(os_timeline(vm=vmstat_rows_text([{}] * 5)), only=("disk-saturation",))
    assert out.not_evaluated == [NotEvaluated("disk-saturation", ("iostat",))]
