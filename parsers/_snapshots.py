"""Lines of a member cut into snapshots by pt-stalk's ``TS`` markers (or OSWatcher's ``zzz``), for
the small text members read line by line (df, netstat, slabinfo, numastat, sysctl ...).

``Snapshots(stream, clock)`` yields ``(line_no, ts, line)`` for every line that is not a marker:
``ts`` is the UTC time of the last marker (its wall clock labelled UTC when the marker has no epoch),
or, before any marker, the capture's start from the layout (``ClockHints.start_local``, the server's
wall clock: ``ts_is_local``), or NaT when nothing tells the time. Not a format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pandas as pd

from parsers.base import Clock, ClockHints, parse_marker

#: The dtype of every ``ts`` column.
TS_DTYPE = "datetime64[ns, UTC]"


class Snapshots:
    """Iterate ``(line_no, ts, line)`` over ``stream`` (see the module docstring); after the loop,
    ``clock``, ``ts_is_local`` and ``snapshots`` (markers read) describe what was found."""

    def __init__(self, stream: Iterable[str], clock: ClockHints) -> None:
        self.stream = stream
        self.hints = clock
        self.snapshots = 0
        self.marker_local = False

    def __iter__(self) -> Iterator[tuple[int, pd.Timestamp, str]]:
        start = self.hints.start_local
        ts = pd.Timestamp(start).tz_localize("UTC") if start is not None else pd.NaT
        for no, raw in enumerate(self.stream, start=1):
            line = raw.rstrip("\r\n")
            if line[:2] in ("TS", "zz"):
                marker = parse_marker(line)
                if marker is not None:
                    self.snapshots += 1
                    self.marker_local = marker.utc is None
                    ts = marker.ts
                    continue
            yield no, ts, line

    @property
    def clock(self) -> Clock:
        return Clock.TS_MARKER if self.snapshots else Clock.INFERRED

    @property
    def ts_is_local(self) -> bool:
        """True when the times are the server's wall clock (no marker with an epoch was read)."""
        return self.marker_local if self.snapshots else self.hints.start_local is not None


def ts_column(values: list[pd.Timestamp]) -> pd.Series:
    """A ``ts`` column of dtype ``datetime64[ns, UTC]`` from timestamps (NaT allowed)."""
    return pd.Series(pd.to_datetime(values, utc=True) if values else [], dtype=TS_DTYPE)
