"""Real-shaped capture text for rule tests, written in the exact layouts the tools print.

vmstat rows follow procps-ng ``vmstat 1`` (pt-stalk -vmstat); processlist snapshots follow pt-stalk's
-processlist (``TS <epoch.ns> <wall>`` then ``SHOW FULL PROCESSLIST\\G``). The numbers are the
scenario's; the layout is the tool's.
"""

from __future__ import annotations

import pandas as pd

from analyzer.timeline.timeline import Timeline
from parsers import processlist, vmstat
from parsers.base import ClockHints

VMSTAT_HEADER = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
)
START = pd.Timestamp("2026-04-21 16:51:41")
EPOCH0 = 1776790301  # 2026-04-21 16:51:41 UTC


def vmstat_text(rows: list[tuple[int, int, int, int, int, int]]) -> str:
    """rows of (r, b, us, sy, id, wa); the first row is vmstat's since-boot line."""
    lines = [VMSTAT_HEADER.rstrip("\n").split("\n")[0], VMSTAT_HEADER.rstrip("\n").split("\n")[1]]
    for r, b, us, sy, idle, wa in rows:
        lines.append(
            f"{r:2d} {b:2d}      0 104588800 10433708 236728672    0    0     5    93 4271 8537 {us:2d} "
            f"{sy:2d} {idle:2d} {wa:2d}  0"
        )
    return "\n".join(lines) + "\n"


def processlist_text(snapshots: list[list[tuple[str, str, int, str, str]]]) -> str:
    """snapshots of sessions (user, command, time_s, state, info); one TS block per snapshot, 1 s apart."""
    out: list[str] = []
    for i, sessions in enumerate(snapshots):
        out.append(f"TS {EPOCH0 + 2 + i}.009325313 {(START + pd.Timedelta(seconds=2 + i)):%Y-%m-%d %H:%M:%S}")
        for n, (user, command, time_s, state, info) in enumerate(sessions, start=1):
            out += [
                f"*************************** {n}. row ***************************",
                f"     Id: {1000 + n}",
                f"   User: {user}",
                "   Host: app1:50928" if user != "event_scheduler" else "   Host: localhost",
                "     db: shop",
                f"Command: {command}",
                f"   Time: {time_s}",
                f"  State: {state}",
                f"   Info: {info}",
            ]
    return "\n".join(out) + "\n"


def timeline(*, vm: str | None = None, pl: str | None = None, ncpu: int | None = 4) -> Timeline:
    """Parse the texts with the real parsers and align them as the ingest does (server clock = UTC)."""
    hints = ClockHints(start_local=START, interval_s=1.0)
    sources = []
    if vm is not None:
        src = vmstat.parse(vm.splitlines(keepends=True), member="2026_04_21_16_51_41-vmstat", clock=hints)
        if src.ts_is_local:
            src.shift(0)
        sources.append(src)
    if pl is not None:
        sources.append(
            processlist.parse(
                pl.splitlines(keepends=True), member="2026_04_21_16_51_41-processlist", clock=hints
            )
        )
    return Timeline.from_sources(sources, ncpu=ncpu)


# =============================================================================================
# OS captures (cpu, memory, io, irq rules): vmstat with every column, mpstat, iostat -dx and
# /proc/interrupts, in the layouts of procps-ng 4.0 / sysstat 12.6 / Linux 6.x. Only appended to;
# the functions above are shared with the MySQL rule tests.


# =============================================================================================

VMSTAT_DEFAULTS = {
    "r": 1,
    "b": 0,
    "swpd": 0,
    "free": 104588800,
    "buff": 10433708,
    "cache": 236728672,
    "si": 0,
    "so": 0,
    "bi": 5,
    "bo": 93,
    "in": 4271,
    "cs": 8537,
    "us": 2,
    "sy": 1,
    "id": 97,
    "wa": 0,
    "st": 0,
}
VMSTAT_COLUMNS = tuple(VMSTAT_DEFAULTS)


def vmstat_rows_text(rows: list[dict[str, int]]) -> str:
    """``vmstat 1`` text from rows of {column: value} (missing columns take VMSTAT_DEFAULTS; memory
    in KiB); the first row is vmstat's since-boot line."""
    lines = VMSTAT_HEADER.rstrip("\n").split("\n")
    for row in rows:
        v = {**VMSTAT_DEFAULTS, **row}
        lines.append(
            f"{v['r']:2d} {v['b']:2d} {v['swpd']:6d} {v['free']:6d} {v['buff']:6d} {v['cache']:6d} "
            f"{v['si']:4d} {v['so']:4d} {v['bi']:5d} {v['bo']:5d} {v['in']:4d} {v['cs']:4d} "
            f"{v['us']:2d} {v['sy']:2d} {v['id']:2d} {v['wa']:2d} {v['st']:2d}"
        )
    return "\n".join(lines) + "\n"


def sysstat_banner(ncpu: int, *, host: str = "db1", kernel: str = "5.14.0-611.el9.x86_64") -> str:
    """The sysstat first line, dated START's day (``MM/DD/YY`` as sysstat 12 prints it)."""
    return f"Linux {kernel} ({host}) \t{START:%m/%d/%y} \t_x86_64_\t({ncpu} CPU)"


MPSTAT_CPU_HEADER = "CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle"


def mpstat_cpu_text(samples: list[dict[int, tuple[float, ...]]], *, ncpu: int) -> str:
    """``mpstat -P ALL 1`` text. Each sample maps cpu -> (usr, sys, iowait, irq, soft, steal); CPUs
    left out are 100 % idle; idle is what remains; the ``all`` row is the mean. Sample i is stamped
    START + 1 + i s (the report after vmstat's since-boot line at START)."""
    out = [sysstat_banner(ncpu), ""]
    for i, sample in enumerate(samples):
        t = START + pd.Timedelta(seconds=1 + i)
        rows = []
        for cpu in range(ncpu):
            usr, sys_, iowait, irq, soft, steal = sample.get(cpu, (0.0,) * 6)
            rows.append((usr, 0.0, sys_, iowait, irq, soft, steal, 0.0, 0.0))
        cols = list(zip(*rows, strict=True))
        means = [sum(c) / ncpu for c in cols]
        out.append(f"{t - pd.Timedelta(seconds=1):%H:%M:%S}     {MPSTAT_CPU_HEADER}")
        for name, vals in [("all", means)] + [(str(c), list(r)) for c, r in enumerate(rows)]:
            idle = max(0.0, 100.0 - sum(vals))
            out.append(f"{t:%H:%M:%S}     {name:>3}" + "".join(f"{x:8.2f}" for x in vals) + f"{idle:8.2f}")
        out.append("")
    return "\n".join(out) + "\n"


def mpstat_intr_text(samples: list[list[float]]) -> str:
    """``mpstat -I SUM -P ALL 1`` text: each sample is intr/s per CPU (0..n-1); ``all`` is the sum.
    Sample i is stamped START + 1 + i s."""
    ncpu = len(samples[0])
    out = [sysstat_banner(ncpu), ""]
    for i, per_cpu in enumerate(samples):
        t = START + pd.Timedelta(seconds=1 + i)
        out.append(f"{t - pd.Timedelta(seconds=1):%H:%M:%S}     CPU    intr/s")
        out.append(f"{t:%H:%M:%S}     all {sum(per_cpu):9.2f}")
        out += [f"{t:%H:%M:%S}     {c:>3} {v:9.2f}" for c, v in enumerate(per_cpu)]
        out.append("")
    return "\n".join(out) + "\n"


IOSTAT_DX_HEADER = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm "
    "w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util"
)


def iostat_dx_text(reports: list[dict[str, dict[str, float]]], *, ncpu: int = 4) -> str:
    """``iostat -dx 1`` text (sysstat 12.6, no times: the ingest infers START + i s). Each report maps
    device -> {r_s, rkB_s, r_await, w_s, wkB_s, w_await, aqu_sz, util} (others 0); the first report
    is iostat's since-boot one."""
    out = [sysstat_banner(ncpu), ""]
    for report in reports:
        out.append(IOSTAT_DX_HEADER)
        for dev, v in report.items():
            r_s, rkb, w_s, wkb = (
                v.get("r_s", 0.0),
                v.get("rkB_s", 0.0),
                v.get("w_s", 0.0),
                v.get("wkB_s", 0.0),
            )
            rsz = rkb / r_s if r_s else 0.0
            wsz = wkb / w_s if w_s else 0.0
            fields = [
                r_s,
                rkb,
                0.0,
                0.0,
                v.get("r_await", 0.0),
                rsz,
                w_s,
                wkb,
                0.0,
                0.0,
                v.get("w_await", 0.0),
                wsz,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                v.get("aqu_sz", 0.0),
                v.get("util", 0.0),
            ]
            out.append(f"{dev:<12}" + "".join(f"{x:9.2f}" for x in fields))
        out += ["", ""]
    return "\n".join(out) + "\n"


#: /proc/interrupts description columns of the named (architecture) lines, Linux 6.x x86.
IRQ_NAMES = {
    "NMI": "Non-maskable interrupts",
    "LOC": "Local timer interrupts",
    "RES": "Rescheduling interrupts",
    "CAL": "Function call interrupts",
    "TLB": "TLB shootdowns",
    "IWI": "IRQ work interrupts",
}


def interrupts_text(snapshots: list[dict[str, list[int]]]) -> str:
    """``cat /proc/interrupts`` snapshots, each after a pt-stalk ``TS`` line, snapshot k at START + 1 + k s.

    Each snapshot maps irq -> counts per CPU; numeric IRQs get a PCI-MSI chip and a ``eth0-TxRx-<n>``
    device, named ones their kernel description.
    """
    out: list[str] = []
    for k, snap in enumerate(snapshots):
        t = START + pd.Timedelta(seconds=1 + k)
        out.append(f"TS {EPOCH0 + 1 + k}.000000000 {t:%Y-%m-%d %H:%M:%S}")
        ncpu = len(next(iter(snap.values())))
        out.append("     " + "".join(f"  CPU{c:<7}" for c in range(ncpu)).rstrip())
        for irq, counts in snap.items():
            cells = "".join(f" {n:10d}" for n in counts)
            if irq.isdigit():
                out.append(f"{irq:>4}:{cells}  PCI-MSI 524288{irq}-edge      eth0-TxRx-{irq}")
            else:
                out.append(f"{irq}:{cells}   {IRQ_NAMES.get(irq, irq)}")
    return "\n".join(out) + "\n"


MEMBERS = {
    "vmstat": "2026_04_21_16_51_41-vmstat",
    "mpstat": "2026_04_21_16_51_41-mpstat",
    "mpstat_intr": "mpstat-I-SUM-P-ALL.txt",
    "iostat": "2026_04_21_16_51_41-iostat",
    "interrupts": "2026_04_21_16_51_41-interrupts",
}


def os_timeline(
    *,
    vm: str | None = None,
    mpstat_texts: tuple[str, ...] = (),
    iostat_text: str | None = None,
    interrupts: str | None = None,
    ncpu: int | None = 4,
) -> Timeline:
    """Parse OS capture texts with the real parsers (interrupts: parsers/interrupts.py when present)
    and align them as the ingest does (server clock = UTC)."""
    from parsers import interrupts as interrupts_parser
    from parsers import iostat as iostat_parser
    from parsers import mpstat as mpstat_parser
    from parsers.base import ParsedSource

    hints = ClockHints(start_local=START, interval_s=1.0)
    sources: list[ParsedSource] = []
    if vm is not None:
        sources.append(vmstat.parse(vm.splitlines(keepends=True), member=MEMBERS["vmstat"], clock=hints))
    for i, text in enumerate(mpstat_texts):
        member = MEMBERS["mpstat"] if i == 0 else MEMBERS["mpstat_intr"]
        sources.append(mpstat_parser.parse(text.splitlines(keepends=True), member=member, clock=hints))
    if iostat_text is not None:
        sources.append(
            iostat_parser.parse(iostat_text.splitlines(keepends=True), member=MEMBERS["iostat"], clock=hints)
        )
    if interrupts is not None:
        sources.append(
            interrupts_parser.parse(
                interrupts.splitlines(keepends=True), member=MEMBERS["interrupts"], clock=hints
            )
        )
    for src in sources:
        if src.ts_is_local:
            src.shift(0)
    return Timeline.from_sources(sources, ncpu=ncpu)


def idle_timeline() -> Timeline:
    """The real idle capture of tests/fixtures/idle (see its README), parsed and aligned like a bundle."""
    from pathlib import Path

    from parsers import interrupts as interrupts_parser
    from parsers import iostat as iostat_parser
    from parsers import mpstat as mpstat_parser

    idle_dir = Path(__file__).resolve().parent.parent / "fixtures" / "idle"
    start = pd.Timestamp((idle_dir / "start_utc.txt").read_text().strip())
    hints = ClockHints(start_local=start, interval_s=1.0, utc_offset_s=0)
    text = {name: (idle_dir / name).read_text() for name in IDLE_FILES}
    sources = [
        vmstat.parse(text["vmstat.txt"].splitlines(keepends=True), member="vmstat.txt", clock=hints),
        mpstat_parser.parse(
            text["mpstat_P-ALL.txt"].splitlines(keepends=True), member="mpstat_P-ALL.txt", clock=hints
        ),
        mpstat_parser.parse(
            text["mpstat_I-SUM_P-ALL.txt"].splitlines(keepends=True),
            member="mpstat_I-SUM_P-ALL.txt",
            clock=hints,
        ),
        iostat_parser.parse(
            text["iostat_dx.txt"].splitlines(keepends=True), member="iostat_dx.txt", clock=hints
        ),
    ]
    member = "proc-interrupts_3snap.txt"
    sources.append(
        interrupts_parser.parse(text[member].splitlines(keepends=True), member=member, clock=hints)
    )
    for src in sources:
        if src.ts_is_local:
            src.shift(0)
    ncpu = int(sources[1].meta["ncpu"])  # type: ignore[arg-type]
    return Timeline.from_sources(sources, ncpu=ncpu)


IDLE_FILES = (
    "vmstat.txt",
    "mpstat_P-ALL.txt",
    "mpstat_I-SUM_P-ALL.txt",
    "iostat_dx.txt",
    "proc-interrupts_3snap.txt",
)


# =============================================================================================
# MySQL and joined-source captures (mysql and joined rules, analyzer/evidence/threads.py,
# analyzer/grouping.py):
# ps -eLo with wchan (procps-ng 4.0), mysqladmin ext with TS lines (mysqladmin 10.0), the
# performance_schema.threads frame (pt-stalk -threads schema) and the real MariaDB loads of
# tests/fixtures/loads. Only appended to; the functions above are not changed.
# =============================================================================================

PS_ELO_HEADER = "  PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN"
MYSQLD_PID = 17043  # seed 000's mysqld (ppid column of its ps lines)
FIRST_MYSQLD_TID = 17100
LOADS_DIR = "loads"


def ps_elo_text(snapshots: list[list[tuple[int, str, str, str]]], *, first_s: int = 2) -> str:
    """``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32`` snapshots, each after a ``TS`` line at
    START + first_s + i s (the moments of ``processlist_text``'s snapshots, 0.3 s later, as two tools
    started in the same second). A snapshot lists (threads, STAT, COMMAND, WCHAN) kinds; ``-`` is no
    wchan. mysqld/mariadbd threads get TIDs FIRST_MYSQLD_TID, +1 ... in listing order, the same in
    every snapshot (what the performance_schema join needs); other commands are one process each."""
    out: list[str] = []
    for i, kinds in enumerate(snapshots):
        moment = START + pd.Timedelta(seconds=first_s + i)
        out.append(f"TS {EPOCH0 + first_s + i}.309325313 {moment:%Y-%m-%d %H:%M:%S}")
        out.append(PS_ELO_HEADER)
        tid = FIRST_MYSQLD_TID
        other_pid = 200
        for count, stat, comm, wchan in kinds:
            for _ in range(count):
                if comm in ("mysqld", "mariadbd"):
                    pid, this, user = MYSQLD_PID, tid, "mysql"
                    tid += 1
                else:
                    pid, this, user = other_pid, other_pid, "root"
                    other_pid += 1
                out.append(f"{pid:5d} {this:5d}     1 {user:<8s} {stat:<4s}  0.3 {comm:<15s} {wchan}")
    return "\n".join(out) + "\n"


MYSQLADMIN_BORDER = "+" + "-" * 50 + "+" + "-" * 50 + "+"


def mysqladmin_ext_text(
    tables: int, *, per_s: dict[str, float], gauges: dict[str, int] | None = None, first_s: int = 2
) -> str:
    """``mysqladmin ext`` tables, one per second after a ``TS`` line at START + first_s + i s: every
    counter in ``per_s`` grows by that many per second from 100000, ``gauges`` are constant, Uptime
    counts seconds (the layout of tests/fixtures/mysqladmin/*ts-markers*)."""
    out: list[str] = []
    for i in range(tables):
        moment = START + pd.Timedelta(seconds=first_s + i)
        values = {name: int(100000 + rate * i) for name, rate in per_s.items()}
        values.update(gauges or {})
        values["Uptime"] = 3000 + i
        out += [
            f"TS {EPOCH0 + first_s + i}.509325313 {moment:%Y-%m-%d %H:%M:%S}",
            MYSQLADMIN_BORDER,
            f"| {'Variable_name':<48} | {'Value':<48} |",
            MYSQLADMIN_BORDER,
        ]
        out += [f"| {name:<48} | {value:<48} |" for name, value in sorted(values.items())]
        out.append(MYSQLADMIN_BORDER)
    return "\n".join(out) + "\n"


def pfs_threads_frame(
    rows: list[tuple[int, int | None, str, str | None, str | None]], *, at_s: int = 2
) -> pd.DataFrame:
    """A ``pfs_threads`` frame (parsers/__init__.py schema; pt-stalk -threads is taken once, at START
    + at_s s) from rows of (THREAD_OS_ID, PROCESSLIST_ID, NAME, PROCESSLIST_STATE, PROCESSLIST_INFO)."""
    ts = pd.Timestamp(EPOCH0 + at_s, unit="s", tz="UTC")
    return pd.DataFrame(
        {
            "ts": pd.Series([ts] * len(rows), dtype="datetime64[ns, UTC]"),
            "line_no": pd.Series([2 + 25 * k for k in range(len(rows))], dtype="int64"),
            "thread_id": pd.Series(range(1, len(rows) + 1), dtype="int64"),
            "name": pd.Series([r[2] for r in rows], dtype="string"),
            "type": pd.Series(
                ["FOREGROUND" if r[1] is not None else "BACKGROUND" for r in rows], dtype="string"
            ),
            "processlist_id": pd.Series([r[1] for r in rows], dtype="Int64"),
            "processlist_user": pd.Series(
                ["app" if r[1] is not None else None for r in rows], dtype="string"
            ),
            "processlist_command": pd.Series(
                ["Query" if r[1] is not None else None for r in rows], dtype="string"
            ),
            "processlist_state": pd.Series([r[3] for r in rows], dtype="string"),
            "processlist_info": pd.Series([r[4] for r in rows], dtype="string"),
            "thread_os_id": pd.Series([r[0] for r in rows], dtype="Int64"),
        }
    )


def mysql_timeline(
    *,
    vm: str | None = None,
    pl: str | None = None,
    ps_text: str | None = None,
    mysqladmin: str | None = None,
    pfs: pd.DataFrame | None = None,
    variables: dict[str, str] | None = None,
    ncpu: int | None = 4,
) -> Timeline:
    """Parse the texts with the real parsers (ps, mysqladmin, processlist, vmstat) and align them as
    the ingest does (server clock = UTC); ``pfs`` and ``variables`` are given as parsed."""
    from parsers import mysqladmin as mysqladmin_parser
    from parsers import ps as ps_parser
    from parsers.base import Clock, ParsedSource

    hints = ClockHints(start_local=START, interval_s=1.0)
    sources: list[ParsedSource] = []
    if vm is not None:
        sources.append(
            vmstat.parse(vm.splitlines(keepends=True), member="2026_04_21_16_51_41-vmstat", clock=hints)
        )
    if pl is not None:
        sources.append(
            processlist.parse(
                pl.splitlines(keepends=True), member="2026_04_21_16_51_41-processlist", clock=hints
            )
        )
    if ps_text is not None:
        sources.append(
            ps_parser.parse(ps_text.splitlines(keepends=True), member="ps-threads.txt", clock=hints)
        )
    if mysqladmin is not None:
        sources.append(
            mysqladmin_parser.parse(
                mysqladmin.splitlines(keepends=True), member="2026_04_21_16_51_41-mysqladmin", clock=hints
            )
        )
    if pfs is not None:
        sources.append(
            ParsedSource("threads", "2026_04_21_16_51_41-threads", {"pfs_threads": pfs}, Clock.TS_MARKER)
        )
    if variables is not None:
        sources.append(
            ParsedSource(
                "variables",
                "2026_04_21_16_51_41-variables",
                {"variables": pd.DataFrame()},
                Clock.INFERRED,
                meta={"variables": variables},
            )
        )
    for src in sources:
        if src.ts_is_local:
            src.shift(0)
    return Timeline.from_sources(sources, ncpu=ncpu)


def load_timeline(name: str, *, ncpu: int = 2) -> Timeline:
    """A real MariaDB capture of tests/fixtures/loads (``tmptables-64`` or ``idle``; see its README),
    parsed with the real parsers; every member has TS lines or per-line times (UTC)."""
    from pathlib import Path

    from parsers import mysqladmin as mysqladmin_parser
    from parsers import ps as ps_parser

    base = Path(__file__).resolve().parent.parent / "fixtures" / LOADS_DIR
    prefix = f"mariadb-10.11.19_{name}_"
    hints = ClockHints()
    sources = []
    for parser, suffix in (
        (vmstat, "vmstat-t.txt"),
        (processlist, "processlist.txt"),
        (ps_parser, "ps-eLo.txt"),
        (mysqladmin_parser, "mysqladmin-ext_subset.txt"),
    ):
        text = (base / (prefix + suffix)).read_text()
        sources.append(parser.parse(text.splitlines(keepends=True), member=prefix + suffix, clock=hints))
    return Timeline.from_sources(sources, ncpu=ncpu)


#: Seed 000's query, as far as its processlist shows it (cut at 100 characters there), completed with
#: a FROM/WHERE so that it is one statement; the literal varies per session, the fingerprint does not.
SEED000_QUERY = (
    "SELECT d.id AS d__id, d.nombre AS d__nombre, d.valor AS d__valor, d.etapa_id AS d__etapa_id, e.id AS "
    "e__id FROM dato d INNER JOIN etapa e ON d.etapa_id = e.id WHERE e.proceso_id = {n}"
)
SEED000_D_THREADS = (547, 540, 552, 547, 549)  # `ps ... | grep mysql | grep Dl | wc -l` -> 547
SEED000_TMP_SESSIONS = 217  # `removing tmp table` sessions (its last state count)
SEED000_SENDING_DATA = 412  # `Sending data` sessions: ~630 running the query at Time 0 in all


def seed000_timeline(*, with_ps: bool = True, with_counters: bool = True) -> Timeline:
    """Seed 000 rebuilt from the lines it quotes: 14 cores, 40-50 % idle and < 1 % wait (top), 547
    mysqld threads in D state in ``unlinkat`` (ps -T), ~630 sessions running one fast query (Time 0)
    in ``Sending data`` / ``removing tmp table`` plus Sleep and a Binlog Dump (SHOW PROCESSLIST), and
    ~4,000 queries/s each building an on-disk (MyISAM ``#sql_*.MYD``) temporary table. Five 1-s
    snapshots, as the collector takes them."""
    rows = [(2, 0, 30, 25, 45, 0)] + [(18 + k % 3, 2, 30, 24, 45, 1) for k in range(7)]
    snapshot = [
        (
            "repl",
            "Binlog Dump",
            58685,
            ("Master has sent all binlog to slave; waiting for binlog to be up"),
            "NULL",
        ),
        ("root", "Query", 0, "starting", "show processlist"),
    ]
    snapshot += [
        ("user01", "Query", 0, "removing tmp table", SEED000_QUERY.format(n=k % 23))
        for k in range(SEED000_TMP_SESSIONS)
    ]
    snapshot += [
        ("user01", "Query", 0, "Sending data", SEED000_QUERY.format(n=k % 19))
        for k in range(SEED000_SENDING_DATA)
    ]
    snapshot += [("user01", "Query", 0, "statistics", SEED000_QUERY.format(n=k)) for k in range(6)]
    snapshot += [("user01", "Sleep", 27629 if k == 0 else 0, "", "NULL") for k in range(60)]
    ps_snapshots = [
        [
            (d, "Dl", "mysqld", "unlinkat"),
            (12, "Rl", "mysqld", "-"),
            (90, "Sl", "mysqld", "futex_do_wait"),
            (3, "S", "kworker/3:1", "worker_thread"),
        ]
        for d in SEED000_D_THREADS
    ]
    return mysql_timeline(
        vm=vmstat_text(rows),
        pl=processlist_text([snapshot] * 5),
        ps_text=ps_elo_text(ps_snapshots) if with_ps else None,
        mysqladmin=mysqladmin_ext_text(
            6,
            per_s={
                "Created_tmp_disk_tables": 4000,
                "Created_tmp_tables": 4010,
                "Questions": 4100,
                "Com_select": 4000,
            },
            gauges={"Threads_running": 640, "Threads_connected": 700},
        )
        if with_counters
        else None,
        variables={
            "tmpdir": "/srv/mysqldata/tmp",
            "tmp_table_size": "67108864",
            "max_heap_table_size": "67108864",
            "table_open_cache": "2000",
        },
        ncpu=14,
    )


#: Seed 001's vmstat 10 (retyped; the first line is since boot): r b ... us sy id wa.
SEED001_VMSTAT = [
    (13, 0, 32, 8, 54, 6), (0, 0, 44, 10, 41, 5), (15, 0, 41, 11, 46, 2), (0, 0, 40, 11, 44, 5),
    (17, 1, 36, 9, 50, 5), (0, 0, 32, 9, 45, 14), (23, 0, 36, 10, 48, 6), (49, 0, 45, 10, 40, 5),
    (10, 0, 36, 9, 50, 4), (0, 0, 39, 11, 45, 5), (0, 3, 38, 10, 50, 1),
]  # fmt: skip
SEED001_COMMIT_SESSIONS = 56  # sessions 32..91 of its SHOW PROCESSLIST, most at COMMIT


def seed001_snapshot(commit: int = SEED001_COMMIT_SESSIONS) -> list[tuple[str, str, int, str, str]]:
    """Seed 001's SHOW PROCESSLIST: sysbench's 64 sessions (Command Execute), ``commit`` of them with
    Info COMMIT and State NULL, the rest in other statements; plus a Sleep and the own query."""
    rows = [("root", "Sleep", 0, "", "NULL"), ("root", "Query", 0, "NULL", "show processlist")]
    rows += [("root", "Execute", 0, "NULL", "COMMIT") for _ in range(commit)]
    others = [
        ("Sorting result", "SELECT c from sbtest where id between 365260 and 365359 order by c"),
        ("Writing to net", "DELETE from sbtest where id=496460"),
        ("statistics", "SELECT c from sbtest where id=500213"),
        ("updating", "UPDATE sbtest set k=k+1 where id=499915"),
    ]
    rows += [("root", "Execute", 0, *others[k % len(others)]) for k in range(64 - commit)]
    return rows


def seed001_timeline(*, commit: int = SEED001_COMMIT_SESSIONS, vm_rows: list | None = None) -> Timeline:
    """Seed 001 rebuilt: sysbench, 64 threads on 2 cores, its vmstat lines (taken as 1-s samples) and
    five SHOW PROCESSLIST snapshots with most sessions at COMMIT; innodb_flush_log_at_trx_commit=1."""
    return mysql_timeline(
        vm=vmstat_text(vm_rows or SEED001_VMSTAT),
        pl=processlist_text([seed001_snapshot(commit)] * 5),
        variables={"innodb_flush_log_at_trx_commit": "1", "sync_binlog": "1", "log_bin": "OFF"},
        ncpu=2,
    )
