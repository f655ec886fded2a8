"""Write a large, realistic Casebook collector bundle (.tar.gz) for the ingest benchmark (issue 4).

The bundle has the layout ``scripts/collect.sh`` writes (one directory
``casebook-<host>-<YYYYmmddTHHMMSS>/`` holding ``manifest.txt``, ``vmstat.txt``, ``mpstat.txt``,
``mpstat-intr.txt``, ``iostat.txt``, ``ps-threads.txt``, ``interrupts.txt``, ``processlist.txt``,
``mysqladmin.txt``, ``variables.txt``, ``meminfo.txt``) and the exact line shapes the real tools print
(copied from a run of collect.sh on this machine: procps-ng 4.0.2, sysstat 12.6.1, MariaDB 10.11.19,
Linux 6.18; see tests/fixtures/<format>/):

=================  ==========================================================================
vmstat.txt         ``vmstat -t -n 1 N+1``: one header, first line since boot, per-line date+time
mpstat.txt         ``mpstat -P ALL 1 N`` (S_TIME_FORMAT=ISO): banner, blocks of all + CPUs, Average
mpstat-intr.txt    ``mpstat -I SUM -P ALL 1 N``: same shape, ``intr/s``
iostat.txt         ``iostat -dxk -t 1 N+1``: ISO time per report, sysstat 12 extended columns
ps-threads.txt     ``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32`` after a TS line each second
interrupts.txt     ``cat /proc/interrupts`` after a TS line each second (x86 rows, named rows)
processlist.txt    ``SHOW FULL PROCESSLIST\\G`` after a TS line each second (MariaDB columns)
mysqladmin.txt     ``mysqladmin extended-status`` after a TS line each second (562 MariaDB rows)
=================  ==========================================================================

Defaults match the target of DESIGN.md ("Targets"): 60 minutes at 1 s, 64 CPUs, 2,000 threads per ps
snapshot, 1,000 sessions per processlist snapshot, 8 disks, 60 numbered IRQ lines (plus the named
x86 rows NMI, LOC, RES... the kernel always prints). Values vary plausibly (NumPy, fixed seed: the
same arguments give the same tar content) around a steady OLTP load with one I/O stall between 60 % and
70 % of the run (iowait, D-state threads in ``io_schedule``, long ``Commit``/``Sending data``
queries), so that the rules have something to find. Session ids map to thread ids consistently
across ps and processlist.

``--host`` picks a host size (2, 16 or 64 CPUs with tens, hundreds or a thousand sessions) and
``--shape`` the load inside the load window (``--incident``): ``healthy`` (no load: about one
statement per core), ``cpu-bound``, ``io-bound``, ``tmp-tables`` (seed 000), ``commit`` (seed 001),
or ``io-stall`` (the default above). See ``Shape`` and ``SHAPES`` (bench/gen/model.py).

Streaming: every member is written line block by line block to a file in a scratch directory next
to the output, then streamed into the gzip'd tar (``tar`` needs each member's size before its
bytes) and deleted; no member is ever held in memory whole.

Usage::

    .venv/bin/python bench/generate_bundle.py [--minutes 60] [--out /tmp/casebook-bench-60m.tar.gz]

Prints the compressed size, the uncompressed size (text bytes and lines, and the tar stream) and the
time it took. Keep the output under /tmp: never write generated bundles inside the project.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.gen.formats import MPSTAT_FMT, MPSTAT_HEAD, MPSTAT_INTR_HEAD, VMSTAT_HEAD  # noqa: E402
from bench.gen.host import (  # noqa: E402
    advance_status,
    cpu_split,
    interrupts_block,
    iostat_report,
    meminfo_text,
    mysqladmin_block,
    new_irqs,
    vmstat_row,
)
from bench.gen.model import (  # noqa: E402
    HOST,
    HOSTS,
    INCIDENT,
    KERNEL,
    SHAPES,
    WRITE_BUFFER_BYTES,
    Member,
    Spec,
    hms,
    lerp,
    stress_curve,
    ts_line,
)
from bench.gen.pack import finish_manifest, pack, write_manifest  # noqa: E402
from bench.gen.server_data import (  # noqa: E402
    STATUS_NAMES,
    STATUS_NUMBERS,
    STATUS_RATES,
    STATUS_TEXT,
    UPTIME_AT_START_S,
    VARIABLES,
)
from bench.gen.sessions import new_sessions, new_threads, processlist_block, ps_block, step_sessions  # noqa: E402


# ---------------------------------------------------------------------------------------------
# The whole capture
# ---------------------------------------------------------------------------------------------
def generate(spec: Spec, out: Path, *, quiet: bool = False) -> dict[str, object]:
    """Write the bundle to ``out`` (a .tar.gz); returns sizes and timings (bytes, lines, seconds)."""
    t_begin = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    n = spec.samples
    shape = spec.load
    stress = stress_curve(n + 1, spec.incident) if shape.name != "healthy" else np.zeros(n + 1)
    # Status counter rates were measured on a 64-CPU server: a smaller host does proportionally less.
    rate_scale = spec.cpus / 64
    t0 = spec.start.timestamp()
    stamp = spec.start.strftime("%Y%m%dT%H%M%S")
    top = f"casebook-{HOST}-{stamp}"
    scratch = Path(tempfile.mkdtemp(prefix=".casebook-bench-", dir=out.parent))
    members: dict[str, Member] = {}

    def open_member(name: str) -> Member:
        path = scratch / name
        m = Member(f"{top}/{name}", path, path.open("w", encoding="utf-8", buffering=WRITE_BUFFER_BYTES))
        members[name] = m
        return m

    try:
        manifest = open_member("manifest.txt")
        vm = open_member("vmstat.txt")
        mp = open_member("mpstat.txt")
        mpi = open_member("mpstat-intr.txt")
        io_ = open_member("iostat.txt")
        meminfo = open_member("meminfo.txt")
        variables = open_member("variables.txt")
        ps = open_member("ps-threads.txt")
        intr = open_member("interrupts.txt")
        pl = open_member("processlist.txt")
        ma = open_member("mysqladmin.txt")

        write_manifest(manifest, spec, t0)
        banner = f"Linux {KERNEL} ({HOST}) \t{spec.start:%Y-%m-%d} \t_x86_64_\t({spec.cpus} CPU)\n\n"
        vm.write(ts_line(t0 + 0.012) + VMSTAT_HEAD)
        mp.write(ts_line(t0 + 0.011) + banner)
        mpi.write(ts_line(t0 + 0.010) + banner)
        io_.write(ts_line(t0 + 0.013) + banner)
        meminfo.write(ts_line(t0 + 0.02) + meminfo_text(rng))
        variables.write(ts_line(t0 + 0.03) + "Variable_name\tValue\n")
        variables.write("".join(f"{k}\t{v}\n" for k, v in sorted(VARIABLES.items())))

        sessions = new_sessions(spec, rng)
        threads = new_threads(spec, rng)
        irqs = new_irqs(spec, rng)
        status: dict[str, float | int | str] = dict.fromkeys(STATUS_NAMES, 0)
        status.update(STATUS_NUMBERS)
        status.update(STATUS_TEXT)
        for name, rate in STATUS_RATES.items():
            status[name] = float(int(rate * UPTIME_AT_START_S * rng.uniform(0.7, 1.0)))
        mp_sum = np.zeros((spec.cpus + 1, 10))
        mpi_sum = np.zeros(spec.cpus + 1)
        dev_names = [f"nvme{d}n1" for d in range(spec.disks)]
        free_kib = 18_500_000.0
        last_report = time.perf_counter()

        dt = spec.interval
        for k in range(n + 1):
            s = float(stress[k])
            t = t0 + k * dt
            # vmstat / iostat: N+1 reports, the first since boot (averages since boot, small).
            vm.write(vmstat_row(k, s, spec, rng, free_kib, t))
            free_kib = max(2_000_000.0, free_kib + rng.normal(0, 20_000) - 30_000 * s)
            io_.write(iostat_report(k, s, dev_names, rng, t, shape))
            if k == n:
                break
            # mpstat: interval k ends at t0 + k + 1.
            head_t, row_t = hms(t), hms(t + dt)
            cpu = cpu_split(spec.cpus, s, rng, shape)
            allrow = np.round(cpu.mean(axis=0), 2)
            allrow[9] = round(100 - allrow[:9].sum(), 2)
            block = np.vstack([allrow, cpu])
            mp_sum += block
            lines = [f"{head_t:<11}{MPSTAT_HEAD}"]
            names = ["all", *map(str, range(spec.cpus))]
            lines.extend(
                MPSTAT_FMT % (row_t, name, *vals) for name, vals in zip(names, block.tolist(), strict=True)
            )
            mp.write("".join(lines) + "\n")
            intr_cpu = np.round(
                rng.gamma(8, lerp(shape.mpstat_intr_per_cpu, s) / 8, spec.cpus), 2
            )  # per second
            intr_all = np.concatenate([[round(intr_cpu.sum(), 2)], intr_cpu])
            mpi_sum += intr_all
            mpi.write(
                f"{head_t:<11}{MPSTAT_INTR_HEAD}"
                + "".join(
                    f"{row_t:<11} {name:>4} {v:9.2f}\n"
                    for name, v in zip(names, intr_all.tolist(), strict=True)
                )
                + "\n"
            )
            # Snapshot loop: ps, interrupts, processlist, mysqladmin, each after its TS line.
            step_sessions(sessions, k * dt, s, rng, shape, spec.cpus, dt)
            loop = t + 0.004 + float(rng.uniform(0, 0.03))
            ps.write(ts_line(loop) + ps_block(threads, sessions, rng, s, shape.d_wchans))
            intr.write(ts_line(loop + 0.045) + interrupts_block(irqs, spec.cpus, s, rng, shape, dt))
            pl.write(ts_line(loop + 0.052) + processlist_block(sessions, k * dt))
            advance_status(status, sessions, s, rng, k * dt, shape, rate_scale, dt)
            ma.write(ts_line(loop + 0.061) + mysqladmin_block(status))
            if not quiet and time.perf_counter() - last_report > 10:
                last_report = time.perf_counter()
                print(f"  ... {k + 1}/{n} s of capture written", file=sys.stderr)

        # mpstat Average blocks.
        avg = np.round(mp_sum / n, 2)
        names = ["all", *map(str, range(spec.cpus))]
        mp.write(f"{'Average:':<11}{MPSTAT_HEAD}")
        mp.write(
            "".join(MPSTAT_FMT % ("Average:", nm, *v) for nm, v in zip(names, avg.tolist(), strict=True))
        )
        mpi.write(f"{'Average:':<11}{MPSTAT_INTR_HEAD}")
        mpi.write(
            "".join(
                f"{'Average:':<11} {nm:>4} {v:9.2f}\n"
                for nm, v in zip(names, (mpi_sum / n).tolist(), strict=True)
            )
        )
        finish_manifest(manifest, spec, t0, n)
        for m in members.values():
            m.fh.close()
        t_written = time.perf_counter()
        sizes = {m.name: {"bytes": m.path.stat().st_size, "lines": m.lines} for m in members.values()}
        text_bytes = sum(v["bytes"] for v in sizes.values())
        text_lines = sum(m.lines for m in members.values())
        tar_bytes = pack(out, top, members, spec, t0)
    finally:
        for m in members.values():
            if not m.fh.closed:
                m.fh.close()
        shutil.rmtree(scratch, ignore_errors=True)
    t_end = time.perf_counter()
    return {
        "path": str(out),
        "minutes": spec.minutes,
        "samples": n,
        "compressed_bytes": out.stat().st_size,
        "text_bytes": text_bytes,
        "text_lines": text_lines,
        "tar_bytes": tar_bytes,
        "members": sizes,
        "write_s": round(t_written - t_begin, 1),
        "pack_s": round(t_end - t_written, 1),
    }


#: OSWatcher's tools in an archive (``archive/osw<tool>/<host>_<tool>_YY.MM.DD.HH00.dat``, a file an hour).
OSW_TOOLS = ("vmstat", "mpstat", "iostat", "ps", "meminfo")
#: ``vmstat 1 3`` as OSWatcher runs it: no timestamp columns (the zzz line dates the block).
OSW_VMSTAT_HEAD = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
)


def _zzz(t: float) -> str:
    """OSWatcher's snapshot marker (``date`` of a server on UTC)."""
    return datetime.fromtimestamp(int(t), UTC).strftime("zzz ***%a %b %d %H:%M:%S UTC %Y\n")


def generate_oswatcher(spec: Spec, out: Path, *, quiet: bool = False) -> dict[str, object]:
    """Write an OSWatcher (oswbb) archive to ``out`` (a .tar.gz): every ``spec.interval`` s a ``zzz``
    marker then ``vmstat 1 3`` (first line since boot), ``mpstat -P ALL`` (one report), ``iostat -xk -t``
    (one report), the thread listing and /proc/meminfo, one file per tool and hour, as OSWatcher's
    archive keeps them (48 hourly files of each tool by default). The thread listing has the
    collector's ``ps -eLo ...wchan`` columns (OSWatcher itself runs ``ps -elf``: a process per row)."""
    t_begin = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    n = spec.samples
    stress = stress_curve(n)
    t0 = spec.start.timestamp()
    scratch = Path(tempfile.mkdtemp(prefix=".casebook-bench-", dir=out.parent))
    members: dict[str, Member] = {}
    hour_files: dict[str, Member] = {}
    sessions = new_sessions(spec, rng)
    threads = new_threads(spec, rng)
    dev_names = [f"nvme{d}n1" for d in range(spec.disks)]
    banner = f"Linux {KERNEL} ({HOST}) \t{spec.start:%Y-%m-%d} \t_x86_64_\t({spec.cpus} CPU)\n\n"
    free_kib = 18_500_000.0
    dt = spec.interval
    try:
        for k in range(n):
            s = float(stress[k])
            t = t0 + k * dt
            hour = datetime.fromtimestamp(int(t), UTC).strftime("%y.%m.%d.%H00")
            for tool in OSW_TOOLS:
                name = f"osw{tool}/{HOST}_{tool}_{hour}.dat"
                if name not in members:
                    if tool in hour_files:
                        hour_files[tool].fh.close()
                    path = scratch / name.replace("/", "_")
                    m = Member(
                        f"archive/{name}",
                        path,
                        path.open("w", encoding="utf-8", buffering=WRITE_BUFFER_BYTES),
                    )
                    members[name] = hour_files[tool] = m
            step_sessions(sessions, k * dt, s, rng, dt=dt)
            zzz = _zzz(t)
            rows = [
                vmstat_row(0 if j == 0 else k * 3 + j, s, spec, rng, free_kib, t + j)[:-21] + "\n"
                for j in range(3)
            ]
            hour_files["vmstat"].write(zzz + OSW_VMSTAT_HEAD + "".join(rows))
            free_kib = max(2_000_000.0, free_kib + rng.normal(0, 20_000) - 30_000 * s)
            cpu = cpu_split(spec.cpus, s, rng)
            allrow = np.round(cpu.mean(axis=0), 2)
            allrow[9] = round(100 - allrow[:9].sum(), 2)
            names = ["all", *map(str, range(spec.cpus))]
            head_t, row_t = hms(t), hms(t + 1)
            block = [f"{head_t:<11}{MPSTAT_HEAD}"] + [
                MPSTAT_FMT % (row_t, nm, *vals)
                for nm, vals in zip(names, np.vstack([allrow, cpu]).tolist(), strict=True)
            ]
            hour_files["mpstat"].write(zzz + banner + "".join(block) + "\n")
            hour_files["iostat"].write(zzz + banner + iostat_report(k + 1, s, dev_names, rng, t + 1))
            hour_files["ps"].write(zzz + ps_block(threads, sessions, rng, s))
            hour_files["meminfo"].write(zzz + meminfo_text(rng))
            if not quiet and k % 500 == 0:
                print(f"  ... {k + 1}/{n} snapshots written", file=sys.stderr)
        for m in members.values():
            m.fh.close()
        t_written = time.perf_counter()
        text_bytes = sum(m.path.stat().st_size for m in members.values())
        text_lines = sum(m.lines for m in members.values())
        tar_bytes = pack(out, "archive", members, spec, t0)
    finally:
        for m in members.values():
            if not m.fh.closed:
                m.fh.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "path": str(out),
        "samples": n,
        "files": len(members),
        "compressed_bytes": out.stat().st_size,
        "text_bytes": text_bytes,
        "text_lines": text_lines,
        "tar_bytes": tar_bytes,
        "write_s": round(t_written - t_begin, 1),
        "pack_s": round(time.perf_counter() - t_written, 1),
    }


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--minutes", type=float, default=60, help="capture length (default 60)")
    p.add_argument("--interval", type=int, default=1, help="seconds between samples (default 1)")
    p.add_argument(
        "--cpus", type=int, default=64, help="CPUs (mpstat rows, /proc/interrupts columns; default 64)"
    )
    p.add_argument("--threads", type=int, default=2000, help="threads per ps snapshot (default 2000)")
    p.add_argument(
        "--sessions", type=int, default=1000, help="application sessions per processlist (default 1000)"
    )
    p.add_argument("--disks", type=int, default=8, help="iostat devices (default 8)")
    p.add_argument("--irqs", type=int, default=60, help="numbered IRQ lines in /proc/interrupts (default 60)")
    p.add_argument(
        "--host",
        choices=sorted(HOSTS),
        help="host size preset: small (2 CPUs, 40 sessions), medium (16, 300), large (64, 1000), "
        "wide (64 CPUs, 2,000 threads, 1,000 sessions, 200 IRQ lines: 2.2 GB an hour, issue 42); "
        "sets --cpus --threads --sessions --disks --irqs",
    )
    p.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        default="io-stall",
        help="load shape inside the load window (default io-stall; healthy: no load at all)",
    )
    p.add_argument(
        "--incident",
        type=float,
        nargs=2,
        metavar=("START", "END"),
        default=INCIDENT,
        help="the load window as fractions of the run (default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=20260421)
    p.add_argument("--start", default="2026-04-21T14:00:00", help="capture start, UTC (default %(default)s)")
    p.add_argument("--out", type=Path, help="output .tar.gz (default /tmp/casebook-bench-<minutes>m.tar.gz)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument(
        "--layout",
        choices=("collector", "oswatcher"),
        default="collector",
        help="collector bundle (default), or an OSWatcher archive of hourly files (vmstat, mpstat, iostat, "
        "ps, meminfo; use with --interval 30, OSWatcher's default)",
    )
    args = p.parse_args(argv)
    if args.host:
        args.cpus, args.threads, args.sessions, args.disks, args.irqs = HOSTS[args.host]
    if args.sessions + 60 > args.threads:
        p.error("--threads must exceed --sessions by at least 60 (kernel threads, daemons, mariadbd helpers)")
    minutes = args.minutes
    out = args.out or Path(f"/tmp/casebook-bench-{minutes:g}m.tar.gz")
    out = out.resolve()
    project = Path(__file__).resolve().parent.parent
    if out.is_relative_to(project):
        p.error(f"write generated bundles outside the project ({project}), e.g. under /tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    start = datetime.fromisoformat(args.start).replace(tzinfo=UTC)
    if args.interval < 1:
        p.error("--interval must be 1 s or more")
    spec = Spec(
        minutes,
        args.cpus,
        args.threads,
        args.sessions,
        args.disks,
        args.irqs,
        args.seed,
        start,
        shape=args.shape,
        incident=tuple(args.incident),
        interval=args.interval,
    )
    if args.layout == "oswatcher":
        info = generate_oswatcher(spec, out, quiet=args.quiet)
        print(f"archive       {out}")
        print(
            f"capture       {spec.samples} snapshots at {spec.interval} s in {info['files']} hourly files, "
            f"{spec.cpus} CPUs, {spec.threads} threads, {spec.disks} disks"
        )
        print(f"compressed    {info['compressed_bytes']:,} bytes ({_human(info['compressed_bytes'])})")
        print(
            f"uncompressed  {info['text_bytes']:,} bytes of text in {info['text_lines']:,} lines "
            f"({_human(info['text_bytes'])})"
        )
        print(f"took          {info['write_s']} s to write the files, {info['pack_s']} s to pack them")
        return 0
    info = generate(spec, out, quiet=args.quiet)
    print(f"bundle        {out}")
    print(
        f"capture       {spec.samples} samples at {spec.interval} s, {spec.cpus} CPUs, {spec.threads} "
        "threads, "
        f"{spec.sessions} sessions, {spec.disks} disks, {spec.irqs} IRQ lines; shape {spec.shape}"
    )
    print(f"compressed    {info['compressed_bytes']:,} bytes ({_human(info['compressed_bytes'])})")
    print(
        f"uncompressed  {info['text_bytes']:,} bytes of text in {info['text_lines']:,} lines "
        f"({_human(info['text_bytes'])}); tar stream {info['tar_bytes']:,} bytes"
    )
    print(f"took          {info['write_s']} s to write the members, {info['pack_s']} s to pack them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
