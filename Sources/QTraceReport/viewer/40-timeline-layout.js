// The canvas timeline: lanes for threads, queues (in their target tree), sources, groups and
// annotations under a time axis. Each frame draws only what is visible: boxes narrower
// than a pixel are merged as they are drawn, and when a lane holds more boxes in view than
// pixels, the writer's precomputed summaries (levels of detail) are drawn instead.
//
// The Timeline class is split by role: this file holds its layout (lanes, rows, geometry, the
// time in view); the drawing, input and selection parts are added to it by the files after it
// (41-timeline-render.js, 42-timeline-render-overlays.js, 43-timeline-input.js,
// 44-timeline-selection.js, 45-timeline-code.js). What is selected, the chosen range, the
// followed finding and the item filter live in viewState (36-state.js), which every view reads.

import { $, CAUSE_COLORS, clamp, fade, hatchPattern, queueColor, upperBoundBy } from "./10-util.js";
import { hasBacklog, maxOfSeries, queueLabel, threadName } from "./30-model.js";
import { queueCount } from "./31-figures.js";
import { watchViewState } from "./36-state.js";

export const AXIS_H = 30;
export const GUTTER = 240;
export const SECTION_H = 24;
export const THREAD_ROW_H = 16;
export const QUEUE_RUN_H = 14;
export const QUEUE_PENDING_H = 5;
export const BACKLOG_H = 14;
const COUNT_H = 58;
export const LANE_PAD = 4;
/** The scheduling-state strip under each thread lane (traces recorded with --sched). */
export const SCHED_STRIP_H = 6;
export const SCHED_COLORS = ["#3fb950", "#f0b429", "#4a6fa5"];
const MIN_SPAN_NS = 50;
/** More queues than this: the subtrees of more than QUEUE_CHILDREN_EXPANDED_MAX queues start
 * collapsed, so 100k short-lived queues under a few targets are a few lanes until expanded. */
const QUEUE_LANES_EXPANDED_MAX = 2000;
const QUEUE_CHILDREN_EXPANDED_MAX = 50;
/** More tasks than this: the Tasks group starts collapsed. */
const TASKS_EXPANDED_MAX = 50;

export class Timeline {
  constructor(model, app) {
    this.m = model;
    this.app = app;
    this.canvas = $("timeline");
    this.area = $("timeline-area");
    this.tooltip = $("tooltip");
    this.ctx = this.canvas.getContext("2d");
    this.v0 = 0;
    this.v1 = model.duration;
    this.scrollY = 0;
    this.collapsed = new Set();
    this.mouse = null;
    this.drag = null;
    this.frameRequested = false;
    this.width = 0;
    this.height = 0;
    this.colors = model.queues.map((_, q) => queueColor(model, q));
    // A few distinct colours for 100k queues: fade each once.
    const faded = new Map();
    this.pendingColors = this.colors.map((c) => faded.get(c) || faded.set(c, fade(c, 0.42)).get(c));
    this.hatches = CAUSE_COLORS.map((c) => hatchPattern(this.ctx, c, null));
    this.suspendedHatch = hatchPattern(this.ctx, "#4a5467", null);
    this.threadMax = Math.max(model.meta.ncpu, ...maxOfSeries(model.threadCounters.alive));
    this.alphaScale = 1;
    if (model.tasks.length > TASKS_EXPANDED_MAX) this.collapsed.add("section:tasks");
    this.initProcesses();
    this.foldLargeSubtrees();
    this.packGroups();
    this.packIntervals();
    this.buildLanes();
    this.attachEvents();
    // The selection, range, finding and filter are drawn from viewState: any change, a new frame.
    watchViewState(() => this.requestDraw());
    new ResizeObserver(() => this.resize()).observe(this.area);
    // Sized now, drawn when the app opens its tab: a frame of 100k queues is not free.
    this.measure();
  }

  // MARK: Lanes

  buildLanes() {
    const m = this.m;
    const lanes = [];
    const section = (key, title, count) => {
      lanes.push({ kind: "section", key: `section:${key}`, title, count, height: SECTION_H });
      return this.collapsed.has(`section:${key}`);
    };
    if (m.processes.length > 1) {
      // Several processes: the total thread count, then a collapsible group per process
      // (46-timeline-processes.js).
      if (m.threadCounters.alive) {
        lanes.push({ kind: "threadcount", key: "threadcount", title: "Thread count", subtitle: "all processes", height: COUNT_H });
      }
      this.addProcessLanes(lanes);
    } else {
      if (!section("threads", "Threads", m.threads.length)) {
        if (m.threadCounters.alive) lanes.push({ kind: "threadcount", key: "threadcount", title: "Thread count", height: COUNT_H });
        for (const t of this.threadOrder()) lanes.push(this.threadLane(t));
      }
      if (m.queues.length && !section("queues", "Queues", queueCount(m))) {
        for (const entry of this.queueTreeOrder()) lanes.push(this.queueLane(entry));
      }
    }
    this.addTaskLanes(lanes, section);
    this.addActorLanes(lanes, section);
    // With several processes, a source is in its queue's process group; the rest are here.
    const sources = m.sources.map((_, i) => i).filter((i) => m.processes.length < 2 || sourceProcess(m, i) < 0);
    if (sources.length && !section("sources", "Sources", sources.length)) {
      sources.forEach((i) => lanes.push(this.sourceLane(i)));
    }
    if (m.groups.length && !section("groups", "Groups", m.groups.length)) {
      lanes.push({ kind: "groups", key: "groups", title: "Groups", subtitle: "enter → leave → notify",
        height: LANE_PAD * 2 + this.groupRows * 16 });
    }
    if (m.marks.rows + m.intervals.rows > 0 && !section("annotations", "Annotations", m.marks.rows + m.intervals.rows)) {
      lanes.push({ kind: "marks", key: "marks", title: "Marks & intervals", subtitle: "QTrace annotations",
        height: LANE_PAD * 2 + 18 + this.intervalRows * 16 });
    }
    let y = 0;
    for (const lane of lanes) {
      lane.y = y;
      y += lane.height;
    }
    this.lanes = lanes;
    this.laneByKey = new Map(lanes.map((l) => [l.key, l]));
    this.contentHeight = y;
    this.clampScroll();
  }

  threadLane(t) {
    const m = this.m;
    const thread = m.threads[t];
    const rows = Math.min(m.header.rows.thread, Math.max(1, m.threadDepth[t]));
    return {
      kind: "thread", key: `thread:${t}`, obj: t, title: threadName(m, t),
      subtitle: `${thread.kind} · tid ${thread.tid}`, rows,
      height: LANE_PAD * 2 + rows * THREAD_ROW_H + (m.threadSched ? SCHED_STRIP_H : 0),
    };
  }

  queueLane({ q, depth, hasChildren }) {
    const m = this.m;
    const queue = m.queues[q];
    const pendingRows = Math.min(m.header.rows.queuePending, m.queuePendingSlots[q]);
    const runRows = Math.min(m.header.rows.queueRunning, Math.max(1, m.queueSlots[q]));
    const backlog = hasBacklog(m, q) ? BACKLOG_H : 0;
    return {
      kind: "queue", key: `queue:${q}`, obj: q, title: queueLabel(m, q), depth, hasChildren,
      subtitle: [queue.kind, queue.qos].filter(Boolean).join(" · "),
      backlog, pendingRows, runRows,
      height: LANE_PAD * 2 + backlog + pendingRows * QUEUE_PENDING_H + (pendingRows ? 2 : 0) + runRows * QUEUE_RUN_H,
    };
  }

  sourceLane(i) {
    const source = this.m.sources[i];
    return { kind: "source", key: `source:${i}`, obj: i, title: source.label, subtitle: source.type, height: 38 };
  }

  /** Main thread first, then workers as they appear, then other threads. */
  threadOrder() {
    const rank = { main: 0, worker: 1, other: 2 };
    return this.m.threads.map((_, t) => t).sort((a, b) => {
      const ta = this.m.threads[a], tb = this.m.threads[b];
      return (rank[ta.kind] - rank[tb.kind]) || (ta.start - tb.start) || (a - b);
    });
  }

  /** Queues depth-first through the analysis' target-queue tree (m.queueForest), in its order. */
  queueTreeOrder() {
    const m = this.m;
    const { roots, children, orphans } = m.queueForest;
    const out = [];
    const seen = new Uint8Array(m.queues.length);
    const visit = (q, depth) => {
      if (seen[q]) return;
      seen[q] = 1;
      const hasChildren = children[q].length > 0;
      out.push({ q, depth, hasChildren });
      if (!this.collapsed.has(`queue:${q}`)) for (const c of children[q]) visit(c, depth + 1);
    };
    roots.forEach((q) => visit(q, 0));
    // Queues in a target cycle have no root: show them anyway.
    orphans.forEach((q) => visit(q, 0));
    return out;
  }

  foldLargeSubtrees() {
    const { children } = this.m.queueForest;
    if (this.m.queues.length <= QUEUE_LANES_EXPANDED_MAX) return;
    children.forEach((below, q) => { if (below.length > QUEUE_CHILDREN_EXPANDED_MAX) this.collapsed.add(`queue:${q}`); });
  }

  toggleCollapsed(key) {
    if (this.collapsed.has(key)) this.collapsed.delete(key); else this.collapsed.add(key);
    this.buildLanes();
    this.requestDraw();
  }

  /** Collapse every queue subtree, or expand them all if any is collapsed. */
  toggleTree() {
    const parents = this.m.queues.map((q) => q.target).filter((t) => t >= 0);
    const keys = [...new Set(parents)].map((q) => `queue:${q}`);
    const anyCollapsed = keys.some((k) => this.collapsed.has(k));
    keys.forEach((k) => (anyCollapsed ? this.collapsed.delete(k) : this.collapsed.add(k)));
    this.buildLanes();
    this.requestDraw();
  }

  packGroups() {
    const ends = [];
    this.groupRow = this.m.groups.map((g) => {
      const begin = g.firstEnter;
      const end = Math.max(g.lastLeave, g.notify);
      let row = ends.findIndex((e) => e <= begin);
      if (row < 0) {
        row = ends.length < 6 ? ends.length : ends.indexOf(Math.min(...ends));
        if (row === ends.length) ends.push(end);
      }
      ends[row] = end;
      return row;
    });
    this.groupRows = Math.max(1, ends.length);
  }

  packIntervals() {
    const iv = this.m.intervals;
    const ends = [];
    this.intervalRow = new Uint8Array(iv.rows);
    for (let i = 0; i < iv.rows; i++) {
      const begin = iv.start[i];
      let row = ends.findIndex((e) => e <= begin);
      if (row < 0) row = ends.length < 4 ? ends.push(0) - 1 : 3;
      ends[row] = Math.max(ends[row], begin + iv.duration[i]);
      this.intervalRow[i] = row;
    }
    this.intervalRows = ends.length;
  }

  // MARK: Geometry

  /** [first, end) of the lanes overlapping content heights [y0, y1] (lanes are in y order). */
  lanesBetween(y0, y1) {
    const lanes = this.lanes;
    const first = upperBoundBy((k) => lanes[k].y + lanes[k].height, y0, 0, lanes.length);
    const end = upperBoundBy((k) => lanes[k].y, y1, first, lanes.length);
    return [first, end];
  }

  get plotX() {
    return GUTTER;
  }

  get plotW() {
    return Math.max(10, this.width - GUTTER);
  }

  xOf(t) {
    return GUTTER + ((t - this.v0) * this.plotW) / (this.v1 - this.v0);
  }

  timeAt(x) {
    return this.v0 + ((x - GUTTER) * (this.v1 - this.v0)) / this.plotW;
  }

  /** Screen y of a lane's top. */
  laneTop(lane) {
    return AXIS_H + lane.y - this.scrollY;
  }

  resize() {
    this.measure();
    this.draw();
  }

  measure() {
    const rect = this.area.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.width = Math.max(100, Math.floor(rect.width));
    this.height = Math.max(80, Math.floor(rect.height));
    this.canvas.width = Math.floor(this.width * dpr);
    this.canvas.height = Math.floor(this.height * dpr);
    this.dpr = dpr;
    this.clampScroll();
  }

  clampScroll() {
    const visible = this.height - AXIS_H;
    this.scrollY = clamp(this.scrollY, 0, Math.max(0, this.contentHeight - visible + 20));
  }

  // MARK: View changes

  setView(t0, t1) {
    const d = this.m.duration;
    let span = Math.max(MIN_SPAN_NS, t1 - t0);
    span = Math.min(span, d * 1.5);
    let v0 = t0;
    if (t1 - t0 < MIN_SPAN_NS) v0 = (t0 + t1) / 2 - span / 2;
    v0 = clamp(v0, -d * 0.25, d * 1.25 - span);
    this.v0 = v0;
    this.v1 = v0 + span;
    this.app.onViewChanged();
    this.requestDraw();
  }

  zoomAround(t, factor) {
    const t0 = t - (t - this.v0) * factor;
    const t1 = t + (this.v1 - t) * factor;
    this.setView(t0, t1);
  }

  pan(fraction) {
    const span = this.v1 - this.v0;
    this.setView(this.v0 + span * fraction, this.v1 + span * fraction);
  }

  fit() {
    const pad = this.m.duration * 0.01;
    this.setView(-pad, this.m.duration + pad);
  }

  /** Scrolls so that the lane is visible and, if given, shows [t0, t1] with some margin. */
  reveal(key, t0, t1) {
    const sectionOf = { thread: "threads", threadcount: "threads", queue: "queues", source: "sources", task: "tasks",
      actor: "actors" };
    const kind = key.split(":")[0];
    if (sectionOf[kind] && this.collapsed.has(`section:${sectionOf[kind]}`)) this.collapsed.delete(`section:${sectionOf[kind]}`);
    const object = kind === "thread" ? this.m.threads[Number(key.split(":")[1])]
      : kind === "queue" ? this.m.queues[Number(key.split(":")[1])] : null;
    if (object && this.m.processes.length > 1) {
      this.collapsed.delete(`section:process:${object.process}`);
      this.hiddenProcesses.delete(object.process);
    }
    if (kind === "task") {
      let t = this.m.tasks[Number(key.split(":")[1])]?.parent ?? -1;
      for (let guard = 0; t >= 0 && guard < 64; guard++) {
        this.collapsed.delete(`task:${t}`);
        t = this.m.tasks[t].parent;
      }
    }
    if (kind === "queue") {
      let q = this.m.queues[Number(key.split(":")[1])]?.target ?? -1;
      for (let guard = 0; q >= 0 && guard < 64; guard++) {
        this.collapsed.delete(`queue:${q}`);
        q = this.m.queues[q].target;
      }
    }
    this.buildLanes();
    const lane = this.laneByKey.get(key);
    if (lane) {
      const visible = this.height - AXIS_H;
      if (lane.y < this.scrollY || lane.y + lane.height > this.scrollY + visible) {
        this.scrollY = lane.y - visible / 3;
        this.clampScroll();
      }
    }
    if (t0 !== undefined) {
      const span = Math.max(t1 - t0, MIN_SPAN_NS * 4);
      if (t0 < this.v0 || t1 > this.v1 || span < (this.v1 - this.v0) / 200) {
        this.setView(t0 - span * 0.6, t1 + span * 0.6);
      }
    }
    this.requestDraw();
  }

  /** For tests: lane names in order. */
  laneNames() {
    return this.lanes.map((l) => {
      const lane = { kind: l.kind, key: l.key, title: l.title, top: this.laneTop(l), height: l.height };
      if (l.count !== undefined) lane.count = l.count;
      if (l.process !== undefined) lane.process = l.process;
      // Where the scheduling strip is drawn (canvas px), for the browser tests.
      if (l.kind === "thread" && this.m.threadSched) lane.schedStrip = lane.top + LANE_PAD + l.rows * THREAD_ROW_H + 1;
      return lane;
    });
  }
}

/** The process of source i (its queue's), or -1. */
export function sourceProcess(m, i) {
  const queue = m.queues[m.sources[i].queue];
  return queue && queue.process >= 0 ? queue.process : -1;
}
