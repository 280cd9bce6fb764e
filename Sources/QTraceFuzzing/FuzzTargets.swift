// What the fuzzers run (docs/fuzzing.md): one input through everything a qtrace command does
// with it, in memory. A thrown error is a correct outcome (the CLI prints it on one line); a
// trap, a hang or unbounded memory is a finding. `qtrace-fuzz` runs these under libFuzzer, and
// QTraceFuzzingTests replays the corpus and every crasher found through them.
import Foundation
import QTraceAnalysis
import QTraceCTF
import QTraceFormat
import QTraceReport
import QTraceViewModel
import QTraceExport
import QTraceSched
import QTraceText

public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A `.qtrace` file: reader, model, statistics, findings, stats text, JSON summary, diff,
    /// dump text, the HTML report and the Chrome export.
    case embedded
    /// An LTTng trace (CTFInput: metadata + one stream file) read by the purpose-built decoder,
    /// then converted and analysed as `qtrace stats DIR` does.
    case ctf
    /// `perf script` text (the input of `qtrace record --sched`): parser and state converter.
    case perf

    /// Runs one input. Returns normally whatever the input holds, unless qtrace has a bug.
    public func run(_ data: [UInt8]) {
        switch self {
        case .embedded: Self.runEmbedded(data)
        case .ctf: Self.runCTF(data)
        case .perf: Self.runPerf(data)
        }
    }

    static func runEmbedded(_ data: [UInt8]) {
        guard let file = try? TraceFile(contentsOf: data, path: "fuzz.qtrace") else { return }
        var described = 0
        file.forEachEvent { event in
            if described < 2000 { _ = event.fieldsDescription; described += 1 }   // `qtrace dump`
        }
        analyseAndRender(file)
    }

    /// Everything `stats`, `stats --json`, `diff`, `report` and `export` do after reading.
    static func analyseAndRender(_ file: TraceFile) {
        let model = Analysis.buildModel(file: file)
        let statistics = TraceStatistics(model: model)
        let findings = Diagnostics.findings(model: model, statistics: statistics)
        let result = AnalysisResult(model: model, statistics: statistics, findings: findings)
        _ = StatsText.render(result, tracePath: file.path)
        let summary = AnalysisSummary(result: result, tracePath: file.path, generator: "qtrace-fuzz")
        if let json = try? summary.jsonData() { _ = try? AnalysisSummary.decode(json) }
        _ = DiffText.render(RunComparison(base: summary, new: summary))
        let input = ReportInput(analysis: result, header: file.header, qtraceVersion: "fuzz")
        _ = try? ReportWriter.html(input)
        _ = try? TraceExport.chromeJSON(input, to: scratchPath("export.json"))
    }

    static func runCTF(_ data: [UInt8]) {
        guard let input = CTFInput(data) else { return }
        let directory = scratchPath("ctf")
        guard (try? input.write(to: directory)) != nil else { return }
        guard let reader = try? CTFTraceReader(path: directory, decoder: .purposeBuilt) else { return }
        _ = try? reader.processes()
        var written = 0
        let converted = try? reader.convertAll(to: { _, _, _ in
            written += 1
            return scratchPath("ctf-\(written).qtrace")
        })
        guard let first = converted?.first, let file = try? TraceFile(path: first.path) else { return }
        analyseAndRender(file)
    }

    static func runPerf(_ data: [UInt8]) {
        var records: [PerfSchedRecord] = []
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if let record = PerfScriptParser.parse(utf8: line) { records.append(record) }
        }
        guard let first = records.first else { return }
        let tids = Set(records.map(\.tid))
        let events = SchedStateConverter.events(from: records, pid: first.pid, tids: tids,
                                                initMonoNs: first.timeNs, endMonoNs: records.map(\.timeNs).max() ?? 0)
        // As `qtrace record --sched` does: the stream appended to a trace, read and analysed.
        let path = scratchPath("perf.qtrace")
        guard let writer = try? TraceWriter(path: path, pid: first.pid, mainTid: first.pid) else { return }
        guard (try? writer.append(Event(type: .threadStart, time: 0, tid: first.pid))) != nil,
              (try? writer.finish()) != nil,
              let trace = try? TraceFile(path: path) else { return }
        guard (try? SchedStreamAppender.append(events, to: path, clock: trace.clock)) != nil,
              let file = try? TraceFile(path: path) else { return }
        analyseAndRender(file)
    }

    /// A file of this process's scratch directory (one fuzzing process runs one input at a time).
    static func scratchPath(_ name: String) -> String {
        scratchDirectory + "/" + name
    }

    private static let scratchDirectory: String = {
        let path = NSTemporaryDirectory() + "qtrace-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// Removes the scratch directory (the replay tool and the tests call it at exit).
    public static func removeScratch() {
        try? FileManager.default.removeItem(atPath: scratchDirectory)
    }
}
