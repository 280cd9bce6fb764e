// The details panel under the timeline (the selected item, queue, thread, range, ...) and
// the hover tooltip. Everything is built with el(...) and textContent.

import {
  $, CAUSE_COLORS, clear, el, fmtCount, fmtDuration, fmtInstant, fmtShare, fmtTime, fmtValue, lowerBound,
  upperBound,
} from "./10-util.js";
import {
  backlogOf, FLAG_NEVER_FINISHED, FLAG_NEVER_STARTED, inputIndexOf, itemTitle, queueLabel,
  threadName, valueAt,
} from "./30-model.js";
import { queueBusyInRange, statsValue } from "./31-figures.js";
import { codeName, codeOfItem, siteText } from "./35-code.js";
import { watchViewState } from "./36-state.js";
import { flameGraph, highlightFunction } from "./75-flame.js";

export class Details {
  constructor(model, app) {
    this.m = model;
    this.app = app;
    this.root = $("details");
    this.showEmpty();
    // The panel shows what viewState says is selected, and a range once it is chosen.
    watchViewState((changed, state) => {
      if (changed.includes("selection")) {
        const { item, blocked, children } = state.selection;
        if (blocked >= 0) this.showBlocked(blocked);
        else this.showItem(item, children);
      }
      if (changed.includes("range") && state.range) this.showRange(state.range.t0, state.range.t1);
    });
  }

  showEmpty() {
    clear(this.root);
    const p = el("div", "details-empty",
      "Click an item for its details and flows (where it was enqueued, what it waited behind, what it enqueued). " +
      "Shift-drag to measure a range.");
    this.root.appendChild(p);
  }

  header(title, color, chips) {
    const h = el("h3");
    if (color) {
      const sw = el("span", "swatch");
      sw.style.background = color;
      h.appendChild(sw);
    }
    h.appendChild(el("span", null, title));
    for (const [text, cls] of chips || []) h.appendChild(el("span", `chip ${cls || ""}`, text));
    this.root.appendChild(h);
  }

  /** A definition list; values are strings or nodes. */
  kv(pairs) {
    const dl = el("dl", "kv");
    for (const [label, value] of pairs) {
      if (value === null || value === undefined) continue;
      const div = el("div");
      div.appendChild(el("dt", null, label));
      const dd = el("dd");
      if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
      if (!(value instanceof Node)) dd.title = String(value);
      div.appendChild(dd);
      dl.appendChild(div);
    }
    this.root.appendChild(dl);
  }

  link(text, onClick) {
    const b = el("button", "link", text);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }

  itemLink(i, label) {
    const m = this.m;
    return this.link(label || `#${inputIndexOf(m, i)} ${itemTitle(m, i)}`, () => this.app.selectAndReveal(i));
  }

  threadLink(t) {
    return this.link(threadName(this.m, t), () => this.app.timeline.reveal(`thread:${t}`));
  }

  queueLink(q) {
    return this.link(queueLabel(this.m, q), () => this.app.timeline.reveal(`queue:${q}`));
  }

  showItem(i, children) {
    const m = this.m;
    clear(this.root);
    if (i < 0) {
      this.showEmpty();
      return;
    }
    const flags = m.flags[i];
    const chips = [[m.kinds[m.kind[i]]], [`item #${inputIndexOf(m, i)}`]];
    if (flags & FLAG_NEVER_STARTED) chips.push(["never started", "error"]);
    else if (flags & FLAG_NEVER_FINISHED) chips.push(["never finished", "error"]);
    this.header(queueLabel(m, m.queue[i]), this.app.timeline.colors[m.queue[i]], chips);
    const started = !(flags & FLAG_NEVER_STARTED);
    const submitter = m.submitter[i] >= 0 ? this.threadLink(m.submitter[i]) : "unknown";
    const pairs = [
      ...this.codePairs(i),
      ["Queue", this.queueLink(m.queue[i])],
      ["Ran on", started && m.thread[i] >= 0 ? this.threadLink(m.thread[i]) : "–"],
      ["Submitted by", submitter],
      ["Enqueued in", m.parent[i] >= 0 ? this.itemLink(m.parent[i]) : "– (not inside an item)"],
      ["Waited behind", m.behind[i] >= 0 ? this.itemLink(m.behind[i]) : "–"],
      ["Enqueued", fmtInstant(m.enq[i])],
      ["Started at", started ? fmtInstant(m.start[i]) : "–"],
      ["Ended at", flags & FLAG_NEVER_FINISHED ? "–" : fmtInstant(m.end[i])],
      ["Wait", fmtDuration(m.start[i] - m.enq[i])],
      ["Run", started ? fmtDuration(m.end[i] - m.start[i]) : "–"],
    ];
    if (m.group[i] >= 0) pairs.push(["Group", this.link(m.groups[m.group[i]]?.label || `group ${m.group[i]}`, () => this.showGroup(m.group[i]))]);
    if (m.source[i] >= 0) pairs.push(["Source", this.link(m.sources[m.source[i]]?.label || `source ${m.source[i]}`, () => this.app.timeline.reveal(`source:${m.source[i]}`))]);
    const blockedInside = this.blockedDuring(i);
    if (blockedInside.total > 0) pairs.push(["Blocked inside", `${fmtDuration(blockedInside.total)} (${blockedInside.causes.join(", ")})`]);
    if (started && m.cpu) pairs.push(...this.schedPairs(i));
    this.kv(pairs);
    const chain = this.causalChain(i);
    if (chain) this.root.appendChild(chain);
    const flame = flameGraph(m, { item: inputIndexOf(m, i) }, (name) => highlightFunction(this.app, name));  // recorded with --cpu: where its CPU went
    if (flame) this.root.appendChild(flame);
    if (children && children.length) {
      const list = el("div", "child-list");
      list.appendChild(el("span", "chip", `enqueued ${children.length} item${children.length > 1 ? "s" : ""}`));
      for (const c of children.slice(0, 16)) list.appendChild(this.itemLink(c));
      if (children.length > 16) list.appendChild(el("span", "chip", `+${children.length - 16} more`));
      this.root.appendChild(list);
    }
  }

  /** CPU, runnable and sleeping time of the run, measured by the kernel (--sched). */
  schedPairs(i) {
    const m = this.m;
    const wall = m.end[i] - m.start[i];
    const share = (ns) => (wall > 0 ? ` (${Math.round((100 * ns) / wall)}% of run)` : "");
    return [
      ["On CPU", fmtDuration(m.cpu[i]) + share(m.cpu[i])],
      ["Runnable", fmtDuration(m.runnable[i]) + share(m.runnable[i])],
      ["Sleeping", fmtDuration(m.sleep[i]) + share(m.sleep[i])],
    ];
  }

  /** The analysis' time blocked inside the item and its causes (docs/report-data.md, Definitions). */
  blockedDuring(i) {
    const m = this.m;
    const total = m.blockedInside ? m.blockedInside[i] : 0;
    const mask = m.blockedCauses ? m.blockedCauses[i] : 0;
    return { total, causes: m.causes.filter((name, c) => mask & (1 << c)) };
  }

  showBlocked(b) {
    const m = this.m;
    const B = m.blocked;
    clear(this.root);
    const cause = m.causes[B.cause[b]];
    this.header(`Blocked: ${cause}`, CAUSE_COLORS[B.cause[b]], [[fmtDuration(B.duration[b])]]);
    this.kv([
      ["Thread", this.threadLink(B.thread[b])],
      ["Waiting on", B.label[b] >= 0 ? m.strings[B.label[b]] : "–"],
      ["From", fmtInstant(B.start[b])],
      ["To", fmtInstant(B.end[b])],
      ["For item", B.item[b] >= 0 ? this.itemLink(B.item[b]) : "–"],
      ...this.blockedSitePairs(b),
    ]);
  }

  showQueue(q) {
    const m = this.m;
    clear(this.root);
    const queue = m.queues[q];
    this.header(queueLabel(m, q), this.app.timeline.colors[q], [[queue.kind], [queue.qos || "no QoS"]]);
    this.kv([
      ["Target", queue.target >= 0 ? this.queueLink(queue.target) : "– (root)"],
      ["Items", fmtCount(m.queueItems[q])],
      // The Stats table's figures (docs/report-data.md, Definitions).
      ["Busy", `${fmtDuration(m.queueBusy[q])} (${fmtShare(m.queueShare[q])} of the trace)`],
      ["Backlog max", this.backlogMaxText(q)],
    ]);
    const flame = flameGraph(m, { queue: q }, (name) => highlightFunction(this.app, name));  // recorded with --cpu: where its items spent their CPU
    if (flame) this.root.appendChild(flame);
  }

  /** The Queues table's backlog max (the analysis'); "–" for a queue without a row. */
  backlogMaxText(q) {
    const shown = statsValue(this.m, "queues", q, "backlogMax");
    return typeof shown === "number" ? fmtValue(shown, "count") : "–";
  }

  showThread(t) {
    const m = this.m;
    const thread = m.threads[t];
    clear(this.root);
    this.header(threadName(m, t), null, [[thread.kind], [`tid ${thread.tid}`]]);
    this.kv([
      ["Alive", `${fmtInstant(thread.start)} → ${fmtInstant(thread.end)}`],
      ["Lifetime", fmtDuration(thread.end - thread.start)],
      ["Items run", fmtCount(m.threadItems[t])],
      // The Stats table's figures: running items, not blocked (docs/report-data.md, Definitions).
      ["Busy", fmtDuration(m.threadBusy[t])],
      ["Blocked", fmtDuration(m.threadBlockedNs[t])],
    ]);
  }

  showSourceRun(r) {
    const m = this.m;
    const runs = m.sourceRuns;
    const s = runs.source[r];
    const source = m.sources[s];
    clear(this.root);
    this.header(source.label, null, [[source.type], [`data=${runs.data[r]}`, runs.data[r] > 1 ? "warning" : ""]]);
    this.kv([
      ["Handler ran", `${fmtInstant(runs.start[r])} for ${fmtDuration(runs.duration[r])}`],
      ["Data", runs.data[r] > 1 ? `${runs.data[r]} (coalesced events or missed timer fires)` : String(runs.data[r])],
      ["Queue", source.queue >= 0 ? this.queueLink(source.queue) : "–"],
      ["Handler runs", fmtCount(source.runs)],
    ]);
  }

  showGroup(g) {
    const m = this.m;
    const group = m.groups[g];
    clear(this.root);
    const chips = group.notify >= 0 ? [["notified"]] : [["never notified", "warning"]];
    if (group.enters !== group.leaves) chips.push([`${group.enters} enters / ${group.leaves} leaves`, "error"]);
    this.header(group.label, "#7d93b8", chips);
    this.kv([
      ["First enter", fmtInstant(group.firstEnter)],
      ["Last leave", fmtInstant(group.lastLeave)],
      ["Notify", group.notify >= 0 ? fmtInstant(group.notify) : "–"],
      ["Enter → leave", fmtDuration(group.lastLeave - group.firstEnter)],
      ["Leave → notify", group.notify >= 0 ? fmtDuration(group.notify - group.lastLeave) : "–"],
      ["Enters / leaves", `${group.enters} / ${group.leaves}`],
    ]);
    this.app.timeline.reveal("groups", group.firstEnter, Math.max(group.lastLeave, group.notify));
  }

  /**
   * Aggregates of what a range covers: items started per queue (and their mean wait), each
   * queue's busy time within the range (the Stats definition, clipped to it), blocked time by
   * cause. Over the whole trace the queue figures equal the Stats ones.
   */
  rangeAggregates(t0, t1) {
    const m = this.m;
    const perQueue = new Map();
    const queueBusy = queueBusyInRange(m, t0, t1);
    const rowOf = (q) => {
      if (!perQueue.has(q)) perQueue.set(q, { q, started: 0, busy: q >= 0 && q < queueBusy.length ? queueBusy[q] : 0, wait: 0 });
      return perQueue.get(q);
    };
    let started = 0;
    const hi = upperBound(m.start, t1);
    for (let i = lowerBound(m.start, t0, 0, hi); i < hi; i++) {
      if (m.flags[i] & FLAG_NEVER_STARTED) continue;
      const row = rowOf(m.queue[i]);
      row.started++;
      row.wait += m.start[i] - m.enq[i];
      started++;
    }
    queueBusy.forEach((ns, q) => { if (ns > 0) rowOf(q); });
    const busy = queueBusy.reduce((s, v) => s + v, 0);
    const rows = [...perQueue.values()].sort((x, y) => y.busy - x.busy);
    return { t0, t1, started, busy, rows, blocked: this.blockedInRange(t0, t1) };
  }

  /** Time in blocking calls within [t0, t1], by cause. */
  blockedInRange(t0, t1) {
    const m = this.m;
    const blocked = new Float64Array(m.causes.length);
    const B = m.blocked;
    const bhi = upperBound(B.start, t1);
    for (let k = 0; k < bhi; k++) {
      const a = Math.max(B.start[k], t0), b = Math.min(B.end[k], t1);
      if (b > a) blocked[B.cause[k]] += b - a;
    }
    return blocked;
  }

  showRange(t0, t1) {
    const m = this.m;
    const agg = this.rangeAggregates(t0, t1);
    clear(this.root);
    const span = t1 - t0;
    this.header(`Range ${fmtTime(t0, span / 100)} → ${fmtTime(t1, span / 100)}`, null, [[fmtDuration(span)]]);
    const alive = m.threadCounters.alive;
    this.kv([
      ["Items started", fmtCount(agg.started)],
      ["Queues busy (sum)", `${fmtDuration(agg.busy)} = ${(agg.busy / span).toFixed(2)} queues busy on average`],
      ["Threads alive", alive ? `${fmtCount(valueAt(alive, t0))} → ${fmtCount(valueAt(alive, t1))}` : "–"],
      // Whole blocking calls, as the timeline draws them (not the threads' blocked time, which
      // leaves out work run inside a call: docs/report-data.md, Definitions).
      ["In blocking calls", agg.blocked.some((v) => v > 0)
        ? m.causes.map((c, k) => (agg.blocked[k] > 0 ? `${c} ${fmtDuration(agg.blocked[k])}` : null)).filter(Boolean).join(", ")
        : "none"],
    ]);
    const table = el("table", "agg-table");
    const head = el("tr");
    ["Queue", "Started", "Busy in range", "Share", "Mean wait"].forEach((t) => head.appendChild(el("th", null, t)));
    table.appendChild(head);
    for (const row of agg.rows.slice(0, 12)) {
      const tr = el("tr");
      const name = el("td");
      name.appendChild(this.queueLink(row.q));
      tr.appendChild(name);
      tr.appendChild(el("td", null, fmtCount(row.started)));
      tr.appendChild(el("td", null, fmtDuration(row.busy)));
      tr.appendChild(el("td", null, fmtShare(row.busy / span)));
      tr.appendChild(el("td", null, row.started ? fmtDuration(row.wait / row.started) : "–"));
      table.appendChild(tr);
    }
    this.root.appendChild(table);
    this.lastRange = agg;
  }

  /** Tooltip lines for a hit, or null. */
  tooltipFor(hit) {
    const m = this.m;
    if (!hit || hit.area !== "plot") {
      if (hit && hit.area === "gutter" && hit.lane.kind !== "section") {
        return { title: hit.lane.title, rows: hit.lane.subtitle ? [["", hit.lane.subtitle]] : [] };
      }
      return null;
    }
    if (hit.blocked >= 0) {
      const B = m.blocked;
      const b = hit.blocked;
      return {
        title: `Blocked: ${m.causes[B.cause[b]]}`,
        rows: [
          ["on", B.label[b] >= 0 ? m.strings[B.label[b]] : "–"],
          ["for", fmtDuration(B.duration[b])],
          ["thread", threadName(m, B.thread[b])],
          ...(B.site && B.site[b] >= 0 ? [["call site", siteText(m, B.site[b])]] : []),
        ],
      };
    }
    if (hit.sched >= 0) {
      const S = m.sched;
      const s = hit.sched;
      return {
        title: `Thread ${m.schedStates[S.state[s]]}`,
        rows: [
          ["for", fmtDuration(S.duration[s])],
          ["from", fmtInstant(S.start[s])],
          ["thread", threadName(m, S.thread[s])],
        ],
      };
    }
    if (hit.item >= 0) {
      const i = hit.item;
      const neverStarted = m.flags[i] & FLAG_NEVER_STARTED;
      const cpu = m.cpu && !neverStarted
        ? [["cpu", `${fmtDuration(m.cpu[i])} on CPU · ${fmtDuration(m.runnable[i])} runnable · ${fmtDuration(m.sleep[i])} sleeping`]]
        : [];
      const code = codeOfItem(m, i);
      return {
        title: queueLabel(m, m.queue[i]),
        rows: [
          ...(code >= 0 ? [["code", codeName(m, code)]] : []),
          ["kind", `${m.kinds[m.kind[i]]}  ·  item #${inputIndexOf(m, i)}`],
          ["wait", fmtDuration(m.start[i] - m.enq[i]) + (neverStarted ? " (never started)" : "")],
          ["run", neverStarted ? "–" : fmtDuration(m.end[i] - m.start[i]) + (m.flags[i] & FLAG_NEVER_FINISHED ? " (unfinished)" : "")],
          ["thread", neverStarted ? "–" : threadName(m, m.thread[i])],
          ["at", fmtInstant(hit.pending ? m.enq[i] : m.start[i])],
          ...cpu,
        ],
      };
    }
    if (hit.backlog >= 0) {
      return { title: `Backlog of ${queueLabel(m, hit.backlog)}`, rows: [["pending", fmtCount(valueAt(backlogOf(m, hit.backlog), hit.t))], ["at", fmtTime(hit.t, (this.app.timeline.v1 - this.app.timeline.v0) / 1000)]] };
    }
    if (hit.counts) {
      const c = m.threadCounters;
      return {
        title: "Threads",
        rows: [
          ["alive", fmtCount(valueAt(c.alive, hit.t))],
          ["running", c.running ? fmtCount(valueAt(c.running, hit.t)) : "–"],
          ["blocked", c.blocked ? fmtCount(valueAt(c.blocked, hit.t)) : "–"],
          ["CPUs", String(m.meta.ncpu)],
        ],
      };
    }
    if (hit.sourceRun >= 0) {
      const r = hit.sourceRun;
      const runs = m.sourceRuns;
      return {
        title: m.sources[runs.source[r]].label,
        rows: [["handler", fmtDuration(runs.duration[r])], ["data", String(runs.data[r])], ["at", fmtInstant(runs.start[r])]],
      };
    }
    if (hit.group >= 0) {
      const g = m.groups[hit.group];
      return {
        title: g.label,
        rows: [["enter → leave", fmtDuration(g.lastLeave - g.firstEnter)], ["notify", g.notify >= 0 ? fmtInstant(g.notify) : "never"]],
      };
    }
    if (hit.mark >= 0) {
      return { title: m.strings[m.marks.name[hit.mark]] || "mark", rows: [["at", fmtInstant(m.marks.time[hit.mark])]] };
    }
    if (hit.interval >= 0) {
      const iv = m.intervals;
      return { title: m.strings[iv.name[hit.interval]] || "interval", rows: [["duration", fmtDuration(iv.duration[hit.interval])]] };
    }
    return null;
  }
}

/** A details panel's title and definition lines, as shown. */
export function detailsText(root) {
  const facts = {};
  root.querySelectorAll("dl.kv > div").forEach((div) => (facts[div.querySelector("dt").textContent] = div.querySelector("dd").textContent));
  const title = root.querySelector("h3 > span:not(.swatch):not(.chip)");
  return { title: title ? title.textContent : "", facts };
}
