// The shared time range of the timeline: every time chart shows the same x range. A zoom or pan on
// one chart (Chart.js zoom plugin: drag, ctrl+wheel, pinch; shift+drag pans), a drag on the overview
// strip, "Show on charts" or Reset apply it to all.

import { DRAG_THRESHOLD_PX, MIN_RANGE_MS } from "../charts.js";

/**
 * The range of the time charts `timeCharts` (an array filled as they are built) over `extent`
 * ([min, max] epoch ms): {range(), apply(min, max, source), syncFrom(chart), reset(), zoomTo(start, end)}.
 * apply() sets every chart but `source` to [min, max] (epoch ms), then calls onChange(min, max).
 */
export function createZoom(timeCharts, extent, onChange) {
  let syncing = false;
  let current = extent ? [...extent] : null;

  function apply(min, max, source) {
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
    onChange(min, max);
  }

  return {
    /** The visible range [min, max] epoch ms (null without an extent). */
    range() {
      return current ? [...current] : null;
    },
    apply,
    /** After a zoom or pan on `source` (Chart.js zoom plugin callbacks): the others follow it. */
    syncFrom(source) {
      if (syncing) {
        return;
      }
      const { min, max } = source.scales.x;
      apply(min, max, source);
    },
    reset() {
      apply(extent[0], extent[1], null);
    },
    /** Show a window with a quarter of its length as context on each side (at least 5 s). */
    zoomTo(startMs, endMs) {
      const pad = Math.max((endMs - startMs) / 4, 5 * MIN_RANGE_MS);
      apply(Math.max(extent[0], startMs - pad), Math.min(extent[1], endMs + pad), null);
    },
  };
}

/** The Chart.js zoom plugin options of a time chart: x only, within `extent`, reported to `zoom`. */
export function zoomOptions(extent, zoom) {
  return {
    limits: { x: { min: extent[0], max: extent[1], minRange: MIN_RANGE_MS } },
    zoom: {
      mode: "x",
      drag: { enabled: true, threshold: DRAG_THRESHOLD_PX, backgroundColor: "rgba(0, 114, 178, 0.12)" },
      wheel: { enabled: true, modifierKey: "ctrl" },
      pinch: { enabled: true },
      onZoomComplete: ({ chart: c }) => zoom.syncFrom(c),
    },
    pan: {
      enabled: true,
      mode: "x",
      modifierKey: "shift",
      onPanComplete: ({ chart: c }) => zoom.syncFrom(c),
    },
  };
}
