"""Parse ``top -b`` iterations (pt-stalk ``-top``) into load averages and task counts.

Accepts:
    ``top -bn N [-d S]`` from procps and procps-ng 3.2 to 4.x (pt-stalk runs ``top -bn$OPT_RUN_TIME``
    with top's default 3 s delay); ``Tasks:`` or, with ``-H``, ``Threads:`` summary lines; load
    averages with a decimal point or a decimal comma (``load average: 0,23, 0,22, 0,09``);
    ``up 3 days, 16:51`` / ``up 2 min`` / ``1 user`` variants. Of the process table under each
    header (sorted by %CPU, top's default) the first ``TOP_PROCS_KEPT`` rows are kept:
    who takes the CPU in each iteration (``parsers.ps`` reads thread listings).

Sample input (pt-stalk 3.7.1 ``-top``, procps-ng on Rocky 8.9)::

    top - 16:51:42 up 11 days, 15:37,  0 users,  load average: 11.65, 8.59, 6.32
    Tasks:  17 total,   1 running,  16 sleeping,   0 stopped,   0 zombie
    %Cpu(s):  4.1 us,  6.6 sy,  0.0 ni, 86.7 id,  1.9 wa,  0.3 hi,  0.3 si,  0.0 st
    MiB Mem : 385087.2 total, 102120.2 free,  41597.2 used, 241369.9 buff/cache
    MiB Swap:      0.0 total,      0.0 free,      0.0 used. 340159.0 avail Mem

        PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
          1 root      20   0   90020   9600   8064 S   0.0   0.0   0:00.31 systemd

Output:
    frame ``top_load``, one row per iteration: ``ts`` datetime64[ns, UTC] (the header's time of day
    on ``clock.start_local``'s date, a day added at each midnight roll-over; local wall clock, so
    ``ts_is_local``), ``line_no`` int64 (the ``top -`` line), ``load1 load5 load15`` float64 (run
    queue averages over 1, 5, 15 min, as ``/proc/loadavg``: R plus D tasks), ``tasks running
    sleeping`` Int64 (the ``Tasks:``/``Threads:`` counts; NA when the line is missing).
    frame ``top_procs``, the busiest rows of each iteration: ``ts`` (its header's), ``line_no``,
    ``pid`` int64, ``user`` string, ``state`` string (S column: R, S, D...), ``pcpu`` float64 (%CPU:
    100 is one CPU), ``command`` string (COMMAND as printed, cut to top's width: ``stress-ng+``).
    ``clock``: ``header+time-of-day``. ``meta``: ``unit`` (``tasks`` or ``threads``),
    ``variant`` (``top -b -H, MiB Mem, decimal comma``).

Warnings:
    ``no-start-time`` (no start date: times are on 1970-01-01), ``odd-line`` (a ``top -`` line
    without a readable time or load average), ``no-tasks-line`` (an iteration without ``Tasks:``).

Errors:
    ``ParseError`` at the first non-blank line before the first ``top -`` header that is not a
    marker, or at line 1 when there is no header at all.

>>> src = parse(["top - 23:59:59 up 2 min,  2 users,  load average: 0.23, 0.22, 0.09",
...              "Tasks: 112 total,   1 running, 111 sleeping,   0 stopped,   0 zombie",
...              "top - 00:00:02 up 2 min,  2 users,  load average: 0,21, 0,21, 0,09"],
...             member="t", clock=ClockHints(start_local=pd.Timestamp("2026-04-21 23:59:58")))
>>> [str(t) for t in src.main.ts], src.main.load1.tolist(), src.main.tasks.tolist()
(['2026-04-21 23:59:59+00:00', '2026-04-22 00:00:02+00:00'], [0.23, 0.21], [112, <NA>])
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers.base import (
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    parse_marker,
)
from parsers.sensitive import Sensitive

FORMAT = "top"
TRAITS = FormatTraits(
    short_lines=False,
    unsigned=False,
    capped_pct=False,
    blocks=Blocks.VARYING_ROWS,
    markers=False,
)

#: top prints its first iteration right after start-up; a first header this far *before* the start
#: time means the capture began just before midnight and the header is on the next day.
ROLLOVER_SLACK = pd.Timedelta(hours=12)

_HEADER = re.compile(
    r"^top - (?P<time>\d{1,2}:\d{2}:\d{2}) .*?load averages?: "
    r"(?P<l1>\d+[.,]\d+),? +(?P<l5>\d+[.,]\d+),? +(?P<l15>\d+[.,]\d+)\s*$"
)
_TASKS = re.compile(
    r"^(?P<unit>Tasks|Threads): +(?P<total>\d+) total, +(?P<running>\d+) running, +(?P<sleeping>\d+) sleeping"
)


_MEM = re.compile(r"^(?:(?P<unit>[KMGTPE]iB) Mem *:|Mem:)")
#: Rows of each iteration's process table kept: top sorts by %CPU, so these are its busiest
#: processes; ten name what takes the CPUs of any host without keeping every idle process.
TOP_PROCS_KEPT = 10
_PROC_HEADER = re.compile(r"^\s*PID\s+USER\b.*%CPU.*\bCOMMAND\s*$")
_MEM_START = frozenset("KMGTPE")


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a ``top - HH:MM:SS up ...`` header followed by a ``Tasks:`` line."""
    for i, line in enumerate(head[:-1]):
        if line.startswith("top - ") and _HEADER.match(line.rstrip()):
            return bool(_TASKS.match(head[i + 1]))
    return False


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read ``top -b`` output (lines of text) into ``top_load``; raises ``ParseError`` when it is not top."""
    warnings: list[ParseWarning] = []
    heads: list[tuple[int, str]] = []  # the `top -` lines
    tasks: list[tuple[int, str]] = []  # the Tasks:/Threads: lines
    seen = False
    any_line = False
    mem = ""  # the first memory summary line: its unit dates procps
    procs: list[tuple[int, int, list[str]]] = []  # (header index, line, tokens)
    columns: list[str] | None = None  # the process table's header tokens, while in a table
    kept = 0
    for no, raw in enumerate(stream, start=1):
        c = raw[:1]
        if columns is not None and kept < TOP_PROCS_KEPT and raw.strip() and c != "t":
            tokens = raw.split(None, len(columns) - 1)
            if len(tokens) == len(columns):
                procs.append((len(heads) - 1, no, tokens))
                kept += 1
            continue
        if c == "t" and raw.startswith("top - "):
            heads.append((no, raw.rstrip()))
            seen = True
            columns = None
        elif seen and columns is None and "PID" in raw and _PROC_HEADER.match(raw):
            columns, kept = raw.split(), 0
        elif c == "T" and seen and raw.startswith(("Tasks:", "Threads:")):
            tasks.append((no, raw))
        elif not mem and seen and c in _MEM_START and _MEM.match(raw):
            mem = raw
        elif not seen and raw.strip():
            any_line = True
            if parse_marker(raw.rstrip("\r\n")) is None:
                raise ParseError(member, no, raw, "not top batch output (no 'top - HH:MM:SS' header)")
    if any_line and not heads:
        raise ParseError(member, 1, "", "no 'top - HH:MM:SS' header")
    frame, unit = _to_frame(heads, tasks, clock, warnings)
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"top_load": frame, "top_procs": _procs_frame(frame, heads, procs, columns_of(procs))},
        clock=Clock.HEADER_TIME,
        warnings=warnings,
        meta={**({"unit": unit} if unit else {}), "variant": _variant(heads, unit, mem)},
        ts_is_local=True,
    )


def _variant(heads: list[tuple[int, str]], unit: str | None, mem: str) -> str:
    """``top -b -H, MiB Mem, decimal comma``: threads mode, memory unit (procps-ng 3.3 prints
    ``KiB Mem``, later ones scale with ``-E``; procps 3.2 ``Mem: ...k total``), the locale."""
    clues = ["top -b -H" if unit == "threads" else "top -b"]
    m = _MEM.match(mem)
    if m:
        clues.append(f"{m['unit']} Mem" if m["unit"] else "procps 3.2 (Mem: ...k)")
    if heads and "," in heads[0][1].rpartition("average")[2].replace(", ", " "):
        clues.append("decimal comma")
    return ", ".join(clues)


def _to_frame(
    heads: list[tuple[int, str]],
    tasks: list[tuple[int, str]],
    clock: ClockHints,
    warnings: list[ParseWarning],
) -> tuple[pd.DataFrame, str | None]:
    """Type the header lines: time of day -> timestamps with roll-over, loads, task counts."""
    rows = []
    for no, line in heads:
        m = _HEADER.match(line)
        if m is None:
            warnings.append(ParseWarning(no, "odd-line", f"unreadable top header: {line[:80]!r}"))
            continue
        rows.append((no, m["time"], m["l1"], m["l5"], m["l15"]))
    df = pd.DataFrame(rows, columns=["line_no", "time", "load1", "load5", "load15"])
    for col in ("load1", "load5", "load15"):
        df[col] = df[col].str.replace(",", ".", regex=False).astype("float64")
    df["line_no"] = df["line_no"].astype("int64")
    # each Tasks line belongs to the header just above it
    unit = None
    counts = {c: pd.array([pd.NA] * len(df), dtype="Int64") for c in ("tasks", "running", "sleeping")}
    header_lines = df["line_no"].to_numpy()
    for no, line in tasks:
        m = _TASKS.match(line)
        i = int(np.searchsorted(header_lines, no)) - 1
        if m is None or i < 0 or header_lines[i] != no - 1:
            continue
        unit = m["unit"].lower()
        counts["tasks"][i] = int(m["total"])
        counts["running"][i] = int(m["running"])
        counts["sleeping"][i] = int(m["sleeping"])
    for col, values in counts.items():
        df[col] = values
    missing = df["tasks"].isna().to_numpy()
    if missing.any() and len(tasks):
        for no in header_lines[missing]:
            warnings.append(ParseWarning(int(no), "no-tasks-line", "no 'Tasks:' line under this header"))
    df["ts"] = _times(df["time"], clock, warnings)
    df = df[["ts", "line_no", "load1", "load5", "load15", "tasks", "running", "sleeping"]]
    return df, unit


def _times(time_of_day: pd.Series, clock: ClockHints, warnings: list[ParseWarning]) -> pd.Series:
    """Header times of day on the start date, one day added at each backwards step (midnight)."""
    if clock.start_local is not None:
        start = pd.Timestamp(clock.start_local)
    else:
        start = pd.Timestamp(0)
        if len(time_of_day):
            warnings.append(
                ParseWarning(0, "no-start-time", "no start date: top times are put on 1970-01-01")
            )
    tod = pd.to_timedelta(time_of_day.to_numpy(dtype=object).astype(str)) if len(time_of_day) else None
    if tod is None:
        return pd.Series([], dtype="datetime64[ns, UTC]")
    secs = tod.total_seconds().to_numpy()
    days = np.concatenate([[0], np.cumsum(np.diff(secs) < 0)])
    ts = start.normalize() + tod + pd.to_timedelta(days, unit="D")
    if clock.start_local is not None and ts[0] < start - ROLLOVER_SLACK:
        ts = ts + pd.Timedelta(days=1)
    return pd.Series(ts.as_unit("ns"), index=time_of_day.index).dt.tz_localize("UTC")


def columns_of(procs: list[tuple[int, int, list[str]]]) -> int:
    """How many columns the process rows were split into (the header's count), 0 without rows."""
    return len(procs[0][2]) if procs else 0


_PROC_COLUMNS = ["ts", "line_no", "pid", "user", "state", "pcpu", "command"]


def _procs_frame(
    load: pd.DataFrame, heads: list[tuple[int, str]], procs: list[tuple[int, int, list[str]]], width: int
) -> pd.DataFrame:
    """The kept process rows, timed by their iteration's header (rows of an unreadable header and
    rows whose PID or %CPU is not a number are left out); default columns ``PID USER PR NI VIRT RES
    SHR S %CPU %MEM TIME+ COMMAND``."""
    if not procs or width < 12:
        return pd.DataFrame(
            {
                c: pd.Series(dtype=t)
                for c, t in zip(
                    _PROC_COLUMNS,
                    ("datetime64[ns, UTC]", "int64", "int64", "string", "string", "float64", "string"),
                    strict=True,
                )
            }
        )
    when = dict(zip(load["line_no"], load["ts"], strict=True))
    rows = []
    for head, no, t in procs:
        ts = when.get(heads[head][0]) if head >= 0 else None
        pcpu = t[8].replace(",", ".")
        if ts is None or not t[0].isdigit() or not pcpu.replace(".", "", 1).isdigit():
            continue
        rows.append((ts, no, int(t[0]), t[1], t[7], float(pcpu), t[-1].strip()))
    frame = pd.DataFrame(rows, columns=_PROC_COLUMNS)
    return frame.astype(
        {
            "line_no": "int64",
            "pid": "int64",
            "user": "string",
            "state": "string",
            "pcpu": "float64",
            "command": "string",
        }
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("linux", "mysql")
)  # command lines of MySQL tools; its USER is an operating system account (mysql, root), not a MySQL user
