// The rest of the timeline's drawing, added to the Timeline class: the thread-count, source,
// group and annotation lanes, and what is drawn over all lanes (mark lines, grid, axis,
// scrollbar, the chosen range).

import { fitText, fmtDuration, fmtTime, lowerBound, lowerBoundBy, SEVERITY_COLORS, upperBound } from "./10-util.js";
import { sampleSteps } from "./30-model.js";
import { viewState } from "./36-state.js";
import { AXIS_H, GUTTER, LANE_PAD, Timeline } from "./40-timeline-layout.js";

Object.assign(Timeline.prototype, {
  // MARK: Drawing lanes and overlays

  drawThreadCount(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const width = Math.ceil(this.plotW);
    const { alive, running, blocked } = m.threadCounters;
    const top = y + 6;
    const height = lane.height - 12;
    const max = this.threadMax;
    const a = sampleSteps(alive, this.v0, this.v1, width);
    const r = running ? sampleSteps(running, this.v0, this.v1, width) : null;
    const b = blocked ? sampleSteps(blocked, this.v0, this.v1, width) : null;
    const bottom = top + height;
    const px = (v) => (v / max) * height;
    for (let x = 0; x < width; x++) {
      const vAlive = a[x];
      if (!(vAlive > 0)) continue;
      ctx.fillStyle = "#2a3342";
      ctx.fillRect(GUTTER + x, bottom - px(vAlive), 1, px(vAlive));
      const vRun = r ? r[x] || 0 : 0;
      const vBlocked = b ? b[x] || 0 : 0;
      if (vRun > 0) {
        ctx.fillStyle = "#3fb950";
        ctx.fillRect(GUTTER + x, bottom - px(vRun), 1, px(vRun));
      }
      if (vBlocked > 0) {
        ctx.fillStyle = "#f85149";
        ctx.fillRect(GUTTER + x, bottom - px(vRun) - px(vBlocked), 1, px(vBlocked));
      }
    }
    // The CPU count, for comparison.
    const cpuY = bottom - px(m.meta.ncpu);
    ctx.strokeStyle = "#8d98aa";
    ctx.setLineDash([4, 4]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(GUTTER, Math.round(cpuY) + 0.5);
    ctx.lineTo(GUTTER + this.plotW, Math.round(cpuY) + 0.5);
    ctx.stroke();
    ctx.setLineDash([]);
    // Labels on small dark pills, readable over the bars.
    ctx.font = "10px system-ui, sans-serif";
    const pill = (text, x, y) => {
      const w = ctx.measureText(text).width + 8;
      ctx.fillStyle = "rgba(13,17,23,0.85)";
      ctx.fillRect(x, y - 7, w, 14);
      ctx.fillStyle = "#aeb8c8";
      ctx.fillText(text, x + 4, y);
    };
    pill(`${m.meta.ncpu} CPUs`, GUTTER + this.plotW - 60, cpuY);
    pill(`max ${max}`, GUTTER + 4, top + 5);
  },

  drawSourceLane(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const s = lane.obj;
    const source = m.sources[s];
    for (const [a, b] of source.suspended) {
      const x0 = Math.max(GUTTER, this.xOf(a)), x1 = Math.min(GUTTER + this.plotW, this.xOf(b));
      if (x1 <= x0) continue;
      ctx.fillStyle = "#1b212c";
      ctx.fillRect(x0, y + 2, x1 - x0, lane.height - 5);
      ctx.fillStyle = this.suspendedHatch;
      ctx.fillRect(x0, y + 2, x1 - x0, lane.height - 5);
      if (x1 - x0 > 70) {
        ctx.fillStyle = "#8d98aa";
        ctx.font = "10px system-ui, sans-serif";
        ctx.fillText("suspended", x0 + 5, y + 9);
      }
    }
    // Fire ticks (one per pixel at most).
    const events = m.sourceEventRows[s];
    const times = m.sourceEvents.time;
    ctx.fillStyle = "#c9d1d9";
    let lastX = -1;
    const lo = lowerBoundBy((k) => times[events[k]], this.v0, 0, events.length);
    for (let k = lo; k < events.length; k++) {
      const t = times[events[k]];
      if (t > this.v1) break;
      const x = Math.round(this.xOf(t));
      if (x === lastX) continue;
      lastX = x;
      ctx.fillRect(x, y + 3, 1, 7);
    }
    this.drawBoxes(m.sourceRun[s], y + 13, 20, 1, "source");
    // Coalesced handler runs: mark data > 1.
    const runs = m.sourceRun[s];
    const [a, b] = runs.range(this.v0, this.v1);
    if (b - a < 2000) {
      ctx.font = "bold 10px system-ui, sans-serif";
      for (let k = a; k < b; k++) {
        const i = runs.idx[k];
        if (m.sourceRuns.data[i] <= 1) continue;
        const x = this.xOf(m.sourceRuns.start[i]);
        ctx.fillStyle = "#ffa657";
        ctx.beginPath();
        ctx.moveTo(x, y + 13);
        ctx.lineTo(x - 4, y + 7);
        ctx.lineTo(x + 4, y + 7);
        ctx.fill();
        ctx.fillText(`×${m.sourceRuns.data[i]}`, x + 6, y + 7);
      }
    }
    if (source.cancel >= 0) {
      const x = this.xOf(source.cancel);
      ctx.fillStyle = "#ff6b6b";
      ctx.fillRect(x - 1, y + 2, 2, lane.height - 5);
    }
  },

  drawGroups(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    ctx.font = "10.5px system-ui, sans-serif";
    // Per row, how far right something is drawn: a group within a pixel of the one before it
    // on its row is not drawn again (200k groups zoomed out: a few thousand drawn).
    const drawnTo = new Float64Array(this.groupRows).fill(-Infinity);
    m.groups.forEach((g, i) => {
      const end = Math.max(g.lastLeave, g.notify);
      if (end < this.v0 || g.firstEnter > this.v1) return;
      const row = this.groupRow[i];
      const top = y + LANE_PAD + row * 16;
      const x0 = this.xOf(g.firstEnter);
      const x1 = this.xOf(g.lastLeave);
      const right = this.xOf(end);
      if (right - x0 < 1 && x0 < drawnTo[row] + 1) return;
      drawnTo[row] = Math.max(drawnTo[row], right);
      const highlight = viewState.highlight;
      const highlighted = highlight && highlight.groups && highlight.groups.has(i);
      ctx.fillStyle = highlighted ? "#6e5a1e" : "#2d3a4f";
      ctx.fillRect(x0, top + 2, Math.max(1, x1 - x0), 11);
      ctx.fillStyle = "#7d93b8";
      ctx.fillRect(x0, top + 2, 1.5, 11);
      if (g.notify >= 0) {
        const xn = this.xOf(g.notify);
        ctx.strokeStyle = "#7d93b8";
        ctx.beginPath();
        ctx.moveTo(x1, top + 7.5);
        ctx.lineTo(xn, top + 7.5);
        ctx.stroke();
        ctx.fillStyle = "#56d364";
        ctx.beginPath();
        ctx.moveTo(xn, top + 2);
        ctx.lineTo(xn + 5, top + 7.5);
        ctx.lineTo(xn, top + 13);
        ctx.lineTo(xn - 5, top + 7.5);
        ctx.fill();
      } else {
        ctx.fillStyle = "#ff6b6b";
        ctx.fillRect(x1, top + 2, 2, 11);
      }
      if (x1 - x0 > 40) {
        ctx.fillStyle = "#d8dee9";
        ctx.fillText(fitText(g.label, x1 - Math.max(x0, GUTTER) - 8, 6), Math.max(x0, GUTTER) + 4, top + 8);
      }
    });
  },

  drawMarks(lane, y) {
    const m = this.m;
    const ctx = this.ctx;
    const marks = m.marks;
    ctx.font = "10.5px system-ui, sans-serif";
    const lo = lowerBound(marks.time, this.v0);
    let lastLabelEnd = -Infinity;
    for (let k = lo; k < marks.rows && marks.time[k] <= this.v1; k++) {
      const x = this.xOf(marks.time[k]);
      ctx.fillStyle = "#e3b341";
      ctx.beginPath();
      ctx.moveTo(x, y + 16);
      ctx.lineTo(x - 4, y + 6);
      ctx.lineTo(x + 4, y + 6);
      ctx.fill();
      if (x > lastLabelEnd) {
        const text = fitText(m.strings[marks.name[k]] || "", 160, 6);
        ctx.fillStyle = "#d8dee9";
        ctx.fillText(text, x + 6, y + 11);
        lastLabelEnd = x + 12 + text.length * 6;
      }
    }
    const iv = m.intervals;
    for (let i = 0; i < iv.rows; i++) {
      const t0 = iv.start[i], t1 = t0 + iv.duration[i];
      if (t1 < this.v0 || t0 > this.v1) continue;
      const top = y + LANE_PAD + 18 + this.intervalRow[i] * 16;
      const x0 = this.xOf(t0), x1 = this.xOf(t1);
      ctx.fillStyle = "#3b3358";
      ctx.fillRect(x0, top + 1, Math.max(1, x1 - x0), 13);
      ctx.fillStyle = "#8e7cc3";
      ctx.fillRect(x0, top + 1, Math.max(1, x1 - x0), 2);
      if (x1 - x0 > 30) {
        ctx.fillStyle = "#e2dcf5";
        const vx = Math.max(x0, GUTTER);
        ctx.fillText(fitText(m.strings[iv.name[i]] || "", Math.min(x1, GUTTER + this.plotW) - vx - 8, 6), vx + 4, top + 8.5);
      }
    }
  },

  /** Marks as faint vertical lines across all lanes, when there are few in view. */
  drawMarkLines() {
    const marks = this.m.marks;
    const lo = lowerBound(marks.time, this.v0);
    const hi = upperBound(marks.time, this.v1);
    if (hi - lo > 60) return;
    const ctx = this.ctx;
    ctx.fillStyle = "rgba(227,179,65,0.22)";
    for (let k = lo; k < hi; k++) ctx.fillRect(Math.round(this.xOf(marks.time[k])), AXIS_H, 1, this.height);
  },

  drawGrid() {
    const { step, first } = this.ticks();
    const ctx = this.ctx;
    ctx.fillStyle = "#131922";
    for (let t = first; t <= this.v1; t += step) {
      const x = Math.round(this.xOf(t));
      if (x >= GUTTER) ctx.fillRect(x, AXIS_H, 1, this.height);
    }
  },

  ticks() {
    const span = this.v1 - this.v0;
    const target = span / Math.max(1, this.plotW / 110);
    const pow = Math.pow(10, Math.floor(Math.log10(Math.max(target, 1))));
    let step = pow;
    for (const f of [1, 2, 5, 10]) {
      if (pow * f >= target) { step = pow * f; break; }
    }
    const first = Math.ceil(this.v0 / step) * step;
    return { step, first };
  },

  drawAxis() {
    const ctx = this.ctx;
    ctx.fillStyle = "#131922";
    ctx.fillRect(0, 0, this.width, AXIS_H);
    ctx.fillStyle = "#283142";
    ctx.fillRect(0, AXIS_H - 1, this.width, 1);
    const { step, first } = this.ticks();
    ctx.font = "11px ui-monospace, 'DejaVu Sans Mono', monospace";
    ctx.textBaseline = "middle";
    for (let t = first; t <= this.v1; t += step) {
      const x = Math.round(this.xOf(t));
      if (x < GUTTER) continue;
      ctx.fillStyle = "#3a4556";
      ctx.fillRect(x, AXIS_H - 8, 1, 7);
      ctx.fillStyle = "#9aa5b6";
      ctx.fillText(fmtTime(t, step), x + 4, AXIS_H / 2 - 2);
    }
    // The trace's extent, and the range of the highlighted finding.
    ctx.fillStyle = "#30394a";
    const e0 = Math.max(GUTTER, this.xOf(0)), e1 = Math.min(this.width, this.xOf(this.m.duration));
    if (e1 > e0) ctx.fillRect(e0, AXIS_H - 3, e1 - e0, 2);
    const highlight = viewState.highlight;
    if (highlight && highlight.range) {
      const [a, b] = highlight.range;
      const x0 = Math.max(GUTTER, this.xOf(a)), x1 = Math.min(this.width, this.xOf(b));
      ctx.fillStyle = SEVERITY_COLORS[highlight.severity] || "#f0b429";
      ctx.fillRect(x0, AXIS_H - 4, Math.max(2, x1 - x0), 3);
    }
    ctx.fillStyle = "#8d98aa";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(`${fmtDuration(this.v1 - this.v0)} in view`, 12, AXIS_H / 2);
  },

  drawScrollbar() {
    const visible = this.height - AXIS_H;
    if (this.contentHeight <= visible) return;
    const ctx = this.ctx;
    const h = Math.max(24, (visible * visible) / this.contentHeight);
    const y = AXIS_H + (this.scrollY / (this.contentHeight - visible + 20)) * (visible - h);
    ctx.fillStyle = "rgba(141,152,170,0.35)";
    ctx.fillRect(this.width - 6, y, 4, h);
  },

  drawRange() {
    const range = viewState.range;
    if (!range) return;
    const ctx = this.ctx;
    const x0 = this.xOf(Math.min(range.t0, range.t1));
    const x1 = this.xOf(Math.max(range.t0, range.t1));
    ctx.fillStyle = "rgba(88,166,255,0.12)";
    ctx.fillRect(x0, AXIS_H, x1 - x0, this.height);
    ctx.fillStyle = "#58a6ff";
    ctx.fillRect(x0, AXIS_H, 1, this.height);
    ctx.fillRect(x1, AXIS_H, 1, this.height);
    const label = fmtDuration(Math.abs(range.t1 - range.t0));
    ctx.font = "600 11px system-ui, sans-serif";
    const w = ctx.measureText(label).width + 12;
    const cx = (x0 + x1) / 2;
    ctx.fillStyle = "#1f6feb";
    ctx.fillRect(cx - w / 2, AXIS_H + 4, w, 17);
    ctx.fillStyle = "#fff";
    ctx.fillText(label, cx - w / 2 + 6, AXIS_H + 13);
  },
});
