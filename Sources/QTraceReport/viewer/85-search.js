// The search box of the top bar: items whose code symbol, queue label or annotation contains
// the text (case-insensitive) stay lit on the timeline, the others dim; Enter jumps to the
// next match, Escape clears. Matching is decided per site and per queue, then one byte
// lookup per item, so a million items filter in one pass (see searchFilter).

import { $, fmtCount } from "./10-util.js";
import { searchFilter } from "./35-code.js";
import { viewState } from "./36-state.js";

/** Typing pauses this long before the items are filtered again. */
const SEARCH_DEBOUNCE_MS = 150;

export class SearchBox {
  constructor(app) {
    this.app = app;
    this.input = $("search");
    this.count = $("search-count");
    this.timer = 0;
    this.input.addEventListener("input", () => this.schedule());
    this.input.addEventListener("keydown", (e) => this.onKey(e));
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.apply(this.input.value), SEARCH_DEBOUNCE_MS);
  }

  onKey(e) {
    if (e.key === "Escape") {
      e.preventDefault();
      this.app.clearFilter();
      this.input.blur();
      return;
    }
    if (e.key !== "Enter") return;
    e.preventDefault();
    if (this.timer || !this.isActive()) this.apply(this.input.value);
    const next = this.app.timeline.nextFilterMatch();
    if (next >= 0) this.app.selectAndReveal(next);
  }

  isActive() {
    const f = viewState.filter;
    return f && f.kind === "search" && f.label === this.input.value.trim();
  }

  /** Filters by `text` (the box shows it); returns the number of matching items. */
  apply(text) {
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.input.value !== text) this.input.value = text;
    const needle = text.trim();
    if (!needle) {
      this.count.textContent = "";
      const f = viewState.filter;
      if (f && f.kind === "search") this.app.setFilter(null);
      return 0;
    }
    const filter = searchFilter(this.app.m, needle);
    this.app.setFilter(filter);
    if (this.app.activeTab !== "timeline") this.app.openTab("timeline");
    this.count.textContent = `${fmtCount(filter.count)} match${filter.count === 1 ? "" : "es"}`;
    this.count.dataset.count = String(filter.count);
    return filter.count;
  }

  /** Empties the box (when another filter takes over, or on Escape). */
  clear() {
    clearTimeout(this.timer);
    this.timer = 0;
    this.input.value = "";
    this.count.textContent = "";
    delete this.count.dataset.count;
  }
}
