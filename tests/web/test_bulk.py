"""Bulk writes (web/timeline/bulk.py): the series written in PostgreSQL's binary COPY format read back through
the ORM exactly as they were given, each sorted by time."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from web.models import Case, Series
from web.timeline import bulk

pytestmark = pytest.mark.django_db


def test_series_written_with_binary_copy_read_back_as_given(engineer) -> None:
    case = Case.objects.create(title="bulk", team=engineer.teams.get())
    t0 = pd.Timestamp("2026-11-25 10:00:00.123456", tz="UTC")
    frame = pd.DataFrame(
        {
            "ts": [t0 + pd.Timedelta(seconds=s) for s in (2, 0, 1, 0, 5)],
            "series": ["vmstat.r", "vmstat.r", "vmstat.r", "processlist.fingerprint:sélect ?", "vmstat.r"],
            "value": [3.0, -1.5, np.nan, 1e300, 0.0],
        }
    )
    assert bulk.write_series(case.pk, frame) == 2
    stored = {s.name: s for s in Series.objects.filter(case=case)}
    t0_us = int(t0.value // 1000)
    r = stored["vmstat.r"]
    assert r.ts_us == [t0_us, t0_us + 1_000_000, t0_us + 2_000_000, t0_us + 5_000_000]  # sorted by time
    assert r.values[0] == -1.5 and math.isnan(r.values[1]) and r.values[2:] == [3.0, 0.0]
    other = stored["processlist.fingerprint:sélect ?"]  # UTF-8 names kept
    assert other.ts_us == [t0_us] and other.values == [1e300]


def test_a_long_series_keeps_every_point(engineer) -> None:
    case = Case.objects.create(title="bulk", team=engineer.teams.get())
    ts = pd.date_range("2026-11-25", periods=200_000, freq="s", tz="UTC")
    values = np.random.default_rng(7).normal(size=len(ts))
    bulk.write_series(case.pk, pd.DataFrame({"ts": ts, "series": "mpstat.all.%usr", "value": values}))
    row = Series.objects.get(case=case)
    assert np.array_equal(np.array(row.ts_us), ts.as_unit("us").asi8)
    assert np.array_equal(np.array(row.values), values)


def test_names_past_the_column_length_are_cut_and_merged(engineer) -> None:
    case = Case.objects.create(title="bulk", team=engineer.teams.get())
    limit = Series._meta.get_field("name").max_length
    long_a, long_b = "x" * limit + "a", "x" * limit + "b"  # the same name once cut
    t0 = pd.Timestamp("2026-11-25 10:00", tz="UTC")
    frame = pd.DataFrame(
        {
            "ts": [t0, t0 + pd.Timedelta(seconds=1), t0],
            "series": pd.Categorical([long_a, long_b, "vmstat.b"]),
            "value": [1.0, 2.0, 3.0],
        }
    )
    assert bulk.write_series(case.pk, frame) == 2
    cut = Series.objects.get(case=case, name="x" * limit)
    assert cut.values == [1.0, 2.0] and len(cut.ts_us) == 2
