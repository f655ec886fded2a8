"""``galera-write-conflicts``: Galera nodes that write the same rows, read from their certification
conflicts and the tables each one writes.

Galera certifies each transaction's write-set at commit against the write-sets other nodes committed
meanwhile: a conflict rolls back the local transaction (``wsrep_local_cert_failures``), and a local
transaction holding rows an applied write-set needs is aborted (brute force, ``wsrep_local_bf_aborts``);
both return a deadlock error (1213) to the client. Per node (its ``mysqladmin`` counters, read as
rates over the minutes every node's capture holds with ``analyzer.waits.counters.rate``): those two
rates and the local commit rate (``wsrep_local_commits``). The tables: the write statements (INSERT,
REPLACE, UPDATE, DELETE) of each node's client sessions in its processlist (``fingerprint``; the
appliers, ``system user``, apply other nodes' writes and are left out) and of its InnoDB transaction
lists (INNODB_TRX ``query``, the monitor's TRANSACTIONS). A table written on two or more nodes is
the conflict's object; numbers in names are compared as the fingerprints print them (``sbtest?``).

Sources: Galera Cluster documentation, "Certification-Based Replication" and "Galera Status
Variables"; MariaDB Galera Cluster, "Galera Cluster Status Variables". No single holder is named: the
conflict is among the writing nodes' sessions (the finding has no culprit).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from analyzer.cluster import topology
from analyzer.cluster.nodes import cross
from analyzer.cluster.texts import CERT_TEXTS
from analyzer.detect import cite, span
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.timeline.timeline import Timeline
from analyzer.waits.counters import Rate, rate
from analyzer.waits.holders.replication import written

#: A node conflicts: certification failures plus brute-force aborts at this rate (per second) or more,
#: and CONFLICTS_MIN of them in the capture (a lone conflict is one unlucky commit, not a pattern).
CONFLICTS_PER_S = 0.5
CONFLICTS_MIN = 5.0
#: Critical: on a node, conflicts at CRITICAL_PER_S or more that are CRITICAL_SHARE or more of its
#: transactions (conflicts / (local commits + conflicts)): a large share of the writes fail.
CRITICAL_PER_S = 10.0
CRITICAL_SHARE = 0.25


def _window(timelines: Mapping[str, Timeline]) -> list[Window]:
    """The minutes every node's mysqladmin capture holds ([] when they do not overlap)."""
    bounds = []
    for tl in timelines.values():
        ma = tl.frame("mysqladmin")
        if len(ma):
            bounds.append((ma["ts"].min(), ma["ts"].max()))
    if not bounds:
        return []
    start, end = max(b[0] for b in bounds), min(b[1] for b in bounds)
    return [Window(start, end)] if end > start else []


def _per_s(found: Rate | None) -> float:
    return found.per_s if found is not None else 0.0


def _shared(galera: Mapping[str, Timeline], writers: list[str]) -> dict[str, tuple[str, list[str], str]]:
    """The tables written on two or more of ``writers``: key -> (name, the nodes, a statement)."""
    tables = {n: written(galera[n]) for n in writers}
    shared: dict[str, tuple[str, list[str], str]] = {}
    for found in tables.values():
        for key, (name, statement) in found.items():
            nodes = [m for m in writers if key in tables[m]]
            if len(nodes) > 1 and (key not in shared or "?" in shared[key][0]):
                shared[key] = (name, nodes, statement)
    return shared


def _evidence(
    galera: Mapping[str, Timeline],
    figures: dict[str, dict[str, Rate | None]],
    conflicting: list[str],
    shared: dict[str, tuple[str, list[str], str]],
) -> list[Evidence]:
    out = []
    for n in conflicting:
        for k, label in (("cert", "certification failures"), ("bf", "brute-force aborts")):
            r = figures[n][k]
            if r is not None:
                out.append(
                    cite(
                        galera[n],
                        f"{n} {r.name} ({label})",
                        round(r.per_s, 2),
                        "/s",
                        f"mysqladmin.{r.name}",
                        r.rows,
                    )
                )
    out += [
        Evidence(f"{name} written on", " and ".join(nodes), "", "processlist.fingerprint")
        for name, nodes, _ in shared.values()
    ]
    return out


def _words(
    figures: dict[str, dict[str, Rate | None]],
    conflicting: list[str],
    shared: dict[str, tuple[str, list[str], str]],
) -> dict[str, str]:
    """The texts' phrases: ``per_node_short``, ``per_node``, ``tables``, ``tables_short``, ``written``."""
    short = ", ".join(
        f"{n} {_per_s(figures[n]['cert']):,.1f} certification failures/s and "
        f"{_per_s(figures[n]['bf']):,.1f} brute-force aborts/s"
        for n in conflicting
    )
    per_node = "; ".join(
        f"{n} commits {_per_s(f['commits']):,.1f}/s, certification failures "
        f"{f['cert'].words() if f['cert'] else 'unknown'}, brute-force aborts "
        f"{f['bf'].words() if f['bf'] else 'unknown'}"
        for n, f in figures.items()
    )
    names = [v[0] for v in shared.values()]
    where = {tuple(v[1]) for v in shared.values()}
    if not shared:
        tables = "the snapshots show no table written on two nodes"
    elif len(where) == 1:
        tables = f"{', '.join(names)} written on {' and '.join(next(iter(where)))}"
    else:
        tables = "; ".join(f"{v[0]} written on {' and '.join(v[1])}" for v in shared.values())
    written_phrase = (
        "Written on more than one node: " + "; ".join(f"{v[0]} ({v[2]})" for v in shared.values()) + "."
        if shared
        else "The processlists and transaction lists show no table written on two nodes at the snapshots."
    )
    return {
        "per_node_short": short,
        "per_node": per_node,
        "tables": tables,
        "tables_short": ", ".join(names) if names else "the tables they share",
        "written": written_phrase,
    }


def galera_write_conflicts(timelines: Mapping[str, Timeline]) -> Finding | None:
    """``galera-write-conflicts``: two or more Galera nodes commit (wsrep_local_commits grows on each)
    and one or more conflict (certification failures plus brute-force aborts CONFLICTS_PER_S or more,
    CONFLICTS_MIN in all); names the nodes, their rates and the tables written on more than one node.
    Critical from CRITICAL_PER_S and CRITICAL_SHARE on a node."""
    galera = {n: tl for n, tl in timelines.items() if topology.is_galera(tl)}
    if len(galera) < 2:
        return None
    windows = _window(galera)
    figures = {
        n: {
            k: rate(tl, c, windows)
            for k, c in (
                ("cert", "wsrep_local_cert_failures"),
                ("bf", "wsrep_local_bf_aborts"),
                ("commits", "wsrep_local_commits"),
            )
        }
        for n, tl in galera.items()
    }
    writers = [n for n, f in figures.items() if f["commits"] is not None and f["commits"].growth > 0]
    conflicting = [
        n
        for n, f in figures.items()
        if _per_s(f["cert"]) + _per_s(f["bf"]) >= CONFLICTS_PER_S
        and sum(r.growth for r in (f["cert"], f["bf"]) if r is not None) >= CONFLICTS_MIN
    ]
    if len(writers) < 2 or not conflicting:
        return None
    conflicting.sort(key=lambda n: -(_per_s(figures[n]["cert"]) + _per_s(figures[n]["bf"])))
    shared = _shared(galera, writers)
    evidence = _evidence(galera, figures, conflicting, shared)
    top = figures[conflicting[0]]
    worst = _per_s(top["cert"]) + _per_s(top["bf"])
    share = worst / (_per_s(top["commits"]) + worst)
    rows = top["cert"] or top["bf"]
    finding = CERT_TEXTS.finding(
        "galera-write-conflicts",
        Severity.CRITICAL if worst >= CRITICAL_PER_S and share >= CRITICAL_SHARE else Severity.WARNING,
        windows or span(rows.rows if rows else pd.DataFrame()),
        evidence,
        writers=" and ".join(writers),
        n_nodes=len(galera),
        **_words(figures, conflicting, shared),
    )
    # no single holder: the conflict is between the nodes' sessions, named by nodes and tables
    return cross(finding, list(dict.fromkeys([*conflicting, *writers])))
