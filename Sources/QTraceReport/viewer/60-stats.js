// The Stats tab: the stats tables exactly as `qtrace stats --json` gives them (sortable; each
// cell keeps its number in data-value), wait and run-time histograms per queue, and the
// target-queue tree (the analysis') with each queue's busy share. A trace of 100k queues must
// not make 100k rows, cards or tree nodes at once: tables show STATS_PAGE_ROWS rows (sorting
// sorts them all) with a button for more, and so do the histograms and each node's children.

import { $, clear, el, fade, fmtCount, fmtDuration, fmtShare, fmtValue } from "./10-util.js";
import { expandHistograms, queueLabel } from "./30-model.js";
import { viewState, watchViewState } from "./36-state.js";
import { detailsText } from "./50-details.js";

const STATS_PAGE_ROWS = 200;
const HISTOGRAM_PAGE = 48;
const TREE_CHILDREN_PAGE = 100;
/** Tree nodes built at once, all levels together (a bushy tree of 100k queues is built lazily). */
const TREE_NODES_PAGE = 400;

export class StatsView {
  constructor(model, app) {
    this.m = model;
    this.app = app;
    this.root = $("stats");
    this.built = false;
    watchViewState((changed, state) => { if (changed.includes("filter")) this.syncActiveRow(state.filter); });
  }

  show() {
    if (this.built) return;
    this.built = true;
    const m = this.m;
    if (!m.header.stats.length) this.root.appendChild(el("p", "empty", "No statistics in this report."));
    m.header.stats.forEach((table) => this.buildTable(table));
    this.buildHistograms();
    this.buildTree();
    this.syncActiveRow(viewState.filter);
  }

  /** Opens the Stats tab at table `id`. */
  showTable(id) {
    this.app.openTab("stats");
    const t = this.root.querySelector(`table[data-table-id='${id}']`);
    if (t) t.closest(".table-wrap").previousElementSibling.scrollIntoView({ block: "start" });
  }

  buildTable(table) {
    const m = this.m;
    this.root.appendChild(el("h2", null, table.title));
    const wrap = el("div", "table-wrap");
    const t = el("table", "stats-table");
    t.dataset.tableId = table.id;
    const thead = el("thead");
    const headRow = el("tr");
    const isText = table.columns.map((c, k) => table.rows.some((r) => typeof r.values[k] === "string"));
    table.columns.forEach((column, k) => {
      const th = el("th", isText[k] ? "text" : "");
      th.dataset.key = column.key;
      const button = el("button", null, column.title);
      button.type = "button";
      button.title = column.unit ? `${column.key} (${column.unit})` : column.key;
      button.addEventListener("click", () => this.sortBy(t, table, k, th));
      th.appendChild(button);
      headRow.appendChild(th);
    });
    thead.appendChild(headRow);
    t.appendChild(thead);
    t.appendChild(el("tbody"));
    wrap.appendChild(t);
    this.root.appendChild(wrap);
    // The rows in display order (sorting reorders this), and how many of them are on the page.
    const paging = { table, isText, order: table.rows.map((_, r) => r), shown: 0, more: el("button", "link more") };
    paging.more.type = "button";
    paging.more.addEventListener("click", () => this.showRows(t, paging.shown + STATS_PAGE_ROWS));
    this.root.appendChild(paging.more);
    t.paging = paging;
    this.showRows(t, STATS_PAGE_ROWS);
  }

  /** Puts the first `count` rows (in the current order) in table t. */
  showRows(t, count) {
    const p = t.paging;
    const n = Math.min(count, p.order.length);
    const tbody = t.tBodies[0];
    for (let k = tbody.rows.length; k < n; k++) tbody.appendChild(this.buildRow(p.table, p.table.rows[p.order[k]], p.order[k], p.isText));
    p.shown = n;
    const left = p.order.length - n;
    p.more.hidden = left === 0;
    p.more.textContent = `Show ${fmtCount(Math.min(left, STATS_PAGE_ROWS))} more of ${fmtCount(left)} rows`;
  }

  /** Every row of every table, every histogram and tree node (the test hook reads them all). */
  showEverything() {
    this.show();
    this.root.querySelectorAll("table.stats-table").forEach((t) => this.showRows(t, Infinity));
    while (this.moreHistograms && !this.moreHistograms.hidden) this.moreHistograms.click();
    let more;
    while ((more = this.root.querySelector(".tree li.more-children"))) more.click();
  }

  buildRow(table, row, r, isText) {
    const tr = el("tr");
    tr.dataset.row = String(r);
    table.columns.forEach((column, k) => {
      const value = row.values[k];
      const td = el("td", isText[k] ? "text" : "");
      // Long text (a process's arguments) is cut by the stylesheet; the whole is on hover.
      if (column.key === "arguments") td.classList.add("clip");
      if (typeof value === "number") {
        td.dataset.value = String(value);
        td.textContent = fmtValue(value, column.unit);
        td.title = `${value} ${column.unit}`.trim();
      } else if (typeof value === "string") {
        if (column.key === "name" && table.rowObject === "queue" && row.object >= 0) {
          const sw = el("span", "swatch");
          sw.style.background = this.app.timeline.colors[row.object];
          td.appendChild(sw);
        }
        td.appendChild(document.createTextNode(value));
        td.title = value;
        // A code's name: the full symbol on hover.
        if (column.key === "name" && table.rowObject === "code" && this.m.codes[row.object]) {
          td.title = this.m.codes[row.object].symbol || value;
        }
      } else {
        td.textContent = fmtValue(null, column.unit);
      }
      tr.appendChild(td);
    });
    if (row.object >= 0 && ["code", "site", "task"].includes(table.rowObject)) {
      tr.classList.add("clickable");
      tr.dataset.object = String(row.object);
      tr.addEventListener("click", () => this.followCodeRow(table.rowObject, row.object, tr));
    }
    if (row.object >= 0 && table.rowObject === "process") {
      tr.classList.add("clickable");
      tr.addEventListener("click", () => {
        this.app.openTab("timeline");
        this.app.timeline.revealProcess(row.object);
      });
    }
    if (row.object >= 0 && (table.rowObject === "queue" || table.rowObject === "thread")) {
      tr.addEventListener("click", () => {
        this.app.openTab("timeline");
        this.app.timeline.reveal(`${table.rowObject}:${row.object}`);
        if (table.rowObject === "queue") this.app.details.showQueue(row.object);
        else this.app.details.showThread(row.object);
      });
    }
    return tr;
  }

  /**
   * A Code row highlights that code's items on the timeline (clicking it again clears it); a
   * blocking call site's row, the intervals blocked there; a task's row shows the task.
   */
  followCodeRow(kind, object, tr) {
    if (kind === "task") {
      this.app.details.revealTask(object);
      return;
    }
    if (tr.classList.contains("active")) this.app.clearFilter();
    else if (kind === "code") this.app.highlightCode(object);
    else this.app.highlightSite(object);
  }

  /** Marks the row of what the timeline's filter shows (none when it shows something else). */
  syncActiveRow(filter) {
    this.root.querySelectorAll("tr.active").forEach((r) => r.classList.remove("active"));
    if (!filter || (filter.kind !== "code" && filter.kind !== "site")) return;
    const tableId = filter.kind === "code" ? "code" : "waitSites";
    const rows = this.root.querySelectorAll(`table[data-table-id='${tableId}'] tr[data-object='${filter.object}']`);
    rows.forEach((r) => r.classList.add("active"));
  }

  sortBy(t, table, k, th) {
    const ascending = !(th.classList.contains("sorted") && th.classList.contains("asc"));
    t.querySelectorAll("th").forEach((h) => h.classList.remove("sorted", "asc", "desc"));
    th.classList.add("sorted", ascending ? "asc" : "desc");
    const key = (r) => table.rows[r].values[k];
    t.paging.order.sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return ascending ? c : -c;
    });
    // The same number of rows, now the first ones of the new order.
    const shown = t.paging.shown;
    clear(t.tBodies[0]);
    this.showRows(t, shown);
    this.syncActiveRow(viewState.filter);
  }

  buildHistograms() {
    const m = this.m;
    const hists = expandHistograms(m);
    if (!hists.length) return;
    this.root.appendChild(el("h2", null, "Wait and run time per queue"));
    this.root.appendChild(el("p", "sub", "Enqueue → start (wait) and start → end (run), log-scale buckets."));
    const byQueue = new Map();
    for (const h of hists) {
      if (!byQueue.has(h.queue)) byQueue.set(h.queue, {});
      byQueue.get(h.queue)[h.metric] = h;
    }
    const grid = el("div", "histograms");
    const pairs = [...byQueue];
    let shown = 0;
    const more = el("button", "link more");
    more.type = "button";
    const showMore = () => {
      const until = Math.min(pairs.length, shown + HISTOGRAM_PAGE);
      for (; shown < until; shown++) grid.appendChild(this.histogramCard(...pairs[shown]));
      more.hidden = shown === pairs.length;
      more.textContent = `Show ${fmtCount(Math.min(HISTOGRAM_PAGE, pairs.length - shown))} more of ${fmtCount(pairs.length - shown)} queues`;
    };
    more.addEventListener("click", showMore);
    this.moreHistograms = more;
    showMore();
    this.root.appendChild(grid);
    this.root.appendChild(more);
  }

  /** One queue's wait and run histograms. */
  histogramCard(q, pair) {
    const card = el("div", "hist-card");
    card.dataset.queue = String(q);
    const title = el("h4");
    const sw = el("span", "swatch");
    sw.style.background = this.app.timeline.colors[q];
    title.appendChild(sw);
    title.appendChild(el("span", "label", queueLabel(this.m, q)));
    card.appendChild(title);
    const canvas = el("canvas");
    card.appendChild(canvas);
    requestAnimationFrame(() => drawHistogramPair(canvas, pair, this.app.timeline.colors[q]));
    return card;
  }

  /** The analysis' target-queue tree (m.queueForest) with each queue's busy share. */
  buildTree() {
    const m = this.m;
    if (!m.queues.length) return;
    this.root.appendChild(el("h2", null, "Target-queue tree"));
    this.root.appendChild(el("p", "sub",
      "Each queue under the queue it targets. Busy: the share of the trace with at least one of the queue's items " +
      "running (the Queues table's Busy); the faint bar adds the busy time of the queues below it."));
    const { roots, children, subtreeBusy } = m.queueForest;
    const maxShare = Math.max(1, subtreeBusy.reduce((most, v) => Math.max(most, v / m.duration), 0));
    const tree = el("ul", "tree");
    const visited = new Set();
    this.treeBudget = TREE_NODES_PAGE;
    const build = (q, depth) => {
      visited.add(q);
      const li = el("li");
      li.appendChild(this.treeRow(q, subtreeBusy[q] / m.duration / maxShare, m.queueShare[q] / maxShare));
      const below = children[q].filter((c) => !visited.has(c));
      if (below.length && depth < 64) {
        const ul = el("ul");
        below.forEach((c) => visited.add(c));
        this.appendChildren(ul, below, 0, (c) => build(c, depth + 1));
        li.appendChild(ul);
      }
      return li;
    };
    roots.forEach((q) => tree.appendChild(build(q, 0)));
    // Queues in a target cycle have no root: show them anyway (those under a root are only
    // not built yet: their "more" line builds them).
    const underRoots = new Uint8Array(m.queues.length);
    const stack = [...roots];
    while (stack.length) {
      const q = stack.pop();
      if (underRoots[q]) continue;
      underRoots[q] = 1;
      children[q].forEach((c) => stack.push(c));
    }
    m.queues.forEach((_, q) => { if (!underRoots[q] && !visited.has(q)) tree.appendChild(build(q, 0)); });
    this.root.appendChild(tree);
  }

  /** Children [from, from + TREE_CHILDREN_PAGE) of a tree node, then a "more" line for the rest. */
  appendChildren(ul, below, from, build) {
    let until = from;
    while (until < below.length && until < from + TREE_CHILDREN_PAGE && this.treeBudget > 0) {
      this.treeBudget--;  // before building: the node's own subtree takes from what is left
      ul.appendChild(build(below[until++]));
    }
    if (until === below.length) return;
    const more = el("li", "more-children", `… ${fmtCount(below.length - until)} more queues (show ${fmtCount(Math.min(TREE_CHILDREN_PAGE, below.length - until))})`);
    more.addEventListener("click", () => {
      more.remove();
      this.treeBudget = TREE_CHILDREN_PAGE;
      this.appendChildren(ul, below, until, build);
    });
    ul.appendChild(more);
  }

  /** One queue's row: name, kind and QoS, and its busy bar (widths are fractions of the bar). */
  treeRow(q, subtreeWidth, ownWidth) {
    const m = this.m;
    const color = this.app.timeline.colors[q];
    const row = el("div", "tree-row");
    row.dataset.queue = String(q);
    const name = el("div", "tree-name");
    const sw = el("span", "swatch");
    sw.style.background = color;
    name.appendChild(sw);
    name.appendChild(el("span", "label", queueLabel(m, q)));
    row.appendChild(name);
    const queue = m.queues[q];
    row.appendChild(el("span", "tree-meta", [queue.kind, queue.qos].filter(Boolean).join(" · ")));
    const util = el("div", "util");
    const bar = el("div", "util-bar");
    const share = el("i", "tree-share");
    share.style.width = `${Math.min(100, subtreeWidth * 100)}%`;
    share.style.background = color;
    const own = el("i", "own");
    own.style.width = `${Math.min(100, ownWidth * 100)}%`;
    own.style.background = color;
    bar.appendChild(share);
    bar.appendChild(own);
    util.appendChild(bar);
    util.appendChild(el("span", null, fmtShare(m.queueShare[q])));
    util.dataset.utilisation = String(m.queueShare[q]);
    row.appendChild(util);
    return row;
  }
}

/** Wait (left) and run (right) histograms side by side on one canvas. */
function drawHistogramPair(canvas, pair, color) {
  const dpr = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || 320;
  const height = canvas.clientHeight || 96;
  canvas.width = width * dpr;
  canvas.height = height * dpr;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const half = (width - 12) / 2;
  drawHistogram(ctx, pair.wait, 0, half, height, fade("#8fa8c8", 0.9), "wait");
  drawHistogram(ctx, pair.run, half + 12, half, height, color, "run");
}

function drawHistogram(ctx, h, x0, width, height, color, title) {
  ctx.font = "10px system-ui, sans-serif";
  ctx.textBaseline = "alphabetic";
  ctx.fillStyle = "#8d98aa";
  ctx.fillText(title, x0, 10);
  if (!h) return;
  // Trim empty buckets at both ends.
  let first = h.counts.findIndex((c) => c > 0);
  if (first < 0) return;
  let last = h.counts.length - 1;
  while (last > first && h.counts[last] === 0) last--;
  first = Math.max(0, first - 1);
  last = Math.min(h.counts.length - 1, last + 1);
  const n = last - first + 1;
  const max = Math.max(...h.counts.slice(first, last + 1));
  const top = 16, bottom = height - 14;
  const bw = width / n;
  ctx.fillStyle = "#1b2230";
  ctx.fillRect(x0, bottom, width, 1);
  ctx.fillStyle = color;
  for (let k = 0; k < n; k++) {
    const c = h.counts[first + k];
    if (!c) continue;
    const bh = Math.max(1, (Math.sqrt(c) / Math.sqrt(max)) * (bottom - top));
    ctx.fillRect(x0 + k * bw + 0.5, bottom - bh, Math.max(1, bw - 1), bh);
  }
  ctx.fillStyle = "#6b778a";
  ctx.fillText(fmtDuration(h.bounds[first]), x0, height - 2);
  const right = fmtDuration(h.bounds[last + 1]);
  ctx.fillText(right, x0 + width - ctx.measureText(right).width, height - 2);
  const label = `max ${fmtCount(max)}`;
  ctx.fillText(label, x0 + width - ctx.measureText(label).width, 10);
}

/**
 * What the report shows of each queue, thread and code, as rendered text (the test hook:
 * tests compare it with `qtrace stats` and its JSON): every Stats table's cells by column key,
 * the target-queue tree's rows in order, and the Busy/Blocked lines of the details panels.
 */
export function shownFigures(app) {
  app.openTab("stats");
  app.stats.showEverything();
  const root = app.stats.root;
  const tables = {};
  root.querySelectorAll("table.stats-table").forEach((t) => {
    const keys = [...t.tHead.rows[0].cells].map((th) => th.dataset.key);
    const table = app.m.header.stats.find((s) => s.id === t.dataset.tableId);
    tables[t.dataset.tableId] = [...t.tBodies[0].rows].map((tr) => {
      const cells = {};
      [...tr.cells].forEach((td, k) => (cells[keys[k]] = { text: td.textContent, value: td.dataset.value ?? null }));
      return { object: table.rows[Number(tr.dataset.row)].object, cells };
    });
  });
  const tree = [...root.querySelectorAll(".tree .tree-row")].map((row) => ({
    queue: Number(row.dataset.queue), busy: row.querySelector(".util span").textContent,
  }));
  const details = (show, labels) => {
    show();
    const { facts } = detailsText(app.details.root);
    return Object.fromEntries(labels.filter((label) => label in facts).map((label) => [label, facts[label]]));
  };
  const queues = app.m.queues.map((_, q) => details(() => app.details.showQueue(q), ["Items", "Busy", "Backlog max"]));
  const threads = app.m.threads.map((_, t) => details(() => app.details.showThread(t), ["Items run", "Busy", "Blocked"]));
  return { tables, tree, queues, threads };
}
