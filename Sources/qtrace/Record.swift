// `qtrace record`: run a program with the shim preloaded and collect its trace.
import ArgumentParser
import CQTraceSys
import Foundation
import QTraceAnalysis
import QTraceFormat

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a program under the Dispatch tracer and write its trace (and HTML report).",
        discussion: """
        The program runs with libqtrace-shim.so preloaded (LD_PRELOAD); no source change is needed. \
        Its stdin, stdout and stderr pass through, Ctrl-C reaches it, and qtrace exits with its \
        status (128+N if it died of signal N). Child processes the program starts keep working and \
        are traced into files of their own, named TRACE.PID.qtrace beside the main trace \
        (processes that never use Dispatch write nothing).

        At the end qtrace prints where the trace is, one summary line, and the path of the HTML \
        report (TRACE with .html), which opens offline in a browser.

        Examples:
          qtrace record -- ./app --its-flag
          qtrace record -o run1.qtrace --max-size 512 -- swift run MyTool
          qtrace record --sched -- ./app              (also CPU / runnable / sleeping per item, via perf)
          qtrace record --cpu -- ./app                (also CPU samples with call stacks, 999 Hz; --cpu=99 for another rate)
          qtrace record --backend lttng -- ./app      (through an LTTng-UST session)
          qtrace record --relayd net://127.0.0.1 -- ./app   (streamed to an lttng-relayd)

        Environment: QTRACE_SHIM overrides the shim's path; QTRACE_MAX_BYTES caps a trace file \
        (events beyond it are counted as dropped); QTRACE_CHUNK_KB sets the per-thread buffer.
        """
    )

    @Option(name: [.short, .long], help: ArgumentHelp("Trace file to write.", valueName: "path"))
    var output: String?

    @Flag(name: .long, help: "Do not write the HTML report.")
    var noReport = false

    @Option(name: .long, help: ArgumentHelp("Maximum trace size in MiB; later events are counted as dropped.", valueName: "MiB"))
    var maxSize: UInt64?

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Option(name: .long, help: ArgumentHelp(
        "Recorder: embedded (default: qtrace's own trace file, no daemon) or lttng (an LTTng-UST session; see docs/lttng.md).",
        valueName: "backend"))
    var backend = "embedded"

    @Option(name: .long, help: ArgumentHelp(
        "Stream an LTTng session to the lttng-relayd at net://HOST[:CONTROL_PORT[:DATA_PORT]] (implies --backend lttng); the relayd stores the trace.",
        valueName: "url"))
    var relayd: String?

    @Flag(name: .long, help: "Also record kernel scheduling with perf (running / runnable / sleeping per thread; docs/sched.md).")
    var sched = false

    @Flag(name: .long, help: "Also sample the CPU with perf: call stacks attributed to items, queues and code (999 Hz; --cpu=HZ; docs/cpu.md).")
    var cpu = false

    /// `--cpu=HZ` arrives as `--cpu --cpu-hz HZ` (CPUSampling.expandingRate).
    @Option(name: .customLong("cpu-hz"), help: .hidden)
    var cpuRate: String?

    @Option(name: .customLong("cpu-stacks"), help: ArgumentHelp(
        "With --cpu: how perf unwinds stacks: dwarf (default: complete for optimized Swift code) or fp (frame pointers: less data, complete for debug builds only).",
        valueName: "dwarf|fp"))
    var cpuStacks: CPUSampling.Stacks = .dwarf

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The program and its arguments (after --).", valueName: "program"))
    var command: [String] = []

    mutating func validate() throws {
        // The passthrough argument also captures a leading --help: answer it.
        if command.first == "--help" || command.first == "-h" { throw CleanExit.helpRequest(self) }
        if command.first == "--" { command.removeFirst() }
        guard !command.isEmpty else { throw ValidationError("missing program: use qtrace record -- PROGRAM [ARGS...]") }
        if command[0].hasPrefix("-") {
            throw ValidationError("unknown option '\(command[0])' (the program goes after --: qtrace record [OPTIONS] -- PROGRAM)")
        }
        guard ["embedded", "lttng"].contains(backend) else {
            throw ValidationError("unknown backend '\(backend)': use embedded or lttng")
        }
        if let relayd {
            try LTTngSession.validateRelaydURL(relayd)
            guard output == nil else { throw ValidationError("--relayd: the relayd stores the trace, -o does not apply") }
            backend = "lttng"
            if sched { throw ValidationError("--sched cannot be combined with --relayd (the relayd stores the trace)") }
        }
        if cpuRate != nil { cpu = true }
        _ = try CPUSampling.rate(cpuRate)  // a bad rate fails here, before anything runs
        if cpu, relayd != nil { throw ValidationError("--cpu cannot be combined with --relayd (the relayd stores the trace)") }
    }

    func run() throws {
        if let relayd { throw ExitCode(try recordThroughRelayd(relayd)) }
        let tracePath = output ?? Record.defaultTracePath(for: command[0])
        try Record.prepareOutput(tracePath)
        let schedSession = sched ? try PerfSchedSession.start() : nil  // fails before the program runs
        defer { schedSession?.abandon() }
        let hz = try CPUSampling.rate(cpuRate)
        let cpuSession = cpu ? try PerfSchedSession.start(option: "--cpu", events: CPUSampling.perfEvents(hz: hz, stacks: cpuStacks)) : nil
        defer { cpuSession?.abandon() }
        let status: Int32, traces: [String]
        if backend == "lttng" {
            // The LTTng trace is converted into ordinary .qtrace files (exit status included).
            (status, traces) = try recordWithLTTng(tracePath: tracePath)
        } else {
            status = try runEmbedded(tracePath: tracePath)
            traces = Record.collectTraces(mainPath: tracePath)
            for path in traces { TraceFinalizer.finalize(path: path, exitStatus: path == tracePath ? status : nil) }
        }
        if let schedSession { Record.addSchedStreams(from: schedSession, to: traces, quiet: quiet) }
        if let cpuSession { Record.addSampleStreams(from: cpuSession, hz: hz, to: traces, quiet: quiet) }
        finish(tracePath: tracePath, traces: traces)
        throw ExitCode(status)
    }

    /// Runs the program with the embedded recorder's shim preloaded.
    func runEmbedded(tracePath: String) throws -> Int32 {
        let shim = try ShimLocator.find()
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = ShimLocator.preload(shim, before: env["LD_PRELOAD"])
        env["QTRACE_OUTPUT"] = tracePath
        env["QTRACE_ROOT_PPID"] = String(getpid())
        if let maxSize { env["QTRACE_MAX_BYTES"] = String(maxSize * 1024 * 1024) }

        return try ChildProcess.run(command, environment: env)
    }

    /// The summary line and the HTML report.
    func finish(tracePath: String, traces: [String]) {
        guard !noReport, FileManager.default.fileExists(atPath: tracePath) else {
            if !quiet { Record.printSummary(traces: traces, mainPath: tracePath) }
            return
        }
        // The summary lines take their counts from the report's own analyses (one per trace).
        let reportPath = Record.reportPath(for: tracePath)
        var models: [String: TraceModel] = [:]
        var failure: Error?
        do {
            try ReportGeneration.write(tracePaths: traces, to: reportPath, progress: !quiet) { models[$0] = $1.model }
        } catch {
            failure = error
        }
        if !quiet { Record.printSummary(traces: traces, mainPath: tracePath, models: models) }
        if let failure {
            printErr("qtrace: error: could not write the report: \(failure)")
        } else if !quiet, FileManager.default.fileExists(atPath: reportPath) {
            printErr("qtrace: report: \(reportPath)")
        }
    }

    static func defaultTracePath(for program: String) -> String {
        let name = URL(fileURLWithPath: program).lastPathComponent
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return "qtrace-\(name)-\(formatter.string(from: Date())).qtrace"
    }

    static func reportPath(for tracePath: String) -> String {
        tracePath.hasSuffix(".qtrace") ? String(tracePath.dropLast(7)) + ".html" : tracePath + ".html"
    }

    /// Removes a previous trace (and its per-process siblings) so stale files are not mistaken
    /// for this run's.
    static func prepareOutput(_ path: String) throws {
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard FileManager.default.isWritableFile(atPath: dir.isEmpty ? "." : dir) else {
            throw ValidationError("cannot write the trace: directory '\(dir)' is not writable (choose another with -o)")
        }
        for old in [path] + siblingTraces(of: path) { try? FileManager.default.removeItem(atPath: old) }
    }

    /// The traces of this run: the main one and one per other process (TRACE.PID.qtrace).
    static func collectTraces(mainPath: String) -> [String] {
        var result: [String] = []
        if FileManager.default.fileExists(atPath: mainPath) { result.append(mainPath) }
        return result + siblingTraces(of: mainPath)
    }

    static func siblingTraces(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        let base = url.lastPathComponent.hasSuffix(".qtrace") ? String(url.lastPathComponent.dropLast(7)) : url.lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? []
        return names.filter { name in
            guard name.hasPrefix(base + "."), name.hasSuffix(".qtrace") else { return false }
            let middle = name.dropFirst(base.count + 1).dropLast(7)
            return !middle.isEmpty && middle.allSatisfy(\.isNumber)
        }.sorted().map { (dir.isEmpty ? "" : dir + "/") + $0 }
    }

    /// `models`: traces already analysed (for the report); the others are modelled here.
    static func printSummary(traces: [String], mainPath: String, models: [String: TraceModel] = [:]) {
        if traces.isEmpty {
            printErr("qtrace: no trace written: the program made no Dispatch call (or could not load the shim)")
            return
        }
        for path in traces {
            do {
                let trace = try TraceFile(path: path)
                // The counts `qtrace stats` prints: the model's queues and threads, not raw events
                // (the model only: no symbols or statistics are needed for a count).
                let model = models[path] ?? Analysis.buildModel(file: trace)
                printErr("qtrace: trace: \(path)")
                let sched = (trace.schedEventCount > 0 ? " (\(trace.schedEventCount) scheduler states)" : "")
                    + (trace.sampleEventCount > 0 ? " (\(trace.sampleEventCount) CPU sample records)" : "")
                printErr("qtrace: \(trace.eventCount) events\(sched), \(model.queues.count) queues, \(model.threads.count) threads, \(trace.header.droppedEvents) dropped")
            } catch {
                printErr("qtrace: error: \(path): \(error)")
            }
        }
    }
}

/// One line on stderr.
func printErr(_ message: String) { writeStderr(message + "\n") }

/// Finds a shim library: the path in an environment variable, beside the qtrace executable,
/// or in ../lib/qtrace.
enum ShimLocator {
    static let fileName = "libqtrace-shim.so"

    /// The embedded recorder's shim.
    static func find() throws -> String {
        try find(fileName: fileName, variable: "QTRACE_SHIM", buildHint: "build it with `make build`")
    }

    static func find(fileName: String, variable: String, buildHint: String) throws -> String {
        if let explicit = ProcessInfo.processInfo.environment[variable], !explicit.isEmpty {
            guard FileManager.default.fileExists(atPath: explicit) else {
                throw ValidationError("\(variable)=\(explicit) does not exist")
            }
            return URL(fileURLWithPath: explicit).standardizedFileURL.path
        }
        let exeDir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for candidate in [exeDir.appendingPathComponent(fileName), exeDir.appendingPathComponent("../lib/qtrace/\(fileName)")]
        where FileManager.default.fileExists(atPath: candidate.path) {
            return candidate.standardizedFileURL.path
        }
        throw ValidationError("\(fileName) not found next to qtrace: \(buildHint) (or set \(variable)=/path/to/\(fileName))")
    }

    /// LD_PRELOAD with `shim` first, keeping what the user had preloaded.
    static func preload(_ shim: String, before existing: String?) -> String {
        [shim, existing].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ":")
    }
}
