// A report of several processes in the timeline, added to the Timeline class: a lane group per
// process (a header, then its threads, queues and sources), busiest process first (the analysis' busy
// time of its threads). Beyond a few processes the groups start collapsed, each one summary
// lane (its running threads over its life), so 50 processes take 50 short lanes, not a wall.
// The process picker (48-process-picker.js) hides and shows groups.

import { fmtCount, fmtDuration } from "./10-util.js";
import { maxOfSeries, sampleSteps } from "./30-model.js";
import { queuesCounted } from "./31-figures.js";
import { GUTTER, SECTION_H, sourceProcess, Timeline } from "./40-timeline-layout.js";

/** More processes than this: only the busiest group starts expanded. */
const PROCESSES_EXPANDED_MAX = 4;
const PROCESS_LANE_H = 30;

Object.assign(Timeline.prototype, {
  /** The groups' order (busiest first), the hidden set, and which groups start collapsed. */
  initProcesses() {
    const m = this.m;
    this.hiddenProcesses = new Set();
    this.processOrder = processesByActivity(m);
    if (m.processes.length > PROCESSES_EXPANDED_MAX) {
      this.processOrder.slice(1).forEach((p) => this.collapsed.add(`section:process:${p}`));
    }
  },

  /** The lane group of every shown process, in processOrder. */
  addProcessLanes(lanes) {
    const m = this.m;
    const threadsOf = m.processes.map(() => []), queuesOf = m.processes.map(() => []);
    for (const t of this.threadOrder()) threadsOf[m.threads[t].process]?.push(t);
    for (const entry of this.queueTreeOrder()) queuesOf[m.queues[entry.q].process]?.push(entry);
    const sourcesOf = m.processes.map(() => []);
    m.sources.forEach((_, i) => sourcesOf[sourceProcess(m, i)]?.push(i));
    const queuesCounted = queueCountsByProcess(m);
    for (const p of this.processOrder) {
      if (this.hiddenProcesses.has(p)) continue;
      const key = `section:process:${p}`;
      const count = `${threadsOf[p].length} threads · ${queuesCounted[p]} queues`;
      if (this.collapsed.has(key)) {
        lanes.push({ kind: "process", key, process: p, title: m.processes[p].title, count,
          subtitle: processSubtitle(m, p), height: PROCESS_LANE_H });
        continue;
      }
      lanes.push({ kind: "section", key, process: p, title: m.processes[p].title, count, height: SECTION_H });
      threadsOf[p].forEach((t) => lanes.push(this.threadLane(t)));
      queuesOf[p].forEach((entry) => lanes.push(this.queueLane(entry)));
      sourcesOf[p].forEach((i) => lanes.push(this.sourceLane(i)));
    }
  },

  /** Shows exactly the processes in `shown` (indexes); the others' groups leave the timeline. */
  setShownProcesses(shown) {
    const keep = new Set(shown);
    this.hiddenProcesses = new Set(this.m.processes.map((_, p) => p).filter((p) => !keep.has(p)));
    this.buildLanes();
    this.requestDraw();
    this.app.processPicker?.sync();
  },

  /** Expands process p's group (shown again if hidden) and scrolls to it. */
  revealProcess(p) {
    this.hiddenProcesses.delete(p);
    this.collapsed.delete(`section:process:${p}`);
    this.reveal(`section:process:${p}`);
    this.app.processPicker?.sync();
  },

  /**
   * A collapsed group's lane: the process's life as a faint band and its running threads over
   * it (scaled to its own peak), so where each process worked shows without expanding it.
   */
  drawProcessSummary(lane, y) {
    const m = this.m, ctx = this.ctx;
    const process = m.processes[lane.process];
    const x0 = Math.max(GUTTER, this.xOf(process.offset || 0));
    const x1 = Math.min(GUTTER + this.plotW, this.xOf((process.offset || 0) + process.durationNs));
    if (x1 > x0) {
      ctx.fillStyle = "#19212d";
      ctx.fillRect(x0, y + 3, Math.max(1, x1 - x0), lane.height - 6);
    }
    const series = m.processRunning[lane.process];
    if (!series) return;
    const width = Math.ceil(this.plotW);
    const values = sampleSteps(series, this.v0, this.v1, width);
    const max = Math.max(1, process.peakThreadsAlive > 0 ? process.peakThreadsAlive : maxOfSeries(series)[0]);
    const height = lane.height - 8, bottom = y + lane.height - 4;
    ctx.fillStyle = "#3fb950";
    for (let x = 0; x < width; x++) {
      const v = values[x];
      if (!(v > 0)) continue;
      const h = Math.max(1, (Math.min(v, max) / max) * height);
      ctx.fillRect(GUTTER + x, bottom - h, 1, h);
    }
  },
});

/** Process indexes, most busy time first (ties: the order given). */
function processesByActivity(m) {
  const busy = (p) => (m.processes[p].busy > 0 ? m.processes[p].busy : 0);
  return m.processes.map((_, p) => p).sort((a, b) => busy(b) - busy(a) || a - b);
}

/** How many queues the analysis found in each process (one pass over the queues). */
function queueCountsByProcess(m) {
  const counts = m.processes.map(() => 0);
  m.queues.forEach((q, i) => { if (m.queueCounted[i] && counts[q.process] !== undefined) counts[q.process]++; });
  return counts;
}

/** A collapsed group's second line: the analysis' figures of the process. */
export function processSubtitle(m, p) {
  const process = m.processes[p];
  const parts = [fmtDuration(process.durationNs)];
  if (process.items >= 0) parts.push(`${fmtCount(process.items)} items`);
  if (process.threads >= 0) parts.push(`${fmtCount(process.threads)} threads`);
  if (process.findings > 0) parts.push(`${fmtCount(process.findings)} findings`);
  return parts.join(" · ");
}
