// The viewer's shared state: what is selected, the chosen range, the followed finding and the
// item filter. Views read viewState; they change it with updateViewState, which tells every
// view that watches (watchViewState) which parts changed, so that views need not call each
// other: the details panel shows the selection and the range, the timeline redraws, the Stats
// tab marks the filter's row.

export const viewState = {
  /** The selected item row (or -1), the selected blocked interval (or -1), the item's children. */
  selection: { item: -1, blocked: -1, children: null },
  /** The range chosen with shift-drag (or qtrace.selectRange), { t0, t1 } with t0 ≤ t1, or null. */
  range: null,
  /** The followed finding: { severity, queues, threads, items (Sets), range: [t0, t1], finding }, or null. */
  highlight: null,
  /** The item filter (search, a Code row, a finding's site): see makeFilter in 35-code.js, or null. */
  filter: null,
};

const viewStateWatchers = [];

/** `fn(changed, viewState)` is called after each announced change; `changed` lists the keys. */
export function watchViewState(fn) {
  viewStateWatchers.push(fn);
}

/**
 * Sets the given parts of viewState and tells the watchers, in the order they started
 * watching. `quiet`: no one is told (a range being dragged; the caller redraws).
 */
export function updateViewState(changes, quiet) {
  Object.assign(viewState, changes);
  if (quiet) return;
  const changed = Object.keys(changes);
  for (const fn of viewStateWatchers) fn(changed, viewState);
}
