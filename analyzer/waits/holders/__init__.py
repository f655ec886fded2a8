"""Who holds what sessions wait for: one reader per resource, one shape for all of them.

The wait model (``analyzer.waits.read.waits``) says, for every session of every snapshot, which
``Resource`` it waits for. This package says who holds each resource, found one way per resource and
named only when the bundle shows it holding:

- a reader is a function ``(tl, waits) -> list[Holding]`` registered for one resource with
  ``@reads(Resource.X)``; ``tl`` is a host's ``Timeline``, ``waits`` its waits frame
  (``analyzer.waits.model.WAIT_COLUMNS``). A reader never guesses: when the bundle does not show a
  holder (no transaction seen blocking across snapshots, no session that took the lock), it returns a
  ``Holding`` whose ``holder`` is None and whose ``contention`` (or ``not_shown``) says what is known;
- ``holders(tl, waits)`` runs every reader whose resource has waiters (or, for resources read from
  counters or the file systems, every reader: ``always=True``) and returns their holdings, the ones
  with a holder first, then by waiters;
- ``Holding.fix`` is the holder's fix (end the session holding the read view; fix the pool of the user
  holding idle connections), not the setting's.

Readers live in the modules of this package, one module per family: ``locks`` (row, metadata, table,
global read or backup lock, purge's read view), ``slots`` (connection slots, disk space, open files),
``replication`` (replica acknowledgement, the replica applier). Pure: no I/O, no clock, no Django.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from analyzer.findings import Culprit, Evidence, Window
from analyzer.timeline.timeline import Timeline
from analyzer.waits.model import Resource

#: A holder is named only when the bundle shows it holding for at least this long (first to last
#: snapshot that shows it holding, plus one step): a blocker seen for one second is one of many.
HOLDER_MIN_S = 2.0


@dataclass(frozen=True, slots=True)
class Holding:
    """One resource waited for on one host, and who holds it, as the bundle shows it.

    ``resource``: what is waited for; ``host``: the server (``Timeline.host``); ``holder``: the
    culprit holding it (a session, transaction, account, process, file system, host ...), None when the
    bundle does not show one; ``shown_by``: how the bundle shows it holding, one sentence a reader can
    check (``trx 421337 blocks in 9 snapshots over 12 s (-lock-waits)``); ``held_s``: seconds it is
    seen holding (first to last snapshot showing it, s); ``age_s``: the holder's own age when known
    (its transaction's age, its Time), s; ``waiters``: the most sessions waiting on it at once;
    ``windows``: when they waited; ``object``: what is held when the bundle says (a table, a lock, a
    mount point); ``contention``: without a single holder, what the bundle shows instead
    (``contention among 16 sessions on sb.sbtest1, 45 deadlocks per second``); ``fix``: the
    holder's fix, or the contention's; ``evidence``: the lines that show it.
    """

    resource: Resource
    host: str | None
    holder: Culprit | None
    shown_by: str
    held_s: float = 0.0
    age_s: float | None = None
    waiters: int = 0
    windows: tuple[Window, ...] = ()
    object: str | None = None
    contention: str | None = None
    fix: str = ""
    evidence: tuple[Evidence, ...] = field(default=())

    @property
    def named(self) -> bool:
        """A holder is shown (and held HOLDER_MIN_S or more)."""
        return self.holder is not None and self.held_s >= HOLDER_MIN_S


Reader = Callable[[Timeline, pd.DataFrame], list[Holding]]
#: resource -> its readers, in registration order; ``always``: run even when no session waits for it.
READERS: dict[Resource, list[tuple[Reader, bool]]] = {}
#: The timeline inputs (frame names, ``variables``) the readers read: a rule that calls ``holders``
#: declares them (the engine hands a rule only the inputs it declares).
READER_INPUTS: set[str] = set()


def reads(
    resource: Resource, *, always: bool = False, inputs: tuple[str, ...] = ()
) -> Callable[[Reader], Reader]:
    """Register a holder reader for ``resource`` (``always``: read even when no session waits;
    ``inputs``: the frames it reads, added to ``READER_INPUTS``)."""

    def register(fn: Reader) -> Reader:
        READERS.setdefault(resource, []).append((fn, always))
        READER_INPUTS.update(inputs)
        return fn

    return register


def reader_inputs() -> tuple[str, ...]:
    """Every input a registered reader declared, sorted (for a rule's ``optional``)."""
    return tuple(sorted(READER_INPUTS))


def holders(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """Every holding of ``tl`` (a host's timeline) given its waits frame, holders shown first, then by
    waiters, then by resource. Readers of resources nobody waits for are skipped unless ``always``."""
    waited = set(waits["resource"].dropna().astype(str)) if len(waits) else set()
    out: list[Holding] = []
    for resource, readers in READERS.items():
        for fn, always in readers:
            if always or resource.value in waited:
                out.extend(fn(tl, waits))
    return sorted(out, key=lambda h: (not h.named, -h.waiters, h.resource.value))


from analyzer.waits.holders import locks, replication, slots  # noqa: E402,F401  (registers the readers)
