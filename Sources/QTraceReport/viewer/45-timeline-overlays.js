// What the timeline draws across its lanes: the grid, the time axis, the mark lines, the
// chosen range, the scrollbar, and the selection (viewState, 36-state.js): the selected item's
// flows (submitter → queue → thread, what it waited behind, what it enqueued) and the followed
// finding's outlines.

import { fmtDuration, fmtTime, lowerBound, SEVERITY_COLORS, upperBound } from "./10-util.js";
import { FLAG_NEVER_STARTED } from "./30-model.js";
import { viewState } from "./36-state.js";
import { AXIS_H, GUTTER } from "./41-timeline-view.js";
import { QUEUE_PENDING_H, QUEUE_RUN_H, THREAD_ROW_H } from "./42-timeline-lanes.js";

export class Overlays {
  /** Draws into `ctx` for the time in `view`; items are placed by `layout` (a LaneLayout). */
  constructor(model, ctx, view, layout) {
    this.m = model;
    this.ctx = ctx;
    this.view = view;
    this.layout = layout;
  }

  drawGrid() {
    const view = this.view;
    const { step, first } = view.ticks();
    const ctx = this.ctx;
    ctx.fillStyle = "#131922";
    for (let t = first; t <= view.v1; t += step) {
      const x = Math.round(view.xOf(t));
      if (x >= GUTTER) ctx.fillRect(x, AXIS_H, 1, view.height);
    }
  }

  drawAxis() {
    const ctx = this.ctx;
    const view = this.view;
    ctx.fillStyle = "#131922";
    ctx.fillRect(0, 0, view.width, AXIS_H);
    ctx.fillStyle = "#283142";
    ctx.fillRect(0, AXIS_H - 1, view.width, 1);
    const { step, first } = view.ticks();
    ctx.font = "11px ui-monospace, 'DejaVu Sans Mono', monospace";
    ctx.textBaseline = "middle";
    for (let t = first; t <= view.v1; t += step) {
      const x = Math.round(view.xOf(t));
      if (x < GUTTER) continue;
      ctx.fillStyle = "#3a4556";
      ctx.fillRect(x, AXIS_H - 8, 1, 7);
      ctx.fillStyle = "#9aa5b6";
      ctx.fillText(fmtTime(t, step), x + 4, AXIS_H / 2 - 2);
    }
    // The trace's extent, and the range of the highlighted finding.
    ctx.fillStyle = "#30394a";
    const e0 = Math.max(GUTTER, view.xOf(0)), e1 = Math.min(view.width, view.xOf(this.m.duration));
    if (e1 > e0) ctx.fillRect(e0, AXIS_H - 3, e1 - e0, 2);
    const highlight = viewState.highlight;
    if (highlight && highlight.range) {
      const [a, b] = highlight.range;
      const x0 = Math.max(GUTTER, view.xOf(a)), x1 = Math.min(view.width, view.xOf(b));
      ctx.fillStyle = SEVERITY_COLORS[highlight.severity] || "#f0b429";
      ctx.fillRect(x0, AXIS_H - 4, Math.max(2, x1 - x0), 3);
    }
    ctx.fillStyle = "#8d98aa";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(`${fmtDuration(view.v1 - view.v0)} in view`, 12, AXIS_H / 2);
  }

  /** Marks as faint vertical lines across all lanes, when there are few in view. */
  drawMarkLines() {
    const view = this.view;
    const marks = this.m.marks;
    const lo = lowerBound(marks.time, view.v0);
    const hi = upperBound(marks.time, view.v1);
    if (hi - lo > 60) return;
    const ctx = this.ctx;
    ctx.fillStyle = "rgba(227,179,65,0.22)";
    for (let k = lo; k < hi; k++) ctx.fillRect(Math.round(view.xOf(marks.time[k])), AXIS_H, 1, view.height);
  }

  drawScrollbar() {
    const { height, width, scrollY, contentHeight } = this.view;
    const visible = height - AXIS_H;
    if (contentHeight <= visible) return;
    const ctx = this.ctx;
    const h = Math.max(24, (visible * visible) / contentHeight);
    const y = AXIS_H + (scrollY / (contentHeight - visible + 20)) * (visible - h);
    ctx.fillStyle = "rgba(141,152,170,0.35)";
    ctx.fillRect(width - 6, y, 4, h);
  }

  drawRange() {
    const range = viewState.range;
    if (!range) return;
    const ctx = this.ctx;
    const view = this.view;
    const x0 = view.xOf(Math.min(range.t0, range.t1));
    const x1 = view.xOf(Math.max(range.t0, range.t1));
    ctx.fillStyle = "rgba(88,166,255,0.12)";
    ctx.fillRect(x0, AXIS_H, x1 - x0, view.height);
    ctx.fillStyle = "#58a6ff";
    ctx.fillRect(x0, AXIS_H, 1, view.height);
    ctx.fillRect(x1, AXIS_H, 1, view.height);
    const label = fmtDuration(Math.abs(range.t1 - range.t0));
    ctx.font = "600 11px system-ui, sans-serif";
    const w = ctx.measureText(label).width + 12;
    const cx = (x0 + x1) / 2;
    ctx.fillStyle = "#1f6feb";
    ctx.fillRect(cx - w / 2, AXIS_H + 4, w, 17);
    ctx.fillStyle = "#fff";
    ctx.fillText(label, cx - w / 2 + 6, AXIS_H + 13);
  }

  // MARK: Selection and flows

  drawSelectionFlows() {
    const m = this.m;
    const layout = this.layout;
    const xOf = (t) => this.view.xOf(t);
    const highlight = viewState.highlight;
    if (highlight && highlight.items) {
      for (const i of highlight.items) this.outlineItem(i, SEVERITY_COLORS[highlight.severity] || "#f0b429");
    }
    const { item: i, children } = viewState.selection;
    if (i < 0) return;
    const started = (m.flags[i] & FLAG_NEVER_STARTED) === 0;
    // Where it was enqueued (submitter lane) -> where it ran.
    const ySubmit = m.parent[i] >= 0 ? layout.itemThreadY(m.parent[i]) : layout.threadLaneY(m.submitter[i]);
    const yRun = started ? layout.itemThreadY(i) : null;
    const yPending = layout.itemQueueY(i, true);
    if (ySubmit !== null && yPending !== null) {
      this.arrow(xOf(m.enq[i]), ySubmit, xOf(m.enq[i]), yPending, "#c9d1d9", false);
    }
    if (ySubmit !== null && yRun !== null) {
      this.arrow(xOf(m.enq[i]), ySubmit, xOf(m.start[i]), yRun, "#ffffff", false);
    }
    // What it waited behind.
    const behind = m.behind[i];
    if (behind >= 0) {
      const yb = layout.itemQueueY(behind, false);
      const yi = layout.itemQueueY(i, false);
      if (yb !== null && yi !== null) this.arrow(xOf(m.end[behind]), yb, xOf(m.start[i]), yi, "#ffa657", true);
      this.outlineItem(behind, "#ffa657");
    }
    // What it enqueued.
    if (children) {
      for (const c of children.slice(0, 400)) {
        const yFrom = layout.itemThreadY(i);
        const yTo = (m.flags[c] & FLAG_NEVER_STARTED) === 0 ? layout.itemThreadY(c) : layout.itemQueueY(c, true);
        if (yFrom !== null && yTo !== null) this.arrow(xOf(m.enq[c]), yFrom, xOf(m.start[c]), yTo, "#7ee787", false);
      }
    }
    this.outlineItem(i, "#ffffff");
  }

  outlineItem(i, color) {
    const m = this.m;
    const ctx = this.ctx;
    const view = this.view;
    const layout = this.layout;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    const x0 = view.xOf(m.start[i]);
    const w = Math.max(3, view.xOf(m.end[i]) - x0);
    const yThread = (m.flags[i] & FLAG_NEVER_STARTED) === 0 ? layout.itemThreadY(i) : null;
    if (yThread !== null) ctx.strokeRect(x0 - 1, yThread - THREAD_ROW_H / 2, w + 2, THREAD_ROW_H);
    const yQueue = layout.itemQueueY(i, false);
    if (yQueue !== null) ctx.strokeRect(x0 - 1, yQueue - QUEUE_RUN_H / 2, w + 2, QUEUE_RUN_H);
    const yPending = layout.itemQueueY(i, true);
    if (yPending !== null && m.start[i] > m.enq[i]) {
      ctx.lineWidth = 1;
      const p0 = view.xOf(m.enq[i]);
      ctx.strokeRect(p0, yPending - 0.5, Math.max(2, x0 - p0), QUEUE_PENDING_H);
    }
  }

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
  }
}
