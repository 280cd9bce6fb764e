// The timeline's input: hit testing, the mouse (wheel, drag to pan, shift-drag for a range,
// click, double-click), the keyboard and the hover tooltip. It changes the view and the lanes
// and asks the Timeline (its owner) to select, reveal and redraw.

import { $, clamp, clear, el, lowerBound } from "./10-util.js";
import { queuePendingTrack, queueRunTrack } from "./30-model.js";
import { updateViewState, viewState } from "./36-state.js";
import { AXIS_H, GUTTER } from "./41-timeline-view.js";
import { LANE_PAD, QUEUE_PENDING_H, QUEUE_RUN_H, THREAD_ROW_H } from "./42-timeline-lanes.js";

export class TimelineInput {
  /** Listens on `canvas` (and the window's keys) for `timeline`. */
  constructor(model, app, timeline, canvas) {
    this.m = model;
    this.app = app;
    this.timeline = timeline;
    this.view = timeline.view;
    this.layout = timeline.layout;
    this.canvas = canvas;
    this.tooltip = $("tooltip");
    this.mouse = null;
    this.drag = null;
    this.attachEvents();
  }

  // MARK: Hit testing

  hitTest(x, y) {
    if (y < AXIS_H) return { area: "axis" };
    const view = this.view;
    const cy = y - AXIS_H + view.scrollY;
    const lane = this.layout.laneAt(cy);
    if (!lane) return { area: "none" };
    if (x < GUTTER) return { area: "gutter", lane };
    const t = view.timeAt(x);
    const tol = (4 * (view.v1 - view.v0)) / view.plotW;
    const local = cy - lane.y;
    const hit = { area: "plot", lane, t };
    switch (lane.kind) {
      case "thread": return this.hitThread(hit, local, tol);
      case "queue": return this.hitQueue(hit, local, tol);
      case "task": {
        const item = this.m.taskTrack[lane.obj].find(t, -1, tol);
        return item >= 0 ? { ...hit, item } : hit;
      }
      case "source": {
        const run = this.m.sourceRun[lane.obj].find(t, -1, tol);
        return run >= 0 ? { ...hit, sourceRun: run } : hit;
      }
      case "groups": {
        const row = Math.floor((local - LANE_PAD) / 16);
        const groupRow = this.layout.groupRow;
        const g = this.m.groups.findIndex((gr, i) => groupRow[i] === row && t >= gr.firstEnter - tol &&
          t <= Math.max(gr.lastLeave, gr.notify) + tol);
        return g >= 0 ? { ...hit, group: g } : hit;
      }
      case "marks": return this.hitMarks(hit, local, tol);
      case "threadcount":
        return { ...hit, counts: true };
      default:
        return hit;
    }
  }

  hitThread(hit, local, tol) {
    const m = this.m;
    const { lane, t } = hit;
    const row = Math.floor((local - LANE_PAD) / THREAD_ROW_H);
    if (m.threadSched && local >= LANE_PAD + lane.rows * THREAD_ROW_H) {
      const s = m.threadSched[lane.obj].find(t, -1, tol / 4);
      return s >= 0 ? { ...hit, sched: s } : hit;
    }
    const b = m.threadBlocked[lane.obj].find(t, -1, tol / 4);
    const item = m.threadRun[lane.obj].find(t, clamp(row, 0, lane.rows - 1), tol);
    if (b >= 0) return { ...hit, blocked: b, item };
    if (item >= 0) return { ...hit, item };
    return hit;
  }

  hitQueue(hit, local, tol) {
    const m = this.m;
    const { lane, t } = hit;
    let top = LANE_PAD;
    if (local < top + lane.backlog) return { ...hit, backlog: lane.obj };
    top += lane.backlog;
    const pendingH = lane.pendingRows * QUEUE_PENDING_H + (lane.pendingRows ? 2 : 0);
    if (local < top + pendingH) {
      const row = clamp(Math.floor((local - top) / QUEUE_PENDING_H), 0, Math.max(0, lane.pendingRows - 1));
      const item = queuePendingTrack(m, lane.obj).find(t, row === lane.pendingRows - 1 ? -1 : row, tol);
      return item >= 0 ? { ...hit, item, pending: true } : hit;
    }
    top += pendingH;
    const row = clamp(Math.floor((local - top) / QUEUE_RUN_H), 0, lane.runRows - 1);
    const item = queueRunTrack(m, lane.obj).find(t, row === lane.runRows - 1 ? -1 : row, tol);
    return item >= 0 ? { ...hit, item } : hit;
  }

  hitMarks(hit, local, tol) {
    const m = this.m;
    const t = hit.t;
    const k = lowerBound(m.marks.time, t - tol);
    if (k < m.marks.rows && m.marks.time[k] <= t + tol) return { ...hit, mark: k };
    for (let i = 0; i < m.intervals.rows; i++) {
      const row = this.layout.intervalRow[i];
      const top = LANE_PAD + 18 + row * 16;
      if (local >= top && local < top + 16 && t >= m.intervals.start[i] && t <= m.intervals.start[i] + m.intervals.duration[i]) {
        return { ...hit, interval: i };
      }
    }
    return hit;
  }

  // MARK: Events

  attachEvents() {
    const canvas = this.canvas;
    canvas.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    canvas.addEventListener("pointerdown", (e) => this.onPointerDown(e));
    canvas.addEventListener("pointermove", (e) => this.onPointerMove(e));
    canvas.addEventListener("pointerup", (e) => this.onPointerUp(e));
    canvas.addEventListener("pointerleave", () => {
      this.mouse = null;
      this.hideTooltip();
    });
    canvas.addEventListener("dblclick", (e) => {
      const hit = this.hitTest(e.offsetX, e.offsetY);
      if (hit.item >= 0) this.timeline.reveal(`thread:${this.m.thread[hit.item]}`, this.m.start[hit.item], this.m.end[hit.item]);
    });
    window.addEventListener("keydown", (e) => this.onKey(e));
  }

  /** Scrolls the lanes by dy px. */
  scroll(dy) {
    this.view.scrollBy(dy);
    this.timeline.requestDraw();
  }

  onWheel(e) {
    e.preventDefault();
    const view = this.view;
    const scale = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? view.height : 1;
    const dx = e.deltaX * scale;
    const dy = e.deltaY * scale;
    if (e.offsetX < GUTTER || e.altKey) {
      this.scroll(dy);
      return;
    }
    if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
      view.pan((e.shiftKey ? dy || dx : dx) / view.plotW);
      return;
    }
    view.zoomAround(view.timeAt(e.offsetX), Math.exp(dy * 0.0015));
  }

  onPointerDown(e) {
    if (e.button !== 0) return;
    const view = this.view;
    this.canvas.focus();
    this.canvas.setPointerCapture(e.pointerId);
    this.drag = {
      x: e.offsetX, y: e.offsetY, v0: view.v0, v1: view.v1, scrollY: view.scrollY,
      range: e.shiftKey && e.offsetX >= GUTTER, moved: false,
    };
    if (this.drag.range) updateViewState({ range: { t0: view.timeAt(e.offsetX), t1: view.timeAt(e.offsetX) } }, true);
  }

  onPointerMove(e) {
    this.mouse = { x: e.offsetX, y: e.offsetY };
    const d = this.drag;
    if (!d) {
      this.updateHover();
      return;
    }
    const dx = e.offsetX - d.x;
    const dy = e.offsetY - d.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) d.moved = true;
    if (!d.moved) return;
    this.hideTooltip();
    if (d.range) {
      updateViewState({ range: { t0: viewState.range.t0, t1: this.view.timeAt(clamp(e.offsetX, GUTTER, this.view.width)) } }, true);
      this.timeline.requestDraw();
      return;
    }
    this.canvas.classList.add("dragging");
    this.view.dragFrom(d, dx, dy);
  }

  onPointerUp(e) {
    const d = this.drag;
    this.drag = null;
    this.canvas.classList.remove("dragging");
    if (!d) return;
    if (d.range && d.moved) {
      this.timeline.setRange(viewState.range.t0, viewState.range.t1);
      return;
    }
    if (d.moved) return;
    this.onClick(this.hitTest(e.offsetX, e.offsetY));
  }

  onClick(hit) {
    const timeline = this.timeline;
    const details = this.app.details;
    if (hit.area === "gutter") {
      const lane = hit.lane;
      if (lane.kind === "section" || lane.kind === "process" || ((lane.kind === "queue" || lane.kind === "task") && lane.hasChildren)) {
        timeline.toggleCollapsed(lane.key);
        if (lane.kind === "task") details.showTask(lane.obj);
      } else if (lane.kind === "task") details.showTask(lane.obj);
      else if (lane.kind === "queue") details.showQueue(lane.obj);
      else if (lane.kind === "thread") details.showThread(lane.obj);
      return;
    }
    if (hit.area !== "plot") return;
    if (hit.lane.kind === "section" || hit.lane.kind === "process") {
      timeline.toggleCollapsed(hit.lane.key);
      return;
    }
    if (viewState.range) updateViewState({ range: null });
    if (hit.blocked >= 0 && !(hit.item >= 0 && this.m.blocked.item[hit.blocked] < 0)) {
      timeline.selectBlocked(hit.blocked, false);
      return;
    }
    if (hit.item >= 0) timeline.select(hit.item);
    else if (hit.sourceRun >= 0) details.showSourceRun(hit.sourceRun);
    else if (hit.group >= 0) details.showGroup(hit.group);
    else timeline.select(-1);
  }

  onKey(e) {
    if (this.app.activeTab !== "timeline" || e.ctrlKey || e.metaKey) return;
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
    const view = this.view;
    const centre = this.mouse && this.mouse.x > GUTTER ? view.timeAt(this.mouse.x) : (view.v0 + view.v1) / 2;
    switch (e.key.toLowerCase()) {
      case "w": view.zoomAround(centre, 0.7); break;
      case "s": view.zoomAround(centre, 1 / 0.7); break;
      case "a": view.pan(-0.15); break;
      case "d": view.pan(0.15); break;
      case "f": view.fit(); break;
      case "escape":
        updateViewState({ range: null, highlight: null });
        this.app.clearFilter();
        this.timeline.select(-1);
        break;
      case "arrowdown": this.scroll(60); break;
      case "arrowup": this.scroll(-60); break;
      default: return;
    }
    e.preventDefault();
  }

  // MARK: Tooltip

  updateHover() {
    if (!this.mouse) return;
    const hit = this.hitTest(this.mouse.x, this.mouse.y);
    const lines = this.app.details.tooltipFor(hit);
    if (!lines) {
      this.hideTooltip();
      return;
    }
    const tip = this.tooltip;
    clear(tip);
    tip.appendChild(el("div", "tt-title", lines.title));
    for (const [label, value] of lines.rows) {
      const row = el("div", "tt-row", `${label} `);
      row.appendChild(el("b", null, value));
      tip.appendChild(row);
    }
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    const { width, height } = this.view;
    let x = this.mouse.x + 14, y = this.mouse.y + 16;
    if (x + w > width - 4) x = this.mouse.x - w - 12;
    if (y + h > height - 4) y = this.mouse.y - h - 10;
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  }

  hideTooltip() {
    this.tooltip.hidden = true;
  }
}
