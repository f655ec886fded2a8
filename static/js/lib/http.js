// Same-origin HTTP helpers: JSON fetch with the CSRF header, and an upload with progress.
//
// Django's CSRF middleware reads the token from the `X-CSRFToken` header on unsafe methods; the
// token itself comes from the `csrftoken` cookie (CSRF_COOKIE_HTTPONLY must stay False) or, as a
// fallback, from a `csrfmiddlewaretoken` input rendered by `{% csrf_token %}` on the page.

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

/** Error raised for a non-2xx answer or a network failure; `status` is 0 for the latter. */
export class HttpError extends Error {
  constructor(message, status = 0, body = null) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.body = body;
  }
}

/** Value of cookie `name`, or null. */
export function getCookie(name) {
  for (const part of document.cookie ? document.cookie.split(";") : []) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) {
      return decodeURIComponent(rest.join("="));
    }
  }
  return null;
}

/** The CSRF token: `csrftoken` cookie first, then a `{% csrf_token %}` input on the page. */
export function csrfToken() {
  const cookie = getCookie("csrftoken");
  if (cookie) {
    return cookie;
  }
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

/** Human message for an error body `{"message": ..., "extra": {...}}` or a bare status. */
export function errorMessage(status, body, fallback) {
  if (body && typeof body === "object" && typeof body.message === "string" && body.message) {
    return body.message;
  }
  if (body && typeof body === "object" && typeof body.detail === "string" && body.detail) {
    return body.detail; // Django REST framework's shape
  }
  if (status === 0) {
    return fallback || "The server could not be reached.";
  }
  return `${fallback || "Request failed"} (HTTP ${status}).`;
}

/**
 * Fetch `url` and return its decoded JSON body.
 *
 * options.method (default GET), options.body (a FormData, or any value sent as JSON),
 * options.signal (AbortSignal). Throws HttpError on a network failure or a non-2xx answer; the
 * error's `body` is the decoded JSON error body when there is one.
 */
export async function fetchJSON(url, options = {}) {
  const method = (options.method || "GET").toUpperCase();
  const headers = { Accept: "application/json", "X-Requested-With": "XMLHttpRequest" };
  let body;
  if (options.body instanceof FormData) {
    body = options.body;
  } else if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  if (!SAFE_METHODS.has(method)) {
    headers["X-CSRFToken"] = csrfToken();
  }
  let response;
  try {
    response = await fetch(url, {
      method,
      body,
      headers,
      credentials: "same-origin",
      cache: "no-store",
      signal: options.signal,
    });
  } catch (exc) {
    if (exc && exc.name === "AbortError") {
      throw exc;
    }
    throw new HttpError("The server could not be reached.", 0, null);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    throw new HttpError(errorMessage(response.status, data), response.status, data);
  }
  if (text && data === null) {
    throw new HttpError("The server answered with something that is not JSON.", response.status, null);
  }
  return data;
}

/**
 * POST `formData` to `url` with XMLHttpRequest, reporting upload progress.
 *
 * fetch() has no upload progress, hence XHR. onProgress(loadedBytes, totalBytes) is called as
 * bytes leave the browser. Returns {promise, abort}; the promise resolves to {status, body}
 * (body: decoded JSON or null) for any HTTP answer, and rejects with HttpError(status 0) on a
 * network failure or with an Error named "AbortError" when aborted.
 */
export function uploadWithProgress(url, formData, onProgress) {
  const xhr = new XMLHttpRequest();
  const promise = new Promise((resolve, reject) => {
    xhr.open("POST", url);
    xhr.withCredentials = false; // same origin: cookies are sent anyway
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
    xhr.setRequestHeader("X-CSRFToken", csrfToken());
    xhr.upload.addEventListener("progress", (event) => {
      if (onProgress) {
        onProgress(event.loaded, event.lengthComputable ? event.total : null);
      }
    });
    xhr.addEventListener("load", () => {
      let body = null;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        body = null;
      }
      resolve({ status: xhr.status, body });
    });
    xhr.addEventListener("error", () => reject(new HttpError("The upload failed: the server could not be reached.", 0)));
    xhr.addEventListener("abort", () => {
      const err = new Error("Upload cancelled.");
      err.name = "AbortError";
      reject(err);
    });
    xhr.send(formData);
  });
  return { promise, abort: () => xhr.abort() };
}
