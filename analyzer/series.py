"""The aggregated series a case page charts, in long form: one row per (series, ts, value).

Series names are ``<group>.<name>``: ``vmstat.r`` for a plain metric, ``processlist.state:Sending
data`` for a count by value, ``iostat.r_await:sda`` for a per-device or per-CPU metric. Wide sources
are reduced to what a person can read on one chart: the busiest CPUs, devices, IRQ lines, wait
channels and query fingerprints (``TOP_N`` each), plus the median across all of them where that
is the useful baseline. Per-sample detail (each session, each thread) is not here: it is stored
apart and read back by moment.
"""

from __future__ import annotations

import pandas as pd

from analyzer.timeline import Timeline

#: vmstat columns charted (procps vmstat(8) names; memory in KiB, si/so KiB/s, in/cs per second).
VMSTAT_COLUMNS = (
    "r", "b", "us", "sy", "id", "wa", "st", "in", "cs", "si", "so", "bi", "bo",
    "swpd_kib", "free_kib", "buff_kib", "cache_kib",
)  # fmt: skip
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
EMPTY = pd.DataFrame(columns=["series", "ts", "value"])


def _long(frame: pd.DataFrame, prefix: str, columns: list[str]) -> pd.DataFrame:
    if not len(frame) or not columns:
        return EMPTY
    melted = frame[["ts", *columns]].melt(id_vars="ts", var_name="series", value_name="value")
    melted["series"] = prefix + melted["series"].astype(str)
    return melted[["series", "ts", "value"]]


def _pivot_long(wide: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """A frame indexed by ts with one column per name -> long rows named ``prefix + name``."""
    if wide.empty:
        return EMPTY
    wide = wide.copy()
    wide.columns = [f"{prefix}{str(c)[:MAX_NAME]}" for c in wide.columns]
    return _long(wide.rename_axis("ts").reset_index(), "", list(wide.columns))


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
        cpu = cpu[cpu["cpu"] >= 0]
        if "since_boot" in cpu:
            cpu = cpu[~cpu["since_boot"].astype(bool)]
        busy = (100.0 - cpu["idle"]).clip(lower=0)
        wide = cpu.assign(busy=busy).pivot_table(index="ts", columns="cpu", values="busy", aggfunc="mean")
        stats = pd.DataFrame({"max": wide.max(axis=1), "median": wide.median(axis=1)})
        out += [_pivot_long(stats, "mpstat.busy:"), _pivot_long(_top(wide), "mpstat.busy:cpu")]
    intr = tl.frame("mpstat_intr")
    if len(intr) and "intr_per_s" in intr:
        intr = intr[intr["cpu"] >= 0]
        if "since_boot" in intr:
            intr = intr[~intr["since_boot"].astype(bool)]
        wide = intr.pivot_table(index="ts", columns="cpu", values="intr_per_s", aggfunc="mean")
        out += [
            _pivot_long(pd.DataFrame({"median": wide.median(axis=1)}), "mpstat.intr:"),
            _pivot_long(_top(wide), "mpstat.intr:cpu"),
        ]
    return out


def _interrupts(tl: Timeline) -> list[pd.DataFrame]:
    irq = tl.frame("interrupts")
    if not len(irq) or "per_s" not in irq:
        return []
    # grouped in place: a filtered copy of a long capture's interrupts frame costs hundreds of MB
    per_line = irq.groupby(["ts", "irq"], observed=True, sort=False)["per_s"].sum(min_count=1)
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


#: Fingerprints and wait channels remembered per case for searching past cases.
SEARCH_TERMS_EACH = 20


def search_terms(tl: Timeline) -> list[str]:
    """The capture's most frequent query fingerprints (active sessions) and wait channels of threads in
    D state, most frequent first: what the team looks past cases up by."""
    terms: list[str] = []
    pl = tl.frame("processlist")
    if len(pl) and "fingerprint" in pl:
        fps = pl.loc[pl["active"].astype(bool), "fingerprint"].astype("string").dropna()
        terms += [str(fp) for fp in fps.value_counts().index[:SEARCH_TERMS_EACH] if fp]
    ps = tl.frame("ps_threads")
    if len(ps) and "wchan" in ps and "state" in ps:
        blocked = ps.loc[ps["state"].astype("string").eq("D").fillna(False).to_numpy(), "wchan"].astype(
            "string"
        )
        terms += [str(w) for w in blocked.dropna().value_counts().index[:SEARCH_TERMS_EACH] if w and w != "-"]
    return terms


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
    ]
    parts = [p for p in parts if len(p)]
    if not parts:
        return EMPTY.copy()
    out = pd.concat(parts, ignore_index=True)
    out["value"] = pd.to_numeric(out["value"], errors="coerce").astype("float64")
    return out
