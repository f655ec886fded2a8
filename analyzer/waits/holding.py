"""The shape of a holding: who holds what sessions wait for (``Holding``), the readers' registry
(``@reads``) and the rule that a holder is named only when shown holding for ``HOLDER_MIN_S``.
``analyzer.waits.holders`` runs the readers; this module is what they and their callers share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from analyzer.evidence.blockers import HOLDER_MIN_S
from analyzer.findings import Culprit, Evidence, Window
from analyzer.timeline.timeline import Timeline
from analyzer.waits.model import Resource


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
