"""Clock offsets between the hosts of one case, estimated from what the captures share. Never applied:
the ingest stores them (``Host.offset_s`` / ``offset_origin``) and the page shows them; every host keeps
its own times.

``estimate_offsets(timelines)`` returns, for each host it can place against the case's first host (the
reference, offset 0), ``(offset_s, origin)``: how many seconds the host's clock reads *ahead* of the
reference's (subtract it from the host's times to put them on the reference's clock) and how it was
found. Two clues, the first that applies:

- **Galera seqno** (``galera``): every node commits the same write-set under the same seqno
  (``wsrep_last_committed`` in ``mysqladmin``). For each sample of the host (its time t, seqno s) the
  reference's time at seqno s is interpolated between the reference's own samples; the offset is the
  median of t - t_ref over the samples inside the reference's range. A node that applies late (flow
  control, a slow applier) adds its apply delay: the origin says so.
- **Replication positions** (``replication``): a replica's I/O thread receives the source's binlog as
  it is written, so its Read_Master_Log_Pos at time t equals the source's binlog position at about t.
  The source's position is read from Binlog_bytes_written, which grows with the file position byte for
  byte (MariaDB; one binlog file in the replica's snapshots) but differs from it by a constant: the
  offset is the shift (within OFFSET_RANGE_S) that makes the two curves differ by a constant, kept
  only when it fits clearly better than shifts a second away (a steady write rate cannot tell an
  offset from the constant). The network delay of the I/O thread (milliseconds on a LAN) is added.

Hosts with no shared clue are left out. Units: seconds (float), origin a sentence in the field's terms.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analyzer.cluster import topology
from analyzer.detect import status
from analyzer.timeline.timeline import Timeline

#: Samples needed on both hosts for an estimate (a 1-s capture of 20 s gives 20).
MIN_PAIRS = 5
#: Replication: the offsets tried (seconds either side, step) when matching position to binlog growth.
OFFSET_RANGE_S = 3.0
OFFSET_STEP_S = 0.05
#: ... and how much better the best one must fit than any 1 s away (spread of the differences, bytes).
DISTINCT_FACTOR = 1.5


def _seconds(ts: pd.Series) -> np.ndarray:
    """UTC timestamps as float seconds since the epoch."""
    return pd.to_datetime(ts, utc=True).astype("int64").to_numpy() / 1e9


def _matched(t_host: np.ndarray, v_host: np.ndarray, t_ref: np.ndarray, v_ref: np.ndarray) -> np.ndarray:
    """For each host sample (time, value) inside the reference's value range where the reference's
    value moved, the host time minus the reference's time at that value (linear interpolation)."""
    order = np.argsort(t_ref)
    t_ref, v_ref = t_ref[order], v_ref[order]
    keep = np.r_[True, np.diff(v_ref) > 0]  # strictly increasing for interpolation
    t_ref, v_ref = t_ref[keep], v_ref[keep]
    if len(v_ref) < 2:
        return np.array([])
    inside = (v_host > v_ref[0]) & (v_host < v_ref[-1])
    return t_host[inside] - np.interp(v_host[inside], v_ref, t_ref)


def galera_offset(host: Timeline, ref: Timeline) -> tuple[float, int] | None:
    """(median seconds the host's clock reads ahead of ``ref``'s, samples used) from the two nodes'
    ``wsrep_last_committed``; None with fewer than MIN_PAIRS usable samples."""
    a, b = status(host, "wsrep_last_committed"), status(ref, "wsrep_last_committed")
    if len(a) < MIN_PAIRS or len(b) < MIN_PAIRS:
        return None
    d = _matched(_seconds(a["ts"]), a["value"].to_numpy(float), _seconds(b["ts"]), b["value"].to_numpy(float))
    return (float(np.median(d)), len(d)) if len(d) >= MIN_PAIRS else None


def resolution(tl: Timeline) -> float:
    """The interval of the host's status samples (s, median step of mysqladmin): no estimate from
    them is finer (pt-stalk times its samples from the collection start, a second apart)."""
    ts = status(tl, "Questions")["ts"]
    steps = ts.drop_duplicates().sort_values().diff().dt.total_seconds().dropna()
    return float(steps.median()) if len(steps) else 1.0


def replication_offset(replica: Timeline, rows: pd.DataFrame, source: Timeline) -> tuple[float, int] | None:
    """(median seconds the replica's clock reads ahead of the source's, samples used) from the
    replica's Read_Master_Log_Pos (``rows``: its replica_status rows of the channel) against the
    source's Binlog_bytes_written; None when the replica's snapshots span two binlog files, or fewer
    than MIN_PAIRS samples match."""
    rows = rows.dropna(subset=["read_source_log_pos"]).sort_values("ts")
    if "source_log_file" in rows and rows["source_log_file"].nunique() > 1:
        return None
    written = status(source, "Binlog_bytes_written").dropna(subset=["value"])
    if len(rows) < MIN_PAIRS or len(written) < MIN_PAIRS:
        return None
    t_r, pos = _seconds(rows["ts"]), rows["read_source_log_pos"].to_numpy(float)
    t_s, w = _seconds(written["ts"]), written["value"].to_numpy(float)
    # position(t) = written(t - d) + c: for each candidate d the best c is the mean difference; the d
    # whose differences vary least wins, if it is clearly better than d +- 1 s (a steady write rate
    # cannot tell a clock offset from a constant)
    inside = (t_r >= t_s[0] + OFFSET_RANGE_S) & (t_r <= t_s[-1] - OFFSET_RANGE_S)
    if inside.sum() < MIN_PAIRS:
        inside = (t_r >= t_s[0]) & (t_r <= t_s[-1])
    if inside.sum() < MIN_PAIRS:
        return None
    t_r, pos = t_r[inside], pos[inside]
    grid = np.arange(-OFFSET_RANGE_S, OFFSET_RANGE_S + OFFSET_STEP_S / 2, OFFSET_STEP_S)
    spread = np.array([np.std(pos - np.interp(t_r - d, t_s, w)) for d in grid])
    k = int(np.argmin(spread))
    away = spread[np.abs(grid - grid[k]) >= 1.0]
    if not len(away) or spread[k] * DISTINCT_FACTOR > away.min():
        return None
    return float(grid[k]), int(inside.sum())


def estimate_offsets(timelines: Mapping[str, Timeline]) -> dict[str, tuple[float, str]]:
    """Host name -> (seconds its clock reads ahead of the first host's, origin), for the hosts a shared
    clue places (module docstring); the first host is (0.0, "reference clock") when any other is placed.
    Never shifts a time."""
    names = list(timelines)
    if len(names) < 2:
        return {}
    ref_name = names[0]
    ref = timelines[ref_name]
    out: dict[str, tuple[float, str]] = {}
    links = topology.replication_links(timelines)
    for name in names[1:]:
        tl = timelines[name]
        found = galera_offset(tl, ref) if topology.is_galera(tl) and topology.is_galera(ref) else None
        if found is not None:
            out[name] = (
                round(found[0], 3),
                (
                    f"same Galera seqno (wsrep_last_committed) on {name} and {ref_name}, median of "
                    f"{found[1]} "
                    f"samples, to within {resolution(tl):.0f} s (the sample interval); includes {name}'s "
                    "apply delay"
                ),
            )
            continue
        for link in links:
            pair = {link.replica, link.source}
            if pair != {name, ref_name}:
                continue
            if link.replica == name:
                est = replication_offset(tl, link.rows, ref)
                sign = 1.0
            else:
                est = replication_offset(ref, link.rows, tl)
                sign = -1.0
            if est is not None:
                out[name] = (
                    round(sign * est[0], 3),
                    (
                        f"{link.replica}'s Read_Master_Log_Pos against {link.source}'s Binlog_bytes_written, "
                        f"best fit over {est[1]} samples, to within {resolution(tl):.0f} s (the sample "
                        "interval); includes the I/O thread's network delay"
                    ),
                )
                break
    if out:
        out[ref_name] = (0.0, "reference clock (the case's first host)")
    return out
