"""Bulk writes with PostgreSQL COPY (psycopg 3): series, the sample index, raw chunks, a slow log's
query classes and their minutes.

Rows go to ``COPY ... FROM STDIN``, never built as ORM objects: the sample index as CSV in chunks
(timestamps formatted with NumPy in one vectorised call; pandas' ``to_csv(date_format=...)``
formats them one by one), series and raw chunks in PostgreSQL's binary format (arrays and
compressed bytes as they are, not as text).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import struct
from collections.abc import Iterable

import numpy as np
import pandas as pd
from django.db import connection

from analyzer.statements.querydigest import queries
from parsers.damage import pg_safe
from parsers.passwords import masked
from parsers.rawtext import TextChunk
from web.models import QueryClass, QueryMinute, RawChunk, SampleIndex, Series, SeriesLevel
from web.timeline.levels import levels_of

#: Rows per write() call: large enough to amortise the call, small enough to bound memory.
CHUNK_ROWS = 100_000


def _iso_utc(ts: pd.Series) -> np.ndarray:
    """``datetime64[ns, UTC]`` -> ISO 8601 strings with microseconds and ``Z``, vectorised."""
    values = ts.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[us]")
    return np.char.add(np.datetime_as_string(values, unit="us"), "Z")


def _copy(model: type, frame: pd.DataFrame) -> None:
    if not len(frame):
        return
    cols = ", ".join(f'"{c}"' for c in frame.columns)
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg Cursor under Django's wrapper
        with raw.copy(
            f"COPY {model._meta.db_table} ({cols}) FROM STDIN WITH (FORMAT csv, NULL '\\N')"
        ) as copy:
            for start in range(0, len(frame), CHUNK_ROWS):
                chunk = frame.iloc[start : start + CHUNK_ROWS]
                copy.write(chunk.to_csv(index=False, header=False, na_rep="\\N"))


#: PostgreSQL's binary COPY format (PostgreSQL docs, COPY, "Binary Format"): the signature, the
#: flags (none) and the length of the header extension (none); a tuple starts with its field count
#: (int16) and each field is its length (int32) then its bytes; -1 as a field count ends the data.
BINARY_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
BINARY_COPY_TRAILER = struct.pack(">h", -1)
_FIELDS_5 = struct.pack(">h", 5)
#: Type oids of array elements (pg_type: int8, float8).
INT8_OID, FLOAT8_OID = 20, 701


def _binary_field(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def _binary_array(values: np.ndarray, dtype: str, element_oid: int) -> bytes:
    """A one-dimensional array without NULLs in PostgreSQL's binary form (``array_send``,
    src/backend/utils/adt/arrayfuncs.c): dimensions (1), a NULL flag (0), the element type's oid,
    the length and lower bound (1) of the dimension, then each element as its length (int32) and its
    big-endian bytes. ``dtype``: ``>i8`` for int8, ``>f8`` for float8 (a NaN stays a NaN, as a
    Python float would send it)."""
    cells = np.empty(len(values), dtype=[("length", ">i4"), ("value", dtype)])
    cells["length"] = 8
    cells["value"] = values
    return struct.pack(">iiIii", 1, 0, element_oid, len(values), 1) + cells.tobytes()


@dataclasses.dataclass(frozen=True, slots=True)
class SeriesLevels:
    """One series ready to write: its name as stored (cut to the column's length, ``pg_safe``) and its
    levels of detail (``levels.levels_of``: level 0 holds every point, times in µs int64 ascending,
    values float64)."""

    name: str
    levels: list[tuple[int, np.ndarray, np.ndarray]]


def series_levels(series: pd.DataFrame) -> list[SeriesLevels]:
    """A long frame (``series``, ``ts`` UTC, ``value``: ``analyzer.timeline.series.aggregate_series``)
    -> one ``SeriesLevels`` per name, by name, its points sorted by time: what ``copy_series``
    writes, worked out before the publishing transaction opens. Names are cut to the column's length
    once per distinct name (two may become one), not once per point."""
    if not len(series):
        return []
    max_len = Series._meta.get_field("name").max_length
    ts = series["ts"].dt.tz_convert("UTC").to_numpy(dtype="datetime64[us]").view("int64")
    values = series["value"].to_numpy(dtype="float64", na_value=np.nan)
    codes, distinct = pd.factorize(series["series"], sort=False)
    cut, names = pd.factorize(pd.Index([str(n)[:max_len] for n in distinct], dtype=object), sort=True)
    codes = cut[codes]
    order = np.lexsort((ts, codes))
    starts = np.flatnonzero(np.diff(codes[order], prepend=-1))
    bounds = [*starts.tolist(), len(order)]
    return [
        SeriesLevels(pg_safe(str(names[k])), levels_of(ts[order[a:b]], values[order[a:b]]))
        for k, (a, b) in enumerate(itertools.pairwise(bounds))
    ]


def write_series(case_id: int, series: pd.DataFrame, *, host: str = "") -> int:
    """Write a long frame (``series``, ``ts`` UTC, ``value``) as ``copy_series`` does, worked out here
    (``series_levels``). Returns the number of ``Series`` rows written."""
    return copy_series(case_id, series_levels(series), host=host)


def copy_series(case_id: int, series: list[SeriesLevels], *, host: str = "") -> int:
    """Write one ``Series`` row per series (its level 0) and its ``SeriesLevel`` rows
    (web/timeline/levels.py), all of ``host`` (``Host.name``; one call per host of the case), as
    ``series_levels`` made them. Returns the number of ``Series`` rows written."""
    if not series:
        return 0
    host_bytes = pg_safe(host).encode("utf-8")
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            f"COPY {Series._meta.db_table} (case_id, host, name, ts_us, values) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.write(BINARY_COPY_HEADER)
            for one in series:
                _level, ts, values = one.levels[0]
                copy.write(
                    b"".join(
                        (
                            _FIELDS_5,
                            _binary_field(struct.pack(">q", case_id)),
                            _binary_field(host_bytes),
                            _binary_field(one.name.encode("utf-8")),
                            _binary_field(_binary_array(ts, ">i8", INT8_OID)),
                            _binary_field(_binary_array(values, ">f8", FLOAT8_OID)),
                        )
                    )
                )
            copy.write(BINARY_COPY_TRAILER)
    _copy_levels(case_id, ((one.name, one.levels) for one in series), host=host)
    return len(series)


def write_series_levels(
    case_id: int, series: Iterable[tuple[str, np.ndarray, np.ndarray]], *, host: str = ""
) -> None:
    """Write the ``SeriesLevel`` rows (web/timeline/levels.py) of each ``(name, ts µs int64 ascending, values
    float64)`` of ``host``: every level of detail, as little-endian bytes."""
    _copy_levels(
        case_id, ((name, levels_of(ts, values)) for name, ts, values in series if len(ts)), host=host
    )


def _copy_levels(
    case_id: int, series: Iterable[tuple[str, list[tuple[int, np.ndarray, np.ndarray]]]], *, host: str
) -> None:
    """The ``SeriesLevel`` rows of each ``(name, levels)``, by COPY."""
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            f"COPY {SeriesLevel._meta.db_table} (case_id, host, name, level, n, t_first_us, t_last_us, ts, "
            "values) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int8", "text", "text", "int2", "int4", "int8", "int8", "bytea", "bytea"])
            for name, levels in series:
                for level, lts, lvalues in levels:
                    copy.write_row(
                        (
                            case_id,
                            pg_safe(host),
                            pg_safe(name),
                            level,
                            len(lts),
                            int(lts[0]),
                            int(lts[-1]),
                            lts.astype("<i8").tobytes(),
                            lvalues.astype("<f8").tobytes(),
                        )
                    )


def copy_raw_chunks(case_id: int, generation: int, *, member: str, chunks: Iterable[TextChunk]) -> None:
    """Write RawChunk rows: the compressed lines ``line_start..line_end`` of ``member``, per chunk
    (``parsers.rawtext``). Binary COPY: the compressed bytes go as they are, not hex-escaped."""
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            f"COPY {RawChunk._meta.db_table} (case_id, generation, member, line_start, line_end, text_zstd) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int8", "int4", "text", "int4", "int4", "bytea"])
            for c in chunks:
                copy.write_row((case_id, generation, pg_safe(member[:500]), c.line_start, c.line_end, c.data))


def copy_sample_index(case_id: int, main: pd.DataFrame, *, member: str, format: str) -> int:
    """Write one SampleIndex row per distinct ``ts`` of a source's main frame: the first line
    (min ``line_no``) and the last (max of ``line_end``, else ``line_no``) of the sample's rows.
    A frame without ``ts`` or ``line_no`` writes nothing. Returns the number of rows written."""
    if not len(main) or "ts" not in main or "line_no" not in main:
        return 0
    start = pd.to_numeric(main["line_no"], errors="coerce")
    end = pd.to_numeric(main["line_end"], errors="coerce").fillna(start) if "line_end" in main else start
    lines = pd.DataFrame({"ts": main["ts"], "start": start, "end": end}).dropna()
    if not len(lines):
        return 0
    per_ts = lines.groupby("ts", sort=True).agg(line_start=("start", "min"), line_end=("end", "max"))
    frame = pd.DataFrame(
        {
            "case_id": case_id,
            "member": pg_safe(member[:500]),
            "format": format[:40],
            "ts": _iso_utc(per_ts.index.to_series()),
            "line_start": per_ts["line_start"].astype("int64").to_numpy(),
            "line_end": per_ts["line_end"].astype("int64").to_numpy(),
        }
    )
    _copy(SampleIndex, frame)
    return len(frame)


#: The columns of ``slowlog_class_minutes`` (parsers/slowlog.py) stored in ``QueryMinute``.
MINUTE_FIGURES = (
    "queries", "query_time_s", "query_time_max_s", "lock_time_s", "lock_time_max_s", "rows_sent",
    "rows_sent_max", "rows_examined", "rows_examined_max",
)  # fmt: skip


def copy_query_classes(
    case_id: int, classes: pd.DataFrame, minutes: pd.DataFrame, *, host: str, member: str, first: int
) -> int:
    """Write a slow log's digest: a ``QueryClass`` row per class of ``classes`` (``slowlog_classes``,
    its ``digest`` the class as ``analyzer.statements.querydigest.queries`` gives it, passwords masked)
    numbered from ``first`` in the order of ``classes``, and a ``QueryMinute`` row per row of ``minutes``
    (``slowlog_class_minutes``, whose ``class_no`` is a row of ``classes``); both of ``member`` on
    ``host``. Returns the number of classes written."""
    if not len(classes):
        return 0
    digest = {q["fingerprint"]: q for q in queries(classes)}
    prints = classes["fingerprint"].tolist()
    items = [pg_safe(masked(digest[fp])) for fp in prints]
    _copy(
        QueryClass,
        pd.DataFrame(
            {
                "case_id": case_id,
                "number": np.arange(first, first + len(prints)),
                "host": pg_safe(host),
                "member": pg_safe(member[:500]),
                "checksum": [q["checksum"] for q in items],
                "fingerprint": [q["fingerprint"] for q in items],
                "query_time_s": classes["query_time_s"].to_numpy(dtype="float64"),
                "digest": [json.dumps(q, default=str) for q in items],
            }
        ),
    )
    timed = minutes.dropna(subset=["ts"])
    if len(timed):
        frame = timed[list(MINUTE_FIGURES)].copy()
        frame.insert(0, "ts", _iso_utc(timed["ts"]))
        frame.insert(0, "number", timed["class_no"].to_numpy(dtype="int64") + first)
        frame.insert(0, "case_id", case_id)
        _copy(QueryMinute, frame)
    return len(prints)
