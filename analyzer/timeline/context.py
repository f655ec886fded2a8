"""Derived frames from the InnoDB and kernel context members (pt-stalk -diskstats, -innodbstatus1/2).

Called by ``Timeline._derive`` once the sources are joined:

- ``iostat`` from ``diskstats`` when the bundle has no iostat: the same per-device rates iostat
  computes from /proc/diskstats (Documentation/admin-guide/iostats.rst; sysstat iostat.c), so
  ``disk-saturation`` and the disk charts work on a bundle with only the raw counters. Devices that
  did no I/O in the capture (loop, ram, idle partitions) are left out.
- ``innodb_rates``: between consecutive InnoDB monitor outputs (``-innodbstatus1`` and ``2``, 30 s
  apart in pt-stalk), ``rows_read_per_s``, ``rows_changed_per_s`` (inserted + updated + deleted),
  ``log_bytes_per_s`` (LSN advance), ``history_growth_per_s`` (history list length growth) and
  ``os_fsyncs_per_s``, stamped at the later output.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Columns of a derived iostat row (the names parsers/iostat.py gives them).
IOSTAT_FROM_DISKSTATS = (
    "ts",
    "line_no",
    "member",
    "device",
    "r_per_s",
    "w_per_s",
    "rrqm_per_s",
    "wrqm_per_s",
    "r_bytes_per_s",
    "w_bytes_per_s",
    "r_await",
    "w_await",
    "aqu_sz",
    "util_pct",
)


def iostat_from_diskstats(ds: pd.DataFrame) -> pd.DataFrame:
    """iostat's per-device rows from the ``diskstats`` frame: rows with a rate (a device's first
    snapshot has none), devices with any I/O in the capture, ``since_boot`` False."""
    rated = ds[ds["r_per_s"].notna().to_numpy()]
    if not len(rated):
        return rated
    busy = rated.groupby("device", observed=True)[["r_per_s", "w_per_s"]].sum().sum(axis=1)
    active = busy[busy > 0].index
    rows = rated[rated["device"].isin(active).to_numpy()]
    out = rows[[c for c in IOSTAT_FROM_DISKSTATS if c in rows]].copy()
    out["device"] = out["device"].astype("string").astype("category")
    out["since_boot"] = False
    return out.reset_index(drop=True)


def innodb_rates(status: pd.DataFrame) -> pd.DataFrame:
    """Rates and growth between consecutive monitor outputs (see the module docstring)."""
    s = status.sort_values("ts").drop_duplicates("ts").reset_index(drop=True)
    if len(s) < 2:
        return pd.DataFrame(columns=["ts", "line_no", "member"])
    dt = s["ts"].diff().dt.total_seconds().to_numpy()
    dt = np.where(dt > 0, dt, np.nan)

    def rate(col: str) -> np.ndarray:
        return (s[col].diff().to_numpy() / dt) if col in s else np.full(len(s), np.nan)

    changed = sum(rate(c) for c in ("rows_inserted", "rows_updated", "rows_deleted"))
    out = pd.DataFrame(
        {
            "ts": s["ts"],
            "line_no": s["line_no"],
            "member": s["member"] if "member" in s else None,
            "interval_s": dt,
            "rows_read_per_s": rate("rows_read"),
            "rows_changed_per_s": changed,
            "log_bytes_per_s": rate("lsn"),
            "history_growth_per_s": rate("history_list_length"),
            "os_fsyncs_per_s": rate("os_fsyncs"),
        }
    )
    return out.iloc[1:].reset_index(drop=True)


def derive(frames: dict[str, pd.DataFrame]) -> None:
    """Add the derived frames of this module to a timeline's ``frames`` (in place)."""
    ds = frames.get("diskstats")
    if ds is not None and len(ds) and not len(frames.get("iostat", ())):
        derived = iostat_from_diskstats(ds)
        if len(derived):
            frames["iostat"] = derived
    st = frames.get("innodb_status")
    if st is not None and len(st) >= 2:
        rates = innodb_rates(st)
        if len(rates):
            frames["innodb_rates"] = rates
