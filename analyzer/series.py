"""The aggregated series a case page charts, in long form: one row per (series, ts, value).

Series names are ``<frame>.<column>`` for plain metrics (``vmstat.r``, ``vmstat.us``) and
``<frame>.<group>:<value>`` for counts (``processlist.state:Sending data``). Per-sample detail
(each session, each thread) is not here: it is stored apart and read back by moment.
"""

from __future__ import annotations

import pandas as pd

from analyzer.timeline import Timeline

#: vmstat columns charted (procps vmstat(8) names; memory in KiB, si/so KiB/s, in/cs per second).
VMSTAT_COLUMNS = (
    "r", "b", "us", "sy", "id", "wa", "st", "in", "cs", "si", "so", "bi", "bo",
    "swpd_kib", "free_kib", "buff_kib", "cache_kib",
)  # fmt: skip
#: Distinct processlist states kept as their own series; the rest are summed under "(other)".
TOP_STATES = 12


def _long(frame: pd.DataFrame, prefix: str, columns: list[str]) -> pd.DataFrame:
    if not len(frame) or not columns:
        return pd.DataFrame(columns=["series", "ts", "value"])
    melted = frame[["ts", *columns]].melt(id_vars="ts", var_name="series", value_name="value")
    melted["series"] = prefix + melted["series"].astype(str)
    return melted[["series", "ts", "value"]]


def aggregate_series(tl: Timeline) -> pd.DataFrame:
    """All chartable series of ``tl`` as a long frame with columns ``series``, ``ts`` (UTC), ``value``."""
    parts: list[pd.DataFrame] = []
    vm = tl.frame("vmstat")
    parts.append(_long(vm, "vmstat.", [c for c in VMSTAT_COLUMNS if c in vm]))
    states = tl.processlist_counts("state")
    if len(states):
        top = states.sum().sort_values(ascending=False).index[:TOP_STATES]
        kept = states[top].copy()
        rest = states.drop(columns=top).sum(axis=1)
        if rest.any():
            kept["(other)"] = rest
        kept.columns = [f"state:{c}" for c in kept.columns]
        kept["active"] = states.sum(axis=1)
        all_sessions = tl.frame("processlist").groupby("ts").size()
        kept["sessions"] = all_sessions.reindex(kept.index, fill_value=0)
        kept = kept.rename_axis("ts").reset_index()
        parts.append(_long(kept, "processlist.", [c for c in kept.columns if c != "ts"]))
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=["series", "ts", "value"])
    out = pd.concat(parts, ignore_index=True)
    out["value"] = pd.to_numeric(out["value"], errors="coerce").astype("float64")
    return out
