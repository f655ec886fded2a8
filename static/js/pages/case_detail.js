// Case page (templates/cases/detail.html).
//
// Config from data-* on #case-page: data-status-url, data-timeline-url, data-status (the status
// when the page was rendered). Data from json_script #case-data (the `case` context dict, for
// utc_offset_s). Formats every <time data-zone> in the server's local time, polls the status
// while the case is not final and reloads when it is, and renders the timeline charts.

import { fetchJSON } from "../lib/http.js";
import { formatTimes, zoneLabel, parseIso } from "../lib/timefmt.js";
import { buildCharts } from "../lib/charts.js";

const FINAL_STATUSES = new Set(["ready", "failed"]);
const STATUS_POLL_MS = 2000;
// After this many consecutive failed polls, say so on the page (and keep trying, more slowly).
const POLL_FAILURES_BEFORE_NOTICE = 3;

const page = document.getElementById("case-page");

function readJSON(id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : null;
}

function showMessage(el, text, kind = "info") {
  el.textContent = text;
  el.className = `notice notice--${kind}`;
  el.hidden = false;
}

function setupTimes(offsetS) {
  formatTimes(document, offsetS);
  for (const el of document.querySelectorAll("[data-zone-label]")) {
    el.textContent = zoneLabel(offsetS);
  }
}

function pollStatus(url, initial) {
  const label = document.getElementById("case-status-label");
  const badge = document.getElementById("case-status-badge");
  const problem = document.getElementById("case-status-problem");
  let failures = 0;

  async function tick() {
    let delay = STATUS_POLL_MS;
    try {
      const data = await fetchJSON(url);
      failures = 0;
      problem.hidden = true;
      const status = data.status || initial;
      if (badge) {
        badge.textContent = data.status_label || status;
        badge.className = `badge badge--status badge--${status}`;
      }
      if (label && data.status_label) {
        label.textContent = data.status_label;
      }
      if (status !== initial && FINAL_STATUSES.has(status)) {
        window.location.reload();
        return;
      }
    } catch (err) {
      failures += 1;
      delay = STATUS_POLL_MS * Math.min(failures, 10);
      if (failures >= POLL_FAILURES_BEFORE_NOTICE) {
        showMessage(problem, `Could not read the case status: ${err.message} Retrying…`, "error");
      }
    }
    window.setTimeout(tick, delay);
  }
  window.setTimeout(tick, STATUS_POLL_MS);
}

async function setupCharts(url) {
  const container = document.getElementById("charts");
  const message = document.getElementById("charts-message");
  const toolbar = document.getElementById("charts-toolbar");
  const resetButton = document.getElementById("reset-zoom");
  if (!container || !url) {
    return;
  }
  showMessage(message, "Loading charts…");
  let timeline;
  try {
    timeline = await fetchJSON(url);
  } catch (err) {
    showMessage(message, `The charts could not be loaded: ${err.message}`, "error");
    return;
  }
  const zone = document.getElementById("charts-zone");
  if (zone) {
    zone.textContent = zoneLabel(timeline.utc_offset_s ?? null);
  }
  let controller;
  try {
    controller = buildCharts(container, timeline, { onRangeChange: detailLoader(url, () => controller) });
  } catch (err) {
    showMessage(message, `The charts could not be drawn: ${err.message}`, "error");
    return;
  }
  if (!controller.charts.length) {
    showMessage(message, "No chart: no time series were parsed for this case.", "info");
    return;
  }
  message.hidden = true;
  toolbar.hidden = false;
  resetButton.addEventListener("click", () => controller.reset());
  drawFindingCharts(timeline);

  // "Show on charts" buttons of the finding windows (event delegation over the findings list).
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-window-start]");
    if (!button) {
      return;
    }
    const start = parseIso(button.dataset.windowStart);
    const end = parseIso(button.dataset.windowEnd);
    if (Number.isFinite(start) && Number.isFinite(end)) {
      controller.zoomTo(start, end);
      document.getElementById("timeline").scrollIntoView({ behavior: "smooth", block: "start" });
    }
  });
  for (const button of document.querySelectorAll("button[data-window-start]")) {
    button.hidden = false;
  }
}

// Re-read a zoomed range in detail (the first answer is downsampled over the whole capture), a
// moment after the last zoom or pan; an answer that arrives after a newer request is dropped.
const DETAIL_DELAY_MS = 400;
function detailLoader(url, getController) {
  let timer = null;
  let sequence = 0;
  return (min, max) => {
    window.clearTimeout(timer);
    timer = window.setTimeout(async () => {
      const controller = getController();
      if (!controller) {
        return;
      }
      const [first, last] = controller.extent;
      const whole = max - min >= 0.95 * (last - first);
      const target = whole ? url : `${url}?start=${Math.floor(min)}&end=${Math.ceil(max)}`;
      const mine = ++sequence;
      try {
        const detail = await fetchJSON(target);
        if (mine === sequence) {
          controller.replaceData(detail);
        }
      } catch (err) {
        const message = document.getElementById("charts-message");
        showMessage(message, `Detail for the zoomed range could not be loaded: ${err.message}`, "error");
      }
    }, DETAIL_DELAY_MS);
  };
}

// Each finding card shows the charts its evidence points at, shaded with its own windows only.
function drawFindingCharts(timeline) {
  for (const holder of document.querySelectorAll(".finding__charts[data-chart-ids]")) {
    const ids = holder.dataset.chartIds.split(" ").filter(Boolean);
    const key = holder.dataset.findingKey;
    const own = {
      utc_offset_s: timeline.utc_offset_s,
      ncpu: timeline.ncpu,
      charts: ids.map((id) => (timeline.charts || []).find((c) => c.id === id)).filter(Boolean),
      windows: (timeline.windows || []).filter((w) => w.key === key),
    };
    if (own.charts.length) {
      try {
        buildCharts(holder, own, { idPrefix: `finding-${key}-chart-`, compact: true });
      } catch (err) {
        holder.textContent = `The evidence charts could not be drawn: ${err.message}`;
      }
    }
  }
}

function main() {
  if (!page) {
    return;
  }
  const caseData = readJSON("case-data") || {};
  const offsetS = typeof caseData.utc_offset_s === "number" ? caseData.utc_offset_s : null;
  setupTimes(offsetS);

  const status = page.dataset.status;
  if (page.dataset.statusUrl && !FINAL_STATUSES.has(status)) {
    pollStatus(page.dataset.statusUrl, status);
  }
  if (status === "ready") {
    setupCharts(page.dataset.timelineUrl);
  }
}

main();
