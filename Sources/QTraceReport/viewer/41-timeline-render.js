// The timeline's drawing, added to the Timeline class (40-timeline-layout.js): a frame, each
// lane's gutter and plot, and the boxes of a track (merged below a pixel, or the writer's
// summaries when a lane holds more boxes in view than pixels).

import { fitText, fmtCount, fmtDuration, MAIN_COLOR, SEVERITY_COLORS, upperBound } from "./10-util.js";
import {
  backlogMaxOf, backlogOf, FLAG_NEVER_FINISHED, lodLevelFor, queueLabel, queuePendingTrack, queueRunTrack,
  sampleSteps,
} from "./30-model.js";
import { codeName, codeOfItem } from "./35-code.js";
import { viewState } from "./36-state.js";
import {
  AXIS_H, BACKLOG_H, GUTTER, LANE_PAD, QUEUE_PENDING_H, QUEUE_RUN_H, SCHED_COLORS, SCHED_STRIP_H,
  THREAD_ROW_H, Timeline,
} from "./40-timeline-layout.js";

Object.assign(Timeline.prototype, {
  // MARK: Drawing

  requestDraw() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    // A frame drawn meanwhile (draw() clears the flag) makes this one unneeded.
    requestAnimationFrame(() => { if (this.frameRequested) this.draw(); });
  },

  draw() {
    this.frameRequested = false;
    if (!this.width || this.area.offsetParent === null) return;
    const ctx = this.ctx;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = "#0d1117";
    ctx.fillRect(0, 0, this.width, this.height);
    ctx.textBaseline = "middle";
    this.drawGrid();
    const top = AXIS_H;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, top, this.width, this.height - top);
    ctx.clip();
    // Only the lanes on screen (a report of 100k queues has as many lanes).
    const [first, end] = this.lanesBetween(this.scrollY, this.scrollY + this.height - top);
    for (let k = first; k < end; k++) this.drawLane(this.lanes[k], this.laneTop(this.lanes[k]));
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, top, this.plotW, this.height - top);
    ctx.clip();
    this.drawMarkLines();
    this.drawSelectionFlows();
    this.drawRange();
    ctx.restore();
    ctx.restore();
    this.drawAxis();
    ctx.fillStyle = "#283142";
    ctx.fillRect(GUTTER - 1, 0, 1, this.height);
    this.drawScrollbar();
    if (!this.app.firstRenderAt) this.app.firstRenderAt = performance.now();
  },

  drawLane(lane, y) {
    const ctx = this.ctx;
    const highlighted = this.isHighlighted(lane);
    if (lane.kind === "section") {
      // A process group's header keeps the program's name as it is (untrusted text, drawn as text).
      const isProcess = lane.process !== undefined;
      const title = isProcess ? lane.title : lane.title.toUpperCase();
      ctx.fillStyle = isProcess ? "#1c2433" : "#161c26";
      ctx.fillRect(0, y, this.width, lane.height);
      ctx.fillStyle = "#283142";
      ctx.fillRect(0, y + lane.height - 1, this.width, 1);
      const collapsed = this.collapsed.has(lane.key);
      ctx.fillStyle = isProcess ? "#c9d4e5" : "#8d98aa";
      ctx.font = "600 11px system-ui, sans-serif";
      ctx.fillText(`${collapsed ? "▸" : "▾"}  ${title}`, 10, y + lane.height / 2 + 0.5);
      const countX = 26 + ctx.measureText(title).width + 22;
      ctx.fillStyle = "#5d687a";
      ctx.font = "11px system-ui, sans-serif";
      ctx.fillText(String(lane.count), countX, y + lane.height / 2 + 0.5);
      return;
    }
    // Plot background, separators.
    ctx.fillStyle = "#0f141b";
    ctx.fillRect(GUTTER, y, this.plotW, lane.height);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, y, this.plotW, lane.height);
    ctx.clip();
    switch (lane.kind) {
      case "thread": this.drawThreadLane(lane, y); break;
      case "threadcount": this.drawThreadCount(lane, y); break;
      case "queue": this.drawQueueLane(lane, y); break;
      case "process": this.drawProcessSummary(lane, y); break;
      case "task": this.drawTaskLane(lane, y); break;
      case "actor": this.drawActorLane(lane, y); break;
      case "source": this.drawSourceLane(lane, y); break;
      case "groups": this.drawGroups(lane, y); break;
      case "marks": this.drawMarks(lane, y); break;
    }
    ctx.restore();
    ctx.fillStyle = "#1a212c";
    ctx.fillRect(0, y + lane.height - 1, this.width, 1);
    this.drawGutter(lane, y, highlighted);
  },

  drawGutter(lane, y, highlighted) {
    const ctx = this.ctx;
    ctx.fillStyle = highlighted ? "#2a2414" : "#121821";
    ctx.fillRect(0, y, GUTTER - 1, lane.height - 1);
    if (highlighted) {
      ctx.fillStyle = SEVERITY_COLORS[viewState.highlight.severity] || "#f0b429";
      ctx.fillRect(0, y, 3, lane.height - 1);
    }
    let x = 12 + (lane.depth || 0) * 13;
    if (lane.kind === "task") {
      if (lane.hasChildren) {
        ctx.fillStyle = "#8d98aa";
        ctx.font = "10px system-ui, sans-serif";
        ctx.fillText(this.collapsed.has(lane.key) ? "▸" : "▾", x - 2, y + 11);
      }
      x += 10;
    } else if (lane.kind === "queue") {
      if (lane.hasChildren) {
        ctx.fillStyle = "#8d98aa";
        ctx.font = "10px system-ui, sans-serif";
        ctx.fillText(this.collapsed.has(lane.key) ? "▸" : "▾", x - 2, y + 12);
      }
      x += 10;
      ctx.fillStyle = this.colors[lane.obj];
      ctx.fillRect(x, y + 7, 8, 8);
      x += 14;
    } else if (lane.kind === "process") {
      // A collapsed process group: its header's marker, and its name as the lane's title.
      ctx.fillStyle = "#8d98aa";
      ctx.font = "10px system-ui, sans-serif";
      ctx.fillText("▸", x - 4, y + 12);
      x += 6;
    } else if (lane.kind === "thread") {
      const thread = this.m.threads[lane.obj];
      ctx.fillStyle = thread.kind === "main" ? MAIN_COLOR : thread.kind === "worker" ? "#6e7b91" : "#4c5566";
      ctx.beginPath();
      ctx.arc(x + 3, y + 11, 3.5, 0, Math.PI * 2);
      ctx.fill();
      x += 13;
    }
    const width = GUTTER - x - 10;
    ctx.fillStyle = lane.kind === "thread" && this.m.threads[lane.obj].kind === "main" ? "#f4d7b0" : "#d8dee9";
    ctx.font = "12px system-ui, sans-serif";
    ctx.fillText(fitText(lane.title, width, 6.6), x, y + 11.5);
    if (lane.subtitle && lane.height >= 26) {
      ctx.fillStyle = "#6b778a";
      ctx.font = "10.5px system-ui, sans-serif";
      ctx.fillText(fitText(lane.subtitle, width, 5.8), x, y + 25);
    }
    if (lane.kind === "queue" && lane.backlog && lane.height >= 40) {
      ctx.fillStyle = "#6b778a";
      ctx.font = "10px system-ui, sans-serif";
      ctx.fillText(`backlog ≤ ${fmtCount(backlogMaxOf(this.m, lane.obj))}`, x, y + 38);
    }
  },

  drawThreadLane(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const t = lane.obj;
    const thread = m.threads[t];
    // The thread exists only during its lifetime: lighter band, edges marked.
    const x0 = Math.max(GUTTER, this.xOf(thread.start));
    const x1 = Math.min(GUTTER + this.plotW, this.xOf(thread.end));
    if (x1 > x0) {
      ctx.fillStyle = "#151c26";
      ctx.fillRect(x0, y + 1, x1 - x0, lane.height - 3);
      ctx.fillStyle = "#3a475c";
      if (thread.start > this.v0) ctx.fillRect(this.xOf(thread.start), y + 1, 1.5, lane.height - 3);
      if (thread.end < this.v1 && thread.end < m.duration) ctx.fillRect(this.xOf(thread.end) - 1, y + 1, 1.5, lane.height - 3);
    }
    const top = y + LANE_PAD;
    this.drawBoxes(m.threadRun[t], top, THREAD_ROW_H, lane.rows, "run");
    this.drawBoxes(m.threadBlocked[t], top, lane.rows * THREAD_ROW_H, 1, "blocked");
    if (m.threadSched) this.drawBoxes(m.threadSched[t], top + lane.rows * THREAD_ROW_H + 1, SCHED_STRIP_H - 1, 1, "sched");
  },

  drawQueueLane(lane, y) {
    const m = this.m;
    const q = lane.obj;
    let top = y + LANE_PAD;
    if (lane.backlog) {
      this.drawCounterArea(backlogOf(m, q), top, BACKLOG_H - 2, backlogMaxOf(this.m, q), this.pendingColors[q], this.colors[q]);
      top += BACKLOG_H;
    }
    if (lane.pendingRows) {
      this.drawBoxes(queuePendingTrack(m, q), top, QUEUE_PENDING_H, lane.pendingRows, "pending");
      top += lane.pendingRows * QUEUE_PENDING_H + 2;
    }
    this.drawBoxes(queueRunTrack(m, q), top, QUEUE_RUN_H, lane.runRows, "queue");
  },

  /**
   * Boxes of a track in rows of rowH px. Style: "run" (thread lanes, labelled by queue),
   * "queue" (queue lanes, labelled by kind), "pending" (lighter), "blocked" (hatched),
   * "source" (handler runs, labelled with data).
   */
  drawBoxes(track, top, rowH, maxRows, style) {
    if (!track || track.length === 0) return;
    const [lo, hi] = track.range(this.v0, this.v1);
    if (hi <= lo) return;
    const mask = this.filterMaskFor(style);
    if (mask) this.drawFilteredBoxes(track, lo, hi, top, rowH, maxRows, style, mask);
    else this.drawUnfilteredBoxes(track, lo, hi, top, rowH, maxRows, style);
  },

  drawUnfilteredBoxes(track, lo, hi, top, rowH, maxRows, style) {
    const plotW = this.plotW;
    const nsPerPx = (this.v1 - this.v0) / plotW;
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
  },

  /** Boxes one by one (sub-pixel ones merged); with `mask`, only the items it marks. */
  drawRawBoxes(track, lo, hi, top, rowH, maxRows, style, mask) {
    const ctx = this.ctx;
    const v0 = this.v0;
    const scale = this.plotW / (this.v1 - v0);
    const left = GUTTER - 4;
    const right = GUTTER + this.plotW + 4;
    const merged = [];
    const labels = [];
    const m = this.m;
    const flush = (run, row) => {
      this.fillBox(run.x0, top + row * rowH, run.x1 - run.x0, rowH, run.color, style, -1);
    };
    for (let k = lo; k < hi; k++) {
      const i = track.idx[k];
      if (mask && !mask[i]) continue;
      const b = track.begin[i];
      const e = track.end[i];
      if (e < this.v0 || b > this.v1) continue;
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
    for (const [i, x0, x1, row, color] of labels) {
      const visible0 = Math.max(x0, GUTTER);
      const text = this.boxLabel(i, style, color, x1 - x0);
      ctx.fillText(fitText(text, Math.min(x1, GUTTER + this.plotW) - visible0 - 8, 6.2), visible0 + 4, top + row * rowH + rowH / 2 + 0.5);
    }
  },

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
  },

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
  },

  drawSummaries(lod, level, top, rowH, maxRows, style) {
    const ctx = this.ctx;
    const table = lod.table;
    const bucketNs = lod.topBucketNs / Math.pow(4, level);
    const scale = this.plotW / (this.v1 - this.v0);
    const first = Math.floor(this.v0 / bucketNs);
    for (let row = 0; row < 256; row++) {
      const range = lod.rows.get(level * 256 + row);
      if (!range) continue;
      const [a, b] = range;
      const y = top + Math.min(row, maxRows - 1) * rowH;
      let k = Math.max(a, upperBound(table.bucket, first, a, b) - 1);
      for (; k < b; k++) {
        const bucket = table.bucket[k];
        const t0 = bucket * bucketNs;
        if (t0 > this.v1) break;
        const t1 = (bucket + table.length[k]) * bucketNs;
        if (t1 < this.v0) continue;
        const x0 = Math.max(GUTTER - 2, GUTTER + (t0 - this.v0) * scale);
        const x1 = Math.min(GUTTER + this.plotW + 2, GUTTER + (t1 - this.v0) * scale);
        const coverage = table.coverage[k] / 255;
        // Blocked time is an overlay: only as strong as it is frequent.
        ctx.globalAlpha = (style === "blocked" ? coverage : 0.3 + 0.7 * coverage) * this.alphaScale;
        this.fillBox(x0, y, Math.max(0.8, x1 - x0), style === "blocked" ? rowH : rowH, table.color[k], style, -1);
      }
    }
    ctx.globalAlpha = this.alphaScale;
  },

  /** A step series as an area, scaled to `max`, in `height` px from `top`. */
  drawCounterArea(series, top, height, max, fill, line) {
    const ctx = this.ctx;
    const width = Math.ceil(this.plotW);
    const samples = sampleSteps(series, this.v0, this.v1, width);
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
    ctx.fillRect(GUTTER, bottom, this.plotW, 1);
  },
});
