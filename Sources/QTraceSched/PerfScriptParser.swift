// Parsing `perf script` lines of the sched:sched_switch / sched:sched_wakeup(_new) events
// recorded by `qtrace record --sched` (docs/sched.md). perf prints, with
// `-F pid,tid,cpu,time,event,trace --ns`:
//   1234/1240 [001]   486.905096701:     sched:sched_switch: prev_comm=a b prev_pid=1240 prev_prio=120 prev_state=S ==> next_comm=c next_pid=7 next_prio=120
//   1234/1240 [001]   486.905108178:     sched:sched_wakeup: comm=x pid=1241 prio=120 target_cpu=000
// Thread names (comm, up to 15 bytes) may hold spaces and '=': fields are found by the
// fixed text around them, which a 15-byte name cannot imitate.

import QTraceFormat

/// One scheduler event, as perf saw it. Times are CLOCK_MONOTONIC ns (perf record -k CLOCK_MONOTONIC).
public struct PerfSchedRecord: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// The sample's thread left the CPU in `prevState` (perf's letters: R, R+, S, D, ...)
        /// and `nextTid` got it.
        case switched(prevState: String, nextTid: Int32)
        /// `tid` was woken (`isNew`: a new thread's first wakeup) by the sample's thread.
        case wakeup(tid: Int32, isNew: Bool)
    }

    public var timeNs: UInt64
    public var cpu: Int
    /// Process and thread the event was recorded in (prev of a switch, waker of a wakeup).
    public var pid: Int32
    public var tid: Int32
    public var kind: Kind

    public init(timeNs: UInt64, cpu: Int, pid: Int32, tid: Int32, kind: Kind) {
        self.timeNs = timeNs; self.cpu = cpu; self.pid = pid; self.tid = tid; self.kind = kind
    }

    /// Whether the record changes the state of one of `tids`.
    public func involves(_ tids: Set<Int32>) -> Bool {
        switch kind {
        case .switched(_, let next): tids.contains(tid) || tids.contains(next)
        case .wakeup(let woken, _): tids.contains(woken)
        }
    }
}

public enum PerfScriptParser {
    /// The `perf script -F` fields the parser expects (with `--ns`).
    public static let fields = "pid,tid,cpu,time,event,trace"

    /// The record of one line, or nil for any other line (other events, perf's notes, or a
    /// line that does not have the expected shape).
    public static func parse<S: StringProtocol>(_ line: S) -> PerfSchedRecord? {
        parse(utf8: Array(line.utf8)[...])
    }

    /// The same, on the line's bytes (what `perf script`'s output is read as).
    public static func parse(utf8 line: ArraySlice<UInt8>) -> PerfSchedRecord? {
        guard let (pid, tid, cpu, time, rest) = header(line) else { return nil }
        let kind: PerfSchedRecord.Kind?
        if rest.starts(with: Array("sched:sched_switch: ".utf8)) {
            kind = switchFields(rest)
        } else if rest.starts(with: Array("sched:sched_wakeup: ".utf8)) {
            kind = wakeupFields(rest, isNew: false)
        } else if rest.starts(with: Array("sched:sched_wakeup_new: ".utf8)) {
            kind = wakeupFields(rest, isNew: true)
        } else {
            kind = nil
        }
        guard let kind else { return nil }
        return PerfSchedRecord(timeNs: time, cpu: cpu, pid: pid, tid: tid, kind: kind)
    }

    /// The start every `perf script -F pid,tid,cpu,time,...` line has, `PID/TID [CPU] SECONDS.NS:`,
    /// and the rest of the line after the spaces that follow it.
    static func header(_ line: ArraySlice<UInt8>) -> (pid: Int32, tid: Int32, cpu: Int, timeNs: UInt64, rest: ArraySlice<UInt8>)? {
        var scanner = Scanner(line)
        scanner.skipSpaces()
        guard let pid = scanner.integer(), scanner.take("/"), let tid = scanner.integer() else { return nil }
        scanner.skipSpaces()
        guard scanner.take("["), let cpu = scanner.integer(), scanner.take("]") else { return nil }
        scanner.skipSpaces()
        guard let time = scanner.timestamp(), scanner.take(":") else { return nil }
        scanner.skipSpaces()
        guard let pid32 = Int32(exactly: pid), let tid32 = Int32(exactly: tid) else { return nil }
        return (pid32, tid32, cpu, time, scanner.remainder)
    }

    /// `... prev_state=S ==> next_comm=NAME next_pid=N next_prio=N`: the first
    /// " prev_state=X ==> next_comm=" (a name is too short to hold one), and the pid read
    /// backwards from the end of the line (the name comes before it).
    static func switchFields(_ text: ArraySlice<UInt8>) -> PerfSchedRecord.Kind? {
        let marker = Array(" prev_state=".utf8), arrow = Array(" ==> next_comm=".utf8)
        var from = text.startIndex
        var state: String?
        while state == nil, let at = firstIndex(of: marker, in: text, from: from) {
            var end = at + marker.count
            while end < text.endIndex, text[end] != UInt8(ascii: " ") { end += 1 }
            if end > at + marker.count, text[end...].starts(with: arrow) {
                state = String(decoding: text[(at + marker.count)..<end], as: UTF8.self)
            }
            from = at + 1
        }
        guard let state else { return nil }
        var back = BackwardScanner(text)
        guard back.integer() != nil, back.take(" next_prio="), let next = back.integer(), back.take(" next_pid="),
              let nextTid = Int32(exactly: next) else { return nil }
        return .switched(prevState: state, nextTid: nextTid)
    }

    /// `comm=NAME pid=N prio=N target_cpu=NNN`, read backwards from the end of the line.
    static func wakeupFields(_ text: ArraySlice<UInt8>, isNew: Bool) -> PerfSchedRecord.Kind? {
        var back = BackwardScanner(text)
        guard back.integer() != nil, back.take(" target_cpu="), back.integer() != nil, back.take(" prio="),
              let woken = back.integer(), back.take(" pid="), let tid = Int32(exactly: woken) else { return nil }
        return .wakeup(tid: tid, isNew: isNew)
    }
}

/// Left-to-right reading of the line's fixed prefix.
struct Scanner {
    let bytes: ArraySlice<UInt8>
    var at: Int
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes; at = bytes.startIndex }

    var remainder: ArraySlice<UInt8> {
        var end = bytes.endIndex
        while end > at, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return bytes[at..<end]
    }

    mutating func skipSpaces() { while at < bytes.endIndex, bytes[at] == UInt8(ascii: " ") { at += 1 } }

    mutating func take(_ text: String) -> Bool {
        let wanted = Array(text.utf8)
        guard bytes.endIndex - at >= wanted.count, bytes[at..<(at + wanted.count)].elementsEqual(wanted) else { return false }
        at += wanted.count
        return true
    }

    mutating func integer() -> Int? {
        var value = 0, digits = 0
        while at < bytes.endIndex, bytes[at] >= 48, bytes[at] <= 57, digits < 18 {
            value = value * 10 + Int(bytes[at] - 48)
            at += 1; digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// SECONDS.FRACTION as exact nanoseconds (perf --ns prints 9 digits; fewer are scaled).
    mutating func timestamp() -> UInt64? {
        guard let seconds = integer(), take(".") else { return nil }
        var fraction: UInt64 = 0, digits = 0
        while at < bytes.endIndex, bytes[at] >= 48, bytes[at] <= 57 {
            if digits < 9 { fraction = fraction * 10 + UInt64(bytes[at] - 48) }
            at += 1; digits += 1
        }
        guard digits > 0 else { return nil }
        for _ in digits..<max(digits, 9) { fraction *= 10 }
        // Up to 18 digits of seconds: more than a UInt64 of nanoseconds holds is no timestamp.
        let (ns, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (time, carry) = ns.addingReportingOverflow(fraction)
        return overflow || carry ? nil : time
    }
}

/// Right-to-left reading of the numeric fields that end a line.
private struct BackwardScanner {
    let text: ArraySlice<UInt8>
    var end: Int
    init(_ text: ArraySlice<UInt8>) { self.text = text; end = text.endIndex }

    mutating func integer() -> Int? {
        var start = end
        while start > text.startIndex, text[start - 1] >= 48, text[start - 1] <= 57, end - start < 18 { start -= 1 }
        guard start < end else { return nil }
        let value = text[start..<end].reduce(0) { $0 * 10 + Int($1 - 48) }
        end = start
        return value
    }

    mutating func take(_ literal: String) -> Bool {
        let wanted = Array(literal.utf8)
        guard end - text.startIndex >= wanted.count, text[(end - wanted.count)..<end].elementsEqual(wanted) else { return false }
        end -= wanted.count
        return true
    }
}
