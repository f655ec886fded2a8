"""What an ingest publishes, worked out before the publishing transaction opens: the transaction
(web/ingest/publish.py) only writes it.

Two parts, each from the hosts' timelines (``web.ingest.pipeline.host_timelines``):

- ``Prepared`` (``prepare``), worked out by the ingest's own process: the clock offsets between the
  hosts (``analyzer.cluster.offsets``, which reads the replication and Galera topology), the series
  (``analyzer.timeline.series.aggregate_series``) at every level of detail, as they are written
  (``web.timeline.bulk.series_levels``), and the overview charts drawn from those series
  (``web.timeline.charts.overview_of``), never read back from the rows just written;
- ``Analysis`` (``Analysis.of``), worked out beside it in a forked child (``web.ingest.pipeline``):
  the rules' outcome and what the case row and the overview take from it: the ``Finding`` rows'
  fields, the windows the charts shade, the IRQ x CPU heatmaps, the top fingerprints and wait
  channels.

No write here: nothing in this module touches the database.
"""

from __future__ import annotations

import dataclasses
import logging

from analyzer import engine
from analyzer.cluster.offsets import estimate_offsets
from analyzer.findings import Finding, culprit_json, evidence_json
from analyzer.isotime import iso_utc
from analyzer.timeline.series import aggregate_series, irq_cpu_rates, top_fingerprints, top_wait_channels
from analyzer.timeline.timeline import Timeline
from parsers.damage import pg_safe
from parsers.ingest.bundle import Bundle
from web.timeline import bulk, charts

log = logging.getLogger(__name__)

#: Longest fingerprint kept on a case (characters): a GIN index entry must stay under about 2.7 kB.
MAX_FINGERPRINT_CHARS = 1000
#: Longest wait channel kept on a case (characters).
MAX_WAIT_CHANNEL_CHARS = 100


@dataclasses.dataclass(frozen=True, slots=True)
class Prepared:
    """What the ingest's process works out for the publication, beside the analysis.

    ``offsets``: ``Host.name`` -> (seconds its clock runs ahead of the first host's, how that was
    estimated), for the hosts the captures allow (``estimate_offsets``); ``series``: ``Host.name`` ->
    its series as written (``bulk.SeriesLevels``); ``overview``: the overview charts of those series
    (``charts.overview_of``), without the analysis' part (``charts.with_analysis`` adds it).
    ``publish`` takes each host's series out of ``series`` as it writes them."""

    offsets: dict[str, tuple[float, str]]
    series: dict[str, list[bulk.SeriesLevels]]
    overview: dict[str, object]


def prepare(bundle: Bundle, timelines: dict[str, Timeline]) -> Prepared:
    """``Prepared`` of ``bundle`` from its hosts' ``timelines`` (``Host.name`` -> timeline, the first
    host first). An offset estimate that fails leaves the offsets unknown, never the case."""
    try:
        offsets = estimate_offsets(timelines)
    except Exception:  # noqa: BLE001 - an estimate that fails leaves the offsets unknown, never the case
        log.warning("the hosts' clock offsets could not be estimated", exc_info=True)
        offsets = {}
    series = {name: bulk.series_levels(aggregate_series(tl)) for name, tl in timelines.items()}
    return Prepared(offsets, series, _overview(bundle, timelines, series))


def host_names(timelines: dict[str, Timeline]) -> list[str]:
    """The ``Host.name`` of each timeline, as the ``Host`` rows keep it, in the case's order."""
    return [pg_safe(name[:255]) for name in timelines]


def _overview(
    bundle: Bundle, timelines: dict[str, Timeline], series: dict[str, list[bulk.SeriesLevels]]
) -> dict[str, object]:
    """The overview of ``series`` with the case's hosts as ``series_hosts`` will list them (every
    ``Host`` row, then any other host a series is written under) and the CPUs, window and clock the
    case and its ``Host`` rows will hold."""
    ordered = host_names(timelines)
    stored = {pg_safe(name) for name, one in series.items() if one}
    hosts = ordered + sorted(stored - set(ordered))
    known = {h.name: h.ncpu for h in bundle.hosts}
    ncpus = dict(zip(ordered, (known.get(name, bundle.ncpu) for name in timelines), strict=True))
    window = bundle.window
    return charts.overview_of(
        {pg_safe(name): {s.name: s.levels for s in one} for name, one in series.items()},
        hosts=hosts,
        ncpus={h: ncpus.get(h) for h in hosts},
        ncpu=bundle.ncpu,
        window=window if window else (None, None),
        utc_offset_s=bundle.utc_offset_s,
    )


#: The longest title a ``Finding`` row holds (``web.models.cases.Finding.title``).
TITLE_MAX_CHARS = 300


def finding_fields(f: Finding) -> dict[str, object]:
    """The fields of the ``Finding`` row of ``f`` (all but its case and position), as written; a title
    longer than ``TITLE_MAX_CHARS`` is cut there, ending in an ellipsis (the whole text stays in the
    finding's other fields): no finding's wording sinks the case."""
    title = f.title if len(f.title) <= TITLE_MAX_CHARS else f.title[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return {
        "key": f.key,
        "severity": str(f.severity),
        "title": pg_safe(title),
        "summary": pg_safe(f.explanation),
        "windows": [
            [iso_utc(w.start, timespec="microseconds"), iso_utc(w.end, timespec="microseconds")]
            for w in f.windows
        ],
        "evidence": pg_safe([evidence_json(e) for e in f.evidence]),
        "recommendation": pg_safe(f.recommendation),
        "caveats": pg_safe(list(f.caveats)),
        "sources": list(f.sources),
        "confidence": f.confidence,
        "disproof": f.disproof,
        "related": list(f.related),
        "rule_version": f.rule_version,
        "culprit": pg_safe(culprit_json(f.culprit)),
        "host": pg_safe(f.host or ""),
        "hosts": pg_safe(list(f.hosts)),
    }


@dataclasses.dataclass(frozen=True, slots=True)
class Analysis:
    """What the ingest works out from the timelines besides their series: the rules' ``outcome``; the
    ``Finding`` rows' fields (``findings``, in the engine's order) and the ``windows`` the overview
    shades (``charts.finding_windows``); the IRQ x CPU heatmap of each host (``irq_charts``); the top
    ``fingerprints`` and ``wait_channels`` of every host, the first host's first."""

    outcome: engine.Outcome
    findings: list[dict[str, object]]
    windows: list[dict[str, object]]
    irq_charts: list[dict[str, object]]
    fingerprints: list[str]
    wait_channels: list[str]

    @classmethod
    def of(cls, timelines: dict[str, Timeline]) -> Analysis:
        """The rules over every host (``engine.run_hosts``) and what is drawn from their outcome; the
        IRQ x CPU heatmaps; the top fingerprints and wait channels."""
        fingerprints = [
            fp[:MAX_FINGERPRINT_CHARS] for tl in timelines.values() for fp in top_fingerprints(tl)
        ]
        waits = [w[:MAX_WAIT_CHANNEL_CHARS] for tl in timelines.values() for w in top_wait_channels(tl)]
        outcome = engine.run_hosts(timelines)
        findings = [finding_fields(f) for f in outcome.findings]
        return cls(
            outcome,
            findings,
            charts.finding_windows(findings, several=len(timelines) > 1),
            _irq_charts(timelines),
            pg_safe(list(dict.fromkeys(fingerprints))),
            pg_safe(list(dict.fromkeys(waits))),
        )


def _irq_charts(timelines: dict[str, Timeline]) -> list[dict[str, object]]:
    """The IRQ x CPU heatmap of each host (``charts.irq_cpu_chart``): on a case of several hosts each
    carries its ``host``, which makes it that host's panel; a case of one host's has none."""
    specs = {name: charts.irq_cpu_chart(irq_cpu_rates(tl)) for name, tl in timelines.items()}
    several = len(timelines) > 1
    return [{**spec, "host": name} if several else spec for name, spec in specs.items() if spec]
