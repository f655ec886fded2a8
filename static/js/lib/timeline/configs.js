// The Chart.js configurations of the timeline's charts: a time chart (lines, or a heatmap over
// time) on the shared time axis, and a grid (IRQ lines by CPU, no time axis). Also how new data
// (a zoomed range read in detail) replaces a chart's.

import {
  annotationsFor,
  formatValue,
  heatDataset,
  lineDatasets,
  points,
  timeScale,
  whiteBackground,
  yAxisFit,
} from "../charts.js";
import { formatEpochMs, zoneOffset } from "../timefmt.js";
import { cursorPlugin } from "./moment.js";
import { zoomOptions } from "./zoom.js";

/**
 * A time chart of `spec` (kind "line" or "heatmap") on `canvas`, over `extent` ([min, max] epoch
 * ms) with the finding `windows` shaded; the cursor and picked moment of `moment`; zooms and pans
 * reported to `zoom` (zoom.js). `ChartCtor`: the vendored Chart.js global.
 */
export function timeChart(ChartCtor, canvas, spec, { extent, windows, moment, zoom, hosts = [] }) {
  const heat = spec.kind === "heatmap";
  const unit = spec.unit || "";
  return new ChartCtor(canvas, {
    type: heat ? "matrix" : "line",
    data: { datasets: heat ? [heatDataset(spec)] : lineDatasets(spec, hosts) },
    plugins: [cursorPlugin(moment), whiteBackground],
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
        zoom: zoomOptions(extent, zoom),
      },
    },
  });
}

/** A grid chart of `spec` (kind "grid": rows by cols, no time axis) on `canvas`. */
export function gridChart(ChartCtor, canvas, spec) {
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

/**
 * Replace the data of the time chart `chart` with that of `spec` (same chart id): a heatmap takes
 * the new columns; a line chart's series are matched by label (a series absent from `spec` empties).
 */
export function setData(chart, spec) {
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
