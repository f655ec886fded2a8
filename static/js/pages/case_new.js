// New case page (templates/cases/new.html).
//
// Config from data-* on #upload-form: data-upload-url (POST multipart `title`, `bundle`).
// The upload answers 201 {"id", "url", "status_url"} or 400 {"message", "extra"}. Progress of the
// upload is shown with XMLHttpRequest's upload events; then the status is polled every second
// (queued -> parsing -> analyzing -> ready | failed) and the browser goes to the case page.

import { errorMessage, fetchJSON, uploadWithProgress } from "../lib/http.js";

const STATUS_POLL_MS = 1000;
const STEPS = ["queued", "parsing", "analyzing", "ready"];
// Time left to read "Ready" before the browser moves to the case page.
const NAVIGATE_DELAY_MS = 800;
// Consecutive failed polls after which the page says so (it keeps trying).
const POLL_FAILURES_BEFORE_NOTICE = 3;

const form = document.getElementById("upload-form");
const fileInput = form ? form.querySelector("input[type=file]") : null;
const submit = document.getElementById("upload-submit");
const cancel = document.getElementById("upload-cancel");
const panel = document.getElementById("upload-panel");
const progress = document.getElementById("upload-progress");
const progressText = document.getElementById("upload-progress-text");
const steps = document.getElementById("status-steps");
const statusText = document.getElementById("upload-status");
const errorBox = document.getElementById("upload-error");
const caseLink = document.getElementById("case-link");

function formatBytes(n) {
  if (n === null || n === undefined) {
    return "?";
  }
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i += 1;
  }
  return `${value.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function showError(message, extra) {
  errorBox.replaceChildren();
  const p = document.createElement("p");
  p.textContent = message;
  errorBox.append(p);
  if (extra && typeof extra === "object" && Object.keys(extra).length) {
    const list = document.createElement("ul");
    for (const [key, value] of Object.entries(extra)) {
      const li = document.createElement("li");
      const text = Array.isArray(value) ? value.join(" ") : typeof value === "object" ? JSON.stringify(value) : String(value);
      li.textContent = `${key}: ${text}`;
      list.append(li);
    }
    errorBox.append(list);
  }
  errorBox.hidden = false;
}

// The team uploaded these bytes before (409 with extra.duplicate_of): link to those cases, and tick
// "make a new case anyway" so that submitting again makes one.
function showDuplicate(message, cases) {
  errorBox.replaceChildren();
  const p = document.createElement("p");
  p.textContent = message;
  errorBox.append(p);
  const list = document.createElement("ul");
  for (const c of cases) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = c.url;
    a.textContent = `Open case #${c.id} (${c.title})`;
    li.append(a);
    list.append(li);
  }
  errorBox.append(list);
  const allow = form.querySelector("input[name=allow_duplicate]");
  if (allow) {
    allow.checked = true;
    const hint = document.createElement("p");
    hint.textContent = "Or upload again to make a new case from these bytes anyway.";
    errorBox.append(hint);
  }
  errorBox.hidden = false;
}

function setBusy(busy) {
  submit.disabled = busy;
  for (const el of form.querySelectorAll("input")) {
    el.readOnly = busy;
  }
  if (fileInput) {
    fileInput.disabled = busy;
  }
  cancel.hidden = !busy;
}

// Mark the steps of #status-steps: those before `status` done, `status` current (or failed, when
// the case failed during that step; "ready" counts as done).
function markStep(status, failed = false) {
  const reached = STEPS.indexOf(status);
  for (const li of steps.querySelectorAll("li[data-step]")) {
    const index = STEPS.indexOf(li.dataset.step);
    const done = index < reached || (status === "ready" && index === reached);
    li.classList.toggle("is-done", done);
    li.classList.toggle("is-current", !done && !failed && index === reached);
    li.classList.toggle("is-failed", failed && index === reached);
  }
}

function pollStatus(created) {
  let failures = 0;
  let lastStatus = "queued";
  markStep(lastStatus);

  async function tick() {
    let data;
    try {
      data = await fetchJSON(created.status_url);
      failures = 0;
    } catch (err) {
      failures += 1;
      if (failures >= POLL_FAILURES_BEFORE_NOTICE) {
        statusText.textContent = `Could not read the status (${err.message}); retrying…`;
      }
      window.setTimeout(tick, STATUS_POLL_MS * Math.min(failures, 5));
      return;
    }
    const status = data.status || lastStatus;
    if (status === "failed") {
      markStep(lastStatus, true);
    } else {
      lastStatus = status;
      markStep(status);
    }
    // The detail says what the worker does, or that the case waits for the task queue to come back.
    const label = data.status_label || status;
    statusText.textContent = data.detail ? `${label}: ${data.detail}` : label;
    if (status === "ready") {
      statusText.textContent = "Ready: opening the case…";
      caseLink.hidden = false;
      window.setTimeout(() => window.location.assign(created.url), NAVIGATE_DELAY_MS);
      return;
    }
    if (status === "failed") {
      const reason = data.failure_reason || data.message || "no reason given";
      statusText.textContent = "Failed.";
      showError(`The bundle could not be processed: ${reason}`);
      caseLink.hidden = false;
      submit.disabled = false; // another bundle may be tried
      return;
    }
    window.setTimeout(tick, STATUS_POLL_MS);
  }
  window.setTimeout(tick, STATUS_POLL_MS);
}

async function onSubmit(event) {
  event.preventDefault();
  errorBox.hidden = true;
  if (!fileInput || !fileInput.files.length) {
    showError("Choose a bundle file first.");
    return;
  }
  const data = new FormData(form);
  const total = fileInput.files[0].size;
  panel.hidden = false;
  steps.hidden = true;
  caseLink.hidden = true;
  progress.value = 0;
  progress.max = 100;
  progressText.textContent = `Uploading 0 of ${formatBytes(total)}…`;
  statusText.textContent = "Uploading…";
  setBusy(true);

  const upload = uploadWithProgress(form.dataset.uploadUrl, data, (loaded, size) => {
    const of = size || total;
    const pct = of ? Math.min(100, (100 * loaded) / of) : 0;
    progress.value = pct;
    progressText.textContent = `Uploading ${formatBytes(loaded)} of ${formatBytes(of)} (${pct.toFixed(0)} %)`;
  });
  const onCancel = () => upload.abort();
  cancel.addEventListener("click", onCancel, { once: true });

  let answer;
  try {
    answer = await upload.promise;
  } catch (err) {
    setBusy(false);
    panel.hidden = true;
    showError(err.name === "AbortError" ? "Upload cancelled." : err.message);
    return;
  } finally {
    cancel.removeEventListener("click", onCancel);
  }
  setBusy(false);
  if (answer.status === 409 && answer.body && answer.body.extra && answer.body.extra.duplicate_of) {
    panel.hidden = true;
    showDuplicate(answer.body.message, answer.body.extra.duplicate_of);
    return;
  }
  if (answer.status !== 201 && answer.status !== 200) {
    panel.hidden = true;
    showError(errorMessage(answer.status, answer.body, "The upload was refused"), answer.body && answer.body.extra);
    return;
  }
  const created = answer.body || {};
  if (!created.status_url || !created.url) {
    showError("The server accepted the upload but did not say where the case is.");
    return;
  }
  progress.value = 100;
  progressText.textContent = `Uploaded ${formatBytes(total)}.`;
  submit.disabled = true;
  caseLink.href = created.url;
  steps.hidden = false;
  statusText.textContent = "Queued";
  pollStatus(created);
}

if (form) {
  form.addEventListener("submit", onSubmit);
}
