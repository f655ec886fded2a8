// The page structure of the timeline: one collapsible <details> section per source (vmstat, iostat,
// ...) holding a <figure> per chart: caption with its unit and a PNG button, the canvas, and for
// heatmaps a colour legend. DOM only; the charts are drawn on the canvases by the caller.

import { formatValue, heatHeight, hostColour } from "../charts.js";
import { el } from "../dom.js";

/**
 * One section per entry of `sections` ([{id, title}]) that has a chart in `specs`, appended to
 * `container` in that order, all open. Returns a Map section id -> the element that holds its figures.
 */
export function buildSections(container, sections, specs) {
  const bodies = new Map();
  for (const section of sections) {
    if (!specs.some((s) => s.section === section.id)) {
      continue;
    }
    const details = el("details", "chart-section");
    details.id = `section-${section.id}`;
    details.open = true;
    const summary = el("summary", "chart-section__head");
    const count = specs.filter((s) => s.section === section.id).length;
    summary.append(el("span", "chart-section__title", section.title), el("span", "count", String(count)));
    const body = el("div", "chart-section__body");
    details.append(summary, body);
    container.append(details);
    bodies.set(section.id, body);
  }
  return bodies;
}

/**
 * The figure of the chart `spec`, appended to `body`: {figure (id "chart-<spec.id>"), canvas, png}.
 * A time chart's canvas is focusable (the arrow keys move the cursor); a grid's is not.
 */
export function buildFigure(body, spec, hosts = []) {
  const figure = el("figure", `chart chart--${spec.kind || "line"}`);
  figure.id = `chart-${spec.id}`;
  figure.dataset.chartId = spec.id;
  const caption = el("figcaption", "chart__title");
  caption.append(el("span", "chart__name", spec.title || spec.id));
  if (spec.host !== undefined) {
    // One host's panel of a case of several: its name (from the upload: text only) and colour.
    figure.dataset.host = spec.host;
    const dot = el("span", "host-dot");
    dot.style.background = hostColour(hosts.indexOf(spec.host));
    caption.append(" ", el("span", "chart__host", ""));
    caption.lastChild.append(dot, spec.host);
  }
  if (spec.unit) {
    caption.append(" ", el("span", "chart__unit", spec.unit));
  }
  const png = el("button", "button button--link button--small chart__png", "PNG");
  png.type = "button";
  png.setAttribute("aria-label", `Save ${spec.title || spec.id} as a PNG image`);
  caption.append(png);
  const box = el("div", "chart__box");
  if (spec.kind === "heatmap" || spec.kind === "grid") {
    box.style.height = `${heatHeight(spec)}px`; // through the CSSOM: allowed by the CSP
  }
  const canvas = document.createElement("canvas");
  canvas.setAttribute("role", "img");
  canvas.tabIndex = spec.kind === "grid" ? -1 : 0;
  canvas.setAttribute(
    "aria-label",
    spec.kind === "grid"
      ? `${spec.title}: heatmap of ${spec.rows.length} IRQ lines by ${spec.cols.length} CPUs`
      : `${spec.title || spec.id}${spec.host !== undefined ? ` on ${spec.host}` : ""} over time. Arrow keys move the cursor, Enter shows that moment.`,
  );
  box.append(canvas);
  figure.append(caption, box);
  if (spec.kind === "heatmap" || spec.kind === "grid") {
    const legend = el("p", "heat-legend muted small");
    legend.append(
      el("span", "", "0"),
      el("span", "heat-legend__bar"),
      el("span", "", `${formatValue(spec.max, spec.unit)}`),
    );
    figure.append(legend);
  }
  body.append(figure);
  return { figure, canvas, png };
}

/** Is the section holding `figure` open? */
export function sectionIsOpen(figure) {
  return figure.closest("details").open;
}

/** Open the section holding `figure`. */
export function openSectionOf(figure) {
  figure.closest("details").open = true;
}
