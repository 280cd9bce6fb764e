// The details panel's code-identity parts, added to the Details class: what an item ran and
// where it was enqueued, the chain of items that enqueued it, and a Swift task's details.
// Symbols come from the traced program: set as textContent / title only.

import { clear, el, fmtInstant, lowerBound } from "./10-util.js";
import { inputIndexOf, itemTitle } from "./30-model.js";
import { codeName, codeOfItem, fileLine, siteOfItem, taskOfItem, taskTitle } from "./35-code.js";
import { Details } from "./50-details.js";

/** How many enqueuing items the causal chain follows back. */
const CAUSAL_CHAIN_DEPTH = 3;

Object.assign(Details.prototype, {
  /** A symbol as text with its file:line after it; the full symbol and path on hover. */
  codeLocationNode(location, className) {
    const span = el("span", `code-location ${className || ""}`);
    span.appendChild(el("span", "code-name", location.name));
    const where = fileLine(location);
    if (where) {
      const file = el("span", "code-file", where);
      file.title = location.file;
      span.appendChild(file);
    }
    span.title = location.symbol || location.name;
    return span;
  },

  /** "What ran", "Enqueued at" and "Task" rows of item i (none without code identity). */
  codePairs(i) {
    const m = this.m;
    const s = siteOfItem(m, i);
    const pairs = [];
    if (s >= 0 && m.sites[s]) {
      const site = m.sites[s];
      const code = m.codes[site.code];
      pairs.push(["What ran", code ? this.codeLocationNode(code, "what-ran") : "–"]);
      pairs.push(["Enqueued at", site.from ? this.codeLocationNode(site.from, "enqueued-at") : "–"]);
      if (site.stack && site.stack.length) pairs.push(["Async stack", this.asyncStackNode(site.stack)]);
    } else if (m.sites.length) {
      pairs.push(["What ran", "– (not recorded)"]);
    }
    const t = taskOfItem(m, i);
    if (t >= 0) pairs.push(["Task", this.link(`${taskTitle(m, t)} · job ${this.jobNumber(t, i)} of ${m.taskJobs[t].length}`, () => this.revealTask(t))]);
    return pairs;
  },

  /**
   * A Swift job's async stack, innermost first: the function it resumed, each caller that
   * awaits it, up to the task's entry. Folded to its first frame; the rest on demand.
   */
  asyncStackNode(stack) {
    const box = el("details", "async-stack");
    box.appendChild(el("summary", "", `${stack.length} frame${stack.length === 1 ? "" : "s"}: ${stack[0].name}`));
    const list = el("ol", "async-frames");
    for (const frame of stack) {
      const li = el("li");
      li.appendChild(this.codeLocationNode(frame, "async-frame"));
      list.appendChild(li);
    }
    box.appendChild(list);
    return box;
  },

  /** Where the blocking call was made, with a link to every interval blocked there. */
  blockedSitePairs(b) {
    const m = this.m;
    const s = m.blocked.site ? m.blocked.site[b] : -1;
    const site = m.sites[s];
    if (!site) return [];
    const node = el("span");
    if (site.from) node.appendChild(this.codeLocationNode(site.from, "call-site"));
    node.appendChild(document.createTextNode(" "));
    node.appendChild(this.link("all calls here", () => this.app.highlightSite(s)));
    return [["Call site", node]];
  },

  jobNumber(t, i) {
    return lowerBound(this.m.taskJobs[t], i) + 1;
  },

  /**
   * Who asked: the item that enqueued this one, the one that enqueued that, ... each with
   * what it ran and where it enqueued its child from.
   */
  causalChain(i) {
    const m = this.m;
    const chain = el("ol", "causal-chain");
    let child = i;
    for (let level = 0; level < CAUSAL_CHAIN_DEPTH; level++) {
      const parent = m.parent[child];
      if (parent < 0) break;
      const li = el("li");
      li.appendChild(el("span", "chain-label", level === 0 ? "enqueued by " : "← enqueued by "));
      const code = codeOfItem(m, parent);
      li.appendChild(this.itemLink(parent, `#${inputIndexOf(m, parent)} ${code >= 0 ? codeName(m, code) : itemTitle(m, parent)}`));
      const s = siteOfItem(m, parent);
      const from = s >= 0 && m.sites[s] ? m.sites[s].from : null;
      if (from) {
        li.appendChild(el("span", "chain-label", " itself enqueued at "));
        li.appendChild(this.codeLocationNode(from, "chain-from"));
      }
      chain.appendChild(li);
      child = parent;
    }
    if (!chain.childNodes.length) return null;
    const wrap = el("div", "causal");
    wrap.appendChild(el("span", "chip", "who asked"));
    wrap.appendChild(chain);
    return wrap;
  },

  revealTask(t) {
    const [first, last] = this.m.taskSpan[t];
    this.app.openTab("timeline");
    this.app.timeline.reveal(`task:${t}`, first, last);
    this.showTask(t);
  },

  showTask(t) {
    const m = this.m;
    const task = m.tasks[t];
    if (!task) return;
    clear(this.root);
    const chips = [[`${task.jobs} job${task.jobs === 1 ? "" : "s"}`]];
    if (task.onMainActor) chips.push(["main actor", "warning"]);
    this.header(taskTitle(m, t), null, chips);
    const jobs = m.taskJobs[t];
    const [first, last] = m.taskSpan[t];
    const functions = el("span");
    task.functions.forEach((c, k) => {
      if (k) functions.appendChild(document.createTextNode(", "));
      functions.appendChild(this.codeLocationNode(m.codes[c] || { name: `code ${c}` }, "task-function"));
    });
    const stackSite = jobs.length ? Array.from(jobs).map((j) => siteOfItem(m, j)).find((s) => s >= 0 && m.sites[s] && m.sites[s].stack) : undefined;
    const children = m.tasks.reduce((n, other) => n + (other.parent === t ? 1 : 0), 0);
    this.kv([
      ["Parent", task.parent >= 0 ? this.link(taskTitle(m, task.parent), () => this.revealTask(task.parent)) : "–"],
      ["Children", children ? `${children} task${children === 1 ? "" : "s"}` : "–"],
      ["Async functions", task.functions.length ? functions : "–"],
      ["Async stack", stackSite !== undefined ? this.asyncStackNode(m.sites[stackSite].stack) : "–"],
      ["First job enqueued", jobs.length ? fmtInstant(first) : "–"],
      ["Last job ended", jobs.length ? fmtInstant(last) : "–"],
    ]);
    if (jobs.length) {
      const list = el("div", "child-list");
      list.appendChild(el("span", "chip", "jobs"));
      for (const j of jobs.slice(0, 16)) list.appendChild(this.itemLink(j));
      if (jobs.length > 16) list.appendChild(el("span", "chip", `+${jobs.length - 16} more`));
      this.root.appendChild(list);
    }
  },
});
