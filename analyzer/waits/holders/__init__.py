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
global read or backup lock), ``purge`` (purge's read view), ``slots`` (connection slots, disk space, open files),
``replication`` (replica acknowledgement, the replica applier), ``pool`` (the thread pool's worker
slots: the statements holding every thread group while connections get no thread). Pure: no I/O, no
clock, no Django.
"""

from __future__ import annotations

import pandas as pd

from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import locks, pool, purge, replication, slots  # noqa: F401  (registers the readers)
from analyzer.waits.holding import HOLDER_MIN_S, READERS, Holding, reader_inputs, reads

__all__ = ["HOLDER_MIN_S", "READERS", "Holding", "holders", "reader_inputs", "reads"]


def holders(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """Every holding of ``tl`` (a host's timeline) given its waits frame, holders shown first, then by
    waiters, then by resource. Readers of resources nobody waits for are skipped unless ``always``."""
    waited = {str(r) for r in waits["resource"].dropna().unique()} if len(waits) else set()
    out: list[Holding] = []
    for resource, readers in READERS.items():
        for fn, always in readers:
            if always or resource.value in waited:
                out.extend(fn(tl, waits))
    return sorted(out, key=lambda h: (not h.named, -h.waiters, h.resource.value))
