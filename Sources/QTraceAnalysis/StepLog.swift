// Changes of one step series on their way to it (`ThreadTable`: the running-threads series,
// which changes at nearly every item start and end). Recording each change at once loaded and
// stored the series' last point and checked that its points' storage was not shared (a call),
// per change; the log takes the change in two stores and hands a run of changes over every
// `capacity` changes (`StepSeries.record(run:)`: the last point updated in registers, stored
// once). The series receives the same changes in the same order, so it comes out the same.
struct StepLog {
    /// 512 changes: 8 KiB, within L1 while it fills.
    static let capacity = 512

    private let storage = StepLogStorage(capacity: StepLog.capacity)
    /// The storage's buffers, kept here so that an append never reads the class instance.
    private let values: UnsafeMutablePointer<Int32>
    private let times: UnsafeMutablePointer<UInt64>
    private(set) var count = 0

    init() {
        values = storage.values
        times = storage.times
    }

    /// Logs a change, first recording the log's changes into `series` if it is full.
    @inline(__always)
    mutating func append(_ value: Int32, at time: UInt64, flushingInto series: inout StepSeries) {
        if count == Self.capacity { flush(into: &series) }
        values[count] = value
        times[count] = time
        count += 1
    }

    /// Records every logged change into `series`, in order, and empties the log.
    mutating func flush(into series: inout StepSeries) {
        replay(into: &series)
        count = 0
    }

    /// Records the logged changes into `series` (a copy, for a model read before the end); the
    /// log stays as it is.
    func replay(into series: inout StepSeries) {
        let (values, times) = (self.values, self.times)
        series.record(run: count, value: { values[$0] }, time: { times[$0] })
    }
}

final class StepLogStorage {
    let values: UnsafeMutablePointer<Int32>
    let times: UnsafeMutablePointer<UInt64>

    init(capacity: Int) {
        values = .allocate(capacity: capacity)
        times = .allocate(capacity: capacity)
    }

    deinit {
        values.deallocate()
        times.deallocate()
    }
}
