"""Detection helpers every rule family shares: sustained windows, per-run frames, snapshots of the
processlist, status counters (``status``, ``growth``) and long counter frames (``field_rows``:
netstat -s, /proc/vmstat), server variables, baselines, evidence builders (``cite``,
``column_evidence``).

One module so that a newcomer reads each helper once and every family measures the same way (one
``held_seconds``, one notion of "sustained", one quiet level). Rules import from here, never from
another family's file. No Django, no I/O: pure functions over ``analyzer.timeline.timeline.Timeline`` frames.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from analyzer.findings import Culprit, Evidence, Finding, Window
from analyzer.timeline.pairing import pair_moments
from analyzer.timeline.timeline import STATUS_KEPT, Timeline, value_is
from analyzer.timeline.windows import median_step_ns, sustained, within

__all__ = [
    "BASELINE_MIN_SAMPLES",
    "BASELINE_QUANTILE",
    "MIN_SUSTAINED_SAMPLES",
    "NO_SLACK",
    "SUSTAINED_S",
    "available_cpu",
    "baseline",
    "busy",
    "concurrent_load",
    "load_rate_evidence",
    "count_per_snapshot",
    "field_rows",
    "growth",
    "d_threads_bar",
    "cite",
    "held_seconds",
    "merge_windows",
    "nearest",
    "need",
    "over_quiet",
    "per_host",
    "short_note",
    "short_query",
    "statement_culprit",
    "status_evidence",
    "TITLE_QUERY_CHARS",
    "sustained_or_extreme",
    "per_run",
    "snapshots",
    "span",
    "state_in",
    "status",
    "step_seconds",
    "sustained",
    "sustained_samples",
    "top_values",
    "variable",
    "variable_number",
    "variables_evidence",
    "vmstat_rate_evidence",
    "within",
    "within_slack",
]

#: A condition must cover 5 s: longer than a scheduler burst or a cron job start (docs/background.md,
#: "Sustained, not a spike").
SUSTAINED_S = 5.0
#: At least two consecutive reports agree, whatever the interval: one can be a fluke.
MIN_SUSTAINED_SAMPLES = 2
#: The capture's quiet level: its 10th percentile (robust to a few idle gaps)...
BASELINE_QUANTILE = 0.10
#: ...of at least 5 samples; fewer make no baseline and only a rule's fixed bar applies.
BASELINE_MIN_SAMPLES = 5
NO_SLACK = pd.Timedelta(0)
#: Below 10, D-state threads are ordinary I/O noise (docs/background.md)...
D_THREADS_MIN = 10
#: ...and one D thread per CPU adds as much to the load average as the machine has cores.
D_THREADS_PER_CPU = 1.0


# --- time and windows --------------------------------------------------------------------------


def step_seconds(ts: pd.Series) -> float:
    """The median interval in seconds between distinct timestamps of ``ts`` (1.0 when there is only one)."""
    step = median_step_ns(ts)
    return step / 1e9 if step else 1.0


def sustained_samples(ts: pd.Series, seconds: float = SUSTAINED_S) -> int:
    """How many consecutive samples of this series cover ``seconds`` (at least MIN_SUSTAINED_SAMPLES).

    At 1 s (pt-stalk) 5 s is 5 samples; a 30 s OSWatcher report already averages 30 s, so 2 do.
    """
    return max(MIN_SUSTAINED_SAMPLES, math.ceil(seconds / step_seconds(ts) - 1e-9))


def held_seconds(windows: list[Window], step: float = 1.0) -> float:
    """Seconds covered by ``windows``: each sample stands for the ``step`` seconds it averages, so a
    one-sample window of a 1 s series holds 1 s and one of a 30 s series holds 30 s."""
    return sum(w.seconds for w in windows) + step * len(windows)


def merge_windows(windows: list[Window], slack: pd.Timedelta = NO_SLACK) -> list[Window]:
    """Union of windows: sorted, overlapping (or within ``slack``) ones merged."""
    out: list[Window] = []
    for w in sorted(windows, key=lambda w: w.start):
        if out and w.start <= out[-1].end + slack:
            out[-1] = Window(out[-1].start, max(out[-1].end, w.end))
        else:
            out.append(w)
    return out


def within_slack(ts: pd.Series, windows: list[Window], slack: pd.Timedelta) -> pd.Series:
    """``within`` widened by ``slack`` on both sides (another source samples a little off the window)."""
    return within(ts, [Window(w.start - slack, w.end + slack) for w in windows])


def need(n: int, wanted: int) -> int:
    """Consecutive samples a window needs: ``wanted``, or all there are when the capture is shorter
    (a single pt-stalk processlist snapshot is still evidence; confidence then says 1 snapshot)."""
    return max(1, min(wanted, n))


#: Two captures of one source are one run when the second starts within this many of the first's
#: intervals after its last sample, at the same interval (+/- 10 %): back-to-back collections.
JOIN_GAP_STEPS = 2.5
SAME_STEP_TOLERANCE = 0.10


def per_run(frame: pd.DataFrame) -> list[pd.DataFrame]:
    """``frame`` split into runs of one tool at one interval, without since-boot reports.

    The timeline keeps one primary capture per source and moment (``analyzer.timeline.primary``), so the
    members of a frame follow each other in time. Members that follow each other at the same
    interval (two pt-stalk collections back to back) are joined into one run, in time order;
    a member at another interval, or after a gap, starts a run of its own: rates and sustained
    windows are computed run by run.
    """
    if not len(frame):
        return []
    if "since_boot" in frame:
        frame = frame[~frame["since_boot"].astype(bool)]
    if "member" not in frame:
        return [frame] if len(frame) else []
    parts = [part for _, part in frame.groupby("member", sort=False, observed=True) if len(part)]
    parts.sort(key=lambda p: p["ts"].iloc[0])
    runs: list[list[pd.DataFrame]] = []
    last_step = 0.0
    for part in parts:
        step = step_seconds(part["ts"])
        if runs and _follows(runs[-1][-1], part, last_step, step):
            runs[-1].append(part)
        else:
            runs.append([part])
        last_step = step
    return [run[0] if len(run) == 1 else pd.concat(run) for run in runs]


def _follows(before: pd.DataFrame, after: pd.DataFrame, step_before: float, step_after: float) -> bool:
    """``after`` continues ``before``: the same interval, starting within JOIN_GAP_STEPS of them."""
    if abs(step_after - step_before) > SAME_STEP_TOLERANCE * max(step_before, step_after):
        return False
    gap = (after["ts"].iloc[0] - before["ts"].iloc[-1]).total_seconds()
    return 0 < gap <= JOIN_GAP_STEPS * step_before


# --- quiet levels and host scale -----------------------------------------------------------------

#: A count (sessions, threads) at least this many times the capture's quiet level is a change of
#: regime, not the server's ordinary concurrency.
QUIET_RISE_FACTOR = 2.0
#: Sessions and threads are sampled once a second: a condition read from them must hold 5 s, like
#: the OS rules (docs/background.md, "Sustained, not a spike"), or be extreme (``sustained_or_extreme``).
SESSIONS_SUSTAINED_S = 5.0
#: An extreme condition may fire on this many consecutive samples (then the finding says why).
EXTREME_MIN_SAMPLES = 3


def over_quiet(values: pd.Series, bar: float, factor: float = QUIET_RISE_FACTOR) -> pd.Series:
    """``values`` >= ``bar`` and, when the capture has a quiet part (its quiet level, ``baseline``, is
    below the bar), >= ``factor`` x that quiet level: a server that always runs near the bar is read
    against itself; one taken wholly during a problem has no quiet part and only the bar applies."""
    hit = values >= bar
    quiet = baseline(values)
    if quiet is not None and quiet < bar:
        hit &= values >= factor * quiet
    return hit


def per_host(minimum: float, ncpu: int | None, per_cpu: float) -> float:
    """A count threshold that grows with the host: ``minimum``, or ``per_cpu`` x ncpu when larger
    (14 sessions committing at once is a queue on 2 CPUs and ordinary group commit on 64)."""
    return max(minimum, per_cpu * (ncpu or 0))


def sustained_or_extreme(
    ts: pd.Series, hit: pd.Series, extreme: pd.Series | None = None, seconds: float = SESSIONS_SUSTAINED_S
) -> tuple[list[Window], list[Window]]:
    """Windows where ``hit`` holds for ``seconds`` (all the samples when the capture is shorter), and
    the shorter windows (>= EXTREME_MIN_SAMPLES samples) where ``extreme`` held throughout, which a
    rule keeps only with a sentence saying why. ``ts``: distinct sample times; masks aligned with it."""
    ts = pd.Series(ts).reset_index(drop=True)
    hit = pd.Series(hit).reset_index(drop=True).fillna(False).astype(bool)
    wanted = need(len(ts), sustained_samples(ts, seconds))
    windows = sustained(ts, hit, min_samples=wanted)
    short: list[Window] = []
    if extreme is not None and wanted > EXTREME_MIN_SAMPLES:
        extreme = pd.Series(extreme).reset_index(drop=True).fillna(False).astype(bool) & hit
        found = sustained(ts, extreme, min_samples=EXTREME_MIN_SAMPLES)
        short = [w for w in found if not any(w.start <= x.end and x.start <= w.end for x in windows)]
    return windows, short


def short_note(short: list[Window], why: str) -> str:
    """The sentence a finding carries for windows kept shorter than its rule's: '' when none."""
    if not short:
        return ""
    return f"; {len(short)} window(s) shorter than {SESSIONS_SUSTAINED_S:g} s kept because {why}"


def baseline(values: pd.Series) -> float | None:
    """The quiet level of a per-second series: its BASELINE_QUANTILE, or None with too few samples."""
    values = values.dropna()
    if len(values) < BASELINE_MIN_SAMPLES:
        return None
    return float(values.quantile(BASELINE_QUANTILE))


def d_threads_bar(ncpu: int) -> int:
    """D-state threads that matter: >= 10 and >= one per CPU (the load they add equals the cores).
    Used by ``tmp-table-churn`` and ``load-from-uninterruptible-threads``."""
    return max(D_THREADS_MIN, int(ncpu * D_THREADS_PER_CPU))


# --- CPU -----------------------------------------------------------------------------------------


def busy(frame: pd.DataFrame) -> pd.Series:
    """mpstat busy percent: 100 - %idle - %iowait. %iowait is idle time with I/O outstanding
    (mpstat(1); docs/background.md, "iowait is idle time": it is available CPU), so it does not count as
    busy."""
    iowait = frame["iowait"] if "iowait" in frame else 0.0
    return 100.0 - frame["idle"] - iowait


def available_cpu(vm: pd.DataFrame) -> pd.Series:
    """vmstat idle + iowait per sample (percent); iowait missing counts as 0 (docs/background.md, "iowait is
    idle time")."""
    wa = vm["wa"] if "wa" in vm else 0
    return vm["id"] + wa


def nearest(left_ts: pd.Series, right: pd.DataFrame, column: str | pd.Series) -> pd.Series:
    """For each distinct ``left_ts``, the value of ``column`` at the nearest ``right`` sample (NaN when
    none is within the join tolerance). Indexed by the left times."""
    values = right[column] if isinstance(column, str) else column
    pairs = pair_moments(left_ts, right["ts"])
    by_ts = pd.Series(values.to_numpy(), index=right["ts"]).groupby(level=0).mean()
    out = by_ts.reindex(pairs["other_ts"]).to_numpy()
    return pd.Series(out, index=pd.Index(pairs["ts"]), dtype="float64")


def vmstat_rate_evidence(
    tl: Timeline, windows: list[Window], column: str, label: str, ncpu: int
) -> tuple[pd.DataFrame, float, list[Evidence]]:
    """The vmstat rows in ``windows`` and the evidence of a per-second ``column`` (``in``, ``cs``):
    median, max and median per CPU, and the CPU count. Returns (rows, median per CPU, evidence)."""
    vm = tl.frame("vmstat")
    rows = vm[within(vm["ts"], windows)]
    member, lines = tl.lines_of(rows)
    median = float(rows[column].median())
    per_cpu = median / ncpu
    series = f"vmstat.{column}"
    evidence = [
        Evidence(f"{label} (median)", int(median), "/s", series, member, lines),
        Evidence(f"{label} (max)", int(rows[column].max()), "/s", series, member, lines),
        Evidence(f"{column} per CPU (median)", int(round(per_cpu)), "/s per cpu", series, member, lines),
        Evidence("CPUs", ncpu, "cpus", "ncpu"),
    ]
    return rows, per_cpu, evidence


#: An I/O load: iowait at least 10 % of CPU time, or half a thread per CPU blocked on I/O (vmstat b).
IO_LOAD_IOWAIT_PCT = 10.0
IO_LOAD_BLOCKED_PER_CPU = 0.5
#: A CPU saturation, as cpu-saturation reads it: run queue >= 2 x ncpu with at most 5 % idle.
SCHED_RUNQUEUE_PER_CPU = 2.0
SCHED_IDLE_MAX_PCT = 5.0


def concurrent_load(tl: Timeline, windows: list[Window], ncpu: int) -> str:
    """The I/O or scheduling load that ran in ``windows`` (vmstat), in words, or '' when none.

    Interrupts and context switches follow such a load (an I/O completion interrupts a CPU and wakes
    a thread, often with a rescheduling IPI to another CPU; runnable threads queued behind busy cores
    are switched in and out): they are its evidence, not a separate storm (the storm of docs/background.md,
    "Interrupts", came with neither: run queue 2-5 on 32 CPUs, no iowait).
    """
    vm = tl.frame("vmstat")
    rows = vm[within(vm["ts"], windows)] if len(vm) else vm
    if not len(rows) or not ncpu:
        return ""
    wa = float(rows["wa"].mean()) if "wa" in rows else 0.0
    blocked = float(rows["b"].median()) if "b" in rows else 0.0
    if wa >= IO_LOAD_IOWAIT_PCT or blocked >= max(1.0, IO_LOAD_BLOCKED_PER_CPU * ncpu):
        return f"an I/O load (iowait {wa:.0f} %, {blocked:.0f} threads blocked on I/O)"
    runq, idle = float(rows["r"].median()), float(rows["id"].mean())
    if runq >= SCHED_RUNQUEUE_PER_CPU * ncpu and idle <= SCHED_IDLE_MAX_PCT:
        return f"a CPU saturation (run queue {runq:.0f} on {ncpu} CPUs, {idle:.0f} % idle)"
    return ""


def load_rate_evidence(tl: Timeline, rows: pd.DataFrame, ncpu: int) -> list[Evidence]:
    """Interrupts and context switches per CPU in ``rows`` (vmstat): what a load brings with it."""
    if not ncpu or not len(rows):
        return []
    member, lines = tl.lines_of(rows)
    return [
        Evidence(
            f"{label} per CPU (median)",
            int(round(float(rows[col].median()) / ncpu)),
            "/s per cpu",
            f"vmstat.{col}",
            member,
            lines,
        )
        for col, label in (("in", "interrupts in"), ("cs", "context switches cs"))
        if col in rows and rows[col].notna().any()
    ]


# --- processlist -----------------------------------------------------------------------------------


def snapshots(pl: pd.DataFrame) -> pd.Series:
    """The distinct processlist snapshot times, sorted (a Series indexed by itself)."""
    ts = pl["ts"]
    if ts.is_monotonic_increasing:  # the timeline's frames are sorted: no hashing of every row
        values = pd.DatetimeIndex(ts).asi8
        first = np.ones(len(values), dtype=bool)
        first[1:] = values[1:] != values[:-1]
        idx = pd.Index(ts[first], name="ts")
    else:
        idx = pd.Index(ts.drop_duplicates().sort_values())
    return idx.to_series()


def count_per_snapshot(pl: pd.DataFrame, mask: pd.Series) -> pd.Series:
    """Rows where ``mask`` holds, per snapshot (0 for snapshots with none), indexed by ``ts``."""
    counts = pl["ts"][np.asarray(mask, dtype=bool)].value_counts(sort=False)
    return counts.reindex(snapshots(pl).index, fill_value=0).astype("int64").rename(None)


def state_in(pl: pd.DataFrame, states: frozenset[str]) -> pd.Series:
    """Rows whose State is one of ``states`` (compared lower-case: MariaDB capitalises them); a
    categorical State is compared once per distinct value."""
    return pd.Series(value_is(pl["state"], lambda s: s.str.lower().isin(states)), index=pl.index)


def top_values(values: pd.Series, n: int = 3) -> list[tuple[str, int]]:
    """The ``n`` most frequent values (missing/empty as ``(none)``) with their counts."""
    counts = values.astype("string").fillna("").replace("", "(none)").value_counts().head(n)
    return [(str(k), int(v)) for k, v in counts.items()]


# --- status counters and variables ---------------------------------------------------------------


def status(tl: Timeline, name: str) -> pd.DataFrame:
    """One status variable from ``mysqladmin`` (``ts``, ``value``, ``per_s``, ``line_no``, ``member``),
    sorted by time; empty when the bundle has no such counter. Raises ValueError for a variable the
    timeline does not keep (``STATUS_KEPT``)."""
    if name not in STATUS_KEPT:
        raise ValueError(f"{name} is not among the status variables the timeline keeps (STATUS_KEPT)")
    ma = tl.frame("mysqladmin")
    if not len(ma) or "variable" not in ma:
        return pd.DataFrame(columns=["ts", "value", "per_s", "line_no", "member"])
    rows = ma[(ma["variable"] == name).to_numpy(dtype=bool, na_value=False)]
    return rows.sort_values("ts", kind="stable").reset_index(drop=True)


def variable(tl: Timeline, name: str) -> str | None:
    """A server variable from the bundle's -variables (None when absent)."""
    value = tl.variables.get(name)
    return None if value is None else str(value)


def variables_evidence(tl: Timeline, names: tuple[str, ...]) -> list[Evidence]:
    """Evidence for the server variables among ``names`` that the bundle has (-variables)."""
    found = ((name, variable(tl, name)) for name in names)
    return [
        Evidence(f"variable {name}", value, "", "variables") for name, value in found if value is not None
    ]


def variable_number(tl: Timeline, name: str) -> float | None:
    """A numeric server variable from the bundle's -variables; None when absent, empty or not a number."""
    raw = tl.variables.get(name)
    try:
        return float(raw) if raw not in (None, "") else None
    except ValueError:
        return None


def field_rows(tl: Timeline, frame: str, fields: tuple[str, ...]) -> pd.DataFrame:
    """Rows of a long counter frame (``netstat_s``, ``procvmstat``: columns ``ts``, ``field``,
    ``value``, ``per_s``, ``line_no``, ``member``) whose ``field`` is in ``fields``, sorted by time;
    empty (with those columns) when the bundle does not have the frame."""
    f = tl.frame(frame)
    if not len(f) or "field" not in f:
        return pd.DataFrame(columns=["ts", "field", "value", "per_s", "line_no", "member"])
    return f[f["field"].isin(fields).to_numpy(dtype=bool)].sort_values("ts", kind="stable")


def growth(rows: pd.DataFrame) -> float:
    """How much a counter grew over the capture, run by run (``member``): the sum of its non-negative
    per-sample steps of ``value`` (a reset between runs, or a restart, is not growth). 0.0 without rows."""
    if not len(rows):
        return 0.0
    total = 0.0
    for _, run in rows.groupby("member", observed=True, sort=False) if "member" in rows else [(None, rows)]:
        steps = run.sort_values("ts")["value"].diff()
        total += float(steps[steps > 0].sum())
    return total


def span(rows: pd.DataFrame) -> list[Window]:
    """One window from the first to the last row's ``ts`` (empty without rows)."""
    if not len(rows):
        return []
    return [Window(rows["ts"].min(), rows["ts"].max())]


def cite(
    tl: Timeline, label: str, value: float | int | str, unit: str, series: str, rows: pd.DataFrame
) -> Evidence:
    """Evidence of ``value`` (arguments in the order of ``Evidence``'s fields) pointing at the raw
    lines of ``rows``: their first member and its (first, last) line; neither when ``rows`` is empty."""
    member, lines = tl.lines_of(rows)
    return Evidence(label, value, unit, series, member, lines)


#: How ``column_evidence`` summarises a column: the statistic and the rounding of the value shown.
SUMMARIES = {
    "max": lambda s: int(s.max()),
    "max1": lambda s: round(float(s.max()), 1),
    "max2": lambda s: round(float(s.max()), 2),
    "median": lambda s: float(s.median()),
    "median0": lambda s: int(s.median()),
    "median1": lambda s: round(float(s.median()), 1),
    "median2": lambda s: round(float(s.median()), 2),
    "mean1": lambda s: round(float(s.mean()), 1),
    "min": lambda s: int(s.min()),
    "first": lambda s: int(s.iloc[0]),
    "last": lambda s: int(s.iloc[-1]),
}


def column_evidence(
    tl: Timeline, rows: pd.DataFrame, frame: str, specs: tuple[tuple[str, str, str, str], ...]
) -> list[Evidence]:
    """Evidence of several columns of ``rows`` (rows of the timeline frame ``frame``), all pointing at
    the same raw lines. ``specs``: (label, column, summary in SUMMARIES, unit); a column the rows
    lack, or that is all missing, is left out."""
    member, lines = tl.lines_of(rows)
    return [
        Evidence(label, SUMMARIES[how](rows[column]), unit, f"{frame}.{column}", member, lines)
        for label, column, how, unit in specs
        if column in rows and rows[column].notna().any()
    ]


def _bytes(value: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:,.1f} {unit}".replace(".0 ", " ")
    return f"{value:,.0f} bytes"


def ram_bytes(tl: Timeline) -> float | None:
    """The host's RAM from /proc/meminfo (``MemTotal``, the last sample), or None."""
    mem = tl.frame("meminfo")
    if not len(mem) or "field" not in mem:
        return None
    total = mem[(mem["field"] == "MemTotal").to_numpy(dtype=bool)]
    return float(total["kib"].iloc[-1]) * 1024 if len(total) else None


def with_setting(tl: Timeline, finding: Finding, name: str, why: str, *, size: bool = False) -> Finding:
    """``finding`` blaming the server variable ``name`` from ``-variables`` (culprit kind ``setting``,
    its value as ``statement``): the title ends with ``(name = value)`` and the explanation opens with
    the sentence "Setting: name = value: why" (``why``: what that value does here, ``{value}`` filled),
    so the setting is named before the symptom's detail. Unchanged when the bundle lacks the variable or
    the finding already names a culprit. ``size``: the value is a byte count, shown in KiB/MiB/GiB too."""
    raw = tl.variables.get(name)
    if raw in (None, "") or finding.culprit is not None:
        return finding
    value = str(raw)
    number = variable_number(tl, name)
    shown = f"{value} ({_bytes(number)})" if size and number is not None else value
    evidence = Evidence(f"variable {name}", value, "", "variables")
    culprit = Culprit(kind="setting", id=name, statement=value, evidence=(evidence,))
    sentence = f"Setting: {name} = {shown}: {why.format(value=shown)}"
    sentence = sentence if sentence.endswith(".") else sentence + "."
    title_value = _bytes(number) if size and number is not None else value
    return dataclasses.replace(
        finding,
        title=f"{finding.title} ({name} = {title_value})",
        explanation=f"{sentence} {finding.explanation}",
        evidence=finding.evidence + ((evidence,) if evidence not in finding.evidence else ()),
        culprit=culprit,
    )


# Queries, culprits and status evidence of the MySQL rule families (mysql, sessions) ---------------

#: A query named in a title is cut to this many characters (the evidence keeps it whole).
TITLE_QUERY_CHARS = 80


def short_query(query: str) -> str:
    """``query`` (a processlist Info or fingerprint) cut to ``TITLE_QUERY_CHARS`` characters with "…", for a
    title."""
    return query if len(query) <= TITLE_QUERY_CHARS else query[: TITLE_QUERY_CHARS - 1].rstrip() + "…"


def statement_culprit(tl: Timeline, active: pd.DataFrame, fp: str) -> Culprit:
    """The query behind a finding as its culprit (kind ``statement``, id its fingerprint), with its share
    of the active session-snapshots of ``active`` (the window's active processlist rows) as evidence."""
    rows = active[active["fingerprint"] == fp]
    share = round(100.0 * len(rows) / len(active), 1) if len(active) else 0.0
    member, lines = tl.lines_of(rows)
    return Culprit(
        kind="statement",
        id=fp[:500],
        statement=fp[:500],
        evidence=(
            Evidence(
                "share of the active sessions running it",
                share,
                "%",
                "processlist.fingerprint",
                member,
                lines,
            ),
        ),
    )


def status_evidence(
    tl: Timeline, windows: list[Window], tol: pd.Timedelta, specs: tuple[tuple[str, str, str], ...]
) -> list[Evidence]:
    """Evidence of status variables in the windows. ``specs``: (variable, label, how) where how is
    ``rate`` (median per second), ``max`` (the gauge's max) or ``median`` (the gauge's median)."""
    out = []
    for name, label, how in specs:
        st = status(tl, name)
        st = st.dropna(subset=["per_s"]) if how == "rate" else st
        st = st[within_slack(st["ts"], windows, tol)]
        if not len(st):
            continue
        if how == "rate":
            out.append(cite(tl, label, round(float(st["per_s"].median()), 1), "/s", f"mysqladmin.{name}", st))
        elif how == "max":
            out.append(cite(tl, label, int(st["value"].max()), "", f"mysqladmin.{name}", st))
        else:
            out.append(cite(tl, label, float(st["value"].median()), "threads", f"mysqladmin.{name}", st))
    return out
