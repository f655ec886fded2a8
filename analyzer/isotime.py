"""The one way Casebook writes a time: ISO 8601 in UTC, ending in ``Z``.

Every time in the JSON report, the API, the pages' data and the CSV exports is written by
``iso_utc``, whatever it was read as (a pandas ``Timestamp``, a ``datetime`` from the database, or
microseconds since the epoch as the stored series keep them). Plain Python: parsers, analyzer and
web import it alike.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_utc(value: datetime | pd.Timestamp | int | None, *, timespec: str = "auto") -> str | None:
    """``value`` as ISO 8601 in UTC with a ``Z``; ``None`` (or ``NaT``) gives ``None``.

    ``value``: an aware ``datetime``/``Timestamp`` (converted to UTC), a naive one (taken as UTC), or
    an integer of microseconds since the epoch. ``timespec`` as ``datetime.isoformat``: ``"auto"``
    leaves out a zero fraction, ``"microseconds"`` always writes six digits.

    >>> iso_utc(pd.Timestamp("2026-03-01 10:00:00.5+01:00"))
    '2026-03-01T09:00:00.500000Z'
    >>> iso_utc(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    '2026-03-01T09:00:00Z'
    >>> iso_utc(1_000_000, timespec="microseconds")
    '1970-01-01T00:00:01.000000Z'
    >>> iso_utc(pd.NaT) is None
    True
    """
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, int | np.integer):
        value = _EPOCH + timedelta(microseconds=int(value))
    elif value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    else:
        value = value.astimezone(UTC)
    return value.isoformat(timespec=timespec).replace("+00:00", "Z")
