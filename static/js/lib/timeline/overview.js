// The overview strip above the charts: the whole capture's activity (CPU busy, else the first line
// chart) with the finding windows, and a brush showing the range the charts below show. A drag
// across the strip sets that range; the strip itself never zooms.

import { DRAG_THRESHOLD_PX, MIN_RANGE_MS, annotationsFor, points, timeScale, whiteBackground, yAxisFit } from "../charts.js";
import { el } from "../dom.js";

/** What the strip draws: CPU busy (100 - idle) when there is vmstat, else the first line chart. */
function activity(specs) {
  // A case of several hosts: the first host's panel (its name in the label).
  const cpu = specs.find((s) => s.id === "cpu" || s.chart === "cpu");
  if (cpu) {
    const idle = (cpu.series || []).find((s) => s.label === "id");
    if (idle) {
      const label = cpu.host !== undefined ? `CPU busy % of ${cpu.host}` : "CPU busy %";
      return { label, t: cpu.t, v: idle.v.map((v) => (v === null ? null : 100 - v)) };
    }
  }
  const line = specs.find((s) => (s.kind || "line") === "line");
  return line ? { label: line.series[0].label, t: line.t, v: line.series[0].v } : null;
}

/**
 * Draw the overview strip inside `host` (unhidden) for the chart `specs` over `extent` ([min, max]
 * epoch ms), with the finding `windows`. A drag across it calls onBrush(min, max) (epoch ms).
 * Returns {chart, showBrush(min, max)}, or null when there is nothing to draw. `ChartCtor`: the
 * vendored Chart.js global.
 */
export function buildOverview(ChartCtor, host, specs, extent, windows, onBrush) {
  const strip = activity(specs);
  if (!strip || !extent) {
    return null;
  }
  host.hidden = false;
  const label = el("p", "overview__label muted small", `Overview: ${strip.label}, whole capture. Drag across it to zoom every chart.`);
  const box = el("div", "overview__box");
  const canvas = document.createElement("canvas");
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", `Overview of the whole capture (${strip.label}); drag to choose the range shown below`);
  box.append(canvas);
  host.append(label, box);
  const annotations = annotationsFor({ kind: "line" }, windows);
  annotations.brush = brushBox(extent);
  const chart = new ChartCtor(canvas, {
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
        zoom: brushZoom(extent, onBrush),
      },
    },
  });
  return {
    chart,
    /** Show the brush over [min, max] (hidden when that is the whole capture). */
    showBrush(min, max) {
      const whole = min <= extent[0] && max >= extent[1];
      const brush = chart.options.plugins.annotation.annotations.brush;
      brush.display = !whole;
      brush.xMin = min;
      brush.xMax = max;
      chart.update("none");
    },
  };
}

/** The brush: a box over the range every chart shows, hidden while that is the whole capture. */
function brushBox(extent) {
  return {
    type: "box",
    display: false,
    xMin: extent[0],
    xMax: extent[1],
    backgroundColor: "rgba(0, 114, 178, 0.15)",
    borderColor: "rgba(0, 114, 178, 0.9)",
    borderWidth: 1.5,
    drawTime: "afterDatasetsDraw",
  };
}

/**
 * The strip's zoom options: a drag across it is handed to `onBrush(min, max)` and the strip goes
 * back to the whole capture (the dragged range becomes the brush and the range of every chart).
 */
function brushZoom(extent, onBrush) {
  let resetting = false;
  return {
    limits: { x: { min: extent[0], max: extent[1], minRange: MIN_RANGE_MS } },
    zoom: {
      mode: "x",
      drag: { enabled: true, threshold: DRAG_THRESHOLD_PX, backgroundColor: "rgba(0, 114, 178, 0.2)" },
      wheel: { enabled: false },
      onZoomComplete: ({ chart: c }) => {
        if (resetting) {
          return; // resetZoom reports a zoom too
        }
        const { min, max } = c.scales.x;
        resetting = true;
        try {
          c.resetZoom("none");
        } finally {
          resetting = false;
        }
        onBrush(min, max);
      },
    },
  };
}
