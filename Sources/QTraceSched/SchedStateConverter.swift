// perf's scheduler events → SCHED_STATE records of one traced process (docs/trace-format.md,
// format 1.3): each record says what one thread does from its time on.
import QTraceFormat

public enum SchedStateConverter {
    /// The SCHED_STATE events of the process `pid` whose threads are `tids`, from `records`
    /// (in time order, CLOCK_MONOTONIC). Times become ns since `initMonoNs`; records after
    /// `endMonoNs` are dropped. A thread's last state before the start is given at time 0
    /// (flag `initial`). Each event's tid is the scheduler stream's (0); `a` is the thread,
    /// `b` the CPU, `c` the other thread (the one switched from or to, or the waker).
    public static func events(from records: [PerfSchedRecord], pid: Int32, tids: Set<Int32>,
                              initMonoNs: UInt64, endMonoNs: UInt64) -> [Event] {
        var builder = Builder(pid: pid, tids: tids, initMonoNs: initMonoNs)
        for record in records {
            if record.timeNs > endMonoNs { break }
            builder.add(record)
        }
        builder.flushInitialStates()
        return builder.events
    }

    /// The state a switched-out thread is left in, by perf's prev_state letters: R (and R+,
    /// preempted) is runnable, D uninterruptible sleep, X/Z exited, any other sleeping.
    public static func stateAfterSwitch(_ prevState: String) -> (SchedState, SchedFlags) {
        switch prevState.first {
        case "R": (.runnable, [])
        case "D": (.sleeping, .uninterruptible)
        case "X", "Z": (.exited, [])
        default: (.sleeping, [])
        }
    }

    private struct Builder {
        let pid: Int32
        let tids: Set<Int32>
        let initMonoNs: UInt64
        var events: [Event] = []
        var current: [Int32: (state: SchedState, flags: SchedFlags)] = [:]
        /// States reached before the trace started, given at time 0 once it has.
        var beforeStart: [Int32: Event] = [:]
        var started = false

        init(pid: Int32, tids: Set<Int32>, initMonoNs: UInt64) {
            self.pid = pid; self.tids = tids; self.initMonoNs = initMonoNs
        }

        mutating func add(_ record: PerfSchedRecord) {
            if !started && record.timeNs >= initMonoNs { flushInitialStates() }
            switch record.kind {
            case .switched(let prevState, let nextTid):
                // The tid of a switched-out thread of another process is not ours (reused).
                if tids.contains(record.tid) && record.pid == pid {
                    let (state, flags) = SchedStateConverter.stateAfterSwitch(prevState)
                    emit(record, thread: record.tid, state: state, flags: flags, other: nextTid)
                }
                if tids.contains(nextTid) {
                    emit(record, thread: nextTid, state: .running, flags: [], other: record.tid)
                }
            case .wakeup(let tid, let isNew):
                // A wakeup only matters to a thread that sleeps (or is not known yet).
                guard tids.contains(tid) else { return }
                if !isNew, let now = current[tid], now.state != .sleeping { return }
                emit(record, thread: tid, state: .runnable, flags: .woken, other: record.tid)
            }
        }

        mutating func emit(_ record: PerfSchedRecord, thread: Int32, state: SchedState, flags: SchedFlags, other: Int32) {
            if let now = current[thread], now.state == state, now.flags == flags { return }
            current[thread] = (state, flags)
            // perf's records come in time order; one that does not (a damaged perf.data) may
            // precede the start: it gets time 0, and the trace reader drops it as going back.
            let time = started && record.timeNs >= initMonoNs ? record.timeNs - initMonoNs : 0
            let event = Event(type: .schedState, time: time,
                              tid: TraceLayout.schedStreamTid, arg: state.rawValue, flags: flags.rawValue,
                              a: UInt64(UInt32(bitPattern: thread)), b: UInt64(record.cpu),
                              c: UInt64(UInt32(bitPattern: other)))
            if started { events.append(event) } else { beforeStart[thread] = event }
        }

        mutating func flushInitialStates() {
            guard !started else { return }
            started = true
            for tid in beforeStart.keys.sorted() {
                var event = beforeStart[tid]!
                event.flags |= SchedFlags.initial.rawValue
                events.append(event)
            }
            beforeStart = [:]
        }
    }
}
