// Case list (templates/cases/list.html).
//
// Formats the <time data-zone> cells, and while any row's status is not final (queued, parsing,
// analyzing) re-fetches this same page (same query string) and swaps in the new table body, so
// that statuses move without a reload. Stops after REFRESH_LIMIT tries or once all are final.

import { formatTimes } from "../lib/timefmt.js";

const REFRESH_MS = 3000;
// 20 minutes of refreshing at most: a case still not final by then needs a look, not a poll.
const REFRESH_LIMIT = 400;
const FINAL_STATUSES = new Set(["ready", "failed"]);

const table = document.getElementById("case-table");
const notice = document.getElementById("case-list-problem");

function pending(root) {
  return [...root.querySelectorAll("tr[data-status]")].some((tr) => !FINAL_STATUSES.has(tr.dataset.status));
}

async function refresh(count) {
  try {
    const response = await fetch(window.location.href, {
      credentials: "same-origin",
      cache: "no-store",
      headers: { Accept: "text/html" },
    });
    if (!response.ok) {
      throw new Error(`HTTP ${response.status}`);
    }
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = doc.querySelector("#case-table tbody");
    const current = table.querySelector("tbody");
    if (fresh && current) {
      formatTimes(fresh, 0);
      current.replaceWith(document.adoptNode(fresh));
    }
    notice.hidden = true;
  } catch (err) {
    notice.textContent = `Could not refresh the statuses (${err.message}); retrying…`;
    notice.hidden = false;
  }
  if (pending(table) && count < REFRESH_LIMIT) {
    window.setTimeout(() => refresh(count + 1), REFRESH_MS);
  }
}

if (table) {
  formatTimes(document, 0);
  if (pending(table)) {
    window.setTimeout(() => refresh(1), REFRESH_MS);
  }
}
