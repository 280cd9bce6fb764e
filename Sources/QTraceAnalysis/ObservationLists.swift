// Two list helpers the builder's collaborators share. Free functions, not methods of their
// owner: a method of self given an inout part of self makes Swift copy the owner for the
// call, and the copy shares the model's arrays, so the write then copied all of them (all
// sources, per source activation: quadratic; docs/performance.md).

/// Observation lists are capped: findings aggregate them, and a pathological trace must not
/// grow them without bound.
let maxObservations = 10_000

/// Appends `value` unless `list` holds `maxObservations` already.
func appendObservation<T>(_ list: inout [T], _ value: T) {
    if list.count < maxObservations { list.append(value) }
}

/// Ends the open suspension of a queue or source, if there is one.
func closeLastSuspension(_ list: inout [SuspendInterval], at time: UInt64) {
    if let last = list.indices.last, list[last].end == nil { list[last].end = time }
}
