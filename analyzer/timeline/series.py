"""The aggregated series a case page charts, in long form: one row per (series, ts, value).

Series names are ``<group>.<name>``: ``vmstat.r`` for a plain metric, ``processlist.state:Sending
data`` for a count by value, ``iostat.r_await:sda`` for a per-device or per-CPU metric. Wide sources
are reduced to what a person can read on one chart: the busiest CPUs, devices, IRQ lines, wait
channels and query fingerprints (``TOP_N`` each), plus the median across all of them where that
is the useful baseline. Per-sample detail (each session, each thread) is not here: it is stored
apart and read back by moment.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from analyzer.timeline.timeline import Timeline

#: vmstat columns charted (procps vmstat(8) names; memory in KiB, si/so KiB/s, in/cs per second).
VMSTAT_COLUMNS = (
    "r",
    "b",
    "us",
    "sy",
    "id",
    "wa",
    "st",
    "in",
    "cs",
    "si",
    "so",
    "bi",
    "bo",
    "swpd_kib",
    "free_kib",
    "buff_kib",
    "cache_kib",
)
#: Lines per chart for wide sources: more than 8 colours on one chart cannot be told apart.
TOP_N = 8
#: Distinct processlist states kept as their own series; the rest are summed under "(other)".
TOP_STATES = 12
#: Query fingerprints charted (the most frequent among active sessions).
TOP_FINGERPRINTS = 6
#: Longest fingerprint kept in a series name (the name column is 200 characters).
MAX_NAME = 170
#: iostat columns charted per device (sysstat iostat(1); bytes/s, ms, requests, percent).
IOSTAT_COLUMNS = ("r_bytes_per_s", "w_bytes_per_s", "r_await", "w_await", "aqu_sz", "util_pct")
#: Status counters charted as rates, and gauges charted as values (mysqladmin ext).
MYSQLADMIN_RATES = (
    "Questions",
    "Com_commit",
    "Created_tmp_disk_tables",
    "Created_tmp_tables",
    "Innodb_data_fsyncs",
)
MYSQLADMIN_GAUGES = ("Threads_running", "Threads_connected")
#: InnoDB monitor series: gauges of each output, and the rates between two outputs
#: (analyzer/timeline/context.py).
INNODB_GAUGES = ("history_list_length", "checkpoint_age_bytes", "semaphore_waits", "transactions_active")
INNODB_RATES = ("rows_read_per_s", "rows_changed_per_s", "log_bytes_per_s", "history_growth_per_s")
#: Kernel counters charted as per-second rates (netstat -s, /proc/vmstat names).
NETSTAT_RATES = (
    "InSegs",
    "OutSegs",
    "RetransSegs",
    "ListenOverflows",
    "ListenDrops",
    "ActiveOpens",
    "PassiveOpens",
)
PROCVMSTAT_RATES = (
    "pgscan_direct",
    "allocstall_normal",
    "allocstall_movable",
    "allocstall",
    "compact_stall",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "thp_fault_alloc",
)
#: Every series ``aggregate_series`` writes: an exact name, or a family's prefix (ending ``:``; the
#: CPU, device, IRQ line, state, wait channel, fingerprint or counter after it). What a chart may
#: read: web/timeline/chartdefs.py checks its charts against it when it is imported.
SERIES = (
    *(f"vmstat.{c}" for c in VMSTAT_COLUMNS),
    "processlist.active",
    "processlist.sessions",
    "processlist.state:",
    "processlist.fingerprint:",
    "mpstat.busy:",
    "mpstat.cpu_busy:",
    "mpstat.intr:",
    "mpstat.cpu_intr:",
    "interrupts.irq:",
    *(f"iostat.{c}:" for c in IOSTAT_COLUMNS),
    "threads.state:",
    "threads.wchan:",
    "mysqladmin.rate:",
    "mysqladmin.gauge:",
    *(f"innodb.{c}" for c in (*INNODB_GAUGES, *INNODB_RATES)),
    "netstat_s.rate:",
    "procvmstat.rate:",
)


def is_series(name: str) -> bool:
    """Whether ``name`` is a series ``aggregate_series`` can write (``SERIES``).

    >>> is_series("vmstat.r"), is_series("iostat.util_pct:sda"), is_series("vmstat.rr")
    (True, True, False)
    """
    return name in SERIES or any(p.endswith(":") and name.startswith(p) for p in SERIES)


EMPTY = pd.DataFrame(columns=["series", "ts", "value"])


def _long(frame: pd.DataFrame, prefix: str, columns: list[str]) -> pd.DataFrame:
    """Columns of ``frame`` (with its ``ts``) as long rows named ``prefix + column``."""
    if not len(frame) or not columns:
        return EMPTY
    return _stacked(frame["ts"], frame[columns], [prefix + str(c) for c in columns])


def _pivot_long(wide: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """A frame indexed by ts with one column per name -> long rows named ``prefix + name``."""
    if wide.empty:
        return EMPTY
    return _stacked(wide.index, wide, [f"{prefix}{str(c)[:MAX_NAME]}" for c in wide.columns])


def _stacked(ts: pd.Series | pd.Index, wide: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The columns of ``wide`` one after the other (as ``DataFrame.melt`` would), as rows ``series``
    (a category of ``names``, one per column; two columns may share a name), ``ts`` (``ts`` aligned
    with the rows of ``wide``), ``value`` (float64; what is not a number is NaN). Built from
    arrays: melt costs about ten times more on the few hundred thousand points of a capture."""
    n, k = wide.shape
    numeric = all(pd.api.types.is_numeric_dtype(d) for d in wide.dtypes)
    if numeric:
        values = wide.to_numpy(dtype="float64", na_value=np.nan).ravel(order="F")
    else:
        values = np.concatenate(
            [
                pd.to_numeric(wide.iloc[:, j], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
                for j in range(k)
            ]
        )
    codes, distinct = pd.factorize(pd.Index(names, dtype=object))
    return pd.DataFrame(
        {
            "series": pd.Categorical.from_codes(np.repeat(codes, n), categories=distinct),
            "ts": pd.DatetimeIndex(ts).take(np.tile(np.arange(n), k)),
            "value": values,
        }
    )


def _top(wide: pd.DataFrame, n: int = TOP_N) -> pd.DataFrame:
    """The ``n`` columns with the largest total."""
    return wide[wide.sum().sort_values(ascending=False).index[:n]] if len(wide.columns) > n else wide


def _vmstat(tl: Timeline) -> pd.DataFrame:
    vm = tl.frame("vmstat")
    return _long(vm, "vmstat.", [c for c in VMSTAT_COLUMNS if c in vm])


def _sessions(tl: Timeline) -> pd.Series:
    """Sessions per processlist snapshot, idle ones included (``processlist_sessions``, counted before
    the idle rows were dropped; rows of the processlist frame when a timeline has no counts)."""
    counts = tl.frame("processlist_sessions")
    if len(counts) and "sessions" in counts:
        return counts.groupby("ts")["sessions"].sum()
    return tl.frame("processlist").groupby("ts").size()


def _processlist(tl: Timeline) -> list[pd.DataFrame]:
    states = tl.processlist_counts("state")
    if not len(states):
        return []
    top = states.sum().sort_values(ascending=False).index[:TOP_STATES]
    kept = states[top].copy()
    rest = states.drop(columns=top).sum(axis=1)
    if rest.any():
        kept["(other)"] = rest
    totals = pd.DataFrame(
        {
            "active": states.sum(axis=1),
            "sessions": _sessions(tl).reindex(states.index, fill_value=0),
        }
    )
    fps = tl.processlist_counts("fingerprint", top=TOP_FINGERPRINTS + 1)
    fps = _top(fps.drop(columns=["(none)"], errors="ignore"), TOP_FINGERPRINTS)
    return [
        _pivot_long(kept, "processlist.state:"),
        _pivot_long(totals, "processlist."),
        _pivot_long(fps, "processlist.fingerprint:"),
    ]


def _mpstat(tl: Timeline) -> list[pd.DataFrame]:
    out = []
    cpu = tl.frame("mpstat_cpu")
    if len(cpu) and "idle" in cpu:
        cpu = cpu[[c for c in ("ts", "cpu", "idle", "since_boot") if c in cpu]]  # not a copy of every column
        cpu = cpu[cpu["cpu"] >= 0]
        if "since_boot" in cpu:
            cpu = cpu[~cpu["since_boot"].astype(bool)]
        busy = (100.0 - cpu["idle"]).clip(lower=0)
        wide = cpu.assign(busy=busy).pivot_table(index="ts", columns="cpu", values="busy", aggfunc="mean")
        stats = pd.DataFrame({"max": wide.max(axis=1), "median": wide.median(axis=1)})
        out += [
            _pivot_long(stats, "mpstat.busy:"),
            _pivot_long(_top(wide), "mpstat.busy:cpu"),
            # Every CPU, for the CPU x time heatmap (a line each would be a tangle of 64).
            _pivot_long(wide, "mpstat.cpu_busy:"),
        ]
    intr = tl.frame("mpstat_intr")
    if len(intr) and "intr_per_s" in intr:
        intr = intr[[c for c in ("ts", "cpu", "intr_per_s", "since_boot") if c in intr]]
        intr = intr[intr["cpu"] >= 0]
        if "since_boot" in intr:
            intr = intr[~intr["since_boot"].astype(bool)]
        wide = intr.pivot_table(index="ts", columns="cpu", values="intr_per_s", aggfunc="mean")
        out += [
            _pivot_long(pd.DataFrame({"median": wide.median(axis=1)}), "mpstat.intr:"),
            _pivot_long(_top(wide), "mpstat.intr:cpu"),
            _pivot_long(wide, "mpstat.cpu_intr:"),
        ]
    return out


#: Rows grouped at a time by the per-group reductions of the interrupts frame (a day of a 64-CPU
#: server's /proc/interrupts is 9.4 M rows, and a groupby over all of them at once holds several
#: arrays of that length: 300 MB): partial results are combined, a few hundred thousand rows at most.
GROUP_ROWS = 1 << 20


def _grouped_in_slices(frame: pd.DataFrame, keys: list[str], column: str, how: list[str]) -> pd.DataFrame:
    """``frame.groupby(keys, observed=True, sort=False)[column].agg(how)`` for ``how`` among ``sum``
    and ``count`` (sums of the non-missing values, NaN where none; their number), worked out on
    slices of ``GROUP_ROWS`` rows and combined: the same groups in the same order (first
    appearance), the values summed as float64 (sums may differ from one pass in their last bits)."""
    parts = [
        frame.iloc[start : start + GROUP_ROWS][[*keys, column]]
        .astype({column: "float64"})  # partial sums of float32 rates would round at each step
        .groupby(keys, observed=True, sort=False)[column]
        .agg(how)
        for start in range(0, len(frame), GROUP_ROWS)
    ]
    joined = pd.concat(parts)
    if len(parts) == 1:
        out = joined
    else:
        out = joined.groupby(level=list(range(len(keys))), observed=True, sort=False).sum(min_count=1)
    if "count" in how:
        out["count"] = out["count"].fillna(0).astype("int64")
    return out


def _interrupts(tl: Timeline) -> list[pd.DataFrame]:
    irq = tl.frame("interrupts")
    if not len(irq) or "per_s" not in irq:
        return []
    per_line = _grouped_in_slices(irq, ["ts", "irq"], "per_s", ["sum", "count"])
    per_line = per_line["sum"].where(per_line["count"] > 0)  # sum(min_count=1): NaN where none was read
    lines = per_line.dropna().unstack("irq").sort_index()
    if lines.empty:
        return []
    return [_pivot_long(_top(lines), "interrupts.irq:")]


def _iostat(tl: Timeline) -> list[pd.DataFrame]:
    io = tl.frame("iostat")
    if not len(io) or "device" not in io:
        return []
    if "since_boot" in io:
        io = io[~io["since_boot"].astype(bool)]
    load = [c for c in ("r_bytes_per_s", "w_bytes_per_s", "r_per_s", "w_per_s") if c in io]
    busiest = (
        io.groupby("device", observed=True)[load].sum().sum(axis=1).sort_values(ascending=False).index[:TOP_N]
        if load
        else []
    )
    io = io[io["device"].isin(busiest)]
    out = []
    for column in IOSTAT_COLUMNS:
        if column in io:
            wide = io.pivot_table(index="ts", columns="device", values=column, aggfunc="mean", observed=True)
            out.append(_pivot_long(wide, f"iostat.{column}:"))
    return out


def _threads(tl: Timeline) -> list[pd.DataFrame]:
    ps = tl.frame("ps_threads")
    counts = tl.frame("ps_state_counts")
    if not len(ps) or not len(counts):
        return []
    states = counts.pivot_table(
        index="ts", columns="state", values="threads", aggfunc="sum", observed=True
    ).fillna(0)
    out = [_pivot_long(states, "threads.state:")]
    if "wchan" in ps:
        blocked = ps[ps["state"].astype("string") == "D"]
        if len(blocked):
            wchan = blocked["wchan"].astype("string").fillna("").replace("", "-")
            wide = blocked.assign(_w=wchan).groupby(["ts", "_w"]).size().unstack(fill_value=0)
            wide = wide.reindex(states.index, fill_value=0)
            out.append(_pivot_long(_top(wide), "threads.wchan:"))
    return out


def _mysqladmin(tl: Timeline) -> list[pd.DataFrame]:
    status = tl.frame("mysqladmin")
    if not len(status) or "variable" not in status:
        return []
    rates = status[status["variable"].isin(MYSQLADMIN_RATES)].dropna(subset=["per_s"])
    gauges = status[status["variable"].isin(MYSQLADMIN_GAUGES)]
    out = []
    if len(rates):
        out.append(
            _pivot_long(
                rates.pivot_table(
                    index="ts", columns="variable", values="per_s", aggfunc="mean", observed=True
                ),
                "mysqladmin.rate:",
            )
        )
    if len(gauges):
        out.append(
            _pivot_long(
                gauges.pivot_table(
                    index="ts", columns="variable", values="value", aggfunc="mean", observed=True
                ),
                "mysqladmin.gauge:",
            )
        )
    return out


def _innodb(tl: Timeline) -> list[pd.DataFrame]:
    out = []
    st = tl.frame("innodb_status")
    cols = [c for c in INNODB_GAUGES if c in st]
    if len(st) and cols:
        out.append(_long(st, "innodb.", cols))
    rates = tl.frame("innodb_rates")
    cols = [c for c in INNODB_RATES if c in rates]
    if len(rates) and cols:
        out.append(_long(rates, "innodb.", cols))
    return out


def _counter_rates(tl: Timeline, frame: str, fields: tuple[str, ...]) -> list[pd.DataFrame]:
    """Per-second rates of the ``fields`` of a long counter frame (``netstat_s``, ``procvmstat``)."""
    f = tl.frame(frame)
    if not len(f) or "field" not in f:
        return []
    rows = f[f["field"].isin(fields).to_numpy(dtype=bool)].dropna(subset=["per_s"])
    if not len(rows):
        return []
    wide = rows.pivot_table(index="ts", columns="field", values="per_s", aggfunc="mean", observed=True)
    return [_pivot_long(wide, f"{frame}.rate:")]


#: Fingerprints and wait channels remembered per case for searching past cases.
SEARCH_TERMS_EACH = 20


def top_fingerprints(tl: Timeline) -> list[str]:
    """The capture's most frequent query fingerprints among active processlist sessions (literals
    replaced by ``?``), most frequent first, at most ``SEARCH_TERMS_EACH``."""
    pl = tl.frame("processlist")
    if not len(pl) or "fingerprint" not in pl:
        return []
    fps = pl.loc[pl["active"].astype(bool), "fingerprint"].astype("string").dropna()
    return [str(fp) for fp in fps.value_counts().index[:SEARCH_TERMS_EACH] if fp]


def top_wait_channels(tl: Timeline) -> list[str]:
    """The wait channels (ps ``wchan``) of threads in D state (uninterruptible sleep), most frequent
    first, at most ``SEARCH_TERMS_EACH``; ``-`` (no channel) is left out."""
    ps = tl.frame("ps_threads")
    if not len(ps) or "wchan" not in ps or "state" not in ps:
        return []
    in_d = ps["state"].astype("string").eq("D").fillna(False).to_numpy()
    blocked = ps.loc[in_d, "wchan"].astype("string").dropna()
    return [str(w) for w in blocked.value_counts().index[:SEARCH_TERMS_EACH] if w and w != "-"]


def search_terms(tl: Timeline) -> list[str]:
    """The capture's most frequent query fingerprints (active sessions) and wait channels of threads in
    D state, most frequent first: what the team looks past cases up by."""
    return top_fingerprints(tl) + top_wait_channels(tl)


#: IRQ lines of the IRQ x CPU heatmap: the busiest ones (a heatmap row each stays readable).
IRQ_CPU_LINES = 16


def irq_cpu_rates(tl: Timeline, lines: int = IRQ_CPU_LINES) -> pd.DataFrame:
    """Mean interrupts per second of the busiest ``lines`` IRQ lines on each CPU over the capture
    (/proc/interrupts counters turned into rates): a frame indexed by IRQ line (busiest first) with
    one column per CPU number (int, ascending); empty without interrupts. Shows where the kernel
    delivers each device's interrupts (interrupt-imbalance: one CPU taking a NIC's queues)."""
    irq = tl.frame("interrupts")
    if not len(irq) or "per_s" not in irq or "cpu" not in irq:
        return pd.DataFrame()
    totals = _grouped_in_slices(irq, ["irq", "cpu"], "per_s", ["sum", "count"])
    mean = (totals["sum"] / totals["count"].where(totals["count"] > 0)).dropna().astype(irq["per_s"].dtype)
    mean = mean[mean.index.get_level_values("cpu") >= 0]
    if mean.empty:
        return pd.DataFrame()
    wide = mean.unstack("cpu").fillna(0.0).sort_index(axis=1)
    order = wide.sum(axis=1).sort_values(ascending=False).index[:lines]
    wide = wide.loc[order]
    wide.index = wide.index.astype(str)
    return wide


def aggregate_series(tl: Timeline) -> pd.DataFrame:
    """All chartable series of ``tl`` as a long frame with columns ``series``, ``ts`` (UTC), ``value``."""
    parts = [
        _vmstat(tl),
        *_processlist(tl),
        *_mpstat(tl),
        *_interrupts(tl),
        *_iostat(tl),
        *_threads(tl),
        *_mysqladmin(tl),
        *_innodb(tl),
        *_counter_rates(tl, "netstat_s", NETSTAT_RATES),
        *_counter_rates(tl, "procvmstat", PROCVMSTAT_RATES),
    ]
    parts = [p for p in parts if len(p)]
    if not parts:
        return EMPTY.copy()
    out = pd.concat(parts, ignore_index=True)
    # the parts' categories differ: one set for all, without a string per point
    out["series"] = union_categoricals([p["series"] for p in parts])
    return out
