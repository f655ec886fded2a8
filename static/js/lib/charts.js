// Chart builder for the timeline JSON of a case.
//
// Input (GET urls.timeline):
//   {utc_offset_s: int|null, ncpu: int|null,
//    charts: [{id, title, unit, stacked: bool, kind: "line"|"bar"|"step",
//              series: [{label, data: [[epoch_ms, value|null], ...]}],
//              hlines: [{label, value}]}],
//    windows: [{key, severity: "critical"|"warning"|"info", start_ms, end_ms}]}
//
// Needs the vendored UMD globals loaded first by plain <script> tags: Chart (chart.js 4),
// the date-fns adapter, chartjs-plugin-annotation 3 and chartjs-plugin-zoom 2 (+ Hammer); the
// plugins register themselves with Chart. Every chart shares one x range (min/max of all data and
// windows); zoom and pan on one chart are applied to all, and a cursor line follows the mouse
// across all of them. A click (mouse down and up without moving more than the drag threshold)
// picks that moment: a marker stays on every chart and options.onPick(epochMs) is called. Axis
// labels and tooltips show the server's local time (utc_offset_s).

import { formatEpochMs, formatOffset } from "./timefmt.js";

/** Severity colours, kept in step with the --critical/--warning/--info tokens in casebook.css. */
export const SEVERITY_COLOURS = {
  critical: { line: "rgb(179, 38, 30)", fill: "rgba(179, 38, 30, 0.13)" },
  warning: { line: "rgb(196, 122, 0)", fill: "rgba(224, 161, 0, 0.16)" },
  info: { line: "rgb(31, 95, 174)", fill: "rgba(31, 95, 174, 0.10)" },
};

// Fixed colours for the series names that recur (vmstat/mpstat CPU split, run queue), so that
// "wa" is the same colour on every case; anything else takes the palette in order.
const NAMED_COLOURS = {
  us: "#2f6fb7",
  usr: "#2f6fb7",
  sy: "#d0573a",
  sys: "#d0573a",
  wa: "#e0a100",
  iowait: "#e0a100",
  st: "#8a4fb3",
  steal: "#8a4fb3",
  id: "#c9ced6",
  idle: "#c9ced6",
  r: "#2f6fb7",
  b: "#b3261e",
  R: "#2f6fb7",
  D: "#b3261e",
  S: "#9aa3ae",
};
const PALETTE = [
  "#2f6fb7", "#d0573a", "#2e9a6b", "#8a4fb3", "#e0a100", "#17a2b8",
  "#c2185b", "#6d4c41", "#5c6bc0", "#7cb342", "#f06292", "#455a64",
];

// Pixels of drag before a drag-to-zoom counts (a click must not zoom into nothing).
const DRAG_THRESHOLD_PX = 5;
// Smallest zoom range: one second, the finest sampling interval the collectors use.
const MIN_RANGE_MS = 1000;
// Fixed width of every y axis, so that the plot areas (and so the time axes) of all charts line
// up vertically and the shared cursor crosses them at the same x.
const Y_AXIS_WIDTH_PX = 64;
const MINUTE_MS = 60 * 1000;
const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;

function hexToRgba(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

function seriesColour(label, index) {
  return NAMED_COLOURS[label] || PALETTE[index % PALETTE.length];
}

/** Overall [min, max] epoch ms over all series points and windows; null when there is none. */
export function timeExtent(timeline) {
  let min = Infinity;
  let max = -Infinity;
  for (const chart of timeline.charts || []) {
    for (const series of chart.series || []) {
      const data = series.data || [];
      if (data.length) {
        // Series are sorted by time: the first and last points bound them.
        min = Math.min(min, data[0][0]);
        max = Math.max(max, data[data.length - 1][0]);
      }
    }
  }
  for (const w of timeline.windows || []) {
    min = Math.min(min, w.start_ms);
    max = Math.max(max, w.end_ms);
  }
  if (!Number.isFinite(min) || !Number.isFinite(max)) {
    return null;
  }
  if (min === max) {
    return [min - MIN_RANGE_MS * 30, max + MIN_RANGE_MS * 30];
  }
  return [min, max];
}

function tickFormatter(offsetS) {
  return function format(value) {
    const scale = this; // Chart.js calls the tick callback with the scale as `this`
    const span = scale.max - scale.min;
    if (span > 2 * DAY_MS) {
      return formatEpochMs(value, offsetS, "short");
    }
    if (span > 20 * MINUTE_MS) {
      return formatEpochMs(value, offsetS, "minute");
    }
    return formatEpochMs(value, offsetS, "time");
  };
}

function formatValue(value, unit) {
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
  mergedWindows(windows).forEach((w, i) => {
    const colour = SEVERITY_COLOURS[w.severity] || SEVERITY_COLOURS.info;
    annotations[`window${i}`] = {
      type: "box",
      xMin: w.start_ms,
      xMax: w.end_ms,
      backgroundColor: colour.fill,
      borderWidth: 0,
      // Behind the lines, except on stacked areas whose fill would hide the window entirely.
      drawTime: spec.stacked ? "afterDatasetsDraw" : "beforeDatasetsDraw",
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

function datasetsFor(spec) {
  const stacked = Boolean(spec.stacked);
  const kind = spec.kind || "line";
  return (spec.series || []).map((series, i) => {
    const colour = seriesColour(series.label, i);
    const data = (series.data || []).map(([x, y]) => ({ x, y: y === null ? null : Number(y) }));
    if (kind === "bar") {
      return { type: "bar", label: series.label, data, backgroundColor: hexToRgba(colour, 0.7), borderWidth: 0 };
    }
    return {
      type: "line",
      label: series.label,
      data,
      borderColor: colour,
      backgroundColor: stacked ? hexToRgba(colour, 0.55) : hexToRgba(colour, 0.15),
      fill: stacked ? (i === 0 ? "origin" : "-1") : false,
      stepped: kind === "step" ? "before" : false,
      borderWidth: stacked ? 0.75 : 1.25,
      pointRadius: 0,
      pointHitRadius: 4,
      tension: 0,
      spanGaps: false,
    };
  });
}

// Colour of the picked-moment marker (the accent colour of casebook.css), distinct from the cursor.
const PICKED_COLOUR = "rgba(31, 95, 174, 0.9)";

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

/**
 * A plugin drawing a vertical cursor line at the shared `state.cursor` (epoch ms) and setting it
 * from mouse moves, so that hovering one chart shows the same instant on all of them; and a
 * marker at the picked moment `state.picked` (epoch ms) when there is one.
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

/**
 * Call `onClick(event)` for a click on `canvas` whose pointer did not move more than
 * DRAG_THRESHOLD_PX between down and up (a longer move is the zoom plugin's drag-to-zoom or a pan).
 */
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

/**
 * Build one Chart.js chart per `timeline.charts` entry inside `container` (in the given order).
 *
 * Returns a controller {charts, extent, reset(), zoomTo(startMs, endMs), destroy()}; `charts` is
 * empty when the timeline has no chart (the caller shows the message). Throws Error when the
 * vendored Chart.js global is missing.
 */
// options.idPrefix: prefix of each figure's id (default "chart-"), so a finding's own copy of a
// chart does not repeat the id of the timeline's; options.compact: shorter charts;
// options.onRangeChange(minMs, maxMs): called after every zoom, pan or reset (to re-read detail);
// options.onPick(epochMs): called when a click (no drag) picks a moment on one of the charts.
export function buildCharts(container, timeline, options = {}) {
  const idPrefix = options.idPrefix ?? "chart-";
  const Chart = globalThis.Chart;
  if (!Chart) {
    throw new Error("Chart.js did not load (static/vendor/chart.js-*/chart.umd.min.js).");
  }
  const offsetS = timeline.utc_offset_s ?? null;
  const specs = (timeline.charts || []).filter((c) => (c.series || []).some((s) => (s.data || []).length));
  const extent = timeExtent({ charts: specs, windows: timeline.windows });
  const windows = timeline.windows || [];
  const charts = [];
  let syncing = false;

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
        for (const c of charts) {
          if (c !== source) {
            c.draw();
          }
        }
      });
    },
  };

  function rangeChanged(min, max) {
    if (options.onRangeChange) {
      options.onRangeChange(min, max);
    }
  }

  function syncFrom(source) {
    if (syncing) {
      return;
    }
    syncing = true;
    try {
      const { min, max } = source.scales.x;
      for (const c of charts) {
        if (c !== source) {
          c.zoomScale("x", { min, max }, "none");
        }
      }
      rangeChanged(min, max);
    } finally {
      syncing = false;
    }
  }

  for (const spec of specs) {
    const figure = document.createElement("figure");
    figure.className = options.compact ? "chart chart--compact" : "chart";
    figure.id = `${idPrefix}${spec.id}`;
    const caption = document.createElement("figcaption");
    caption.className = "chart__title";
    caption.textContent = spec.title || spec.id;
    if (spec.unit) {
      const unit = document.createElement("span");
      unit.className = "chart__unit";
      unit.textContent = spec.unit;
      caption.append(" ", unit);
    }
    const box = document.createElement("div");
    box.className = "chart__box";
    const canvas = document.createElement("canvas");
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", `${spec.title || spec.id} over time`);
    box.append(canvas);
    figure.append(caption, box);
    container.append(figure);

    const unit = spec.unit || "";
    const chart = new Chart(canvas, {
      type: spec.kind === "bar" ? "bar" : "line",
      data: { datasets: datasetsFor(spec) },
      plugins: [cursorPlugin(state)],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        normalized: true,
        interaction: { mode: "index", intersect: false, axis: "x" },
        scales: {
          x: {
            type: "time",
            time: { minUnit: "second" },
            min: extent[0],
            max: extent[1],
            ticks: { callback: tickFormatter(offsetS), maxRotation: 0, autoSkipPadding: 16, font: { size: 11 } },
            grid: { color: "rgba(0, 0, 0, 0.05)" },
          },
          y: {
            stacked: Boolean(spec.stacked),
            beginAtZero: true,
            // A stacked percentage split (us+sy+wa+st+id) sums to 100; rounding must not push the
            // axis to 120.
            max: spec.stacked && spec.unit === "%" ? 100 : undefined,
            afterFit: (scale) => {
              scale.width = Y_AXIS_WIDTH_PX;
            },
            title: { display: Boolean(unit), text: unit, font: { size: 11 } },
            ticks: { font: { size: 11 } },
            grid: { color: "rgba(0, 0, 0, 0.06)" },
          },
        },
        plugins: {
          decimation: { enabled: false }, // the server already bounds points per series
          legend: {
            position: "top",
            align: "end",
            labels: { boxWidth: 10, boxHeight: 10, font: { size: 11 } },
          },
          tooltip: {
            animation: false,
            callbacks: {
              title: (items) => (items.length ? formatEpochMs(items[0].parsed.x, offsetS) : ""),
              label: (item) => `${item.dataset.label}: ${formatValue(item.parsed.y, unit)}`,
            },
          },
          annotation: { annotations: annotationsFor(spec, windows) },
          zoom: {
            limits: { x: { min: extent[0], max: extent[1], minRange: MIN_RANGE_MS } },
            zoom: {
              mode: "x",
              drag: { enabled: true, threshold: DRAG_THRESHOLD_PX, backgroundColor: "rgba(31, 95, 174, 0.12)" },
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
    chart.$casebookId = spec.id;
    charts.push(chart);
    listenForClicks(canvas, (event) => {
      const rect = canvas.getBoundingClientRect();
      const x = event.clientX - rect.left;
      const y = event.clientY - rect.top;
      const area = chart.chartArea;
      if (x < area.left || x > area.right || y < area.top || y > area.bottom) {
        return; // on an axis or the legend, not on the time line
      }
      const ms = Math.round(chart.scales.x.getValueForPixel(x));
      state.cursor = ms;
      state.picked = ms;
      state.requestRedraw(null);
      if (options.onPick) {
        options.onPick(ms);
      }
    });
  }

  return {
    charts,
    extent,
    offsetLabel: formatOffset(offsetS),
    /** The picked moment (epoch ms) or null. */
    get picked() {
      return state.picked;
    },
    // Show `ms` (epoch ms, or null to clear) as the picked moment on every chart, without calling
    // onPick (the caller already knows).
    setPicked(ms) {
      state.picked = Number.isFinite(ms) ? ms : null;
      state.requestRedraw(null);
    },
    reset() {
      syncing = true;
      try {
        for (const c of charts) {
          c.resetZoom("none");
        }
      } finally {
        syncing = false;
      }
      rangeChanged(extent[0], extent[1]);
    },
    // New data for the same charts (a zoomed range read in detail): datasets matched by chart id
    // and series label; the zoom stays where it is.
    replaceData(next) {
      for (const spec of next.charts || []) {
        const chart = charts.find((c) => c.$casebookId === spec.id);
        if (!chart) {
          continue;
        }
        for (const dataset of chart.data.datasets) {
          const series = (spec.series || []).find((s) => s.label === dataset.label);
          dataset.data = series ? series.data.map(([x, y]) => ({ x, y: y === null ? null : Number(y) })) : [];
        }
        chart.update("none");
      }
    },
    zoomTo(startMs, endMs) {
      if (!charts.length) {
        return;
      }
      // Show the window with a quarter of its length as context on each side.
      const pad = Math.max((endMs - startMs) / 4, 30 * MIN_RANGE_MS);
      const min = Math.max(extent[0], startMs - pad);
      const max = Math.min(extent[1], endMs + pad);
      syncing = true;
      try {
        for (const c of charts) {
          c.zoomScale("x", { min, max }, "none");
        }
      } finally {
        syncing = false;
      }
      rangeChanged(min, max);
    },
    destroy() {
      for (const c of charts) {
        c.destroy();
      }
      charts.length = 0;
    },
  };
}
