"""A case's stored series read back as NumPy arrays (``Series`` rows, PostgreSQL arrays sent in
their binary format), and the names stored at level 0 of the levels of detail."""

from __future__ import annotations

import struct

import numpy as np
from django.db.models import BinaryField, Func, Q

from web.models import Case, Host, Series, SeriesLevel


class _ArraySend(Func):
    """PostgreSQL's ``array_send(anyarray)``: the array in the binary wire format, read by NumPy
    without a Python object per element (a 24-hour capture holds millions of points)."""

    function = "array_send"
    output_field = BinaryField()


def _decode(buf: bytes, kind: str) -> np.ndarray:
    """A one-dimensional int8[] or float8[] in PostgreSQL's binary array format (``array_send``:
    ndim, has-null flag, element oid, then per dimension its length and lower bound, then each
    element as a 4-byte length and 8 bytes big-endian) -> a native NumPy array (int64 or float64).
    Raises ValueError on an array of another shape or with NULL elements (the ingest writes NaN)."""
    ndim, has_null, _oid = struct.unpack_from(">iiI", buf, 0)
    native = "int64" if kind == "i" else "float64"
    if ndim == 0:
        return np.empty(0, dtype=native)
    if ndim != 1 or has_null:
        raise ValueError("expected a one-dimensional array without NULL elements")
    (n,) = struct.unpack_from(">i", buf, 12)
    body = np.frombuffer(buf, dtype=[("len", ">i4"), ("v", f">{kind}8")], count=n, offset=20)
    return body["v"].astype(native)


def series_arrays(
    *,
    case: Case,
    names: list[str] | None = None,
    prefixes: list[str] | None = None,
    host: str | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The stored series of the case (all, those ``names``, or those under any of ``prefixes``), of
    ``host`` (a ``Host.name``; None: whatever the host, for a case of one host):
    name -> (times in microseconds since the epoch, int64, ascending; values, float64)."""
    rows = Series.objects.filter(case=case)
    if host is not None:
        rows = rows.filter(host=host)
    if names is not None:
        rows = rows.filter(name__in=names)
    if prefixes is not None:
        match = Q(pk__in=[])
        for prefix in prefixes:
            match |= Q(name__startswith=prefix)
        rows = rows.filter(match)
    rows = rows.annotate(ts_bin=_ArraySend("ts_us"), v_bin=_ArraySend("values"))
    return {
        name: (_decode(bytes(ts), "i"), _decode(bytes(values), "f"))
        for name, ts, values in rows.values_list("name", "ts_bin", "v_bin")
    }


def stored_names(case: Case, prefixes: list[str], names: list[str], host: str | None = None) -> list[str]:
    """The names of the case's series (of ``host``, or of any host when None) that are one of
    ``names`` or start with one of ``prefixes``."""
    exact = set(names)
    rows = SeriesLevel.objects.filter(case=case, level=0)
    if host is not None:
        rows = rows.filter(host=host)
    return sorted(
        {n for n in rows.values_list("name", flat=True) if n in exact or n.startswith(tuple(prefixes))}
    )


def series_hosts(case: Case) -> list[str]:
    """The hosts of the case as its pages list them: every ``Host.name``, the case's first host first
    (``Host.position``), then any host column value of its series without a ``Host`` row (a case
    ingested before hosts existed has its series under "" and no ``Host`` row). One entry for a case
    of one host; an index in this list is how a page names a host (``host_param``)."""
    ordered = list(Host.objects.filter(case=case).values_list("name", flat=True))
    stored = set(SeriesLevel.objects.filter(case=case, level=0).values_list("host", flat=True).distinct())
    return ordered + sorted(stored - set(ordered))


def host_param(case: Case, raw: str | int | None) -> str | None:
    """A ``host`` query parameter (a moment, a comparison): the index of a host in ``series_hosts``
    (as the timeline JSON lists them; an index, never a name, so that a redacted share asks for a
    host without knowing its name) -> that ``Host.name``; None when absent or empty, or when the case
    has one host (index 0). Raises ValueError for an index that is not a host of the case."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    index = int(raw)
    names = series_hosts(case)
    if len(names) <= 1:
        if index != 0:
            raise ValueError("host is not a host of this case")
        return None
    if not 0 <= index < len(names):
        raise ValueError("host is not a host of this case")
    return names[index]
