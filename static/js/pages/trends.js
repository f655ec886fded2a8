// Trends page (templates/trends/trends.html).
//
// Input: the page's JSON (#trends-data, web/trends/views.py):
//   {trends: {since, until, by, team, buckets: [{start, end, cases, ready, failed, open, closed,
//             root_causes: {key: n}, hours_to_ready_p50, hours_to_ready_p90, hours_to_close_p50,
//             hours_to_close_p90}], repeat_customers: [...]},   (the answer of GET /api/trends/)
//    filters: {cases: {}, ready: {status: "ready"}, failed: {...}, open: {state: "open"}, closed: {...}},
//    top_causes: [key...], other: "other" | null}
// Draws three charts with Chart.js (vendored, loaded before this module) in the case page's
// palette; a click on a bar or a point opens the case list filtered the same way (the tables under
// each chart hold the same numbers and links, for keyboards and screen readers).

import { PALETTE, SEVERITY_COLOURS } from "../lib/charts.js";

const data = JSON.parse(document.getElementById("trends-data").textContent);
const buckets = data.trends.buckets;
const labels = buckets.map((b) => b.start);
const message = document.getElementById("trends-message");

const GREEN = "#009E73";
const GREY = "#9aa3ae";
const BLUE = "#0072B2";

function bars(label, values, colour, stack, link) {
  return { label, data: values, backgroundColor: colour, stack, link };
}

/** Opens the case list behind the clicked element: each dataset says how to find its link. */
function onClick(chart) {
  return (event) => {
    const hit = chart().getElementsAtEventForMode(event, "nearest", { intersect: true }, false)[0];
    if (!hit) {
      return;
    }
    const url = chart().data.datasets[hit.datasetIndex].link(hit.index);
    if (url) {
      window.location.assign(url);
    }
  };
}

function draw(id, type, datasets, yTitle, stacked) {
  const canvas = document.querySelector(`#${id} canvas`);
  let chart = null;
  chart = new Chart(canvas, {
    type,
    data: { labels, datasets },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      onClick: onClick(() => chart),
      onHover: (event, active) => {
        event.native.target.style.cursor = active.length ? "pointer" : "default";
      },
      interaction: { mode: "nearest", intersect: true },
      plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
      scales: {
        x: { stacked, ticks: { maxRotation: 0, autoSkip: true } },
        y: { stacked, beginAtZero: true, title: { display: true, text: yTitle } },
      },
    },
  });
  return chart;
}

/** The case list of bucket `i`'s cases narrowed by `filters`: the links of the tables, built alike
 * (web/trends/selectors.py case_list_url). */
function caseList(i, filters) {
  const b = buckets[i];
  const team = data.trends.team === null ? {} : { team: data.trends.team };
  return `/cases/?${new URLSearchParams({ uploaded_from: b.start, uploaded_to: b.end, ...team, ...filters })}`;
}

function linkOf(field) {
  return (i) => caseList(i, data.filters[field]);
}

function casesChart() {
  draw(
    "trend-cases",
    "bar",
    [
      bars("ready", buckets.map((b) => b.ready), GREEN, "status", linkOf("ready")),
      bars("failed", buckets.map((b) => b.failed), SEVERITY_COLOURS.critical.line, "status", linkOf("failed")),
      bars("open", buckets.map((b) => b.open), BLUE, "state", linkOf("open")),
      bars("closed", buckets.map((b) => b.closed), GREY, "state", linkOf("closed")),
    ],
    "cases",
    true,
  );
}

function causesChart() {
  const shown = new Set(data.top_causes);
  const datasets = data.top_causes.map((key, i) =>
    bars(key, buckets.map((b) => b.root_causes[key] || 0), PALETTE[i % PALETTE.length], "causes", (j) => caseList(j, { root_cause: key })),
  );
  if (data.other) {
    const rest = (b) => Object.entries(b.root_causes).filter(([k]) => !shown.has(k));
    datasets.push(
      bars(data.other, buckets.map((b) => rest(b).reduce((n, [, v]) => n + v, 0)), "#c9ced6", "causes", linkOf("cases")),
    );
  }
  draw("trend-causes", "bar", datasets, "cases", true);
}

function line(label, field, colour, dash, link) {
  return {
    label,
    data: buckets.map((b) => b[field]),
    borderColor: colour,
    backgroundColor: colour,
    borderDash: dash,
    spanGaps: true,
    pointRadius: 3,
    link,
  };
}

function hoursChart() {
  draw(
    "trend-hours",
    "line",
    [
      line("ready, median", "hours_to_ready_p50", GREEN, [], linkOf("ready")),
      line("ready, 90th percentile", "hours_to_ready_p90", GREEN, [6, 3], linkOf("ready")),
      line("close, median", "hours_to_close_p50", BLUE, [], linkOf("closed")),
      line("close, 90th percentile", "hours_to_close_p90", BLUE, [6, 3], linkOf("closed")),
    ],
    "hours",
    false,
  );
}

try {
  casesChart();
  causesChart();
  hoursChart();
} catch (err) {
  message.textContent = `The charts could not be drawn (${err.message}); the tables under each hold the numbers.`;
  message.hidden = false;
}
