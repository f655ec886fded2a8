"""The result types of the findings engine: frozen, slotted, hashable, easy to compare in tests.

A rule returns a ``Finding`` (or None). The engine turns a rule whose inputs are missing into
``NotEvaluated`` and a rule that raised into ``RuleFailed``; neither stops the other rules.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import pandas as pd

from analyzer.isotime import iso_utc


class Severity(enum.StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for the most severe: sort findings by it."""
        return severity_rank(self.value)


#: The one severity order, most severe first (the engine, the web and the API sort by it).
SEVERITY_ORDER: tuple[Severity, ...] = (Severity.CRITICAL, Severity.WARNING, Severity.INFO)


def severity_rank(value: str) -> int:
    """Position of a severity (``"critical"`` ...) in SEVERITY_ORDER; unknown values sort last."""
    for i, sev in enumerate(SEVERITY_ORDER):
        if sev.value == value:
            return i
    return len(SEVERITY_ORDER)


@dataclass(frozen=True, slots=True)
class Window:
    """A closed time interval, UTC."""

    start: pd.Timestamp
    end: pd.Timestamp

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True, slots=True)
class Evidence:
    """One number that made a rule fire, pointing at its series and at the raw lines it came from.

    ``series``: the timeline series (``vmstat.r``, ``processlist.state``), ``<frame>.<column>`` or a
    form ``analyzer.timeline.frames.series_problem`` accepts (a finding's charts are read from it);
    ``member`` and ``lines`` (first, last; 1-based) locate the raw capture lines behind the value.
    """

    label: str
    value: float | int | str
    unit: str
    series: str
    member: str | None = None
    lines: tuple[int, int] | None = None


#: What a culprit can be (``Culprit.kind``), the words of the field.
CULPRIT_KINDS: tuple[str, ...] = (
    "session",  # a MySQL connection: id = processlist Id (the thread id KILL takes)
    "transaction",  # an InnoDB transaction: id = trx id, user/host/statement of its session
    "process",  # an OS process: id = PID, statement = its command line
    "thread",  # an OS thread: id = TID, statement = its command line
    "statement",  # a query: id = its fingerprint (analyzer/statements/fingerprint.py)
    "host",  # a server of the bundle (a cluster node) or a client host
    "filesystem",  # a mount point: id = the mount, statement = what MySQL keeps there
    "setting",  # a server or kernel variable: id = its name, statement = its value
    "account",  # a MySQL account holding connections: id = user@client host, statement = what they do
)


@dataclass(frozen=True, slots=True)
class Culprit:
    """What a finding blames, named from the bundle's own lines (issue "Name the culprit").

    ``kind`` is one of CULPRIT_KINDS and ``id`` names it in that kind's terms (a processlist Id, a PID,
    a fingerprint, a mount point, a variable name). ``user`` and ``host`` are the MySQL account of a
    session (``user@host``: the *client* host, not the server the finding is about); ``statement`` is
    the SQL, the command line or the setting's value; ``since`` when it started (a transaction's
    ``trx_started``, a process's start), UTC; ``blocks`` how many sessions or threads wait on it;
    ``evidence`` the lines that name it.
    """

    kind: str
    id: str
    user: str | None = None
    host: str | None = None
    statement: str | None = None
    since: pd.Timestamp | None = None
    blocks: int | None = None
    evidence: tuple[Evidence, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in CULPRIT_KINDS:
            raise ValueError(f"culprit kind {self.kind!r} is not one of {CULPRIT_KINDS}")


@dataclass(frozen=True, slots=True)
class Finding:
    """A diagnosis, in the order STYLE.md gives: what, how bad, when, why we think so, what to do."""

    key: str
    severity: Severity
    title: str
    explanation: str
    windows: tuple[Window, ...]
    evidence: tuple[Evidence, ...]
    recommendation: str
    caveats: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    confidence: str = ""
    disproof: str = ""
    related: tuple[str, ...] = field(default=())
    rule_version: int = 1
    culprit: Culprit | None = None
    #: The server the finding is about (``Host.name``; the engine sets it when it runs a host's rules),
    #: or None in a one-host analysis outside a case. A cross-host finding (analyzer/cluster/rules.py)
    #: leaves ``host`` None and names every server it involves in ``hosts``, the cause first.
    #: (``Culprit.host`` is something else: the client host of a blamed session, user@host.)
    host: str | None = None
    hosts: tuple[str, ...] = ()
    #: What the finding is about, as ``(kind, id)`` pairs the join functions of analyzer/reasoning/links.py
    #: read:
    #: ``("session", "17")`` a processlist Id, ``("thread", "4242")`` an OS TID, ``("process", "981")``
    #: a PID, ``("device", "vda")`` a block device, ``("statement", fingerprint)``. Not shown to readers.
    subjects: tuple[tuple[str, str], ...] = ()


#: How the bundle joins a cause to its effect (``Link.join``), the words of the field.
JOIN_KINDS: tuple[str, ...] = (
    "thread",  # the same OS thread or MySQL thread id (ps TID, processlist Id, -lock-waits, -transactions)
    "session",  # the same MySQL sessions (processlist Id, user, State, statement fingerprint)
    "process",  # the same OS process (PID, program from -top or ps)
    "device",  # the same block device (iostat, diskstats, the process's I/O)
    "host",  # the same server, through a counter both findings read (vmstat, mpstat, /proc)
    "replication",  # a source and its replica (SHOW SLAVE/REPLICA STATUS, Master_Host, positions)
    "galera",  # nodes of one Galera cluster (wsrep_cluster_state_uuid, flow control)
)


@dataclass(frozen=True, slots=True)
class Link:
    """``cause`` explains ``effect`` because the bundle joins them, never because their times overlap.

    ``cause`` and ``effect`` name findings as ``(key, host)`` (``host`` as on ``Finding.host``: None for a
    cross-host finding); ``join`` is one of JOIN_KINDS; ``sentence`` says in one sentence how the cause
    explains the effect, naming the joined thing ("the waiter in -lock-waits, thread 17, is the replica's
    SQL thread"); ``evidence`` the lines that show the join.
    """

    cause: tuple[str, str | None]
    effect: tuple[str, str | None]
    join: str
    sentence: str
    evidence: tuple[Evidence, ...] = ()

    def __post_init__(self) -> None:
        if self.join not in JOIN_KINDS:
            raise ValueError(f"join {self.join!r} is not one of {JOIN_KINDS}")
        if self.cause == self.effect:
            raise ValueError(f"a finding cannot explain itself: {self.cause}")


def evidence_json(e: Evidence) -> dict[str, object]:
    """One ``Evidence`` as the JSON object stored and served: label, value, unit, series, member, lines."""
    return {
        "label": e.label,
        "value": e.value,
        "unit": e.unit,
        "series": e.series,
        "member": e.member,
        "lines": list(e.lines) if e.lines else None,
    }


def culprit_json(c: Culprit | None) -> dict[str, object] | None:
    """A ``Culprit`` as the JSON object of ``analyze --json`` and the API:
    ``{kind, id, user, host, statement, since, blocks, evidence}`` (``since`` ISO 8601 UTC), or None.

    >>> culprit_json(Culprit(kind="session", id="42", user="app", host="10.0.0.7", blocks=20))["blocks"]
    20
    """
    if c is None:
        return None
    return {
        "kind": c.kind,
        "id": c.id,
        "user": c.user,
        "host": c.host,
        "statement": c.statement,
        "since": iso_utc(c.since, timespec="microseconds"),
        "blocks": c.blocks,
        "evidence": [evidence_json(e) for e in c.evidence],
    }


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    """A rule that could not run: the inputs it needs are missing from the bundle."""

    key: str
    missing: tuple[str, ...]
    #: the host whose timeline lacked the inputs (``Host.name``; None outside a case's hosts)
    host: str | None = None

    @property
    def reason(self) -> str:
        return "needs " + " and ".join(self.missing)


@dataclass(frozen=True, slots=True)
class RuleFailed:
    """A rule that raised; ``error`` is ``Type: message``. The case still completes."""

    key: str
    error: str
    #: the host whose timeline the rule failed on (None: a cross-host rule, or outside a case's hosts)
    host: str | None = None
