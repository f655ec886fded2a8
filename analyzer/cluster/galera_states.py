"""Galera: each node's own state over the capture, and the node that falls behind while the others
write on.

Read per node from its ``mysqladmin`` wsrep status (one sample a second under pt-stalk):
``wsrep_local_state`` (1 Joining, 2 Donor/Desynced, 3 Joined, 4 Synced: the number behind
``wsrep_local_state_comment``), ``wsrep_desync_count`` (how many desync requests hold the node:
``wsrep_desync=ON``, FLUSH TABLES WITH READ LOCK, a backup lock, a donor role),
``wsrep_local_recv_queue`` / ``wsrep_local_send_queue`` (write-sets waiting to be applied / sent),
``wsrep_flow_control_sent`` and ``wsrep_flow_control_paused_ns`` (counters), ``wsrep_local_cert_failures``
(counter) and ``wsrep_last_committed`` (the cluster's seqno as this node applied it).

A synced node that cannot keep up sends flow control and the whole cluster waits
(``galera-flow-control``). A node that is not Synced (desynced, donor, joining) sends none: the
others write on and its receive queue grows; its reads are stale and, past the gcache, it needs a
full state transfer. That node is the finding ``galera-node-behind``, with its cause when the capture
shows it. Sources: Galera Cluster documentation, "Galera Status Variables" and "Node State Changes";
MariaDB Knowledge Base, "Galera Cluster Status Variables" and "wsrep_desync".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from analyzer.cluster import topology
from analyzer.cluster.nodes import cross, paused_share
from analyzer.cluster.texts import GALERA_NODE_FIX, GALERA_NODE_HOLDER_FIX, GALERA_NODE_TEXTS
from analyzer.detect import cite, growth, span, status
from analyzer.findings import Culprit, Evidence, Finding, Severity
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holding import READERS, Holding
from analyzer.waits.model import Resource
from analyzer.waits.read import waits

#: wsrep_local_state -> wsrep_local_state_comment (Galera's node state machine).
STATE_NAMES = {1.0: "Joining", 2.0: "Donor/Desynced", 3.0: "Joined", 4.0: "Synced"}
SYNCED = 4.0
#: A receive queue that grows by this many write-sets in the capture and reaches it: the node falls
#: behind (a synced node under flow control keeps it near gcs.fc_limit, 16 by default).
RECV_BEHIND = 50.0


@dataclass(frozen=True, slots=True)
class Node:
    """One Galera node's figures over its capture (see the module docstring); ``*_rows`` for evidence."""

    name: str
    states: tuple[str, ...]
    state_rows: pd.DataFrame
    desync: float
    desync_rows: pd.DataFrame
    recv_first: float
    recv_max: float
    recv_rows: pd.DataFrame
    send_max: float
    sent: float
    paused: float | None
    cert_failures: float
    committed: float

    def words(self) -> str:
        """One node's line of the explanation."""
        paused = f"{100 * self.paused:.0f} %" if self.paused is not None else "unknown"
        return (
            f"{self.name} {' then '.join(self.states) or 'state unknown'}, receive queue up to "
            f"{self.recv_max:.0f}, "
            f"send queue up to {self.send_max:.0f}, flow control sent {self.sent:.0f}, paused {paused}, "
            f"certification failures +{self.cert_failures:.0f}, desync count {self.desync:.0f}"
        )


def _max(rows: pd.DataFrame) -> float:
    return float(rows["value"].max()) if len(rows) and rows["value"].notna().any() else 0.0


def node(name: str, tl: Timeline) -> Node:
    """The figures of node ``name`` from its timeline's wsrep status rows."""
    state = status(tl, "wsrep_local_state").dropna(subset=["value"])
    names = [STATE_NAMES.get(float(v), f"state {v:.0f}") for v in state["value"]]
    seen = tuple(dict.fromkeys(names))
    recv = status(tl, "wsrep_local_recv_queue").dropna(subset=["value"])
    paused, _ = paused_share(tl)
    return Node(
        name=name,
        states=seen,
        state_rows=state,
        desync=_max(status(tl, "wsrep_desync_count")),
        desync_rows=status(tl, "wsrep_desync_count"),
        recv_first=float(recv["value"].iloc[0]) if len(recv) else 0.0,
        recv_max=_max(recv),
        recv_rows=recv,
        send_max=_max(status(tl, "wsrep_local_send_queue")),
        sent=growth(status(tl, "wsrep_flow_control_sent")),
        paused=paused,
        cert_failures=growth(status(tl, "wsrep_local_cert_failures")),
        committed=growth(status(tl, "wsrep_last_committed")),
    )


def _behind(n: Node) -> bool:
    """Not Synced in part of the capture or its receive queue growing RECV_BEHIND, and sending no flow
    control (a node that sends it holds the cluster back instead: ``galera-flow-control``)."""
    not_synced = bool(len(n.state_rows)) and bool((n.state_rows["value"] != SYNCED).any())
    growing = n.recv_max >= RECV_BEHIND and n.recv_max - n.recv_first >= RECV_BEHIND
    return (not_synced or growing) and n.sent <= 0


def _cause(n: Node) -> str:
    """What the node's own status says of why it is out of sync."""
    if n.desync > 0:
        return (
            f"desynced (wsrep_desync_count {n.desync:.0f}: wsrep_desync=ON, FLUSH TABLES WITH READ LOCK or a "
            "backup lock on it)"
        )
    if "Donor/Desynced" in n.states:
        return "the donor of a state transfer"
    if {"Joining", "Joined"} & set(n.states):
        return "joining the cluster (state transfer)"
    return "not applying as fast as the others write (its capture shows no desync)"


def lock_holder(tl: Timeline) -> Holding | None:
    """The holding of the global read or backup lock that the node's capture names a holder of (the
    ``analyzer.waits.holders`` readers of ``GLOBAL_READ_LOCK``, run as ``holders`` runs them), the
    longest held; None when the bundle shows none."""
    w = waits(tl)
    waited = bool(len(w)) and bool(w["resource"].eq(Resource.GLOBAL_READ_LOCK.value).any())
    # the readers of this one resource, as holders() runs them: the others' are not needed here
    found = [
        h
        for fn, always in READERS.get(Resource.GLOBAL_READ_LOCK, [])
        if always or waited
        for h in fn(tl, w)
        if h.resource is Resource.GLOBAL_READ_LOCK and h.named
    ]
    return max(found, key=lambda h: h.held_s) if found else None


def holder_words(h: Holding) -> str:
    """``"session 14 backup@localhost"``: the holder as the title and the fix name it."""
    c = h.holder
    if c is None:
        return "a session the capture does not name"
    account = f" {c.user}@{c.host}" if c.user else ""
    return f"{c.kind} {c.id}{account}"


def how_shown(h: Holding) -> str:
    """What shows ``h``'s holder holding, without the holder's own words that ``shown_by`` begins with
    (``"session 15 ... holds the global read / backup lock: the only client session not waiting, ..."``
    -> ``"the only client session not waiting, ..."``): the fix names the holder once."""
    head, sep, rest = h.shown_by.partition(": ")
    return (
        rest
        if sep and h.holder is not None and head.startswith(f"{h.holder.kind} {h.holder.id}")
        else h.shown_by
    )


def galera_node_behind(timelines: Mapping[str, Timeline]) -> Finding | None:
    """``galera-node-behind``: among two or more Galera nodes, the node that is not Synced or whose
    receive queue grows RECV_BEHIND while it sends no flow control, and another node commits meanwhile
    (wsrep_last_committed grows there). The node with the longest queue when several are."""
    nodes = {name: node(name, tl) for name, tl in timelines.items() if topology.is_galera(tl)}
    if len(nodes) < 2:
        return None
    behind = [n for n in nodes.values() if _behind(n)]
    writers = [n for n in nodes.values() if n.committed > 0 and n not in behind]
    if not behind or not writers:
        return None
    n = max(behind, key=lambda b: b.recv_max)
    tl = timelines[n.name]
    evidence: list[Evidence] = [
        cite(
            tl, "wsrep_local_state", " then ".join(n.states), "", "mysqladmin.wsrep_local_state", n.state_rows
        ),
        cite(
            tl,
            "wsrep_local_recv_queue (max)",
            n.recv_max,
            "write-sets",
            "mysqladmin.wsrep_local_recv_queue",
            n.recv_rows,
        ),
    ]
    if n.desync > 0:
        evidence.append(
            cite(tl, "wsrep_desync_count (max)", n.desync, "", "mysqladmin.wsrep_desync_count", n.desync_rows)
        )
    others = [w.name for w in writers]
    for w in writers:
        rows = status(timelines[w.name], "wsrep_last_committed")
        evidence.append(
            cite(
                timelines[w.name],
                f"{w.name} wsrep_last_committed (growth)",
                w.committed,
                "write-sets",
                "mysqladmin.wsrep_last_committed",
                rows,
            )
        )
    held = lock_holder(tl) if n.desync > 0 or "Donor/Desynced" in n.states else None
    cause = _cause(n)
    if held is not None:
        cause += f"; its {Resource.GLOBAL_READ_LOCK.value} is held by {holder_words(held)}"
        evidence += list(held.evidence)
    fix = (
        GALERA_NODE_HOLDER_FIX.format(
            node=n.name, holder=holder_words(held), shown_by=how_shown(held), holder_fix=held.fix or ""
        )
        if held is not None
        else GALERA_NODE_FIX.format(node=n.name)
    )
    finding = GALERA_NODE_TEXTS.finding(
        "galera-node-behind",
        Severity.WARNING,
        span(n.recv_rows) or span(n.state_rows),
        evidence,
        node=n.name,
        state=n.states[-1] if n.states else "state unknown",
        cause=cause,
        fix=fix,
        queue=n.recv_max,
        others=" and ".join(others),
        write="write" if len(others) > 1 else "writes",
        committed=max(w.committed for w in writers),
        per_node="; ".join(nodes[k].words() for k in nodes),
        n_nodes=len(nodes),
    )
    culprit = Culprit(kind="host", id=n.name, statement=_cause(n), evidence=tuple(evidence[:2]))
    if held is not None and held.holder is not None:
        culprit = replace(held.holder, evidence=held.holder.evidence or tuple(held.evidence))
    return cross(replace(finding, culprit=culprit), [n.name, *others])
