// Shared by `qtrace stats`, `check` and `diff`: open a trace, analyse it with progress on a
// terminal, load summaries, and report bad input as one line on stderr.
import ArgumentParser
import QTraceAnalysis
import QTraceFormat
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Exit status for unusable input (missing or corrupt file, bad option values). `check` uses
/// 1 for broken bounds, so bad input must differ.
public let badInputExitCode: Int32 = 2

/// Prints `qtrace COMMAND: error: MESSAGE` on stderr and exits with `badInputExitCode`.
public func fail(_ command: String, _ message: String) -> ExitCode {
    ProgressLine.shared.finish()
    writeStderr("qtrace \(command): error: \(terminalSafe(message))\n")
    return ExitCode(badInputExitCode)
}

public func writeStderr(_ text: String) { writeAll(STDERR_FILENO, text) }

/// write(2) until done (stdio's stdout/stderr globals are not concurrency-safe in Swift 6).
@discardableResult
public func writeAll(_ fd: Int32, _ text: String) -> Bool {
    var text = text
    return text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}

/// Opens and analyses one traced process. Reader warnings (truncation, damage) go to stderr;
/// progress too, when stderr is a terminal and the analysis takes more than a second.
public func analyseTrace(_ process: TraceInput, command: String) throws -> AnalysisResult {
    analyse(try openTrace(process.path, named: process.source, command: command), command: command)
}

/// Opens `path` (named `name` in errors: the trace the user gave, when `path` is a temporary
/// conversion of it) and prints its reader warnings.
public func openTrace(_ path: String, named name: String? = nil, command: String) throws -> TraceFile {
    let file: TraceFile
    do {
        file = try Phases.time("open: header, chunk table, validation") { try TraceFile(path: path) }
    } catch {
        throw fail(command, "cannot read trace '\(name ?? path)': \(error)")
    }
    for warning in file.warnings.prefix(3) {
        writeStderr("qtrace \(command): warning: \(terminalSafe(warning.description))\n")
    }
    if file.warnings.count > 3 { writeStderr("qtrace \(command): warning: \(file.warnings.count - 3) more reader warnings\n") }
    return file
}

/// Analyses an open trace, with progress on a terminal.
public func analyse(_ file: TraceFile, command: String) -> AnalysisResult {
    let progress = ProgressLine.shared
    progress.phase("analysing", total: file.eventCount)
    if Phases.enabled { timeDecodeAlone(file) }
    var model = Analysis.buildModel(file: file, progressEvery: 1 << 20) { progress.events($0) }
    progress.phase("symbolizing")
    Phases.time("symbolize") { symbolize(&model, command: command) }
    progress.phase("computing statistics")
    let statistics = Phases.time("statistics (total)") { TraceStatistics(model: model) }
    progress.phase("looking for findings")
    let findings = Phases.time("findings") { Diagnostics.findings(model: model, statistics: statistics) }
    return AnalysisResult(model: model, statistics: statistics, findings: findings)
}

/// With QTRACE_PHASES=1: one extra pass that only merges and decodes the events, so that the
/// decoder's share of "decode and model" can be told from the model builder's (the two run
/// interleaved, event by event). It is not part of a normal run.
private func timeDecodeAlone(_ file: TraceFile) {
    var count = 0
    Phases.time("decode alone (extra pass, not in the run)") { file.forEachEvent { _ in count &+= 1 } }
}

/// A trace (a .qtrace file or an LTTng trace directory: process `pid`, or its only one) or a
/// JSON summary written by `qtrace stats --json` (for diffs against a baseline).
public func loadSummary(_ path: String, command: String, pid: Int32? = nil) throws -> AnalysisSummary {
    if let data = readIfJSON(path) {
        do {
            return try AnalysisSummary.decode(data)
        } catch let error as SummaryError {
            throw fail(command, "'\(path)': \(error)")
        } catch {
            throw fail(command, "'\(path)' is not a valid qtrace summary: \(error)")
        }
    }
    let inputs = try TraceInputs.open([path], command: command)
    defer { inputs.removeTemporaryFiles() }
    let process = try inputs.single(pid: pid, command: command)
    defer { ProgressLine.shared.finish() }
    return AnalysisSummary(result: try analyseTrace(process, command: command), tracePath: path,
                           generator: "qtrace \(qtraceVersion)")
}

/// The summaries of every process `path` names (a trace, a recording's directory or main
/// trace name, an LTTng trace directory, or a JSON summary), each with its pid; `pid`
/// selects one. `check` bounds every process of a recording this way.
public func loadSummaries(_ path: String, command: String, pid: Int32? = nil) throws -> [AnalysisSummary] {
    if readIfJSON(path) != nil || pid != nil { return [try loadSummary(path, command: command, pid: pid)] }
    let inputs = try TraceInputs.open([path], command: command)
    defer { inputs.removeTemporaryFiles() }
    defer { ProgressLine.shared.finish() }
    return try inputs.processes.map { process in
        AnalysisSummary(result: try analyseTrace(process, command: command), tracePath: process.source,
                        generator: "qtrace \(qtraceVersion)")
    }
}

/// The file's contents when it starts like JSON (a trace starts with "QTRACE").
private func readIfJSON(_ path: String) -> Data? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var first: UInt8 = 0
    while fread(&first, 1, 1, f) == 1 {
        if first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 { continue }
        guard first == UInt8(ascii: "{") else { return nil }
        var bytes: [UInt8] = [first]
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return Data(bytes)
    }
    return nil
}
