"""parsers/interrupts.py: counts per IRQ and CPU, rates, descriptions, every /proc/interrupts shape."""

from __future__ import annotations

from pathlib import Path

import jc
import numpy as np
import pandas as pd
import pytest

from parsers import interrupts
from parsers.base import Clock, ClockHints, ParseError


def _parse(path: Path, clock: ClockHints | None = None) -> interrupts.ParsedSource:
    with path.open() as fh:
        return interrupts.parse(fh, member=path.name, clock=clock or ClockHints())


def _count(src, irq: str, cpu: int, snapshot: int = 0) -> int:
    m = src.main
    rows = m[(m.irq == irq) & (m.cpu == cpu) & (m.snapshot == snapshot)]
    assert len(rows) == 1, rows
    return int(rows["count"].iloc[0])


def _desc(src, irq: str) -> tuple[str, str, str, str]:
    d = src.frames["interrupts_desc"]
    row = d[d.irq == irq].iloc[0]
    return row.chip, row.hwirq, row.type, row.devices


# --- our own capture: three TS snapshots ------------------------------------------------------------


@pytest.fixture
def snaps(fixtures: Path):
    return _parse(fixtures / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt")


def test_three_snapshots_of_68_counters(snaps):
    assert (len(snaps.main), snaps.samples) == (204, 3)
    assert snaps.clock is Clock.TS_MARKER
    assert str(snaps.start) == "2026-11-22 12:27:09.710517035+00:00"
    assert str(snaps.end) == "2026-11-22 12:27:11.722008933+00:00"


def test_rate_is_delta_over_elapsed_seconds(snaps):
    m = snaps.main
    loc = m[(m.irq == "LOC") & (m.cpu == 1)]
    assert loc["count"].tolist() == [39781, 40094, 40384]
    elapsed = 1795350430.716012880 - 1795350429.710517035
    assert np.isnan(loc.per_s.iloc[0])
    assert loc.per_s.iloc[1] == pytest.approx((40094 - 39781) / elapsed)


def test_count_and_line_of_a_device_irq(snaps):
    m = snaps.main
    row = m[(m.irq == "36") & (m.cpu == 1) & (m.snapshot == 2)].iloc[0]
    assert (row["count"], row.line_no) == (91900, 88)
    assert _desc(snaps, "36") == ("PCI-MSIX-0000:00:02.0", "1", "edge", "virtio1-req.0")


def test_err_is_one_total_on_cpu_minus_1(snaps):
    m = snaps.main
    assert m[m.irq == "ERR"].cpu.unique().tolist() == [-1]


def test_meta_counts_cpus_and_guesses_x86(snaps):
    assert (snaps.meta["ncpu"], snaps.meta["cpus"], snaps.meta["arch"]) == (2, [0, 1], "x86")
    assert snaps.meta["snapshots"][1] == (1, 38, 74)


def test_desc_has_one_row_per_irq(snaps):
    d = snaps.frames["interrupts_desc"]
    assert len(d) == 35 and d.irq.is_unique
    assert _desc(snaps, "LOC") == ("", "", "", "Local timer interrupts")


# --- real /proc/interrupts from many kernels --------------------------------------------------------


def test_offline_cpu_maps_counts_by_header_number(samples):
    src = _parse(samples / "sysstat/interrupts/root3-proc-interrupts")
    assert src.meta["cpus"] == [0, 1, 2, 3, 4, 5, 7]
    assert src.meta["offline_cpus"] == [6]
    assert _count(src, "LOC", 7) == 12540126
    assert _count(src, "LOC", 3) == 9212607
    assert src.main[src.main.cpu == 6].empty


def test_sysstat_root1_nine_cpus(samples):
    src = _parse(samples / "sysstat/interrupts/root1-proc-interrupts")
    assert len(src.main) == 371
    assert _count(src, "16", 3) == 10536
    assert _desc(src, "24") == ("PCI-MSI", "512000", "edge", "ahci[0000:00:1f.2]")


def test_coreos_hyperv_rows_and_split_chip(samples):
    src = _parse(samples / "coreos-sosreport-master1/interrupts/interrupts")
    assert len(src.main) == 46
    assert _count(src, "HVS", 1) == 1097106
    assert _desc(src, "8") == ("IO-APIC", "8", "edge", "rtc0")
    assert _count(src, "MIS", -1) == 0


def test_old_kernel_glued_chip_and_type(samples):
    src = _parse(samples / "node_exporter/interrupts/interrupts")
    assert len(src.main) == 114
    assert _desc(src, "0") == ("IR-IO-APIC", "", "edge", "timer")
    assert _desc(src, "40") == ("DMAR_MSI", "", "edge", "dmar0")
    assert _desc(src, "16") == ("IR-IO-APIC", "", "fasteoi", "ehci_hcd:usb1, mmc0")
    assert _count(src, "LOC", 3) == 130980079


def test_arm64_gic_rows(samples):
    src = _parse(samples / "node_exporter/interrupts/interrupts_aarch64")
    assert src.meta["arch"] == "arm64"
    assert _desc(src, "10") == ("GICv3", "27", "Level", "arch_timer")
    assert _count(src, "10", 3) == 3273132897
    assert _count(src, "IPI0", 3) == 2730576120  # no blank after "IPI0:"
    assert _count(src, "Err", -1) == 0


def test_arm32_extra_ipi_counts_warn_and_fiq_has_no_counts(samples):
    src = _parse(samples / "i5_info/interrupts/proc-interrupts")
    assert src.meta["arch"] == "arm" and src.meta["ncpu"] == 1
    assert _desc(src, "14") == ("-", "", "", "debug-signal")
    assert _count(src, "IPI1", 3) == 30716
    extra = [w for w in src.warnings if w.code == "extra-counts"]
    assert (len(extra), extra[0].line_no) == (6, 63)
    assert _desc(src, "FIQ") == ("", "", "", "fiq_glue")
    assert src.main[src.main.irq == "FIQ"].empty


def test_kernel_measure_skips_blank_lines(samples):
    src = _parse(samples / "kernel-measure/interrupts/interrupts.txt")
    assert src.meta["ncpu"] == 16
    assert _count(src, "127", 1) == 786528
    assert _count(src, "126", 12) == 260915


def test_intersched_msi_vectors(samples):
    src = _parse(samples / "intersched/interrupts/interrupts.txt")
    assert _count(src, "38", 5) == 277038102
    assert _desc(src, "25") == ("IR-PCI-MSI", "16384", "edge", "PCIe PME")


@pytest.mark.parametrize(
    "path", ["jc/interrupts/linux-proc/interrupts", "coreos-sosreport-master1/interrupts/interrupts"]
)
def test_counts_match_jc(samples, path):
    text = (samples / path).read_text()
    src = interrupts.parse(text.splitlines(), member=path, clock=ClockHints())
    for ref in jc.parse("proc_interrupts", text, quiet=True):
        ours = src.main[src.main.irq == ref["irq"]].sort_values("cpu")["count"].tolist()
        assert ours == ref["interrupts"], ref["irq"]


@pytest.mark.parametrize(
    "path",
    [
        "coreos-sosreport-master1/interrupts/interrupts",
        "i5_info/interrupts/proc-interrupts",
        "node_exporter/interrupts/interrupts_aarch64",
        "sysstat/interrupts/root3-proc-interrupts",
    ],
)
def test_sniff_takes_proc_interrupts(samples, path):
    assert interrupts.sniff((samples / path).read_text().splitlines()[:60])


@pytest.mark.parametrize("path", ["coreos-sosreport-master1/ps/ps_-elfL", "sysstat/mpstat/expected.mpstat-I"])
def test_sniff_leaves_other_formats(samples, path):
    assert not interrupts.sniff((samples / path).read_text().splitlines()[:60])


def test_sniff_looks_past_a_ts_marker(fixtures):
    head = (fixtures / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt").read_text().splitlines()[:60]
    assert interrupts.sniff(head)


# --- counters: wrap, reset; oddities ----------------------------------------------------------------

HEADER = "           CPU0       CPU1"


def _two(prev: str, cur: str) -> interrupts.ParsedSource:
    lines = ["TS 1700000000", HEADER, prev, "TS 1700000002", HEADER, cur]
    return interrupts.parse(lines, member="m", clock=ClockHints())


def test_32_bit_wrap_is_corrected():
    src = _two("LOC: 4294967000        10   Local timer", "LOC:        200        30   Local timer")
    per_s = src.main[src.main.snapshot == 1].per_s.tolist()
    assert per_s == [(200 + 2**32 - 4294967000) / 2, 10.0]
    assert src.warnings == []


def test_counter_reset_is_nan_with_a_warning():
    src = _two("LOC:       5000        10   Local timer", "LOC:         20        30   Local timer")
    assert np.isnan(src.main[(src.main.snapshot == 1) & (src.main.cpu == 0)].per_s.iloc[0])
    assert [(w.line_no, w.code) for w in src.warnings] == [(6, "counter-reset")]


def test_implausible_wrap_is_a_reset():
    src = _two("LOC: 3000000000        10   Local timer", "LOC: 2999999000        30   Local timer")
    assert [w.code for w in src.warnings] == ["counter-reset"]


def test_short_row_warns_and_maps_to_the_first_cpus():
    src = interrupts.parse([HEADER, "LOC:        200   Local timer"], member="m", clock=ClockHints())
    assert src.main.cpu.tolist() == [0]
    assert [(w.line_no, w.code) for w in src.warnings if w.code != "no-start-time"] == [(2, "short-row")]


def test_row_without_colon_warns():
    src = interrupts.parse([HEADER, "garbage here", "LOC: 1 2 Local timer"], member="m", clock=ClockHints())
    assert ("bad-row", 2) in [(w.code, w.line_no) for w in src.warnings]
    assert len(src.main) == 2


def test_non_numeric_count_drops_the_row_with_a_warning():
    src = interrupts.parse(
        [HEADER, "LOC: 1x 2 Local timer", "RES: 3 4 Resched"], member="m", clock=ClockHints()
    )
    assert src.main.irq.unique().tolist() == ["RES"]
    assert ("bad-row", 2) in [(w.code, w.line_no) for w in src.warnings]


def test_unmarked_repeated_header_infers_time_from_the_start():
    clock = ClockHints(start_local=pd.Timestamp("2026-04-21 16:51:41"), interval_s=1.0)
    src = interrupts.parse([HEADER, "LOC: 1 2 L", HEADER, "LOC: 5 6 L"], member="m", clock=clock)
    assert src.clock is Clock.INFERRED and src.ts_is_local
    assert src.main[src.main.snapshot == 1].per_s.tolist() == [4.0, 4.0]


def test_same_time_twice_gives_no_rate_and_warns():
    lines = ["TS 1700000000", HEADER, "LOC: 1 2 L", "TS 1700000000", HEADER, "LOC: 5 6 L"]
    src = interrupts.parse(lines, member="m", clock=ClockHints())
    assert src.main.per_s.isna().all()
    assert [w.code for w in src.warnings] == ["zero-interval"]


def test_irq_appearing_later_gets_its_first_rate_later():
    lines = [
        "TS 1700000000",
        HEADER,
        "LOC: 1 2 L",
        "TS 1700000001",
        HEADER,
        "LOC: 3 4 L",
        " 24: 7 8 MSI 1-edge eth0",
    ]
    src = interrupts.parse(lines, member="m", clock=ClockHints())
    assert src.main[src.main.irq == "24"].per_s.isna().all()
    assert src.main[src.main.irq == "LOC"].per_s.tolist()[2:] == [2.0, 2.0]


def test_not_interrupts_is_a_parse_error_at_its_line(samples):
    with pytest.raises(ParseError) as err:
        _parse(samples / "coreos-sosreport-master1/ps/ps_-elfL")
    assert err.value.line_no == 1


def test_empty_input_gives_empty_frames_and_a_warning():
    src = interrupts.parse(["", "   "], member="m", clock=ClockHints())
    assert len(src.main) == 0 and len(src.frames["interrupts_desc"]) == 0
    assert [w.code for w in src.warnings] == ["empty"]


def test_err_on_a_one_cpu_header_is_still_the_total(samples):
    src = _parse(samples / "i5_info/interrupts/proc-interrupts")
    assert src.main[src.main.irq == "Err"].cpu.tolist() == [-1]


def test_variant_names_arch_and_offline_cpus() -> None:
    lines = ["           CPU0       CPU1       CPU3", "LOC:  100  200  300   Local timer interrupts"]
    src = interrupts.parse(lines, member="m", clock=ClockHints())
    assert src.meta["variant"] == "/proc/interrupts x86, CPU2 offline"


# --- a snapshot read at once, as the one before it -------------------------------------------------

ROWS = [
    " 24:          1          2  IO-APIC   5-edge      ACPI:Ged",
    " 25:         30         40  IR-PCI-MSI 512000-edge      eth0-TxRx-0",
    "LOC:        100        200   Local timer interrupts",
    "ERR:          0",
]


def _snapshots(*snapshots: list[str], end: str = "\n") -> list[str]:
    """TS-marked snapshots of the given rows, two seconds apart, as lines read from a file."""
    text = "".join(
        f"TS {1700000000 + 2 * i}\n{HEADER}\n" + "".join(row + end for row in rows)
        for i, rows in enumerate(snapshots)
    )
    return text.splitlines(keepends=True)


LATER = {
    "same": ROWS,
    "one more row": [*ROWS[:2], " 26:          5          6  IO-APIC   4-edge      ttyS0", *ROWS[2:]],
    "one row less": ROWS[1:],
    "rows swapped": [ROWS[1], ROWS[0], *ROWS[2:]],
    "other devices": [ROWS[0].replace("ACPI:Ged", "ACPI:Ged, i8042"), *ROWS[1:]],
    "label padded otherwise": [ROWS[0].lstrip(), *ROWS[1:]],
    "a count fewer": [ROWS[0].replace("          2  IO", "  IO"), *ROWS[1:]],
    "a count not a number": [ROWS[0].replace("         1 ", "        1x "), *ROWS[1:]],
    "an IRQ twice": [*ROWS, ROWS[0]],
    "a blank line": [*ROWS[:2], "", *ROWS[2:]],
    "a total ending in CR": [*ROWS[:3], ROWS[3] + "\r"],
}


@pytest.mark.parametrize("later", list(LATER.values()), ids=list(LATER))
def test_a_snapshot_like_the_one_before_or_not_is_read_as_the_careful_path_reads_it(
    monkeypatch: pytest.MonkeyPatch, later: list[str]
) -> None:
    lines = _snapshots(ROWS, ROWS, later, ROWS)
    counts: list[object] = []
    real = interrupts._fast_counts
    monkeypatch.setattr(interrupts, "_fast_counts", lambda *a: counts.append(real(*a)) or counts[-1])
    fast = interrupts.parse(lines, member="m", clock=ClockHints())
    # the count texts as located hold their counts alone, read in bulk, unless a row is not plain
    assert (counts[0] is None) == any(
        later is LATER[odd] for odd in ("a count fewer", "a count not a number")
    )
    monkeypatch.setattr(interrupts, "_fast_counts", lambda *a: None)  # every row read token by token
    careful = interrupts.parse(lines, member="m", clock=ClockHints())
    for name in fast.frames:
        pd.testing.assert_frame_equal(fast.frames[name], careful.frames[name], check_exact=True)
    assert fast.warnings == careful.warnings and repr(fast.meta) == repr(careful.meta)


def test_snapshots_like_the_one_before_are_read_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[bool] = []
    real = interrupts._Snapshot.read
    monkeypatch.setattr(
        interrupts._Snapshot, "read", lambda self, *a: read.append(real(self, *a)) or read[-1]
    )
    src = interrupts.parse(_snapshots(ROWS, ROWS, ROWS), member="m", clock=ClockHints())
    assert read == [True, True]
    assert src.main.groupby("snapshot")["line_no"].unique().map(list).tolist() == [
        [3, 4, 5, 6],
        [9, 10, 11, 12],
        [15, 16, 17, 18],
    ]
