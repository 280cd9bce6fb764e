// `qtrace record --backend lttng` and `--relayd`: the program run under an LTTng session
// (QTraceRecording's LTTngSession; docs/lttng.md).
import Foundation
import QTraceRecording

extension Record {
    /// `qtrace record --backend lttng`: runs `command` under an LTTng session with the LTTng
    /// shim preloaded, then converts the CTF trace (kept in TRACE.lttng beside the trace) into
    /// `tracePath` and TRACE.PID.qtrace for other processes, exit status included. Returns
    /// the program's status and the traces written; do not run `TraceFinalizer` on them.
    func recordWithLTTng(tracePath: String) throws -> (status: Int32, traces: [String]) {
        let directory = LTTngSession.traceDirectory(for: tracePath)
        let session = try LTTngSession(traceDirectory: directory)  // first: "lttng is not installed"
        let shim = try LTTngSession.findShim()
        try? FileManager.default.removeItem(atPath: directory)  // this run's, like the .qtrace
        let environment = LTTngSession.environment(adding: shim, to: ProcessInfo.processInfo.environment)
        let recording = try session.record { try ChildProcess.run(command, environment: environment) }
        let traces = try LTTngSession.convert(traceDirectory: recording.traceDirectory, mainPath: tracePath,
                                              exitStatus: recording.status)
        return (recording.status, traces)
    }
}

extension Record {
    /// `qtrace record --relayd URL`: runs `command` under an LTTng session that streams to the
    /// lttng-relayd at `url`, which stores the trace (nothing is written here). Prints where
    /// it is stored and how to report it; returns the program's status.
    func recordThroughRelayd(_ url: String) throws -> Int32 {
        let session = try LTTngSession(relaydURL: url)
        let shim = try LTTngSession.findShim()
        let environment = LTTngSession.environment(adding: shim, to: ProcessInfo.processInfo.environment)
        let recording = try session.record { try ChildProcess.run(command, environment: environment) }
        if !quiet {
            let host = TraceInputs.localHostName.isEmpty ? "HOST" : TraceInputs.localHostName
            printErr("qtrace: trace streamed to lttng-relayd at \(url), session \(session.sessionName)")
            printErr("qtrace: the relayd stores it in its output directory (-o, default ~/lttng-traces) as \(host)/\(session.sessionName)-DATE-TIME")
            printErr("qtrace: report it with: qtrace report RELAYD_OUTPUT/\(host)/\(session.sessionName)-*")
        }
        return recording.status
    }
}
