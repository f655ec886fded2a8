"""Holder readers (see analyzer.waits.holders): replication.

**Galera certification** (``Resource.GALERA_CERTIFICATION``): sessions in ``Waiting for
certification`` wait for their write-set to be certified against other nodes' writes; ``certification``
gives the node's conflict rates and the tables its sessions write, no single holder.

**Replica acknowledgement** (``Resource.REPLICA_ACK``). On a semi-synchronous source every commit waits
(State ``Waiting for semi-sync ACK from slave``, MySQL 8.0.26+ ``... from replica``) until a replica
acknowledges it, or until ``rpl_semi_sync_master_timeout`` (``rpl_semi_sync_source_timeout``, ms)
expires and the source goes on asynchronous. What holds those commits is a replica, and a source's
capture alone cannot name it: it shows how many semi-sync replicas are connected
(``Rpl_semi_sync_master_clients``), how many sessions wait (``..._wait_sessions``) and the commits not
acknowledged in time (``..._no_tx``, a counter read as a rate). ``replica_ack`` says so, holder None;
the cross-host rule ``semisync-ack-wait`` (``analyzer.cluster.semisync``) names the replica when the
bundle holds its capture (its I/O thread stopped, its semi-sync off).

Sources: MySQL 8.4 Reference Manual, 19.4.10 "Semisynchronous Replication" and "Semisynchronous
Replication Monitoring"; MariaDB Server documentation, "Semisynchronous Replication" and its plugin's
status variables.
"""

from __future__ import annotations

import re

import pandas as pd

from analyzer.detect import cite, status, variable
from analyzer.findings import Evidence, Window
from analyzer.timeline.timeline import REPLICATION_USER, Timeline
from analyzer.waits.counters import rate
from analyzer.waits.holding import Holding, reads
from analyzer.waits.model import Resource

#: The source's semi-sync switch, timeout (ms) and counters, MariaDB / MySQL before 8.0.26 first,
#: then MySQL 8.0.26+ (the ``source`` spelling).
ENABLED = ("rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled")
TIMEOUT = ("rpl_semi_sync_master_timeout", "rpl_semi_sync_source_timeout")
CLIENTS = ("Rpl_semi_sync_master_clients", "Rpl_semi_sync_source_clients")
WAIT_SESSIONS = ("Rpl_semi_sync_master_wait_sessions", "Rpl_semi_sync_source_wait_sessions")
NO_TX = ("Rpl_semi_sync_master_no_tx", "Rpl_semi_sync_source_no_tx")
YES_TX = ("Rpl_semi_sync_master_yes_tx", "Rpl_semi_sync_source_yes_tx")
#: The fix when the capture does not show which replica fails to acknowledge.
ACK_FIX = (
    "Find the semi-synchronous replicas of this source (SHOW SLAVE HOSTS; on each, SHOW SLAVE STATUS and\n"
    "rpl_semi_sync_slave_enabled) and bring back the one that stopped acknowledging: START SLAVE\n"
    "IO_THREAD, or fix the error its Last_IO_Error shows. Until one acknowledges, every commit waits\n"
    "rpl_semi_sync_master_timeout ({timeout}) and the source then goes on asynchronous."
)


def counter_rows(tl: Timeline, names: tuple[str, ...]) -> pd.DataFrame:
    """The rows of the first of ``names`` the capture has (the two spellings of one counter)."""
    for name in names:
        rows = status(tl, name)
        if len(rows):
            return rows
    return status(tl, names[0])


def enabled(tl: Timeline) -> bool:
    """The host is a semi-synchronous source (``rpl_semi_sync_master_enabled`` ON in its -variables)."""
    return any(str(variable(tl, n) or "").upper() in ("ON", "1") for n in ENABLED)


def timeout_words(tl: Timeline) -> str:
    """``"10,000 ms"``: the source's rpl_semi_sync_master_timeout, or ``"its default, 10 s"``."""
    for name in TIMEOUT:
        raw = variable(tl, name)
        if raw not in (None, "") and str(raw).isdigit():
            return f"{int(str(raw)):,} ms"
    return "its default, 10 s"


def _windows(rows: pd.DataFrame) -> tuple[Window, ...]:
    """One window over the snapshots of ``rows`` (empty without rows)."""
    if not len(rows):
        return ()
    return (Window(rows["ts"].min(), rows["ts"].max()),)


def _unheld(
    tl: Timeline,
    resource: Resource,
    rows: pd.DataFrame,
    shown_by: str,
    contention: str,
    fix: str,
    evidence: list[Evidence],
) -> Holding:
    """A Holding with no holder shown: ``rows`` the waits rows of its waiters (most at once, first to
    last snapshot plus one step)."""
    per = rows.groupby("ts").size() if len(rows) else pd.Series(dtype=int)
    held = (rows["ts"].max() - rows["ts"].min()).total_seconds() + 1.0 if len(rows) else 0.0
    return Holding(
        resource=resource,
        host=tl.host,
        holder=None,
        shown_by=shown_by,
        held_s=held,
        waiters=int(per.max()) if len(per) else 0,
        windows=_windows(rows),
        contention=contention,
        fix=fix,
        evidence=tuple(evidence),
    )


def _processlist_rows(tl: Timeline, rows: pd.DataFrame) -> pd.DataFrame:
    """The processlist rows (with their member and lines) of the waits ``rows`` (same ts and Id)."""
    pl = tl.frame("processlist")
    if not len(pl) or "id" not in pl or not len(rows):
        return pl.iloc[0:0]
    keys = pd.DataFrame({"ts": rows["ts"], "id": rows["session"].astype("float64")}).drop_duplicates()
    return pl.assign(id=pd.to_numeric(pl["id"], errors="coerce")).merge(keys, on=["ts", "id"])


def ack_figures(tl: Timeline, waits: pd.DataFrame) -> dict[str, object]:
    """A source's semi-sync figures: ``rows`` (the waits rows of sessions waiting for an ACK),
    ``waiters`` (most at once), ``seconds`` (first to last snapshot showing them, plus one step),
    ``clients`` (fewest semi-sync replicas connected, None without the gauge), ``wait_sessions``
    (most, None without it), ``no_tx`` (``analyzer.waits.counters.Rate`` of commits not acknowledged
    in time, None without it) and ``evidence``."""
    rows = waits[waits["resource"].eq(Resource.REPLICA_ACK.value).to_numpy()] if len(waits) else waits
    per = rows.groupby("ts").size() if len(rows) else pd.Series(dtype=int)
    seconds = (rows["ts"].max() - rows["ts"].min()).total_seconds() + 1.0 if len(rows) else 0.0
    clients, sessions = counter_rows(tl, CLIENTS).dropna(subset=["value"]), counter_rows(tl, WAIT_SESSIONS)
    sessions = sessions.dropna(subset=["value"])
    no_tx_rows = counter_rows(tl, NO_TX)
    no_tx = rate(tl, str(no_tx_rows["variable"].iloc[0]) if len(no_tx_rows) else NO_TX[0])
    evidence: list[Evidence] = []
    if len(rows):
        states = rows["state"].dropna().astype(str)
        state = states.mode().iloc[0] if len(states) else "?"
        where = _processlist_rows(tl, rows)
        label = f"sessions in State '{state}' (max)"
        evidence.append(cite(tl, label, int(per.max()), "sessions", "processlist.state", where))
    if len(clients):
        evidence.append(
            cite(
                tl,
                f"{CLIENTS[0]} (min)",
                int(clients["value"].min()),
                "replicas",
                f"mysqladmin.{clients['variable'].iloc[0]}",
                clients,
            )
        )
    if len(sessions):
        evidence.append(
            cite(
                tl,
                f"{WAIT_SESSIONS[0]} (max)",
                int(sessions["value"].max()),
                "sessions",
                f"mysqladmin.{sessions['variable'].iloc[0]}",
                sessions,
            )
        )
    if no_tx is not None:
        evidence.append(
            cite(
                tl,
                f"{no_tx.name} (commits not acknowledged in time)",
                round(no_tx.per_s, 2),
                "/s",
                f"mysqladmin.{no_tx.name}",
                no_tx.rows,
            )
        )
    return {
        "rows": rows,
        "waiters": int(per.max()) if len(per) else 0,
        "seconds": seconds,
        "clients": int(clients["value"].min()) if len(clients) else None,
        "wait_sessions": int(sessions["value"].max()) if len(sessions) else None,
        "no_tx": no_tx,
        "evidence": evidence,
    }


def waiting_for_ack(figures: dict[str, object]) -> bool:
    """Commits wait for a replica's acknowledgement: sessions in an ACK state, a wait_sessions gauge
    above 0, or commits not acknowledged in time (no_tx grew)."""
    no_tx = figures["no_tx"]
    return bool(
        figures["waiters"] or (figures["wait_sessions"] or 0) > 0 or (no_tx is not None and no_tx.growth > 0)  # type: ignore[attr-defined]
    )


def ack_contention(tl: Timeline, figures: dict[str, object]) -> str:
    """What a source's capture shows of its commits' wait, in words."""
    parts = []
    if figures["waiters"]:
        parts.append(f"up to {figures['waiters']} sessions wait for a semi-sync ACK")
    if figures["clients"] is not None:
        parts.append(f"{figures['clients']} semi-sync replicas connected (Rpl_semi_sync_master_clients)")
    no_tx = figures["no_tx"]
    if no_tx is not None and no_tx.growth > 0:  # type: ignore[attr-defined]
        parts.append(f"commits not acknowledged in time {no_tx.words()}")  # type: ignore[attr-defined]
    return "; ".join(parts) or "no session waits now"


def replica_ack(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The semi-synchronous source's wait for its replicas (see the module docstring): one Holding,
    holder None (a source's capture does not show which replica fails to acknowledge), when commits
    wait (``waiting_for_ack``); none otherwise."""
    if not (enabled(tl) or len(waits) and waits["resource"].eq(Resource.REPLICA_ACK.value).any()):
        return []
    figures = ack_figures(tl, waits)
    if not waiting_for_ack(figures):
        return []
    contention = f"{ack_contention(tl, figures)}; rpl_semi_sync_master_timeout {timeout_words(tl)}"
    shown_by = "the source's capture shows its commits waiting, not which replica fails to acknowledge"
    fix = ACK_FIX.format(timeout=timeout_words(tl))
    return [
        _unheld(tl, Resource.REPLICA_ACK, figures["rows"], shown_by, contention, fix, figures["evidence"])
    ]  # type: ignore[arg-type]


#: The write statement and its table: ``UPDATE sbtest1 SET``, ``insert into sb.t (``, ``DELETE FROM `t` ``.
WRITE_RE = re.compile(
    r"^\s*(?:insert\s+(?:ignore\s+)?(?:into\s+)?|replace\s+(?:into\s+)?|update\s+(?:ignore\s+)?"
    r"|delete\s+(?:ignore\s+)?from\s+)[`\"]?([\w$?]+)[`\"]?(?:\s*\.\s*[`\"]?([\w$?]+)[`\"]?)?",
    re.I,
)


def _table(statement: object) -> tuple[str, str] | None:
    """(key, name) of the table a write statement writes: the key with numbers as ``?`` (as a
    fingerprint prints them), the name as written. None for another statement."""
    m = WRITE_RE.match(str(statement)) if isinstance(statement, str) else None
    if not m:
        return None
    name = m.group(2) or m.group(1)
    return re.sub(r"\d+", "?", name.lower()), name


def written(tl: Timeline) -> dict[str, tuple[str, str]]:
    """The tables the node's client sessions write: key -> (a name as the capture writes it, preferring
    one without ``?``; the first statement seen writing it)."""
    out: dict[str, tuple[str, str]] = {}
    appliers: set[float] = set()
    pl = tl.frame("processlist")
    texts: list[object] = []
    if len(pl) and "fingerprint" in pl:
        system = pl["user"].astype("string").eq(REPLICATION_USER).fillna(False).to_numpy(dtype=bool)
        appliers = set(pd.to_numeric(pl.loc[system, "id"], errors="coerce").dropna())
        texts += pl.loc[~system, "fingerprint"].dropna().tolist()
    for frame in ("innodb_trx", "innodb_transactions"):
        trx = tl.frame(frame)
        if len(trx) and "query" in trx:
            mine = ~pd.to_numeric(trx.get("thread_id"), errors="coerce").isin(appliers).to_numpy(dtype=bool)
            texts += trx.loc[mine, "query"].dropna().tolist()
    for text in texts:
        found = _table(text)
        if found is None:
            continue
        key, name = found
        if key not in out or ("?" in out[key][0] and "?" not in name):
            out[key] = (name, str(text)[:200])
    return out


#: The fix of sessions waiting for certification while their node's transactions conflict.
CERT_FIX = (
    "Write to one node: the sessions of this node and of another write the same rows, and one of\n"
    "the two transactions fails certification or is aborted (deadlock error 1213). Send those\n"
    "tables' writes to a single node, or partition them; the application must retry on 1213."
)


def certification(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """Sessions of a Galera node waiting for certification (``Resource.GALERA_CERTIFICATION``): no
    single holder (the conflict is with another node's writes, ``galera-write-conflicts`` names the
    nodes and tables across hosts); the contention is this node's wsrep_local_cert_failures and
    wsrep_local_bf_aborts per second (``analyzer.waits.counters.rate``) and the tables its sessions
    write (``written``). None when no session waits."""

    rows = (
        waits[waits["resource"].eq(Resource.GALERA_CERTIFICATION.value).to_numpy()] if len(waits) else waits
    )
    if not len(rows):
        return []
    rates = [rate(tl, n) for n in ("wsrep_local_cert_failures", "wsrep_local_bf_aborts")]
    words = [f"{r.name} {r.words()}" for r in rates if r is not None]
    evidence = [
        cite(tl, f"{r.name} per second", round(r.per_s, 2), "/s", f"mysqladmin.{r.name}", r.rows)
        for r in rates
        if r is not None
    ]
    tables = sorted(name for name, _ in written(tl).values())
    contention = "; ".join([*words, f"its sessions write {', '.join(tables)}" if tables else ""]).strip("; ")
    shown_by = "certification conflicts are with another node's writes: no session of this node holds them"
    contention = contention or "no certification counters in the capture"
    return [_unheld(tl, Resource.GALERA_CERTIFICATION, rows, shown_by, contention, CERT_FIX, evidence)]


def _register() -> None:
    """Register the readers (``replica_ack`` read always: the counters show a wait no session state
    may) with the package, which imports this module after it defined ``reads``."""
    reads(Resource.REPLICA_ACK, always=True, inputs=("processlist", "mysqladmin", "variables"))(replica_ack)
    reads(
        Resource.GALERA_CERTIFICATION,
        inputs=("processlist", "innodb_trx", "innodb_transactions", "mysqladmin"),
    )(certification)


_register()
