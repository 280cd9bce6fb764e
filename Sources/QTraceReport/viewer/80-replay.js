// The Replay tab: the trace played back in the style of the GCD talks. The main thread on
// the left, each queue as a FIFO line of blocks, worker threads (wavy lines) appearing,
// taking the block at the head of a queue, running it, and going away when idle. Everything
// shown is the real trace at the replay time: pending items, running items, blocked threads.

import { $, clamp, el, fade, fitText, fmtCount, fmtTime, hatchPattern, upperBoundBy } from "./10-util.js";
import { backlogOf, queueLabel, queuePendingTrack, valueAt } from "./30-model.js";

const REPLAY_SPEEDS = [
  [1e3, "1 µs per second"], [1e4, "10 µs per second"], [1e5, "100 µs per second"], [1e6, "1 ms per second"],
  [1e7, "10 ms per second"], [1e8, "100 ms per second"], [1e9, "real time"],
];
const REPLAY_ROW_H = 46;
const REPLAY_BLOCK_W = 26;
const REPLAY_BLOCK_H = 24;
const REPLAY_MAX_QUEUES = 9;

export class ReplayView {
  constructor(model, app) {
    this.m = model;
    this.app = app;
    this.canvas = $("replay");
    this.area = $("replay-area");
    this.ctx = this.canvas.getContext("2d");
    this.playing = false;
    this.r0 = 0;
    this.r1 = model.duration;
    this.t = 0;
    this.lastFrame = 0;
    this.speed = REPLAY_SPEEDS[3][0];
    this.opened = false;
    this.mainThread = model.threads.findIndex((t) => t.kind === "main");
    this.hatch = hatchPattern(this.ctx, "#ff5d6c", null);
    this.assignColumns();
    this.queueChoice = null;   // chooseQueues() on first use: a sort of every queue with items
    this.setupControls();
    new ResizeObserver(() => this.resize()).observe(this.area);
  }

  /** Each non-main thread gets a column for its lifetime; columns are reused after it exits. */
  assignColumns() {
    const threads = this.m.threads.map((t, i) => i).filter((i) => i !== this.mainThread);
    threads.sort((a, b) => this.m.threads[a].start - this.m.threads[b].start);
    const ends = [];
    this.column = new Int32Array(this.m.threads.length).fill(-1);
    for (const t of threads) {
      const th = this.m.threads[t];
      let c = ends.findIndex((e) => e < th.start);
      if (c < 0) c = ends.push(0) - 1;
      ends[c] = th.end;
      this.column[t] = c;
    }
    this.columns = Math.max(1, ends.length);
  }

  /** The main queue first, then the queues with most items (the analysis' count); the rest share an "other queues" row. */
  chooseQueues() {
    const m = this.m;
    const order = m.queues.map((_, q) => q).filter((q) => m.queueItems[q] > 0);
    order.sort((a, b) => (m.queues[b].kind === "main") - (m.queues[a].kind === "main") || m.queueItems[b] - m.queueItems[a]);
    const shown = order.slice(0, REPLAY_MAX_QUEUES);
    const rowOfQueue = new Int32Array(m.queues.length).fill(shown.length);
    shown.forEach((q, r) => (rowOfQueue[q] = r));
    return { shown, rowOfQueue, hasOtherRow: order.length > shown.length };
  }

  get shown() { return (this.queueChoice ||= this.chooseQueues()).shown; }
  get rowOfQueue() { return (this.queueChoice ||= this.chooseQueues()).rowOfQueue; }
  get hasOtherRow() { return (this.queueChoice ||= this.chooseQueues()).hasOtherRow; }

  setupControls() {
    const select = $("replay-speed");
    REPLAY_SPEEDS.forEach(([value, label]) => {
      const option = el("option", null, label);
      option.value = String(value);
      select.appendChild(option);
    });
    select.addEventListener("change", () => (this.speed = Number(select.value)));
    $("replay-play").addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    $("replay-scrub").addEventListener("input", (e) => {
      this.pause();
      this.seek(this.r0 + (Number(e.target.value) / 10000) * (this.r1 - this.r0));
    });
  }

  /** Called when the tab opens: replay the range visible in the timeline. */
  open() {
    const tl = this.app.timeline;
    const r0 = Math.max(0, tl.v0), r1 = Math.min(this.m.duration, tl.v1);
    if (!this.opened || r0 !== this.r0 || r1 !== this.r1) {
      this.opened = true;
      this.r0 = r0;
      this.r1 = Math.max(r0 + 1, r1);
      this.t = this.r0;
      // About 20 s for the whole range.
      const wanted = (this.r1 - this.r0) / 20;
      const best = REPLAY_SPEEDS.reduce((a, b) => (Math.abs(Math.log(b[0] / wanted)) < Math.abs(Math.log(a[0] / wanted)) ? b : a));
      this.speed = best[0];
      $("replay-speed").value = String(best[0]);
    }
    this.resize();
  }

  play() {
    if (this.t >= this.r1) this.t = this.r0;
    this.playing = true;
    $("replay-play").textContent = "Pause";
    this.lastFrame = performance.now();
    requestAnimationFrame((now) => this.tick(now));
  }

  pause() {
    this.playing = false;
    $("replay-play").textContent = "Play";
  }

  tick(now) {
    if (!this.playing) return;
    const dt = Math.min(0.1, (now - this.lastFrame) / 1000);
    this.lastFrame = now;
    this.seek(Math.min(this.r1, this.t + dt * this.speed));
    if (this.t >= this.r1) this.pause();
    else requestAnimationFrame((n) => this.tick(n));
  }

  seek(t) {
    this.t = clamp(t, this.r0, this.r1);
    $("replay-scrub").value = String(Math.round(((this.t - this.r0) / (this.r1 - this.r0)) * 10000));
    $("replay-time").textContent = `${fmtTime(this.t, (this.r1 - this.r0) / 2000)}  (${fmtTime(this.r0, (this.r1 - this.r0) / 100)} → ${fmtTime(this.r1, (this.r1 - this.r0) / 100)})`;
    this.draw();
  }

  resize() {
    const rect = this.area.getBoundingClientRect();
    if (!rect.width) return;
    const dpr = window.devicePixelRatio || 1;
    this.width = rect.width;
    this.height = rect.height;
    this.canvas.width = Math.floor(rect.width * dpr);
    this.canvas.height = Math.floor(rect.height * dpr);
    this.dpr = dpr;
    this.seek(this.t);
  }

  // MARK: State at t

  /** The deepest item running on thread th at t, or -1. */
  runningOn(th, t) {
    const track = this.m.threadRun[th];
    if (!track || !track.length) return -1;
    const [lo, hi] = track.range(t, t);
    let best = -1;
    for (let k = hi - 1; k >= lo && k >= hi - 64; k--) {
      const i = track.idx[k];
      if (track.begin[i] <= t && track.end[i] > t && (best < 0 || this.m.depth[i] > this.m.depth[best])) best = i;
    }
    return best;
  }

  blockedOn(th, t) {
    const track = this.m.threadBlocked[th];
    if (!track || !track.length) return -1;
    const [lo, hi] = track.range(t, t);
    for (let k = hi - 1; k >= lo && k >= hi - 16; k--) {
      const b = track.idx[k];
      if (track.begin[b] <= t && track.end[b] > t) return b;
    }
    return -1;
  }

  /** Items of queue q pending at t, oldest first (at most `limit`), and how many there are. */
  pendingOn(q, t, limit) {
    const m = this.m;
    const track = queuePendingTrack(m, q);
    const idx = track.idx;
    const lo = upperBoundBy((k) => m.start[idx[k]], t, 0, idx.length);
    const items = [];
    let k = lo;
    for (; k < idx.length && k < lo + 4000 && items.length < limit; k++) {
      const i = idx[k];
      if (m.enq[i] <= t) items.push(i);
      if (track.minBegin[k] > t) break;
    }
    const total = backlogOf(m, q) ? valueAt(backlogOf(m, q), t) : items.length;
    return { items, total: Math.max(total, items.length) };
  }

  // MARK: Drawing

  layout() {
    const rows = this.shown.length + (this.hasOtherRow ? 1 : 0);
    const top = 104;
    const workersW = Math.min(Math.max(200, this.columns * 60), this.width * 0.42);
    const colW = Math.min(64, (workersW - 20) / this.columns);
    const mainX = 90;
    const queueX = 190;
    const pipeX0 = queueX + 170;
    const pipeX1 = this.width - workersW - 40;
    const workersX0 = this.width - workersW + 10;
    const rowH = Math.min(REPLAY_ROW_H, (this.height - top - 40) / Math.max(1, rows));
    return { rows, top, colW, mainX, queueX, pipeX0, pipeX1, workersX0, rowH, bottom: top + rows * rowH };
  }

  rowY(L, row) {
    return L.top + row * L.rowH + L.rowH / 2;
  }

  columnX(L, th) {
    return L.workersX0 + this.column[th] * L.colW + L.colW / 2;
  }

  draw() {
    if (!this.width || this.area.offsetParent === null) return;
    const m = this.m;
    const ctx = this.ctx;
    const t = this.t;
    const L = this.layout();
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.fillStyle = "#0d1117";
    ctx.fillRect(0, 0, this.width, this.height);
    ctx.textBaseline = "middle";
    // Blocks fly for 0.2 s of real time, whatever the speed.
    const animWindow = this.speed * 0.2;
    const position = new Map();

    // Queue rows: a pipe per queue with its pending blocks, head on the right.
    const rows = this.shown.concat(this.hasOtherRow ? [-1] : []);
    rows.forEach((q, r) => {
      const y = this.rowY(L, r);
      ctx.fillStyle = r % 2 ? "#10151d" : "#0f141b";
      ctx.fillRect(L.queueX - 10, y - L.rowH / 2, L.pipeX1 - L.queueX + 30, L.rowH);
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillStyle = q >= 0 ? "#d8dee9" : "#8d98aa";
      ctx.fillText(fitText(q >= 0 ? queueLabel(m, q) : "other queues", 160, 6.6), L.queueX, y - 7);
      ctx.font = "10.5px system-ui, sans-serif";
      ctx.fillStyle = "#6b778a";
      if (q >= 0) ctx.fillText([m.queues[q].kind, m.queues[q].qos].filter(Boolean).join(" · "), L.queueX, y + 9);
      this.drawPipe(L, y);
      if (q < 0) return;
      const capacity = Math.max(1, Math.floor((L.pipeX1 - L.pipeX0 - 96) / (REPLAY_BLOCK_W + 5)));
      const { items, total } = this.pendingOn(q, t, capacity);
      items.forEach((i, k) => {
        const x = L.pipeX1 - 8 - (k + 1) * (REPLAY_BLOCK_W + 5);
        position.set(i, [x + REPLAY_BLOCK_W / 2, y]);
        let px = x, py = y - REPLAY_BLOCK_H / 2;
        const age = t - m.enq[i];
        if (age < animWindow) {
          // Just enqueued: fly in from the submitter.
          const from = this.submitterPoint(L, i, t);
          const f = easeOut(age / animWindow);
          px = from[0] + (x - from[0]) * f;
          py = from[1] - REPLAY_BLOCK_H / 2 + (py - from[1] + REPLAY_BLOCK_H / 2) * f;
        }
        const flying = age < animWindow;
        this.block(px, py, REPLAY_BLOCK_W, REPLAY_BLOCK_H, this.app.timeline.colors[q], flying ? 0.8 : 1, null);
      });
      ctx.fillStyle = total > items.length ? "#d8dee9" : "#6b778a";
      ctx.font = "11px ui-monospace, 'DejaVu Sans Mono', monospace";
      ctx.fillText(total > items.length ? `${fmtCount(total)} pending (+${fmtCount(total - items.length)})` : `${fmtCount(total)} pending`,
        L.pipeX0 + 10, y);
    });

    // Main thread.
    this.drawThreadLine(L.mainX, L.top - 10, L.bottom, "#f2a65a", 1);
    ctx.font = "600 12px system-ui, sans-serif";
    ctx.fillStyle = "#f4d7b0";
    ctx.fillText("main thread", L.mainX - 36, L.top - 22);
    if (this.mainThread >= 0) this.drawRunning(L, this.mainThread, L.mainX, t, animWindow);

    // Workers.
    let alive = 0, running = 0, blockedCount = 0;
    ctx.font = "10.5px system-ui, sans-serif";
    m.threads.forEach((th, i) => {
      if (i === this.mainThread || th.start > t || th.end < t) return;
      alive++;
      const x = this.columnX(L, i);
      const fadeIn = clamp((t - th.start) / animWindow, 0, 1);
      const fadeOut = th.end < this.m.duration ? clamp((th.end - t) / animWindow, 0, 1) : 1;
      const alpha = Math.min(fadeIn, fadeOut);
      this.drawThreadLine(x, L.top - 10, L.bottom, th.kind === "worker" ? "#8b9bb4" : "#5d687a", alpha);
      ctx.globalAlpha = alpha;
      ctx.fillStyle = "#8d98aa";
      ctx.fillText(fitText(String(th.tid), L.colW - 4, 6), x - 14, L.top - 22);
      ctx.globalAlpha = 1;
      const state = this.drawRunning(L, i, x, t, animWindow);
      if (state === "running") running++;
      if (state === "blocked") blockedCount++;
    });

    // Headline.
    ctx.font = "600 13px system-ui, sans-serif";
    ctx.fillStyle = "#d8dee9";
    ctx.fillText(fmtTime(t, (this.r1 - this.r0) / 2000), 20, 22);
    ctx.font = "12px system-ui, sans-serif";
    ctx.fillStyle = "#8d98aa";
    const summary = `threads alive ${alive}  ·  running ${running}  ·  blocked ${blockedCount}  ·  ${m.meta.ncpu} CPUs`;
    ctx.fillText(summary, 140, 22);
    ctx.fillStyle = "#5d687a";
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.fillText("QUEUES · FIFO, head on the right", L.queueX, L.top - 46);
    ctx.fillText("THREADS", L.workersX0 - 10, L.top - 46);
    ctx.fillText("MAIN", L.mainX - 14, L.top - 46);
    this.lastState = { t, alive, running, blocked: blockedCount };
  }

  /** Where the submitter of item i was when it enqueued it. */
  submitterPoint(L, i, t) {
    const m = this.m;
    const th = m.submitter[i];
    if (th === this.mainThread || th < 0) return [this.mainXOf(L), this.mainBlockY(L, t)];
    const parent = m.parent[i];
    const y = parent >= 0 ? this.rowY(L, this.rowOfQueue[m.queue[parent]]) : L.top;
    return [this.columnX(L, th), y];
  }

  mainXOf(L) {
    return L.mainX;
  }

  mainBlockY(L, t) {
    const i = this.mainThread >= 0 ? this.runningOn(this.mainThread, t) : -1;
    return i >= 0 ? this.rowY(L, this.rowOfQueue[this.m.queue[i]]) : L.top + 20;
  }

  /** The item running on thread th at t, drawn on its line at its queue's row. */
  drawRunning(L, th, x, t, animWindow) {
    const m = this.m;
    const i = this.runningOn(th, t);
    if (i < 0) return "idle";
    const q = m.queue[i];
    const y = this.rowY(L, this.rowOfQueue[q]);
    let bx = x - REPLAY_BLOCK_W / 2 - 4, by = y - REPLAY_BLOCK_H / 2 - 2;
    const age = t - m.start[i];
    if (age < animWindow && th !== this.mainThread) {
      // Just taken from the head of its queue.
      const f = easeOut(age / animWindow);
      const hx = L.pipeX1 - 8 - REPLAY_BLOCK_W;
      bx = hx + (bx - hx) * f;
    }
    const b = this.blockedOn(th, t);
    const ctx = this.ctx;
    if (th !== this.mainThread) {
      ctx.strokeStyle = fade(this.app.timeline.colors[q], 0.35);
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(L.pipeX1, y);
      ctx.lineTo(bx, y);
      ctx.stroke();
    }
    this.block(bx, by, REPLAY_BLOCK_W + 8, REPLAY_BLOCK_H + 4, this.app.timeline.colors[q], 1, b >= 0 ? this.hatch : null);
    if (b >= 0) {
      ctx.fillStyle = "#ffb3b3";
      ctx.font = "10px system-ui, sans-serif";
      ctx.fillText(m.causes[m.blocked.cause[b]], bx, by + REPLAY_BLOCK_H + 12);
      return "blocked";
    }
    return "running";
  }

  drawPipe(L, y) {
    const ctx = this.ctx;
    const h = REPLAY_BLOCK_H + 10;
    ctx.strokeStyle = "#2e3a4d";
    ctx.lineWidth = 1.5;
    roundRect(ctx, L.pipeX0, y - h / 2, L.pipeX1 - L.pipeX0, h, 8);
    ctx.stroke();
    // The exit, towards the threads.
    ctx.fillStyle = "#2e3a4d";
    ctx.beginPath();
    ctx.moveTo(L.pipeX1 + 4, y - 6);
    ctx.lineTo(L.pipeX1 + 12, y);
    ctx.lineTo(L.pipeX1 + 4, y + 6);
    ctx.fill();
  }

  /** A thread as a wavy vertical line, as the talks draw them. */
  drawThreadLine(x, y0, y1, color, alpha) {
    const ctx = this.ctx;
    ctx.globalAlpha = alpha;
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    for (let y = y0; y <= y1; y += 2) {
      const dx = Math.sin((y - y0) / 7) * 3;
      if (y === y0) ctx.moveTo(x + dx, y); else ctx.lineTo(x + dx, y);
    }
    ctx.stroke();
    ctx.globalAlpha = 1;
  }

  block(x, y, w, h, color, alpha, pattern) {
    const ctx = this.ctx;
    ctx.globalAlpha = alpha;
    ctx.fillStyle = color;
    roundRect(ctx, x, y, w, h, 4);
    ctx.fill();
    ctx.strokeStyle = "rgba(255,255,255,0.28)";
    ctx.lineWidth = 1;
    ctx.stroke();
    if (pattern) {
      ctx.fillStyle = "rgba(10,12,16,0.45)";
      ctx.fill();
      ctx.fillStyle = pattern;
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  }
}

function roundRect(ctx, x, y, w, h, r) {
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

function easeOut(f) {
  const x = clamp(f, 0, 1);
  return 1 - (1 - x) * (1 - x);
}
