// The boxes of a track (items, pending spans, blocked intervals, scheduling states, source
// handler runs), drawn for the time in view: boxes narrower than a pixel are merged as they
// are drawn, and when a lane holds more boxes in view than pixels, the writer's precomputed
// summaries (levels of detail) are drawn instead. Under an item filter (viewState.filter)
// everything is dimmed and what matches drawn on top. BoxPainter holds the colours.

import { CAUSE_COLORS, fade, fitText, fmtDuration, hatchPattern, queueColor, upperBound } from "./10-util.js";
import { FLAG_NEVER_FINISHED, lodLevelFor, queueLabel, sampleSteps } from "./30-model.js";
import { codeName, codeOfItem } from "./35-code.js";
import { viewState } from "./36-state.js";
import { GUTTER } from "./41-timeline-view.js";

/** Scheduling states: on CPU, runnable, sleeping. */
export const SCHED_COLORS = ["#3fb950", "#f0b429", "#4a6fa5"];
/** How strongly what a filter leaves out is drawn. */
const FILTER_DIM_ALPHA = 0.18;

export class BoxPainter {
  constructor(model, ctx, view) {
    this.m = model;
    this.ctx = ctx;
    this.view = view;
    /** Per queue, its colour and its pending colour. */
    this.colors = model.queues.map((_, q) => queueColor(model, q));
    // A few distinct colours for 100k queues: fade each once.
    const faded = new Map();
    this.pendingColors = this.colors.map((c) => faded.get(c) || faded.set(c, fade(c, 0.42)).get(c));
    this.hatches = CAUSE_COLORS.map((c) => hatchPattern(ctx, c, null));
    this.alphaScale = 1;
  }

  /**
   * Boxes of a track in rows of rowH px. Style: "run" (thread lanes, labelled by queue),
   * "queue" (queue lanes, labelled by kind), "pending" (lighter), "blocked" (hatched),
   * "source" (handler runs, labelled with data), "task", "sched".
   */
  drawBoxes(track, top, rowH, maxRows, style) {
    if (!track || track.length === 0) return;
    const [lo, hi] = track.range(this.view.v0, this.view.v1);
    if (hi <= lo) return;
    const mask = filterMaskFor(style);
    if (mask) this.drawFilteredBoxes(track, lo, hi, top, rowH, maxRows, style, mask);
    else this.drawUnfilteredBoxes(track, lo, hi, top, rowH, maxRows, style);
  }

  drawUnfilteredBoxes(track, lo, hi, top, rowH, maxRows, style) {
    const plotW = this.view.plotW;
    const nsPerPx = (this.view.v1 - this.view.v0) / plotW;
    // Too many pending items to draw one by one: the backlog strip above shows them.
    if (style === "pending" && hi - lo > plotW * 2) return;
    if (hi - lo > plotW * 2 && track.lod) {
      const level = lodLevelFor(track.lod, nsPerPx * 2);
      if (level >= 0) {
        this.drawSummaries(track.lod, level, top, rowH, maxRows, style);
        return;
      }
    }
    this.drawRawBoxes(track, lo, hi, top, rowH, maxRows, style);
  }

  /** Boxes one by one (sub-pixel ones merged); with `mask`, only the items it marks. */
  drawRawBoxes(track, lo, hi, top, rowH, maxRows, style, mask) {
    const ctx = this.ctx;
    const { v0, v1, plotW } = this.view;
    const scale = plotW / (v1 - v0);
    const left = GUTTER - 4;
    const right = GUTTER + plotW + 4;
    const merged = [];
    const labels = [];
    const flush = (run, row) => {
      this.fillBox(run.x0, top + row * rowH, run.x1 - run.x0, rowH, run.color, style, -1);
    };
    for (let k = lo; k < hi; k++) {
      const i = track.idx[k];
      if (mask && !mask[i]) continue;
      const b = track.begin[i];
      const e = track.end[i];
      if (e < v0 || b > v1) continue;
      if (style === "pending" && e <= b) continue;
      let row = track.rowOf(i);
      if (row >= maxRows) row = maxRows - 1;
      const color = track.colorOf(i);
      let x0 = GUTTER + (b - v0) * scale;
      let x1 = GUTTER + (e - v0) * scale;
      if (x0 < left) x0 = left;
      if (x1 > right) x1 = right;
      if (x1 - x0 < 2) {
        const run = merged[row];
        if (run && run.color === color && x0 <= run.x1 + 0.75) {
          if (x1 > run.x1) run.x1 = x1;
          continue;
        }
        if (run) flush(run, row);
        merged[row] = { x0, x1: Math.max(x1, x0 + 0.9), color };
        continue;
      }
      if (merged[row] && merged[row].x1 > x0 - 1) {
        flush(merged[row], row);
        merged[row] = null;
      }
      this.fillBox(x0, top + row * rowH, x1 - x0, rowH, color, style, i);
      if (x1 - x0 > 34 && style !== "pending" && style !== "blocked" && style !== "sched") labels.push([i, x0, x1, row, color]);
    }
    merged.forEach((run, row) => { if (run) flush(run, row); });
    if (!labels.length) return;
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = "#0b0e13";
    for (const [i, x0, x1, row] of labels) {
      const visible0 = Math.max(x0, GUTTER);
      const text = this.boxLabel(i, style);
      ctx.fillText(fitText(text, Math.min(x1, GUTTER + plotW) - visible0 - 8, 6.2), visible0 + 4, top + row * rowH + rowH / 2 + 0.5);
    }
  }

  boxLabel(i, style) {
    const m = this.m;
    if (style === "source") {
      const data = m.sourceRuns.data[i];
      return `data=${data}`;
    }
    const kind = m.kinds[m.kind[i]];
    // The code's short symbol, when the trace has it, says more than the kind or queue.
    const code = codeOfItem(m, i);
    const name = code >= 0 ? codeName(m, code) : "";
    if (style === "task") return name || kind;
    if (style === "queue") {
      return `${name || kind} ${fmtDuration(m.end[i] - m.start[i])}`;
    }
    const prefix = m.kind[i] === 0 ? "" : `${kind}: `;
    return prefix + (name ? `${name} · ${queueLabel(m, m.queue[i])}` : queueLabel(m, m.queue[i]));
  }

  fillBox(x, y, w, h, color, style, i) {
    const ctx = this.ctx;
    const m = this.m;
    const inset = h > 8 ? 1 : 0.5;
    if (style === "sched") {
      ctx.fillStyle = SCHED_COLORS[color] || "#7d8796";
      ctx.fillRect(x, y, w, h);
      return;
    }
    if (style === "blocked") {
      ctx.fillStyle = "rgba(8,10,14,0.55)";
      ctx.fillRect(x, y + inset, w, h - inset * 2);
      ctx.fillStyle = this.hatches[color] || this.hatches[4];
      ctx.fillRect(x, y + inset, w, h - inset * 2);
      return;
    }
    const fill = style === "pending" ? this.pendingColors[color] : this.colors[color] || "#7d8796";
    ctx.fillStyle = fill;
    ctx.fillRect(x, y + inset, w, h - inset * 2);
    if (i < 0 || style === "pending" || style === "source") return;
    if (w >= 5) {
      // A darker left edge separates back-to-back items.
      ctx.fillStyle = "rgba(0,0,0,0.35)";
      ctx.fillRect(x, y + inset, 1, h - inset * 2);
    }
    const kind = m.kind[i];
    if (kind === 2 || kind === 3) {
      ctx.strokeStyle = "#fff3b0";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x + 0.75, y + inset + 0.75, Math.max(0, w - 1.5), h - inset * 2 - 1.5);
    }
    if (m.flags[i] & FLAG_NEVER_FINISHED) {
      ctx.fillStyle = "#ff6b6b";
      ctx.fillRect(x + w - 3, y + inset, 3, h - inset * 2);
    }
  }

  drawSummaries(lod, level, top, rowH, maxRows, style) {
    const ctx = this.ctx;
    const { v0, v1, plotW } = this.view;
    const table = lod.table;
    const bucketNs = lod.topBucketNs / Math.pow(4, level);
    const scale = plotW / (v1 - v0);
    const first = Math.floor(v0 / bucketNs);
    for (let row = 0; row < 256; row++) {
      const range = lod.rows.get(level * 256 + row);
      if (!range) continue;
      const [a, b] = range;
      const y = top + Math.min(row, maxRows - 1) * rowH;
      let k = Math.max(a, upperBound(table.bucket, first, a, b) - 1);
      for (; k < b; k++) {
        const bucket = table.bucket[k];
        const t0 = bucket * bucketNs;
        if (t0 > v1) break;
        const t1 = (bucket + table.length[k]) * bucketNs;
        if (t1 < v0) continue;
        const x0 = Math.max(GUTTER - 2, GUTTER + (t0 - v0) * scale);
        const x1 = Math.min(GUTTER + plotW + 2, GUTTER + (t1 - v0) * scale);
        const coverage = table.coverage[k] / 255;
        // Blocked time is an overlay: only as strong as it is frequent.
        ctx.globalAlpha = (style === "blocked" ? coverage : 0.3 + 0.7 * coverage) * this.alphaScale;
        this.fillBox(x0, y, Math.max(0.8, x1 - x0), rowH, table.color[k], style, -1);
      }
    }
    ctx.globalAlpha = this.alphaScale;
  }

  /** A step series as an area, scaled to `max`, in `height` px from `top`. */
  drawCounterArea(series, top, height, max, fill) {
    const ctx = this.ctx;
    const { v0, v1, plotW } = this.view;
    const width = Math.ceil(plotW);
    const samples = sampleSteps(series, v0, v1, width);
    ctx.fillStyle = fill;
    const bottom = top + height;
    // One rectangle per run of columns of the same height (a backlog is flat most of the time).
    for (let x = 0; x < width;) {
      const v = samples[x];
      if (!(v > 0)) {
        x++;
        continue;
      }
      let end = x + 1;
      while (end < width && samples[end] === v) end++;
      const h = Math.max(1, (v / max) * height);
      ctx.fillRect(GUTTER + x, bottom - h, end - x, h);
      x = end;
    }
    ctx.fillStyle = "#1e2633";
    ctx.fillRect(GUTTER, bottom, plotW, 1);
  }

  /** Plain spans of a BoxTrack in one colour (sub-pixel neighbours merged). */
  drawSpans(track, top, height, color) {
    if (!track || !track.length) return;
    const view = this.view;
    const [lo, hi] = track.range(view.v0, view.v1);
    const ctx = this.ctx;
    ctx.fillStyle = color;
    let runX0 = -1, runX1 = -1;
    for (let k = lo; k < hi; k++) {
      const i = track.idx[k];
      const a = Math.max(GUTTER, view.xOf(track.begin[i])), b = Math.min(GUTTER + view.plotW, view.xOf(track.end[i]));
      if (b < a) continue;
      if (runX1 >= 0 && a <= runX1 + 1) { runX1 = Math.max(runX1, b); continue; }
      if (runX1 >= 0) ctx.fillRect(runX0, top, Math.max(1, runX1 - runX0), height);
      runX0 = a; runX1 = b;
    }
    if (runX1 >= 0) ctx.fillRect(runX0, top, Math.max(1, runX1 - runX0), height);
  }

  // MARK: Under a filter (viewState.filter, set by App.setFilter)

  /**
   * Boxes under a filter: everything dimmed, then what matches drawn box by box on top (one
   * pass over the boxes in view, a byte lookup each).
   */
  drawFilteredBoxes(track, lo, hi, top, rowH, maxRows, style, mask) {
    const ctx = this.ctx;
    ctx.globalAlpha = FILTER_DIM_ALPHA;
    this.alphaScale = FILTER_DIM_ALPHA;
    this.drawUnfilteredBoxes(track, lo, hi, top, rowH, maxRows, style);
    this.alphaScale = 1;
    ctx.globalAlpha = 1;
    if (hi - lo > this.view.plotW * 2) this.drawMaskedPixels(track, lo, hi, top, rowH, maxRows, style, mask);
    else this.drawRawBoxes(track, lo, hi, top, rowH, maxRows, style, mask);
  }

  /**
   * Many boxes in view: the matching ones painted into one colour per pixel column and row
   * first, then drawn as runs, so a frame costs at most a rectangle per pixel and row
   * however many items match.
   */
  drawMaskedPixels(track, lo, hi, top, rowH, maxRows, style, mask) {
    const { v0, v1, plotW } = this.view;
    const width = Math.ceil(plotW);
    const rows = Math.min(maxRows, 16);
    if (!this.pixelColors || this.pixelColors.length < rows * width) this.pixelColors = new Int32Array(rows * width);
    const colors = this.pixelColors;
    colors.fill(-1, 0, rows * width);
    const scale = plotW / (v1 - v0);
    const { idx, begin, end } = track;
    for (let k = lo; k < hi; k++) {
      const i = idx[k];
      if (!mask[i]) continue;
      if (style === "pending" && end[i] <= begin[i]) continue;
      const x0 = Math.max(0, Math.floor((begin[i] - v0) * scale));
      const x1 = Math.min(width - 1, Math.floor((end[i] - v0) * scale));
      if (x1 < x0) continue;
      const base = Math.min(track.rowOf(i), rows - 1) * width;
      const color = track.colorOf(i);
      for (let x = x0; x <= x1; x++) colors[base + x] = color;
    }
    for (let row = 0; row < rows; row++) {
      const base = row * width;
      for (let x = 0; x < width;) {
        const color = colors[base + x];
        let e = x + 1;
        while (e < width && colors[base + e] === color) e++;
        if (color >= 0) this.fillBox(GUTTER + x, top + row * rowH, e - x, rowH, color, style, -1);
        x = e;
      }
    }
  }
}

/** The mask a box style is filtered by, or null (drawn as usual). */
function filterMaskFor(style) {
  const f = viewState.filter;
  if (!f) return null;
  if (style === "blocked") return f.blocked;
  if (style === "run" || style === "queue" || style === "pending" || style === "task") return f.items;
  return null;
}
