"""The InnoDB row-lock graph across snapshots: who waits for whom (``edges``), the root blockers of
each snapshot and how long the bundle proves each held (``sightings``), and the stretches in which one
blocker is shown holding (``stretches``), from ``-lock-waits`` (sys.innodb_lock_waits) or
INNODB_LOCK_WAITS joined to INNODB_TRX, and the transaction lists (INNODB_TRX, the monitor's
TRANSACTIONS). ``analyzer.evidence.blockers`` names the holders from it. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analyzer.findings import Window
from analyzer.timeline import pairing
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import within


def _ids(values: pd.Series) -> pd.Series:
    return pd.to_numeric(values, errors="coerce")


def edges(tl: Timeline) -> pd.DataFrame:
    """Row-lock waits as ``ts, waiting, blocking`` (processlist Ids) with the rows behind them: from
    ``lock_waits`` (``wait_s``, ``idle_in_trx_s``, ``waiting_query``, ``waiting_table`` ...), else
    INNODB_LOCK_WAITS joined to INNODB_TRX of the same snapshot (``blocking_trx_id``, the waiter's
    ``wait_s`` and ``waiting_query``)."""
    lw = tl.frame("lock_waits")
    if len(lw) and {"waiting_thread", "blocking_thread"} <= set(lw.columns):
        out = lw.assign(waiting=_ids(lw["waiting_thread"]), blocking=_ids(lw["blocking_thread"]))
        return out.dropna(subset=["waiting", "blocking"])
    raw, trx = tl.frame("innodb_lock_waits_raw"), tl.frame("innodb_trx")
    if not len(raw) or not len(trx) or "thread_id" not in trx:
        return pd.DataFrame(columns=["ts", "waiting", "blocking"])
    cols = ["ts", "trx_id", "thread_id"] + [c for c in ("wait_s", "query") if c in trx]
    threads = trx[cols].drop_duplicates(["ts", "trx_id"])
    waiting = threads.rename(
        columns={"trx_id": "requesting_trx_id", "thread_id": "waiting", "query": "waiting_query"}
    )
    out = raw.merge(waiting, on=["ts", "requesting_trx_id"])
    threads = threads[["ts", "trx_id", "thread_id"]]
    out = out.merge(
        threads.rename(columns={"trx_id": "blocking_trx_id", "thread_id": "blocking"}),
        on=["ts", "blocking_trx_id"],
    )
    return out.dropna(subset=["waiting", "blocking"])


def waiting_sessions(tl: Timeline, windows: list[Window]) -> frozenset[int]:
    """The processlist Ids waiting for a row lock in ``windows`` (``-lock-waits`` ``waiting_thread``,
    else INNODB_LOCK_WAITS joined to INNODB_TRX): the sessions a lock pile-up is made of."""
    found = edges(tl)
    if not len(found):
        return frozenset()
    if windows:
        found = found[within(found["ts"], windows)]
    return frozenset(int(w) for w in found["waiting"].unique())


def _roots(edges: pd.DataFrame) -> pd.DataFrame:
    """Per snapshot, each root blocker (blocks, is not waiting) and how many waiters lead to it:
    ``ts, thread, blocks``."""
    rows = []
    for ts, snap in edges.groupby("ts", sort=True):
        blocked_by: dict[float, set[float]] = {}
        for w, b in zip(snap["waiting"], snap["blocking"], strict=True):
            blocked_by.setdefault(b, set()).add(w)
        waiting = set(snap["waiting"])
        for root in set(snap["blocking"]) - waiting:
            seen: set[float] = set()
            todo = [root]
            while todo:
                for w in blocked_by.get(todo.pop(), ()):
                    if w not in seen:
                        seen.add(w)
                        todo.append(w)
            rows.append((ts, int(root), len(seen - {root})))
    return pd.DataFrame(rows, columns=["ts", "thread", "blocks"])


def sightings(found: pd.DataFrame, tl: Timeline) -> pd.DataFrame:
    """Per snapshot, each root blocker: ``ts thread blocks proven_s trx_id``. ``proven_s``: how long
    it has held the lock by then, as the bundle proves it: the longest wait of a session queued
    directly on it (``wait_s``) or its own idleness inside its transaction (``idle_in_trx_s``), 0
    when neither is known; ``trx_id``: its transaction when the bundle says (the raw lock waits'
    ``blocking_trx_id``, else the transaction lists of the same moment), NA otherwise."""
    roots = _roots(found)
    if not len(roots):
        return roots.assign(proven_s=pd.Series(dtype=float), trx_id=pd.Series(dtype="string"))
    direct = found.assign(thread=found["blocking"].astype(int))
    proven = [direct[c] for c in ("wait_s", "idle_in_trx_s") if c in direct]
    direct = direct.assign(proven_s=pd.concat(proven, axis=1).max(axis=1) if proven else 0.0)
    agg = direct.groupby(["ts", "thread"], as_index=False)["proven_s"].max()
    roots = roots.merge(agg, on=["ts", "thread"], how="left").fillna({"proven_s": 0.0})
    if "blocking_trx_id" in found:
        ids = direct[["ts", "thread", "blocking_trx_id"]].drop_duplicates(["ts", "thread"])
        ids = ids.rename(columns={"blocking_trx_id": "trx_id"})
    else:
        ids = _paired_transactions(tl, roots["ts"])[["ts", "thread", "trx_id"]]
    out = roots.merge(ids.drop_duplicates(["ts", "thread"]), on=["ts", "thread"], how="left")
    return out.assign(trx_id=out["trx_id"].astype("string"))


def _transactions(tl: Timeline) -> pd.DataFrame:
    """``ts thread trx_id active_s``: INNODB_TRX, else the monitor's TRANSACTIONS (not both: their
    trx ids differ on MariaDB)."""
    for name in ("innodb_trx", "innodb_transactions"):
        trx = tl.frame(name)
        if len(trx) and {"thread_id", "trx_id"} <= set(trx.columns):
            active = trx["active_s"] if "active_s" in trx else pd.Series(float("nan"), index=trx.index)
            out = pd.DataFrame(
                {
                    "ts": trx["ts"],
                    "thread": _ids(trx["thread_id"]),
                    "trx_id": trx["trx_id"].astype("string"),
                    "active_s": active,
                }
            )
            return out.dropna(subset=["thread", "trx_id"]).assign(thread=lambda f: f["thread"].astype(int))
    return pd.DataFrame(columns=["ts", "thread", "trx_id", "active_s"])


def _paired_transactions(tl: Timeline, at: pd.Series) -> pd.DataFrame:
    """The transactions of ``_transactions`` moved to the nearest moment of ``at`` (pt-stalk writes
    -transactions and -lock-waits in the same second; ``pairing.MIN_TOLERANCE``)."""
    trx = _transactions(tl)
    if not len(trx) or not len(at):
        return trx
    pairs = pairing.pair_moments(trx["ts"], at, tolerance=pairing.MIN_TOLERANCE).dropna()
    moved = trx.assign(ts=pd.to_datetime(trx["ts"], utc=True).astype("datetime64[ns, UTC]"))
    return moved.merge(pairs, on="ts").drop(columns=["ts"]).rename(columns={"other_ts": "ts"})


@dataclass(frozen=True, slots=True)
class Stretch:
    """One stretch in which one root blocker is shown holding: ``start`` (earliest moment proven,
    UTC), ``end`` (its last sighting), ``first`` (its first sighting), ``trx_ids`` (its transactions
    seen), ``blocks`` (most waiters at once), ``sightings`` (snapshots)."""

    thread: int
    start: pd.Timestamp
    first: pd.Timestamp
    end: pd.Timestamp
    trx_ids: frozenset[str]
    blocks: int
    sightings: int

    def held_s(self, step: float) -> float:
        """Seconds shown holding: from the earliest proven moment to the last sighting, and for the
        same transaction seen in several snapshots, first to last sighting plus one step."""
        proven = (self.end - self.start).total_seconds()
        return max(proven, (self.end - self.first).total_seconds() + step) if self.sightings > 1 else proven


def stretches(sightings: pd.DataFrame) -> list[Stretch]:
    """The stretches of ``_sightings`` in which each blocker is shown holding: consecutive sightings
    of a thread join when the later one's proof reaches back to the earlier one (``ts - proven_s <=``
    the earlier sighting) or both show the same trx id; otherwise a new stretch starts (a session
    blocking again in a new transaction)."""
    out: list[Stretch] = []
    for thread, seen in sightings.sort_values("ts", kind="stable").groupby("thread", sort=False):
        run: Stretch | None = None
        for ts, blocks, proven, trx in zip(
            seen["ts"], seen["blocks"], seen["proven_s"], seen["trx_id"], strict=True
        ):
            start = ts - pd.Timedelta(seconds=float(proven) if pd.notna(proven) else 0.0)
            trx_ids = frozenset({str(trx)}) if pd.notna(trx) else frozenset()
            if run is not None and (start <= run.end or trx_ids & run.trx_ids):
                run = Stretch(
                    int(thread),
                    min(run.start, start),
                    run.first,
                    ts,
                    run.trx_ids | trx_ids,
                    max(run.blocks, int(blocks)),
                    run.sightings + 1,
                )
                continue
            if run is not None:
                out.append(run)
            run = Stretch(int(thread), start, ts, ts, trx_ids, int(blocks), 1)
        if run is not None:
            out.append(run)
    return out


def holding_trx(tl: Timeline, h: Stretch, step: float) -> str | None:
    """The transaction of ``h``: the one its sightings show, else the session's transaction seen in
    the transaction lists while it held (within a step of the stretch), the oldest of them."""
    if h.trx_ids:
        return sorted(h.trx_ids)[0]
    trx = _transactions(tl)
    if not len(trx):
        return None
    slack = pd.Timedelta(seconds=max(step, pairing.MIN_TOLERANCE.total_seconds()))
    near = trx[
        (trx["thread"] == h.thread).to_numpy()
        & (trx["ts"] >= h.start - slack).to_numpy()
        & (trx["ts"] <= h.end + slack).to_numpy()
    ]
    if not len(near) or near["trx_id"].nunique() > 1 and near["active_s"].isna().all():
        return None
    return str(near.sort_values("active_s", ascending=False, kind="stable")["trx_id"].iloc[0])
