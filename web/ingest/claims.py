"""Who is working on a case: claims, heartbeats, and taking a case back from a worker that died.

An ingest (one task, or with ``CASEBOOK_INGEST_FANOUT`` a chord of part tasks and the analysis that
joins them, web/ingest/fanout.py) works on a case only under a claim:

- ``claim_case`` moves a QUEUED case to PARSING with a fresh token, under a row lock. It also takes
  over a case whose holder went silent (no heartbeat for ``CASEBOOK_STALE_AFTER`` seconds), and a
  case held by an earlier execution of the same task (a Celery retry: that execution has ended).
  Each claim gets its own generation number, under which its detail rows are written, so two
  executions never mix rows.
- ``Heartbeat`` (a context manager) stamps ``Case.heartbeat_at`` when the work starts, then every
  ``CASEBOOK_HEARTBEAT_INTERVAL`` seconds from a thread, for as long as the work runs and the claim is
  still its own; every task that works on the case under the claim runs inside one. ``check()``
  raises ``ClaimLost`` once the claim was taken away (the sweeper or a re-analyze gave the case to
  someone else); the work then stops without writing.
- ``holds_claim`` locks the case row and tells whether the token still holds it: the final write of
  an ingest happens only under that lock, so exactly one execution publishes the derived rows.

The sweeper (web/ingest/sweeper.py) uses ``stale_before`` to find cases whose holder stopped reporting.

An ingest split over several tasks (web/ingest/fanout.py: part tasks joined by the analysis, a Celery chord)
keeps one claim: the task that claims passes the ``Claim`` (case id, token, generation) to the others,
each runs inside its own ``Heartbeat(claim)`` (``pipeline.run_claimed``) and writes through
``update_if_held``/``holds_claim``. Each task stamps the case as it starts (parts are often shorter
than a heartbeat interval), so a fan-out that keeps going keeps the case alive however long it lasts.
Tasks still waiting in the queue do not beat, so ``CASEBOOK_STALE_AFTER`` must cover the wait for a
free worker.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import TracebackType

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection, transaction
from django.utils import timezone

from web.models import PROCESSING_STATUSES, Case, CaseStatus

log = logging.getLogger(__name__)


class ClaimLost(Exception):
    """The claim on a case was taken away (re-queued by the sweeper or re-analyzed): stop, write nothing."""


def new_token(task_id: str | None, retries: int = 0) -> str:
    """The claim token of one task execution: ``<task id>:<retries>`` (a Celery retry is a new
    execution of the same task id), or a random one outside Celery (``manage.py analyze --sync``)."""
    return f"{task_id or 'inline-' + uuid.uuid4().hex}:{retries}"


def _is_earlier_execution(held: str, token: str) -> bool:
    """Whether ``held`` is the token of an earlier execution (fewer retries) of ``token``'s task.

    >>> _is_earlier_execution("4f1c:0", "4f1c:2"), _is_earlier_execution("4f1c:2", "4f1c:2")
    (True, False)
    """
    held_task, _, held_try = held.rpartition(":")
    task, _, this_try = token.rpartition(":")
    return (
        bool(task)
        and held_task == task
        and held_try.isdigit()
        and this_try.isdigit()
        and int(held_try) < int(this_try)
    )


def stale_before(now: datetime | None = None) -> datetime:
    """Holders whose last heartbeat is older than this are considered dead."""
    return (now or timezone.now()) - timedelta(seconds=settings.CASEBOOK_STALE_AFTER)


def last_report(case: Case) -> datetime:
    """When the holder of a case last reported (its heartbeat; its last update before any heartbeat)."""
    return case.heartbeat_at or case.updated_at


def is_stalled(case: Case, now: datetime | None = None) -> bool:
    """Whether a parsing/analyzing case's holder stopped reporting (the case can be taken back)."""
    return case.status in PROCESSING_STATUSES and last_report(case) < stale_before(now)


@dataclass(frozen=True, slots=True)
class Claim:
    """A held claim: the token and the generation its detail rows are written under."""

    case_id: int
    token: str
    generation: int


def claim_case(*, case_id: int, token: str) -> Claim | None:
    """Claim a case for an ingest (QUEUED -> PARSING); ``None`` when it is not this execution's to take.

    Takes a QUEUED case; a PARSING/ANALYZING case whose holder is silent (``is_stalled``); or one held
    by an earlier execution of the same task (``new_token``: a retry after a lost database
    connection, whose predecessor has ended). Anything else (a live holder, a READY or FAILED case,
    a second delivery of the very message being processed) is left alone.
    """
    now = timezone.now()
    with transaction.atomic():
        case = (
            Case.objects.select_for_update()
            .filter(pk=case_id)
            .only("status", "claim", "claims", "generation", "heartbeat_at", "updated_at")
            .first()
        )
        if case is None:
            return None
        takeover = case.status in PROCESSING_STATUSES and (
            is_stalled(case, now) or _is_earlier_execution(case.claim, token)
        )
        if case.status != CaseStatus.QUEUED and not takeover:
            return None
        if takeover:
            log.warning(
                "case %s: taking over from %s (last report %s)",
                case_id,
                case.claim or "an unknown worker",
                last_report(case).isoformat(),
                extra={"case_id": case_id},
            )
        generation = max(case.claims, case.generation) + 1
        Case.objects.filter(pk=case_id).update(
            status=CaseStatus.PARSING,
            claim=token,
            claims=generation,
            heartbeat_at=now,
            progress=1,
            status_detail="",
            failure_reason="",
            updated_at=now,
        )
    return Claim(case_id=case_id, token=token, generation=generation)


def times(n: int) -> str:
    """``n`` in words, as a count of events.

    >>> times(1), times(2), times(3)
    ('once', 'twice', '3 times')
    """
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def poison_reason(*, what: str, count: int, doing: str) -> str:
    """Why a case is FAILED after its ingest ended ``count`` times with its worker gone (``what``:
    "stopped reporting ...", "ran out of memory"), the last time while ``doing`` (the case's status
    detail: "parsing <member>"; may be empty). The poison-pill rule: such a case is never claimed
    again until an engineer asks for it."""
    while_ = f" while {doing}" if doing else ""
    return (
        f"The worker {what}{while_}, {times(count)}: this bundle is not tried again, so that it cannot "
        "take the workers from the other cases. The original upload is kept: Re-analyze to try again."
    )


def holds_claim(claim: Claim) -> bool:
    """Lock the case row (inside the caller's transaction) and tell whether ``claim`` still holds it."""
    return (
        Case.objects.select_for_update()
        .filter(pk=claim.case_id, claim=claim.token, status__in=PROCESSING_STATUSES)
        .exists()
    )


def update_if_held(held: Claim, /, **fields: object) -> bool:
    """Write case fields only while ``held`` holds the case (status, progress...); False when lost."""
    return bool(
        Case.objects.filter(pk=held.case_id, claim=held.token, status__in=PROCESSING_STATUSES).update(
            updated_at=timezone.now(), **fields
        )
    )


class Heartbeat:
    """Stamp ``Case.heartbeat_at`` when the work starts, then every ``CASEBOOK_HEARTBEAT_INTERVAL`` s
    while it runs.

    Use as ``with Heartbeat(claim) as beat: ... beat.check() ...``. The thread has its own database
    connection (closed when it stops). A failed write (database restarting) is logged and retried at
    the next beat; when no beat got through for ``CASEBOOK_STALE_AFTER`` s, or a beat finds the claim
    gone, the claim counts as lost and ``check()`` raises ``ClaimLost``.
    """

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        self.interval_s = float(settings.CASEBOOK_HEARTBEAT_INTERVAL)
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-case-{claim.case_id}", daemon=True)

    def __enter__(self) -> Heartbeat:
        # The start of the work is a sign of life: stamped at once (through the caller's connection),
        # not only after the first interval. The tasks of a fan-out (web/ingest/fanout.py) are often shorter
        # than an interval; the thread alone never stamped them, so a healthy fan-out that lasted longer
        # than CASEBOOK_STALE_AFTER looked silent since its claim and the sweeper re-queued it (then
        # FAILED it after CASEBOOK_MAX_REQUEUES). A claim already gone shows at the first ``check()``.
        if not self._stamp(timezone.now()):
            self._lost.set()
        self._thread.start()
        return self

    def _stamp(self, now: datetime) -> bool:
        """Stamp the case's heartbeat while the claim holds it; False when it does not any more."""
        return bool(
            Case.objects.filter(
                pk=self.claim.case_id, claim=self.claim.token, status__in=PROCESSING_STATUSES
            ).update(heartbeat_at=now)
        )

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 10)

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def check(self) -> None:
        """Raise ``ClaimLost`` when the claim is no longer this work's."""
        if self._lost.is_set():
            raise ClaimLost(f"case {self.claim.case_id}: the claim {self.claim.token} was taken away")

    def _run(self) -> None:
        last_ok = timezone.now()
        try:
            while not self._stop.wait(self.interval_s):
                now = timezone.now()
                try:
                    close_old_connections()  # a connection broken by a database restart is replaced
                    held = self._stamp(now)
                except DatabaseError as exc:
                    log.warning(
                        "case %s: heartbeat not written (%s)",
                        self.claim.case_id,
                        exc,
                        extra={"case_id": self.claim.case_id},
                    )
                    connection.close()
                    if (now - last_ok).total_seconds() > settings.CASEBOOK_STALE_AFTER:
                        self._lost.set()  # the sweeper may have given the case to another worker
                    continue
                last_ok = now
                if not held:
                    self._lost.set()
                    return
        finally:
            connection.close()
