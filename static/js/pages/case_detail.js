// Case page (templates/cases/detail.html).
//
// Config from data-* on #case-page: data-status-url, data-timeline-url, data-moment-url,
// data-series-csv-url, data-status (the status when the page was rendered). Data from json_script
// #case-data (the `case` context dict, for utc_offset_s). Formats every time in the zone chosen
// (server local time, UTC or the viewer's, remembered in localStorage), polls the status while the
// case is not final and reloads when it is, draws the timeline (sections, overview strip, heatmaps,
// detail re-read on zoom), links the findings to it ("Show on charts", sparklines), and fills the
// Moment panel when a chart is clicked (GET moment.json?t=<epoch ms>), and the Queries table of a
// slow log (#queries, data-queries-url), which follows the charts' zoom.
//
// Everything shown in the Moment panel comes from the upload (SQL text, host and user names, raw
// lines): it is put on the page with textContent only.

import { el, showMessage } from "../lib/dom.js";
import { fetchJSON } from "../lib/http.js";
import {
  chosenZoneLabel,
  formatDuration,
  formatEpochMs,
  formatRange,
  formatTimes,
  parseIso,
  setZone,
  zoneMode,
  zoneOffset,
} from "../lib/timefmt.js";
import { drawSparkline, hostColour } from "../lib/charts.js";
import { momentPanel } from "../lib/moment_panel.js";
import { queriesPanel } from "../lib/queries_panel.js";
import { buildTimeline } from "../lib/timeline/index.js";

const FINAL_STATUSES = new Set(["ready", "failed"]);
const STATUS_POLL_MS = 2000;
// After this many consecutive failed polls, say so on the page (and keep trying, more slowly).
const POLL_FAILURES_BEFORE_NOTICE = 3;

const page = document.getElementById("case-page");

function readJSON(id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : null;
}

// localStorage key of the zone chosen (server, utc, viewer): the choice holds across cases.
const ZONE_KEY = "casebook.zone";
// Everything that must be redrawn when the zone changes (the timeline's charts).
const zoneListeners = [];

function storedZone() {
  try {
    return window.localStorage.getItem(ZONE_KEY) || "server";
  } catch {
    return "server"; // storage disabled
  }
}

function renderTimes() {
  formatTimes(document, zoneOffset);
  for (const el of document.querySelectorAll("[data-zone-label]")) {
    el.textContent = chosenZoneLabel();
  }
}

function setupTimes(offsetS) {
  setZone(storedZone(), offsetS);
  renderTimes();
  const select = document.getElementById("zone-select");
  if (!select) {
    return;
  }
  select.value = zoneMode();
  select.closest(".zone-switch").hidden = false;
  select.addEventListener("change", () => {
    setZone(select.value, offsetS);
    try {
      window.localStorage.setItem(ZONE_KEY, zoneMode());
    } catch {
      // storage disabled: the choice holds for this page only
    }
    renderTimes();
    for (const listener of zoneListeners) {
      listener();
    }
  });
}

// The processing panel (#case-processing): progress, what the worker does, when it last reported,
// and whether it stopped reporting. `data` is the status JSON (selectors.case_status).
function showProcessing(data) {
  const progress = document.getElementById("case-progress");
  if (!progress) {
    return;
  }
  if (Number.isFinite(data.progress)) {
    progress.value = data.progress;
    progress.textContent = `${data.progress} %`;
    document.getElementById("case-progress-text").textContent = `${data.progress} %`;
  }
  const detail = document.getElementById("case-status-detail");
  if (data.detail) {
    detail.textContent = data.detail;
  } else {
    detail.textContent = data.status === "queued" ? "Waiting for a worker to pick it up." : "Working on it.";
  }
  const report = document.getElementById("case-last-report");
  const at = parseIso(data.last_report_at);
  report.hidden = !Number.isFinite(at);
  if (Number.isFinite(at)) {
    const time = document.getElementById("case-last-report-time");
    time.setAttribute("datetime", data.last_report_at);
    time.textContent = formatEpochMs(at, 0, "time");
    const age = Math.max(0, Date.now() - at);
    document.getElementById("case-last-report-age").textContent = `(${formatDuration(age) || "0 s"} ago)`;
  }
  document.getElementById("case-stalled").hidden = !data.stalled;
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
      showProcessing(data);
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


// Each evidence row's "Raw lines" cell opens the moment at the start of its finding's first window.
function linkEvidenceToMoments(open) {
  for (const finding of document.querySelectorAll(".finding")) {
    const first = finding.querySelector("[data-window-start]");
    const start = first ? parseIso(first.dataset.windowStart) : NaN;
    if (!Number.isFinite(start)) {
      continue;
    }
    for (const td of finding.querySelectorAll(".table--evidence tbody td:last-child")) {
      if (!td.textContent.trim()) {
        continue;
      }
      const button = el("button", "button button--link button--small mono evidence-moment");
      button.type = "button";
      button.dataset.momentAt = String(start);
      if (finding.dataset.findingHost !== undefined) {
        button.dataset.momentHost = finding.dataset.findingHost;
      }
      button.title = "Show the snapshots and raw lines at the start of this finding's window";
      button.append(...td.childNodes);
      td.replaceChildren(button);
    }
  }
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-moment-at]");
    if (button) {
      open(Number(button.dataset.momentAt), button.dataset.momentHost ?? null);
    }
  });
}

// A link to a finding (verdict, related keys) opens it.
function linkFindings() {
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-finding-link]");
    if (!link) {
      return;
    }
    const target = document.getElementById(link.getAttribute("href").slice(1));
    if (target && target.tagName === "DETAILS") {
      target.open = true;
    }
  });
  if (window.location.hash.startsWith("#finding-")) {
    const target = document.getElementById(window.location.hash.slice(1));
    if (target && target.tagName === "DETAILS") {
      target.open = true;
    }
  }
}

// The findings open for printing (the PDF is the verdict, the findings with their evidence, and
// their main charts), and close again afterwards as they were.
function setupPrint() {
  let closed = [];
  window.addEventListener("beforeprint", () => {
    closed = [...document.querySelectorAll("details.finding:not([open])")];
    for (const d of closed) {
      d.open = true;
    }
  });
  window.addEventListener("afterprint", () => {
    for (const d of closed) {
      d.open = false;
    }
    closed = [];
  });
}

function rangeText(min, max) {
  return `Showing ${formatRange(min, max, zoneOffset(min))} (${formatDuration(max - min)})`;
}

// `queries`: the Queries panel (lib/queries_panel.js) that follows the zoom, or null.
async function setupCharts(url, queries) {
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
  let controller = null;
  const panel = page.dataset.momentUrl
    ? momentPanel(page.dataset.momentUrl, () => controller && controller.setPicked(null))
    : null;
  const rangeLabel = document.getElementById("charts-range");
  const csvLink = document.getElementById("export-series-csv");
  const loadDetail = detailLoader(url, () => controller);
  const onRangeChange = (min, max) => {
    rangeLabel.textContent = rangeText(min, max);
    updateCsvLink(csvLink, controller, min, max);
    loadDetail(min, max);
    if (queries && controller) {
      queries.follow(min, max, min <= controller.extent[0] && max >= controller.extent[1]);
    }
  };
  try {
    controller = buildTimeline(container, document.getElementById("overview"), timeline, {
      onRangeChange,
      onPick: (ms, spec) => {
        if (panel) {
          panel.load(ms, spec && spec.host !== undefined ? spec.host : null);
        }
      },
    });
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
  document.getElementById("charts-help").hidden = false;
  rangeLabel.textContent = rangeText(...controller.extent);
  updateCsvLink(csvLink, controller, ...controller.extent);
  container.addEventListener("toggle", () => updateCsvLink(csvLink, controller, ...controller.range()), true);
  resetButton.addEventListener("click", () => controller.reset());
  zoneListeners.push(() => {
    controller.redraw();
    rangeLabel.textContent = rangeText(...controller.range());
  });
  markMainCharts(controller);
  setupHostFilter(controller);
  if (panel) {
    panel.setHosts(controller.hosts);
  }
  drawSparklines(controller, timeline);
  if (panel) {
    linkEvidenceToMoments((ms, host) => {
      controller.setPicked(ms);
      panel.load(ms, host);
      const moment = document.getElementById("moment");
      moment.scrollIntoView({ behavior: "smooth", block: "start" });
      document.getElementById("moment-title").focus({ preventScroll: true });
    });
  }

  linkShowOnCharts(controller);
}

// "Show on charts": zoom every chart to the window, open the sections of the finding's charts,
// scroll to the first of them and mark them for a moment.
function linkShowOnCharts(controller) {
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-window-start]");
    if (!button) {
      return;
    }
    const start = parseIso(button.dataset.windowStart);
    const end = parseIso(button.dataset.windowEnd);
    if (!Number.isFinite(start) || !Number.isFinite(end)) {
      return;
    }
    controller.zoomTo(start, end);
    const finding = button.closest(".finding");
    const ids = (finding ? finding.dataset.chartIds : "").split(" ").filter(Boolean);
    const figures = controller.openSectionsOf(ids);
    const target = figures[0] || document.getElementById("timeline");
    target.scrollIntoView({ behavior: "smooth", block: "start" });
    for (const figure of figures) {
      figure.classList.add("is-highlighted");
      window.setTimeout(() => figure.classList.remove("is-highlighted"), 2500);
    }
    const canvas = target.querySelector("canvas");
    if (canvas) {
      canvas.focus({ preventScroll: true });
    }
  });
  for (const button of document.querySelectorAll("button[data-window-start]")) {
    button.hidden = false;
  }
}

// The series CSV link follows the visible range and the open sections.
function updateCsvLink(link, controller, min, max) {
  if (!link || !controller) {
    return;
  }
  const base = page.dataset.seriesCsvUrl;
  const ids = controller.openChartIds().join(",");
  link.href = `${base}?start=${Math.floor(min)}&end=${Math.ceil(max)}&charts=${encodeURIComponent(ids)}`;
}

// The charts a finding points at are its "main" charts: the ones printed (every host's panel).
function markMainCharts(controller) {
  for (const finding of document.querySelectorAll(".finding[data-chart-ids]")) {
    for (const id of finding.dataset.chartIds.split(" ").filter(Boolean)) {
      for (const figure of controller.figuresOf(id)) {
        figure.classList.add("is-main");
      }
    }
  }
}

// A case of several hosts: a chip per host (its colour, its name as text) that shows or hides its
// series and panels on every chart.
function setupHostFilter(controller) {
  const box = document.getElementById("host-filter");
  const chips = document.getElementById("host-filter-chips");
  if (!box || controller.hosts.length < 2) {
    return;
  }
  const shown = new Set(controller.hosts);
  controller.hosts.forEach((name, i) => {
    const label = el("label", "host-chip");
    const input = document.createElement("input");
    input.type = "checkbox";
    input.checked = true;
    input.value = String(i);
    const dot = el("span", "host-dot");
    dot.style.background = hostColour(i);
    label.append(input, dot, el("span", "mono", name));
    input.addEventListener("change", () => {
      if (input.checked) {
        shown.add(name);
      } else {
        shown.delete(name);
      }
      controller.showHosts(shown);
    });
    chips.append(label);
  });
  box.hidden = false;
}

function drawSparklines(controller, timeline) {
  for (const canvas of document.querySelectorAll("canvas.sparkline[data-chart-id]")) {
    const finding = canvas.closest(".finding");
    const key = finding ? finding.dataset.findingKey : "";
    const spec = controller.spec(canvas.dataset.chartId, finding ? finding.dataset.findingHost : undefined);
    if (!spec) {
      canvas.hidden = true;
      continue;
    }
    const host = finding ? finding.dataset.findingHost : undefined;
    const windows = (timeline.windows || []).filter((w) => w.key === key && (host === undefined || w.host === host));
    drawSparkline(canvas, spec, windows, controller.extent);
    canvas.setAttribute("aria-label", `Trend of "${spec.title}" over the whole capture, this finding's windows shaded`);
  }
}

// Re-read a zoomed range in detail (the first answer is downsampled over the whole capture), a
// moment after the last zoom or pan, for the charts of the open sections; an answer that arrives
// after a newer request is dropped. Back at the whole capture, the first answer is shown again.
const DETAIL_DELAY_MS = 350;
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
      const mine = ++sequence;
      if (max - min >= 0.95 * (last - first)) {
        controller.restore();
        return;
      }
      const ids = controller.openChartIds().join(",");
      const target = `${url}?start=${Math.floor(min)}&end=${Math.ceil(max)}&charts=${encodeURIComponent(ids)}`;
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

function main() {
  if (!page) {
    return;
  }
  const caseData = readJSON("case-data") || {};
  const offsetS = typeof caseData.utc_offset_s === "number" ? caseData.utc_offset_s : null;
  setupTimes(offsetS);
  linkFindings();
  setupPrint();

  const status = page.dataset.status;
  if (page.dataset.statusUrl && !FINAL_STATUSES.has(status)) {
    showProcessing({ ...caseData, detail: caseData.status_detail });
    pollStatus(page.dataset.statusUrl, status);
  }
  if (status === "ready") {
    const section = document.getElementById("queries");
    const queries = section ? queriesPanel(section) : null;
    if (queries) {
      queries.load();
      zoneListeners.push(() => queries.redraw());
    }
    setupCharts(page.dataset.timelineUrl, queries);
  }
}

main();
