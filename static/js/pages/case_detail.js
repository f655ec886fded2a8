// Case page (templates/cases/detail.html).
//
// Config from data-* on #case-page: data-status-url, data-timeline-url, data-moment-url,
// data-series-csv-url, data-status (the status when the page was rendered). Data from json_script
// #case-data (the `case` context dict, for utc_offset_s). Formats every time in the zone chosen
// (server local time, UTC or the viewer's, remembered in localStorage), polls the status while the
// case is not final and reloads when it is, draws the timeline (sections, overview strip, heatmaps,
// detail re-read on zoom), links the findings to it ("Show on charts", sparklines), and fills the
// Moment panel when a chart is clicked (GET moment.json?t=<epoch ms>).
//
// Everything shown in the Moment panel comes from the upload (SQL text, host and user names, raw
// lines): it is put on the page with textContent only.

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
import { drawSparkline } from "../lib/charts.js";
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

function showMessage(el, text, kind = "info") {
  el.textContent = text;
  el.className = `notice notice--${kind}`;
  el.hidden = false;
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

// ---------------------------------------------------------------------------- the Moment panel

// Statements longer than this many characters or lines are clamped, with a button to expand them.
const INFO_CLAMP_CHARS = 160;
const INFO_CLAMP_LINES = 3;
// Raw-line blocks start open when there are at most this many sources (else the list gets long).
const RAW_OPEN_MAX_SOURCES = 4;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined && text !== null) {
    node.textContent = String(text);
  }
  return node;
}

function cell(row, text, className) {
  const td = el("td", className, text === null || text === undefined || text === "" ? "" : text);
  row.append(td);
  return td;
}

function baseName(member) {
  const parts = String(member || "").split("/");
  return parts[parts.length - 1] || member;
}

function lineCell(row, member, lineNo) {
  const td = cell(row, `${baseName(member)}:${lineNo}`, "mono nowrap muted small");
  td.title = `${member}, line ${lineNo}`;
  return td;
}

function plural(n, word) {
  return `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
}

// "0.9 s before", "at the picked time", "1.1 s after": a snapshot time relative to the picked one.
function relative(ms, atMs) {
  const delta = (ms - atMs) / 1000;
  if (Math.abs(delta) < 0.05) {
    return "at the picked time";
  }
  const abs = Math.abs(delta);
  const text = abs >= 10 ? abs.toFixed(0) : abs.toFixed(1);
  return `${text} s ${delta < 0 ? "before" : "after"}`;
}

function infoCell(row, info, cut) {
  const td = cell(row, "", "cell-info");
  if (!info) {
    td.append(el("span", "muted", "NULL"));
    return;
  }
  const text = el("div", "info-text mono", info);
  td.append(text);
  const long = info.length > INFO_CLAMP_CHARS || info.split("\n").length > INFO_CLAMP_LINES;
  if (long) {
    text.classList.add("is-clamped");
    const toggle = el("button", "button button--link button--small info-toggle", "Show all");
    toggle.type = "button";
    toggle.setAttribute("aria-expanded", "false");
    td.append(toggle);
  }
  if (cut) {
    td.append(el("span", "muted small", " (cut at 2,000 characters)"));
  }
}

function part(id) {
  const root = document.getElementById(id);
  const pick = (name) => root.querySelector(`[data-part="${name}"]`);
  return { root, pick };
}

function renderProcesslist(pl, atMs) {
  const { pick } = part("moment-processlist");
  const tbody = pick("content").querySelector("tbody");
  tbody.replaceChildren();
  pick("empty").hidden = Boolean(pl);
  pick("content").hidden = !pl;
  pick("note").hidden = true;
  if (!pl) {
    pick("meta").textContent = "";
    return;
  }
  pick("meta").textContent =
    `snapshot at ${formatEpochMs(pl.ts, zoneOffset(pl.ts), "time-ms")} (${relative(pl.ts, atMs)}): ` +
    `${plural(pl.sessions, "session")}, ${pl.active.toLocaleString("en-US")} active`;
  for (const r of pl.rows) {
    const tr = el("tr", r.active ? "is-active" : "");
    cell(tr, r.id, "num mono");
    cell(tr, r.user, "mono");
    cell(tr, r.host, "mono cell-host");
    cell(tr, r.db, "mono");
    cell(tr, r.command);
    cell(tr, r.time_s, "num");
    cell(tr, r.state);
    infoCell(tr, r.info, r.info_cut);
    if (r.fingerprint && r.info) {
      tr.lastChild.title = `fingerprint: ${r.fingerprint}`;
    }
    lineCell(tr, r.member, r.line_no);
    tbody.append(tr);
  }
  if (pl.omitted > 0) {
    pick("note").textContent =
      `${plural(pl.omitted, "more session")} not listed ` +
      `(the first ${pl.rows.length.toLocaleString("en-US")}, active and longest-running first, are shown).`;
    pick("note").hidden = false;
  }
}

function renderThreads(th, atMs) {
  const { pick } = part("moment-threads");
  const tbody = pick("table").querySelector("tbody");
  tbody.replaceChildren();
  pick("counts").replaceChildren();
  pick("empty").hidden = Boolean(th);
  pick("content").hidden = !th;
  pick("note").hidden = true;
  if (!th) {
    pick("meta").textContent = "";
    return;
  }
  pick("meta").textContent =
    `ps snapshot at ${formatEpochMs(th.ts, zoneOffset(th.ts), "time-ms")} (${relative(th.ts, atMs)}): ` +
    plural(th.total, "thread");
  for (const [state, n] of Object.entries(th.counts)) {
    const li = el("li", `state-count state-count--${state === "D" || state === "R" ? state : "other"}`);
    li.append(
      el("span", "state-count__state mono", state),
      el("span", "state-count__n", n.toLocaleString("en-US")),
    );
    li.title = `${n} thread${n === 1 ? "" : "s"} in state ${state}`;
    pick("counts").append(li);
  }
  pick("none").hidden = th.rows.length > 0;
  pick("table").hidden = th.rows.length === 0;
  for (const r of th.rows) {
    const tr = el("tr", r.state === "D" ? "is-blocked" : "");
    cell(tr, r.tid, "num mono");
    cell(tr, r.pid, "num mono");
    cell(tr, r.user, "mono");
    cell(tr, r.stat || r.state, "mono");
    cell(tr, r.pcpu === null ? "" : r.pcpu.toFixed(1), "num");
    cell(tr, r.comm, "mono");
    cell(tr, r.wchan || (r.wchan === "" ? "-" : ""), "mono");
    lineCell(tr, r.member, r.line_no);
    tbody.append(tr);
  }
  if (th.omitted > 0) {
    pick("note").textContent =
      `${plural(th.omitted, "more thread")} not listed (D, then R, then the busiest first, are shown).`;
    pick("note").hidden = false;
  }
}

function lineRange(start, end) {
  return end > start ? `lines ${start}–${end}` : `line ${start}`;
}

function renderRaw(raw, atMs) {
  const { pick } = part("moment-raw");
  const list = pick("content");
  list.replaceChildren();
  const sources = raw ? raw.sources : [];
  pick("empty").hidden = sources.length > 0;
  pick("empty").textContent = raw
    ? "No source was sampled near this moment."
    : "This case has no index of its raw lines yet: re-analyze it to see them.";
  pick("error").hidden = !(raw && raw.error);
  pick("error").textContent = raw && raw.error ? raw.error : "";
  const omitted = raw ? raw.omitted_sources : 0;
  pick("note").hidden = omitted === 0;
  pick("note").textContent = omitted ? `${plural(omitted, "more source")} sampled near this moment not shown.` : "";
  pick("meta").textContent = sources.length ? plural(sources.length, "source") : "";
  for (const src of sources) {
    const details = el("details", "raw-source");
    details.open = sources.length <= RAW_OPEN_MAX_SOURCES;
    const summary = el("summary", "raw-source__summary");
    const shownEnd = src.line_start + Math.max(src.lines.length, 1) - 1;
    summary.append(
      el("span", "mono raw-source__member", src.member),
      el("span", "badge badge--clock", src.format),
      el("span", "muted", lineRange(src.line_start, src.line_end)),
      el("span", "muted", `${formatEpochMs(src.ts, zoneOffset(src.ts), "time-ms")} (${relative(src.ts, atMs)})`),
    );
    details.append(summary);
    const pre = el("pre", "raw-lines");
    src.lines.forEach((line, i) => {
      const row = el("span", "raw-line");
      row.append(el("span", "raw-line__no", src.line_start + i), el("span", "raw-line__text", line));
      pre.append(row, "\n");
    });
    details.append(pre);
    if (src.lines_cut) {
      details.append(
        el(
          "p",
          "muted small raw-source__cut",
          `Cut after line ${shownEnd}: the sample runs to line ${src.line_end}. Download the bundle for the rest.`,
        ),
      );
    }
    list.append(details);
  }
}

/**
 * The Moment panel: `load(ms)` fetches moment.json?t=ms and renders it; a newer click cancels an
 * older request. Returns {load}.
 */
function momentPanel(url, onClose) {
  const panel = document.getElementById("moment");
  const body = document.getElementById("moment-body");
  const status = document.getElementById("moment-status");
  const time = document.getElementById("moment-time");
  const jump = document.getElementById("moment-jump");
  let controller = null;

  // The panel sits under the charts: when it is off screen, a floating button leads to it.
  const observer =
    "IntersectionObserver" in window
      ? new IntersectionObserver((entries) => {
          if (entries.some((e) => e.isIntersecting)) {
            jump.hidden = true;
          }
        })
      : null;
  if (observer) {
    observer.observe(panel);
  }
  function offerJump() {
    const rect = panel.getBoundingClientRect();
    jump.hidden = rect.top < window.innerHeight && rect.bottom > 0;
  }
  jump.addEventListener("click", () => {
    jump.hidden = true;
    panel.scrollIntoView({ behavior: "smooth", block: "start" });
  });
  document.getElementById("moment-close").addEventListener("click", () => {
    if (controller) {
      controller.abort();
    }
    panel.hidden = true;
    jump.hidden = true;
    onClose();
  });
  // "Show all" / "Show less" on long statements (event delegation over the panel).
  panel.addEventListener("click", (event) => {
    const toggle = event.target.closest("button.info-toggle");
    if (!toggle) {
      return;
    }
    const text = toggle.parentElement.querySelector(".info-text");
    const expanded = text.classList.toggle("is-clamped") === false;
    toggle.textContent = expanded ? "Show less" : "Show all";
    toggle.setAttribute("aria-expanded", String(expanded));
  });

  async function load(ms) {
    if (controller) {
      controller.abort();
    }
    controller = new AbortController();
    const mine = controller;
    panel.hidden = false;
    time.textContent = formatEpochMs(ms, zoneOffset(ms), "full");
    showMessage(status, `Loading the snapshots at ${formatEpochMs(ms, zoneOffset(ms), "time")}…`);
    body.classList.add("is-stale");
    let data;
    try {
      data = await fetchJSON(`${url}?t=${Math.round(ms)}`, { signal: mine.signal });
    } catch (err) {
      if (err && err.name === "AbortError") {
        return;
      }
      showMessage(status, `The moment could not be loaded: ${err.message}`, "error");
      body.classList.remove("is-stale");
      return;
    }
    if (mine !== controller) {
      return;
    }
    status.hidden = true;
    body.classList.remove("is-stale");
    renderProcesslist(data.processlist, data.at);
    renderThreads(data.threads, data.at);
    renderRaw(data.raw, data.at);
    body.hidden = false;
    offerJump();
  }
  return { load };
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
      button.title = "Show the snapshots and raw lines at the start of this finding's window";
      button.append(...td.childNodes);
      td.replaceChildren(button);
    }
  }
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-moment-at]");
    if (button) {
      open(Number(button.dataset.momentAt));
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
  };
  try {
    controller = buildTimeline(container, document.getElementById("overview"), timeline, {
      onRangeChange,
      onPick: (ms) => {
        if (panel) {
          panel.load(ms);
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
  drawSparklines(controller, timeline);
  if (panel) {
    linkEvidenceToMoments((ms) => {
      controller.setPicked(ms);
      panel.load(ms);
      const moment = document.getElementById("moment");
      moment.scrollIntoView({ behavior: "smooth", block: "start" });
      document.getElementById("moment-title").focus({ preventScroll: true });
    });
  }

  // "Show on charts": zoom every chart to the window, open the sections of the finding's charts,
  // scroll to the first of them and mark them for a moment.
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

// The charts a finding points at are its "main" charts: the ones printed.
function markMainCharts(controller) {
  for (const finding of document.querySelectorAll(".finding[data-chart-ids]")) {
    for (const id of finding.dataset.chartIds.split(" ").filter(Boolean)) {
      const figure = controller.figure(id);
      if (figure) {
        figure.classList.add("is-main");
      }
    }
  }
}

function drawSparklines(controller, timeline) {
  for (const canvas of document.querySelectorAll("canvas.sparkline[data-chart-id]")) {
    const finding = canvas.closest(".finding");
    const key = finding ? finding.dataset.findingKey : "";
    const spec = controller.spec(canvas.dataset.chartId);
    if (!spec) {
      canvas.hidden = true;
      continue;
    }
    const windows = (timeline.windows || []).filter((w) => w.key === key);
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
    setupCharts(page.dataset.timelineUrl);
  }
}

main();
