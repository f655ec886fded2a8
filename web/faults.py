"""What goes wrong around an ingest that is not the bundle's fault: a lost database connection (the
task retries) and a broker that cannot be reached (the case waits for the sweeper)."""

from __future__ import annotations

import kombu.exceptions
import psycopg
import redis.exceptions
from django.db import InterfaceError, OperationalError

#: Database errors worth a retry of the whole task: the server or the connection went away (Django's
#: wrappers, and psycopg's own from the COPY paths).
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)


#: What sending a task raises when the broker cannot be reached (after Celery's publish retries).
BROKER_ERRORS = (kombu.exceptions.OperationalError, redis.exceptions.RedisError, OSError)


#: What a queued case says while its task could not be handed to the broker.
BROKER_DOWN_DETAIL = (
    "The task queue (Redis) cannot be reached right now: the upload is kept, and the case will be "
    "queued automatically as soon as the queue is back."
)


class TransientError(Exception):
    """The database connection was lost during an ingest: the task retries it (web/ingest/tasks.py)."""


def is_transient(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is a lost database connection rather than a bad bundle."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, TRANSIENT_DB_ERRORS):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


#: How every task of an ingest retries when the database went away (restart, fail-over).
INGEST_RETRIES = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (TransientError, OperationalError, InterfaceError),
    "retry_backoff": 5,
    "retry_backoff_max": 120,
    "max_retries": 5,
}
