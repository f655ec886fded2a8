// Compare two cases (templates/cases/compare.html).
//
// Draws one Chart.js line chart per chosen metric, both cases overlaid on a linear axis of seconds
// since each capture's start. The data is the page's json_script #compare-metrics-data (the same
// "metrics" list as compare.json): [{name, a: {points: [[s, v]...], median, p95}, b: {...}}].

const Chart = window.Chart;
const root = document.getElementById("compare-page");
const holder = document.getElementById("compare-charts");
const problem = document.getElementById("compare-problem");
const COLORS = { a: "#5b6b7d", b: "#c2410c" };

function dataset(label, side, points) {
  return {
    label,
    data: points.map(([x, y]) => ({ x, y })),
    borderColor: COLORS[side],
    backgroundColor: COLORS[side],
    borderWidth: 1.5,
    pointRadius: 0,
    spanGaps: false,
  };
}

function drawMetric(metric, ids) {
  const figure = document.createElement("figure");
  figure.className = "chart";
  const title = document.createElement("figcaption");
  title.className = "chart__title";
  title.textContent = metric.name;
  const box = document.createElement("div");
  box.className = "chart__box";
  const canvas = document.createElement("canvas");
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", `${metric.name}: case #${ids.a} and case #${ids.b}, seconds since each capture's start`);
  box.append(canvas);
  figure.append(title, box);
  holder.append(figure);
  new Chart(canvas, {
    type: "line",
    data: {
      datasets: [dataset(`#${ids.a} (before)`, "a", metric.a.points), dataset(`#${ids.b} (after)`, "b", metric.b.points)],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      parsing: false,
      interaction: { mode: "nearest", axis: "x", intersect: false },
      scales: {
        x: { type: "linear", title: { display: true, text: "seconds since the capture's start" } },
        y: { beginAtZero: true },
      },
      plugins: { legend: { position: "bottom" } },
    },
  });
}

if (root && holder) {
  try {
    if (!Chart) {
      throw new Error("the chart library did not load");
    }
    const metrics = JSON.parse(document.getElementById("compare-metrics-data").textContent);
    const heads = [...document.querySelectorAll("#compare-findings-title a")].map((a) => a.textContent.replace("#", ""));
    const ids = { a: heads[0] || "a", b: heads[1] || "b" };
    for (const metric of metrics) {
      drawMetric(metric, ids);
    }
  } catch (err) {
    problem.textContent = `The charts could not be drawn (${err.message}).`;
    problem.hidden = false;
  }
}
