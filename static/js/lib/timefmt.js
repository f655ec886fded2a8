// Time formatting in the *server's* local time, in UTC or in the viewer's zone (setZone).
//
// The server sends instants as epoch milliseconds (timeline JSON) or ISO 8601 strings (page
// context) plus the captured host's UTC offset in seconds (`utc_offset_s`, east of UTC positive,
// null when unknown). Everything is formatted by shifting the instant by that offset and reading
// the UTC fields, so the viewer's own time zone never leaks into the page. With an unknown offset
// the times are shown in UTC and labelled so.

// The zone the page shows capture times in: "server" (the captured host's offset, the default),
// "utc", or "viewer" (the browser's own zone, daylight saving included). See setZone/zoneOffset.
const zone = { mode: "server", serverOffsetS: null };
const ZONE_MODES = new Set(["server", "utc", "viewer"]);

/** Choose the zone of capture times: mode "server" | "utc" | "viewer"; serverOffsetS as sent. */
export function setZone(mode, serverOffsetS) {
  zone.mode = ZONE_MODES.has(mode) ? mode : "server";
  zone.serverOffsetS = typeof serverOffsetS === "number" && Number.isFinite(serverOffsetS) ? serverOffsetS : null;
}

/** The zone mode in force ("server", "utc" or "viewer"). */
export function zoneMode() {
  return zone.mode;
}

/** Offset in seconds east of UTC of the chosen zone at instant `ms` (null: the server's is unknown). */
export function zoneOffset(ms) {
  if (zone.mode === "utc") {
    return 0;
  }
  if (zone.mode === "viewer") {
    return -new Date(Number.isFinite(ms) ? ms : Date.now()).getTimezoneOffset() * 60;
  }
  return zone.serverOffsetS;
}

/** Sentence naming the zone chosen, e.g. "server local time (UTC+02:00)", "UTC", "your time (Europe/Paris, UTC+01:00)". */
export function chosenZoneLabel() {
  if (zone.mode === "utc") {
    return "UTC";
  }
  if (zone.mode === "viewer") {
    let name = "";
    try {
      name = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
    } catch {
      name = "";
    }
    const off = formatOffset(zoneOffset(Date.now()));
    return name ? `your time (${name}, ${off})` : `your time (${off})`;
  }
  return zoneLabel(zone.serverOffsetS);
}

const pad = (n, width = 2) => String(Math.trunc(Math.abs(n))).padStart(width, "0");

/** Is `offsetS` a usable offset (a finite number of seconds)? */
export function hasOffset(offsetS) {
  return typeof offsetS === "number" && Number.isFinite(offsetS);
}

/** "UTC+02:00", "UTC-05:30", "UTC" (offset 0 or unknown). */
export function formatOffset(offsetS) {
  if (!hasOffset(offsetS) || offsetS === 0) {
    return "UTC";
  }
  const sign = offsetS < 0 ? "-" : "+";
  const minutes = Math.round(Math.abs(offsetS) / 60);
  return `UTC${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** Sentence naming the zone the page shows, e.g. "server local time (UTC+02:00)". */
export function zoneLabel(offsetS) {
  if (!hasOffset(offsetS)) {
    return "UTC (the server's offset is unknown)";
  }
  return `server local time (${formatOffset(offsetS)})`;
}

/**
 * Parse an ISO 8601 string to epoch ms; a string without a zone designator is read as UTC.
 * Returns NaN for anything unreadable.
 */
export function parseIso(iso) {
  if (typeof iso !== "string" || !iso) {
    return NaN;
  }
  let text = iso.trim().replace(" ", "T");
  // Date.parse reads at most milliseconds reliably: trim microseconds (Python's isoformat()).
  text = text.replace(/(\.\d{3})\d+/, "$1");
  if (/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text)) {
    text += "Z";
  }
  return Date.parse(text);
}

function fields(ms, offsetS) {
  const d = new Date(ms + (hasOffset(offsetS) ? offsetS * 1000 : 0));
  return {
    y: d.getUTCFullYear(),
    mo: pad(d.getUTCMonth() + 1),
    d: pad(d.getUTCDate()),
    h: pad(d.getUTCHours()),
    mi: pad(d.getUTCMinutes()),
    s: pad(d.getUTCSeconds()),
    ms: pad(d.getUTCMilliseconds(), 3),
  };
}

/**
 * Format epoch ms in the server's local time.
 *
 * style: "full" -> "2026-04-21 16:51:43 UTC+02:00" (default); "datetime" -> without the zone;
 * "time" -> "16:51:43"; "minute" -> "16:51"; "date" -> "2026-04-21"; "short" -> "04-21 16:51".
 * Returns "" for a non-finite input.
 */
export function formatEpochMs(ms, offsetS, style = "full") {
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    return "";
  }
  const f = fields(ms, offsetS);
  const date = `${f.y}-${f.mo}-${f.d}`;
  const time = `${f.h}:${f.mi}:${f.s}`;
  switch (style) {
    case "time":
      return time;
    case "time-ms":
      return `${time}.${f.ms}`;
    case "minute":
      return `${f.h}:${f.mi}`;
    case "date":
      return date;
    case "short":
      return `${f.mo}-${f.d} ${f.h}:${f.mi}`;
    case "datetime":
      return `${date} ${time}`;
    default:
      return `${date} ${time} ${formatOffset(offsetS)}`;
  }
}

/** "1 h 02 min", "3 min 20 s", "45 s" for a duration in ms. */
export function formatDuration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    return "";
  }
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) {
    return `${h} h ${pad(m)} min`;
  }
  if (m > 0) {
    return s ? `${m} min ${pad(s)} s` : `${m} min`;
  }
  return `${s} s`;
}

/** A range "2026-04-21 16:51:43 – 17:51:43 UTC+02:00" (date repeated only when it changes). */
export function formatRange(startMs, endMs, offsetS) {
  if (!Number.isFinite(startMs)) {
    return "";
  }
  if (!Number.isFinite(endMs)) {
    return formatEpochMs(startMs, offsetS);
  }
  const sameDay = formatEpochMs(startMs, offsetS, "date") === formatEpochMs(endMs, offsetS, "date");
  const end = sameDay ? formatEpochMs(endMs, offsetS, "time") : formatEpochMs(endMs, offsetS, "datetime");
  return `${formatEpochMs(startMs, offsetS, "datetime")} – ${end} ${formatOffset(offsetS)}`;
}

/**
 * Rewrite every element under `root` carrying `data-range-start`/`data-range-end` (ISO) and
 * `data-zone` into one formatRange text (see formatTimes for the zones), then every
 * `<time datetime="ISO">` under `root` that carries `data-zone`:
 * data-zone="server" -> server local time (offsetS); "utc" -> UTC; "viewer" -> the viewer's own
 * zone (browser locale). data-style picks the formatEpochMs style. The original ISO value stays
 * in the `datetime` attribute and becomes the title (hover) in UTC.
 */
export function formatTimes(root, offsetS) {
  const at = (ms) => (typeof offsetS === "function" ? offsetS(ms) : offsetS);
  for (const el of root.querySelectorAll("[data-range-start][data-range-end][data-zone]")) {
    const start = parseIso(el.dataset.rangeStart);
    const end = parseIso(el.dataset.rangeEnd);
    if (Number.isFinite(start) && Number.isFinite(end)) {
      el.textContent = formatRange(start, end, el.dataset.zone === "utc" ? 0 : at(start));
      const duration = formatDuration(end - start);
      if (duration && el.dataset.duration !== undefined) {
        el.textContent += ` (${duration})`;
      }
    }
  }
  for (const el of root.querySelectorAll("time[datetime][data-zone]")) {
    const iso = el.getAttribute("datetime");
    const ms = parseIso(iso);
    if (!Number.isFinite(ms)) {
      continue;
    }
    const zone = el.dataset.zone;
    const style = el.dataset.style || "full";
    if (zone === "viewer") {
      el.textContent = new Date(ms).toLocaleString();
    } else if (zone === "utc") {
      el.textContent = formatEpochMs(ms, 0, style);
    } else {
      el.textContent = formatEpochMs(ms, at(ms), style);
    }
    el.title = `${formatEpochMs(ms, 0, "datetime")} UTC`;
  }
}
