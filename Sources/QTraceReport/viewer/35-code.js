// Code identity in the model: which code an item ran and where it was enqueued (its site),
// the Swift tasks (their jobs as a box track each), and the item filters that search, the
// Code table and findings apply (a byte per item, built from a per-site or per-queue answer
// so that a million items cost one pass). Symbols are untrusted text, shown as text only.

import { BoxTrack, groupRows, queueLabel } from "./30-model.js";

/** Builds the task tracks: jobs (item rows) per task from the taskJobs table, in run order. */
export function buildTasks(m, T) {
  m.taskJobs = [];
  m.taskTrack = [];
  m.taskReady = [];
  m.taskSpan = [];
  m.taskOfRow = null;
  buildActors(m, T);
  const nTasks = m.tasks.length;
  if (!nTasks) return;
  const table = T.taskJobs;
  const jobs = table ? groupRows(table.task, nTasks, null) : m.tasks.map(() => new Int32Array(0));
  for (let t = 0; t < nTasks; t++) {
    const rows = new Int32Array(jobs[t].length);
    for (let k = 0; k < rows.length; k++) rows[k] = table.item[jobs[t][k]];
    // Jobs run one after another: sorting by start keeps run order and lets BoxTrack search.
    rows.sort();
    m.taskJobs.push(rows);
    m.taskTrack.push(new BoxTrack(rows, m.start, m.end, () => 0, (i) => m.queue[i], "begin", null));
    // Ready (enqueued, waiting for a thread or an actor): each job's enqueue → start. A task's
    // jobs run one after another, so start order is enqueue order too.
    m.taskReady.push(new BoxTrack(rows, m.enq, m.start, () => 0, (i) => m.queue[i], "begin", null));
    let first = Infinity, last = -Infinity;
    for (let k = 0; k < rows.length; k++) {
      first = Math.min(first, m.enq[rows[k]]);
      last = Math.max(last, m.end[rows[k]]);
    }
    m.taskSpan.push(rows.length ? [first, last] : [0, 0]);
  }
}

/**
 * Actor visits (the analysis' ActorVisit rows: a task's time on an actor, its waiting part
 * first): per actor, the row numbers of the actorVisits table in start order.
 */
function buildActors(m, T) {
  const table = T.actorVisits;
  m.actorVisitTable = table || null;
  m.actorVisits = m.actors.map(() => []);
  if (!table) return;
  for (let r = 0; r < table.rows; r++) {
    const a = table.actor[r];
    if (a >= 0 && a < m.actors.length) m.actorVisits[a].push(r);
  }
  const start = table.start;
  for (const rows of m.actorVisits) rows.sort((x, y) => start[x] - start[y]);
}

/** The task whose job item row `i` is, or -1 (built on first use). */
export function taskOfItem(m, i) {
  if (!m.tasks.length) return -1;
  if (!m.taskOfRow) {
    m.taskOfRow = new Int32Array(m.n).fill(-1);
    m.taskJobs.forEach((rows, t) => rows.forEach((row) => (m.taskOfRow[row] = t)));
  }
  return m.taskOfRow[i];
}

/** The site of item row i, or -1. */
export function siteOfItem(m, i) {
  const column = m.site;
  return column ? column[i] : -1;
}

/** The code item row i ran, or -1. */
export function codeOfItem(m, i) {
  const s = siteOfItem(m, i);
  return s >= 0 && m.sites[s] ? m.sites[s].code : -1;
}

/** "Loader.swift:42" (the file's base name), or "" when unknown. */
export function fileLine(location) {
  if (!location || !location.file || !(location.line > 0)) return "";
  const base = location.file.split("/").pop();
  return `${base}:${location.line}`;
}

export function codeName(m, c) {
  return m.codes[c] ? m.codes[c].name : "";
}

/** A site in one line, as the analysis writes it: "code at file:line", or the call site. */
export function siteText(m, s) {
  const site = m.sites[s];
  if (!site) return `site ${s}`;
  const code = m.codes[site.code];
  if (code) {
    const where = fileLine(site.from) || fileLine(code);
    return where ? `${code.name} at ${where}` : code.name;
  }
  if (site.from) return fileLine(site.from) ? `${site.from.name} at ${fileLine(site.from)}` : site.from.name;
  return `site ${s}`;
}

export function taskTitle(m, t) {
  const task = m.tasks[t];
  if (!task) return `task ${t}`;
  return task.runtime ? `Task #${task.id} (the runtime's: Task.sleep timer)` : `Task #${task.id}`;
}

export function taskSubtitle(m, t) {
  const task = m.tasks[t];
  const names = task.functions.map((c) => codeName(m, c)).filter(Boolean);
  return [task.onMainActor ? "main actor" : "", names.join(", ")].filter(Boolean).join(" · ");
}

// MARK: Item filters

/**
 * A filter over items (and blocked intervals): `items` and `blocked` are byte masks (or null:
 * not filtered), `rows` the matching item rows in start order (for Enter: next match).
 */
export function makeFilter(kind, label, items, blocked) {
  let rows = null;
  if (items) {
    let count = 0;
    for (let i = 0; i < items.length; i++) count += items[i];
    rows = new Int32Array(count);
    for (let i = 0, k = 0; i < items.length; i++) if (items[i]) rows[k++] = i;
  }
  let blockedCount = 0;
  if (blocked) for (let b = 0; b < blocked.length; b++) blockedCount += blocked[b];
  return { kind, label, items, blocked, rows, count: rows ? rows.length : 0, blockedCount };
}

/** Items whose site passes `siteMatches` (a byte per site): one lookup per item. */
function maskBySite(m, siteMatches) {
  const mask = new Uint8Array(m.n);
  const column = m.site;
  if (!column) return mask;
  for (let i = 0; i < m.n; i++) {
    const s = column[i];
    if (s >= 0 && siteMatches[s]) mask[i] = 1;
  }
  return mask;
}

export function codeFilter(m, c) {
  const matches = new Uint8Array(m.sites.length);
  m.sites.forEach((site, s) => (matches[s] = site.code === c ? 1 : 0));
  return makeFilter("code", codeName(m, c), maskBySite(m, matches), null);
}

/** A site's items, or for a blocking call site (no code) the intervals blocked there. */
export function siteFilter(m, s) {
  const site = m.sites[s];
  if (site && site.code < 0) {
    const B = m.blocked;
    const mask = new Uint8Array(B.rows);
    const column = B.site;
    if (column) for (let b = 0; b < B.rows; b++) mask[b] = column[b] === s ? 1 : 0;
    return makeFilter("site", siteText(m, s), null, mask);
  }
  const matches = new Uint8Array(m.sites.length);
  matches[s] = 1;
  return makeFilter("site", siteText(m, s), maskBySite(m, matches), null);
}

/**
 * Items whose code (short or full symbol), queue label or enclosing annotation interval
 * contains `text` (case-insensitive). Matching is decided once per site, queue and interval.
 */
export function searchFilter(m, text) {
  const needle = text.toLowerCase();
  const has = (value) => typeof value === "string" && value.toLowerCase().includes(needle);
  const siteMatches = new Uint8Array(m.sites.length);
  m.sites.forEach((site, s) => {
    const code = m.codes[site.code];
    siteMatches[s] = code && (has(code.name) || has(code.symbol)) ? 1 : 0;
  });
  const queueMatches = m.queues.map((q, i) => has(queueLabel(m, i)));
  const mask = maskBySite(m, siteMatches);
  for (let i = 0; i < m.n; i++) if (queueMatches[m.queue[i]]) mask[i] = 1;
  markItemsInIntervals(m, mask, (name) => has(name));
  return makeFilter("search", text, mask, null);
}

/** Marks the items that start on an interval's thread inside an interval whose name matches. */
function markItemsInIntervals(m, mask, matches) {
  const iv = m.intervals;
  for (let k = 0; k < iv.rows; k++) {
    if (!matches(m.strings[iv.name[k]] || "")) continue;
    const track = m.threadRun[iv.thread[k]];
    if (!track) continue;
    const t0 = iv.start[k], t1 = t0 + iv.duration[k];
    const [lo, hi] = track.range(t0, t1);
    for (let j = lo; j < hi; j++) {
      const i = track.idx[j];
      if (m.start[i] >= t0 && m.start[i] <= t1) mask[i] = 1;
    }
  }
}
