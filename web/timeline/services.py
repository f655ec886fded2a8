"""The writes of the timeline outside the ingest: the levels of detail of a case ingested before
they existed, written once from its stored series when a chart or an export first needs them."""

from __future__ import annotations

from django.db import transaction

from web.models import Case, Series, SeriesLevel
from web.timeline import bulk
from web.timeline.series import series_arrays


def series_levels_ensure(*, case: Case) -> bool:
    """Write the levels of detail of a case ingested before they existed, from its stored series
    (once; a few seconds for a 24-hour capture). Returns whether it wrote any."""
    if SeriesLevel.objects.filter(case=case).exists() or not Series.objects.filter(case=case).exists():
        return False
    with transaction.atomic():
        bulk.write_series_levels(case.pk, ((n, t, v) for n, (t, v) in series_arrays(case=case).items()))
    return True
