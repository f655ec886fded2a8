// The Queries section of the case page (templates/cases/detail.html, #queries): the slow log's
// classes of statements, most total query time first, from queries.json (selectors.case_queries;
// a share link's own queries.json), each with a sparkline of its query time over the range shown.
// It follows the charts' zoom: `follow(min, max, whole)` reads the classes of that range again
// (GET queries.json?start=<epoch ms>&end=<epoch ms>), a moment after the last zoom or pan; an
// answer that arrives after a newer request is dropped. Statements, schemas and host names come
// from the upload: they are put on the page with textContent only.

import { drawSparkline } from "./charts.js";
import { el, showMessage } from "./dom.js";
import { fetchJSON } from "./http.js";
import { formatDuration, formatEpochMs, formatRange, parseIso, zoneOffset } from "./timefmt.js";

// Wait this long after the last zoom or pan before reading the range (as the charts' detail does).
const RELOAD_DELAY_MS = 350;
// A sparkline's size in CSS pixels (drawn at the screen's pixel ratio).
const SPARK_WIDTH = 120;
const SPARK_HEIGHT = 28;

function seconds(value) {
  if (value === null || value === undefined) {
    return "–";
  }
  if (value === 0) {
    return "0";
  }
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 1 : abs >= 1 ? 3 : 6;
  return value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: abs >= 1 ? 1 : 0 });
}

function count(value) {
  return value === null || value === undefined ? "–" : Math.round(value).toLocaleString("en-US");
}

function when(iso) {
  const ms = parseIso(iso);
  return Number.isFinite(ms) ? formatEpochMs(ms, zoneOffset(ms), "datetime") : "–";
}

function fact(list, term, value, className) {
  if (value === null || value === undefined || value === "") {
    return;
  }
  const row = el("div");
  row.append(el("dt", "", term), el("dd", className, value));
  list.append(row);
}

// The class cell: its fingerprint, opening on its checksum, where it was logged and its example.
function classCell(q) {
  const td = el("td", "queries__class");
  const details = el("details");
  const summary = el("summary", "mono queries__fingerprint", q.fingerprint);
  summary.title = q.fingerprint;
  details.append(summary);
  const facts = el("dl", "queries__facts");
  fact(facts, "Checksum", q.checksum, "mono");
  fact(facts, "Host", q.host, "mono");
  const ex = q.example || {};
  fact(facts, "Logged in", ex.line ? `${q.member}, line ${ex.line}` : q.member, "mono");
  fact(facts, "Schema", ex.schema, "mono");
  if (ex.statement) {
    const took = ex.query_time_s !== null && ex.query_time_s !== undefined ? `, ${seconds(ex.query_time_s)} s` : "";
    fact(facts, "Example", `the longest (whole log)${took}${ex.ts ? `, at ${when(ex.ts)}` : ""}`);
  }
  for (const [name, value] of Object.entries(q.extras || {})) {
    fact(facts, name.replaceAll("_", " "), count(value));
  }
  details.append(facts);
  if (ex.statement) {
    details.append(el("pre", "queries__example mono", ex.statement));
  }
  td.append(details);
  return td;
}

function sparkCell(q, data) {
  const td = el("td", "queries__spark");
  const spark = data.spark || {};
  const start = parseIso(spark.start);
  const end = parseIso(spark.end);
  const values = q.spark || [];
  if (!values.length || !Number.isFinite(start) || !Number.isFinite(end)) {
    return td;
  }
  const canvas = document.createElement("canvas");
  const ratio = window.devicePixelRatio || 1;
  canvas.className = "sparkline sparkline--query";
  canvas.width = Math.round(SPARK_WIDTH * ratio);
  canvas.height = Math.round(SPARK_HEIGHT * ratio);
  canvas.setAttribute("role", "img");
  const step = (end - start) / values.length;
  const t = values.map((_, i) => start + (i + 0.5) * step);
  drawSparkline(canvas, { t, series: [{ v: values }] }, [], [start, end]);
  const peak = Math.max(...values);
  canvas.setAttribute(
    "aria-label",
    `Query time of this class in ${values.length} steps of ${formatDuration(step)} over the range; at most ${seconds(peak)} s in a step`,
  );
  td.append(canvas);
  return td;
}

function row(q, data) {
  const tr = el("tr");
  tr.dataset.checksum = q.checksum || "";
  const qt = q.query_time_s || {};
  const lt = q.lock_time_s || {};
  tr.append(classCell(q), sparkCell(q, data));
  const cells = [
    count(q.count),
    q.share_pct === null || q.share_pct === undefined ? "–" : `${q.share_pct.toFixed(1)} %`,
    seconds(qt.sum),
    seconds(qt.avg),
    seconds(qt.p95),
    seconds(qt.max),
    seconds(lt.sum),
    seconds(lt.avg),
    seconds(lt.max),
    count((q.rows_sent || {}).sum),
    count((q.rows_examined || {}).sum),
  ];
  for (const text of cells) {
    tr.append(el("td", "num nowrap", text));
  }
  const seen = el("td", "nowrap queries__seen");
  seen.append(el("span", "", when(q.first_seen)), el("br"), el("span", "muted", when(q.last_seen)));
  tr.append(seen);
  return tr;
}

/**
 * The Queries panel of `section` (#queries, data-queries-url): {load(), follow(min, max, whole), redraw()}.
 * load(): the whole log; follow(): the range min..max (epoch ms) shown by the charts, or the whole
 * log when `whole`; redraw(): the last answer again (the time zone changed).
 */
export function queriesPanel(section) {
  const url = section.dataset.queriesUrl;
  const message = section.querySelector("#queries-message");
  const wrap = section.querySelector("#queries-wrap");
  const body = section.querySelector("#queries-table tbody");
  const note = section.querySelector("#queries-note");
  const rangeLabel = section.querySelector("#queries-range");
  const p95Head = section.querySelector("#queries-p95-head");
  const countLabel = section.querySelector("#queries-count");
  let sequence = 0;
  let timer = null;
  let last = null;

  function render(data) {
    last = data;
    const items = data.queries || [];
    body.replaceChildren(...items.map((q) => row(q, data)));
    p95Head.textContent = data.whole_log ? "p95" : "p95 (whole log)";
    const start = parseIso(data.start);
    const end = parseIso(data.end);
    const classes = `${count(data.classes)} class${data.classes === 1 ? "" : "es"}, ${seconds(data.query_time_s)} s of query time`;
    rangeLabel.textContent = data.whole_log
      ? `Whole slow log: ${classes}`
      : `${formatRange(start, end, zoneOffset(start))} (${formatDuration(end - start)}): ${classes}`;
    section.dataset.classes = String(data.classes);
    countLabel.textContent = count(data.classes);
    if (!items.length) {
      wrap.hidden = true;
      showMessage(message, data.whole_log ? "The slow log has no class." : "No statement of the slow log in this range.");
      note.hidden = true;
      return;
    }
    message.hidden = true;
    wrap.hidden = false;
    note.hidden = items.length >= data.classes;
    note.textContent = `The ${items.length} classes with the most query time of ${count(data.classes)} are shown.`;
  }

  async function load(min, max) {
    const mine = ++sequence;
    const target = min === null ? url : `${url}?start=${Math.floor(min)}&end=${Math.ceil(max)}`;
    section.setAttribute("aria-busy", "true");
    try {
      const data = await fetchJSON(target);
      if (mine === sequence) {
        render(data);
      }
    } catch (err) {
      if (mine === sequence) {
        showMessage(message, `The queries could not be loaded: ${err.message}`, "error");
      }
    } finally {
      if (mine === sequence) {
        section.removeAttribute("aria-busy");
      }
    }
  }

  return {
    load: () => load(null, null),
    follow(min, max, whole) {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => (whole ? load(null, null) : load(min, max)), RELOAD_DELAY_MS);
    },
    redraw() {
      if (last) {
        render(last);
      }
    },
  };
}
