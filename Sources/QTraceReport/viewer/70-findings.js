// The Findings tab: each diagnostic, its time range and the objects involved. Following one
// opens the timeline on its range with those queues, threads and items highlighted.

import { $, el, fmtWhenAndHowLong } from "./10-util.js";
import { queueLabel, threadName } from "./30-model.js";
import { siteText } from "./35-code.js";
import { updateViewState } from "./36-state.js";

export class FindingsView {
  constructor(model, app) {
    this.m = model;
    this.app = app;
    this.root = $("findings");
    this.build();
  }

  build() {
    const m = this.m;
    const findings = m.findings;
    const order = { error: 0, warning: 1, info: 2 };
    this.order = findings.map((_, k) => k).sort((a, b) =>
      (order[findings[a].severity] - order[findings[b].severity]) || findings[a].start - findings[b].start);
    const counts = { error: 0, warning: 0, info: 0 };
    findings.forEach((f) => (counts[f.severity] = (counts[f.severity] || 0) + 1));
    const badge = $("findings-count");
    badge.textContent = findings.length ? String(findings.length) : "";
    this.root.appendChild(el("h2", null, "Findings"));
    if (!findings.length) {
      this.root.appendChild(el("p", "empty", "No findings: none of qtrace's rules matched this trace."));
      return;
    }
    const summary = el("div", "finding-summary");
    for (const severity of ["error", "warning", "info"]) {
      if (counts[severity]) summary.appendChild(el("span", `chip ${severity}`, `${counts[severity]} ${severity}${counts[severity] > 1 ? "s" : ""}`));
    }
    this.root.appendChild(summary);
    for (const k of this.order) this.root.appendChild(this.card(findings[k], k));
  }

  card(f, k) {
    const m = this.m;
    // A div acting as a button: it holds links (a finding's code sites), which a <button> cannot.
    const card = el("div", `finding ${f.severity}`);
    card.tabIndex = 0;
    card.setAttribute("role", "button");
    card.dataset.finding = String(k);
    const left = el("div");
    left.appendChild(el("span", `chip ${f.severity}`, f.severity));
    card.appendChild(left);
    const body = el("div");
    body.appendChild(el("div", "message", f.message));
    // Identical findings grouped by the analysis: how many, and in how many processes.
    const count = f.count > 1 ? ` ×${f.count}` + (f.processCount > 1 ? ` in ${f.processCount} processes` : "") : "";
    body.appendChild(el("div", "rule", f.id + count));
    // A wait's call stack (innermost first): the library call that blocked, then its callers.
    if (f.stack && f.stack.length) body.appendChild(el("div", "stack", "called from: " + f.stack.join(" ← ")));
    card.appendChild(body);
    card.appendChild(el("div", "when", fmtWhenAndHowLong(f.start, f.end - f.start)));
    const objects = el("div", "objects");
    f.queues.slice(0, 8).forEach((q) => objects.appendChild(el("span", "chip", `queue ${queueLabel(m, q)}`)));
    f.threads.slice(0, 8).forEach((t) => objects.appendChild(el("span", "chip", threadName(m, t))));
    if (f.items.length) objects.appendChild(el("span", "chip", `${f.items.length} item${f.items.length > 1 ? "s" : ""}`));
    (f.sites || []).slice(0, 8).forEach((s) => objects.appendChild(this.siteLink(s)));
    if (objects.childNodes.length) card.appendChild(objects);
    card.addEventListener("click", () => this.follow(k));
    card.addEventListener("keydown", (e) => {
      if (e.target === card && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        this.follow(k);
      }
    });
    return card;
  }

  /** A code site as a link: its items highlighted (a blocking call site: its blocked intervals). */
  siteLink(s) {
    const m = this.m;
    const link = el("button", "chip site-link", siteText(m, s));
    link.type = "button";
    link.dataset.site = String(s);
    const site = m.sites[s];
    const code = site ? m.codes[site.code] : null;
    link.title = (code && code.symbol) || (site && site.from && site.from.symbol) || siteText(m, s);
    link.addEventListener("click", (e) => {
      e.stopPropagation();
      this.app.highlightSite(s);
    });
    return link;
  }

  /** Opens the timeline on finding k's range with its objects highlighted. */
  follow(k) {
    const m = this.m;
    const f = m.findings[k];
    const timeline = this.app.timeline;
    this.app.openTab("timeline");
    updateViewState({
      highlight: {
        severity: f.severity,
        queues: new Set(f.queues),
        threads: new Set(f.threads),
        items: new Set(f.items.filter((i) => i >= 0)),
        range: [f.start, f.end],
        finding: k,
      },
    });
    const firstLane = f.items.length && f.items[0] >= 0 ? `thread:${m.thread[f.items[0]]}`
      : f.queues.length ? `queue:${f.queues[0]}` : f.threads.length ? `thread:${f.threads[0]}` : null;
    const span = Math.max(f.end - f.start, 1000);
    timeline.setView(f.start - span * 0.5, f.end + span * 0.5);
    if (firstLane) timeline.reveal(firstLane);
    if (f.items.length && f.items[0] >= 0) timeline.select(f.items[0]);
    timeline.requestDraw();
  }
}
