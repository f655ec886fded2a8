"""The holder of a session-scoped lock shown by elimination: the only client session not waiting.

A global read lock (FLUSH TABLES WITH READ LOCK), a backup lock (BACKUP STAGE, LOCK INSTANCE FOR
BACKUP) and LOCK TABLES locks belong to the session that took them and are released when it ends
(MySQL 8.4 Reference Manual, "FLUSH Statement", "LOCK TABLES and UNLOCK TABLES Statements"; MariaDB
"BACKUP STAGE"). When the bundle does not show the statement that took the lock (the session ran it
and went idle), the lock is still shown held by a session when, in every snapshot where sessions
wait for it:

- exactly one connected client session does not wait for it: every other client session, the rows
  the timeline keeps plus the idle sessions ``processlist_accounts`` counts, waits for it (internal
  users and ``system user`` rows do not count, nor the collector's own statement);
- that session is idle (Command ``Sleep``) or runs nothing that waits;
- it has been in that state since before the first waiter began waiting (its ``Time`` >= the longest
  waiter's ``Time``);

and those snapshots span ``HOLDER_MIN_S`` or more. Without the counts of the sessions not kept
(``processlist_sessions``: every session of a snapshot, kept or counted by account) the others are
unknown and no holder is shown. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analyzer.evidence.blockers import HOLDER_MIN_S
from analyzer.timeline.timeline import INTERNAL_USERS, Timeline, value_is
from analyzer.waits.model import Resource

#: Commands of a session that runs nothing (MySQL 8.4, "Thread Command Values").
IDLE_COMMANDS = frozenset({"Sleep"})
#: Users that hold nothing a client takes: the server's own threads, a connection not yet logged in.
NOT_CLIENTS = INTERNAL_USERS | {"unauthenticated user"}
#: Resources of a session that waits for nothing the server holds: working, idle, its client's turn.
NOT_WAITS = frozenset({Resource.NOTHING.value, Resource.CLIENT.value, Resource.CPU.value})


@dataclass(frozen=True, slots=True)
class Alone:
    """The only client session not waiting (see the module docstring).

    ``thread``: its processlist Id; ``time_s``: its ``Time`` and ``wait_s`` the longest waiter's
    ``Time`` in the last snapshot (s); ``snapshots``: how many snapshots show it alone; ``span_s``:
    first to last of them (s); ``rows``: its processlist rows in them (for their lines);
    ``longest``: the processlist row of that longest waiter in the last snapshot (for its lines)."""

    thread: int
    time_s: float
    wait_s: float
    snapshots: int
    span_s: float
    rows: pd.DataFrame
    longest: pd.DataFrame

    def sentence(self) -> str:
        """How the bundle shows it holding, one sentence a reader can check."""
        idle = "idle" if str(self.rows["command"].iloc[-1]) in IDLE_COMMANDS else "its statement running"
        return (
            f"the only client session not waiting, {idle} since before the first wait (Time "
            f"{self.time_s:.0f} s "
            f">= the longest wait {self.wait_s:.0f} s), in {self.snapshots} snapshots"
        )


def _own_accounts(pl: pd.DataFrame, accounts: pd.DataFrame) -> set[tuple[str, str]]:
    """(user, client) of the collector: the accounts that run its own statement (a row of Command
    ``Query`` the timeline marks not active; ``processlist_accounts`` counts only such Query rows, the
    active ones are kept)."""
    own = pl[~pl["active"].to_numpy(dtype=bool) & value_is(pl["command"], lambda s: s == "Query")]
    found = (
        set(zip(own["user"].astype(str), own["host"].astype(str), strict=True)) if "host" in own else set()
    )
    if len(accounts) and {"user", "client", "command"} <= set(accounts.columns):
        query = accounts[value_is(accounts["command"], lambda s: s == "Query")]
        found |= set(zip(query["user"].astype(str), query["client"].astype(str), strict=True))
    return found


def only_session_not_waiting(tl: Timeline, waits: pd.DataFrame, resource: Resource) -> Alone | None:
    """The only client session not waiting while sessions wait for ``resource`` (``tl``: a host's
    timeline with ``processlist``, ``processlist_accounts`` and ``processlist_sessions``; ``waits``: its waits
    frame, ``analyzer.waits.model.WAIT_COLUMNS``), when every condition of the module docstring holds;
    None otherwise."""
    totals = tl.frame("processlist_sessions")
    if not len(totals) or not len(waits) or "sessions" not in totals:
        return None  # the sessions of each snapshot are not counted: the others are unknown
    total = totals.groupby("ts")["sessions"].sum()
    pl = tl.frame("processlist")
    if not len(pl) or not {"id", "time_s", "command"} <= set(pl.columns):
        return None
    mine = waits[
        waits["resource"].eq(resource.value).to_numpy(dtype=bool) & waits["session"].notna().to_numpy()
    ]
    if not len(mine):
        return None
    busy = waits[
        waits["session"].notna().to_numpy() & ~waits["resource"].isin(NOT_WAITS).fillna(False).to_numpy()
    ]
    waiting_any = set(zip(busy["ts"], pd.to_numeric(busy["session"]).astype(int), strict=True))
    accounts = every = tl.frame("processlist_accounts")
    if len(accounts) and "user" in accounts:
        accounts = accounts[~value_is(accounts["user"], lambda s: s.isin(NOT_CLIENTS))]
    if "user" not in pl or "host" not in pl or "active" not in pl:
        return None
    collector = _own_accounts(pl, accounts)
    ids = pd.to_numeric(pl["id"], errors="coerce")
    client = ~value_is(pl["user"], lambda s: s.isin(NOT_CLIENTS)) & ids.notna().to_numpy()
    idle = value_is(pl["command"], lambda s: s.isin(IDLE_COMMANDS))
    clients = pl[client & (idle | pl["active"].to_numpy(dtype=bool))]
    clients = clients.assign(
        _id=ids[clients.index],
        _t=pd.to_numeric(clients["time_s"], errors="coerce"),
        _own=[(str(u), str(h)) in collector for u, h in zip(clients["user"], clients["host"], strict=True)],
    )
    found: list[tuple[pd.Timestamp, int, float, float, pd.DataFrame, int]] = []
    for ts, waiters in mine.groupby("ts", sort=True):
        waited = pd.to_numeric(waiters["time_s"], errors="coerce")
        longest = float(waited.max())
        counted = accounts[(accounts["ts"] == ts).to_numpy()] if len(accounts) else accounts
        listed = every[(every["ts"] == ts).to_numpy()] if len(every) else every
        shown = int((pl["ts"] == ts).sum()) + (int(listed["sessions"].sum()) if len(listed) else 0)
        if ts not in total.index or int(total[ts]) > shown:
            return None  # sessions neither kept nor counted by account (internal ones included)
        if len(counted):
            own = [
                (str(u), str(c)) in collector for u, c in zip(counted["user"], counted["client"], strict=True)
            ]
            younger = (counted["time_max_s"] < longest).to_numpy()
            if (
                ~(pd.Series(own, index=counted.index).to_numpy() & younger)
                & (counted["sessions"] > 0).to_numpy()
            ).any():
                return None  # idle client sessions the timeline only counts: not alone
        here = clients[(clients["ts"] == ts).to_numpy()]
        here = here[~(here["_own"].to_numpy(dtype=bool) & (here["_t"] < longest).to_numpy())]
        waiting = set(pd.to_numeric(waiters["session"]).astype(int))
        rest = here[~here["_id"].astype(int).isin(waiting).to_numpy()]
        if len(rest) != 1 or (ts, int(rest["_id"].iloc[0])) in waiting_any:
            return None  # none, two or more not waiting, or the one left waits for something else
        own_t = float(rest["_t"].iloc[0])
        if not own_t >= longest:  # NaN fails too
            return None
        waiter = int(waiters["session"].loc[waited.idxmax()])  # ``longest`` is a number here
        found.append(
            (ts, int(rest["_id"].iloc[0]), own_t, longest, rest.drop(columns=["_id", "_t", "_own"]), waiter)
        )
    if len({f[1] for f in found}) != 1:
        return None
    span = (found[-1][0] - found[0][0]).total_seconds()
    if span < HOLDER_MIN_S:
        return None
    ts, thread, own, longest, _, waiter = found[-1]
    waiter_row = pl[(pl["ts"] == ts).to_numpy() & (ids == waiter).to_numpy()]
    return Alone(thread, own, longest, len(found), span, pd.concat([f[4] for f in found]), waiter_row)
