"""Host members of the generated bundle: interrupts, mysqladmin, the CPU split, vmstat rows, iostat reports,
the status counters, meminfo."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from bench.gen.formats import IOSTAT_FMT, IOSTAT_HEAD, MYSQLADMIN_BORDER, MYSQLADMIN_ROW, VMSTAT_ROW
from bench.gen.model import MEM_TOTAL_KIB, SHAPES_DEFAULT, Shape, Spec, lerp
from bench.gen.server_data import STATUS_NAMES, STATUS_RATES, UPTIME_AT_START_S
from bench.gen.sessions import Sessions


@dataclass
class Irqs:
    """The /proc/interrupts rows: fixed text around the counts, counters, per-CPU rates."""

    prefixes: list[str]
    suffixes: list[str]
    totals_only: list[bool]
    counts: np.ndarray  # (rows, cpus) int64
    rates: np.ndarray  # (rows, cpus) per second at stress 0
    io_rows: np.ndarray  # rows whose rate follows the disk load


NAMED_IRQS = (
    ("NMI", "Non-maskable interrupts", 2.0),
    ("LOC", "Local timer interrupts", 900.0),
    ("SPU", "Spurious interrupts", 0.0),
    ("PMI", "Performance monitoring interrupts", 2.0),
    ("IWI", "IRQ work interrupts", 30.0),
    ("RTR", "APIC ICR read retries", 0.0),
    ("RES", "Rescheduling interrupts", 1400.0),
    ("CAL", "Function call interrupts", 600.0),
    ("TLB", "TLB shootdowns", 150.0),
    ("TRM", "Thermal event interrupts", 0.0),
    ("THR", "Threshold APIC interrupts", 0.0),
    ("DFR", "Deferred Error APIC interrupts", 0.0),
    ("MCE", "Machine check exceptions", 0.0),
    ("MCP", "Machine check polls", 0.004),
    ("ERR", "", 0.0),
    ("MIS", "", 0.0),
    ("PIN", "Posted-interrupt notification event", 0.0),
    ("NPI", "Nested posted-interrupt event", 0.0),
    ("PIW", "Posted-interrupt wakeup event", 0.0),
)


def new_irqs(spec: Spec, rng: np.random.Generator) -> Irqs:
    prec = 3  # digits of nr_irqs (< 1000): kernel/irq/proc.c pads the IRQ number to it
    legacy = (
        (0, "IO-APIC", "2-edge", "timer"),
        (1, "IO-APIC", "1-edge", "i8042"),
        (4, "IO-APIC", "4-edge", "ttyS0"),
        (8, "IO-APIC", "8-edge", "rtc0"),
        (9, "IO-APIC", "9-fasteoi", "acpi"),
        (12, "IO-APIC", "12-edge", "i8042"),
    )
    numbered: list[tuple[int, str, str, str, bool]] = [(*x, False) for x in legacy][: spec.irqs]
    irq = 24
    for d in range(spec.disks):
        if len(numbered) >= spec.irqs:
            break
        numbered.append((irq, "PCI-MSI", f"{(d + 1) * 1048576}-edge", f"nvme{d}q0", False))
        irq += 1
    q = 0
    while len(numbered) < spec.irqs:
        d = q % max(1, spec.disks)
        qn = q // max(1, spec.disks) + 1
        if q % 3 == 2:
            numbered.append((irq, "IR-PCI-MSI", f"{524288 + q}-edge", f"eth0-TxRx-{q // 3}", False))
        else:
            numbered.append((irq, "PCI-MSI", f"{(d + 1) * 1048576 + qn}-edge", f"nvme{d}q{qn}", True))
        irq += 1
        q += 1
    prefixes, suffixes, totals, rates, io_rows = [], [], [], [], []
    for n, chip, hw_type, dev, is_io in numbered:
        hw, _, typ = hw_type.partition("-")
        prefixes.append(f"{n:>{prec}}:")
        suffixes.append(f" {chip:>8} {hw:>{prec}}-{typ:<8}  {dev}\n")
        totals.append(False)
        rate = np.zeros(spec.cpus)
        if n == 0:
            rate[0] = 0.0
        elif dev.startswith(("nvme", "eth0")):
            rate[(n * 7) % spec.cpus] = float(rng.uniform(50, 400)) if is_io or "eth" in dev else 0.01
        rates.append(rate)
        io_rows.append(is_io)
    for name, desc, rate in NAMED_IRQS:
        prefixes.append(f"{name}:")
        total_only = name in ("ERR", "MIS")
        suffixes.append("\n" if total_only else f"   {desc}\n")
        totals.append(total_only)
        rates.append(np.full(spec.cpus, rate) * rng.uniform(0.6, 1.4, spec.cpus))
        io_rows.append(False)
    rate_m = np.vstack(rates)
    counts = (rate_m * UPTIME_AT_START_S * rng.uniform(0.8, 1.2, rate_m.shape)).astype(np.int64)
    counts %= 1 << 32  # the kernel's unsigned int counters have wrapped on a month-old server
    return Irqs(prefixes, suffixes, totals, counts, rate_m, np.array(io_rows))


def interrupts_block(
    ir: Irqs,
    ncpu: int,
    stress: float,
    rng: np.random.Generator,
    shape: Shape = SHAPES_DEFAULT,
    interval: int = 1,
) -> str:
    """One ``cat /proc/interrupts`` (header + rows), after advancing the counters by one interval."""
    rates = ir.rates.copy()
    rates[ir.io_rows] *= 1 + shape.io_irq_boost * stress
    ir.counts = (ir.counts + rng.poisson(rates * interval)) % (1 << 32)
    header = " " * 11 + "".join(f"CPU{c:<8d}" for c in range(ncpu)) + "\n"
    full = " %10d" * ncpu
    out = [header]
    for prefix, suffix, total, row in zip(ir.prefixes, ir.suffixes, ir.totals_only, ir.counts, strict=True):
        if total:
            out.append(f"{prefix} {int(row.sum()) % (1 << 32):10d}{suffix}")
        else:
            out.append(prefix + full % tuple(row.tolist()) + suffix)
    return "".join(out)


def mysqladmin_block(values: dict[str, float | int | str]) -> str:
    out = [MYSQLADMIN_BORDER, MYSQLADMIN_ROW % ("Variable_name", "Value"), MYSQLADMIN_BORDER]
    for name in STATUS_NAMES:
        v = values[name]
        out.append(MYSQLADMIN_ROW % (name, v if isinstance(v, str) else int(v)))
    out.append(MYSQLADMIN_BORDER)
    return "".join(out)


def cpu_split(n: int, stress: float, rng: np.random.Generator, shape: Shape = SHAPES_DEFAULT) -> np.ndarray:
    """n rows of (usr nice sys iowait irq soft steal guest gnice idle) percentages summing to 100."""
    usr = np.clip(rng.normal(lerp(shape.usr, stress), lerp(shape.usr_sd, stress), n), 0, 95)
    sys_ = np.clip(rng.normal(lerp(shape.sys, stress), 2, n), 0, 30)
    iow = np.clip(rng.normal(lerp(shape.iowait, stress), 2 + 8 * stress * (shape.iowait[1] > 10), n), 0, 90)
    irq = np.clip(rng.normal(0.3, 0.2, n), 0, 5)
    soft = np.clip(rng.normal(1.5, 0.6, n), 0, 10)
    m = np.zeros((n, 10))
    m[:, 0], m[:, 2], m[:, 3], m[:, 4], m[:, 5] = usr, sys_, iow, irq, soft
    m[:, 1] = np.where(rng.random(n) < 0.05, 0.01, 0.0)
    busy = m[:, :9].sum(axis=1)
    scale = np.where(busy > 100, 100 / np.maximum(busy, 1e-9), 1.0)
    m[:, :9] *= scale[:, None]
    m = np.round(m, 2)
    m[:, 9] = np.round(100 - m[:, :9].sum(axis=1), 2).clip(0)
    return m


def vmstat_row(k: int, s: float, spec: Spec, rng: np.random.Generator, free_kib: float, t: float) -> str:
    """Line ``k`` of ``vmstat -t -n 1`` at stress ``s`` (0-1) and epoch ``t``; line 0 is the since-boot
    line."""
    when = datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%d %H:%M:%S")
    if k == 0:  # since boot: small averages
        return VMSTAT_ROW % (
            9,
            0,
            0,
            free_kib,
            412_000,
            96_000_000,
            0,
            0,
            310,
            2200,
            71000,
            160000,
            31,
            6,
            62,
            1,
            0,
            when,
        )
    shape = spec.load
    cpu = cpu_split(1, s, rng, shape)[0]
    us, sy, wa = round(cpu[0] + cpu[1]), round(cpu[2] + cpu[4] + cpu[5]), round(cpu[3])
    if us + sy + wa > 100:
        us = max(0, 100 - sy - wa)
    idle = max(0, 100 - us - sy - wa)
    r = rng.poisson(spec.cpus * lerp(shape.runq_per_cpu, s))
    if shape.b_per_cpu is None:
        b = rng.poisson(1 + spec.sessions * 0.12 * s)
    else:
        b = rng.poisson(spec.cpus * lerp(shape.b_per_cpu, s))
    bi = rng.poisson(3400 * (1 + 2 * s))
    bo = rng.poisson(58000 * (1 - 0.5 * s))
    intr = rng.poisson(spec.cpus * lerp(shape.intr_per_cpu, s))
    cs = rng.poisson(spec.cpus * lerp(shape.cs_per_cpu, s))
    return VMSTAT_ROW % (
        r,
        b,
        0,
        free_kib,
        412_000,
        96_000_000,
        0,
        0,
        bi,
        bo,
        intr,
        cs,
        us,
        sy,
        idle,
        wa,
        0,
        when,
    )


def iostat_report(
    k: int, s: float, devs: list[str], rng: np.random.Generator, t: float, shape: Shape = SHAPES_DEFAULT
) -> str:
    """Report ``k`` of ``iostat -dxk -t 1`` for ``devs`` at stress ``s`` (0-1) and epoch ``t``; report 0 is
    since boot."""
    iso = datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")
    nd = len(devs)
    boost = 0.05 if k == 0 else 1.0  # since boot: low averages
    r = rng.gamma(4, lerp(shape.r_iops, s) / 4, nd) * boost
    w = rng.gamma(4, lerp(shape.w_iops, s) / 4, nd) * boost
    rkb = r * rng.uniform(14, 18, nd)
    wkb = w * rng.uniform(24, 40, nd)
    rrqm = r * rng.uniform(0, 0.05, nd)
    wrqm = w * rng.uniform(0.1, 0.4, nd)
    r_await = rng.gamma(3, lerp(shape.r_await, s) / 3, nd)
    w_await = rng.gamma(3, lerp(shape.w_await, s) / 3, nd)
    f = w * 0.08
    f_await = rng.gamma(2, (0.3 + 30 * s) / 2, nd)
    aqu = (r * r_await + w * w_await) / 1000
    util = np.clip(rng.normal(lerp(shape.util, s), 4, nd), 0, 100)
    lines = [f"{iso}\n", IOSTAT_HEAD]
    for i, dev in enumerate(devs):
        vals = (
            r[i],
            rkb[i],
            rrqm[i],
            100 * rrqm[i] / max(r[i] + rrqm[i], 1e-9),
            r_await[i],
            rkb[i] / max(r[i], 1e-9) if r[i] else 0.0,
            w[i],
            wkb[i],
            wrqm[i],
            100 * wrqm[i] / max(w[i] + wrqm[i], 1e-9),
            w_await[i],
            wkb[i] / max(w[i], 1e-9) if w[i] else 0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            f[i],
            f_await[i],
            aqu[i],
            util[i],
        )
        lines.append(IOSTAT_FMT % (dev, *vals))
    return "".join(lines) + "\n\n"


def advance_status(
    status: dict[str, float | int | str],
    s: Sessions,
    stress: float,
    rng: np.random.Generator,
    k: int,
    shape: Shape = SHAPES_DEFAULT,
    scale: float = 1.0,
    dt: int = 1,
) -> None:
    """The status counters at second ``k``, ``dt`` s after the last table."""
    throughput = 1 - shape.throughput_drop * stress  # the stall halves what the server gets done
    boost = dict(shape.status_boost)
    for name, rate in STATUS_RATES.items():
        grow = 1 + (boost.get(name, 1.0) - 1) * stress
        status[name] = float(status[name]) + float(rng.poisson(rate * scale * throughput * grow * dt))
    status["Uptime"] = UPTIME_AT_START_S + k
    status["Uptime_since_flush_status"] = UPTIME_AT_START_S + k
    status["Threads_connected"] = len(s.ids) + 1
    status["Threads_running"] = int(s.active.sum()) + 1
    status["Threads_cached"] = 12
    status["Innodb_buffer_pool_pages_dirty"] = int(rng.normal(310_000 + 600_000 * stress, 8_000))
    status["Innodb_checkpoint_age"] = int(rng.normal(300e6 + 400e6 * stress, 10e6))
    status["Innodb_history_list_length"] = int(rng.normal(2_000 + 40_000 * stress, 300))
    row_lock_waits = 30 * stress if shape.name == "io-stall" else 0.0  # the stall holds row locks
    status["Innodb_row_lock_current_waits"] = int(rng.poisson(1 + row_lock_waits))
    status["Innodb_data_pending_fsyncs"] = int(rng.poisson(0.2 + 20 * stress))
    status["Memory_used"] = int(rng.normal(2.1e9, 5e6))


def meminfo_text(rng: np.random.Generator) -> str:
    """A ``/proc/meminfo`` of the simulated server (``MEM_TOTAL_KIB`` of RAM)."""
    kb = {
        "MemTotal": MEM_TOTAL_KIB,
        "MemFree": 18_500_000,
        "MemAvailable": 96_000_000,
        "Buffers": 412_000,
        "Cached": 96_000_000,
        "SwapCached": 0,
        "Active": 401_000_000,
        "Inactive": 92_000_000,
        "Active(anon)": 398_000_000,
        "Inactive(anon)": 1_200_000,
        "Active(file)": 3_000_000,
        "Inactive(file)": 90_800_000,
        "Unevictable": 0,
        "Mlocked": 0,
        "SwapTotal": 0,
        "SwapFree": 0,
        "Dirty": 210_000,
        "Writeback": 0,
        "AnonPages": 399_000_000,
        "Mapped": 410_000,
        "Shmem": 21_000,
        "KReclaimable": 3_900_000,
        "Slab": 6_100_000,
        "SReclaimable": 3_900_000,
        "SUnreclaim": 2_200_000,
        "KernelStack": 41_000,
        "PageTables": 860_000,
        "CommitLimit": MEM_TOTAL_KIB // 2,
        "Committed_AS": 420_000_000,
        "VmallocTotal": 34_359_738_367,
        "VmallocUsed": 410_000,
        "VmallocChunk": 0,
        "Percpu": 98_304,
        "AnonHugePages": 0,
    }
    lines = [f"{name + ':':<16}{value:>8} kB\n" for name, value in kb.items()]
    lines += [
        f"{name + ':':<16}{0:>8}\n"
        for name in ("HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp")
    ]
    lines.append(f"{'Hugepagesize:':<16}{2048:>8} kB\n")
    return "".join(lines)
