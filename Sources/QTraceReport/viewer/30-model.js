// The model the views draw from: the decoded columns plus indexes built once at load
// (items per thread and per queue, box tracks with their range-query helpers, levels of
// detail, counters). Item indexes are rows of the items table, sorted by start time.

import { lowerBound, lowerBoundBy, timings, upperBound, upperBoundBy } from "./10-util.js";

export const FLAG_NEVER_STARTED = 1;
export const FLAG_NEVER_FINISHED = 2;

export function buildModel(report) {
  const h = report.header;
  const T = report.tables;
  const it = T.items;
  const n = it.rows;
  const m = {
    header: h,
    meta: h.meta,
    tables: T,
    threads: h.threads,
    // The thread lanes' order, the writer's (docs/report-data.md).
    threadOrder: h.threadOrder,
    // Queues and groups are payload tables (docs/report-data.md, "Object tables"); the views read
    // them as objects, built once here (a few ms at 100k queues).
    queues: queueObjects(T.queues),
    // Reports before lane groups have no processes: one process, implied.
    processes: h.processes || [],
    sources: h.sources,
    groups: groupObjects(T.groups),
    findings: h.findings,
    strings: report.strings,
    kinds: h.itemKinds,
    causes: h.blockCauses,
    duration: Math.max(1, h.meta.durationNs),
    sizes: report.sizes,
    n,
    start: it.start,
    end: new Float64Array(n),
    enq: new Float64Array(n),
    queue: it.queue,
    thread: it.thread,
    kind: it.kind,
    flags: it.flags,
    depth: it.depth,
    slot: it.slot,
    pendingSlot: it.pendingSlot,
    hasInputIndex: "inputIndex" in it,
    rowOfInput: null,
    blocked: T.blocked,
    marks: T.marks,
    intervals: T.intervals,
    sourceRuns: T.sourceRuns,
    sourceEvents: T.sourceEvents,
    // Code identity (reports of traces with sites): what ran, where it was enqueued, Swift tasks.
    codes: h.codes || [],
    sites: h.sites || [],
    tasks: h.tasks || [],
    actors: h.actors || [],
  };
  // Columns only selections and details need are decoded when first used.
  for (const name of ["submitter", "parent", "behind", "group", "source", "inputIndex", "cpu", "runnable", "sleep", "site", "blockedInside", "blockedCauses"]) {
    Object.defineProperty(m, name, { get: () => (name in it ? it[name] : null), enumerable: true });
  }
  const run = it.run, wait = it.wait, start = it.start;
  for (let i = 0; i < n; i++) {
    m.end[i] = start[i] + run[i];
    m.enq[i] = start[i] - wait[i];
  }
  attachStatsRows(h.stats, T);
  const blockedEnd = new Float64Array(m.blocked.rows);
  for (let i = 0; i < m.blocked.rows; i++) blockedEnd[i] = m.blocked.start[i] + m.blocked.duration[i];
  m.blocked.end = blockedEnd;
  m.endAll = m.end;
  m.prefixMaxEnd = prefixMax(m.end, null);
  timings.columns = performance.now();
  buildTracks(m, h, T);
  timings.tracks = performance.now();
  buildCounters(m, h, T);
  timings.counters = performance.now();
  return m;
}

/** The queues table's rows as objects (literals of one shape: 900k of them in ~0.1 s). */
function queueObjects(t) {
  if (!t) return [];
  const { label, kind, qos, target, process, items, busy, busyShare } = t;
  const out = new Array(t.rows);
  for (let q = 0; q < t.rows; q++) {
    out[q] = { label: label[q], kind: kind[q], qos: qos[q], target: target[q], process: process[q],
      items: items[q], busy: busy[q], busyShare: busyShare[q] };
  }
  return out;
}

function groupObjects(t) {
  if (!t) return [];
  const { label, firstEnter, lastLeave, notify, enters, leaves } = t;
  const out = new Array(t.rows);
  for (let g = 0; g < t.rows; g++) {
    out[g] = { label: label[g], firstEnter: firstEnter[g], lastLeave: lastLeave[g], notify: notify[g],
      enters: enters[g], leaves: leaves[g] };
  }
  return out;
}

/**
 * Stats tables stored as payload tables get their `rows` ({ object, values } as the header
 * once carried them) on first use: the Stats tab, not the first frame, needs them.
 */
function attachStatsRows(stats, T) {
  for (const table of stats) {
    const t = table.table ? T[table.table] : null;
    if (!t) continue;
    let rows = null;
    Object.defineProperty(table, "rows", {
      enumerable: true,
      get() {
        if (!rows) {
          const cells = table.columns.map((_, k) => t[`c${k}`]);
          rows = new Array(t.rows);
          for (let r = 0; r < t.rows; r++) rows[r] = { object: t.object[r], values: cells.map((column) => cellValue(column[r])) };
        }
        return rows;
      },
    });
  }
}

/** Cell (r, k) of a stats table stored as columns: a string, a number or null (missing). */
export function statsCell(t, r, k) {
  return cellValue(t[`c${k}`][r]);
}

/** A decoded stats cell as the header's rows held it: missing (null, NaN) is null. */
function cellValue(v) {
  return v === null || v === undefined || (typeof v === "number" && Number.isNaN(v)) ? null : v;
}

/**
 * items -> the rows of each group (thread or queue), keeping start order (counting sort): every
 * group's rows back to back in `all`, group g's from offsets[g] to offsets[g + 1].
 */
function groupRowIndex(groupOf, groups, include) {
  const offsets = new Int32Array(groups + 1);
  const n = groupOf.length;
  for (let i = 0; i < n; i++) {
    const g = groupOf[i];
    if (g >= 0 && g < groups && (!include || include(i))) offsets[g + 1]++;
  }
  for (let g = 0; g < groups; g++) offsets[g + 1] += offsets[g];
  const all = new Int32Array(offsets[groups]);
  const fill = offsets.slice(0, groups);
  for (let i = 0; i < n; i++) {
    const g = groupOf[i];
    if (g >= 0 && g < groups && (!include || include(i))) all[fill[g]++] = i;
  }
  return { all, offsets };
}

/** The rows of each group as an array of views (for the few groups: threads, sources). */
export function groupRows(groupOf, groups, include) {
  const { all, offsets } = groupRowIndex(groupOf, groups, include);
  const out = [];
  for (let g = 0; g < groups; g++) out.push(all.subarray(offsets[g], offsets[g + 1]));
  return out;
}

/** Queue q's item rows in start order (a view made on demand: 100k queues, 100k views otherwise). */
function queueRows(m, q) {
  const { all, offsets } = m.queueRowIndex;
  return all.subarray(offsets[q], offsets[q + 1]);
}

function prefixMax(values, idx) {
  const len = idx ? idx.length : values.length;
  const out = new Float64Array(len);
  let best = -Infinity;
  for (let k = 0; k < len; k++) {
    const v = values[idx ? idx[k] : k];
    if (v > best) best = v;
    out[k] = best;
  }
  return out;
}

function suffixMin(values, idx) {
  const out = new Float64Array(idx.length);
  let best = Infinity;
  for (let k = idx.length - 1; k >= 0; k--) {
    const v = values[idx[k]];
    if (v < best) best = v;
    out[k] = best;
  }
  return out;
}

/**
 * A box track: rows `idx` of columns `begin`/`end`, sorted by begin (sortedBy "begin") or
 * by end ("end"). range(t0, t1) gives the slice [lo, hi) of idx that can touch [t0, t1].
 */
export class BoxTrack {
  constructor(idx, begin, end, rowOf, colorOf, sortedBy, lod) {
    this.idx = idx;
    this.begin = begin;
    this.end = end;
    this.rowOf = rowOf;
    this.colorOf = colorOf;
    this.sortedBy = sortedBy;
    this.lod = lod;
    if (sortedBy === "begin") this.maxEnd = prefixMax(end, idx);
    else this.minBegin = suffixMin(begin, idx);
  }

  get length() {
    return this.idx.length;
  }

  range(t0, t1) {
    const idx = this.idx;
    if (this.sortedBy === "begin") {
      const begin = this.begin;
      const hi = upperBoundBy((k) => begin[idx[k]], t1, 0, idx.length);
      const lo = lowerBound(this.maxEnd, t0, 0, hi);
      return [lo, hi];
    }
    const end = this.end;
    const lo = lowerBoundBy((k) => end[idx[k]], t0, 0, idx.length);
    const hi = upperBound(this.minBegin, t1, lo, idx.length);
    return [lo, hi];
  }

  /** The row whose box contains t in `row` (nearest within tol), or -1. */
  find(t, row, tol) {
    const [lo, hi] = this.range(t - tol, t + tol);
    let best = -1;
    let bestDistance = Infinity;
    const limit = Math.max(lo, hi - 20000);
    for (let k = hi - 1; k >= limit; k--) {
      const i = this.idx[k];
      if (row >= 0 && this.rowOf(i) !== row) continue;
      const b = this.begin[i];
      const e = this.end[i];
      const distance = t < b ? b - t : t > e ? t - e : 0;
      if (distance <= tol && distance < bestDistance) {
        best = i;
        bestDistance = distance;
        if (distance === 0) break;
      }
    }
    return best;
  }
}

function buildTracks(m, h, T) {
  const lodIndex = indexLevelsOfDetail(h.lod, T.lod);
  const lodFor = (kind, object) => lodIndex.get(kind)?.get(object) || null;
  m.lodFor = lodFor;
  const nThreads = m.threads.length;
  const nQueues = m.queues.length;
  const started = (i) => (m.flags[i] & FLAG_NEVER_STARTED) === 0;
  m.threadRows = groupRows(m.thread, nThreads, started);
  m.queueRowIndex = groupRowIndex(m.queue, nQueues, null);
  const queueOf = (i) => m.queue[i];
  m.threadRun = m.threadRows.map((idx, t) =>
    new BoxTrack(idx, m.start, m.end, (i) => m.depth[i], queueOf, "begin", lodFor("threadRun", t)));
  // Queue tracks are built when first drawn or hit-tested (queueRunTrack): of 100k queues, the
  // first frame shows a few dozen.
  m.queueRun = new Array(nQueues).fill(null);
  m.queuePending = new Array(nQueues).fill(null);
  const b = m.blocked;
  const blockedRows = groupRows(b.thread, nThreads, null);
  m.threadBlocked = blockedRows.map((idx, t) =>
    new BoxTrack(idx, b.start, b.end, () => 0, (i) => b.cause[i], "begin", lodFor("threadBlocked", t)));
  buildSchedTracks(m, h, T, lodFor);
  const runs = m.sourceRuns;
  runs.end = new Float64Array(runs.rows);
  for (let i = 0; i < runs.rows; i++) runs.end[i] = runs.start[i] + runs.duration[i];
  const sourceRunRows = groupRows(runs.source, m.sources.length, null);
  m.sourceRun = sourceRunRows.map((idx, s) =>
    new BoxTrack(idx, runs.start, runs.end, () => 0, () => m.sources[s].queue, "begin", lodFor("sourceRun", s)));
  m.sourceEventRows = groupRows(m.sourceEvents.source, m.sources.length, null);
  // How many rows each lane needs (queues: one pass over the items, not one per queue).
  m.threadDepth = m.threadRows.map((idx) => maxOf(m.depth, idx) + 1);
  m.queueSlots = new Int32Array(nQueues).fill(1);
  m.queuePendingSlots = new Int32Array(nQueues);
  const { queue, slot, pendingSlot, start, enq } = m;
  for (let i = 0; i < m.n; i++) {
    const q = queue[i];
    if (q < 0 || q >= nQueues) continue;
    if (slot[i] + 1 > m.queueSlots[q]) m.queueSlots[q] = slot[i] + 1;
    if (start[i] > enq[i] && pendingSlot[i] + 1 > m.queuePendingSlots[q]) m.queuePendingSlots[q] = pendingSlot[i] + 1;
  }
}

/** Queue q's track of running items, built on first use. */
export function queueRunTrack(m, q) {
  return m.queueRun[q] || (m.queueRun[q] = new BoxTrack(queueRows(m, q), m.start, m.end, (i) => m.slot[i],
    (i) => m.queue[i], "begin", m.lodFor("queueRun", q)));
}

/** Queue q's track of pending items (enqueue → start, sorted by start), built on first use. */
export function queuePendingTrack(m, q) {
  return m.queuePending[q] || (m.queuePending[q] = new BoxTrack(queueRows(m, q), m.enq, m.start, (i) => m.pendingSlot[i],
    (i) => m.queue[i], "end", m.lodFor("queuePending", q)));
}

/**
 * Kernel scheduling states (traces recorded with --sched): one track per thread whose box
 * colour is the state (0 running, 1 runnable, 2 sleeping). m.threadSched is null without them.
 */
function buildSchedTracks(m, h, T, lodFor) {
  const s = T.sched;
  m.schedStates = h.schedStates || [];
  m.threadSched = null;
  if (!s || !s.rows || !m.schedStates.length) return;
  s.end = new Float64Array(s.rows);
  for (let i = 0; i < s.rows; i++) s.end[i] = s.start[i] + s.duration[i];
  m.sched = s;
  m.threadSched = groupRows(s.thread, m.threads.length, null).map((idx, t) =>
    new BoxTrack(idx, s.start, s.end, () => 0, (i) => s.state[i], "begin", lodFor("threadSched", t)));
}

function maxOf(column, idx) {
  let best = 0;
  for (let k = 0; k < idx.length; k++) if (column[idx[k]] > best) best = column[idx[k]];
  return best;
}

/**
 * Levels of detail (written by the report writer): for each track and level, the entry
 * ranges per row. Buckets of level l are topBucketNs / 4^l ns wide.
 */
function indexLevelsOfDetail(lodHeader, table) {
  const out = new Map();   // kind → object → track
  const tracks = lodHeader.tracks.map((t) => ({
    kind: t.kind, object: t.object, levels: t.levels, topBucketNs: lodHeader.topBucketNs, rows: new Map(), table,
  }));
  for (const t of tracks) {
    if (!out.has(t.kind)) out.set(t.kind, new Map());
    out.get(t.kind).set(t.object, t);
  }
  const n = table.rows;
  let k = 0;
  while (k < n) {
    const track = table.track[k], level = table.level[k], row = table.row[k];
    let e = k + 1;
    while (e < n && table.track[e] === track && table.level[e] === level && table.row[e] === row) e++;
    tracks[track].rows.set(level * 256 + row, [k, e]);
    k = e;
  }
  return out;
}

/** The coarsest level whose buckets are at most `maxBucketNs`, or -1. */
export function lodLevelFor(lod, maxBucketNs) {
  if (!lod || lod.levels === 0) return -1;
  for (let l = 0; l < lod.levels; l++) {
    if (lod.topBucketNs / Math.pow(4, l) <= maxBucketNs) return l;
  }
  return -1;
}

/**
 * The histograms with their bounds and full counts: the writer stores each one's bounds as an
 * index into `histogramBounds` and only its counts from `first` to the last non-empty bucket
 * (`counts` of them, in the histogramCounts table after the previous histograms' counts).
 */
export function expandHistograms(m) {
  const t = m.tables.histograms, all = m.tables.histogramCounts;
  if (!t) return [];
  const out = [];
  let at = 0;
  for (let i = 0; i < t.rows; i++) {
    const bounds = m.header.histogramBounds[t.bounds[i]];
    const counts = new Array(Math.max(0, bounds.length - 1)).fill(0);
    for (let k = 0; k < t.counts[i]; k++) counts[t.first[i] + k] = all.count[at + k];
    at += t.counts[i];
    out.push({ queue: t.queue[i], metric: t.metric[i], bounds, counts });
  }
  return out;
}

function buildCounters(m, h, T) {
  m.counters = h.counters.map((c) => {
    const t = T[c.table];
    return {
      name: c.name, kind: c.kind, queue: c.queue, bucketNs: c.bucketNs,
      time: t.time, value: t.value, min: t.min || t.value, max: t.max || t.value,
    };
  });
  const byKind = (kind) => m.counters.find((c) => c.kind === kind) || null;
  m.threadCounters = { alive: byKind("threadsAlive"), running: byKind("threadsRunning"), blocked: byKind("threadsBlocked") };
  // A report of several processes: each one's running threads (its collapsed lane group).
  m.processRunning = m.processes.map(() => null);
  for (const c of m.counters) if (c.kind === "processThreadsRunning" && c.process >= 0 && c.process < m.processes.length) m.processRunning[c.process] = c;
  m.backlogSeries = new Array(m.queues.length).fill(null);
  for (const c of m.counters) if (c.kind === "backlog" && c.queue >= 0 && c.queue < m.queues.length) m.backlogSeries[c.queue] = c;
  // Derived backlogs: a flag per queue, the series computed when first drawn (see backlogOf).
  m.derivedBacklog = new Uint8Array(m.queues.length);
  for (const q of T.derivedBacklogs ? T.derivedBacklogs.queue : []) if (q >= 0 && q < m.queues.length) m.derivedBacklog[q] = 1;
  m.backlogMax = new Float64Array(m.queues.length).fill(-1);
}

/** Whether queue q has a backlog series (written or derived). */
export function hasBacklog(m, q) {
  return m.backlogSeries[q] !== null || m.derivedBacklog[q] === 1;
}

/** Queue q's backlog series (or null), computing a derived one on first use. */
export function backlogOf(m, q) {
  if (!m.backlogSeries[q] && m.derivedBacklog[q]) {
    m.backlogSeries[q] = { name: "backlog", kind: "backlog", queue: q, bucketNs: 0, derived: true, ...deriveBacklog(m, q) };
  }
  return m.backlogSeries[q];
}

/** A counter series' largest value as a one-element array (0 without a series). */
export function maxOfSeries(series) {
  if (!series) return [0];
  let best = 0;
  for (let k = 0; k < series.max.length; k++) if (series.max[k] > best) best = series.max[k];
  return [best];
}

export function backlogMaxOf(m, q) {
  if (m.backlogMax[q] < 0) m.backlogMax[q] = backlogOf(m, q) ? Math.max(1, maxOfSeries(backlogOf(m, q))[0]) : 0;
  return m.backlogMax[q];
}

/**
 * A queue's backlog from its items (+1 at each enqueue, -1 at each start), as the writer
 * found the analysis' series to be: one point per time, no point repeating the previous value.
 */
function deriveBacklog(m, q) {
  const rows = queueRows(m, q);
  const n = rows.length;
  const enq = new Float64Array(n);
  for (let k = 0; k < n; k++) enq[k] = m.enq[rows[k]];
  enq.sort();
  const time = new Float64Array(2 * n);
  const value = new Float64Array(2 * n);
  let length = 0;
  let current = 0;
  let a = 0;
  let b = 0;
  while (a < n || b < n) {
    if (b < n && (m.flags[rows[b]] & FLAG_NEVER_STARTED)) {
      b++;
      continue;
    }
    const startTime = b < n ? m.start[rows[b]] : Infinity;
    let t;
    if (a < n && enq[a] <= startTime) {
      t = enq[a++];
      current++;
    } else {
      t = startTime;
      current--;
      b++;
    }
    // One point per time: the value after every change at that time.
    if (length && time[length - 1] === t) value[length - 1] = current;
    else {
      time[length] = t;
      value[length++] = current;
    }
  }
  // Drop points that repeat the value before them.
  let kept = 0;
  let previous = 0;
  for (let k = 0; k < length; k++) {
    if (value[k] === previous) continue;
    time[kept] = time[k];
    value[kept++] = value[k];
    previous = value[k];
  }
  const v = value.slice(0, kept);
  return { time: time.slice(0, kept), value: v, min: v, max: v };
}

/** Maximum of a step series per pixel column over [t0, t1] (NaN before its first point). */
export function sampleSteps(series, t0, t1, width) {
  const out = new Float32Array(width).fill(NaN);
  const time = series.time;
  const n = time.length;
  if (n === 0 || width <= 0) return out;
  const scale = width / (t1 - t0);
  let k = Math.max(0, upperBound(time, t0) - 1);
  for (; k < n; k++) {
    const from = time[k];
    if (from > t1) break;
    const to = k + 1 < n ? time[k + 1] : Infinity;
    const v = series.max[k];
    const x0 = Math.max(0, Math.floor((from - t0) * scale));
    const x1 = Math.min(width - 1, Math.floor((Math.min(to, t1) - t0) * scale));
    for (let x = x0; x <= x1; x++) if (!(out[x] >= v)) out[x] = v;
  }
  return out;
}

/** The value of a step series at t. */
export function valueAt(series, t) {
  if (!series) return 0;
  const k = upperBound(series.time, t) - 1;
  return k >= 0 ? series.value[k] : 0;
}

/** The items enqueued from within item `row` (its flows out). */
export function childrenOf(m, row) {
  const out = [];
  const parent = m.parent;
  for (let i = row + 1; i < m.n; i++) if (parent[i] === row) out.push(i);
  return out;
}

export function inputIndexOf(m, row) {
  return m.hasInputIndex ? m.inputIndex[row] : row;
}

export function rowOfInputIndex(m, index) {
  if (!m.hasInputIndex) return index >= 0 && index < m.n ? index : -1;
  if (!m.rowOfInput) {
    m.rowOfInput = new Int32Array(m.n).fill(-1);
    const inputIndex = m.inputIndex;
    for (let r = 0; r < m.n; r++) m.rowOfInput[inputIndex[r]] = r;
  }
  return index >= 0 && index < m.n ? m.rowOfInput[index] : -1;
}

export function threadName(m, t) {
  const thread = m.threads[t];
  if (!thread) return "unknown thread";
  if (thread.kind === "main") return thread.name && thread.name !== "main" ? `main (${thread.name})` : "main thread";
  return thread.name ? `${thread.name} ${thread.tid}` : `thread ${thread.tid}`;
}

export function queueLabel(m, q) {
  return m.queues[q] ? m.queues[q].label || `queue ${q}` : "unknown queue";
}

export function itemTitle(m, i) {
  return `${queueLabel(m, m.queue[i])} · ${m.kinds[m.kind[i]]}`;
}
