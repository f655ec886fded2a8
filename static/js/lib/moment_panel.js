// The Moment panel of the case page (templates/cases/detail.html, #moment): the processlist and
// thread snapshots nearest to a picked instant and the raw lines of every source sampled then
// (GET moment.json?t=<epoch ms>, with &host=<index> for one host of a case of several, chosen in
// #moment-host). Everything shown comes from the upload (SQL text, host and user names, raw lines):
// it is put on the page with textContent only.

import { el, showMessage } from "./dom.js";
import { fetchJSON } from "./http.js";
import { formatEpochMs, zoneOffset } from "./timefmt.js";

// Statements longer than this many characters or lines are clamped, with a button to expand them.
const INFO_CLAMP_CHARS = 160;
const INFO_CLAMP_LINES = 3;
// Raw-line blocks start open when there are at most this many sources (else the list gets long).
const RAW_OPEN_MAX_SOURCES = 4;

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
export function momentPanel(url, onClose) {
  const panel = document.getElementById("moment");
  const body = document.getElementById("moment-body");
  const status = document.getElementById("moment-status");
  const time = document.getElementById("moment-time");
  const jump = document.getElementById("moment-jump");
  const hostSelect = document.getElementById("moment-host");
  let controller = null;
  let hosts = [];
  let lastMs = null;

  wireControls(panel, jump, () => {
    if (controller) {
      controller.abort();
    }
    panel.hidden = true;
    jump.hidden = true;
    onClose();
  });

  // A case of several hosts: the panel shows one host's moment, chosen here (or by the panel of
  // the chart clicked).
  function setHosts(names) {
    hosts = names || [];
    if (!hostSelect || hosts.length < 2) {
      return;
    }
    hostSelect.replaceChildren(...hosts.map((name, i) => {
      const option = el("option", "", name);
      option.value = String(i);
      return option;
    }));
    hostSelect.closest("label").hidden = false;
    hostSelect.addEventListener("change", () => {
      if (lastMs !== null) {
        load(lastMs);
      }
    });
  }

  async function load(ms, host = null) {
    if (controller) {
      controller.abort();
    }
    lastMs = ms;
    if (hostSelect && host !== null && hosts.includes(host)) {
      hostSelect.value = String(hosts.indexOf(host));
    }
    const hostQuery = hosts.length > 1 && hostSelect ? `&host=${encodeURIComponent(hostSelect.value)}` : "";
    controller = new AbortController();
    const mine = controller;
    panel.hidden = false;
    time.textContent = formatEpochMs(ms, zoneOffset(ms), "full");
    showMessage(status, `Loading the snapshots at ${formatEpochMs(ms, zoneOffset(ms), "time")}…`);
    body.classList.add("is-stale");
    let data;
    try {
      data = await fetchJSON(`${url}?t=${Math.round(ms)}${hostQuery}`, { signal: mine.signal });
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
    offerJump(panel, jump);
  }
  return { load, setHosts };
}

/**
 * The panel's own controls: the floating button that leads to it while it is off screen, its close
 * button (`close`), and "Show all" / "Show less" on long statements (event delegation over the panel).
 */
function wireControls(panel, jump, close) {
  if ("IntersectionObserver" in window) {
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        jump.hidden = true;
      }
    }).observe(panel);
  }
  jump.addEventListener("click", () => {
    jump.hidden = true;
    panel.scrollIntoView({ behavior: "smooth", block: "start" });
  });
  document.getElementById("moment-close").addEventListener("click", close);
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
}

/** The panel sits under the charts: when it is off screen, the floating button leads to it. */
function offerJump(panel, jump) {
  const rect = panel.getBoundingClientRect();
  jump.hidden = rect.top < window.innerHeight && rect.bottom > 0;
}
