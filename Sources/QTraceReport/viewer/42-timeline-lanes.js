// The timeline's lanes, top to bottom: threads (main first, then by start), queues depth-first
// through the target-queue tree, Swift tasks (children under their parent) and actors, sources,
// groups and annotations, each kind under a collapsible section. A report of several processes
// has a lane group per process instead (its threads, queues and sources), busiest process
// first; beyond a few processes the groups start collapsed, each one summary lane, and the
// process picker (48-process-picker.js) hides and shows them. LaneLayout holds what is
// collapsed or hidden and each lane's place; it knows nothing of drawing.

import { fmtCount, fmtDuration, upperBoundBy } from "./10-util.js";
import { hasBacklog, queueLabel, threadName } from "./30-model.js";
import { queueCount } from "./31-figures.js";
import { taskSubtitle, taskTitle } from "./35-code.js";

const SECTION_H = 24;
export const THREAD_ROW_H = 16;
export const QUEUE_RUN_H = 14;
export const QUEUE_PENDING_H = 5;
export const BACKLOG_H = 14;
const COUNT_H = 58;
export const LANE_PAD = 4;
/** The scheduling-state strip under each thread lane (traces recorded with --sched). */
export const SCHED_STRIP_H = 6;
export const TASK_ROW_H = 12;
const TASK_LANE_H = LANE_PAD * 2 + TASK_ROW_H + 2;
const PROCESS_LANE_H = 30;
/** More queues than this: the subtrees of more than QUEUE_CHILDREN_EXPANDED_MAX queues start
 * collapsed, so 100k short-lived queues under a few targets are a few lanes until expanded. */
const QUEUE_LANES_EXPANDED_MAX = 2000;
const QUEUE_CHILDREN_EXPANDED_MAX = 50;
/** More tasks than this: the Tasks group starts collapsed. */
const TASKS_EXPANDED_MAX = 50;
/** More processes than this: only the busiest group starts expanded. */
const PROCESSES_EXPANDED_MAX = 4;

export class LaneLayout {
  /** `view` (a TimeView) is told the lanes' height and gives their screen y. */
  constructor(model, view) {
    this.m = model;
    this.view = view;
    /** Keys of the collapsed sections, queue subtrees, task subtrees and process groups. */
    this.collapsed = new Set();
    if (model.tasks.length > TASKS_EXPANDED_MAX) this.collapsed.add("section:tasks");
    this.initProcesses();
    this.foldLargeSubtrees();
    this.packGroups();
    this.packIntervals();
    this.build();
  }

  // MARK: Lanes

  build() {
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
    this.view.setContentHeight(y);
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

  /** The thread lanes in the writer's order (the header's threadOrder: main first, idle threads last). */
  threadOrder() {
    return this.m.threadOrder;
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
    this.build();
  }

  /** Collapse every queue subtree, or expand them all if any is collapsed. */
  toggleTree() {
    const parents = this.m.queues.map((q) => q.target).filter((t) => t >= 0);
    const keys = [...new Set(parents)].map((q) => `queue:${q}`);
    const anyCollapsed = keys.some((k) => this.collapsed.has(k));
    keys.forEach((k) => (anyCollapsed ? this.collapsed.delete(k) : this.collapsed.add(k)));
    this.build();
  }

  /** Expands whatever hides the lane `key` (its section, process group, parent task or target queues). */
  expandTo(key) {
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
    this.build();
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

  // MARK: Task and actor lanes

  addTaskLanes(lanes, section) {
    const m = this.m;
    if (!m.tasks.length || section("tasks", "Tasks", m.tasks.length)) return;
    for (const entry of this.taskTreeOrder()) lanes.push(this.taskLane(entry));
  }

  taskLane({ t, depth, hasChildren }) {
    const m = this.m;
    return {
      // The lane is one row high: its async functions follow the title on the same line.
      kind: "task", key: `task:${t}`, obj: t, title: [taskTitle(m, t), taskSubtitle(m, t)].filter(Boolean).join(" · "),
      subtitle: taskSubtitle(m, t),
      depth, hasChildren, height: TASK_LANE_H,
    };
  }

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
  }

  hiddenByCollapsedParent(t) {
    const tasks = this.m.tasks;
    for (let p = tasks[t].parent, guard = 0; p >= 0 && guard < 64; p = tasks[p].parent, guard++) {
      if (this.collapsed.has(`task:${p}`)) return true;
    }
    return false;
  }

  addActorLanes(lanes, section) {
    const m = this.m;
    if (!m.actors.length || section("actors", "Actors", m.actors.length)) return;
    m.actors.forEach((a, i) => lanes.push({
      kind: "actor", key: `actor:${i}`, obj: i, title: `actor ${a.name}`,
      subtitle: `${a.visits} visits · waited ${fmtDuration(a.waitNs)} · peak queue ${a.peakQueueDepth}`,
      height: TASK_LANE_H,
    }));
  }

  // MARK: Process groups

  /** The groups' order (busiest first), the hidden set, and which groups start collapsed. */
  initProcesses() {
    const m = this.m;
    this.hiddenProcesses = new Set();
    this.processOrder = processesByActivity(m);
    if (m.processes.length > PROCESSES_EXPANDED_MAX) {
      this.processOrder.slice(1).forEach((p) => this.collapsed.add(`section:process:${p}`));
    }
  }

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
  }

  /** Shows exactly the processes in `shown` (indexes); the others' groups leave the timeline. */
  setShownProcesses(shown) {
    const keep = new Set(shown);
    this.hiddenProcesses = new Set(this.m.processes.map((_, p) => p).filter((p) => !keep.has(p)));
    this.build();
  }

  /** Shows process p's group again, expanded. */
  showProcess(p) {
    this.hiddenProcesses.delete(p);
    this.collapsed.delete(`section:process:${p}`);
  }

  // MARK: Geometry

  /** [first, end) of the lanes overlapping content heights [y0, y1] (lanes are in y order). */
  lanesBetween(y0, y1) {
    const lanes = this.lanes;
    const first = upperBoundBy((k) => lanes[k].y + lanes[k].height, y0, 0, lanes.length);
    const end = upperBoundBy((k) => lanes[k].y, y1, first, lanes.length);
    return [first, end];
  }

  /** The lane at content height y, or null. */
  laneAt(y) {
    const [k] = this.lanesBetween(y, y);
    return k < this.lanes.length && this.lanes[k].y <= y ? this.lanes[k] : null;
  }

  /** Screen y of a lane's top. */
  laneTop(lane) {
    return this.view.screenY(lane.y);
  }

  /** Centre y of item i's box in its thread lane (or null if not shown). */
  itemThreadY(i) {
    const lane = this.laneByKey.get(`thread:${this.m.thread[i]}`);
    if (!lane) return null;
    const row = Math.min(this.m.depth[i], lane.rows - 1);
    return this.laneTop(lane) + LANE_PAD + row * THREAD_ROW_H + THREAD_ROW_H / 2;
  }

  /** Centre y of item i's box in its queue lane (its running row, or with `pending` its pending row). */
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

/** Process indexes, most busy time first (ties: the order given). */
function processesByActivity(m) {
  const busy = (p) => (m.processes[p].busy > 0 ? m.processes[p].busy : 0);
  return m.processes.map((_, p) => p).sort((a, b) => busy(b) - busy(a) || a - b);
}

/** The process of source i (its queue's), or -1. */
function sourceProcess(m, i) {
  const queue = m.queues[m.sources[i].queue];
  return queue && queue.process >= 0 ? queue.process : -1;
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
