// The flame graph (an icicle: callers on top) of a queue's or an item's CPU samples, in its
// details (traces recorded with `qtrace record --cpu`; docs/cpu.md). The call tree and every
// count and share come from the analysis (the header's cpuFlames, CPUProfile's FlameTree):
// this file only lays the nodes out side by side, each as wide as its share. Clicking a
// function highlights, on the timeline, the items whose samples contain it.

import { el, fmtCount, fmtShare } from "./10-util.js";
import { rowOfInputIndex } from "./30-model.js";
import { makeFilter } from "./35-code.js";

const FLAME_ROW_H = 16;
/** Nodes narrower than this share of the queue's samples are not drawn (their parent shows them). */
const FLAME_MIN_SHARE = 0.004;

/**
 * The flame graph of `{queue}` or `{item}` (an input index), or null when the report has no
 * samples for it. `onFunction(name)` is called when a function's frame is clicked.
 */
export function flameGraph(m, which, onFunction) {
  const flame = (m.header.cpuFlames || []).find((f) =>
    which.item !== undefined ? f.item === which.item : f.queue === which.queue && f.item < 0);
  if (!flame || !flame.total.length || flame.total[0] <= 0) return null;
  const names = m.header.cpuNames || [];
  const children = flame.parent.map(() => []);
  flame.parent.forEach((p, node) => { if (p >= 0) children[p].push(node); });
  const box = el("div", "flame");
  box.style.position = "relative";
  box.dataset.flame = which.item !== undefined ? `item:${which.item}` : `queue:${which.queue}`;
  let depth = 0;
  const place = (node, left, row) => {
    depth = Math.max(depth, row + 1);
    const frame = flameFrame(flame, names, node, left, row);
    if (node > 0 && onFunction) {
      frame.style.cursor = "pointer";
      frame.addEventListener("click", () => onFunction(names[flame.name[node]]));
    }
    box.appendChild(frame);
    let x = left;
    for (const child of children[node]) {
      if (flame.share[child] >= FLAME_MIN_SHARE) place(child, x, row + 1);
      x += flame.share[child];
    }
  };
  place(0, 0, 0);
  box.style.height = `${depth * FLAME_ROW_H}px`;
  const section = el("div", "flame-section");
  section.appendChild(el("h3", null, `CPU samples (${fmtCount(flame.total[0])}): callers above callees`));
  section.appendChild(box);
  return section;
}

/** One node: its name as text (never HTML), its counts in the tooltip. */
function flameFrame(flame, names, node, left, row) {
  const name = node === 0 ? "all samples" : names[flame.name[node]];
  const frame = el("div", "flame-frame", name);
  frame.dataset.node = String(node);
  frame.title = `${name}: ${fmtCount(flame.total[node])} samples (${fmtShare(flame.share[node])}), `
    + `${fmtCount(flame.self[node])} in itself`;
  Object.assign(frame.style, {
    position: "absolute", left: `${left * 100}%`, width: `${flame.share[node] * 100}%`, top: `${row * FLAME_ROW_H}px`,
    height: `${FLAME_ROW_H - 1}px`, overflow: "hidden", whiteSpace: "nowrap", textOverflow: "ellipsis",
    fontSize: "11px", lineHeight: `${FLAME_ROW_H - 1}px`, boxSizing: "border-box", padding: "0 2px",
    borderRight: "1px solid #fff", background: flameColor(name), color: "#222",
  });
  return frame;
}

/** Warm colours, stable per function name (the same function looks the same everywhere). */
function flameColor(name) {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  const hue = 10 + (Math.abs(hash) % 40);
  return `hsl(${hue}, 85%, ${62 + (Math.abs(hash >> 8) % 16)}%)`;
}

/** The filter of the items whose samples contain function `name` (their flame graphs name it). */
function functionFilter(m, name) {
  const mask = new Uint8Array(m.n);
  const names = m.header.cpuNames || [];
  for (const f of m.header.cpuFlames || []) {
    if (f.item < 0) continue;
    const row = rowOfInputIndex(m, f.item);
    if (row >= 0 && f.name.some((k, node) => node > 0 && names[k] === name)) mask[row] = 1;
  }
  return makeFilter("function", `CPU in ${name}`, mask, null);
}

/** Shows on the timeline the items that ran `name` on a CPU, as a Code row does for its code. */
export function highlightFunction(app, name) {
  app.searchBox.clear();
  app.setFilter(functionFilter(app.m, name));
  app.openTab("timeline");
}
