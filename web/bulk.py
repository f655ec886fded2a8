"""Bulk writes with PostgreSQL COPY (psycopg 3): series points and per-sample detail rows.

Rows are streamed to ``COPY ... FROM STDIN`` in chunks, never built as ORM objects: a one-hour
capture gives millions of rows.
"""

from __future__ import annotations

import pandas as pd
from django.db import connection

from web.models import ProcesslistRow, SeriesPoint

#: Rows per write() call: large enough to amortise the call, small enough to bound memory.
CHUNK_ROWS = 50_000


def _copy(table: str, columns: list[str], frame: pd.DataFrame) -> None:
    if not len(frame):
        return
    cols = ", ".join(f'"{c}"' for c in columns)
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg Cursor under Django's wrapper
        with raw.copy(f"COPY {table} ({cols}) FROM STDIN WITH (FORMAT csv, NULL '\\N')") as copy:
            for start in range(0, len(frame), CHUNK_ROWS):
                chunk = frame.iloc[start : start + CHUNK_ROWS]
                copy.write(
                    chunk.to_csv(
                        index=False, header=False, na_rep="\\N", date_format="%Y-%m-%dT%H:%M:%S.%f%z"
                    )
                )


def copy_series(case_id: int, series: pd.DataFrame) -> None:
    """Write a long frame (``series``, ``ts`` UTC, ``value``) as SeriesPoint rows of the case."""
    max_len = SeriesPoint._meta.get_field("series").max_length
    frame = series[["series", "ts", "value"]].assign(
        case_id=case_id, series=series["series"].str.slice(0, max_len)
    )
    _copy(SeriesPoint._meta.db_table, ["series", "ts", "value", "case_id"], frame)


def copy_processlist(case_id: int, pl: pd.DataFrame) -> None:
    """Write the timeline's processlist frame (one row per session per snapshot) as ProcesslistRow rows."""
    if not len(pl):
        return
    text = {
        c: pl[c].astype("string").fillna("") if c in pl else ""
        for c in ("user", "host", "db", "command", "state", "info", "fingerprint")
    }
    frame = pd.DataFrame(
        {
            "case_id": case_id,
            "ts": pl["ts"],
            "session_id": pd.to_numeric(pl["id"], errors="coerce").astype("Int64"),
            "user": text["user"].str.slice(0, 100),
            "host": text["host"].str.slice(0, 300),
            "db": text["db"].str.slice(0, 200),
            "command": text["command"].str.slice(0, 40),
            "time_s": pd.to_numeric(pl["time_s"], errors="coerce").astype("Int64"),
            "state": text["state"].str.slice(0, 200),
            "info": text["info"],
            "fingerprint": text["fingerprint"],
            "active": pl["active"].astype(bool) if "active" in pl else False,
            "member": pl["member"].astype("string").str.slice(0, 500),
            "line_no": pl["line_no"].astype("int64"),
        }
    )
    _copy(ProcesslistRow._meta.db_table, list(frame.columns), frame)
