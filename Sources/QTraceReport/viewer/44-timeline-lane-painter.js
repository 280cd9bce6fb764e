// What each lane shows: its gutter (title, tree marker, colour) and its plot: a thread's items,
// blocked intervals and scheduling strip, a queue's backlog, pending and running items, the
// thread count, a task's jobs, an actor's visits, a source's fires and handler runs, groups,
// annotations, and a collapsed process group's summary. The boxes themselves are BoxPainter's.

import { fitText, fmtCount, hatchPattern, lowerBound, lowerBoundBy, MAIN_COLOR, SEVERITY_COLORS } from "./10-util.js";
import { backlogMaxOf, backlogOf, maxOfSeries, queuePendingTrack, queueRunTrack, sampleSteps } from "./30-model.js";
import { queueBacklogMax } from "./31-figures.js";
import { viewState } from "./36-state.js";
import { GUTTER } from "./41-timeline-view.js";
import {
  BACKLOG_H, LANE_PAD, QUEUE_PENDING_H, QUEUE_RUN_H, SCHED_STRIP_H, TASK_ROW_H, THREAD_ROW_H,
} from "./42-timeline-lanes.js";

/** Ready (a job enqueued, or a task waiting for an actor) and time on an actor. */
const READY_COLOR = "rgba(236, 167, 44, 0.75)";
const ACTOR_COLOR = "#4fb3a9";

export class LanePainter {
  /** Draws with `boxes` (a BoxPainter) into `ctx`, for the time in `view`, the lanes of `layout`. */
  constructor(model, ctx, view, layout, boxes) {
    this.m = model;
    this.ctx = ctx;
    this.view = view;
    this.layout = layout;
    this.boxes = boxes;
    this.threadMax = Math.max(model.meta.ncpu, ...maxOfSeries(model.threadCounters.alive));
    this.suspendedHatch = hatchPattern(ctx, "#4a5467", null);
  }

  drawLane(lane, y) {
    const ctx = this.ctx;
    const { width, plotW } = this.view;
    const highlighted = isHighlighted(lane);
    if (lane.kind === "section") {
      this.drawSection(lane, y);
      return;
    }
    // Plot background, separators.
    ctx.fillStyle = "#0f141b";
    ctx.fillRect(GUTTER, y, plotW, lane.height);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER, y, plotW, lane.height);
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
    ctx.fillRect(0, y + lane.height - 1, width, 1);
    this.drawGutter(lane, y, highlighted);
  }

  /** A section's header, or a process group's (which keeps the program's name as it is: untrusted text, drawn as text). */
  drawSection(lane, y) {
    const ctx = this.ctx;
    const width = this.view.width;
    const isProcess = lane.process !== undefined;
    const title = isProcess ? lane.title : lane.title.toUpperCase();
    ctx.fillStyle = isProcess ? "#1c2433" : "#161c26";
    ctx.fillRect(0, y, width, lane.height);
    ctx.fillStyle = "#283142";
    ctx.fillRect(0, y + lane.height - 1, width, 1);
    const collapsed = this.layout.collapsed.has(lane.key);
    ctx.fillStyle = isProcess ? "#c9d4e5" : "#8d98aa";
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.fillText(`${collapsed ? "▸" : "▾"}  ${title}`, 10, y + lane.height / 2 + 0.5);
    const countX = 26 + ctx.measureText(title).width + 22;
    ctx.fillStyle = "#5d687a";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(String(lane.count), countX, y + lane.height / 2 + 0.5);
  }

  drawGutter(lane, y, highlighted) {
    const ctx = this.ctx;
    const collapsed = this.layout.collapsed;
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
        ctx.fillText(collapsed.has(lane.key) ? "▸" : "▾", x - 2, y + 11);
      }
      x += 10;
    } else if (lane.kind === "queue") {
      if (lane.hasChildren) {
        ctx.fillStyle = "#8d98aa";
        ctx.font = "10px system-ui, sans-serif";
        ctx.fillText(collapsed.has(lane.key) ? "▸" : "▾", x - 2, y + 12);
      }
      x += 10;
      ctx.fillStyle = this.boxes.colors[lane.obj];
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
    const backlogMax = lane.kind === "queue" && lane.backlog ? queueBacklogMax(this.m, lane.obj) : undefined;
    if (typeof backlogMax === "number" && lane.height >= 40) {  // the Queues table's figure
      ctx.fillStyle = "#6b778a";
      ctx.font = "10px system-ui, sans-serif";
      ctx.fillText(`backlog ≤ ${fmtCount(backlogMax)}`, x, y + 38);
    }
  }

  drawThreadLane(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const view = this.view;
    const t = lane.obj;
    const thread = m.threads[t];
    // The thread exists only during its lifetime: lighter band, edges marked.
    const x0 = Math.max(GUTTER, view.xOf(thread.start));
    const x1 = Math.min(GUTTER + view.plotW, view.xOf(thread.end));
    if (x1 > x0) {
      ctx.fillStyle = "#151c26";
      ctx.fillRect(x0, y + 1, x1 - x0, lane.height - 3);
      ctx.fillStyle = "#3a475c";
      if (thread.start > view.v0) ctx.fillRect(view.xOf(thread.start), y + 1, 1.5, lane.height - 3);
      if (thread.end < view.v1 && thread.end < m.duration) ctx.fillRect(view.xOf(thread.end) - 1, y + 1, 1.5, lane.height - 3);
    }
    const top = y + LANE_PAD;
    this.boxes.drawBoxes(m.threadRun[t], top, THREAD_ROW_H, lane.rows, "run");
    this.boxes.drawBoxes(m.threadBlocked[t], top, lane.rows * THREAD_ROW_H, 1, "blocked");
    if (m.threadSched) this.boxes.drawBoxes(m.threadSched[t], top + lane.rows * THREAD_ROW_H + 1, SCHED_STRIP_H - 1, 1, "sched");
  }

  drawQueueLane(lane, y) {
    const m = this.m;
    const q = lane.obj;
    let top = y + LANE_PAD;
    if (lane.backlog) {
      this.boxes.drawCounterArea(backlogOf(m, q), top, BACKLOG_H - 2, backlogMaxOf(m, q), this.boxes.pendingColors[q]);
      top += BACKLOG_H;
    }
    if (lane.pendingRows) {
      this.boxes.drawBoxes(queuePendingTrack(m, q), top, QUEUE_PENDING_H, lane.pendingRows, "pending");
      top += lane.pendingRows * QUEUE_PENDING_H + 2;
    }
    this.boxes.drawBoxes(queueRunTrack(m, q), top, QUEUE_RUN_H, lane.runRows, "queue");
  }

  drawThreadCount(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const { v0, v1, plotW } = this.view;
    const width = Math.ceil(plotW);
    const { alive, running, blocked } = m.threadCounters;
    const top = y + 6;
    const height = lane.height - 12;
    const max = this.threadMax;
    const a = sampleSteps(alive, v0, v1, width);
    const r = running ? sampleSteps(running, v0, v1, width) : null;
    const b = blocked ? sampleSteps(blocked, v0, v1, width) : null;
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
    ctx.lineTo(GUTTER + plotW, Math.round(cpuY) + 0.5);
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
    pill(`${m.meta.ncpu} CPUs`, GUTTER + plotW - 60, cpuY);
    pill(`max ${max}`, GUTTER + 4, top + 5);
  }

  /**
   * A task's states: suspended (a thin line between its jobs: awaiting), ready (amber: a job
   * enqueued, waiting for a thread or an actor) and running (its jobs as boxes).
   */
  drawTaskLane(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const view = this.view;
    const t = lane.obj;
    const [first, last] = m.taskSpan[t];
    const top = y + LANE_PAD;
    const x0 = Math.max(GUTTER, view.xOf(first)), x1 = Math.min(GUTTER + view.plotW, view.xOf(last));
    if (x1 > x0) {
      ctx.fillStyle = "#4a5568";
      ctx.fillRect(x0, top + TASK_ROW_H / 2, x1 - x0, 1.5);
    }
    this.boxes.drawSpans(m.taskReady[t], top + 3, TASK_ROW_H - 6, READY_COLOR);
    this.boxes.drawBoxes(m.taskTrack[t], top, TASK_ROW_H, 1, "task");
  }

  /** An actor's visits: the waiting part in amber, then the time the task ran on it. */
  drawActorLane(lane, y) {
    const m = this.m;
    const table = m.actorVisitTable;
    const rows = m.actorVisits[lane.obj];
    if (!table || !rows || !rows.length) return;
    const ctx = this.ctx;
    const view = this.view;
    const top = y + LANE_PAD;
    const start = table.start, duration = table.duration, wait = table.wait;
    const left = GUTTER, right = GUTTER + view.plotW;
    // Waits first, runs on top: visits overlap while tasks queue for the actor, and what ran
    // on it must stay visible.
    for (const pass of ["wait", "run"]) {
      ctx.fillStyle = pass === "wait" ? READY_COLOR : ACTOR_COLOR;
      for (const r of rows) {
        const s = start[r], e = s + duration[r];
        if (e < view.v0) continue;
        if (s > view.v1) break;
        const xs = Math.max(left, view.xOf(s)), xw = Math.min(right, view.xOf(s + wait[r])), xe = Math.min(right, view.xOf(e));
        if (pass === "wait" && xw > xs) ctx.fillRect(xs, top + 3, Math.max(1, xw - xs), TASK_ROW_H - 6);
        if (pass === "run") ctx.fillRect(Math.max(xs, xw), top, Math.max(1, xe - Math.max(xs, xw)), TASK_ROW_H);
      }
    }
  }

  drawSourceLane(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const view = this.view;
    const s = lane.obj;
    const source = m.sources[s];
    for (const [a, b] of source.suspended) {
      const x0 = Math.max(GUTTER, view.xOf(a)), x1 = Math.min(GUTTER + view.plotW, view.xOf(b));
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
    const lo = lowerBoundBy((k) => times[events[k]], view.v0, 0, events.length);
    for (let k = lo; k < events.length; k++) {
      const t = times[events[k]];
      if (t > view.v1) break;
      const x = Math.round(view.xOf(t));
      if (x === lastX) continue;
      lastX = x;
      ctx.fillRect(x, y + 3, 1, 7);
    }
    this.boxes.drawBoxes(m.sourceRun[s], y + 13, 20, 1, "source");
    // Coalesced handler runs: mark data > 1.
    const runs = m.sourceRun[s];
    const [a, b] = runs.range(view.v0, view.v1);
    if (b - a < 2000) {
      ctx.font = "bold 10px system-ui, sans-serif";
      for (let k = a; k < b; k++) {
        const i = runs.idx[k];
        if (m.sourceRuns.data[i] <= 1) continue;
        const x = view.xOf(m.sourceRuns.start[i]);
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
      const x = view.xOf(source.cancel);
      ctx.fillStyle = "#ff6b6b";
      ctx.fillRect(x - 1, y + 2, 2, lane.height - 5);
    }
  }

  drawGroups(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const view = this.view;
    const { groupRow, groupRows } = this.layout;
    ctx.font = "10.5px system-ui, sans-serif";
    // Per row, how far right something is drawn: a group within a pixel of the one before it
    // on its row is not drawn again (200k groups zoomed out: a few thousand drawn).
    const drawnTo = new Float64Array(groupRows).fill(-Infinity);
    m.groups.forEach((g, i) => {
      const end = Math.max(g.lastLeave, g.notify);
      if (end < view.v0 || g.firstEnter > view.v1) return;
      const row = groupRow[i];
      const top = y + LANE_PAD + row * 16;
      const x0 = view.xOf(g.firstEnter);
      const x1 = view.xOf(g.lastLeave);
      const right = view.xOf(end);
      if (right - x0 < 1 && x0 < drawnTo[row] + 1) return;
      drawnTo[row] = Math.max(drawnTo[row], right);
      const highlight = viewState.highlight;
      const highlighted = highlight && highlight.groups && highlight.groups.has(i);
      ctx.fillStyle = highlighted ? "#6e5a1e" : "#2d3a4f";
      ctx.fillRect(x0, top + 2, Math.max(1, x1 - x0), 11);
      ctx.fillStyle = "#7d93b8";
      ctx.fillRect(x0, top + 2, 1.5, 11);
      if (g.notify >= 0) {
        const xn = view.xOf(g.notify);
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
    const view = this.view;
    const marks = m.marks;
    ctx.font = "10.5px system-ui, sans-serif";
    const lo = lowerBound(marks.time, view.v0);
    let lastLabelEnd = -Infinity;
    for (let k = lo; k < marks.rows && marks.time[k] <= view.v1; k++) {
      const x = view.xOf(marks.time[k]);
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
      if (t1 < view.v0 || t0 > view.v1) continue;
      const top = y + LANE_PAD + 18 + this.layout.intervalRow[i] * 16;
      const x0 = view.xOf(t0), x1 = view.xOf(t1);
      ctx.fillStyle = "#3b3358";
      ctx.fillRect(x0, top + 1, Math.max(1, x1 - x0), 13);
      ctx.fillStyle = "#8e7cc3";
      ctx.fillRect(x0, top + 1, Math.max(1, x1 - x0), 2);
      if (x1 - x0 > 30) {
        ctx.fillStyle = "#e2dcf5";
        const vx = Math.max(x0, GUTTER);
        ctx.fillText(fitText(m.strings[iv.name[i]] || "", Math.min(x1, GUTTER + view.plotW) - vx - 8, 6), vx + 4, top + 8.5);
      }
    }
  }

  /**
   * A collapsed group's lane: the process's life as a faint band and its running threads over
   * it (scaled to its own peak), so where each process worked shows without expanding it.
   */
  drawProcessSummary(lane, y) {
    const m = this.m, ctx = this.ctx, view = this.view;
    const process = m.processes[lane.process];
    const x0 = Math.max(GUTTER, view.xOf(process.offset || 0));
    const x1 = Math.min(GUTTER + view.plotW, view.xOf((process.offset || 0) + process.durationNs));
    if (x1 > x0) {
      ctx.fillStyle = "#19212d";
      ctx.fillRect(x0, y + 3, Math.max(1, x1 - x0), lane.height - 6);
    }
    const series = m.processRunning[lane.process];
    if (!series) return;
    const width = Math.ceil(view.plotW);
    const values = sampleSteps(series, view.v0, view.v1, width);
    const max = Math.max(1, process.peakThreadsAlive > 0 ? process.peakThreadsAlive : maxOfSeries(series)[0]);
    const height = lane.height - 8, bottom = y + lane.height - 4;
    ctx.fillStyle = "#3fb950";
    for (let x = 0; x < width; x++) {
      const v = values[x];
      if (!(v > 0)) continue;
      const h = Math.max(1, (Math.min(v, max) / max) * height);
      ctx.fillRect(GUTTER + x, bottom - h, 1, h);
    }
  }
}

/** Whether the followed finding names this lane's thread or queue. */
function isHighlighted(lane) {
  const h = viewState.highlight;
  if (!h) return false;
  if (lane.kind === "thread") return h.threads.has(lane.obj);
  if (lane.kind === "queue") return h.queues.has(lane.obj);
  return false;
}
