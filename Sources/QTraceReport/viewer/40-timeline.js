// The canvas timeline: lanes for threads, queues (in their target tree), sources, groups and
// annotations under a time axis. Each frame draws only what is visible: boxes narrower
// than a pixel are merged as they are drawn, and when a lane holds more boxes in view than
// pixels, the writer's precomputed summaries (levels of detail) are drawn instead.

const AXIS_H = 30;
const GUTTER = 240;
const SECTION_H = 24;
const THREAD_ROW_H = 16;
const QUEUE_RUN_H = 14;
const QUEUE_PENDING_H = 5;
const BACKLOG_H = 14;
const COUNT_H = 58;
const LANE_PAD = 4;
/** The scheduling-state strip under each thread lane (traces recorded with --sched). */
const SCHED_STRIP_H = 6;
const SCHED_COLORS = ["#3fb950", "#f0b429", "#4a6fa5"];
const MIN_SPAN_NS = 50;

class Timeline {
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
    this.selected = -1;
    this.selectedBlocked = -1;
    this.range = null;
    this.highlight = null;
    this.mouse = null;
    this.drag = null;
    this.frameRequested = false;
    this.width = 0;
    this.height = 0;
    this.colors = model.queues.map((_, q) => queueColor(model, q));
    this.pendingColors = this.colors.map((c) => fade(c, 0.42));
    this.hatches = CAUSE_COLORS.map((c) => hatchPattern(this.ctx, c, null));
    this.suspendedHatch = hatchPattern(this.ctx, "#4a5467", null);
    this.threadMax = Math.max(model.meta.ncpu, ...maxOfSeries(model.threadCounters.alive));
    /** The item filter (search, a Code row, a finding's site), or null: see 45-timeline-code.js. */
    this.filter = null;
    this.alphaScale = 1;
    if (model.tasks.length > TASKS_EXPANDED_MAX) this.collapsed.add("section:tasks");
    this.packGroups();
    this.packIntervals();
    this.buildLanes();
    this.attachEvents();
    new ResizeObserver(() => this.resize()).observe(this.area);
    this.resize();
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
      // Several processes: the total thread count, then a collapsible group per process.
      if (m.threadCounters.alive) {
        lanes.push({ kind: "threadcount", key: "threadcount", title: "Thread count", subtitle: "all processes", height: COUNT_H });
      }
      const threadOrder = this.threadOrder(), queueOrder = this.queueTreeOrder();
      m.processes.forEach((p, pi) => {
        const threads = threadOrder.filter((t) => m.threads[t].process === pi);
        const queues = queueOrder.filter(({ q }) => m.queues[q].process === pi);
        lanes.push({ kind: "section", key: `section:process:${pi}`, process: pi, title: p.title,
          count: `${threads.length} threads · ${queueCount(m, pi)} queues`, height: SECTION_H });
        if (this.collapsed.has(`section:process:${pi}`)) return;
        threads.forEach((t) => lanes.push(this.threadLane(t)));
        queues.forEach((entry) => lanes.push(this.queueLane(entry)));
      });
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
    if (m.sources.length && !section("sources", "Sources", m.sources.length)) {
      m.sources.forEach((s, i) => {
        lanes.push({ kind: "source", key: `source:${i}`, obj: i, title: s.label, subtitle: s.type, height: 38 });
      });
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
    const backlog = m.backlogSeries[q] ? BACKLOG_H : 0;
    return {
      kind: "queue", key: `queue:${q}`, obj: q, title: queueLabel(m, q), depth, hasChildren,
      subtitle: [queue.kind, queue.qos].filter(Boolean).join(" · "),
      backlog, pendingRows, runRows,
      height: LANE_PAD * 2 + backlog + pendingRows * QUEUE_PENDING_H + (pendingRows ? 2 : 0) + runRows * QUEUE_RUN_H,
    };
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
    const { roots, children } = m.queueForest;
    const out = [];
    const seen = new Uint8Array(m.queues.length);
    const visit = (q, depth) => {
      if (seen[q]) return;
      seen[q] = 1;
      const hasChildren = children[q].length > 0;
      out.push({ q, depth, hasChildren });
      if (!this.collapsed.has(`queue:${q}`)) for (const c of children[q]) visit(c, depth + 1);
      else for (const c of children[q]) markSeen(c);
    };
    const markSeen = (q) => {
      if (seen[q]) return;
      seen[q] = 1;
      children[q].forEach(markSeen);
    };
    roots.forEach((q) => visit(q, 0));
    // Queues in a target cycle have no root: show them anyway.
    m.queues.forEach((_, q) => { if (!seen[q]) visit(q, 0); });
    return out;
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
    const rect = this.area.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.width = Math.max(100, Math.floor(rect.width));
    this.height = Math.max(80, Math.floor(rect.height));
    this.canvas.width = Math.floor(this.width * dpr);
    this.canvas.height = Math.floor(this.height * dpr);
    this.dpr = dpr;
    this.clampScroll();
    this.draw();
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
    const sectionOf = { thread: "threads", threadcount: "threads", queue: "queues", source: "sources", task: "tasks" };
    const kind = key.split(":")[0];
    if (sectionOf[kind] && this.collapsed.has(`section:${sectionOf[kind]}`)) this.collapsed.delete(`section:${sectionOf[kind]}`);
    const object = kind === "thread" ? this.m.threads[Number(key.split(":")[1])]
      : kind === "queue" ? this.m.queues[Number(key.split(":")[1])] : null;
    if (object && this.m.processes.length > 1) this.collapsed.delete(`section:process:${object.process}`);
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

  // MARK: Drawing

  requestDraw() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      this.draw();
    });
  }

  draw() {
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
    for (const lane of this.lanes) {
      const y = this.laneTop(lane);
      if (y + lane.height < top || y > this.height) continue;
      this.drawLane(lane, y);
    }
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
  }

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
      case "task": this.drawTaskLane(lane, y); break;
      case "source": this.drawSourceLane(lane, y); break;
      case "groups": this.drawGroups(lane, y); break;
      case "marks": this.drawMarks(lane, y); break;
    }
    ctx.restore();
    ctx.fillStyle = "#1a212c";
    ctx.fillRect(0, y + lane.height - 1, this.width, 1);
    this.drawGutter(lane, y, highlighted);
  }

  drawGutter(lane, y, highlighted) {
    const ctx = this.ctx;
    ctx.fillStyle = highlighted ? "#2a2414" : "#121821";
    ctx.fillRect(0, y, GUTTER - 1, lane.height - 1);
    if (highlighted) {
      ctx.fillStyle = SEVERITY_COLORS[this.highlight.severity] || "#f0b429";
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
  }

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
  }

  drawQueueLane(lane, y) {
    const m = this.m;
    const q = lane.obj;
    let top = y + LANE_PAD;
    if (lane.backlog) {
      this.drawCounterArea(backlogOf(m, q), top, BACKLOG_H - 2, backlogMaxOf(this.m, q), this.pendingColors[q], this.colors[q]);
      top += BACKLOG_H;
    }
    if (lane.pendingRows) {
      this.drawBoxes(m.queuePending[q], top, QUEUE_PENDING_H, lane.pendingRows, "pending");
      top += lane.pendingRows * QUEUE_PENDING_H + 2;
    }
    this.drawBoxes(m.queueRun[q], top, QUEUE_RUN_H, lane.runRows, "queue");
  }

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
  }

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
  }

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
  }

  /** A step series as an area, scaled to `max`, in `height` px from `top`. */
  drawCounterArea(series, top, height, max, fill, line) {
    const ctx = this.ctx;
    const width = Math.ceil(this.plotW);
    const samples = sampleSteps(series, this.v0, this.v1, width);
    ctx.fillStyle = fill;
    const bottom = top + height;
    for (let x = 0; x < width; x++) {
      const v = samples[x];
      if (!(v > 0)) continue;
      const h = Math.max(1, (v / max) * height);
      ctx.fillRect(GUTTER + x, bottom - h, 1, h);
    }
    ctx.fillStyle = "#1e2633";
    ctx.fillRect(GUTTER, bottom, this.plotW, 1);
  }

  drawThreadCount(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const width = Math.ceil(this.plotW);
    const { alive, running, blocked } = m.threadCounters;
    const top = y + 6;
    const height = lane.height - 12;
    const max = this.threadMax;
    const a = sampleSteps(alive, this.v0, this.v1, width);
    const r = running ? sampleSteps(running, this.v0, this.v1, width) : null;
    const b = blocked ? sampleSteps(blocked, this.v0, this.v1, width) : null;
    const bottom = top + height;
    const px = (v) => (v / max) * height;
    for (let x = 0; x < width; x++) {
      const vAlive = a[x];
      if (!(vAlive > 0)) continue;
      ctx.fillStyle = "#2a3342";
      ctx.fillRect(GUTTER + x, bottom - px(vAlive), 1, px(vAlive));
      const vRun = r ? r[x] || 0 : 0;
      const vBlocked = b ? b[x] || 0 : 0;
      if (vRun > 0) {
        ctx.fillStyle = "#3fb950";
        ctx.fillRect(GUTTER + x, bottom - px(vRun), 1, px(vRun));
      }
      if (vBlocked > 0) {
        ctx.fillStyle = "#f85149";
        ctx.fillRect(GUTTER + x, bottom - px(vRun) - px(vBlocked), 1, px(vBlocked));
      }
    }
    // The CPU count, for comparison.
    const cpuY = bottom - px(m.meta.ncpu);
    ctx.strokeStyle = "#8d98aa";
    ctx.setLineDash([4, 4]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(GUTTER, Math.round(cpuY) + 0.5);
    ctx.lineTo(GUTTER + this.plotW, Math.round(cpuY) + 0.5);
    ctx.stroke();
    ctx.setLineDash([]);
    // Labels on small dark pills, readable over the bars.
    ctx.font = "10px system-ui, sans-serif";
    const pill = (text, x, y) => {
      const w = ctx.measureText(text).width + 8;
      ctx.fillStyle = "rgba(13,17,23,0.85)";
      ctx.fillRect(x, y - 7, w, 14);
      ctx.fillStyle = "#aeb8c8";
      ctx.fillText(text, x + 4, y);
    };
    pill(`${m.meta.ncpu} CPUs`, GUTTER + this.plotW - 60, cpuY);
    pill(`max ${max}`, GUTTER + 4, top + 5);
  }

  drawSourceLane(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const s = lane.obj;
    const source = m.sources[s];
    for (const [a, b] of source.suspended) {
      const x0 = Math.max(GUTTER, this.xOf(a)), x1 = Math.min(GUTTER + this.plotW, this.xOf(b));
      if (x1 <= x0) continue;
      ctx.fillStyle = "#1b212c";
      ctx.fillRect(x0, y + 2, x1 - x0, lane.height - 5);
      ctx.fillStyle = this.suspendedHatch;
      ctx.fillRect(x0, y + 2, x1 - x0, lane.height - 5);
      if (x1 - x0 > 70) {
        ctx.fillStyle = "#8d98aa";
        ctx.font = "10px system-ui, sans-serif";
        ctx.fillText("suspended", x0 + 5, y + 9);
      }
    }
    // Fire ticks (one per pixel at most).
    const events = m.sourceEventRows[s];
    const times = m.sourceEvents.time;
    ctx.fillStyle = "#c9d1d9";
    let lastX = -1;
    const lo = lowerBoundBy((k) => times[events[k]], this.v0, 0, events.length);
    for (let k = lo; k < events.length; k++) {
      const t = times[events[k]];
      if (t > this.v1) break;
      const x = Math.round(this.xOf(t));
      if (x === lastX) continue;
      lastX = x;
      ctx.fillRect(x, y + 3, 1, 7);
    }
    this.drawBoxes(m.sourceRun[s], y + 13, 20, 1, "source");
    // Coalesced handler runs: mark data > 1.
    const runs = m.sourceRun[s];
    const [a, b] = runs.range(this.v0, this.v1);
    if (b - a < 2000) {
      ctx.font = "bold 10px system-ui, sans-serif";
      for (let k = a; k < b; k++) {
        const i = runs.idx[k];
        if (m.sourceRuns.data[i] <= 1) continue;
        const x = this.xOf(m.sourceRuns.start[i]);
        ctx.fillStyle = "#ffa657";
        ctx.beginPath();
        ctx.moveTo(x, y + 13);
        ctx.lineTo(x - 4, y + 7);
        ctx.lineTo(x + 4, y + 7);
        ctx.fill();
        ctx.fillText(`×${m.sourceRuns.data[i]}`, x + 6, y + 7);
      }
    }
    if (source.cancel >= 0) {
      const x = this.xOf(source.cancel);
      ctx.fillStyle = "#ff6b6b";
      ctx.fillRect(x - 1, y + 2, 2, lane.height - 5);
    }
  }

  drawGroups(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    ctx.font = "10.5px system-ui, sans-serif";
    m.groups.forEach((g, i) => {
      const end = Math.max(g.lastLeave, g.notify);
      if (end < this.v0 || g.firstEnter > this.v1) return;
      const top = y + LANE_PAD + this.groupRow[i] * 16;
      const x0 = this.xOf(g.firstEnter);
      const x1 = this.xOf(g.lastLeave);
      const highlighted = this.highlight && this.highlight.groups && this.highlight.groups.has(i);
      ctx.fillStyle = highlighted ? "#6e5a1e" : "#2d3a4f";
      ctx.fillRect(x0, top + 2, Math.max(1, x1 - x0), 11);
      ctx.fillStyle = "#7d93b8";
      ctx.fillRect(x0, top + 2, 1.5, 11);
      if (g.notify >= 0) {
        const xn = this.xOf(g.notify);
        ctx.strokeStyle = "#7d93b8";
        ctx.beginPath();
        ctx.moveTo(x1, top + 7.5);
        ctx.lineTo(xn, top + 7.5);
        ctx.stroke();
        ctx.fillStyle = "#56d364";
        ctx.beginPath();
        ctx.moveTo(xn, top + 2);
        ctx.lineTo(xn + 5, top + 7.5);
        ctx.lineTo(xn, top + 13);
        ctx.lineTo(xn - 5, top + 7.5);
        ctx.fill();
      } else {
        ctx.fillStyle = "#ff6b6b";
        ctx.fillRect(x1, top + 2, 2, 11);
      }
      if (x1 - x0 > 40) {
        ctx.fillStyle = "#d8dee9";
        ctx.fillText(fitText(g.label, x1 - Math.max(x0, GUTTER) - 8, 6), Math.max(x0, GUTTER) + 4, top + 8);
      }
    });
  }

  drawMarks(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const marks = m.marks;
    ctx.font = "10.5px system-ui, sans-serif";
    const lo = lowerBound(marks.time, this.v0);
    let lastLabelEnd = -Infinity;
    for (let k = lo; k < marks.rows && marks.time[k] <= this.v1; k++) {
      const x = this.xOf(marks.time[k]);
      ctx.fillStyle = "#e3b341";
      ctx.beginPath();
      ctx.moveTo(x, y + 16);
      ctx.lineTo(x - 4, y + 6);
      ctx.lineTo(x + 4, y + 6);
      ctx.fill();
      if (x > lastLabelEnd) {
        const text = fitText(m.strings[marks.name[k]] || "", 160, 6);
        ctx.fillStyle = "#d8dee9";
        ctx.fillText(text, x + 6, y + 11);
        lastLabelEnd = x + 12 + text.length * 6;
      }
    }
    const iv = m.intervals;
    for (let i = 0; i < iv.rows; i++) {
      const t0 = iv.start[i], t1 = t0 + iv.duration[i];
      if (t1 < this.v0 || t0 > this.v1) continue;
      const top = y + LANE_PAD + 18 + this.intervalRow[i] * 16;
      const x0 = this.xOf(t0), x1 = this.xOf(t1);
      ctx.fillStyle = "#3b3358";
      ctx.fillRect(x0, top + 1, Math.max(1, x1 - x0), 13);
      ctx.fillStyle = "#8e7cc3";
      ctx.fillRect(x0, top + 1, Math.max(1, x1 - x0), 2);
      if (x1 - x0 > 30) {
        ctx.fillStyle = "#e2dcf5";
        const vx = Math.max(x0, GUTTER);
        ctx.fillText(fitText(m.strings[iv.name[i]] || "", Math.min(x1, GUTTER + this.plotW) - vx - 8, 6), vx + 4, top + 8.5);
      }
    }
  }

  /** Marks as faint vertical lines across all lanes, when there are few in view. */
  drawMarkLines() {
    const marks = this.m.marks;
    const lo = lowerBound(marks.time, this.v0);
    const hi = upperBound(marks.time, this.v1);
    if (hi - lo > 60) return;
    const ctx = this.ctx;
    ctx.fillStyle = "rgba(227,179,65,0.22)";
    for (let k = lo; k < hi; k++) ctx.fillRect(Math.round(this.xOf(marks.time[k])), AXIS_H, 1, this.height);
  }

  drawGrid() {
    const { step, first } = this.ticks();
    const ctx = this.ctx;
    ctx.fillStyle = "#131922";
    for (let t = first; t <= this.v1; t += step) {
      const x = Math.round(this.xOf(t));
      if (x >= GUTTER) ctx.fillRect(x, AXIS_H, 1, this.height);
    }
  }

  ticks() {
    const span = this.v1 - this.v0;
    const target = span / Math.max(1, this.plotW / 110);
    const pow = Math.pow(10, Math.floor(Math.log10(Math.max(target, 1))));
    let step = pow;
    for (const f of [1, 2, 5, 10]) {
      if (pow * f >= target) { step = pow * f; break; }
    }
    const first = Math.ceil(this.v0 / step) * step;
    return { step, first };
  }

  drawAxis() {
    const ctx = this.ctx;
    ctx.fillStyle = "#131922";
    ctx.fillRect(0, 0, this.width, AXIS_H);
    ctx.fillStyle = "#283142";
    ctx.fillRect(0, AXIS_H - 1, this.width, 1);
    const { step, first } = this.ticks();
    ctx.font = "11px ui-monospace, 'DejaVu Sans Mono', monospace";
    ctx.textBaseline = "middle";
    for (let t = first; t <= this.v1; t += step) {
      const x = Math.round(this.xOf(t));
      if (x < GUTTER) continue;
      ctx.fillStyle = "#3a4556";
      ctx.fillRect(x, AXIS_H - 8, 1, 7);
      ctx.fillStyle = "#9aa5b6";
      ctx.fillText(fmtTime(t, step), x + 4, AXIS_H / 2 - 2);
    }
    // The trace's extent, and the range of the highlighted finding.
    ctx.fillStyle = "#30394a";
    const e0 = Math.max(GUTTER, this.xOf(0)), e1 = Math.min(this.width, this.xOf(this.m.duration));
    if (e1 > e0) ctx.fillRect(e0, AXIS_H - 3, e1 - e0, 2);
    if (this.highlight && this.highlight.range) {
      const [a, b] = this.highlight.range;
      const x0 = Math.max(GUTTER, this.xOf(a)), x1 = Math.min(this.width, this.xOf(b));
      ctx.fillStyle = SEVERITY_COLORS[this.highlight.severity] || "#f0b429";
      ctx.fillRect(x0, AXIS_H - 4, Math.max(2, x1 - x0), 3);
    }
    ctx.fillStyle = "#8d98aa";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(`${fmtDuration(this.v1 - this.v0)} in view`, 12, AXIS_H / 2);
  }

  drawScrollbar() {
    const visible = this.height - AXIS_H;
    if (this.contentHeight <= visible) return;
    const ctx = this.ctx;
    const h = Math.max(24, (visible * visible) / this.contentHeight);
    const y = AXIS_H + (this.scrollY / (this.contentHeight - visible + 20)) * (visible - h);
    ctx.fillStyle = "rgba(141,152,170,0.35)";
    ctx.fillRect(this.width - 6, y, 4, h);
  }

  drawRange() {
    if (!this.range) return;
    const ctx = this.ctx;
    const x0 = this.xOf(Math.min(this.range.t0, this.range.t1));
    const x1 = this.xOf(Math.max(this.range.t0, this.range.t1));
    ctx.fillStyle = "rgba(88,166,255,0.12)";
    ctx.fillRect(x0, AXIS_H, x1 - x0, this.height);
    ctx.fillStyle = "#58a6ff";
    ctx.fillRect(x0, AXIS_H, 1, this.height);
    ctx.fillRect(x1, AXIS_H, 1, this.height);
    const label = fmtDuration(Math.abs(this.range.t1 - this.range.t0));
    ctx.font = "600 11px system-ui, sans-serif";
    const w = ctx.measureText(label).width + 12;
    const cx = (x0 + x1) / 2;
    ctx.fillStyle = "#1f6feb";
    ctx.fillRect(cx - w / 2, AXIS_H + 4, w, 17);
    ctx.fillStyle = "#fff";
    ctx.fillText(label, cx - w / 2 + 6, AXIS_H + 13);
  }

  // MARK: Selection and flows

  /** Centre y of item i's box in its thread lane (or null if not shown). */
  itemThreadY(i) {
    const lane = this.laneByKey.get(`thread:${this.m.thread[i]}`);
    if (!lane) return null;
    const row = Math.min(this.m.depth[i], lane.rows - 1);
    return this.laneTop(lane) + LANE_PAD + row * THREAD_ROW_H + THREAD_ROW_H / 2;
  }

  itemQueueY(i, pending) {
    const lane = this.laneByKey.get(`queue:${this.m.queue[i]}`);
    if (!lane) return null;
    let y = this.laneTop(lane) + LANE_PAD + lane.backlog;
    if (pending) return y + Math.min(this.m.pendingSlot[i], Math.max(0, lane.pendingRows - 1)) * QUEUE_PENDING_H + 2;
    y += lane.pendingRows * QUEUE_PENDING_H + (lane.pendingRows ? 2 : 0);
    return y + Math.min(this.m.slot[i], lane.runRows - 1) * QUEUE_RUN_H + QUEUE_RUN_H / 2;
  }

  threadLaneY(t) {
    const lane = this.laneByKey.get(`thread:${t}`);
    return lane ? this.laneTop(lane) + LANE_PAD + THREAD_ROW_H / 2 : null;
  }

  drawSelectionFlows() {
    const m = this.m;
    const ctx = this.ctx;
    const outlined = new Set();
    if (this.highlight && this.highlight.items) this.highlight.items.forEach((i) => outlined.add(i));
    if (this.highlight && this.highlight.items) {
      for (const i of this.highlight.items) this.outlineItem(i, SEVERITY_COLORS[this.highlight.severity] || "#f0b429");
    }
    const i = this.selected;
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
    if (this.selectedChildren) {
      for (const c of this.selectedChildren.slice(0, 400)) {
        const yFrom = this.itemThreadY(i);
        const yTo = (m.flags[c] & FLAG_NEVER_STARTED) === 0 ? this.itemThreadY(c) : this.itemQueueY(c, true);
        if (yFrom !== null && yTo !== null) this.arrow(this.xOf(m.enq[c]), yFrom, this.xOf(m.start[c]), yTo, "#7ee787", false);
      }
    }
    this.outlineItem(i, "#ffffff");
  }

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

  select(i) {
    this.selected = i;
    this.selectedBlocked = -1;
    this.selectedChildren = i >= 0 ? childrenOf(this.m, i) : null;
    this.app.details.showItem(i, this.selectedChildren);
    this.requestDraw();
  }

  isHighlighted(lane) {
    const h = this.highlight;
    if (!h) return false;
    if (lane.kind === "thread") return h.threads.has(lane.obj);
    if (lane.kind === "queue") return h.queues.has(lane.obj);
    return false;
  }

  // MARK: Hit testing

  hitTest(x, y) {
    if (y < AXIS_H) return { area: "axis" };
    const cy = y - AXIS_H + this.scrollY;
    const lane = this.lanes.find((l) => cy >= l.y && cy < l.y + l.height);
    if (!lane) return { area: "none" };
    if (x < GUTTER) return { area: "gutter", lane };
    const m = this.m;
    const t = this.timeAt(x);
    const tol = (4 * (this.v1 - this.v0)) / this.plotW;
    const local = cy - lane.y;
    const hit = { area: "plot", lane, t };
    switch (lane.kind) {
      case "thread": {
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
      case "queue": {
        let top = LANE_PAD;
        if (local < top + lane.backlog) return { ...hit, backlog: lane.obj };
        top += lane.backlog;
        const pendingH = lane.pendingRows * QUEUE_PENDING_H + (lane.pendingRows ? 2 : 0);
        if (local < top + pendingH) {
          const row = clamp(Math.floor((local - top) / QUEUE_PENDING_H), 0, Math.max(0, lane.pendingRows - 1));
          const item = m.queuePending[lane.obj].find(t, row === lane.pendingRows - 1 ? -1 : row, tol);
          return item >= 0 ? { ...hit, item, pending: true } : hit;
        }
        top += pendingH;
        const row = clamp(Math.floor((local - top) / QUEUE_RUN_H), 0, lane.runRows - 1);
        const item = m.queueRun[lane.obj].find(t, row === lane.runRows - 1 ? -1 : row, tol);
        return item >= 0 ? { ...hit, item } : hit;
      }
      case "task": {
        const item = m.taskTrack[lane.obj].find(t, -1, tol);
        return item >= 0 ? { ...hit, item } : hit;
      }
      case "source": {
        const run = m.sourceRun[lane.obj].find(t, -1, tol);
        return run >= 0 ? { ...hit, sourceRun: run } : hit;
      }
      case "groups": {
        const row = Math.floor((local - LANE_PAD) / 16);
        const g = m.groups.findIndex((gr, i) => this.groupRow[i] === row && t >= gr.firstEnter - tol &&
          t <= Math.max(gr.lastLeave, gr.notify) + tol);
        return g >= 0 ? { ...hit, group: g } : hit;
      }
      case "marks": {
        const k = lowerBound(m.marks.time, t - tol);
        if (k < m.marks.rows && m.marks.time[k] <= t + tol) return { ...hit, mark: k };
        for (let i = 0; i < m.intervals.rows; i++) {
          const row = this.intervalRow[i];
          const top = LANE_PAD + 18 + row * 16;
          if (local >= top && local < top + 16 && t >= m.intervals.start[i] && t <= m.intervals.start[i] + m.intervals.duration[i]) {
            return { ...hit, interval: i };
          }
        }
        return hit;
      }
      case "threadcount":
        return { ...hit, counts: true };
      default:
        return hit;
    }
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
      if (hit.item >= 0) this.reveal(`thread:${this.m.thread[hit.item]}`, this.m.start[hit.item], this.m.end[hit.item]);
    });
    window.addEventListener("keydown", (e) => this.onKey(e));
  }

  onWheel(e) {
    e.preventDefault();
    const scale = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? this.height : 1;
    const dx = e.deltaX * scale;
    const dy = e.deltaY * scale;
    if (e.offsetX < GUTTER || e.altKey) {
      this.scrollY += dy;
      this.clampScroll();
      this.requestDraw();
      return;
    }
    if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
      this.pan((e.shiftKey ? dy || dx : dx) / this.plotW);
      return;
    }
    this.zoomAround(this.timeAt(e.offsetX), Math.exp(dy * 0.0015));
  }

  onPointerDown(e) {
    if (e.button !== 0) return;
    this.canvas.focus();
    this.canvas.setPointerCapture(e.pointerId);
    this.drag = {
      x: e.offsetX, y: e.offsetY, v0: this.v0, v1: this.v1, scrollY: this.scrollY,
      range: e.shiftKey && e.offsetX >= GUTTER, moved: false,
    };
    if (this.drag.range) this.range = { t0: this.timeAt(e.offsetX), t1: this.timeAt(e.offsetX) };
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
      this.range.t1 = this.timeAt(clamp(e.offsetX, GUTTER, this.width));
      this.requestDraw();
      return;
    }
    this.canvas.classList.add("dragging");
    const shift = (-dx * (d.v1 - d.v0)) / this.plotW;
    this.v0 = d.v0 + shift;
    this.v1 = d.v1 + shift;
    this.scrollY = d.scrollY - dy;
    this.clampScroll();
    this.app.onViewChanged();
    this.requestDraw();
  }

  onPointerUp(e) {
    const d = this.drag;
    this.drag = null;
    this.canvas.classList.remove("dragging");
    if (!d) return;
    if (d.range && d.moved) {
      this.setRange(this.range.t0, this.range.t1);
      return;
    }
    if (d.moved) return;
    this.onClick(this.hitTest(e.offsetX, e.offsetY));
  }

  onClick(hit) {
    if (hit.area === "gutter") {
      const lane = hit.lane;
      if (lane.kind === "section" || ((lane.kind === "queue" || lane.kind === "task") && lane.hasChildren)) {
        this.toggleCollapsed(lane.key);
        if (lane.kind === "task") this.app.details.showTask(lane.obj);
      } else if (lane.kind === "task") this.app.details.showTask(lane.obj);
      else if (lane.kind === "queue") this.app.details.showQueue(lane.obj);
      else if (lane.kind === "thread") this.app.details.showThread(lane.obj);
      return;
    }
    if (hit.area !== "plot") return;
    if (hit.lane.kind === "section") {
      this.toggleCollapsed(hit.lane.key);
      return;
    }
    if (this.range) {
      this.range = null;
      this.requestDraw();
    }
    if (hit.blocked >= 0 && !(hit.item >= 0 && this.m.blocked.item[hit.blocked] < 0)) {
      this.selectBlocked(hit.blocked, false);
      return;
    }
    if (hit.item >= 0) this.select(hit.item);
    else if (hit.sourceRun >= 0) this.app.details.showSourceRun(hit.sourceRun);
    else if (hit.group >= 0) this.app.details.showGroup(hit.group);
    else this.select(-1);
  }

  setRange(t0, t1) {
    this.range = { t0: Math.min(t0, t1), t1: Math.max(t0, t1) };
    this.app.details.showRange(this.range.t0, this.range.t1);
    this.requestDraw();
  }

  onKey(e) {
    if (this.app.activeTab !== "timeline" || e.ctrlKey || e.metaKey) return;
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
    const centre = this.mouse && this.mouse.x > GUTTER ? this.timeAt(this.mouse.x) : (this.v0 + this.v1) / 2;
    switch (e.key.toLowerCase()) {
      case "w": this.zoomAround(centre, 0.7); break;
      case "s": this.zoomAround(centre, 1 / 0.7); break;
      case "a": this.pan(-0.15); break;
      case "d": this.pan(0.15); break;
      case "f": this.fit(); break;
      case "escape":
        this.range = null;
        this.highlight = null;
        this.app.clearFilter();
        this.select(-1);
        break;
      case "arrowdown": this.scrollY += 60; this.clampScroll(); this.requestDraw(); break;
      case "arrowup": this.scrollY -= 60; this.clampScroll(); this.requestDraw(); break;
      default: return;
    }
    e.preventDefault();
  }

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
    let x = this.mouse.x + 14, y = this.mouse.y + 16;
    if (x + w > this.width - 4) x = this.mouse.x - w - 12;
    if (y + h > this.height - 4) y = this.mouse.y - h - 10;
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  }

  hideTooltip() {
    this.tooltip.hidden = true;
  }

  /** Page coordinates of the middle of item i's box in its thread lane, or null if not visible. */
  itemScreenPoint(i) {
    const m = this.m;
    if (i < 0 || (m.flags[i] & FLAG_NEVER_STARTED)) return null;
    const y = this.itemThreadY(i);
    const t0 = Math.max(m.start[i], this.v0), t1 = Math.min(m.end[i], this.v1);
    if (y === null || t1 < t0 || y < AXIS_H || y > this.height) return null;
    const rect = this.canvas.getBoundingClientRect();
    return { x: rect.left + this.xOf((t0 + t1) / 2), y: rect.top + y };
  }

  /** For tests: lane names in order. */
  laneNames() {
    return this.lanes.map((l) => {
      const lane = { kind: l.kind, key: l.key, title: l.title, top: this.laneTop(l), height: l.height };
      if (l.count !== undefined) lane.count = l.count;
      // Where the scheduling strip is drawn (canvas px), for the browser tests.
      if (l.kind === "thread" && this.m.threadSched) lane.schedStrip = lane.top + LANE_PAD + l.rows * THREAD_ROW_H + 1;
      return lane;
    });
  }
}

function maxOfSeries(series) {
  if (!series) return [0];
  let best = 0;
  for (let k = 0; k < series.max.length; k++) if (series.max[k] > best) best = series.max[k];
  return [best];
}
