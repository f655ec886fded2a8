"""The charts of a case page: which series go on which chart, in which section, read back bounded.

``timeline_charts(case)`` answers the page's timeline JSON (contract in static/js/lib/charts.js);
``start``/``end`` narrow it to a zoomed range, re-read in detail, and ``chart_ids`` to the charts the
page has open. Series come from ``Series`` rows (analyzer/timeline/series.py names them); each chart is a
``ChartDef`` whose series are exact names or every name under a prefix.

Bounded whatever the capture length: a line chart sends at most ``max_points`` instants (default
``MAX_POINTS``), chosen by MinMaxLTTB (tsdownsample) on each of its series so that every series keeps
its own peaks, and all its series share those instants (one ``t`` array per chart); a heatmap sends at
most ``MAX_COLUMNS`` time columns, each the largest value of its time bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

import numpy as np
import pandas as pd
from tsdownsample import MinMaxLTTBDownsampler

from analyzer.isotime import iso_utc
from parsers.passwords import mask_secrets
from web.models import Case, Finding, Host
from web.timeline import levels, services
from web.timeline.chartdefs import (  # noqa: F401 - CHARTS, SECTIONS ... are read from here too
    CHARTS,
    IRQ_CPU_CHART,
    SECTIONS,
    ChartDef,
    chart_ids_for_evidence,
)
from web.timeline.series import series_arrays, series_hosts, stored_names

#: Version of the timeline JSON; an overview stored at ingest in an older shape is rebuilt on read.
VERSION = 2
#: Instants per line chart: the width of a wide chart in pixels, bounded whatever the capture length
#: (a 24-hour capture at 1 s has 86,400 samples per series).
MAX_POINTS = 2000
#: Instants per line chart in the overview stored at ingest (the first paint): the whole page's
#: JSON stays under 1 MB for a 24-hour capture; zooming fetches MAX_POINTS for the range shown.
OVERVIEW_POINTS = 800
#: Time columns per heatmap: one per 4-5 px of a laptop-wide chart.
MAX_COLUMNS = 240
#: Fewest points MinMaxLTTB picks per series of a chart with many series.
MIN_POINTS_PER_SERIES = 100
#: Significant digits sent per value: what a reader can see on a chart, and JSON a third the size.
SIGNIFICANT_DIGITS = 4
#: A case of more hosts than this draws each chart as small multiples (one panel per host); up to
#: this many, a line chart carries one series per host (per host and label when it has several).
MAX_OVERLAID_HOSTS = 4
#: Between a chart id and a host's index in the id of one host's panel (``cpu~1``).
PANEL_SEP = "~"

#: Longest series label on a chart legend (query fingerprints can be kilobytes long).
MAX_LABEL = 80


def _read(
    case: Case,
    prefixes: list[str],
    exact: list[str],
    lo: int | None,
    hi: int | None,
    max_points: int,
    host: str | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The series ``exact`` or under ``prefixes`` of ``host`` (None: any, a case of one host) between
    ``lo`` and ``hi`` (µs, None = open), from the levels of detail (web/timeline/levels.py: the finest
    with at most twice ``max_points`` points in the range, only those bytes read); a case ingested
    before they existed gets them written first."""
    names = stored_names(case, prefixes, exact, host)
    if not names and services.series_levels_ensure(case=case):
        names = stored_names(case, prefixes, exact, host)
    return levels.read_range(case.pk, names, lo, hi, 2 * max_points, host=host)


def base_chart_ids(ids: list[str] | None) -> list[str] | None:
    """Chart ids as the page sends them (a host's panel is ``<chart>~<host index>``) -> the ids of
    ``CHARTS`` they belong to, in order, each once; None stays None (every chart).

    >>> base_chart_ids(["cpu~0", "cpu~1", "runqueue"])
    ['cpu', 'runqueue']
    """
    if ids is None:
        return None
    return list(dict.fromkeys(i.split(PANEL_SEP, 1)[0] for i in ids))


# ------------------------------------------------------------------------------------- downsampling
def round_values(values: np.ndarray) -> list[float | None]:
    """Values to ``SIGNIFICANT_DIGITS`` digits of the series' largest magnitude; NaN -> None."""
    finite = np.isfinite(values)
    magnitudes = np.abs(values[finite])
    top = float(magnitudes.max()) if magnitudes.size else 0.0
    decimals = int(max(0, SIGNIFICANT_DIGITS - 1 - np.floor(np.log10(top)))) if top > 0 else 0
    rounded = np.round(np.where(finite, values, 0.0), min(decimals, 6))
    out = rounded.astype("int64").tolist() if decimals == 0 else rounded.tolist()
    for i in np.flatnonzero(~finite).tolist():
        out[i] = None
    return out


def _aligned(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Series of one chart on the union of their instants (NaN where one has no sample then)."""
    t = (
        parts[0][0]
        if all(len(p[0]) == len(parts[0][0]) and (p[0] == parts[0][0]).all() for p in parts)
        else None
    )
    if t is None:
        t = np.unique(np.concatenate([p[0] for p in parts]))
    columns = []
    for ts, values in parts:
        if len(ts) == len(t) and (ts == t).all():
            columns.append(values)
            continue
        col = np.full(len(t), np.nan)
        col[np.searchsorted(t, ts)] = values
        columns.append(col)
    return t, columns


def pick_points(t: np.ndarray, columns: list[np.ndarray], max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` instants that keep each series' shape and peaks: the union
    of MinMaxLTTB's picks on every series, each given an equal share (at least
    ``MIN_POINTS_PER_SERIES``); a union larger than ``max_points`` is thinned evenly over time, so
    that the chart still reaches both ends of the capture."""
    if len(t) <= max_points:
        return np.arange(len(t))
    share = max(MIN_POINTS_PER_SERIES, max_points // max(1, len(columns)))
    share -= share % 2  # MinMaxLTTB works on pairs
    x = np.ascontiguousarray(t, dtype="float64")
    picked = set()
    for col in columns:
        idx = MinMaxLTTBDownsampler().downsample(x, np.ascontiguousarray(np.nan_to_num(col)), n_out=share)
        picked.update(int(i) for i in idx)
        if len(picked) >= max_points:
            break
    chosen = np.array(sorted(picked), dtype="int64")
    if len(chosen) > max_points:  # steps of more than one: no index is taken twice
        chosen = chosen[np.linspace(0, len(chosen) - 1, max_points).round().astype("int64")]
    return chosen


def _heat_columns(
    t: np.ndarray, columns: list[np.ndarray], lo_ms: float, hi_ms: float
) -> tuple[float, float, np.ndarray]:
    """Rows bucketed into at most ``MAX_COLUMNS`` equal time columns over [lo_ms, hi_ms], each cell
    the largest value of its bucket (a short spike stays visible); NaN where a bucket has no sample.
    Returns (first column's start ms, column width ms, grid rows x columns)."""
    t_ms = t / 1000.0
    span = max(hi_ms - lo_ms, 1.0)
    step = float(np.median(np.diff(t_ms))) if len(t_ms) > 1 else span
    ncol = int(min(MAX_COLUMNS, max(1, round(span / max(step, 1.0)))))
    width = span / ncol
    bucket = np.clip(((t_ms - lo_ms) / width).astype("int64"), 0, ncol - 1)  # ascending: t is sorted
    starts = np.flatnonzero(np.diff(bucket, prepend=-1))
    stacked = np.vstack(columns)
    peaks = np.maximum.reduceat(np.where(np.isnan(stacked), -np.inf, stacked), starts, axis=1)
    grid = np.full((len(columns), ncol), np.nan)
    grid[:, bucket[starts]] = np.where(np.isneginf(peaks), np.nan, peaks)
    return lo_ms, width, grid


def _label(text: str) -> str:
    """A legend label or heatmap row (a series' name: a query fingerprint, a wait channel...), its
    passwords masked, cut to ``MAX_LABEL``."""
    text = mask_secrets(text)
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _natural(name: str) -> tuple:
    """Sort key putting ``cpu2`` before ``cpu10``."""
    tail = name.rsplit(":", 1)[-1]
    return (0, int(tail), "") if tail.isdigit() else (1, 0, tail)


# ----------------------------------------------------------------------------------------- building
def _pairs(chart: ChartDef, data: dict) -> list[tuple[str, str]]:
    """(series name, legend label) of ``chart`` present in ``data``; a prefix chart's largest first."""
    if chart.prefix:
        names = sorted((n for n in data if n.startswith(chart.prefix)), key=lambda n: -np.nansum(data[n][1]))
        return [(n, n[len(chart.prefix) :]) for n in names]
    return [(n, label) for n, label in chart.series if n in data]


def _line_chart(chart: ChartDef, data: dict, hline: list, max_points: int) -> dict[str, object] | None:
    pairs = _pairs(chart, data)
    if not pairs:
        return None
    t, columns = _aligned([data[n] for n, _ in pairs])
    if not any(np.isfinite(col).any() for col in columns):
        return None  # nothing to draw (e.g. a rate between monitor outputs of a capture with one)
    idx = pick_points(t, columns, max_points)
    return {
        **_common(chart),
        "t": (t[idx] // 1000).tolist(),
        "series": [
            {"label": _label(label), "v": round_values(col[idx] * chart.scale)}
            for (_, label), col in zip(pairs, columns, strict=True)
        ],
        "hlines": hline if chart.ncpu_line else [],
    }


def _heatmap(
    chart: ChartDef, data: dict, lo_ms: float | None, hi_ms: float | None
) -> dict[str, object] | None:
    names = sorted((n for n in data if n.startswith(chart.prefix)), key=_natural)
    if not names:
        return None
    t, columns = _aligned([data[n] for n in names])
    if chart.also:
        for i, name in enumerate(names):
            other = data.get(chart.also + name[len(chart.prefix) :])
            if other is not None:
                pos = np.searchsorted(t, other[0])
                ok = (pos < len(t)) & (t[np.minimum(pos, len(t) - 1)] == other[0])
                col = columns[i].copy()
                col[pos[ok]] = np.fmax(col[pos[ok]], other[1][ok])
                columns[i] = col
    lo = lo_ms if lo_ms is not None else t[0] / 1000.0
    hi = hi_ms if hi_ms is not None else t[-1] / 1000.0
    x0, width, grid = _heat_columns(t, columns, lo, hi)
    finite = grid[np.isfinite(grid)]
    return {
        **_common(chart),
        "rows": [_label(n[len(chart.prefix) :]) for n in names],
        "x0": round(x0),
        "dx": round(width, 1),
        "v": [round_values(row) for row in grid],
        "max": float(finite.max()) if finite.size else 0.0,
    }


def _overlaid(
    chart: ChartDef, by_host: dict[str, dict], hlines: list, max_points: int
) -> dict[str, object] | None:
    """One line chart of every host's series on one time axis: a series per host (labelled with the
    host's name) when each host has one, else per host and label (``db-a · r``); each series names
    its ``host``, so the page colours and filters by host."""
    parts, labels = [], []
    per_host = {host: _pairs(chart, data) for host, data in by_host.items()}
    single = all(len(pairs) <= 1 for pairs in per_host.values())
    for host, pairs in per_host.items():
        for name, label in pairs:
            parts.append(by_host[host][name])
            labels.append((host, host if single else f"{host} · {label}"))
    if not parts:
        return None
    t, columns = _aligned(parts)
    if not any(np.isfinite(col).any() for col in columns):
        return None
    idx = pick_points(t, columns, max_points)
    return {
        **_common(chart),
        "t": (t[idx] // 1000).tolist(),
        "series": [
            {"label": _label(label), "host": host, "v": round_values(col[idx] * chart.scale)}
            for (host, label), col in zip(labels, columns, strict=True)
        ],
        "hlines": hlines if chart.ncpu_line else [],
    }


def _ncpu_lines(ncpus: dict[str, int | None]) -> list[dict[str, object]]:
    """The CPU-count reference lines of an overlaid chart: one when every host has the same count,
    else one per count naming its hosts."""
    by_count: dict[int, list[str]] = {}
    for host, n in ncpus.items():
        if n:
            by_count.setdefault(n, []).append(host)
    if len(by_count) == 1:
        (n,) = by_count
        return [{"label": f"ncpu = {n}", "value": n}]
    return [{"label": f"ncpu {', '.join(h)} = {n}", "value": n} for n, h in sorted(by_count.items())]


def _host_charts(
    chart: ChartDef,
    by_host: dict[str, dict],
    ncpus: dict[str, int | None],
    lo_ms: float | None,
    hi_ms: float | None,
    max_points: int,
) -> list[dict[str, object]]:
    """The specs of ``chart`` for a case of several hosts (``by_host``: host -> its series, the first
    host first). A heatmap, a stacked chart, or any chart of more than ``MAX_OVERLAID_HOSTS`` hosts:
    small multiples, one panel per host (id ``<chart>~<index>``, ``chart`` and ``host`` set); else one
    overlaid chart (``_overlaid``) whose id is the chart's."""
    hosts = list(by_host)
    if chart.kind != "heatmap" and not chart.stacked and len(hosts) <= MAX_OVERLAID_HOSTS:
        spec = _overlaid(chart, by_host, _ncpu_lines(ncpus), max_points)
        return [{**spec, "chart": chart.id, "hosts": hosts}] if spec else []
    out = []
    for i, host in enumerate(hosts):
        data = by_host[host]
        if chart.kind == "heatmap":
            spec = _heatmap(chart, data, lo_ms, hi_ms)
        else:
            hline = [{"label": f"ncpu = {ncpus[host]}", "value": ncpus[host]}] if ncpus.get(host) else []
            spec = _line_chart(chart, data, hline, max_points)
        if spec:
            out.append({**spec, "id": f"{chart.id}{PANEL_SEP}{i}", "chart": chart.id, "host": host})
    return out


def _common(chart: ChartDef) -> dict[str, object]:
    return {
        "id": chart.id,
        "section": chart.section,
        "title": chart.title,
        "unit": chart.unit,
        "stacked": chart.stacked,
        "kind": chart.kind,
    }


def irq_cpu_chart(rates: pd.DataFrame) -> dict[str, object] | None:
    """The IRQ x CPU heatmap spec from ``analyzer.timeline.series.irq_cpu_rates`` (rows: IRQ lines, columns:
    CPUs, mean interrupts per second); None when empty."""
    if rates is None or rates.empty:
        return None
    chart_id, section, title = IRQ_CPU_CHART
    values = rates.to_numpy(dtype="float64")
    return {
        "id": chart_id,
        "section": section,
        "title": title,
        "unit": "/s",
        "stacked": False,
        "kind": "grid",
        "rows": [_label(str(r)) for r in rates.index],
        "cols": [str(c) for c in rates.columns],
        "v": [round_values(row) for row in values],
        "max": float(values.max()) if values.size else 0.0,
    }


def timeline_charts(
    *,
    case: Case,
    start: datetime | None = None,
    end: datetime | None = None,
    max_points: int = MAX_POINTS,
    chart_ids: list[str] | None = None,
    extra: list[dict[str, object]] | None = None,
) -> dict[str, object]:
    """The timeline JSON of the case page (contract: static/js/lib/charts.js), read from the case's
    stored series.

    ``start``/``end`` (aware datetimes) narrow it to a range read in detail; ``chart_ids`` to those
    charts (unknown ids are ignored; a host's panel ``cpu~1`` stands for its chart); ``max_points``
    bounds each line chart's instants; ``extra`` are chart specs computed elsewhere (the IRQ x CPU
    heatmap at ingest), placed in their section; on a case of several hosts one with ``host`` (a
    ``Host.name``) becomes that host's panel.

    A case of several hosts (series under more than one ``Host.name``) reads each host's series on
    the one time axis and draws them per ``_host_charts``; ``hosts`` lists their names, first host
    first (empty for a case of one host, whose JSON is as it always was).
    """
    ids = base_chart_ids(chart_ids)
    wanted = [c for c in CHARTS if ids is None or c.id in ids]
    prefixes, names = _wanted_names(wanted)
    lo = int(start.timestamp() * 1e6) if start else None
    hi = int(end.timestamp() * 1e6) if end else None
    hosts = series_hosts(case)
    several = len(hosts) > 1
    ncpus = dict(Host.objects.filter(case=case).values_list("name", "ncpu")) if several else {}
    out = _charts_json(
        wanted,
        hosts=hosts,
        read=lambda h: _read(case, prefixes, names, lo, hi, max_points, host=h if several else None),
        ncpus={h: ncpus.get(h) for h in hosts},
        ncpu=case.ncpu,
        lo=lo,
        hi=hi,
        max_points=max_points,
        window=(case.window_start, case.window_end),
        utc_offset_s=case.utc_offset_s,
    )
    _place_extra(out["charts"], extra or [], hosts)  # type: ignore[arg-type]
    out["windows"] = _finding_windows(case, several=several)
    return out


def overview_of(
    series: dict[str, dict[str, list[tuple[int, np.ndarray, np.ndarray]]]],
    *,
    hosts: list[str],
    ncpus: dict[str, int | None],
    ncpu: int | None,
    window: tuple[datetime | None, datetime | None],
    utc_offset_s: int | None,
) -> dict[str, object]:
    """The overview (``timeline_charts(case=, max_points=OVERVIEW_POINTS)``'s JSON, before the
    analysis' part: no ``windows``, no ``extra`` charts, ``with_analysis`` adds them) worked out from
    the series an ingest is about to write, not read back: ``series`` is host -> name -> levels of
    detail (``levels.levels_of``; as ``bulk.series_levels`` made them), ``hosts`` the case's hosts as
    ``series_hosts`` will list them, ``ncpus`` each host's CPUs, ``ncpu``, ``window`` and
    ``utc_offset_s`` the case's. Each series is taken at the level ``levels.read_range`` would read."""
    prefixes, names = _wanted_names(list(CHARTS))
    exact = set(names)

    def read(host: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        data = {}
        for name, levels_ in sorted(series.get(host, {}).items()):
            if name in exact or name.startswith(tuple(prefixes)):
                _level, ts, values = levels.finest_within(levels_, 2 * OVERVIEW_POINTS)
                data[name] = (ts, values)
        return data

    return _charts_json(
        list(CHARTS),
        hosts=hosts,
        read=read,
        ncpus=ncpus,
        ncpu=ncpu,
        lo=None,
        hi=None,
        max_points=OVERVIEW_POINTS,
        window=window,
        utc_offset_s=utc_offset_s,
    )


def with_analysis(
    overview: dict[str, object], *, extra: list[dict[str, object]], windows: list[dict[str, object]]
) -> dict[str, object]:
    """``overview`` (``overview_of``) with the analysis' part: the chart specs it computed (``extra``,
    the IRQ x CPU heatmaps) in their section and the findings' ``windows`` (``finding_windows``)."""
    out = {**overview, "charts": list(overview["charts"]), "windows": windows}  # type: ignore[call-overload]
    hosts = out["hosts"] or []
    _place_extra(out["charts"], extra, hosts)  # type: ignore[arg-type]
    return out


def _wanted_names(wanted: list[ChartDef]) -> tuple[list[str], list[str]]:
    """The prefixes and the exact series names the charts ``wanted`` read."""
    prefixes = sorted({p for c in wanted for p in (c.prefix, c.also) if p})
    names = sorted({n for c in wanted for n, _ in c.series})
    return prefixes, names


def _charts_json(
    wanted: list[ChartDef],
    *,
    hosts: list[str],
    read: Callable[[str], dict[str, tuple[np.ndarray, np.ndarray]]],
    ncpus: dict[str, int | None],
    ncpu: int | None,
    lo: int | None,
    hi: int | None,
    max_points: int,
    window: tuple[datetime | None, datetime | None],
    utc_offset_s: int | None,
) -> dict[str, object]:
    """The timeline JSON of the charts ``wanted`` over ``[lo, hi]`` (µs, None: open), ``read(host)``
    giving a host's series (name -> (ts µs, values)); no findings' windows (``windows`` empty)."""
    lo_ms = lo / 1000.0 if lo is not None else None
    hi_ms = hi / 1000.0 if hi is not None else None
    charts: list[dict[str, object]] = []
    if len(hosts) > 1:
        by_host = {h: read(h) if wanted else {} for h in hosts}
        for chart in wanted:
            charts.extend(_host_charts(chart, by_host, ncpus, lo_ms, hi_ms, max_points))
    else:
        data = read(hosts[0] if hosts else "") if wanted else {}
        hline = [{"label": f"ncpu = {ncpu}", "value": ncpu}] if ncpu else []
        for chart in wanted:
            spec = (
                _heatmap(chart, data, lo_ms, hi_ms)
                if chart.kind == "heatmap"
                else _line_chart(chart, data, hline, max_points)
            )
            if spec:
                charts.append(spec)
    extent = [_ms_dt(window[0]), _ms_dt(window[1])]
    return {
        "version": VERSION,
        "utc_offset_s": utc_offset_s,
        "ncpu": ncpu,
        "extent": extent if None not in extent else None,
        "range": [lo_ms, hi_ms] if lo is not None or hi is not None else None,
        "sections": [{"id": sid, "title": title} for sid, title in SECTIONS],
        "charts": charts,
        "windows": [],
        "hosts": hosts if len(hosts) > 1 else [],
    }


def _place_extra(charts: list[dict[str, object]], extra: list[dict[str, object]], hosts: list[str]) -> None:
    """Insert the chart specs computed elsewhere at the end of their section; on a case of several
    hosts, one with ``host`` becomes that host's panel."""
    for spec in extra:
        host = spec.get("host")
        if len(hosts) > 1 and host in hosts:
            spec = {**spec, "id": f"{spec['id']}{PANEL_SEP}{hosts.index(host)}", "chart": spec["id"]}
        after = max(
            (i for i, c in enumerate(charts) if c["section"] == spec["section"]), default=len(charts) - 1
        )
        charts.insert(after + 1, spec)


def _finding_windows(case: Case, *, several: bool) -> list[dict[str, object]]:
    """The windows of the case's stored findings (``finding_windows``), in their order."""
    rows = Finding.objects.filter(case=case).order_by("position")
    return finding_windows(
        rows.values("key", "severity", "title", "windows", "host", "hosts"), several=several
    )


def finding_windows(findings: Iterable[Mapping[str, object]], *, several: bool) -> list[dict[str, object]]:
    """The findings' windows the charts shade (epoch ms), most important finding first; with the
    finding's host(s) on a case of several hosts. ``findings``: the fields of ``Finding`` rows, in
    their order (``key``, ``severity``, ``title``, ``windows`` as ISO pairs, ``host``, ``hosts``),
    stored or about to be written."""
    return [
        {
            "key": f["key"],
            "severity": f["severity"],
            "title": mask_secrets(f["title"]),
            "start_ms": _ms(a),
            "end_ms": _ms(b),
            **({"host": f["host"], "hosts": f["hosts"]} if several else {}),
        }
        for f in findings
        for a, b in f["windows"]  # type: ignore[attr-defined]
    ]


def _ms(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000.0


def series_listing(
    *,
    case: Case,
    names: list[str] | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    max_points: int = MAX_POINTS,
) -> list[dict[str, object]]:
    """The case's stored series for the API, by name: ``{"name", "points" (stored, whole capture),
    "first", "last" (ISO UTC or None)}``; with ``names`` each also has ``data``: ``[epoch ms, value]``
    within ``[start, end]``, at most ``max_points`` (MinMaxLTTB, peaks kept), null for no value.
    Unknown names are left out."""
    out = []
    for name, (ts, values) in sorted(series_arrays(case=case, names=names).items()):
        row: dict[str, object] = {
            "name": mask_secrets(name),
            "points": len(ts),
            "first": iso_utc(ts[0]) if len(ts) else None,
            "last": iso_utc(ts[-1]) if len(ts) else None,
        }
        if names is not None:
            a = int(np.searchsorted(ts, int(start.timestamp() * 1e6), side="left")) if start else 0
            b = int(np.searchsorted(ts, int(end.timestamp() * 1e6), side="right")) if end else len(ts)
            t, v = ts[a:b] // 1000, values[a:b]
            idx = pick_points(t, [v], max_points)
            row["data"] = [list(p) for p in zip(t[idx].tolist(), round_values(v[idx]), strict=True)]
        out.append(row)
    return out


def _ms_dt(value: datetime | None) -> float | None:
    return value.timestamp() * 1000.0 if value else None
