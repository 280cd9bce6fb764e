// The timeline's selection, added to the Timeline class: selecting an item or a blocked
// interval (kept in viewState, see 36-state.js), and drawing it: the selected item's flows
// (submitter → queue → thread, what it waited behind, what it enqueued) and the followed
// finding's outlines.

import { SEVERITY_COLORS } from "./10-util.js";
import { childrenOf, FLAG_NEVER_STARTED } from "./30-model.js";
import { updateViewState, viewState } from "./36-state.js";
import { AXIS_H, LANE_PAD, QUEUE_PENDING_H, QUEUE_RUN_H, THREAD_ROW_H, Timeline } from "./40-timeline-layout.js";

Object.assign(Timeline.prototype, {
  // MARK: Selection and flows

  /** Centre y of item i's box in its thread lane (or null if not shown). */
  itemThreadY(i) {
    const lane = this.laneByKey.get(`thread:${this.m.thread[i]}`);
    if (!lane) return null;
    const row = Math.min(this.m.depth[i], lane.rows - 1);
    return this.laneTop(lane) + LANE_PAD + row * THREAD_ROW_H + THREAD_ROW_H / 2;
  },

  itemQueueY(i, pending) {
    const lane = this.laneByKey.get(`queue:${this.m.queue[i]}`);
    if (!lane) return null;
    let y = this.laneTop(lane) + LANE_PAD + lane.backlog;
    if (pending) return y + Math.min(this.m.pendingSlot[i], Math.max(0, lane.pendingRows - 1)) * QUEUE_PENDING_H + 2;
    y += lane.pendingRows * QUEUE_PENDING_H + (lane.pendingRows ? 2 : 0);
    return y + Math.min(this.m.slot[i], lane.runRows - 1) * QUEUE_RUN_H + QUEUE_RUN_H / 2;
  },

  threadLaneY(t) {
    const lane = this.laneByKey.get(`thread:${t}`);
    return lane ? this.laneTop(lane) + LANE_PAD + THREAD_ROW_H / 2 : null;
  },

  drawSelectionFlows() {
    const m = this.m;
    const ctx = this.ctx;
    const outlined = new Set();
    const highlight = viewState.highlight;
    if (highlight && highlight.items) highlight.items.forEach((i) => outlined.add(i));
    if (highlight && highlight.items) {
      for (const i of highlight.items) this.outlineItem(i, SEVERITY_COLORS[highlight.severity] || "#f0b429");
    }
    const { item: i, children } = viewState.selection;
    if (i < 0) return;
    const started = (m.flags[i] & FLAG_NEVER_STARTED) === 0;
    // Where it was enqueued (submitter lane) -> where it ran.
    const ySubmit = m.parent[i] >= 0 ? this.itemThreadY(m.parent[i]) : this.threadLaneY(m.submitter[i]);
    const yRun = started ? this.itemThreadY(i) : null;
    const yPending = this.itemQueueY(i, true);
    if (ySubmit !== null && yPending !== null) {
      this.arrow(this.xOf(m.enq[i]), ySubmit, this.xOf(m.enq[i]), yPending, "#c9d1d9", false);
    }
    if (ySubmit !== null && yRun !== null) {
      this.arrow(this.xOf(m.enq[i]), ySubmit, this.xOf(m.start[i]), yRun, "#ffffff", false);
    }
    // What it waited behind.
    const behind = m.behind[i];
    if (behind >= 0) {
      const yb = this.itemQueueY(behind, false);
      const yi = this.itemQueueY(i, false);
      if (yb !== null && yi !== null) this.arrow(this.xOf(m.end[behind]), yb, this.xOf(m.start[i]), yi, "#ffa657", true);
      this.outlineItem(behind, "#ffa657");
    }
    // What it enqueued.
    if (children) {
      for (const c of children.slice(0, 400)) {
        const yFrom = this.itemThreadY(i);
        const yTo = (m.flags[c] & FLAG_NEVER_STARTED) === 0 ? this.itemThreadY(c) : this.itemQueueY(c, true);
        if (yFrom !== null && yTo !== null) this.arrow(this.xOf(m.enq[c]), yFrom, this.xOf(m.start[c]), yTo, "#7ee787", false);
      }
    }
    this.outlineItem(i, "#ffffff");
  },

  outlineItem(i, color) {
    const m = this.m;
    const ctx = this.ctx;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    const x0 = this.xOf(m.start[i]);
    const w = Math.max(3, this.xOf(m.end[i]) - x0);
    const yThread = (m.flags[i] & FLAG_NEVER_STARTED) === 0 ? this.itemThreadY(i) : null;
    if (yThread !== null) ctx.strokeRect(x0 - 1, yThread - THREAD_ROW_H / 2, w + 2, THREAD_ROW_H);
    const yQueue = this.itemQueueY(i, false);
    if (yQueue !== null) ctx.strokeRect(x0 - 1, yQueue - QUEUE_RUN_H / 2, w + 2, QUEUE_RUN_H);
    const yPending = this.itemQueueY(i, true);
    if (yPending !== null && m.start[i] > m.enq[i]) {
      ctx.lineWidth = 1;
      const p0 = this.xOf(m.enq[i]);
      ctx.strokeRect(p0, yPending - 0.5, Math.max(2, x0 - p0), QUEUE_PENDING_H);
    }
  },

  arrow(x0, y0, x1, y1, color, dashed) {
    const ctx = this.ctx;
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = 1.5;
    if (dashed) ctx.setLineDash([4, 3]);
    const dx = Math.max(20, Math.abs(x1 - x0) / 2);
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    if (Math.abs(x1 - x0) < 2) {
      ctx.lineTo(x1, y1);
    } else {
      ctx.bezierCurveTo(x0 + dx * 0.5, y0, x1 - dx * 0.5, y1, x1, y1);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    const angle = Math.abs(x1 - x0) < 2 ? (y1 > y0 ? Math.PI / 2 : -Math.PI / 2) : Math.atan2(y1 - y0, (x1 - x0) * 0.6);
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - 7 * Math.cos(angle - 0.45), y1 - 7 * Math.sin(angle - 0.45));
    ctx.lineTo(x1 - 7 * Math.cos(angle + 0.45), y1 - 7 * Math.sin(angle + 0.45));
    ctx.closePath();
    ctx.fill();
    ctx.beginPath();
    ctx.arc(x0, y0, 2.5, 0, Math.PI * 2);
    ctx.fill();
  },

  /** Selects item row i (or nothing, -1): the details panel shows it, the timeline its flows. */
  select(i) {
    updateViewState({ selection: { item: i, blocked: -1, children: i >= 0 ? childrenOf(this.m, i) : null } });
  },

  /** Selects blocked interval b (details below); with `reveal`, scrolls and zooms to it. */
  selectBlocked(b, reveal) {
    const B = this.m.blocked;
    if (reveal) this.reveal(`thread:${B.thread[b]}`, B.start[b], B.end[b]);
    updateViewState({ selection: { item: -1, blocked: b, children: null } });
  },

  isHighlighted(lane) {
    const h = viewState.highlight;
    if (!h) return false;
    if (lane.kind === "thread") return h.threads.has(lane.obj);
    if (lane.kind === "queue") return h.queues.has(lane.obj);
    return false;
  },

  /** Page coordinates of the middle of item i's box in its thread lane, or null if not visible. */
  itemScreenPoint(i) {
    const m = this.m;
    if (i < 0 || (m.flags[i] & FLAG_NEVER_STARTED)) return null;
    const y = this.itemThreadY(i);
    const t0 = Math.max(m.start[i], this.v0), t1 = Math.min(m.end[i], this.v1);
    if (y === null || t1 < t0 || y < AXIS_H || y > this.height) return null;
    const rect = this.canvas.getBoundingClientRect();
    return { x: rect.left + this.xOf((t0 + t1) / 2), y: rect.top + y };
  },
});
