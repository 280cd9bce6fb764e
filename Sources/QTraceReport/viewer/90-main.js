// Start-up: decode the embedded data, build the model and the views, wire the tabs, and
// expose `window.qtrace`, the small hook the browser tests (and curious users) drive.

import { $, el, fade, fmtCount, fmtDuration, fmtTime, timings } from "./10-util.js";
import { loadEmbeddedReport, materializeTables } from "./20-decode.js";
import { buildModel, FLAG_NEVER_STARTED, inputIndexOf, rowOfInputIndex } from "./30-model.js";
import { setFigures } from "./31-figures.js";
import { buildTasks, codeFilter, siteFilter, siteOfItem } from "./35-code.js";
import { updateViewState, viewState } from "./36-state.js";
import { Timeline } from "./40-timeline.js";
import { GUTTER } from "./41-timeline-view.js";
import { SCHED_COLORS } from "./43-timeline-boxes.js";
import { ProcessPicker } from "./48-process-picker.js";
import { Details, detailsText } from "./50-details.js";
import { shownFigures, StatsView } from "./60-stats.js";
import { FindingsView } from "./70-findings.js";
import { ReplayView } from "./80-replay.js";
import { SearchBox } from "./85-search.js";

class App {
  constructor(model) {
    this.m = model;
    this.activeTab = null;
    this.firstRenderAt = 0;
    this.showRunFacts();
    this.details = new Details(model, this);
    this.timeline = new Timeline(model, this);
    this.processPicker = new ProcessPicker(model, this);
    this.stats = new StatsView(model, this);
    this.findings = new FindingsView(model, this);
    this.replay = new ReplayView(model, this);
    for (const button of document.querySelectorAll("#tabs button")) {
      button.addEventListener("click", () => this.openTab(button.dataset.tab));
    }
    $("zoom-fit").addEventListener("click", () => this.timeline.fit());
    $("zoom-in").addEventListener("click", () => this.timeline.zoomAround((this.timeline.v0 + this.timeline.v1) / 2, 0.5));
    $("zoom-out").addEventListener("click", () => this.timeline.zoomAround((this.timeline.v0 + this.timeline.v1) / 2, 2));
    $("collapse-all").addEventListener("click", () => this.timeline.toggleTree());
    $("filter-clear").addEventListener("click", () => this.clearFilter());
    this.searchBox = new SearchBox(this);
    this.buildLegend();
    this.timeline.fit();
    this.openTab("timeline");
  }

  showRunFacts() {
    const meta = this.m.meta;
    $("run-title").textContent = meta.title;
    $("run-command").textContent = meta.commandLine;
    $("run-command").title = meta.commandLine;
    const facts = $("run-facts");
    // `keep` ranks the facts: when the header is too narrow, the lowest go first (fitRunFacts).
    const fact = (label, value, keep, bad) => {
      const div = el("div", bad ? "bad" : "");
      div.dataset.keep = String(bad ? 100 : keep);
      div.appendChild(el("dt", null, label));
      const dd = el("dd", null, value);
      div.appendChild(dd);
      facts.appendChild(div);
      return dd;
    };
    fact("duration", fmtDuration(meta.durationNs), 100);
    fact("items", fmtCount(this.m.n), 90);
    // Threads seen, and the most alive at once (all processes together: the analysis' figure).
    const peak = meta.peakThreadsAlive >= 0 ? ` · peak ${fmtCount(meta.peakThreadsAlive)}` : "";
    fact("threads", fmtCount(this.m.threads.length) + peak, 80).title = "threads seen · most alive at once";
    fact("queues", fmtCount(this.m.queues.length), 50);
    if (this.m.processes.length > 1) this.processesFact(fact("processes", "", 85));
    else fact("pid", String(meta.pid), 30);
    fact("cpus", String(meta.ncpu), 40);
    fact("dropped", fmtCount(meta.droppedEvents) + (meta.dropReason ? `: ${meta.dropReason}` : ""), 25, meta.droppedEvents > 0);
    if (meta.invalidEvents > 0) fact("inconsistent trace", `${fmtCount(meta.invalidEvents)} events dropped`, 100, true);
    if (meta.flightRecorder) {
      // A sentence, not a figure: cut to the header's width, whole on hover.
      const window = fact("window", meta.flightRecorder, 70);
      window.id = "flight-recorder-fact";
      window.parentElement.classList.add("long");
      window.title = meta.flightRecorder;
    }
    if (meta.shimOverheadNs) fact("overhead", `${meta.shimOverheadNs.toFixed(1)} ns/event`, 20);
    if (meta.qtraceVersion) fact("qtrace", meta.qtraceVersion, 10);
    this.fitRunFacts();
    new ResizeObserver(() => this.fitRunFacts()).observe(document.querySelector("header.topbar"));
  }

  /** Shows every fact that fits in one line of the header, leaving out the least useful first
   * (those are listed on hover). Wrapping instead would make the header taller. */
  fitRunFacts() {
    const facts = $("run-facts");
    const all = [...facts.children];
    for (const div of all) div.classList.remove("left-out");
    const overflows = () => facts.scrollWidth > facts.clientWidth + 0.5
      || all.some((div) => !div.classList.contains("left-out") && div.getBoundingClientRect().right > window.innerWidth);
    const byKeep = all.filter((div) => Number(div.dataset.keep) < 100)
      .sort((a, b) => Number(a.dataset.keep) - Number(b.dataset.keep));
    for (const div of byKeep) {
      if (!overflows()) break;
      div.classList.add("left-out");
    }
    const leftOut = all.filter((div) => div.classList.contains("left-out"));
    facts.title = leftOut.length ? "Not shown: " + leftOut.map((div) =>
      `${div.querySelector("dt").textContent} ${div.querySelector("dd").textContent}`).join(" · ") : "";
  }

  /** However many processes: their count, opening the list (the process picker). */
  processesFact(dd) {
    const button = el("button", "fact-button", `${fmtCount(this.m.processes.length)} ▾`);
    button.type = "button";
    button.id = "processes-fact";
    button.dataset.opens = "process-panel";
    button.title = "The processes: show, hide, find";
    button.addEventListener("click", () => this.processPicker.toggle(button));
    dd.appendChild(button);
  }

  buildLegend() {
    const legend = $("legend");
    const add = (label, color) => {
      const span = el("span");
      const swatch = el("i");
      swatch.style.background = color;
      span.appendChild(swatch);
      span.appendChild(document.createTextNode(label));
      legend.appendChild(span);
    };
    add("pending", fade("#5b9cf6", 0.42));
    add("running", "#5b9cf6");
    add("blocked", "repeating-linear-gradient(135deg, #ff5d6c 0 2px, #0d1117 2px 5px)");
    add("threads running", "#3fb950");
    add("threads blocked", "#f85149");
    // The scheduling strip under each thread (recorded with --sched).
    if (this.m.threadSched) {
      add("on CPU", SCHED_COLORS[0]);
      add("runnable", SCHED_COLORS[1]);
      add("sleeping", SCHED_COLORS[2]);
    }
  }

  openTab(name) {
    if (!["timeline", "stats", "findings", "replay"].includes(name)) throw new Error(`no tab ${name}`);
    if (this.activeTab === "replay" && name !== "replay") this.replay.pause();
    this.activeTab = name;
    for (const button of document.querySelectorAll("#tabs button")) {
      button.classList.toggle("active", button.dataset.tab === name);
    }
    for (const section of document.querySelectorAll("main > .tab")) section.hidden = section.id !== `tab-${name}`;
    if (name === "timeline") this.timeline.resize();
    if (name === "stats") this.stats.show();
    if (name === "replay") this.replay.open();
  }

  onViewChanged() {
    const t = this.timeline;
    $("view-range").textContent = `${fmtTime(t.v0, (t.v1 - t.v0) / 100)} → ${fmtTime(t.v1, (t.v1 - t.v0) / 100)}`;
  }

  // MARK: Item filters (search, Code rows, findings' sites)

  setFilter(filter) {
    updateViewState({ filter });
    const info = $("filter-info");
    info.hidden = !filter || filter.kind === "search";
    if (filter && filter.kind !== "search") {
      const what = filter.items ? `${fmtCount(filter.count)} item${filter.count === 1 ? "" : "s"}`
        : `${fmtCount(filter.blockedCount)} blocked interval${filter.blockedCount === 1 ? "" : "s"}`;
      $("filter-text").textContent = `${filter.label} · ${what}`;
      $("filter-text").title = filter.label;
    }
  }

  clearFilter() {
    this.searchBox.clear();
    this.setFilter(null);
  }

  highlightCode(c) {
    const filter = codeFilter(this.m, c);
    filter.object = c;
    this.searchBox.clear();
    this.setFilter(filter);
    this.openTab("timeline");
  }

  /** A site's items; for a blocking call site, its blocked intervals (the first one selected). */
  highlightSite(s) {
    const filter = siteFilter(this.m, s);
    filter.object = s;
    this.searchBox.clear();
    this.setFilter(filter);
    this.openTab("timeline");
    if (filter.blocked) {
      const first = filter.blocked.indexOf(1);
      if (first >= 0) this.timeline.selectBlocked(first, true);
    }
  }

  selectAndReveal(i) {
    const m = this.m;
    this.openTab("timeline");
    const started = (m.flags[i] & FLAG_NEVER_STARTED) === 0;
    this.timeline.reveal(started ? `thread:${m.thread[i]}` : `queue:${m.queue[i]}`, m.enq[i], m.end[i]);
    this.timeline.select(i);
  }

  /** What the tests read back. */
  state() {
    const t = this.timeline;
    const { selection, range, filter, highlight } = viewState;
    return {
      tab: this.activeTab,
      lanes: t.laneNames(),
      visible: { t0: t.v0, t1: t.v1 },
      plot: { left: GUTTER, width: t.plotW, dpr: t.dpr },
      schedStates: this.m.threadSched ? this.m.schedStates : [],
      duration: this.m.duration,
      items: this.m.n,
      selected: selection.item >= 0 ? inputIndexOf(this.m, selection.item) : -1,
      selectedRow: selection.item,
      children: selection.children ? selection.children.length : 0,
      range: range ? { t0: range.t0, t1: range.t1 } : null,
      filter: filter ? {
        kind: filter.kind, label: filter.label, count: filter.count, blocked: filter.blockedCount,
        object: filter.object === undefined ? -1 : filter.object,
      } : null,
      search: $("search").value,
      tasks: this.m.tasks.length,
      processes: {
        count: this.m.processes.length, order: [...this.timeline.processOrder], hidden: [...this.timeline.hiddenProcesses],
        collapsed: this.m.processes.map((_, p) => p).filter((p) => this.timeline.collapsed.has(`section:process:${p}`)),
      },
      highlight: highlight ? {
        finding: highlight.finding, queues: [...highlight.queues], threads: [...highlight.threads],
        items: [...highlight.items].map((i) => inputIndexOf(this.m, i)),
      } : null,
      replay: this.replay.lastState || null,
      timings: timings,
      sizes: this.m.sizes,
      arrayBufferBytes: arrayBufferBytes(this.m),
    };
  }
}

/** Bytes held in typed arrays reachable from the model (they live outside the JS heap). */
function arrayBufferBytes(root) {
  const buffers = new Set();
  const seen = new Set();
  const visit = (value, depth) => {
    if (!value || typeof value !== "object" || seen.has(value) || depth > 6) return;
    seen.add(value);
    if (ArrayBuffer.isView(value)) {
      buffers.add(value.buffer);
      return;
    }
    for (const key of Object.keys(value)) visit(value[key], depth + 1);
  };
  visit(root, 0);
  let total = 0;
  buffers.forEach((b) => (total += b.byteLength));
  return total;
}

/** `report.html#findings` (or #stats, #replay) opens that tab: links and screenshots use it. */
function openTabFromHash() {
  const tab = decodeURIComponent(location.hash.replace(/^#/, ""));
  if (["timeline", "stats", "findings", "replay"].includes(tab)) app.openTab(tab);
}
window.addEventListener("hashchange", () => { if (app) openTabFromHash(); });
let app = null;

const ready = (async () => {
  try {
    const report = await loadEmbeddedReport();
    timings.decoded = performance.now();
    const model = buildModel(report);
    // What extends the model's columns and tracks: code identity (tasks, actors), the analysis' figures.
    buildTasks(model, report.tables);
    setFigures(model);
    timings.modelBuilt = performance.now();
    app = new App(model);
    $("loading").hidden = true;
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
    // Opening the Timeline tab drew the first frame (a hidden page did not: draw it now).
    if (!app.firstRenderAt) app.timeline.draw();
    timings.firstRender = app.firstRenderAt || performance.now();
    // The columns not needed yet, then let the inflated payload go.
    setTimeout(() => {
      materializeTables(report.tables);
      timings.allDecoded = performance.now();
      openTabFromHash();
    }, 50);
    return true;
  } catch (error) {
    const loading = $("loading");
    loading.classList.add("failed");
    $("loading-text").textContent = `This report could not be opened: ${error && error.message ? error.message : error}`;
    throw error;
  }
})();

window.qtrace = Object.freeze({
  ready,
  state: () => app.state(),
  zoomTo: (t0, t1) => app.timeline.setView(t0, t1),
  select: (itemIndex) => {
    const row = rowOfInputIndex(app.m, itemIndex);
    if (row >= 0) app.selectAndReveal(row); else app.timeline.select(-1);
    return row >= 0;
  },
  selectRange: (t0, t1) => {
    app.openTab("timeline");
    app.timeline.setRange(t0, t1);
    const agg = app.details.lastRange;
    return {
      started: agg.started, busy: agg.busy, blocked: agg.blocked.reduce((s, v) => s + v, 0),
      queues: agg.rows.map((r) => ({ queue: r.q, started: r.started, busy: r.busy })),
    };
  },
  /** A duration in ns as the report prints it (tests hold it to the CLI's formatDuration). */
  formatDuration: (ns) => fmtDuration(ns),
  /** The numbers the report shows, as rendered text (see shownFigures). */
  shownFigures: () => shownFigures(app),
  /** Reveals queue q's lane and shows its details: { title, facts } as rendered text. */
  showQueue: (q) => {
    app.openTab("timeline");
    app.timeline.reveal(`queue:${q}`);
    app.details.showQueue(q);
    return detailsText(app.details.root);
  },
  /** A Stats table's row of `object` as the viewer holds it (null: missing), or null. */
  statsRow: (tableId, object) => {
    const table = app.m.header.stats.find((t) => t.id === tableId);
    const row = table ? table.rows.find((r) => r.object === object) : null;
    return row ? row.values : null;
  },
  openTab: (name) => app.openTab(name),
  /** [start, end] of an item (input index), or null. */
  itemTimes: (itemIndex) => {
    const row = rowOfInputIndex(app.m, itemIndex);
    return row >= 0 ? [app.m.start[row], app.m.end[row]] : null;
  },
  locate: (itemIndex) => app.timeline.itemScreenPoint(rowOfInputIndex(app.m, itemIndex)),
  followFinding: (k) => app.findings.follow(k),
  /** Types `text` into the search box; returns the number of matching items. */
  search: (text) => app.searchBox.apply(text),
  highlightCode: (c) => app.highlightCode(c),
  highlightSite: (s) => app.highlightSite(s),
  clearFilter: () => app.clearFilter(),
  /** Shows only these processes' lane groups (indexes into the header's processes). */
  showProcesses: (indexes) => app.timeline.setShownProcesses(indexes),
  /** The input indexes of the items the filter shows, sorted (tests: small reports only). */
  filteredItems: () => {
    const f = viewState.filter;
    if (!f || !f.rows) return [];
    return [...f.rows].map((row) => inputIndexOf(app.m, row)).sort((a, b) => a - b);
  },
  /** The blocked-interval rows the filter shows. */
  filteredBlocked: () => {
    const f = viewState.filter;
    if (!f || !f.blocked) return [];
    const out = [];
    f.blocked.forEach((v, b) => { if (v) out.push(b); });
    return out;
  },
  /**
   * Swift Concurrency as the viewer holds it: per task its jobs and ready spans, per actor its
   * header entry and visits, and the input index of the first item whose site has an async
   * stack (-1: none).
   */
  concurrency: () => {
    const m = app.m;
    let stackItem = -1;
    for (let i = 0; i < m.n && stackItem < 0; i++) {
      const s = siteOfItem(m, i);
      if (s >= 0 && m.sites[s] && m.sites[s].stack && m.sites[s].stack.length >= 2) stackItem = inputIndexOf(m, i);
    }
    return {
      taskJobs: m.taskJobs.map((j) => j.length), taskReady: m.taskReady.map((t) => t.length),
      actors: m.actors, actorVisits: m.actorVisits.map((v) => v.length), stackItem,
    };
  },
  replay: Object.freeze({
    play: () => app.replay.play(),
    pause: () => app.replay.pause(),
    seek: (t) => app.replay.seek(t),
    state: () => ({ ...app.replay.lastState, playing: app.replay.playing, r0: app.replay.r0, r1: app.replay.r1 }),
  }),
  draw: () => {
    const t0 = performance.now();
    app.timeline.draw();
    return performance.now() - t0;
  },
});
