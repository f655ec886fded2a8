// The moment of the timeline: a cursor line that follows the mouse across every time chart, and the
// moment picked by a click (no drag) or by Enter on a focused chart (the arrow keys move the cursor).
// One shared state for all charts; Chart.js draws both lines through `cursorPlugin`.

import { DRAG_THRESHOLD_PX } from "../charts.js";

// Keyboard: one arrow key press moves the cursor by this fraction of the visible range.
const KEY_STEP = 1 / 60;
// Colour of the picked-moment marker, distinct from the cursor.
const PICKED_COLOUR = "rgba(0, 114, 178, 0.95)";
const CURSOR_COLOUR = "rgba(29, 35, 43, 0.55)";

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
 * The shared moment state of the time charts `timeCharts` (an array filled as they are built):
 *   {cursor, picked (epoch ms or null), requestRedraw(source), pick(ms)}.
 * requestRedraw(source) redraws every chart but `source` once, at the next animation frame;
 * pick(ms, chart) sets the cursor and the picked moment, redraws, and calls onPick(ms, spec) when
 * given (`spec`: the chart spec picked on, null when none: a host's panel names its host).
 */
export function createMoment(timeCharts, onPick) {
  let redrawPending = false;
  const moment = {
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
    pick(ms, chart = null) {
      moment.cursor = ms;
      moment.picked = ms;
      moment.requestRedraw(null);
      if (onPick) {
        onPick(ms, chart ? chart.$casebookSpec : null);
      }
    },
  };
  return moment;
}

/**
 * A Chart.js plugin drawing a vertical cursor line at `moment.cursor` (epoch ms) and setting it
 * from mouse moves, and a marker at the picked moment `moment.picked` when there is one.
 */
export function cursorPlugin(moment) {
  return {
    id: "casebookCursor",
    afterEvent(chart, args) {
      const { event } = args;
      let next = moment.cursor;
      if (event.type === "mousemove" && args.inChartArea) {
        next = chart.scales.x.getValueForPixel(event.x);
      } else if (event.type === "mouseout" || (event.type === "mousemove" && !args.inChartArea)) {
        next = null;
      }
      if (next !== moment.cursor) {
        moment.cursor = next;
        moment.requestRedraw(chart);
      }
    },
    afterDatasetsDraw(chart) {
      if (moment.picked !== null) {
        drawVertical(chart, moment.picked, PICKED_COLOUR, 2);
      }
      if (moment.cursor !== null) {
        drawVertical(chart, moment.cursor, CURSOR_COLOUR, 1);
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

/**
 * Let the time chart `chart` (drawn on `canvas`) pick moments: a click inside its plot area picks
 * the time under the pointer; ArrowLeft/ArrowRight move the cursor by KEY_STEP of the visible
 * range, Enter or Space pick the cursor (the middle of the range when there is none).
 */
export function listenForPicks(chart, canvas, moment) {
  listenForClicks(canvas, (event) => {
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const area = chart.chartArea;
    if (x < area.left || x > area.right || y < area.top || y > area.bottom) {
      return; // on an axis or the legend, not on the time line
    }
    moment.pick(Math.round(chart.scales.x.getValueForPixel(x)), chart);
  });
  canvas.addEventListener("keydown", (event) => {
    const { min, max } = chart.scales.x;
    const step = (max - min) * KEY_STEP;
    if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
      const from = moment.cursor ?? (min + max) / 2;
      moment.cursor = Math.min(max, Math.max(min, from + (event.key === "ArrowLeft" ? -step : step)));
      moment.requestRedraw(null);
      event.preventDefault();
    } else if (event.key === "Enter" || event.key === " ") {
      moment.pick(Math.round(moment.cursor ?? (min + max) / 2), chart);
      event.preventDefault();
    }
  });
}
