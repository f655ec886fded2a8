"""Holder reader (see analyzer.waits.holders) of the read view purge waits for.

``PURGE`` (read always: purge has no session waiting): while the history list length grows, the
oldest open transaction of INNODB_TRX or the monitor's TRANSACTIONS (a transaction holds its read view
until it ends; READ COMMITTED ones only during a statement), joined to its session (Command Sleep:
idle in transaction).

Sources: MySQL 8.4 Reference Manual, "Purge Configuration", "Consistent Nonlocking Reads" and "The
INFORMATION_SCHEMA INNODB_TRX Table". Pure: no I/O, no clock, no Django.
"""

from __future__ import annotations

import pandas as pd

from analyzer.evidence import blockers
from analyzer.findings import Culprit, Evidence, Window
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holding import Holding, reads
from analyzer.waits.model import Resource

#: History list growth that makes purge a wait (undo records per second between monitor outputs),
#: or a history list this long whatever its growth (docs/background.md: 1,000,000).
PURGE_GROWTH_PER_S = 100.0
PURGE_HISTORY_HIGH = 1_000_000
#: A transaction this old holds purge back (a read view far older than the OLTP's seconds).
PURGE_HOLDER_MIN_AGE_S = 30.0
#: MariaDB's status variable of the history list length (mysqladmin ext).
HISTORY = "Innodb_history_list_length"
#: Isolation levels whose transactions hold no read view between statements (MySQL 8.4,
#: "Consistent Nonlocking Reads": READ COMMITTED sets a fresh snapshot per consistent read).
NO_LASTING_VIEW = frozenset({"READ COMMITTED", "READ UNCOMMITTED"})
PURGE_INPUTS = (
    "innodb_status",
    "innodb_rates",
    "innodb_trx",
    "innodb_transactions",
    "processlist",
    "mysqladmin",
)


def history(tl: Timeline) -> tuple[float, float, pd.DataFrame] | None:
    """(history list length max, growth per second, the rows that show it) when purge falls behind:
    the monitor's ``History list length`` (growth between outputs: ``innodb_rates``) and MariaDB's
    ``Innodb_history_list_length`` status (mysqladmin, growth first to last sighting)."""
    st = tl.frame("innodb_status")
    st = (
        st.dropna(subset=["history_list_length"]) if len(st) and "history_list_length" in st else st.iloc[0:0]
    )
    rates = tl.frame("innodb_rates")
    growth = (
        float(rates["history_growth_per_s"].max()) if len(rates) and "history_growth_per_s" in rates else 0.0
    )
    growth = growth if pd.notna(growth) else 0.0
    hll = float(st["history_list_length"].max()) if len(st) else 0.0
    rows = st
    ma = tl.frame("mysqladmin")
    if len(ma) and "variable" in ma:
        hl = ma[(ma["variable"] == HISTORY).to_numpy(dtype=bool, na_value=False)].dropna(subset=["value"])
        if len(hl) >= 2:
            span = (hl["ts"].iloc[-1] - hl["ts"].iloc[0]).total_seconds()
            if span > 0:
                growth = max(growth, float(hl["value"].iloc[-1] - hl["value"].iloc[0]) / span)
            hll = max(hll, float(hl["value"].max()))
            rows = hl if not len(st) or growth > 0 else st
    if not len(rows) or (growth < PURGE_GROWTH_PER_S and hll < PURGE_HISTORY_HIGH):
        return None
    return hll, growth, rows


@reads(Resource.PURGE, always=True, inputs=PURGE_INPUTS)
def purge(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """While the history list length grows (PURGE_GROWTH_PER_S or more) or exceeds PURGE_HISTORY_HIGH:
    the oldest open transaction holding a read view (INNODB_TRX, not READ COMMITTED, else the monitor's
    TRANSACTIONS), PURGE_HOLDER_MIN_AGE_S old or more, joined to its session (Command Sleep: idle in
    transaction); its fix ends that session."""
    found = history(tl)
    if found is None:
        return []
    hll, growth, st = found
    windows = (Window(st["ts"].min(), st["ts"].max()),)
    trx, source = _open_transactions(tl)
    what = f"purge of {hll:,.0f} undo records (history list growing {growth:+,.0f}/s)"
    keeps_up = (
        f"{what} with no transaction holding a read view older than {PURGE_HOLDER_MIN_AGE_S:.0f} s: "
        "purge does not keep up (innodb_purge_threads, the write rate)"
    )
    if not len(trx):
        return [_no_transaction(tl, windows, what, keeps_up)]
    per = trx.groupby("trx_id", sort=False).agg(
        age=("active_s", "max"), first=("ts", "min"), last=("ts", "max"), thread=("thread_id", "last")
    )
    trx_id = str(per["age"].idxmax())
    top = per.loc[trx_id]
    age = float(top["age"])
    if age < PURGE_HOLDER_MIN_AGE_S:
        return [
            Holding(
                Resource.PURGE,
                tl.host,
                None,
                (f"the oldest transaction is {age:.0f} s old: no old read view"),
                windows=windows,
                age_s=age,
                contention=keeps_up,
            )
        ]
    mine = trx[trx["trx_id"].eq(trx_id).to_numpy()]
    member, lines = tl.lines_of(mine)
    ev = [
        Evidence(
            f"oldest open transaction {trx_id}: seconds active", age, "s", f"{source}.active_s", member, lines
        ),
        Evidence(
            "history list length (max)",
            int(hll),
            "undo records",
            "innodb_status.history_list_length" if "history_list_length" in st else f"mysqladmin.{HISTORY}",
            *tl.lines_of(st),
        ),
    ]
    holder, fix, who = _purge_holder(tl, top["thread"], trx_id, mine, windows, ev, what)
    seen = (top["last"] - top["first"]).total_seconds()
    shown_by = (
        f"{who}: transaction {trx_id}, the oldest open ({age:.0f} s, {source}), seen over "
        f"{seen:.0f} s "
        f"while the history list grew to {hll:,.0f}"
    )
    return [
        Holding(
            Resource.PURGE,
            tl.host,
            holder,
            shown_by,
            held_s=age,
            age_s=age,
            windows=windows,
            object="the undo history",
            fix=fix,
            evidence=tuple(ev),
        )
    ]


#: Said of an idle (Command Sleep) purge holder.
IDLE_PURGE_NOTE = (
    " It is idle in its transaction (Command Sleep): fix the application that leaves it open "
    "(autocommit off, a missing COMMIT)."
)


def _no_transaction(tl: Timeline, windows: tuple[Window, ...], what: str, keeps_up: str) -> Holding:
    """Purge lags and no transaction that can hold a read view is listed (or no list at all)."""
    listed = any(len(tl.frame(name)) for name in ("innodb_trx", "innodb_transactions"))
    shown_by = (
        "no open transaction holds a read view (INNODB_TRX)"
        if listed
        else "the bundle lists no transaction (INNODB_TRX, TRANSACTIONS)"
    )
    return Holding(
        Resource.PURGE, tl.host, None, shown_by, windows=windows, contention=keeps_up if listed else what
    )


def _purge_holder(
    tl: Timeline,
    thread: object,
    trx_id: str,
    mine: pd.DataFrame,
    windows: tuple[Window, ...],
    ev: list[Evidence],
    what: str,
) -> tuple[Culprit, str, str]:
    """The oldest read view's holder (its session when the transaction list names its thread, else the
    transaction), its fix and how the title names it. ``mine``: that transaction's rows."""
    since = mine["ts"].iloc[-1] - pd.Timedelta(seconds=float(mine["active_s"].iloc[-1]))
    if pd.isna(thread):
        holder = Culprit(kind="transaction", id=trx_id, since=since.floor("s"), evidence=tuple(ev))
        fix = f"End transaction {trx_id} (its session is not in the bundle): its read view holds back {what}."
        who = f"transaction {trx_id}"
    else:
        thread = int(thread)
        facts = blockers.session_facts(tl, thread, windows, ev, trx_id=trx_id)
        holder = Culprit(
            kind="session",
            id=str(thread),
            user=facts.get("user"),
            host=facts.get("host"),  # type: ignore[arg-type]
            statement=facts.get("statement"),
            since=since.floor("s"),
            evidence=tuple(ev),
        )  # type: ignore[arg-type]
        idle = facts.get("statement") == blockers.IDLE
        note = IDLE_PURGE_NOTE if idle else ""
        fix = (
            f"End the session holding the oldest read view: KILL {thread};  -- its transaction"
            f"{blockers.trx_word(trx_id)} rolls back and purge can remove the undo it held back.{note}"
        )
        who = f"session {thread}" + (" (idle in transaction)" if idle else "")
    return holder, fix, who


def _open_transactions(tl: Timeline) -> tuple[pd.DataFrame, str]:
    """``ts trx_id thread_id active_s`` of the transactions that can hold a read view: INNODB_TRX
    (not READ COMMITTED or READ UNCOMMITTED), else the monitor's TRANSACTIONS (not ``not started``)."""
    for name in ("innodb_trx", "innodb_transactions"):
        trx = tl.frame(name)
        if not len(trx) or "active_s" not in trx or "trx_id" not in trx:
            continue
        keep = trx["active_s"].notna().to_numpy().copy()
        if "isolation" in trx:
            keep &= ~trx["isolation"].astype("string").isin(NO_LASTING_VIEW).fillna(False).to_numpy()
        if "state" in trx:
            keep &= ~trx["state"].astype("string").eq("not started").fillna(False).to_numpy()
        trx = trx[keep]
        if len(trx):
            out = trx.assign(
                trx_id=trx["trx_id"].astype("string"),
                thread_id=pd.to_numeric(trx.get("thread_id"), errors="coerce"),
            )
            return out, name
    return pd.DataFrame(columns=["ts", "trx_id", "thread_id", "active_s"]), ""
