// The canvas timeline: lanes for threads, queues (in their target tree), tasks, actors,
// sources, groups and annotations under a time axis. Each frame draws only what is visible.
//
// Timeline is what the other views talk to; the work is its collaborators', each with its own
// state: the time and space in view (TimeView, 41-timeline-view.js), the lanes and what is
// collapsed or hidden (LaneLayout, 42-timeline-lanes.js), the boxes of a track (BoxPainter,
// 43-timeline-boxes.js), each lane's drawing (LanePainter, 44-timeline-lane-painter.js), what
// is drawn across the lanes (Overlays, 45-timeline-overlays.js) and the mouse and keys
// (TimelineInput, 46-timeline-input.js). What is selected, the chosen range, the followed
// finding and the item filter live in viewState (36-state.js), which every view reads.

import { $, lowerBound, upperBound } from "./10-util.js";
import { childrenOf, FLAG_NEVER_STARTED } from "./30-model.js";
import { updateViewState, viewState, watchViewState } from "./36-state.js";
import { AXIS_H, GUTTER, TimeView } from "./41-timeline-view.js";
import { LaneLayout } from "./42-timeline-lanes.js";
import { BoxPainter } from "./43-timeline-boxes.js";
import { LanePainter } from "./44-timeline-lane-painter.js";
import { Overlays } from "./45-timeline-overlays.js";
import { TimelineInput } from "./46-timeline-input.js";

export class Timeline {
  constructor(model, app) {
    this.m = model;
    this.app = app;
    this.canvas = $("timeline");
    this.area = $("timeline-area");
    this.ctx = this.canvas.getContext("2d");
    this.frameRequested = false;
    this.view = new TimeView(model.duration, () => {
      app.onViewChanged();
      this.requestDraw();
    });
    this.layout = new LaneLayout(model, this.view);
    this.boxes = new BoxPainter(model, this.ctx, this.view);
    this.lanePainter = new LanePainter(model, this.ctx, this.view, this.layout, this.boxes);
    this.overlays = new Overlays(model, this.ctx, this.view, this.layout);
    this.input = new TimelineInput(model, app, this, this.canvas);
    // The selection, range, finding and filter are drawn from viewState: any change, a new frame.
    watchViewState(() => this.requestDraw());
    new ResizeObserver(() => this.resize()).observe(this.area);
    // Sized now, drawn when the app opens its tab: a frame of 100k queues is not free.
    this.measure();
  }

  // MARK: What the other views read

  get v0() { return this.view.v0; }
  get v1() { return this.view.v1; }
  get plotW() { return this.view.plotW; }
  get dpr() { return this.view.dpr; }
  /** Per queue, its colour (the details panel, Stats and the replay use the timeline's). */
  get colors() { return this.boxes.colors; }
  get collapsed() { return this.layout.collapsed; }
  get processOrder() { return this.layout.processOrder; }
  get hiddenProcesses() { return this.layout.hiddenProcesses; }

  /** For tests: lane names in order. */
  laneNames() {
    return this.layout.laneNames();
  }

  // MARK: Drawing

  requestDraw() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    // A frame drawn meanwhile (draw() clears the flag) makes this one unneeded.
    requestAnimationFrame(() => { if (this.frameRequested) this.draw(); });
  }

  draw() {
    this.frameRequested = false;
    const view = this.view;
    if (!view.width || this.area.offsetParent === null) return;
    const { width, height } = view;
    const ctx = this.ctx;
    ctx.setTransform(view.dpr, 0, 0, view.dpr, 0, 0);
    ctx.fillStyle = "#0d1117";
    ctx.fillRect(0, 0, width, height);
    ctx.textBaseline = "middle";
    this.overlays.drawGrid();
    const top = AXIS_H;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, top, width, height - top);
    ctx.clip();
    // Only the lanes on screen (a report of 100k queues has as many lanes).
    const lanes = this.layout.lanes;
    const [first, end] = this.layout.lanesBetween(view.scrollY, view.scrollY + height - top);
    for (let k = first; k < end; k++) this.lanePainter.drawLane(lanes[k], this.layout.laneTop(lanes[k]));
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, top, view.plotW, height - top);
    ctx.clip();
    this.overlays.drawMarkLines();
    this.overlays.drawSelectionFlows();
    this.overlays.drawRange();
    ctx.restore();
    ctx.restore();
    this.overlays.drawAxis();
    ctx.fillStyle = "#283142";
    ctx.fillRect(GUTTER - 1, 0, 1, height);
    this.overlays.drawScrollbar();
    if (!this.app.firstRenderAt) this.app.firstRenderAt = performance.now();
  }

  resize() {
    this.measure();
    this.draw();
  }

  measure() {
    const rect = this.area.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(100, Math.floor(rect.width));
    const height = Math.max(80, Math.floor(rect.height));
    this.canvas.width = Math.floor(width * dpr);
    this.canvas.height = Math.floor(height * dpr);
    this.view.setSize(width, height, dpr);
  }

  // MARK: The time in view and the lanes

  setView(t0, t1) {
    this.view.setView(t0, t1);
  }

  zoomAround(t, factor) {
    this.view.zoomAround(t, factor);
  }

  fit() {
    this.view.fit();
  }

  toggleCollapsed(key) {
    this.layout.toggleCollapsed(key);
    this.requestDraw();
  }

  /** Collapse every queue subtree, or expand them all if any is collapsed. */
  toggleTree() {
    this.layout.toggleTree();
    this.requestDraw();
  }

  /** Scrolls so that the lane is visible and, if given, shows [t0, t1] with some margin. */
  reveal(key, t0, t1) {
    this.layout.expandTo(key);
    const lane = this.layout.laneByKey.get(key);
    if (lane) this.view.scrollToShow(lane.y, lane.height);
    if (t0 !== undefined) this.view.showSpan(t0, t1);
    this.requestDraw();
  }

  /** Shows exactly the processes in `shown` (indexes); the others' groups leave the timeline. */
  setShownProcesses(shown) {
    this.layout.setShownProcesses(shown);
    this.requestDraw();
    this.app.processPicker?.sync();
  }

  /** Expands process p's group (shown again if hidden) and scrolls to it. */
  revealProcess(p) {
    this.layout.showProcess(p);
    this.reveal(`section:process:${p}`);
    this.app.processPicker?.sync();
  }

  // MARK: Selection (kept in viewState)

  /** Selects item row i (or nothing, -1): the details panel shows it, the timeline its flows. */
  select(i) {
    updateViewState({ selection: { item: i, blocked: -1, children: i >= 0 ? childrenOf(this.m, i) : null } });
  }

  /** Selects blocked interval b (details below); with `reveal`, scrolls and zooms to it. */
  selectBlocked(b, reveal) {
    const B = this.m.blocked;
    if (reveal) this.reveal(`thread:${B.thread[b]}`, B.start[b], B.end[b]);
    updateViewState({ selection: { item: -1, blocked: b, children: null } });
  }

  setRange(t0, t1) {
    updateViewState({ range: { t0: Math.min(t0, t1), t1: Math.max(t0, t1) } });
  }

  /** The next matching item after the selection (or the view's middle), wrapping around. */
  nextFilterMatch() {
    const f = viewState.filter;
    if (!f || !f.rows || !f.rows.length) return -1;
    const selected = viewState.selection.item;
    const after = selected >= 0 ? selected : lowerBound(this.m.start, (this.v0 + this.v1) / 2) - 1;
    const k = upperBound(f.rows, after);
    return f.rows[k < f.rows.length ? k : 0];
  }

  /** Page coordinates of the middle of item i's box in its thread lane, or null if not visible. */
  itemScreenPoint(i) {
    const m = this.m;
    const view = this.view;
    if (i < 0 || (m.flags[i] & FLAG_NEVER_STARTED)) return null;
    const y = this.layout.itemThreadY(i);
    const t0 = Math.max(m.start[i], view.v0), t1 = Math.min(m.end[i], view.v1);
    if (y === null || t1 < t0 || y < AXIS_H || y > view.height) return null;
    const rect = this.canvas.getBoundingClientRect();
    return { x: rect.left + view.xOf((t0 + t1) / 2), y: rect.top + y };
  }
}
