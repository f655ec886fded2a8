// The charts of a case page and what they share; the input of its timeline:
//
// Input (GET urls.timeline, web/timeline/charts.py, version 2):
//   {version: 2, utc_offset_s, ncpu, extent: [start_ms, end_ms] | null, range: [lo, hi] | null,
//    sections: [{id, title}],
//    charts: [
//      {id, section, title, unit, stacked, kind: "line", t: [epoch_ms...],
//       series: [{label, v: [value|null...]}], hlines: [{label, value}]},
//      {id, section, title, unit, kind: "heatmap", rows: [label...], x0: epoch_ms, dx: ms,
//       v: [[value|null per column] per row], max},
//      {id, section, title, unit, kind: "grid", rows: [label...], cols: [label...], v: [[...]], max}],
//    windows: [{key, severity, title, start_ms, end_ms}],
//    hosts: [name...]}
//
// A case of several hosts (`hosts` lists them, first host first; empty for one host, whose JSON is
// as above): a line chart of one metric carries one series per host, each series with its `host`
// (colour by host, dash by label), and has `chart` (its id) and `hosts`; a stacked chart, a heatmap,
// or any chart of more than four hosts is drawn as small multiples: one spec per host, id
// "<chart>~<host index>", with `chart` and `host`. Windows then have `host` ("" across hosts) and
// `hosts`.
//
// This module holds what the charts of the case page share (colours, datasets, finding windows,
// time axis, value format) and the findings' sparklines; the timeline built from that JSON (sections,
// zoom, overview strip, picked moment) is in ./timeline/ (buildTimeline in timeline/index.js).

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
// One colour per host, in host order (the page's .host-dot--N classes use the same).
export const HOST_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C7B00"];
// The series of one host on an overlaid chart are told apart by their dash.
const HOST_DASHES = [[], [6, 3], [2, 3], [8, 3, 2, 3], [1, 2]];
export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#8C7B00", "#7f7f7f"];
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
export const DRAG_THRESHOLD_PX = 5;
// Smallest zoom range: one second, the finest sampling interval the collectors use.
export const MIN_RANGE_MS = 1000;
// Fixed width of every y axis, so that the plot areas (and so the time axes) of all charts line up.
const Y_AXIS_WIDTH_PX = 64;
const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 3600 * 1000;

function hexToRgba(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

function seriesColour(label, index) {
  return NAMED_COLOURS[label] || PALETTE[index % PALETTE.length];
}

/** The colour of the host at `index` among the case's hosts. */
export function hostColour(index) {
  return HOST_COLOURS[Math.max(0, index) % HOST_COLOURS.length];
}

/** The finding windows drawn on `spec`: on a host's panel, that host's and those across it. */
export function windowsFor(spec, windows) {
  if (!spec.host) {
    return windows;
  }
  return windows.filter((w) => !("host" in w) || w.host === spec.host || (w.hosts || []).includes(spec.host));
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

export function annotationsFor(spec, windows) {
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

export function points(t, v) {
  const out = new Array(t.length);
  for (let i = 0; i < t.length; i += 1) {
    out[i] = { x: t[i], y: v[i] === null || v[i] === undefined ? null : Number(v[i]) };
  }
  return out;
}

export function lineDatasets(spec, hosts = []) {
  const stacked = Boolean(spec.stacked);
  const perHost = new Map();
  return (spec.series || []).map((series, i) => {
    let colour = seriesColour(series.label, i);
    let dash = [];
    if (series.host !== undefined) {
      const k = perHost.get(series.host) || 0;
      perHost.set(series.host, k + 1);
      colour = hostColour(hosts.indexOf(series.host));
      dash = HOST_DASHES[k % HOST_DASHES.length];
    }
    return {
      type: "line",
      label: series.label,
      host: series.host,
      borderDash: dash,
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

export function heatDataset(spec) {
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

/** White canvas background, so that an exported PNG is not transparent. */
export const whiteBackground = {
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

/** Save `chart` as a PNG file named after `id` (a download; nothing leaves the browser). */
export function downloadPng(chart, id) {
  const link = document.createElement("a");
  link.href = chart.toBase64Image("image/png", 1);
  link.download = `${id}.png`;
  document.body.append(link);
  link.click();
  link.remove();
}

export function heatHeight(spec) {
  const rows = (spec.rows || []).length;
  return Math.min(360, Math.max(110, rows * (rows > 32 ? 4 : 14) + 50));
}

export function timeScale(extent) {
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

export function yAxisFit(scale) {
  scale.width = Y_AXIS_WIDTH_PX;
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
