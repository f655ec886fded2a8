"""What a MySQL Shell diagnostics zip says across its members: each member's host, its clock, and the
status counters of the high-load iterations as rates.

A MySQL Shell result file names neither its server nor its time zone (``parsers.mysqlsh``): its
``<instance_id>.`` prefix ties it to the ``<instance_id>.instance`` file of the same folder, which
names the server (``parsers.mysqlsh_instance``). ``settle(sources)`` runs once every member is parsed,
before the bundle places members on hosts (``parsers.ingest.bundle``), and:

1. **Hosts.** Every member of a folder with MySQL Shell results is grouped by its folder (a
   high-load ``diagnostics-raw/`` folder belongs to the folder above it) and its ``<instance_id>.``
   prefix (none: the one server of a collection without ``allMembers``). Each member of a group gets
   ``meta["host"]`` and ``meta["host_origin"]`` from the group's ``.instance`` file; without one, from
   its ``global_variables.tsv`` (``report_host``, else ``hostname``, and ``port``); without either,
   ``mysqlsh-instance-<id>`` for a prefixed group (the prefix is the only clue), and nothing for an
   unprefixed one.
2. **Clocks.** ``# Started:`` stamps are the wall clock of the machine MySQL Shell ran on (``client``);
   ``performance_schema.error_log``'s LOGGED, a copied error log and the ``.instance`` times are the
   server's. The client's UTC offset is read from a ``metrics.tsv`` of the group (its Started stamp
   against the server's ``UNIX_TIMESTAMP()`` in the same file, rounded to 15 min); the server's from
   the ``.instance`` file (``Time Zone Offset``). A client stamp without a metrics file is read with
   the server's offset (MySQL Shell run in the server's zone), and says so in
   ``meta["mysqlsh"]["offset_origin"]``. Sources whose offset stays unknown keep their local times
   (the bundle then warns). What the metrics file says beyond the offset is the server's clock
   against MySQL Shell's, one clock for every member: the ``.instance`` source gets it as
   ``meta["clock_skew_s"]`` (seconds, server minus MySQL Shell, within the query's milliseconds),
   so the members' clocks can be set against each other.
3. **Ages.** ``information_schema.innodb_trx``'s ``trx_started`` is the server's wall clock: the
   ``active_s`` counted to the Started stamp is corrected by the server's wall clock minus MySQL
   Shell's (the two offsets and the skew), recorded in ``meta["mysqlsh"]["ages_corrected_s"]``.
4. **Rates.** The ``SHOW GLOBAL STATUS`` of consecutive iterations of one member are samples of one
   series: each later table's counters get ``per_s`` (change / seconds between the Started stamps;
   NaN where a counter went down; gauges keep NaN, as ``parsers.mysqladmin`` does).

Plain Python over ``ParsedSource`` objects: no I/O, no Django.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

import numpy as np
import pandas as pd

from parsers import mysqlsh, mysqlsh_instance
from parsers.base import OFFSET_QUANTUM_S, ParsedSource
from parsers.mysqladmin import GAUGES

#: The high-load mode's folder of per-iteration results, inside the collection's folder.
RAW_DIR = "diagnostics-raw"


def root_of(member: str) -> str:
    """The collection folder of a member (``diagnostics-raw/`` belongs to the folder above).

    >>> root_of("z/mysql-diagnostics-20261127-140210/diagnostics-raw/iteration-2.SHOW_GLOBAL_STATUS.tsv")
    'z/mysql-diagnostics-20261127-140210'
    """
    d = posixpath.dirname(member)
    if posixpath.basename(d) == RAW_DIR:
        d = posixpath.dirname(d)
    return d


def instance_of(member: str) -> str | None:
    """The ``<instance_id>.`` prefix of a member's file name, or None.

    >>> instance_of("d/3.SHOW_GLOBAL_STATUS.tsv"), instance_of("d/instance")
    ('3', None)
    """
    m = mysqlsh.INSTANCE_PREFIX.match(posixpath.basename(member))
    return m["id"] if m else None


def _is_shell(source: ParsedSource) -> bool:
    return source.format in (mysqlsh.FORMAT, mysqlsh_instance.FORMAT)


def _name(group: list[ParsedSource], instance: str | None) -> tuple[str | None, str, ParsedSource | None]:
    """(host name, reason, the .instance source) of one group."""
    inst = next((s for s in group if s.format == mysqlsh_instance.FORMAT), None)
    if inst is not None and inst.meta.get("host"):
        return str(inst.meta["host"]), str(inst.meta["host_origin"]), inst
    for s in group:
        found = s.meta.get("variables")
        if s.format == mysqlsh.FORMAT and isinstance(found, dict) and found.get("hostname"):
            port = int(found["port"]) if str(found.get("port", "")).isdigit() else None
            name = mysqlsh_instance.host_name(str(found["hostname"]), found.get("report_host"), port)
            return (
                name,
                f"the hostname/report_host and port variables in {posixpath.basename(s.member)}",
                None,
            )
    if instance is not None:
        return (
            f"mysqlsh-instance-{instance}",
            (f"MySQL Shell instance prefix '{instance}.' only (no .instance file, no variables)"),
            None,
        )
    return None, "", None


def _client_offset(group: list[ParsedSource]) -> tuple[int | None, str, float | None]:
    """The MySQL Shell machine's UTC offset from a metrics file's Started stamp against the server's
    ``UNIX_TIMESTAMP()`` of the same query, its reason, and what is left once the offset is taken
    out: the server's clock minus MySQL Shell's, in seconds (the query's own few milliseconds
    included)."""
    for s in group:
        shell = s.meta.get("mysqlsh")
        epoch = s.meta.get("server_epoch")
        if isinstance(shell, dict) and shell.get("started") and isinstance(epoch, float):
            started = pd.Timestamp(str(shell["started"]))
            utc = pd.Timestamp(epoch, unit="s")
            gap = (started - utc).total_seconds()
            offset = int(round(gap / OFFSET_QUANTUM_S) * OFFSET_QUANTUM_S)
            why = f"# Started in {posixpath.basename(s.member)} against the server's UNIX_TIMESTAMP() there"
            return offset, why, round(offset - gap, 3)
    return None, "", None


def _ages(source: ParsedSource, gap: float | None) -> None:
    """Correct the ages a result counted from the server's wall clock to MySQL Shell's Started stamp
    (``innodb_trx``'s ``active_s``) by ``gap``: the server's wall clock minus MySQL Shell's."""
    shell = source.meta.get("mysqlsh")
    if (
        not isinstance(shell, dict)
        or not shell.get("server_ages")
        or gap is None
        or "ages_corrected_s" in shell
    ):
        return
    for frame in source.frames.values():
        for col in shell["server_ages"]:
            if col in frame:
                frame[col] = frame[col] + gap
    shell["ages_corrected_s"] = gap


def _rates(group: list[ParsedSource]) -> None:
    """Fill ``per_s`` of each later SHOW GLOBAL STATUS table of one member from the one before."""
    tables = sorted(
        (s for s in group if s.format == mysqlsh.FORMAT and len(s.frames.get("mysqladmin", ()))),
        key=lambda s: s.frames["mysqladmin"]["ts"].iloc[0],
    )
    for before, after in zip(tables, tables[1:], strict=False):
        a, b = before.frames["mysqladmin"], after.frames["mysqladmin"]
        dt = (b["ts"].iloc[0] - a["ts"].iloc[0]).total_seconds()
        if dt <= 0:
            continue
        prev = dict(zip(a["variable"].astype(str), a["value"], strict=True))
        old = b["variable"].astype(str).map(prev).to_numpy(dtype="float64", na_value=np.nan)
        change = b["value"].to_numpy(dtype="float64") - old
        gauge = b["variable"].astype(str).isin(GAUGES).to_numpy()
        b["per_s"] = np.where(gauge | (change < 0), np.nan, change / dt)
        after.meta["interval_s"] = dt


def settle(sources: Sequence[ParsedSource]) -> dict[str, float]:
    """Hosts, clocks and rates of the MySQL Shell members of ``sources`` (module docstring), in place.
    Returns member -> seconds its times were moved back (local wall clock -> UTC)."""
    roots = {root_of(s.member) for s in sources if _is_shell(s)}
    if not roots:
        return {}
    groups: dict[tuple[str, str | None], list[ParsedSource]] = {}
    for s in sources:
        root = root_of(s.member)
        if root in roots:
            groups.setdefault((root, instance_of(s.member)), []).append(s)
    shifted: dict[str, float] = {}
    for (_, instance), group in groups.items():
        name, origin, inst = _name(group, instance)
        server = inst.meta.get("utc_offset_s") if inst is not None else None
        client, client_why, skew = _client_offset(group)
        if inst is not None and skew is not None:
            inst.meta["clock_skew_s"] = skew
            inst.meta["clock_skew_origin"] = f"the server's clock minus MySQL Shell's: {client_why}"
        gap = None if client is None or server is None else int(server) - client + (skew or 0.0)
        for s in group:
            _ages(s, gap)
            if name and s is not inst:
                s.meta["host"], s.meta["host_origin"] = name, origin
            shell = s.meta.get("mysqlsh")
            if not s.ts_is_local:
                continue
            if isinstance(shell, dict) and shell.get("clock") == "client" and client is not None:
                offset, why = client, f"the MySQL Shell machine's offset: {client_why}"
            elif server is not None:
                offset, why = (
                    int(server),
                    (f"the server's offset ({posixpath.basename(inst.member)}: Time Zone Offset)"),
                )  # type: ignore[union-attr]
                if isinstance(shell, dict) and shell.get("clock") == "client":
                    why += ", MySQL Shell assumed to run in the server's zone (no metrics.tsv to tell)"
            else:
                continue
            s.shift(offset)
            if isinstance(shell, dict):
                shell["offset_origin"] = why
            if offset:
                shifted[s.member] = float(offset)
        _rates(group)
    return shifted
