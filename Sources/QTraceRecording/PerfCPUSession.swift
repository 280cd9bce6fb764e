// `qtrace record --cpu[=HZ]`: perf samples the CPU (cpu-clock, with frame-pointer call
// chains) around the traced program, the way `--sched` records the scheduler
// (PerfSchedSession: started before the program, stopped by PID after it); then each trace
// gets its own process's samples as its samples stream (docs/cpu.md).
import ArgumentParser
import Foundation
import QTraceFormat
import QTraceSched

public enum CPUSampling {
    public static let defaultHz: UInt32 = 999
    public static let maxHz: UInt32 = 10_000

    /// How perf unwinds the stacks (`--cpu-stacks`): DWARF from a copy of the stack's top
    /// 8 KiB (complete for optimized Swift code, which keeps no frame-pointer chain), or the
    /// frame-pointer chain (complete for debug builds only, ~70× less data; docs/cpu.md).
    public enum Stacks: String, CaseIterable { case dwarf, fp }

    /// perf record's options: the software cpu-clock event (no hardware counters needed, as in
    /// VMs), `hz` samples per second per CPU, call chains.
    public static func perfEvents(hz: UInt32, stacks: Stacks) -> [String] {
        ["-e", "cpu-clock", "-F", String(hz), "--call-graph", stacks == .dwarf ? "dwarf,8192" : "fp"]
    }

    /// `--cpu=HZ` → `--cpu --cpu-hz HZ` (ArgumentParser has no flag with an optional value),
    /// only among qtrace's own options: the program's arguments (after `--`) are untouched.
    public static func expandingRate(_ arguments: [String]) -> [String] {
        guard arguments.first == "record" else { return arguments }
        var result = ["record"]
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            if argument == "--" { result.append(argument); result += rest; break }
            if argument.hasPrefix("--cpu=") {
                result += ["--cpu", "--cpu-hz", String(argument.dropFirst("--cpu=".count))]
            } else {
                result.append(argument)
            }
        }
        return result
    }

    /// The sampling rate of `--cpu=HZ` (nil: the default).
    public static func rate(_ text: String?) throws -> UInt32 {
        guard let text else { return defaultHz }
        guard let hz = UInt32(text), hz >= 1, hz <= maxHz else {
            throw ValidationError("--cpu=\(text): the rate must be a whole number of samples per second, 1...\(maxHz)")
        }
        return hz
    }
}

extension PerfSchedSession {
    /// Adds each trace's samples (its own process's, between its start and its end). A
    /// failure here (after the program ran) is one line on stderr: the traces stay without
    /// samples, and qtrace still exits with the program's status.
    public static func addSampleStreams(from session: PerfSchedSession, hz: UInt32, to traces: [String], quiet: Bool) {
        do {
            try convertSamples(from: session, hz: hz, to: traces, quiet: quiet)
        } catch {
            printErr("qtrace: error: \(error) (the trace has no CPU samples)")
        }
    }

    private static func convertSamples(from session: PerfSchedSession, hz: UInt32, to traces: [String], quiet: Bool) throws {
        defer { session.abandon() }
        try session.stop()
        let files = try traces.map { try TraceFile(path: $0) }
        guard !files.isEmpty else { return }  // no process used Dispatch: no trace to add samples to
        let pids = Set(files.map { Int32(truncatingIfNeeded: $0.header.pid) })
        var parser = PerfSampleParser(keepPids: pids)
        // --pid: perf unwinds (DWARF) only the traced processes' samples, not the machine's.
        let only = ["--pid", pids.sorted().map(String.init).joined(separator: ",")]
        try session.script(PerfSampleParser.arguments + only) { parser.consume(utf8: $0) }
        parser.finish()
        for trace in files {
            let end = trace.header.initMonoNs &+ trace.endTime
            let events = SampleStreamConverter.events(
                from: parser.samples, mappings: parser.mappings, pid: Int32(truncatingIfNeeded: trace.header.pid), hz: hz,
                initMonoNs: trace.header.initMonoNs, endMonoNs: end)
            try SchedStreamAppender.append(events, to: trace.path, clock: trace.clock, stream: .samples)
            let samples = events.lazy.filter { $0.type == .cpuSample }.count
            if !quiet { printErr("qtrace: cpu: \(samples) samples (\(events.count - samples) stack frames) added to \(trace.path)") }
        }
        if let loss = session.lossReport {
            printErr("qtrace: warning: cpu: perf dropped samples (\(loss)): the profile is incomplete")
        }
    }
}
