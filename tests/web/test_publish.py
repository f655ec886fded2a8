"""Analysis computes, publishing only writes (issue 40): the clock offsets, the series and the overview
come out of ``web.ingest.prepare`` ready to write, and the publishing transaction
(``web.ingest.publish.publish``) estimates, aggregates and reads back nothing. The overview written
is the one the case's stored series give when read back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.multihost import FIXTURES, PTSTALK, hosts_tarball
from tests.web.conftest import ingest_ready
from web.ingest import pipeline, prepare
from web.models import Case
from web.timeline import charts, levels, series

pytestmark = pytest.mark.django_db


def _no_grid(overview: dict[str, object]) -> dict[str, object]:
    """``overview`` without the IRQ x CPU heatmaps (worked out from the timeline, not the series)."""
    return {**overview, "charts": [c for c in overview["charts"] if c["kind"] != "grid"]}  # type: ignore[union-attr]


@pytest.mark.parametrize("bundle", ["one host", "two hosts", "eight hosts", "galera"])
def test_the_overview_written_is_the_one_the_stored_series_give(bundle: str, tmp_path: Path) -> None:
    path = {
        "one host": lambda: PTSTALK,
        "two hosts": lambda: hosts_tarball(tmp_path / "two.tgz", ["db-a", "db-b"]),
        "eight hosts": lambda: hosts_tarball(tmp_path / "eight.tgz", [f"node{i}" for i in range(8)]),
        "galera": lambda: FIXTURES / "cluster-galera.tar.gz",
    }[bundle]()
    case = ingest_ready(path)
    written = case.charts_overview
    read_back = charts.timeline_charts(case=case, max_points=charts.OVERVIEW_POINTS)
    assert written["charts"] and written["version"] == charts.VERSION
    assert _no_grid(written) == _no_grid(read_back)
    if bundle == "galera":
        assert written["windows"] and written["hosts"] == ["db-a", "db-b", "db-c"]


def test_the_publishing_transaction_only_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offsets, series and overview are worked out before ``publish`` starts; inside it nothing
    estimates, aggregates or reads series back."""
    publishing = [False]
    called: dict[str, bool] = {}

    def spy(owner: object, name: str) -> None:
        real: Callable[..., object] = getattr(owner, name)

        def wrapper(*args: object, **kwargs: object) -> object:
            called[name] = True
            assert not publishing[0], f"{name} ran inside the publishing transaction"
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    for owner, name in (
        (prepare, "estimate_offsets"),
        (prepare, "aggregate_series"),
        (charts, "timeline_charts"),
        (charts, "overview_of"),
        (levels, "read_range"),
        (series, "series_arrays"),
    ):
        spy(owner, name)
    real_publish = pipeline.publish

    def publish(*args: object, **kwargs: object) -> None:
        publishing[0] = True
        try:
            real_publish(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            publishing[0] = False

    monkeypatch.setattr(pipeline, "publish", publish)
    monkeypatch.setattr(pipeline, "RULES_BESIDE_UP_TO_BYTES", 0)  # the rules here too: spied alike
    case = ingest_ready(FIXTURES / "cluster-galera.tar.gz")
    assert {"estimate_offsets", "aggregate_series", "overview_of"} <= set(called)
    assert Case.objects.get(pk=case.pk).hosts.exclude(offset_s=None).count() == 3
