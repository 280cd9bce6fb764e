// The timeline's view: the time span on screen, the canvas size and the vertical scroll. It
// maps times to x and lanes' content heights to y for the painters and the input, and only
// its own methods change it: a change of the time in view calls `onChange` (the Timeline
// redraws, the toolbar shows the new range).

import { clamp } from "./10-util.js";

/** The time axis' height and the lane titles' width (CSS px). */
export const AXIS_H = 30;
export const GUTTER = 240;
/** The narrowest span in view. */
const MIN_SPAN_NS = 50;

export class TimeView {
  constructor(duration, onChange) {
    this.duration = duration;
    this.onChange = onChange;
    this.v0 = 0;
    this.v1 = duration;
    this.width = 0;
    this.height = 0;
    this.dpr = 1;
    this.scrollY = 0;
    /** The lanes' total height (LaneLayout sets it). */
    this.contentHeight = 0;
  }

  // MARK: Geometry

  get plotW() {
    return Math.max(10, this.width - GUTTER);
  }

  xOf(t) {
    return GUTTER + ((t - this.v0) * this.plotW) / (this.v1 - this.v0);
  }

  timeAt(x) {
    return this.v0 + ((x - GUTTER) * (this.v1 - this.v0)) / this.plotW;
  }

  /** Screen y of a content height (lanes scroll under the axis). */
  screenY(y) {
    return AXIS_H + y - this.scrollY;
  }

  /** Time-axis ticks: a round step giving about one label per 110 px, and the first one in view. */
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
  }

  // MARK: Size and scroll

  setSize(width, height, dpr) {
    this.width = width;
    this.height = height;
    this.dpr = dpr;
    this.clampScroll();
  }

  setContentHeight(height) {
    this.contentHeight = height;
    this.clampScroll();
  }

  clampScroll() {
    const visible = this.height - AXIS_H;
    this.scrollY = clamp(this.scrollY, 0, Math.max(0, this.contentHeight - visible + 20));
  }

  scrollBy(dy) {
    this.scrollY += dy;
    this.clampScroll();
  }

  /** Content heights [y, y + height] on screen: scrolled to a third of the way down if not. */
  scrollToShow(y, height) {
    const visible = this.height - AXIS_H;
    if (y < this.scrollY || y + height > this.scrollY + visible) {
      this.scrollY = y - visible / 3;
      this.clampScroll();
    }
  }

  // MARK: Time in view

  setView(t0, t1) {
    const d = this.duration;
    let span = Math.max(MIN_SPAN_NS, t1 - t0);
    span = Math.min(span, d * 1.5);
    let v0 = t0;
    if (t1 - t0 < MIN_SPAN_NS) v0 = (t0 + t1) / 2 - span / 2;
    v0 = clamp(v0, -d * 0.25, d * 1.25 - span);
    this.v0 = v0;
    this.v1 = v0 + span;
    this.onChange();
  }

  zoomAround(t, factor) {
    const t0 = t - (t - this.v0) * factor;
    const t1 = t + (this.v1 - t) * factor;
    this.setView(t0, t1);
  }

  pan(fraction) {
    const span = this.v1 - this.v0;
    this.setView(this.v0 + span * fraction, this.v1 + span * fraction);
  }

  fit() {
    const pad = this.duration * 0.01;
    this.setView(-pad, this.duration + pad);
  }

  /** [t0, t1] in view with some margin, unless it already is and is not tiny in it. */
  showSpan(t0, t1) {
    const span = Math.max(t1 - t0, MIN_SPAN_NS * 4);
    if (t0 < this.v0 || t1 > this.v1 || span < (this.v1 - this.v0) / 200) {
      this.setView(t0 - span * 0.6, t1 + span * 0.6);
    }
  }

  /** A drag `dx`, `dy` px from where it started (`from`: the view then): pans, unclamped, and scrolls. */
  dragFrom(from, dx, dy) {
    const shift = (-dx * (from.v1 - from.v0)) / this.plotW;
    this.v0 = from.v0 + shift;
    this.v1 = from.v1 + shift;
    this.scrollY = from.scrollY - dy;
    this.clampScroll();
    this.onChange();
  }
}
