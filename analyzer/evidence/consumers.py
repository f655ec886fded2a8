"""Who takes the CPUs: MySQL against every other process, from the process table of ``top -b``
(pt-stalk ``-top``; ``parsers.top`` keeps the busiest rows of each iteration as ``top_procs``).

When MySQL is quiet and another process takes the CPU (a benchmark, a backup compressing, a
runaway job), "the server is CPU-bound" is the wrong verdict: the finding names the process
(docs/background.md, "Name the culprit"). Processes top shows in state D (uninterruptible sleep: waiting
for I/O) are named beside them. Source: top(1), procps-ng 4.0 ("%CPU": 100 is one CPU).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analyzer.detect import within_slack
from analyzer.findings import Culprit, Evidence, Window
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import within

#: Names of the MySQL server process as top and ps print them. A name is the server's only when it is
#: one of these, whole: ``mysqldump`` and ``mysqld_safe`` start with ``mysqld`` and are clients or
#: wrappers, not the server.
MYSQLD_NAMES = ("mysqld", "mariadbd")
#: top marks a name it cut to its column width with a trailing ``+`` (top(1), procps-ng 4.0).
TOP_CUT = "+"
#: MySQL is quiet when it takes less than a quarter of what the listed processes take: the rest is
#: what saturates the CPUs.
MYSQL_QUIET_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class Consumers:
    """Mean %CPU per top iteration in the windows (100 = one CPU): ``mysqld``; ``top`` the other
    programs, busiest first, as (command, PID of its busiest process, %CPU of all its processes);
    ``processes`` how many processes each program had; ``d_state`` commands seen in state D with
    their process count; ``evidence`` the rows that say so."""

    mysqld: float
    others: float
    top: tuple[tuple[str, int, float], ...]
    d_state: tuple[tuple[str, int], ...]
    evidence: tuple[Evidence, ...]
    processes: dict[str, int]

    @property
    def mysql_quiet(self) -> bool:
        """Another process, not MySQL, takes the CPUs."""
        return bool(self.top) and self.mysqld < MYSQL_QUIET_SHARE * (self.mysqld + self.others)

    def names(self, n: int = 3) -> str:
        """``stress-ng+ (8 processes, busiest PID 24233, 96 %), pytest (PID 22917, 40 %)``."""
        return ", ".join(
            f"{c} ({self.processes[c]} processes, busiest PID {p}, {v:.0f} %)"
            if self.processes.get(c, 1) > 1
            else f"{c} (PID {p}, {v:.0f} %)"
            for c, p, v in self.top[:n]
        )

    def culprit(self) -> Culprit:
        """The busiest other process, kind ``process``."""
        command, pid, _ = self.top[0]
        return Culprit(kind="process", id=str(pid), statement=command, evidence=self.evidence)


def is_mysqld(names: pd.Series) -> pd.Series:
    """True for the names of the MySQL server process (``MYSQLD_NAMES``, whole), a name top cut to
    its column (``mariadb+``) counting when the cut part is the start of one of them. Looked up once
    per distinct name.

    >>> is_mysqld(pd.Series(["mysqld", "mariadbd", "mysqldump", "mysqld_safe", "mariadb+", "fio"])).tolist()
    [True, True, False, False, True, False]
    """
    text = names.astype("string").fillna("")
    uniques = text.unique()
    known = {
        str(n): str(n) in MYSQLD_NAMES
        or (
            str(n).endswith(TOP_CUT)
            and len(str(n)) > 1
            and any(m.startswith(str(n)[:-1]) for m in MYSQLD_NAMES)
        )
        for n in uniques
    }
    return text.map(known).astype(bool)


def program_names(tl: Timeline) -> dict[int, str]:
    """PID -> program name from ``ps`` (``ps_threads.comm``, pt-stalk ``-ps``: ``ps -eaF``'s CMD):
    the base name of its first word (``/usr/bin/fio --name=x`` -> ``fio``); empty without ps."""
    ps = tl.frame("ps_threads")
    if not len(ps) or "comm" not in ps or "pid" not in ps:
        return {}
    first = ps.drop_duplicates("pid")
    words = first["comm"].astype("string").fillna("").str.split(n=1).str[0].fillna("")
    return {int(pid): str(w).rsplit("/", 1)[-1] for pid, w in zip(first["pid"], words, strict=True) if w}


def full_commands(tl: Timeline, rows: pd.DataFrame) -> pd.Series:
    """``rows.command`` (top's COMMAND) with the names top cut to its column (``stress-ng+``) completed
    from ps when ps has the same PID under a name that starts with the cut one (``stress-ng-cpu``
    stays ``stress-ng+`` only without ps)."""
    command = rows["command"].astype("string").fillna("?")
    cut = command.str.endswith("+")
    if not cut.any():
        return command
    names = program_names(tl)
    if not names:
        return command
    full = rows["pid"].map(names).astype("string")
    ok = (
        cut
        & full.notna()
        & pd.Series(
            [
                bool(f) and str(f).startswith(str(c)[:-1])
                for c, f in zip(command, full.fillna(""), strict=True)
            ],
            index=rows.index,
        )
    )
    return command.where(~ok, full)


def cpu_consumers(tl: Timeline, windows: list[Window]) -> Consumers | None:
    """The processes that took the CPUs in ``windows`` per ``top_procs``, or None without it."""
    procs = tl.frame("top_procs")
    if not len(procs) or "pcpu" not in procs:
        return None
    rows = procs[within(procs["ts"], windows)]
    iterations = rows["ts"].nunique()
    if not iterations:
        return None
    command = full_commands(tl, rows)
    server = is_mysqld(command)
    mysqld = float(rows.loc[server, "pcpu"].sum()) / iterations
    others = rows[~server].assign(command=command[~server])
    # by program: eight stress-ng workers at 12 % each are one 96 % consumer
    per_pid = others.groupby(["command", "pid"])["pcpu"].sum().div(iterations)
    per = per_pid.groupby(level="command").sum().sort_values(ascending=False)
    busiest = (
        per_pid.sort_values(ascending=False).reset_index().drop_duplicates("command").set_index("command")
    )
    count = per_pid.groupby(level="command").size()
    top = tuple(
        (str(c), int(busiest.loc[c, "pid"]), round(float(v), 1)) for c, v in per.head(5).items() if v > 0
    )
    processes = {str(c): int(n) for c, n in count.items()}
    d = others[others["state"].astype("string") == "D"]
    d_state = tuple((str(c), int(n)) for c, n in d.groupby("command")["pid"].nunique().items())
    member, lines = tl.lines_of(rows)
    evidence = [
        Evidence(
            "mysqld/mariadbd %CPU (mean per top iteration)",
            round(mysqld, 1),
            "%",
            "top_procs.pcpu",
            member,
            lines,
        ),
        Evidence(
            "other processes %CPU (mean per top iteration)",
            round(float(per.sum()), 1),
            "%",
            "top_procs.pcpu",
            member,
            lines,
        ),
    ]
    for c, p, v in top[:3]:
        first = others[others["pid"] == p].head(1)
        m, ln = tl.lines_of(first)
        evidence.append(
            Evidence(
                f"{c} ({processes[c]} process(es), busiest PID {p}) %CPU (mean)",
                v,
                "%",
                "top_procs.pcpu",
                m,
                ln,
            )
        )
    for c, n in d_state:
        m, ln = tl.lines_of(d[d["command"] == c].head(1))
        evidence.append(
            Evidence(f"{c} processes in D state (I/O wait)", n, "processes", "top_procs.state", m, ln)
        )
    return Consumers(mysqld, float(per.sum()), top, d_state, tuple(evidence), processes)


def describe(c: Consumers) -> str:
    """One sentence: who took the CPUs, MySQL's share, and who waited in D state."""
    text = f"The CPUs go to other processes, not to MySQL: {c.names()}; mysqld took {c.mysqld:.0f} %."
    if c.d_state:
        text += " In D state (waiting for I/O): " + ", ".join(f"{cmd} ({n})" for cmd, n in c.d_state) + "."
    return text


@dataclass(frozen=True, slots=True)
class Waiting:
    """The program seen most in state D (uninterruptible sleep, waiting for I/O) besides mysqld:
    ``rows`` the top/ps rows that show it so, ``processes`` its distinct PIDs, ``pid`` the one seen
    most, ``wchan`` its commonest wait channel (ps ``-ps-threads``; '' without), ``command`` its
    command line from ps (else the program)."""

    program: str
    pid: int
    processes: int
    rows: int
    wchan: str
    command: str
    evidence: tuple[Evidence, ...]

    def culprit(self) -> Culprit:
        """The program as culprit, kind ``process`` (id: its PID seen most in state D)."""
        return Culprit(kind="process", id=str(self.pid), statement=self.command, evidence=self.evidence)


#: ps prints these for a thread whose wait channel it cannot tell (procps-ng ps(1), WCHAN).
NO_WCHAN = ("", "-", "0")
#: Wait channels of a thread waiting for block I/O, by a part of the kernel function's name: the
#: block layer (``io_schedule``, ``blk_mq_get_tag``, ``bit_wait_io``, ``submit_bio_wait``,
#: block/bio.c), a page under I/O (``folio_wait``, ``wait_on_page``), writeback throttling
#: (``balance_dirty_pages``), fs/buffer.c's ``sync_dirty_buffer``, an O_DIRECT transfer
#: (``iomap_dio_rw``), a journal commit or an fsync (fs/jbd2, fs/xfs/xfs_log.c,
#: ``file_write_and_wait_range``). The same channels ``analyzer.waits.read.WCHAN_RESOURCES`` reads as
#: disk I/O, which this package cannot import (waits/ reads evidence/).
BLOCK_IO_WCHAN_PARTS = (
    "io_schedule", "blk_mq_get_tag", "bit_wait_io", "submit_bio_wait", "wait_on_page", "folio_wait",
    "balance_dirty_pages", "sync_dirty_buffer", "iomap_dio_rw", "jbd2", "xlog", "xfs_log_force", "fsync",
    "file_write_and_wait", "fdatawait",
)  # fmt: skip


def io_wait_channel(wchan: pd.Series) -> pd.Series:
    """True where a thread in state D sleeps for block I/O (``BLOCK_IO_WCHAN_PARTS``: the block
    layer's waits, a page under I/O, a journal commit or an fsync) or ps shows no wait
    channel (top never does); False for a D state on anything else (a directory lock, NFS, a
    driver): that thread waits, but not for a disk. Looked up once per distinct channel."""
    text = wchan.astype("string").fillna("")
    known = {
        str(w): str(w) in NO_WCHAN or any(part in str(w).lower() for part in BLOCK_IO_WCHAN_PARTS)
        for w in text.unique()
    }
    return text.map(known).astype(bool)


def d_state_programs(tl: Timeline, windows: list[Window]) -> Waiting | None:
    """The non-MySQL program with the most rows in state D in ``windows`` (1 s slack), from top
    (``top_procs.state``) and ps (``ps_threads.state``, with ``wchan`` when the listing has it: only
    the threads whose wait channel is block I/O, ``io_wait_channel``), or None."""
    parts = _d_state_rows(tl, windows)
    if not parts:
        return None
    d = pd.concat(parts, ignore_index=True)
    d = d[~is_mysqld(d["program"]).to_numpy()]
    if not len(d):
        return None
    program = str(d["program"].value_counts().index[0])
    mine = d[d["program"] == program]
    pid = int(mine["pid"].value_counts().index[0])
    wchans = mine.loc[mine["wchan"] != "", "wchan"]
    command = _command_line(tl, pid) or program
    evidence = []
    for src, frame in (("top_procs", tl.frame("top_procs")), ("ps_threads", tl.frame("ps_threads"))):
        picked = (
            frame.loc[mine.loc[mine["src"] == src, "idx"]] if (mine["src"] == src).any() else frame.iloc[:0]
        )
        if len(picked):
            member, lines = tl.lines_of(picked)
            evidence.append(
                Evidence(
                    f"{program} rows in state D ({src.split('_')[0]})",
                    len(picked),
                    "rows",
                    f"{src}.state",
                    member,
                    lines,
                )
            )
    return Waiting(
        program,
        pid,
        int(mine["pid"].nunique()),
        len(mine),
        str(wchans.value_counts().index[0]) if len(wchans) else "",
        command,
        tuple(evidence),
    )


def _d_state_rows(tl: Timeline, windows: list[Window]) -> list[pd.DataFrame]:
    """The rows in state D in ``windows`` (1 s slack) of top and ps (ps: not mysqld, block I/O wait channels
    only when it has ``wchan``), each as (pid, program, wchan, src, idx); an empty list when neither has
    any."""
    slack = pd.Timedelta(seconds=1)
    parts = []
    top = tl.frame("top_procs")
    if len(top) and "state" in top:
        top = top[
            within_slack(top["ts"], windows, slack) & (top["state"].astype("string") == "D").fillna(False)
        ]
        if len(top):
            parts.append(
                pd.DataFrame(
                    {
                        "pid": top["pid"].astype("int64"),
                        "program": full_commands(tl, top),
                        "wchan": "",
                        "src": "top_procs",
                        "idx": top.index,
                    }
                )
            )
    ps = tl.frame("ps_threads")
    if len(ps) and "state" in ps and "is_mysqld" in ps:
        ps = ps[
            within_slack(ps["ts"], windows, slack)
            & (ps["state"].astype("string") == "D").fillna(False)
            & ~ps["is_mysqld"].astype(bool)
        ]
        if "wchan" in ps:
            ps = ps[io_wait_channel(ps["wchan"]).to_numpy()]
        if len(ps):
            names = program_names(tl)
            parts.append(
                pd.DataFrame(
                    {
                        "pid": ps["pid"].astype("int64"),
                        "program": ps["pid"].map(names).fillna("?").astype("string"),
                        "wchan": ps["wchan"].astype("string").fillna("") if "wchan" in ps else "",
                        "src": "ps_threads",
                        "idx": ps.index,
                    }
                )
            )
    return parts


def _command_line(tl: Timeline, pid: int) -> str:
    """The command line of ``pid`` from ps (``ps_threads.comm``), or ''."""
    ps = tl.frame("ps_threads")
    if not len(ps) or "comm" not in ps:
        return ""
    rows = ps[ps["pid"] == pid]
    return str(rows["comm"].iloc[0])[:500] if len(rows) else ""


#: Wait channels of a thread waiting for asynchronous I/O completions, not in state D: libaio's
#: io_getevents sleeps in ``read_events``; io_uring's io_uring_enter in ``io_cqring_wait``.
AIO_WCHAN_RE = r"^(read_events|do_io_getevents|io_getevents|io_cqring_wait|io_uring)"


def aio_waiting_program(tl: Timeline, windows: list[Window]) -> Waiting | None:
    """The non-MySQL program whose threads ps shows most often waiting for asynchronous I/O completions
    (``AIO_WCHAN_RE``, in ``ps_threads.wchan``; collect.sh's ``ps -eLo ...,wchan``) in ``windows``, or None
    (no wchan column, or no such thread)."""
    ps = tl.frame("ps_threads")
    if not len(ps) or "wchan" not in ps or "is_mysqld" not in ps:
        return None
    rows = ps[within_slack(ps["ts"], windows, pd.Timedelta(seconds=1)) & ~ps["is_mysqld"].astype(bool)]
    wchan = rows["wchan"].astype("string").fillna("")
    rows = rows[wchan.str.match(AIO_WCHAN_RE).fillna(False)]
    if not len(rows):
        return None
    names = program_names(tl)
    program_of = rows["pid"].map(names).fillna("?").astype("string")
    program = str(program_of.value_counts().index[0])
    mine = rows[program_of == program]
    pid = int(mine["pid"].value_counts().index[0])
    member, lines = tl.lines_of(mine)
    evidence = (
        Evidence(
            f"{program} threads waiting for asynchronous I/O (ps wchan)",
            len(mine),
            "rows",
            "ps_threads.wchan",
            member,
            lines,
        ),
    )
    return Waiting(
        program,
        pid,
        int(mine["pid"].nunique()),
        len(mine),
        str(mine["wchan"].astype("string").value_counts().index[0]),
        _command_line(tl, pid) or program,
        evidence,
    )
