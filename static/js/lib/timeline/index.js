// The timeline of a case page: charts grouped by source in collapsible sections, on one time axis
// (input: the timeline JSON described at the top of ../charts.js).
//
// Made of four parts, one module each:
//   sections.js  the <details> sections and the figure of each chart (DOM);
//   zoom.js      the shared time range: a zoom or pan on one chart applies to all;
//   overview.js  the strip of the whole capture above the charts, with a brush;
//   moment.js    the cursor line across the charts and the picked moment (click, Enter).
// configs.js holds the Chart.js configuration of a time chart and of a grid.
//
// Needs the vendored UMD globals loaded first by plain <script> tags: Chart (chart.js 4), the
// date-fns adapter, chartjs-chart-matrix, chartjs-plugin-annotation and chartjs-plugin-zoom (+ Hammer).
// Times are shown in the zone chosen on the page (timefmt.js zoneOffset).

import { downloadPng, hasData, timeExtent, windowsFor } from "../charts.js";
import { gridChart, setData, timeChart } from "./configs.js";
import { createMoment, listenForPicks } from "./moment.js";
import { buildOverview } from "./overview.js";
import { buildFigure, buildSections, openSectionOf, sectionIsOpen } from "./sections.js";
import { createZoom } from "./zoom.js";

/**
 * Build the sections and charts of `timeline` inside `container`, and the overview strip inside
 * `overviewHost` (may be null). Returns a controller:
 *   {charts, extent, hosts, range(), picked, setPicked(ms), reset(), zoomTo(startMs, endMs),
 *    replaceData(next), restore(), openChartIds(), openSectionsOf(ids), figure(id), figuresOf(id),
 *    spec(id, host), showHosts(names), redraw(), destroy()}.
 * A chart id of a finding (`cpu`) stands for every host's panel of that chart (`cpu~0`, `cpu~1`).
 * Throws Error when the vendored Chart.js global is missing.
 *
 * options.onRangeChange(minMs, maxMs): after every zoom, pan, brush or reset;
 * options.onPick(epochMs): a click (no drag) or Enter picked a moment.
 */
export function buildTimeline(container, overviewHost, timeline, options = {}) {
  const Chart = globalThis.Chart;
  if (!Chart) {
    throw new Error("Chart.js did not load (static/vendor/chart.js-*/chart.umd.min.js).");
  }
  const specs = (timeline.charts || []).filter(hasData);
  const extent = timeExtent({ ...timeline, charts: specs });
  const windows = timeline.windows || [];
  const hosts = timeline.hosts || [];
  const charts = [];
  const timeCharts = [];
  const figures = new Map();
  const byChart = new Map(); // chart id -> the figures of its panels (one, or one per host)
  let overview = null;

  const moment = createMoment(timeCharts, options.onPick);
  const zoom = createZoom(timeCharts, extent, (min, max) => {
    if (overview) {
      overview.showBrush(min, max);
    }
    if (options.onRangeChange) {
      options.onRangeChange(min, max);
    }
  });

  const bodies = buildSections(container, timeline.sections || [], specs);
  for (const spec of specs) {
    const { figure, canvas, png } = buildFigure(bodies.get(spec.section) || container, spec, hosts);
    figures.set(spec.id, figure);
    const base = spec.chart || spec.id;
    byChart.set(base, [...(byChart.get(base) || []), figure]);
    const chart = drawChart(Chart, canvas, spec, { extent, windows, moment, zoom, hosts });
    charts.push(chart);
    png.addEventListener("click", () => downloadPng(chart, `${spec.id}`));
    if (spec.kind !== "grid") {
      timeCharts.push(chart);
    }
  }

  if (overviewHost) {
    overview = buildOverview(Chart, overviewHost, specs, extent, windows, (min, max) => zoom.apply(min, max, null));
  }
  return timelineApi({ charts, specs, figures, byChart, overview, zoom, moment, extent, hosts });
}

/**
 * What `buildTimeline` hands its caller: the charts, the visible range, the picked moment, zoom,
 * data replaced by a range read in detail, sections opened, hosts shown, redraw and destroy.
 */
function timelineApi({ charts, specs, figures, byChart, overview, zoom, moment, extent, hosts }) {
  const withOverview = () => [...charts, ...(overview ? [overview.chart] : [])];
  const original = new Map(specs.map((s) => [s.id, s]));

  const figuresOf = (id) => byChart.get(id) || (figures.has(id) ? [figures.get(id)] : []);

  return {
    charts,
    extent,
    hosts,
    /** The visible range [min, max] epoch ms. */
    range: zoom.range,
    get picked() {
      return moment.picked;
    },
    setPicked(ms) {
      moment.picked = Number.isFinite(ms) ? ms : null;
      moment.requestRedraw(null);
    },
    reset: zoom.reset,
    /** Show a window with a quarter of its length as context on each side. */
    zoomTo: zoom.zoomTo,
    /** New data for the same charts (a zoomed range read in detail), matched by chart id. */
    replaceData(next) {
      setSpecs(charts, next.charts || []);
    },
    /** Back to the overview data (the whole capture, as first painted). */
    restore() {
      setSpecs(charts, specs);
    },
    /** Ids of the charts whose section is open (a chart drawn per host once). */
    openChartIds() {
      return [...new Set(specs.filter((s) => sectionIsOpen(figures.get(s.id))).map((s) => s.chart || s.id))];
    },
    /** Open the sections holding these charts (every host's panel of each); returns their figures. */
    openSectionsOf(ids) {
      const found = ids.flatMap(figuresOf).filter((f) => !f.hidden);
      for (const figure of found) {
        openSectionOf(figure);
      }
      return found;
    },
    figure(id) {
      return figuresOf(id)[0] || null;
    },
    figuresOf,
    /** The spec of chart `id`; of a chart drawn per host, the panel of `host` (else the first). */
    spec(id, host) {
      if (original.has(id)) {
        return original.get(id);
      }
      const panels = specs.filter((s) => s.chart === id);
      return panels.find((s) => s.host === host) || panels[0] || null;
    },
    /** Show only the hosts named in `names` (a Set): their panels and their series. */
    showHosts(names) {
      showHosts(charts, figures, names);
    },
    /** Redraw every chart (the time zone changed). */
    redraw() {
      for (const c of withOverview()) {
        c.update("none");
      }
    },
    destroy() {
      for (const c of withOverview()) {
        c.destroy();
      }
      charts.length = 0;
    },
  };
}

/**
 * The Chart.js chart of `spec` on `canvas`: a grid, or a time chart with the finding windows of its
 * own (`windowsFor`) that reports picks to `moment`. Tagged with its spec for the methods above.
 */
function drawChart(Chart, canvas, spec, { extent, windows, moment, zoom, hosts }) {
  const chart =
    spec.kind === "grid"
      ? gridChart(Chart, canvas, spec)
      : timeChart(Chart, canvas, spec, { extent, windows: windowsFor(spec, windows), moment, zoom, hosts });
  chart.$casebookId = spec.id;
  chart.$casebookSpec = spec;
  if (spec.kind !== "grid") {
    listenForPicks(chart, canvas, moment);
  }
  return chart;
}

/** Each spec's data into the chart of the same id (grids keep theirs: they have no time range). */
function setSpecs(charts, specs) {
  for (const spec of specs) {
    const chart = charts.find((c) => c.$casebookId === spec.id);
    if (chart && spec.kind !== "grid") {
      setData(chart, spec);
    }
  }
}

/** Only the hosts in `names` (a Set): a host's panel is hidden or shown, a host's series too. */
function showHosts(charts, figures, names) {
  for (const chart of charts) {
    const spec = chart.$casebookSpec;
    if (spec.host !== undefined) {
      figures.get(spec.id).hidden = !names.has(spec.host);
      continue;
    }
    let changed = false;
    chart.data.datasets.forEach((dataset, i) => {
      if (dataset.host !== undefined && chart.isDatasetVisible(i) !== names.has(dataset.host)) {
        chart.setDatasetVisibility(i, names.has(dataset.host));
        changed = true;
      }
    });
    if (changed) {
      chart.update("none");
    }
  }
}
