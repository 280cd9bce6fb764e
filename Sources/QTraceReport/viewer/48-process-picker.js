// The process picker of a report of several processes: a popover listing every process
// (busiest first, with the analysis' figures) where a checkbox shows or hides its lane group,
// a name expands and scrolls to it, and a filter narrows the list (All / None apply to what it
// lists). The toolbar's Processes button and the header's process count open it.

import { $, el } from "./10-util.js";
import { processSubtitle } from "./42-timeline-lanes.js";

export class ProcessPicker {
  constructor(model, app) {
    this.m = model;
    this.app = app;
    this.panel = $("process-panel");
    this.button = $("process-picker");
    this.rows = [];
    if (model.processes.length < 2) return;
    this.button.hidden = false;
    this.button.addEventListener("click", () => this.toggle(this.button));
    this.build();
    document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !this.panel.hidden) this.close(); });
    document.addEventListener("mousedown", (e) => {
      if (!this.panel.hidden && !this.panel.contains(e.target) && !e.target.closest("[data-opens='process-panel']")) this.close();
    });
    this.sync();
  }

  build() {
    const panel = this.panel;
    const head = el("div", "popover-head");
    this.filter = el("input");
    this.filter.type = "search";
    this.filter.placeholder = "Filter: pid, executable, arguments";
    this.filter.setAttribute("aria-label", "Filter the processes");
    this.filter.addEventListener("input", () => this.applyFilter());
    head.appendChild(this.filter);
    const button = (id, text, onClick) => {
      const b = el("button", null, text);
      b.type = "button";
      b.id = id;
      b.addEventListener("click", onClick);
      head.appendChild(b);
    };
    button("processes-all", "All", () => this.setListed(true));
    button("processes-none", "None", () => this.setListed(false));
    panel.appendChild(head);
    this.summary = el("div", "popover-sub");
    panel.appendChild(this.summary);
    const list = el("ul", "process-list");
    for (const p of this.app.timeline.processOrder) list.appendChild(this.row(p));
    panel.appendChild(list);
    const link = el("button", "link", "Processes table →");
    link.type = "button";
    link.addEventListener("click", () => {
      this.close();
      this.app.stats.showTable("processes");
    });
    panel.appendChild(link);
  }

  row(p) {
    const process = this.m.processes[p];
    const li = el("li");
    li.dataset.process = String(p);
    const box = el("input");
    box.type = "checkbox";
    box.setAttribute("aria-label", `Show ${process.title}`);
    box.addEventListener("change", () => this.setShown(p, box.checked));
    li.appendChild(box);
    const name = el("button", "process-name", process.title);
    name.type = "button";
    name.title = process.commandLine || process.title;
    name.addEventListener("click", () => {
      this.close();
      this.app.openTab("timeline");
      this.app.timeline.revealProcess(p);
    });
    li.appendChild(name);
    li.appendChild(el("span", "process-meta", processSubtitle(this.m, p)));
    // What the filter matches: the pid, the executable and the whole command line.
    this.rows.push({ p, li, box, text: `${process.pid} ${process.executable} ${process.commandLine}`.toLowerCase() });
    return li;
  }

  toggle(anchor) {
    if (!this.panel.hidden) { this.close(); return; }
    const rect = anchor.getBoundingClientRect();
    this.panel.style.top = `${Math.round(rect.bottom + 4)}px`;
    this.panel.style.left = `${Math.round(Math.max(8, Math.min(rect.left, window.innerWidth - 520)))}px`;
    this.panel.hidden = false;
    this.filter.focus();
  }

  close() {
    this.panel.hidden = true;
  }

  applyFilter() {
    const text = this.filter.value.trim().toLowerCase();
    for (const r of this.rows) r.li.hidden = text !== "" && !r.text.includes(text);
  }

  setShown(p, shown) {
    const hidden = this.app.timeline.hiddenProcesses;
    const visible = this.m.processes.map((_, i) => i).filter((i) => (i === p ? shown : !hidden.has(i)));
    this.app.timeline.setShownProcesses(visible);
  }

  /** All / None: shows or hides every process the filter lists, leaving the others as they are. */
  setListed(shown) {
    const listed = new Set(this.rows.filter((r) => !r.li.hidden).map((r) => r.p));
    const hidden = this.app.timeline.hiddenProcesses;
    const visible = this.m.processes.map((_, i) => i).filter((i) => (listed.has(i) ? shown : !hidden.has(i)));
    this.app.timeline.setShownProcesses(visible);
  }

  /** The checkboxes and counts after the timeline's hidden set changed. */
  sync() {
    if (!this.summary) return;
    const hidden = this.app.timeline.hiddenProcesses;
    for (const r of this.rows) r.box.checked = !hidden.has(r.p);
    const shown = this.m.processes.length - hidden.size;
    this.button.textContent = `Processes ${shown}/${this.m.processes.length}`;
    this.summary.textContent = `${shown} of ${this.m.processes.length} shown · busiest first`;
  }
}
