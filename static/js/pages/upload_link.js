// The customer's upload page (/u/<token>/): sends the chosen file with tus-js-client (tus 1.0,
// web/uploads/tus.py) in chunks of data-chunk-bytes, retrying after a broken connection (HEAD for the
// offset, PATCH from there) and resuming a previous attempt of the same file (its fingerprint in
// localStorage); then polls the status of what was sent (status.json) until the case is ready or failed.
const box = document.getElementById("upload-link");
const input = document.getElementById("upload-file");
const drop = document.getElementById("upload-drop");
const bar = document.getElementById("upload-progress");
const barText = document.getElementById("upload-progress-text");
const errorBox = document.getElementById("upload-error");
const FINAL = new Set(["ready", "failed", "refused", "deleted"]);
const LABELS = {
  receiving: "receiving", refused: "refused", queued: "queued", parsing: "parsing",
  analyzing: "analyzing", ready: "ready", failed: "failed", deleted: "deleted",
};

function mib(bytes) {
  return (bytes / 1048576).toFixed(1) + " MiB";
}

function showError(text) {
  errorBox.textContent = text;
  errorBox.hidden = false;
}

async function pollStatus(uploadUrl) {
  const statusBox = document.getElementById("upload-status-box");
  const label = document.getElementById("upload-status");
  statusBox.hidden = false;
  for (;;) {
    let body = null;
    try {
      const response = await fetch(uploadUrl + "status.json", { cache: "no-store", credentials: "omit" });
      if (response.ok) body = await response.json();
    } catch (err) {
      body = null; // offline for a moment: ask again
    }
    if (body) {
      label.textContent = LABELS[body.status] || "unknown";
      label.dataset.status = body.status;
      if (body.status === "refused") showError(body.message || "The bundle was refused.");
      if (FINAL.has(body.status)) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function send(file) {
  const maxBytes = Number(box.dataset.maxBytes);
  errorBox.hidden = true;
  if (file.size > maxBytes) {
    showError(`The file is ${mib(file.size)}; this link takes at most ${mib(maxBytes)}.`);
    return;
  }
  input.disabled = true;
  document.getElementById("upload-progress-box").hidden = false;
  const upload = new window.tus.Upload(file, {
    endpoint: new URL(box.dataset.endpoint, window.location.href).href,
    chunkSize: Number(box.dataset.chunkBytes),
    retryDelays: [0, 1000, 3000, 5000, 10000, 20000, 30000, 60000, 60000, 60000],
    metadata: { filename: file.name },
    removeFingerprintOnSuccess: true,
    onProgress(sent, total) {
      bar.value = total ? Math.floor((sent / total) * 100) : 0;
      barText.textContent = `${mib(sent)} of ${mib(total)} (${bar.value} %)`;
    },
    onError(err) {
      input.disabled = false;
      showError("The upload stopped: " + (err && err.message ? err.message.split("\n")[0] : "unknown error") +
        ". Choose the same file again to go on from where it stopped.");
    },
    onSuccess() {
      bar.value = 100;
      barText.textContent = `${mib(file.size)} sent.`;
      pollStatus(upload.url.endsWith("/") ? upload.url : upload.url + "/");
    },
  });
  upload.findPreviousUploads().then((previous) => {
    if (previous.length) upload.resumeFromPreviousUpload(previous[0]);
    upload.start();
  });
}

input.addEventListener("change", () => {
  if (input.files.length) send(input.files[0]);
});
drop.addEventListener("dragover", (event) => {
  event.preventDefault();
  drop.classList.add("dropzone--over");
});
drop.addEventListener("dragleave", () => drop.classList.remove("dropzone--over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("dropzone--over");
  if (event.dataTransfer.files.length) send(event.dataTransfer.files[0]);
});
