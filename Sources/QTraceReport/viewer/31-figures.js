// The analysis' figures in the model (docs/report-data.md, Definitions): each queue's and
// thread's items, busy and blocked time, the target-queue forest, a Stats table's cell, and
// each queue's busy time within a chosen range. The viewer shows the analysis' figures; reports
// without them (synthetic ones) get the same definitions computed here over the whole trace.

/** Per queue: items, busy ns and share of the trace; per thread: items, busy and blocked ns. */
function setFigures(m) {
  m.queueItems = m.queues.map((q, i) => (q.items >= 0 ? q.items : queueItemCount(m, i)));
  m.threadItems = m.threads.map((t, i) => (t.items >= 0 ? t.items : m.threadRows[i].length));
  const whole = m.queues.some((q) => !(q.busy >= 0)) ? queueBusyInRange(m, 0, Infinity) : null;
  m.queueBusy = m.queues.map((q, i) => (q.busy >= 0 ? q.busy : whole[i]));
  m.queueShare = m.queues.map((q, i) => (q.busyShare >= 0 ? q.busyShare : m.queueBusy[i] / m.duration));
  m.threadBusy = m.threads.map((t, i) => (t.busy >= 0 ? t.busy : threadBusyFallback(m, i)));
  m.threadBlockedNs = m.threads.map((t, i) => (t.blocked >= 0 ? t.blocked : sumOf(m.blocked.duration, m.threadBlocked[i].idx)));
  m.queueForest = queueForest(m);
  m.queueCounted = queuesCounted(m);
}

/**
 * The queues `qtrace stats` counts: those of the analysis' forest, not the report's placeholder
 * for items of no recorded queue (which has figures, but no place in the forest).
 */
function queuesCounted(m) {
  const tree = m.tables.queueTree;
  if (!tree || !tree.rows) return m.queues.map(() => true);
  const counted = m.queues.map(() => false);
  for (let k = 0; k < tree.rows; k++) if (tree.queue[k] >= 0 && tree.queue[k] < counted.length) counted[tree.queue[k]] = true;
  return counted;
}

/** How many queues the analysis found. */
function queueCount(m) {
  return m.queues.filter((q, i) => m.queueCounted[i]).length;
}

/** A figure of the Stats tables (object's row, column key), or undefined: details show it as is. */
function statsValue(m, tableId, object, key) {
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
function queueBusyInRange(m, t0, t1) {
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
 * A thread's time running its outermost items, less the time blocked inside them. Outermost
 * items are disjoint and in start order: each blocked interval's overlap with them comes from
 * two binary searches and prefix sums (no pass over the items per interval).
 */
function threadBusyFallback(m, t) {
  const rows = m.threadRows[t];
  const starts = new Float64Array(rows.length), ends = new Float64Array(rows.length), sum = new Float64Array(rows.length + 1);
  let n = 0;
  for (let k = 0; k < rows.length; k++) {
    const i = rows[k];
    if (m.depth[i] !== 0) continue;
    starts[n] = m.start[i];
    ends[n] = m.end[i];
    sum[n + 1] = sum[n] + (ends[n] - starts[n]);
    n++;
  }
  // Only the outermost items (the first n), sorted: what the binary searches below need.
  const s = starts.subarray(0, n), e = ends.subarray(0, n);
  let busy = sum[n];
  const B = m.blocked;
  for (const b of m.threadBlocked[t].idx) {
    const a = B.start[b], z = B.end[b];
    const k0 = upperBound(e, a), k1 = lowerBound(s, z) - 1;
    if (k0 > k1) continue;
    busy -= sum[k1 + 1] - sum[k0] - Math.max(0, a - s[k0]) - Math.max(0, e[k1] - z);
  }
  return Math.max(0, busy);
}

function sumOf(column, idx) {
  let total = 0;
  for (const k of idx) total += column[k];
  return total;
}

/**
 * The target-queue forest, depth-first: { roots, children, subtreeBusy, orphans } (orphans:
 * the queues no root reaches, those of a target cycle). The analysis' own
 * (the queueTree table) when the report has it; queues it leaves out (the placeholder for items
 * of no recorded queue) become roots after it.
 */
function queueForest(m) {
  const n = m.queues.length;
  const tree = m.tables.queueTree;
  if (!tree || !tree.rows) return queueForestFromTargets(m);
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

/** The analysis' forest rules (QueueTreeNode.forest) for reports without it. */
function queueForestFromTargets(m) {
  const n = m.queues.length;
  const children = noChildren(n);
  const roots = [];
  m.queues.forEach((q, i) => (q.target >= 0 && q.target < n && q.target !== i ? addChild(children, q.target, i) : roots.push(i)));
  const rank = Int8Array.from(m.queues, (q) => (q.kind === "main" ? 0 : q.kind === "global" ? 1 : 2));
  const labels = m.queues.map((q) => q.label);
  const order = (a, b) => (rank[a] - rank[b]) || (labels[a] < labels[b] ? -1 : labels[a] > labels[b] ? 1 : a - b);
  roots.sort(order);
  children.forEach((c) => c.sort(order));
  const subtreeBusy = new Float64Array(n);
  const visiting = new Uint8Array(n);
  const total = (q) => {
    if (visiting[q]) return 0;
    visiting[q] = 1;
    subtreeBusy[q] = m.queueBusy[q] + children[q].reduce((s, c) => s + total(c), 0);
    return subtreeBusy[q];
  };
  roots.forEach(total);
  return { roots, children, subtreeBusy, orphans: unreachedQueues(roots, children) };
}
