"""Transaction rules: what the InnoDB monitor's TRANSACTIONS and LATEST DETECTED DEADLOCK sections
(pt-stalk -innodbstatus1/2), information_schema.INNODB_TRX (-transactions) and the lock waits say about
purge, long transactions and deadlocks. Source: MySQL 8.4 Reference Manual 17.17.3 "InnoDB Standard
Monitor and Lock Monitor Output", 17.6.6 "Undo Logs", 17.7.5 "Deadlocks in InnoDB"; docs/background.md
("Thresholds from common practice").
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from analyzer.detect import cite, span
from analyzer.evidence import blockers
from analyzer.findings import Culprit, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import locks
from analyzer.waits.holders.locks import deadlock_rate, row_contention
from analyzer.waits.holders.purge import history
from analyzer.waits.holders.purge import purge as purge_holder

#: No session waits for purge: its reader reads the monitor and the transaction lists alone.
NO_WAITS = pd.DataFrame(columns=["ts", "session", "resource", "object"])

# --- purge-lag -------------------------------------------------------------------------------
HISTORY_LENGTH_HIGH = 1_000_000  # docs/background.md: "1,000,000": purge is far behind
HISTORY_LENGTH_CRITICAL = 10_000_000  # ten times that: every read of changed rows walks long undo chains
HISTORY_GROWTH_PER_S = 1_000.0  # growing by 1,000 undo records/s: a 30 s capture adds 30,000
OLDEST_TRX_FOR_GROWTH_S = 60.0  # growth matters when an old transaction (read view) holds purge back

PURGE_TEXTS = RuleTexts(
    title=(
        "Purge lag: history list length {hll:,.0f} ({growth:+,.0f}/s), oldest transaction active "
        "{oldest:.0f} s"
    ),
    explanation=(
        "InnoDB keeps the old versions of changed rows (undo) until no transaction can still read them. The "
        "history list length, undo records not yet purged, was {hll:,.0f} and changed by {growth:+,.0f} per "
        "second between the monitor outputs, while the oldest transaction had been active {oldest:.0f} s. "
        "Reads "
        "walk longer version chains and the undo tablespace grows.{held_by}"
    ),
    recommendation=(
        "Find and end the long transaction:\n"
        "  SELECT trx_id, trx_started, trx_mysql_thread_id, trx_query FROM information_schema.innodb_trx "
        "ORDER BY trx_started LIMIT 5;\n"
        "then consider innodb_purge_threads and innodb_max_purge_lag."
    ),
    caveats=(
        "A long read view (a REPEATABLE READ backup or report) also blocks purge, even without writes.",
    ),
    sources=("MySQL 8.4 Reference Manual, Purge Configuration", "MySQL 8.4 Reference Manual, Undo Logs"),
    disproof=(
        "If the history list length falls back once the named transaction ends, purge was only "
        "waiting for it."
    ),
    confidence="{confidence}",
)


@rule(
    key="purge-lag",
    requires=("innodb_status",),
    optional=("innodb_rates", "innodb_transactions", "innodb_trx", "processlist", "mysqladmin"),
)
def purge_lag(tl: Timeline) -> Finding | None:
    """History list length >= HISTORY_LENGTH_HIGH, or growing >= HISTORY_GROWTH_PER_S while the
    oldest transaction is >= OLDEST_TRX_FOR_GROWTH_S old, or growing while the purge holder reader
    (``analyzer.waits.holders.purge.purge``) shows the transaction holding the oldest read view.
    Input: ``innodb_status``, ``innodb_rates``, MariaDB's ``Innodb_history_list_length`` (mysqladmin)."""
    st = tl.frame("innodb_status").dropna(subset=["history_list_length"])
    if not len(st):
        return None
    rates = tl.frame("innodb_rates")
    growth = float(rates["history_growth_per_s"].max()) if len(rates) else 0.0
    hll = float(st["history_list_length"].max())
    oldest = float(st["oldest_active_s"].max())
    growing = growth >= HISTORY_GROWTH_PER_S and oldest >= OLDEST_TRX_FOR_GROWTH_S
    holding = next((h for h in purge_holder(tl, NO_WAITS) if h.named), None)
    if hll < HISTORY_LENGTH_HIGH and not growing and holding is None:
        return None
    behind = history(tl)
    if behind is not None:
        hll, growth = max(hll, behind[0]), max(growth if np.isfinite(growth) else 0.0, behind[1])
    numbers = {"hll": hll, "growth": growth if np.isfinite(growth) else 0.0, "oldest": oldest}
    evidence = [
        cite(
            tl,
            f"history list length at {r.ts:%H:%M:%S}",
            int(r.history_list_length),
            "undo records",
            "innodb_status.history_list_length",
            st,
        )
        for r in st.itertuples()
    ]
    evidence.append(
        cite(
            tl,
            "history list growth (between outputs)",
            round(numbers["growth"], 1),
            "/s",
            "innodb_rates.history_growth_per_s",
            rates,
        )
    )
    evidence.append(cite(tl, "oldest active transaction", oldest, "s", "innodb_status.oldest_active_s", st))
    evidence += list(holding.evidence) if holding is not None else _oldest_transaction(tl)
    severity = Severity.CRITICAL if hll >= HISTORY_LENGTH_CRITICAL else Severity.WARNING
    finding = PURGE_TEXTS.finding(
        "purge-lag",
        severity,
        list(holding.windows) if holding is not None and holding.windows else span(st),
        evidence,
        confidence="InnoDB monitor",
        related=("long-transaction",),
        held_by=f" The purge of the undo history waits for {holding.shown_by}."
        if holding is not None
        else "",
        **numbers,
    )
    if holding is None:
        return finding
    return dataclasses.replace(
        finding, culprit=holding.holder, recommendation=holding.fix + "\n" + finding.recommendation
    )


def _oldest_transaction(tl: Timeline) -> list:
    """Evidence on the oldest active transaction of the monitor, joined to its processlist row."""
    trx = tl.frame("innodb_transactions")
    if not len(trx) or not trx["active_s"].notna().any():
        return []
    row = trx.loc[trx["active_s"].idxmax()]
    out = [
        cite(
            tl,
            "oldest transaction (trx id, MySQL thread id)",
            f"{row['trx_id']}, thread {row['thread_id']:.0f}",
            "",
            "innodb_transactions.trx_id",
            trx.loc[[row.name]],
        )
    ]
    pl = tl.frame("processlist")
    if len(pl) and "id" in pl and pd.notna(row["thread_id"]):
        match = pl[pl["id"] == row["thread_id"]]
        if len(match):
            last = match.iloc[-1]
            out.append(
                cite(
                    tl,
                    "its session in the processlist (user, Command, Time)",
                    f"{last.get('user')}, {last.get('command')}, {last.get('time_s')} s",
                    "",
                    "processlist.id",
                    match.tail(1),
                )
            )
    return out


# --- long-transaction ------------------------------------------------------------------------
LONG_TRX_S = 180.0  # docs/background.md "180 s": 3 min holds locks and undo for 180 s
LONG_TRX_CRITICAL_S = 3600.0  # an hour: purge and every lock it holds are held that long

LONG_TRX_TEXTS = RuleTexts(
    title=(
        "Transaction open for {active:.0f} s (thread {thread}, {locks:.0f} lock structs, {undo:.0f} undo "
        "entries)"
    ),
    explanation=(
        "Transaction {trx} of MySQL thread {thread} had been active for {active:.0f} s ({state}). Until it "
        "commits or rolls back it keeps its row locks ({locks:.0f} lock structs) and holds back purge of "
        "every "
        "row changed since it started. Current statement: {query}."
    ),
    recommendation=(
        "Commit or kill it (KILL {thread};) and find the application path that leaves transactions open: a "
        "session\n"
        "with Command Sleep and an open transaction is idle in transaction (autocommit off, a missing "
        "COMMIT, an\n"
        "exception path that skips it)."
    ),
    caveats=(
        (
            "A long REPEATABLE READ read-only transaction (a backup) is expected; check who runs it before "
            "killing it."
        ),
    ),
    sources=(
        "MySQL 8.4 Reference Manual, INFORMATION_SCHEMA INNODB_TRX",
        "MySQL 8.4 Reference Manual, Undo Logs",
    ),
    disproof=(
        "If the transaction is a backup with --single-transaction that ends on schedule, it is expected."
    ),
    confidence="{confidence}",
)


BLOCKING_TRX_TEXTS = RuleTexts(
    title="Session {thread} ({account}) {doing} holds a transaction that blocks {blocks} sessions",
    explanation=(
        "Session {thread} ({account}) kept transaction {trx} open for {age:.0f} s by the end of the capture "
        "(started {since}, {locked} row(s) locked, {modified} modified; now {doing}), and {blocks} "
        "sessions waited "
        "for its {lock} for {held:.0f} s. A transaction that blocks others for a sustained window is a long "
        "transaction whatever its age: every statement that needs what it holds queues until it commits."
    ),
    recommendation=(
        "End it now: KILL {thread};  -- its transaction rolls back and the {blocks} waiting sessions "
        "proceed\n"
        "Then find the application path that leaves a transaction open: Command Sleep with an open "
        "transaction is\n"
        "idle in transaction (autocommit off, a missing COMMIT, an exception path that skips it, a slow "
        "client\n"
        "between statements). Keep transactions short; innodb_lock_wait_timeout and lock_wait_timeout "
        "bound the wait."
    ),
    caveats=(
        (
            "Killing a session that changed many rows rolls them back, which takes about as long as the "
            "changes did."
        ),
    ),
    sources=(
        "MySQL 8.4 Reference Manual, INFORMATION_SCHEMA INNODB_TRX and INNODB_LOCK_WAITS",
        "MySQL 8.4 Reference Manual, KILL Statement",
    ),
    disproof="If the session commits within the next seconds on its own and the waits end with it, it was "
    "a slow "
    "statement sequence, not an abandoned transaction.",
    confidence="{confidence}",
)


def _blocking_transaction(tl: Timeline) -> Finding | None:
    """A session whose open transaction blocked others (row or metadata locks) for BLOCKER_SUSTAINED_S,
    whatever its age (analyzer/evidence/blockers.py)."""
    found = [
        b
        for b in locks.find(tl)
        if b.lock in ("row", "metadata")
        and b.thread is not None
        and b.trx_id is not None
        and b.sustained
        and b.blocks
    ]
    if not found:
        return None
    b = found[0]
    held = sum(w.seconds for w in b.windows)
    severity = (
        Severity.CRITICAL if b.blocks >= 10 or (b.age_s or 0) >= LONG_TRX_CRITICAL_S else Severity.WARNING
    )
    doing = b.statement or "?"
    if doing == blockers.IDLE and b.idle_s is not None:
        doing = f"{blockers.IDLE} for {b.idle_s:.0f} s"
    series = b.evidence[0].series.split(".")[0] if b.evidence else "lock_waits"
    finding = BLOCKING_TRX_TEXTS.finding(
        "long-transaction",
        severity,
        b.windows,
        b.evidence,
        thread=b.thread,
        account=f"{b.user or '?'}@{b.host or '?'}",
        doing=doing,
        blocks=b.blocks,
        trx=b.trx_id,
        age=b.age_s or 0.0,
        since=b.since.strftime("%H:%M:%S") if b.since is not None else "?",
        locked=b.rows_locked if b.rows_locked is not None else "?",
        modified=b.rows_modified if b.rows_modified is not None else "?",
        lock={"row": "row locks", "metadata": "metadata lock"}[b.lock],
        held=held,
        confidence=(
            f"{series} names the blocker; innodb_trx and the processlist name its transaction and session"
        ),
    )
    return dataclasses.replace(finding, culprit=b.culprit())


@rule(
    key="long-transaction",
    any_of=(("innodb_status", "innodb_trx"),),
    optional=tuple(sorted(set(locks.FIND_INPUTS) - {"innodb_trx"})),
)
def long_transaction(tl: Timeline) -> Finding | None:
    """A transaction active >= LONG_TRX_S in the monitor's TRANSACTIONS list or in INNODB_TRX, or one
    that blocks other sessions for a sustained window whatever its age (``_blocking_transaction``)."""
    rows = []
    for name, series in (
        ("innodb_trx", "innodb_trx.active_s"),
        ("innodb_transactions", "innodb_transactions.active_s"),
    ):
        f = tl.frame(name)
        if len(f) and "active_s" in f:
            rows.append((f[f["active_s"] >= LONG_TRX_S], series))
    rows = [(r, s) for r, s in rows if len(r)]
    if not rows:
        return _blocking_transaction(tl)
    frame, series = max(rows, key=lambda r: float(r[0]["active_s"].max()))
    top = frame.loc[frame["active_s"].idxmax()]
    numbers = {
        "active": float(top["active_s"]),
        "thread": f"{top['thread_id']:.0f}" if pd.notna(top["thread_id"]) else "?",
        "trx": top["trx_id"],
        "state": top.get("state", ""),
        "query": (str(top.get("query") or "") or "none (idle in transaction?)")[:200],
        "locks": float(top.get("lock_structs", np.nan) if pd.notna(top.get("lock_structs", np.nan)) else 0),
        "undo": float(
            top.get("undo_entries", top.get("rows_modified", 0))
            if pd.notna(top.get("undo_entries", top.get("rows_modified", 0)))
            else 0
        ),
    }
    same = frame[frame["trx_id"] == top["trx_id"]]
    evidence = [
        cite(tl, "seconds active (longest)", numbers["active"], "s", series, same),
        cite(
            tl,
            "trx id / MySQL thread id",
            f"{numbers['trx']} / {numbers['thread']}",
            "",
            series.split(".")[0] + ".trx_id",
            same,
        ),
        cite(tl, "lock structs", numbers["locks"], "", series.split(".")[0] + ".lock_structs", same),
        cite(tl, "transactions over the threshold", int(frame["trx_id"].nunique()), "", series, frame),
    ]
    severity = Severity.CRITICAL if numbers["active"] >= LONG_TRX_CRITICAL_S else Severity.WARNING
    windows = [Window(same["ts"].min(), same["ts"].max())]
    finding = LONG_TRX_TEXTS.finding(
        "long-transaction", severity, windows, evidence, confidence=series.split(".")[0], **numbers
    )
    if pd.isna(top["thread_id"]):
        return finding
    ev: list = []
    facts = blockers.session_facts(tl, int(top["thread_id"]), tuple(windows), ev, trx_id=str(top["trx_id"]))
    blocking = [b for b in locks.find(tl) if b.thread == int(top["thread_id"])]
    culprit = Culprit(
        kind="session",
        id=numbers["thread"],
        blocks=blocking[0].blocks if blocking else None,
        user=facts.get("user"),
        host=facts.get("host"),  # type: ignore[arg-type]
        statement=facts.get("statement"),
        since=facts.get("since"),
        evidence=tuple(evidence[:2]) + tuple(ev),  # type: ignore[arg-type]
    )
    return dataclasses.replace(finding, culprit=culprit)


# --- innodb-deadlock -------------------------------------------------------------------------
DEADLOCK_BEFORE_S = 300.0  # a deadlock up to 5 min before the capture still explains its minutes

#: Deadlocks per second that make a storm (MySQL 8.4 "Deadlocks in InnoDB": a few are normal;
#: one a second or more means transactions take the same rows in opposite orders all the time).
DEADLOCK_STORM_PER_S = 1.0

DEADLOCK_TEXTS = RuleTexts(
    title="InnoDB deadlock{rate_title} {when}: transaction {victim} rolled back",
    explanation=(
        "{rate_text}The latest detected deadlock happened {age:.0f} s before the monitor output of {at}. "
        "{detail} "
        "InnoDB rolled back transaction {victim}; the application got error 1213 and must retry it."
    ),
    recommendation=(
        "{where}"
        "Take locks in one order in every code path, keep transactions short, and give the statements an "
        "index\n"
        "that narrows the locked range (each UPDATE/DELETE locks every index record it scans); the "
        "application\n"
        "must retry a transaction rolled back with error 1213. Deadlocks are normal in small numbers: "
        "watch the\n"
        "rate (innodb_print_all_deadlocks=ON logs each one)."
    ),
    caveats=(
        "SHOW ENGINE INNODB STATUS keeps only the latest deadlock: the rate comes from Innodb_deadlocks.",
    ),
    sources=(
        "MySQL 8.4 Reference Manual, Deadlocks in InnoDB",
        "MySQL 8.4 Reference Manual, innodb_print_all_deadlocks",
        "MariaDB Server documentation, InnoDB Status Variables (Innodb_deadlocks)",
    ),
    disproof="If the deadlock is older than the incident and did not repeat, it is not the cause.",
    confidence="{confidence}",
)


@rule(
    key="innodb-deadlock",
    requires=("innodb_status",),
    optional=("innodb_deadlock", "mysqladmin", "lock_waits", "innodb_lock_waits_raw", "innodb_trx"),
)
def innodb_deadlock(tl: Timeline) -> Finding | None:
    """The LATEST DETECTED DEADLOCK dated inside the capture or DEADLOCK_BEFORE_S before its start,
    with the deadlock rate (``Innodb_deadlocks`` per second, mysqladmin) when the bundle has it;
    warning when it happened between two monitor outputs (during the capture) or the rate is
    DEADLOCK_STORM_PER_S or more."""
    st = tl.frame("innodb_status").dropna(subset=["deadlock_age_s"])
    if not len(st):
        return None
    at = st["ts"] - pd.to_timedelta(st["deadlock_age_s"], unit="s")
    start = tl.window[0] if tl.window else st["ts"].min()
    recent = st[(at >= start - pd.Timedelta(seconds=DEADLOCK_BEFORE_S)).to_numpy()]
    if not len(recent):
        return None
    last = recent.iloc[-1]
    when_ts = last["ts"] - pd.Timedelta(seconds=float(last["deadlock_age_s"]))
    during = bool(when_ts >= start)
    dl = tl.frame("innodb_deadlock")
    dl = dl[dl["ts"] == last["ts"]] if len(dl) else dl
    victim = (
        next((f"({int(r.n)}) {r.trx_id}" for r in dl.itertuples() if r.rolled_back), "?") if len(dl) else "?"
    )
    detail = " ".join(
        f"Transaction ({int(r.n)}) ran {str(r.query)[:120]!r} and waited for {str(r.waits_for)[:120]!r}."
        for r in dl.itertuples()
    )
    rate = deadlock_rate(tl, [Window(*tl.window)] if tl.window else [])
    storm = rate is not None and rate[0] >= DEADLOCK_STORM_PER_S
    numbers = {
        "age": float(last["deadlock_age_s"]),
        "at": f"{last['ts']:%H:%M:%S}",
        "victim": victim,
        "detail": detail,
        "when": "during the capture" if during else "just before the capture",
        "rate_title": f"s: {rate[0]:g} per second," if storm else "",
        "rate_text": (
            f"InnoDB detected {rate[0]:g} deadlocks per second over the capture "
            "(Innodb_deadlocks): "
            "transactions keep taking the same rows in opposite orders. "
            if rate is not None
            else ""
        ),
    }
    contention = row_contention(tl) if storm else None
    numbers["where"] = f"No session holds the rows: {contention}.\n" if contention else ""
    if contention:
        numbers["rate_text"] += f"The sessions wait for row locks, no one holding them: {contention}. "
    evidence = _deadlock_evidence(tl, recent, numbers["age"], rate, dl)
    severity = Severity.WARNING if during or storm else Severity.INFO
    finding = DEADLOCK_TEXTS.finding(
        "innodb-deadlock",
        severity,
        [Window(start, tl.window[1]) if storm and tl.window else Window(when_ts, when_ts)],
        evidence,
        confidence="InnoDB monitor" + (" + Innodb_deadlocks" if rate is not None else ""),
        **numbers,
    )
    threads = sorted({int(t) for t in dl["thread_id"].dropna()}) if len(dl) and "thread_id" in dl else []
    return dataclasses.replace(finding, subjects=tuple(("session", str(t)) for t in threads))


def _deadlock_evidence(
    tl: Timeline, recent: pd.DataFrame, age: float, rate: tuple | None, dl: pd.DataFrame
) -> list:
    """innodb-deadlock's evidence: the deadlock's age, the deadlock rate when known, and each
    transaction's statement, the lock it waited for and the locks it held."""
    evidence = [
        cite(tl, "deadlock age at the monitor output", age, "s", "innodb_status.deadlock_age_s", recent)
    ] + ([rate[1]] if rate is not None else [])
    for r in dl.itertuples():
        rows = dl[dl["n"] == r.n]
        evidence.append(
            cite(tl, f"transaction ({r.n}) statement", str(r.query)[:300], "", "innodb_deadlock.query", rows)
        )
        evidence.append(
            cite(
                tl,
                f"transaction ({r.n}) waits for",
                str(r.waits_for)[:300],
                "",
                "innodb_deadlock.waits_for",
                rows,
            )
        )
        if r.holds:
            evidence.append(
                cite(tl, f"transaction ({r.n}) holds", str(r.holds)[:300], "", "innodb_deadlock.holds", rows)
            )
    return evidence
