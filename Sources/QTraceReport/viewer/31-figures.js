// The analysis' figures in the model (docs/report-data.md, Definitions): each queue's and
// thread's items, busy and blocked time, the target-queue forest, a Stats table's cell, and
// each queue's busy time within a chosen range. Every report carries the analysis' figures
// (ReportWriter refuses an input without them): the viewer shows them and computes only what
// depends on the user's selection.

import { lowerBound, upperBound } from "./10-util.js";
import { FLAG_NEVER_STARTED, statsCell } from "./30-model.js";

/** Per queue: items, busy ns and share of the trace; per thread: items, busy and blocked ns. */
export function setFigures(m) {
  m.queueItems = m.queues.map((q) => q.items);
  m.threadItems = m.threads.map((t) => t.items);
  m.queueBusy = m.queues.map((q) => q.busy);
  m.queueShare = m.queues.map((q) => q.busyShare);
  m.threadBusy = m.threads.map((t) => t.busy);
  m.threadBlockedNs = m.threads.map((t) => t.blocked);
  m.queueForest = queueForest(m);
  m.queueCounted = queuesCounted(m);
}

/**
 * The queues `qtrace stats` counts: those of the analysis' forest, not the report's placeholder
 * for items of no recorded queue (which has figures, but no place in the forest).
 */
function queuesCounted(m) {
  const tree = m.tables.queueTree;
  const counted = m.queues.map(() => false);
  for (let k = 0; k < (tree ? tree.rows : 0); k++) if (tree.queue[k] >= 0 && tree.queue[k] < counted.length) counted[tree.queue[k]] = true;
  return counted;
}

/** How many queues the analysis found. */
export function queueCount(m) {
  return m.queues.filter((q, i) => m.queueCounted[i]).length;
}

/** The analysis' backlog max of queue q (its Queues table row; undefined without one), looked
 *  up once per queue: lanes ask for it every frame. */
export function queueBacklogMax(m, q) {
  if (!m.backlogMaxShown) m.backlogMaxShown = new Map();
  if (!m.backlogMaxShown.has(q)) m.backlogMaxShown.set(q, statsValue(m, "queues", q, "backlogMax"));
  return m.backlogMaxShown.get(q);
}

/** A figure of the Stats tables (object's row, column key), or undefined: details show it as is. */
export function statsValue(m, tableId, object, key) {
  const table = m.header.stats.find((t) => t.id === tableId);
  if (!table) return undefined;
  const k = table.columns.findIndex((c) => c.key === key);
  if (k < 0) return undefined;
  // A column table: one search of its object column, not every row built.
  const t = table.table ? m.tables[table.table] : null;
  if (t) {
    const r = t.object.indexOf(object);
    return r >= 0 ? statsCell(t, r, k) : undefined;
  }
  const row = table.rows.find((r) => r.object === object);
  return row ? row.values[k] : undefined;
}

/**
 * Each queue's busy time within [t0, t1]: the time with at least one of its items running
 * (overlapping items count once). Items are in start order, so a frontier per queue suffices.
 */
export function queueBusyInRange(m, t0, t1) {
  const busy = new Float64Array(m.queues.length);
  const frontier = new Float64Array(m.queues.length).fill(-Infinity);
  const hi = upperBound(m.start, t1);
  const lo = lowerBound(m.prefixMaxEnd, t0, 0, hi);
  for (let i = lo; i < hi; i++) {
    const q = m.queue[i];
    if (q < 0 || q >= m.queues.length || (m.flags[i] & FLAG_NEVER_STARTED)) continue;
    const a = Math.max(m.start[i], t0, frontier[q]);
    const b = Math.min(m.end[i], t1);
    if (b > a) busy[q] += b - a;
    if (b > frontier[q]) frontier[q] = b;
  }
  return busy;
}

/**
 * The target-queue forest, depth-first: { roots, children, subtreeBusy, orphans } (orphans:
 * the queues no root reaches, those of a target cycle): the analysis' own (the queueTree
 * table); queues it leaves out (the placeholder for items of no recorded queue) become roots
 * after it.
 */
function queueForest(m) {
  const n = m.queues.length;
  const tree = m.tables.queueTree || { rows: 0 };
  const children = noChildren(n);
  const roots = [];
  const subtreeBusy = Float64Array.from(m.queueBusy);
  const seen = new Uint8Array(n);
  const { queue, parent, subtreeBusy: busy } = tree;
  for (let k = 0; k < tree.rows; k++) {
    const q = queue[k], p = parent[k];
    if (q < 0 || q >= n || seen[q]) continue;
    seen[q] = 1;
    subtreeBusy[q] = busy[k];
    if (p >= 0 && p < n) addChild(children, p, q); else roots.push(q);
  }
  for (let q = 0; q < n; q++) if (!seen[q]) roots.push(q);
  return { roots, children, subtreeBusy, orphans: unreachedQueues(roots, children) };
}

/**
 * Child lists of n queues, all starting as one shared frozen empty list: most of 900k queues
 * have no child, and 900k empty arrays are 900k allocations for the collector.
 */
const NO_CHILDREN = Object.freeze([]);
function noChildren(n) {
  return new Array(n).fill(NO_CHILDREN);
}

function addChild(children, parent, child) {
  if (children[parent] === NO_CHILDREN) children[parent] = [];
  children[parent].push(child);
}

/** The queues not under any root (a target cycle), in index order. */
function unreachedQueues(roots, children) {
  const reached = new Uint8Array(children.length);
  const stack = [...roots];
  while (stack.length) {
    const q = stack.pop();
    if (reached[q]) continue;
    reached[q] = 1;
    for (const c of children[q]) stack.push(c);
  }
  const out = [];
  reached.forEach((r, q) => { if (!r) out.push(q); });
  return out;
}
