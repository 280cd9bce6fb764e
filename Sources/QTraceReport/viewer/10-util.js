// Helpers shared by every view. Every string from the trace reaches the page through
// el(..., text) / textContent or canvas fillText: never as HTML.

/** When start-up steps finished (performance.now() ms), for `window.qtrace.state().timings`. */
export const timings = { start: performance.now() };

export const $ = (id) => document.getElementById(id);

/** A new element with an optional class and text (set as textContent, never parsed). */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** A duration in ns as "12.3 ms", with 3 significant digits, rounded exactly as the CLI's
 * formatDuration (QTraceAnalysis/Formatting.swift): both follow Tests/Fixtures/duration-format.json. */
export function fmtDuration(ns) {
  if (!isFinite(ns)) return "–";
  const a = Math.abs(ns);
  if (a < 1e3) return `${Math.round(ns)} ns`;
  if (a < 1e6) return `${round3(ns / 1e3)} µs`;
  if (a < 1e9) return `${round3(ns / 1e6)} ms`;
  return `${round3(ns / 1e9)} s`;
}

/** Three significant digits, ties away from zero on the scaled value (13.35 -> 13.4), as Swift's
 * `rounded()`; toFixed alone would round 13.35 (binary 13.3499…) down and disagree with the CLI. */
function round3(x) {
  const a = Math.abs(x);
  const decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  const scale = 10 ** decimals;
  return (Math.sign(x) * Math.round(a * scale) / scale).toFixed(decimals);
}

/** A time since the start of the trace, with a precision that suits `step` ns. */
export function fmtTime(ns, step) {
  const s = step || Math.abs(ns) || 1;
  const units = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]];
  for (const [scale, unit] of units) {
    if (s >= scale || scale === 1) {
      const digits = scale === 1 ? 0 : Math.max(0, Math.min(6, Math.ceil(-Math.log10(s / scale) + 0.0001)));
      return `${(ns / scale).toFixed(digits)} ${unit}`;
    }
  }
  return `${ns} ns`;
}

/** "3.78 s · 16.5 s": a start and a duration in one unit (the larger one's), the start to a
 * hundredth of the duration, so that a card never mixes "3780 ms" with "16.5 s". */
export function fmtWhenAndHowLong(start, dur) {
  const a = Math.max(Math.abs(start), Math.abs(dur));
  const [scale, unit] = a >= 1e9 ? [1e9, "s"] : a >= 1e6 ? [1e6, "ms"] : a >= 1e3 ? [1e3, "µs"] : [1, "ns"];
  const digitsFor = (step) => scale === 1 ? 0 : Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / scale) + 0.0001)));
  const durText = Math.abs(dur) >= scale ? round3(dur / scale) : (dur / scale).toFixed(digitsFor(Math.max(1, Math.abs(dur) / 100)));
  return `${(start / scale).toFixed(digitsFor(Math.max(1, Math.abs(dur) / 100)))} ${unit} · ${durText} ${unit}`;
}

/** A time since the start of the trace, exact to the nanosecond ("12.345678 ms"). */
export function fmtInstant(ns) {
  const a = Math.abs(ns);
  if (a < 1e3) return `${Math.round(ns)} ns`;
  if (a < 1e6) return `${(ns / 1e3).toFixed(3)} µs`;
  if (a < 1e9) return `${(ns / 1e6).toFixed(6)} ms`;
  return `${(ns / 1e9).toFixed(9)} s`;
}

export function fmtCount(n) {
  if (!isFinite(n)) return "–";
  return Math.round(n).toLocaleString("en-US");
}

/** A share (0..1) as the Stats tables show it: percent, as fmtValue(…, "%"). */
export function fmtShare(fraction) {
  return fmtValue(fraction * 100, "%");
}

/** A stats value in its unit, as a person reads it. */
export function fmtValue(value, unit) {
  // No value (percentiles of no durations): "-", as `qtrace stats` prints it.
  if (value === null || value === undefined) return "-";
  if (typeof value === "string") return value;
  switch (unit) {
    case "ns": return fmtDuration(value);
    case "us": case "µs": return fmtDuration(value * 1e3);
    case "ms": return fmtDuration(value * 1e6);
    case "s": return fmtDuration(value * 1e9);
    case "count": return fmtCount(value);
    case "id": return String(value);
    case "%": return `${value.toFixed(value >= 10 ? 1 : 2)} %`;
    case "bytes": return fmtBytes(value);
    case "": return Number.isInteger(value) ? fmtCount(value) : value.toPrecision(4);
    default: {
      const shown = Number.isInteger(value) ? fmtCount(value) : value.toPrecision(4);
      return `${shown} ${unit}`;
    }
  }
}

function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** First index in [lo, hi) whose key(i) >= x, for keys sorted ascending. */
export function lowerBoundBy(key, x, lo, hi) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(mid) < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** First index in [lo, hi) whose key(i) > x, for keys sorted ascending. */
export function upperBoundBy(key, x, lo, hi) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(mid) <= x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

export function lowerBound(array, x, lo = 0, hi = array.length) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (array[mid] < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

export function upperBound(array, x, lo = 0, hi = array.length) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (array[mid] <= x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

export function clamp(x, lo, hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

// Colours. Queues get distinct hues that read well on the dark background; the main queue
// is always amber, like the main thread in the GCD talks.
const PALETTE = [
  "#5b9cf6", "#56c596", "#e0719e", "#a48cf0", "#e8cf6a", "#4fc3d9", "#f0876a", "#9bd36a",
  "#d39af0", "#6fb0a6", "#f5a8c4", "#8fa8ff", "#c9b48a", "#7ed6b8", "#ff9e7a", "#b7c4de",
];
export const MAIN_COLOR = "#f2a65a";
export const CAUSE_COLORS = ["#ff9f43", "#ff5d6c", "#b388ff", "#3dd6c6", "#9aa4b2"];
export const SEVERITY_COLORS = { error: "#ff6b6b", warning: "#f0b429", info: "#58a6ff" };

export function queueColor(model, q) {
  if (q < 0 || !model.queues[q]) return "#7d8796";
  const queue = model.queues[q];
  if (queue.kind === "main") return MAIN_COLOR;
  return PALETTE[q % PALETTE.length];
}

/** `hex` mixed with the background, for pending items and summaries. */
export function fade(hex, amount) {
  const n = parseInt(hex.slice(1), 16);
  const bg = [13, 17, 23];
  const c = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v, i) => Math.round(v * amount + bg[i] * (1 - amount)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** A diagonal hatch pattern (blocked time, suspended sources). */
export function hatchPattern(ctx, color, background) {
  const size = 8;
  const tile = document.createElement("canvas");
  tile.width = size;
  tile.height = size;
  const t = tile.getContext("2d");
  if (background) {
    t.fillStyle = background;
    t.fillRect(0, 0, size, size);
  }
  t.strokeStyle = color;
  t.lineWidth = 2;
  t.beginPath();
  t.moveTo(-2, size + 2);
  t.lineTo(size + 2, -2);
  t.moveTo(size - 2, size + 2);
  t.lineTo(size + 2, size - 2);
  t.moveTo(-2, 2);
  t.lineTo(2, -2);
  t.stroke();
  return ctx.createPattern(tile, "repeat");
}

/** Text that fits in `width` px at about `charWidth` px per character. */
export function fitText(text, width, charWidth = 6.4) {
  const max = Math.floor(width / charWidth);
  if (max <= 1) return "";
  if (text.length <= max) return text;
  return text.slice(0, max - 1) + "…";
}
