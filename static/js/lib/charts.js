// The timeline of a case page: charts grouped by source in collapsible sections, on one time axis.
//
// Input (GET urls.timeline, web/charts.py, version 2):
//   {version: 2, utc_offset_s, ncpu, extent: [start_ms, end_ms] | null, range: [lo, hi] | null,
//    sections: [{id, title}],
//    charts: [
//      {id, section, title, unit, stacked, kind: "line", t: [epoch_ms...],
//       series: [{label, v: [value|null...]}], hlines: [{label, value}]},
//      {id, section, title, unit, kind: "heatmap", rows: [label...], x0: epoch_ms, dx: ms,
//       v: [[value|null per column] per row], max},
//      {id, section, title, unit, kind: "grid", rows: [label...], cols: [label...], v: [[...]], max}],
//    windows: [{key, severity, title, start_ms, end_ms}]}
//
// Needs the vendored UMD globals loaded first by plain <script> tags: Chart (chart.js 4), the
// date-fns adapter, chartjs-chart-matrix, chartjs-plugin-annotation and chartjs-plugin-zoom (+ Hammer).
// Every time chart (lines and heatmaps) shares one x range; zoom and pan on one chart, or a drag on
// the overview strip, apply to all; a cursor line follows the mouse across them. A click (no drag),
// or Enter on a focused chart (arrow keys move the cursor), picks a moment: options.onPick(ms).
// Times are shown in the zone chosen on the page (timefmt.js zoneOffset).

import { formatEpochMs, zoneOffset } from "./timefmt.js";

/** Finding windows: Okabe-Ito colours (colour-blind safe), told apart by their border too. */
export const SEVERITY_COLOURS = {
  critical: { line: "rgb(213, 94, 0)", fill: "rgba(213, 94, 0, 0.16)", dash: [] },
  warning: { line: "rgb(230, 159, 0)", fill: "rgba(230, 159, 0, 0.18)", dash: [6, 3] },
  info: { line: "rgb(0, 114, 178)", fill: "rgba(86, 180, 233, 0.14)", dash: [2, 3] },
};

// Fixed colours for the series names that recur (vmstat/mpstat CPU split, run queue, thread
// states), so that "wa" is the same colour on every case; anything else takes the palette in order.
// Okabe & Ito's palette (https://jfly.uni-koeln.de/color/), readable with every common colour-vision
// deficiency, plus two greys.
const NAMED_COLOURS = {
  us: "#0072B2",
  usr: "#0072B2",
  sy: "#D55E00",
  sys: "#D55E00",
  wa: "#E69F00",
  iowait: "#E69F00",
  st: "#CC79A7",
  steal: "#CC79A7",
  id: "#c9ced6",
  idle: "#c9ced6",
  r: "#0072B2",
  b: "#D55E00",
  R: "#0072B2",
  D: "#D55E00",
  S: "#9aa3ae",
};
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#8C7B00", "#7f7f7f"];
// Heatmap scale: viridis (perceptually uniform, colour-blind safe), low -> high.
const VIRIDIS = [
  [68, 1, 84],
  [65, 68, 135],
  [42, 120, 142],
  [34, 168, 132],
  [122, 209, 81],
  [253, 231, 37],
];

// Finding windows drawn with a border when a chart has at most this many (merged) windows.
const MAX_BORDERED_WINDOWS = 8;
// Pixels of drag before a drag-to-zoom counts (a click must not zoom into nothing).
const DRAG_THRESHOLD_PX = 5;
// Smallest zoom range: one second, the finest sampling interval the collectors use.
const MIN_RANGE_MS = 1000;
// Fixed width of every y axis, so that the plot areas (and so the time axes) of all charts line up.
const Y_AXIS_WIDTH_PX = 64;
// Keyboard: one arrow key press moves the cursor by this fraction of the visible range.
const KEY_STEP = 1 / 60;
const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 3600 * 1000;

function hexToRgba(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

function seriesColour(label, index) {
  return NAMED_COLOURS[label] || PALETTE[index % PALETTE.length];
}

/** Viridis colour for `fraction` in [0, 1]. */
export function heatColour(fraction) {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(f));
  const k = f - i;
  const [a, b] = [VIRIDIS[i], VIRIDIS[i + 1]];
  const c = a.map((v, j) => Math.round(v + (b[j] - v) * k));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** Overall [min, max] epoch ms of the timeline: its extent, else its data and windows; null if none. */
export function timeExtent(timeline) {
  if (timeline.extent && timeline.extent.every(Number.isFinite) && timeline.extent[1] > timeline.extent[0]) {
    return [...timeline.extent];
  }
  let min = Infinity;
  let max = -Infinity;
  for (const chart of timeline.charts || []) {
    if (chart.kind === "heatmap" && (chart.v || []).length) {
      const cols = chart.v[0].length;
      min = Math.min(min, chart.x0);
      max = Math.max(max, chart.x0 + cols * chart.dx);
    } else if ((chart.t || []).length) {
      min = Math.min(min, chart.t[0]);
      max = Math.max(max, chart.t[chart.t.length - 1]);
    }
  }
  for (const w of timeline.windows || []) {
    min = Math.min(min, w.start_ms);
    max = Math.max(max, w.end_ms);
  }
  if (!Number.isFinite(min) || !Number.isFinite(max)) {
    return null;
  }
  return min === max ? [min - MIN_RANGE_MS * 30, max + MIN_RANGE_MS * 30] : [min, max];
}

/** Does a chart spec hold anything to draw? */
export function hasData(spec) {
  if (spec.kind === "heatmap" || spec.kind === "grid") {
    return (spec.v || []).some((row) => row.some((v) => v !== null));
  }
  return (spec.t || []).length > 0 && (spec.series || []).some((s) => (s.v || []).some((v) => v !== null));
}

function tickFormatter() {
  return function format(value) {
    const scale = this; // Chart.js calls the tick callback with the scale as `this`
    const span = scale.max - scale.min;
    const off = zoneOffset(value);
    if (span > 2 * DAY_MS) {
      return formatEpochMs(value, off, "short");
    }
    if (span > 20 * MINUTE_MS) {
      return formatEpochMs(value, off, "minute");
    }
    return formatEpochMs(value, off, "time");
  };
}

export function formatValue(value, unit) {
  if (value === null || value === undefined || Number.isNaN(value)) {
    return "–";
  }
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  const text = value.toLocaleString("en-US", { maximumFractionDigits: digits });
  return unit ? `${text} ${unit}` : text;
}

// Overlapping windows of the same severity are merged, so five findings over one minute shade it once.
function mergedWindows(windows) {
  const bySeverity = {};
  for (const w of windows) {
    (bySeverity[w.severity] = bySeverity[w.severity] || []).push([w.start_ms, w.end_ms]);
  }
  const merged = [];
  for (const [severity, spans] of Object.entries(bySeverity)) {
    spans.sort((a, b) => a[0] - b[0]);
    let [start, end] = spans[0];
    for (const [s, e] of spans.slice(1)) {
      if (s <= end) {
        end = Math.max(end, e);
      } else {
        merged.push({ severity, start_ms: start, end_ms: end });
        [start, end] = [s, e];
      }
    }
    merged.push({ severity, start_ms: start, end_ms: end });
  }
  return merged;
}

function annotationsFor(spec, windows) {
  const annotations = {};
  const merged = mergedWindows(windows);
  // A border tells the severities apart without colour; with many windows it would be noise.
  const bordered = merged.length <= MAX_BORDERED_WINDOWS;
  merged.forEach((w, i) => {
    const colour = SEVERITY_COLOURS[w.severity] || SEVERITY_COLOURS.info;
    annotations[`window${i}`] = {
      type: "box",
      xMin: w.start_ms,
      xMax: w.end_ms,
      backgroundColor: spec.kind === "heatmap" ? "rgba(255, 255, 255, 0.18)" : colour.fill,
      borderColor: colour.line,
      borderWidth: bordered ? (spec.kind === "heatmap" ? 2 : 1) : 0,
      borderDash: colour.dash,
      // Behind the lines, except on stacked areas and heatmaps whose fill would hide it.
      drawTime: spec.stacked || spec.kind === "heatmap" ? "afterDatasetsDraw" : "beforeDatasetsDraw",
    };
  });
  (spec.hlines || []).forEach((h, i) => {
    annotations[`hline${i}`] = {
      type: "line",
      yMin: h.value,
      yMax: h.value,
      borderColor: "rgba(29, 35, 43, 0.7)",
      borderWidth: 1,
      borderDash: [6, 4],
      label: {
        display: true,
        content: h.label,
        position: "end",
        backgroundColor: "rgba(255, 255, 255, 0.85)",
        color: "#1d232b",
        font: { size: 10 },
        padding: 2,
      },
    };
  });
  return annotations;
}

function points(t, v) {
  const out = new Array(t.length);
  for (let i = 0; i < t.length; i += 1) {
    out[i] = { x: t[i], y: v[i] === null || v[i] === undefined ? null : Number(v[i]) };
  }
  return out;
}

function lineDatasets(spec) {
  const stacked = Boolean(spec.stacked);
  return (spec.series || []).map((series, i) => {
    const colour = seriesColour(series.label, i);
    return {
      type: "line",
      label: series.label,
      data: points(spec.t || [], series.v || []),
      borderColor: colour,
      backgroundColor: stacked ? hexToRgba(colour, 0.55) : hexToRgba(colour, 0.15),
      fill: stacked ? (i === 0 ? "origin" : "-1") : false,
      borderWidth: stacked ? 0.75 : 1.25,
      pointRadius: 0,
      pointHitRadius: 4,
      tension: 0,
      spanGaps: false,
    };
  });
}

function heatData(spec) {
  const data = [];
  const rows = spec.rows || [];
  (spec.v || []).forEach((row, r) => {
    row.forEach((value, c) => {
      if (value !== null && value !== undefined) {
        data.push({ x: spec.kind === "grid" ? spec.cols[c] : spec.x0 + (c + 0.5) * spec.dx, y: rows[r], v: value });
      }
    });
  });
  return data;
}

function heatDataset(spec) {
  const max = spec.max > 0 ? spec.max : 1;
  const rows = (spec.rows || []).length || 1;
  return {
    type: "matrix",
    label: spec.title,
    data: heatData(spec),
    backgroundColor: (ctx) => heatColour(((ctx.raw && ctx.raw.v) || 0) / max),
    borderWidth: 0,
    width: (ctx) => {
      const x = ctx.chart.scales.x;
      const area = ctx.chart.chartArea;
      if (!x || !area) {
        return 1;
      }
      if (spec.kind === "grid") {
        return Math.max(1, area.width / Math.max(1, (spec.cols || []).length) - 1);
      }
      // Pixels per ms from the visible range (getPixelForValue clamps far-off values to 16 bits).
      return Math.max(1, (area.width * spec.dx) / Math.max(1, x.max - x.min) + 0.6);
    },
    height: (ctx) => {
      const area = ctx.chart.chartArea;
      return area ? Math.max(1, area.height / rows - (rows > 24 ? 0 : 1)) : 1;
    },
  };
}

// Colour of the picked-moment marker, distinct from the cursor.
const PICKED_COLOUR = "rgba(0, 114, 178, 0.95)";

function drawVertical(chart, ms, colour, width) {
  const x = chart.scales.x.getPixelForValue(ms);
  const { top, bottom, left, right } = chart.chartArea;
  if (!Number.isFinite(x) || x < left || x > right) {
    return;
  }
  const { ctx } = chart;
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.lineWidth = width;
  ctx.beginPath();
  ctx.moveTo(x, top);
  ctx.lineTo(x, bottom);
  ctx.stroke();
  ctx.restore();
}

/** White canvas background, so that an exported PNG is not transparent. */
const whiteBackground = {
  id: "casebookBackground",
  beforeDraw(chart) {
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.globalCompositeOperation = "destination-over";
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};

/**
 * A plugin drawing a vertical cursor line at the shared `state.cursor` (epoch ms) and setting it
 * from mouse moves, and a marker at the picked moment `state.picked` (epoch ms) when there is one.
 */
function cursorPlugin(state) {
  return {
    id: "casebookCursor",
    afterEvent(chart, args) {
      const { event } = args;
      let next = state.cursor;
      if (event.type === "mousemove" && args.inChartArea) {
        next = chart.scales.x.getValueForPixel(event.x);
      } else if (event.type === "mouseout" || (event.type === "mousemove" && !args.inChartArea)) {
        next = null;
      }
      if (next !== state.cursor) {
        state.cursor = next;
        state.requestRedraw(chart);
      }
    },
    afterDatasetsDraw(chart) {
      if (state.picked !== null) {
        drawVertical(chart, state.picked, PICKED_COLOUR, 2);
      }
      if (state.cursor !== null) {
        drawVertical(chart, state.cursor, "rgba(29, 35, 43, 0.55)", 1);
      }
    },
  };
}

/** Call `onClick(event)` for a click on `canvas` that did not move more than DRAG_THRESHOLD_PX. */
function listenForClicks(canvas, onClick) {
  let down = null;
  canvas.addEventListener("pointerdown", (event) => {
    down = event.button === 0 ? { x: event.clientX, y: event.clientY } : null;
  });
  canvas.addEventListener("click", (event) => {
    const start = down;
    down = null;
    if (!start || Math.hypot(event.clientX - start.x, event.clientY - start.y) > DRAG_THRESHOLD_PX) {
      return;
    }
    onClick(event);
  });
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** Save `chart` as a PNG file named after `id` (a download; nothing leaves the browser). */
function downloadPng(chart, id) {
  const link = document.createElement("a");
  link.href = chart.toBase64Image("image/png", 1);
  link.download = `${id}.png`;
  document.body.append(link);
  link.click();
  link.remove();
}

function heatHeight(spec) {
  const rows = (spec.rows || []).length;
  return Math.min(360, Math.max(110, rows * (rows > 32 ? 4 : 14) + 50));
}

function timeScale(extent) {
  return {
    type: "time",
    time: { minUnit: "second" },
    min: extent[0],
    max: extent[1],
    offset: false,
    ticks: { callback: tickFormatter(), maxRotation: 0, autoSkipPadding: 16, font: { size: 11 } },
    grid: { color: "rgba(0, 0, 0, 0.05)" },
  };
}

function yAxisFit(scale) {
  scale.width = Y_AXIS_WIDTH_PX;
}

/**
 * Build the sections and charts of `timeline` inside `container`, and the overview strip inside
 * `overviewHost` (may be null). Returns a controller:
 *   {charts, extent, range(), reset(), zoomTo(startMs, endMs), replaceData(next), restore(),
 *    setPicked(ms), pickAtCursor(), openSectionsOf(ids), figure(id), redraw(), destroy()}.
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
  const charts = [];
  const timeCharts = [];
  const figures = new Map();
  let overview = null;
  let syncing = false;
  let current = extent ? [...extent] : null;

  let redrawPending = false;
  const state = {
    cursor: null,
    picked: null,
    requestRedraw(source) {
      if (redrawPending) {
        return;
      }
      redrawPending = true;
      requestAnimationFrame(() => {
        redrawPending = false;
        for (const c of timeCharts) {
          if (c !== source) {
            c.draw();
          }
        }
      });
    },
  };

  function applyRange(min, max, source) {
    syncing = true;
    try {
      for (const c of timeCharts) {
        if (c !== source) {
          c.zoomScale("x", { min, max }, "none");
        }
      }
    } finally {
      syncing = false;
    }
    current = [min, max];
    showBrush(min, max);
    if (options.onRangeChange) {
      options.onRangeChange(min, max);
    }
  }

  function syncFrom(source) {
    if (syncing) {
      return;
    }
    const { min, max } = source.scales.x;
    applyRange(min, max, source);
  }

  function pick(ms) {
    state.cursor = ms;
    state.picked = ms;
    state.requestRedraw(null);
    if (options.onPick) {
      options.onPick(ms);
    }
  }

  // ---------------------------------------------------------------- sections
  const sectionBodies = new Map();
  for (const section of timeline.sections || []) {
    if (!specs.some((s) => s.section === section.id)) {
      continue;
    }
    const details = el("details", "chart-section");
    details.id = `section-${section.id}`;
    details.open = true;
    const summary = el("summary", "chart-section__head");
    const count = specs.filter((s) => s.section === section.id).length;
    summary.append(el("span", "chart-section__title", section.title), el("span", "count", String(count)));
    const body = el("div", "chart-section__body");
    details.append(summary, body);
    container.append(details);
    sectionBodies.set(section.id, body);
  }

  for (const spec of specs) {
    const body = sectionBodies.get(spec.section) || container;
    const figure = el("figure", `chart chart--${spec.kind || "line"}`);
    figure.id = `chart-${spec.id}`;
    figure.dataset.chartId = spec.id;
    const caption = el("figcaption", "chart__title");
    caption.append(el("span", "chart__name", spec.title || spec.id));
    if (spec.unit) {
      caption.append(" ", el("span", "chart__unit", spec.unit));
    }
    const png = el("button", "button button--link button--small chart__png", "PNG");
    png.type = "button";
    png.setAttribute("aria-label", `Save ${spec.title || spec.id} as a PNG image`);
    caption.append(png);
    const box = el("div", "chart__box");
    if (spec.kind === "heatmap" || spec.kind === "grid") {
      box.style.height = `${heatHeight(spec)}px`; // through the CSSOM: allowed by the CSP
    }
    const canvas = document.createElement("canvas");
    canvas.setAttribute("role", "img");
    canvas.tabIndex = spec.kind === "grid" ? -1 : 0;
    canvas.setAttribute(
      "aria-label",
      spec.kind === "grid"
        ? `${spec.title}: heatmap of ${spec.rows.length} IRQ lines by ${spec.cols.length} CPUs`
        : `${spec.title || spec.id} over time. Arrow keys move the cursor, Enter shows that moment.`,
    );
    box.append(canvas);
    figure.append(caption, box);
    if (spec.kind === "heatmap" || spec.kind === "grid") {
      const legend = el("p", "heat-legend muted small");
      legend.append(
        el("span", "", "0"),
        el("span", "heat-legend__bar"),
        el("span", "", `${formatValue(spec.max, spec.unit)}`),
      );
      figure.append(legend);
    }
    body.append(figure);
    figures.set(spec.id, figure);

    const chart = spec.kind === "grid" ? gridChart(Chart, canvas, spec) : timeChart(Chart, canvas, spec);
    chart.$casebookId = spec.id;
    chart.$casebookSpec = spec;
    charts.push(chart);
    png.addEventListener("click", () => downloadPng(chart, `${spec.id}`));
    if (spec.kind === "grid") {
      continue;
    }
    timeCharts.push(chart);
    listenForClicks(canvas, (event) => {
      const rect = canvas.getBoundingClientRect();
      const x = event.clientX - rect.left;
      const y = event.clientY - rect.top;
      const area = chart.chartArea;
      if (x < area.left || x > area.right || y < area.top || y > area.bottom) {
        return; // on an axis or the legend, not on the time line
      }
      pick(Math.round(chart.scales.x.getValueForPixel(x)));
    });
    canvas.addEventListener("keydown", (event) => {
      const { min, max } = chart.scales.x;
      const step = (max - min) * KEY_STEP;
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        const from = state.cursor ?? (min + max) / 2;
        state.cursor = Math.min(max, Math.max(min, from + (event.key === "ArrowLeft" ? -step : step)));
        state.requestRedraw(null);
        event.preventDefault();
      } else if (event.key === "Enter" || event.key === " ") {
        pick(Math.round(state.cursor ?? (min + max) / 2));
        event.preventDefault();
      }
    });
  }

  function timeChart(ChartCtor, canvas, spec) {
    const heat = spec.kind === "heatmap";
    const unit = spec.unit || "";
    return new ChartCtor(canvas, {
      type: heat ? "matrix" : "line",
      data: { datasets: heat ? [heatDataset(spec)] : lineDatasets(spec) },
      plugins: [cursorPlugin(state), whiteBackground],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: heat ? undefined : false,
        normalized: true,
        interaction: heat ? { mode: "nearest", intersect: true } : { mode: "index", intersect: false, axis: "x" },
        scales: {
          x: timeScale(extent),
          y: heat
            ? {
                type: "category",
                labels: spec.rows,
                offset: true,
                reverse: false,
                afterFit: yAxisFit,
                ticks: { font: { size: 10 }, autoSkip: true, autoSkipPadding: 2 },
                grid: { display: false },
              }
            : {
                stacked: Boolean(spec.stacked),
                beginAtZero: true,
                max: spec.stacked && spec.unit === "%" ? 100 : undefined,
                afterFit: yAxisFit,
                title: { display: Boolean(unit), text: unit, font: { size: 11 } },
                ticks: { font: { size: 11 } },
                grid: { color: "rgba(0, 0, 0, 0.06)" },
              },
        },
        plugins: {
          decimation: { enabled: false }, // the server already bounds points per series
          legend: {
            display: !heat,
            position: "top",
            align: "end",
            labels: { boxWidth: 10, boxHeight: 10, font: { size: 11 } },
          },
          tooltip: {
            animation: false,
            callbacks: heat
              ? {
                  title: (items) =>
                    items.length ? formatEpochMs(items[0].raw.x - spec.dx / 2, zoneOffset(items[0].raw.x)) : "",
                  label: (item) => `${item.raw.y}: ${formatValue(item.raw.v, unit)} (largest in ${Math.round(spec.dx / 1000)} s)`,
                }
              : {
                  title: (items) => (items.length ? formatEpochMs(items[0].parsed.x, zoneOffset(items[0].parsed.x)) : ""),
                  label: (item) => `${item.dataset.label}: ${formatValue(item.parsed.y, unit)}`,
                },
          },
          annotation: { annotations: annotationsFor(spec, windows) },
          zoom: {
            limits: { x: { min: extent[0], max: extent[1], minRange: MIN_RANGE_MS } },
            zoom: {
              mode: "x",
              drag: { enabled: true, threshold: DRAG_THRESHOLD_PX, backgroundColor: "rgba(0, 114, 178, 0.12)" },
              wheel: { enabled: true, modifierKey: "ctrl" },
              pinch: { enabled: true },
              onZoomComplete: ({ chart: c }) => syncFrom(c),
            },
            pan: {
              enabled: true,
              mode: "x",
              modifierKey: "shift",
              onPanComplete: ({ chart: c }) => syncFrom(c),
            },
          },
        },
      },
    });
  }

  function gridChart(ChartCtor, canvas, spec) {
    return new ChartCtor(canvas, {
      type: "matrix",
      data: { datasets: [heatDataset(spec)] },
      plugins: [whiteBackground],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: {
            type: "category",
            labels: spec.cols,
            offset: true,
            title: { display: true, text: "CPU", font: { size: 11 } },
            ticks: { font: { size: 10 }, autoSkip: true, maxRotation: 0 },
            grid: { display: false },
          },
          y: {
            type: "category",
            labels: spec.rows,
            offset: true,
            afterFit: yAxisFit,
            ticks: { font: { size: 10 }, autoSkip: false },
            grid: { display: false },
          },
        },
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              title: () => "",
              label: (item) => `IRQ ${item.raw.y}, CPU ${item.raw.x}: ${formatValue(item.raw.v, spec.unit)}`,
            },
          },
        },
      },
    });
  }

  // ---------------------------------------------------------------- overview strip with a brush
  function activity() {
    // What the strip draws: CPU busy (100 - idle) when there is vmstat, else the first line chart.
    const cpu = specs.find((s) => s.id === "cpu");
    if (cpu) {
      const idle = (cpu.series || []).find((s) => s.label === "id");
      if (idle) {
        return { label: "CPU busy %", t: cpu.t, v: idle.v.map((v) => (v === null ? null : 100 - v)) };
      }
    }
    const line = specs.find((s) => (s.kind || "line") === "line");
    return line ? { label: line.series[0].label, t: line.t, v: line.series[0].v } : null;
  }

  function showBrush(min, max) {
    if (!overview) {
      return;
    }
    const whole = min <= extent[0] && max >= extent[1];
    const box = overview.options.plugins.annotation.annotations.brush;
    box.display = !whole;
    box.xMin = min;
    box.xMax = max;
    overview.update("none");
  }

  const strip = overviewHost ? activity() : null;
  let resettingStrip = false;
  if (strip && extent) {
    overviewHost.hidden = false;
    const label = el("p", "overview__label muted small", `Overview: ${strip.label}, whole capture. Drag across it to zoom every chart.`);
    const box = el("div", "overview__box");
    const canvas = document.createElement("canvas");
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", `Overview of the whole capture (${strip.label}); drag to choose the range shown below`);
    box.append(canvas);
    overviewHost.append(label, box);
    const annotations = annotationsFor({ kind: "line" }, windows);
    annotations.brush = {
      type: "box",
      display: false,
      xMin: extent[0],
      xMax: extent[1],
      backgroundColor: "rgba(0, 114, 178, 0.15)",
      borderColor: "rgba(0, 114, 178, 0.9)",
      borderWidth: 1.5,
      drawTime: "afterDatasetsDraw",
    };
    overview = new Chart(canvas, {
      type: "line",
      data: {
        datasets: [
          {
            label: strip.label,
            data: points(strip.t, strip.v),
            borderColor: "#0072B2",
            backgroundColor: "rgba(0, 114, 178, 0.15)",
            fill: "origin",
            borderWidth: 1,
            pointRadius: 0,
          },
        ],
      },
      plugins: [whiteBackground],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        events: ["mousedown", "mouseup", "mousemove", "mouseout", "touchstart", "touchmove", "touchend"],
        scales: {
          x: { ...timeScale(extent), ticks: { ...timeScale(extent).ticks, font: { size: 10 } } },
          y: { display: true, beginAtZero: true, afterFit: yAxisFit, ticks: { maxTicksLimit: 2, font: { size: 9 } } },
        },
        plugins: {
          legend: { display: false },
          tooltip: { enabled: false },
          annotation: { annotations },
          zoom: {
            limits: { x: { min: extent[0], max: extent[1], minRange: MIN_RANGE_MS } },
            zoom: {
              mode: "x",
              drag: { enabled: true, threshold: DRAG_THRESHOLD_PX, backgroundColor: "rgba(0, 114, 178, 0.2)" },
              wheel: { enabled: false },
              // The strip always shows the whole capture: the dragged range becomes the brush and
              // the range of every chart below.
              onZoomComplete: ({ chart: c }) => {
                if (resettingStrip) {
                  return; // resetZoom reports a zoom too
                }
                const { min, max } = c.scales.x;
                resettingStrip = true;
                try {
                  c.resetZoom("none");
                } finally {
                  resettingStrip = false;
                }
                applyRange(min, max, null);
              },
            },
          },
        },
      },
    });
  }

  // ---------------------------------------------------------------- the controller
  const original = new Map(specs.map((s) => [s.id, s]));

  function setData(chart, spec) {
    if (spec.kind === "heatmap") {
      const next = { ...chart.$casebookSpec, ...spec };
      chart.data.datasets = [heatDataset(next)];
      chart.$casebookSpec = next;
    } else {
      for (const dataset of chart.data.datasets) {
        const series = (spec.series || []).find((s) => s.label === dataset.label);
        dataset.data = series ? points(spec.t || [], series.v || []) : [];
      }
    }
    chart.update("none");
  }

  return {
    charts,
    extent,
    /** The visible range [min, max] epoch ms. */
    range() {
      return current ? [...current] : null;
    },
    get picked() {
      return state.picked;
    },
    setPicked(ms) {
      state.picked = Number.isFinite(ms) ? ms : null;
      state.requestRedraw(null);
    },
    reset() {
      applyRange(extent[0], extent[1], null);
    },
    /** Show a window with a quarter of its length as context on each side. */
    zoomTo(startMs, endMs) {
      const pad = Math.max((endMs - startMs) / 4, 5 * MIN_RANGE_MS);
      applyRange(Math.max(extent[0], startMs - pad), Math.min(extent[1], endMs + pad), null);
    },
    /** New data for the same charts (a zoomed range read in detail), matched by chart id. */
    replaceData(next) {
      for (const spec of next.charts || []) {
        const chart = charts.find((c) => c.$casebookId === spec.id);
        if (chart && spec.kind !== "grid") {
          setData(chart, spec);
        }
      }
    },
    /** Back to the overview data (the whole capture, as first painted). */
    restore() {
      for (const chart of charts) {
        const spec = original.get(chart.$casebookId);
        if (spec && spec.kind !== "grid") {
          setData(chart, spec);
        }
      }
    },
    /** Ids of the charts whose section is open. */
    openChartIds() {
      return specs.filter((s) => figures.get(s.id).closest("details").open).map((s) => s.id);
    },
    /** Open the sections holding these charts; returns their figures. */
    openSectionsOf(ids) {
      const found = ids.map((id) => figures.get(id)).filter(Boolean);
      for (const figure of found) {
        figure.closest("details").open = true;
      }
      return found;
    },
    figure(id) {
      return figures.get(id) || null;
    },
    spec(id) {
      return original.get(id) || null;
    },
    /** Redraw every chart (the time zone changed). */
    redraw() {
      for (const c of [...charts, ...(overview ? [overview] : [])]) {
        c.update("none");
      }
    },
    destroy() {
      for (const c of [...charts, ...(overview ? [overview] : [])]) {
        c.destroy();
      }
      charts.length = 0;
    },
  };
}

/**
 * A small trend line of `spec` (a line chart of the timeline) on `canvas`: the sum of its series
 * (its first series when it is not stacked), with `windows` shaded. Plain canvas drawing.
 */
export function drawSparkline(canvas, spec, windows, extent) {
  const ctx = canvas.getContext("2d");
  const { width, height } = canvas;
  ctx.clearRect(0, 0, width, height);
  if (!spec || !extent) {
    return;
  }
  const span = extent[1] - extent[0] || 1;
  const xOf = (ms) => ((ms - extent[0]) / span) * (width - 2) + 1;
  for (const w of windows) {
    const colour = SEVERITY_COLOURS[w.severity] || SEVERITY_COLOURS.info;
    ctx.fillStyle = colour.fill;
    ctx.fillRect(xOf(w.start_ms), 0, Math.max(2, xOf(w.end_ms) - xOf(w.start_ms)), height);
  }
  let values;
  let t;
  if (spec.kind === "heatmap") {
    // The largest row value of each column.
    const cols = spec.v.length ? spec.v[0].length : 0;
    t = Array.from({ length: cols }, (_, c) => spec.x0 + (c + 0.5) * spec.dx);
    values = t.map((_, c) => Math.max(...spec.v.map((row) => row[c] ?? 0)));
  } else {
    t = spec.t || [];
    const series = (spec.series || []).filter((s) => !(spec.stacked && s.label === "id"));
    const used = spec.stacked ? series : series.slice(0, 1);
    values = t.map((_, i) => used.reduce((n, s) => n + (s.v[i] ?? 0), 0));
  }
  const max = Math.max(1e-9, ...values);
  ctx.strokeStyle = "#0072B2";
  ctx.lineWidth = 1.25;
  ctx.beginPath();
  values.forEach((v, i) => {
    const x = xOf(t[i]);
    const y = height - 2 - (v / max) * (height - 4);
    if (i === 0) {
      ctx.moveTo(x, y);
    } else {
      ctx.lineTo(x, y);
    }
  });
  ctx.stroke();
}
