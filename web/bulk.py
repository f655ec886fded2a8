"""Bulk writes with PostgreSQL COPY (psycopg 3): series points and per-sample detail rows.

Rows are streamed to ``COPY ... FROM STDIN`` (CSV) in chunks, never built as ORM objects: a one-hour
capture gives millions of rows. Timestamps are formatted with NumPy in one vectorised call (pandas'
``to_csv(date_format=...)`` formats them one by one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.db import connection

from web.models import ProcesslistRow, SampleIndex, SeriesPoint, Statement, ThreadRow

#: Rows per write() call: large enough to amortise the call, small enough to bound memory.
CHUNK_ROWS = 100_000
#: ps states whose threads are stored one by one; sleeping (S) and idle kernel (I) threads are only counted.
STORED_THREAD_STATES = ("R", "D", "Z", "T", "t", "X", "W")


def _iso_utc(ts: pd.Series) -> np.ndarray:
    """``datetime64[ns, UTC]`` -> ISO 8601 strings with microseconds and ``Z``, vectorised."""
    values = ts.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[us]")
    return np.char.add(np.datetime_as_string(values, unit="us"), "Z")


def _text(frame: pd.DataFrame, column: str, max_len: int) -> pd.Series:
    if column not in frame:
        return pd.Series("", index=frame.index, dtype="string")
    return frame[column].astype("string").fillna("").str.slice(0, max_len)


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


def copy_series(case_id: int, series: pd.DataFrame) -> None:
    """Write a long frame (``series``, ``ts`` UTC, ``value``) as SeriesPoint rows of the case."""
    if not len(series):
        return
    max_len = SeriesPoint._meta.get_field("series").max_length
    frame = pd.DataFrame(
        {
            "case_id": case_id,
            "series": series["series"].astype("string").str.slice(0, max_len),
            "ts": _iso_utc(series["ts"]),
            "value": series["value"],
        }
    )
    _copy(SeriesPoint, frame)


def next_ids(model: type, n: int) -> list[int]:
    """``n`` fresh primary keys from ``model``'s sequence, for rows written with COPY."""
    if n <= 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [model._meta.db_table, n],
        )
        return [row[0] for row in cursor.fetchall()]


def copy_statements(case_id: int, generation: int, texts: list[str], fingerprints: list[str]) -> list[int]:
    """Write distinct statements (Info text, fingerprint) as Statement rows; returns their ids in order."""
    ids = next_ids(Statement, len(texts))
    frame = pd.DataFrame(
        {"id": ids, "case_id": case_id, "generation": generation, "info": texts, "fingerprint": fingerprints}
    )
    _copy(Statement, frame)
    return ids


def copy_processlist(case_id: int, generation: int, pl: pd.DataFrame, *, member: str) -> int:
    """Write a parsed ``processlist`` frame (one row per session per snapshot) as ProcesslistRow rows
    of ``generation``; ``statement_id`` (the Statement of its Info, see ``copy_statements``) and
    ``active`` are taken when present. Returns the number of rows written."""
    if not len(pl):
        return 0
    frame = pd.DataFrame(
        {
            "case_id": case_id,
            "generation": generation,
            "ts": _iso_utc(pl["ts"]),
            "session_id": pd.to_numeric(pl["id"], errors="coerce").astype("Int64"),
            "user": _text(pl, "user", 100),
            "host": _text(pl, "host", 300),
            "db": _text(pl, "db", 200),
            "command": _text(pl, "command", 40),
            "time_s": pd.to_numeric(pl["time_s"], errors="coerce").astype("Int64"),
            "state": _text(pl, "state", 200),
            "statement_id": pl["statement_id"].astype("Int64") if "statement_id" in pl else pd.NA,
            "active": pl["active"].astype(bool) if "active" in pl else False,
            "member": member[:500],
            "line_no": pl["line_no"].astype("int64"),
        }
    )
    _copy(ProcesslistRow, frame)
    return len(frame)


def copy_threads(case_id: int, generation: int, ps: pd.DataFrame, *, member: str) -> int:
    """Write the threads of a ``ps_threads`` frame that were not sleeping as ThreadRow rows.
    Returns the number of rows written."""
    if not len(ps) or "state" not in ps:
        return 0
    ps = ps[ps["state"].astype("string").isin(STORED_THREAD_STATES).fillna(False)]
    if not len(ps):
        return 0
    frame = pd.DataFrame(
        {
            "case_id": case_id,
            "generation": generation,
            "ts": _iso_utc(ps["ts"]),
            "pid": pd.to_numeric(ps["pid"], errors="coerce").astype("Int64") if "pid" in ps else pd.NA,
            "tid": pd.to_numeric(ps["tid"], errors="coerce").astype("Int64") if "tid" in ps else pd.NA,
            "user": _text(ps, "user", 100),
            "state": _text(ps, "state", 4),
            "stat": _text(ps, "stat", 12),
            "pcpu": pd.to_numeric(ps["pcpu"], errors="coerce") if "pcpu" in ps else np.nan,
            "comm": _text(ps, "comm", 100),
            "wchan": _text(ps, "wchan", 100),
            "member": member[:500],
            "line_no": ps["line_no"].astype("int64"),
        }
    )
    _copy(ThreadRow, frame)
    return len(frame)


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
            "member": member[:500],
            "format": format[:40],
            "ts": _iso_utc(per_ts.index.to_series()),
            "line_start": per_ts["line_start"].astype("int64").to_numpy(),
            "line_end": per_ts["line_end"].astype("int64").to_numpy(),
        }
    )
    _copy(SampleIndex, frame)
    return len(frame)
