// `qtrace record`: run a program with the shim preloaded and collect its trace.
import ArgumentParser
import CQTraceSys
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceRecording

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a program under the Dispatch tracer and write its trace (and HTML report).",
        discussion: """
        The program runs with libqtrace-shim.so preloaded (LD_PRELOAD); no source change is needed. \
        Its stdin, stdout and stderr pass through, Ctrl-C reaches it, and qtrace exits with its \
        status (128+N if it died of signal N). SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to qtrace \
        are passed on to the program once (the terminal's own, Ctrl-C and Ctrl-\\, reach it \
        directly and are not sent twice); the trace is written when it ends. Child processes the program starts keep working and \
        are traced into files of their own, named TRACE.PID.qtrace beside the main trace \
        (processes that never use Dispatch write nothing: when the program itself is one, a shell \
        script say, only its children's files exist, and the report covers them). A process that \
        replaces itself with exec() ends its trace there.

        At the end qtrace prints where the trace is, one summary line, and the path of the HTML \
        report (TRACE with .html), which opens offline in a browser.

        Examples:
          qtrace record -- ./app --its-flag
          qtrace record -o run1.qtrace --max-size 512 -- swift run MyTool
          qtrace record --sched -- ./app              (also CPU / runnable / sleeping per item, via perf)
          qtrace record --cpu -- ./app                (also CPU samples with call stacks, 999 Hz; --cpu=99 for another rate)
          qtrace record --ring 64M -- ./server        (flight recorder: keep the last 64 MiB; qtrace snapshot PID saves it)
          qtrace record --backend lttng -- ./app      (through an LTTng-UST session)
          qtrace record --relayd net://127.0.0.1 -- ./app   (streamed to an lttng-relayd)

        Environment: QTRACE_SHIM overrides the shim's path; QTRACE_MAX_BYTES caps a trace file \
        (events beyond it are counted as dropped); QTRACE_CHUNK_KB sets the per-thread buffer; \
        QTRACE_SLOTLESS=0 gives dispatch_async_f items a context slot again (by default they go \
        without one: cheaper in the program with many function items pending; the slot path \
        makes a smaller trace, faster to analyse).

        A full disk does not disturb the program: the trace keeps what fitted, the rest is \
        counted as dropped ("N events dropped: disk full" in the summary line, stats and the \
        report), and no half-written report is left (docs/outputs.md).

        Flight recorder (docs/flight-recorder.md): with --ring SIZE each process keeps only its \
        most recent SIZE of events (per-thread chunks reused oldest first; queue labels, code \
        sites and modules are kept apart and never overwritten). A snapshot, TRACE.snapshot-N.qtrace \
        (TRACE.PID.snapshot-N.qtrace for a child), is written when asked (qtrace snapshot PID, or \
        the --snapshot-signal, SIGUSR2 by default), when the shim sees a deadlock or a thread \
        explosion, and, with --ring-keep-on-exit, the ring itself is kept at exit. A program that \
        crashes leaves its ring as TRACE.qtrace. Each snapshot gets its own report.
        """
    )

    @Option(name: [.short, .long], help: ArgumentHelp(
        "Trace file to write (not - : the program writes it through a shared mapping). A symlink there is replaced, never followed; so is one at the report's path.",
        valueName: "path"))
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

    @Flag(name: .long, help: "Start armed but off: the shim is loaded and records nothing until `qtrace on PID|TRACE` (docs/armed.md).")
    var off = false

    @Flag(name: .long, help: "Also sample the CPU with perf: call stacks attributed to items, queues and code (999 Hz; --cpu=HZ; docs/cpu.md).")
    var cpu = false

    /// `--cpu=HZ` arrives as `--cpu --cpu-hz HZ` (CPUSampling.expandingRate).
    @Option(name: .customLong("cpu-hz"), help: .hidden)
    var cpuRate: String?

    @Option(name: .customLong("cpu-stacks"), help: ArgumentHelp(
        "With --cpu: how perf unwinds stacks: dwarf (default: complete for optimized Swift code) or fp (frame pointers: less data, complete for debug builds only).",
        valueName: "dwarf|fp"))
    var cpuStacks: CPUSampling.Stacks = .dwarf

    @Option(name: .long, help: ArgumentHelp(
        "Flight recorder: keep only the most recent SIZE of events per process (64M, 512K, 1G; a plain number is MiB) and write them on request (qtrace snapshot PID) or trouble.",
        valueName: "size"))
    var ring: String?

    @Flag(name: .long, help: "With --ring: keep the ring as the trace when the program exits (else only snapshots are kept).")
    var ringKeepOnExit = false

    @Option(name: .long, help: ArgumentHelp(
        "With --ring: the signal that asks for a snapshot (USR2 by default, USR1, a number, or none). Not installed if the program handles that signal itself.",
        valueName: "signal"))
    var snapshotSignal: String?

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
        if let output, OutputFile.isStandardOutput(output) {
            throw ValidationError("-o -: the trace cannot go to stdout (the program writes it through a shared file mapping); give a file, and use qtrace report TRACE -o - for the report")
        }
        guard ["embedded", "lttng"].contains(backend) else {
            throw ValidationError("unknown backend '\(backend)': use embedded or lttng")
        }
        if off && (backend != "embedded" || relayd != nil) {
            throw ValidationError("--off needs the embedded backend (an LTTng session has its own lttng start/stop)")
        }
        if let relayd {
            try LTTngSession.validateRelaydURL(relayd)
            guard output == nil else { throw ValidationError("--relayd: the relayd stores the trace, -o does not apply") }
            backend = "lttng"
            if sched { throw ValidationError("--sched cannot be combined with --relayd (the relayd stores the trace)") }
        }
        try validateRing()
        if cpuRate != nil { cpu = true }
        _ = try CPUSampling.rate(cpuRate)  // a bad rate fails here, before anything runs
        if cpu, relayd != nil { throw ValidationError("--cpu cannot be combined with --relayd (the relayd stores the trace)") }
    }

    private func validateRing() throws {
        guard let ring else {
            if ringKeepOnExit || snapshotSignal != nil {
                throw ValidationError("--ring-keep-on-exit and --snapshot-signal need --ring SIZE")
            }
            return
        }
        guard let bytes = FlightRecorder.parseSize(ring) else {
            throw ValidationError("--ring '\(ring)': give a size such as 64M, 512K or 1G")
        }
        guard bytes >= 128 * 1024 else { throw ValidationError("--ring \(ring): a ring needs at least 128K") }
        if backend != "embedded" || relayd != nil {
            throw ValidationError("--ring needs the embedded backend (an LTTng session has its own: lttng snapshot)")
        }
        if maxSize != nil { throw ValidationError("--ring and --max-size: a ring has a fixed size already") }
        if let snapshotSignal, FlightRecorder.signalSetting(snapshotSignal) == nil {
            throw ValidationError("--snapshot-signal '\(snapshotSignal)': use USR1, USR2, a signal number, or none")
        }
    }

    func run() throws {
        if let relayd { throw ExitCode(try recordThroughRelayd(relayd)) }
        let tracePath = output ?? RecordingFiles.defaultTracePath(for: command[0])
        try RecordingFiles.prepareOutput(tracePath)
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
            var programPid: pid_t = 0
            status = try runEmbedded(tracePath: tracePath) { programPid = $0 }
            traces = RecordingFiles.collectTraces(mainPath: tracePath)
            let exited = RecordingFiles.lastImage(of: programPid, mainPath: tracePath, among: traces)
            for path in traces { TraceFinalizer.finalize(path: path, exitStatus: path == exited ? status : nil) }
        }
        // A flight recording's snapshots get the states and samples of their own time range.
        let withSnapshots = traces + (ring != nil ? FlightRecorder.snapshots(ofRecording: tracePath) : [])
        if let schedSession { PerfSchedSession.addSchedStreams(from: schedSession, to: withSnapshots, quiet: quiet) }
        if let cpuSession { PerfSchedSession.addSampleStreams(from: cpuSession, hz: hz, to: withSnapshots, quiet: quiet) }
        finish(tracePath: tracePath, traces: traces)
        throw ExitCode(status)
    }

    /// Runs the program with the embedded recorder's shim preloaded.
    func runEmbedded(tracePath: String, started: (pid_t) -> Void) throws -> Int32 {
        let shim = try ShimLocator.find()
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = ShimLocator.preload(shim, before: env["LD_PRELOAD"])
        env["QTRACE_OUTPUT"] = tracePath
        env["QTRACE_ROOT_PPID"] = String(getpid())
        if let maxSize { env["QTRACE_MAX_BYTES"] = String(maxSize * 1024 * 1024) }
        if let ring, let bytes = FlightRecorder.parseSize(ring) {
            env["QTRACE_RING_BYTES"] = String(bytes)
            env["QTRACE_RING_KEEP_ON_EXIT"] = ringKeepOnExit ? "1" : nil
            env["QTRACE_SNAPSHOT_SIGNAL"] = snapshotSignal.flatMap(FlightRecorder.signalSetting)
            if !quiet { printErr("qtrace: flight recorder: the last \(ring) of events per process; `qtrace snapshot PID` saves them") }
        }
        guard off else { return try ChildProcess.run(command, environment: env, started: started) }
        // Armed: every process of the recording maps this file; qtrace on/off write it.
        let control = RecordingSwitch.controlPath(forTrace: URL(fileURLWithPath: tracePath).standardizedFileURL.path)
        try RecordingSwitch.create(control)
        defer { unlink(control) }
        env["QTRACE_ARMED"] = "1"
        env["QTRACE_CONTROL"] = control
        if !quiet { printErr("qtrace: armed, recording off: `qtrace on \(tracePath)` starts it, `qtrace off \(tracePath)` stops it") }
        return try ChildProcess.run(command, environment: env, started: started)
    }

    /// The summary line and the HTML report. The report covers every process that traced
    /// something, even when the program itself made no Dispatch call (a shell script whose child
    /// did): then TRACE.qtrace does not exist, and the summary names the children's files.
    func finish(tracePath: String, traces: [String]) {
        if ring != nil { finishFlightRecording(tracePath: tracePath, rings: traces) }
        guard !noReport, !traces.isEmpty else {
            if ring != nil, traces.isEmpty { return }
            if !quiet { Record.printSummary(traces: traces, mainPath: tracePath) }
            return
        }
        // The summary lines take their counts from the report's own analyses (one per trace).
        let reportPath = RecordingFiles.reportPath(for: tracePath)
        var models: [String: TraceModel] = [:]
        var failure: Error?
        do {
            try ReportGeneration.write(tracePaths: traces, to: reportPath, progress: !quiet) { models[$0] = $1.model }
        } catch {
            failure = error
        }
        if !quiet { Record.printSummary(traces: traces, mainPath: tracePath, models: models) }
        if let failure {
            // A `fail(...)` already said why on stderr (e.g. an unreadable trace): only what
            // it means for the report is left to say, not "ExitCode(rawValue: 2)".
            let reason = failure is ExitCode ? "see the error above" : "\(failure)"
            printErr("qtrace: error: could not write the report: \(reason)")
        } else if !quiet, FileManager.default.fileExists(atPath: reportPath) {
            printErr("qtrace: report: \(reportPath)")
        }
    }

    /// A flight recording keeps snapshots (and rings only when kept at exit or left by a crash):
    /// each snapshot is listed with its window and gets a report of its own.
    func finishFlightRecording(tracePath: String, rings: [String]) {
        let snapshots = FlightRecorder.snapshots(ofRecording: tracePath)
        if snapshots.isEmpty && rings.isEmpty {
            printErr("qtrace: flight recorder: no snapshot was taken and the ring was discarded at exit (qtrace snapshot PID or kill -USR2 PID takes one; --ring-keep-on-exit keeps the ring)")
            return
        }
        for path in snapshots {
            do {
                let window = TraceInfo(file: try TraceFile(path: path)).flightRecorder
                if !quiet { printErr("qtrace: snapshot: \(path): \(window?.summaryLine ?? "")") }
                guard !noReport else { continue }
                let reportPath = RecordingFiles.reportPath(for: path)
                try ReportGeneration.write(tracePaths: [path], to: reportPath, progress: false) { _, _ in }
                if !quiet { printErr("qtrace: report: \(reportPath)") }
            } catch {
                printErr("qtrace: error: \(path): \(error)")
            }
        }
    }

    /// `models`: traces already analysed (for the report); the others are modelled here.
    static func printSummary(traces: [String], mainPath: String, models: [String: TraceModel] = [:]) {
        if traces.isEmpty {
            if RecordingFiles.hasNoRoomForATrace(mainPath) {
                printErr("qtrace: no trace written: the file system of '\(mainPath)' is full (not even the trace's header fits)")
            } else {
                printErr("qtrace: no trace written: the program made no Dispatch call (or could not load the shim)")
            }
            return
        }
        if !traces.contains(mainPath) {
            printErr("qtrace: the program made no Dispatch call itself; \(traces.count) of its child processes did (one trace each):")
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
                let why = trace.header.droppedEvents > 0 ? trace.header.dropReason.map { ": " + $0 } ?? "" : ""
                printErr("qtrace: \(trace.eventCount) events\(sched), \(model.queues.count) queues, \(model.threads.count) threads, \(trace.header.droppedEvents) dropped\(why)")
                if let window = model.info.flightRecorder { printErr("qtrace: \(window.summaryLine)") }
            } catch {
                printErr("qtrace: error: \(path): \(error)")
            }
        }
    }
}

/// `--cpu-stacks dwarf|fp`.
extension CPUSampling.Stacks: ExpressibleByArgument {}
