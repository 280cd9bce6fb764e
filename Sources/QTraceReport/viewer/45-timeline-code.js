// The timeline's code-identity parts, added to the Timeline class: the Tasks lane group (one
// lane per Swift task, children indented under their parent; jobs as boxes on a thin line
// that spans the task's life, so the gaps read as awaiting) and the item filter (search,
// a Code row, a finding's site) that dims everything it does not match.

import { fmtDuration, lowerBound, upperBound } from "./10-util.js";
import { taskSubtitle, taskTitle } from "./35-code.js";
import { viewState } from "./36-state.js";
import { GUTTER, LANE_PAD, Timeline } from "./40-timeline-layout.js";

const TASK_ROW_H = 12;
const TASK_LANE_H = LANE_PAD * 2 + TASK_ROW_H + 2;
/** Ready (a job enqueued, or a task waiting for an actor) and time on an actor. */
const READY_COLOR = "rgba(236, 167, 44, 0.75)";
const ACTOR_COLOR = "#4fb3a9";
/** How strongly what a filter leaves out is drawn. */
const FILTER_DIM_ALPHA = 0.18;

Object.assign(Timeline.prototype, {
  // MARK: Task lanes

  addTaskLanes(lanes, section) {
    const m = this.m;
    if (!m.tasks.length || section("tasks", "Tasks", m.tasks.length)) return;
    for (const entry of this.taskTreeOrder()) lanes.push(this.taskLane(entry));
  },

  taskLane({ t, depth, hasChildren }) {
    const m = this.m;
    return {
      // The lane is one row high: its async functions follow the title on the same line.
      kind: "task", key: `task:${t}`, obj: t, title: [taskTitle(m, t), taskSubtitle(m, t)].filter(Boolean).join(" · "),
      subtitle: taskSubtitle(m, t),
      depth, hasChildren, height: TASK_LANE_H,
    };
  },

  /** Tasks depth-first: each parent followed by its children (unless collapsed). */
  taskTreeOrder() {
    const tasks = this.m.tasks;
    const children = tasks.map(() => []);
    const roots = [];
    tasks.forEach((task, t) => {
      if (task.parent >= 0 && task.parent < tasks.length && task.parent !== t) children[task.parent].push(t);
      else roots.push(t);
    });
    const out = [];
    const seen = new Uint8Array(tasks.length);
    const visit = (t, depth) => {
      if (seen[t]) return;
      seen[t] = 1;
      out.push({ t, depth: Math.min(depth, 8), hasChildren: children[t].length > 0 });
      if (this.collapsed.has(`task:${t}`)) return;
      for (const c of children[t]) visit(c, depth + 1);
    };
    roots.forEach((t) => visit(t, 0));
    // A parent cycle has no root: show its tasks anyway (a collapsed parent hides its own).
    tasks.forEach((_, t) => { if (!seen[t] && !this.hiddenByCollapsedParent(t)) visit(t, 0); });
    return out;
  },

  hiddenByCollapsedParent(t) {
    const tasks = this.m.tasks;
    for (let p = tasks[t].parent, guard = 0; p >= 0 && guard < 64; p = tasks[p].parent, guard++) {
      if (this.collapsed.has(`task:${p}`)) return true;
    }
    return false;
  },

  /**
   * A task's states: suspended (a thin line between its jobs: awaiting), ready (amber: a job
   * enqueued, waiting for a thread or an actor) and running (its jobs as boxes).
   */
  drawTaskLane(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const t = lane.obj;
    const [first, last] = m.taskSpan[t];
    const top = y + LANE_PAD;
    const x0 = Math.max(GUTTER, this.xOf(first)), x1 = Math.min(GUTTER + this.plotW, this.xOf(last));
    if (x1 > x0) {
      ctx.fillStyle = "#4a5568";
      ctx.fillRect(x0, top + TASK_ROW_H / 2, x1 - x0, 1.5);
    }
    this.drawSpans(m.taskReady[t], top + 3, TASK_ROW_H - 6, READY_COLOR);
    this.drawBoxes(m.taskTrack[t], top, TASK_ROW_H, 1, "task");
  },

  /** Plain spans of a BoxTrack in one colour (sub-pixel neighbours merged). */
  drawSpans(track, top, height, color) {
    if (!track || !track.length) return;
    const [lo, hi] = track.range(this.v0, this.v1);
    const ctx = this.ctx;
    ctx.fillStyle = color;
    let runX0 = -1, runX1 = -1;
    for (let k = lo; k < hi; k++) {
      const i = track.idx[k];
      const a = Math.max(GUTTER, this.xOf(track.begin[i])), b = Math.min(GUTTER + this.plotW, this.xOf(track.end[i]));
      if (b < a) continue;
      if (runX1 >= 0 && a <= runX1 + 1) { runX1 = Math.max(runX1, b); continue; }
      if (runX1 >= 0) ctx.fillRect(runX0, top, Math.max(1, runX1 - runX0), height);
      runX0 = a; runX1 = b;
    }
    if (runX1 >= 0) ctx.fillRect(runX0, top, Math.max(1, runX1 - runX0), height);
  },

  // MARK: Actor lanes

  addActorLanes(lanes, section) {
    const m = this.m;
    if (!m.actors.length || section("actors", "Actors", m.actors.length)) return;
    m.actors.forEach((a, i) => lanes.push({
      kind: "actor", key: `actor:${i}`, obj: i, title: `actor ${a.name}`,
      subtitle: `${a.visits} visits · waited ${fmtDuration(a.waitNs)} · peak queue ${a.peakQueueDepth}`,
      height: TASK_LANE_H,
    }));
  },

  /** An actor's visits: the waiting part in amber, then the time the task ran on it. */
  drawActorLane(lane, y) {
    const m = this.m;
    const table = m.actorVisitTable;
    const rows = m.actorVisits[lane.obj];
    if (!table || !rows || !rows.length) return;
    const ctx = this.ctx;
    const top = y + LANE_PAD;
    const start = table.start, duration = table.duration, wait = table.wait;
    const left = GUTTER, right = GUTTER + this.plotW;
    // Waits first, runs on top: visits overlap while tasks queue for the actor, and what ran
    // on it must stay visible.
    for (const pass of ["wait", "run"]) {
      ctx.fillStyle = pass === "wait" ? READY_COLOR : ACTOR_COLOR;
      for (const r of rows) {
        const s = start[r], e = s + duration[r];
        if (e < this.v0) continue;
        if (s > this.v1) break;
        const xs = Math.max(left, this.xOf(s)), xw = Math.min(right, this.xOf(s + wait[r])), xe = Math.min(right, this.xOf(e));
        if (pass === "wait" && xw > xs) ctx.fillRect(xs, top + 3, Math.max(1, xw - xs), TASK_ROW_H - 6);
        if (pass === "run") ctx.fillRect(Math.max(xs, xw), top, Math.max(1, xe - Math.max(xs, xw)), TASK_ROW_H);
      }
    }
  },

  // MARK: Filters (the filter itself is viewState.filter, set by App.setFilter)

  /** The mask a box style is filtered by, or null (drawn as usual). */
  filterMaskFor(style) {
    const f = viewState.filter;
    if (!f) return null;
    if (style === "blocked") return f.blocked;
    if (style === "run" || style === "queue" || style === "pending" || style === "task") return f.items;
    return null;
  },

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
    if (hi - lo > this.plotW * 2) this.drawMaskedPixels(track, lo, hi, top, rowH, maxRows, style, mask);
    else this.drawRawBoxes(track, lo, hi, top, rowH, maxRows, style, mask);
  },

  /**
   * Many boxes in view: the matching ones painted into one colour per pixel column and row
   * first, then drawn as runs, so a frame costs at most a rectangle per pixel and row
   * however many items match.
   */
  drawMaskedPixels(track, lo, hi, top, rowH, maxRows, style, mask) {
    const width = Math.ceil(this.plotW);
    const rows = Math.min(maxRows, 16);
    if (!this.pixelColors || this.pixelColors.length < rows * width) this.pixelColors = new Int32Array(rows * width);
    const colors = this.pixelColors;
    colors.fill(-1, 0, rows * width);
    const v0 = this.v0, scale = this.plotW / (this.v1 - v0);
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
  },

  /** The next matching item after the selection (or the view's middle), wrapping around. */
  nextFilterMatch() {
    const f = viewState.filter;
    if (!f || !f.rows || !f.rows.length) return -1;
    const selected = viewState.selection.item;
    const after = selected >= 0 ? selected : lowerBound(this.m.start, (this.v0 + this.v1) / 2) - 1;
    const k = upperBound(f.rows, after);
    return f.rows[k < f.rows.length ? k : 0];
  },
});
