// The findings precision corpus (Tests/Fixtures/findings-corpus.txt, docs/findings.md): the
// expected findings of each program, read here and by Tests/BrowserTests/findings_corpus.py
// (the real programs), and the recordings of the gallery samples, shared with GalleryTests
// so that a sample is recorded once per test run.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

/// What the corpus file says of one program.
struct CorpusProgram {
    /// "gallery/clean", "corpus/fanout", "real/swift-build".
    var name: String
    /// `qtrace record` options the program is recorded with (`--sched`).
    var recordArgs: [String]
    /// The program's own arguments after its name ("corpus/fanout 100 8 20000").
    var programArgs: [String]
    var expected: [String: CorpusExpectation]

    /// Where the expectations and what fired disagree, one line each.
    func mismatches(_ fired: [String: Int]) -> [String] {
        var out: [String] = []
        for (rule, count) in fired.sorted(by: { $0.key < $1.key }) where !(expected[rule]?.allows(count) ?? false) {
            out.append("\(name): \(rule) fired \(count)× (expected \(expected[rule]?.text ?? "0: must not fire"))")
        }
        for (rule, expectation) in expected.sorted(by: { $0.key < $1.key }) where fired[rule] == nil && !expectation.allows(0) {
            out.append("\(name): \(rule) did not fire (expected \(expectation.text)): a true finding was lost")
        }
        return out
    }
}

/// A rule's expected number of finding groups: `N`, `N-M`, or `may` (tolerated, never true).
struct CorpusExpectation {
    var low: Int
    var high: Int
    var text: String

    init?(_ text: String) {
        self.text = text
        if text == "may" { low = 0; high = .max; return }
        let bounds = text.split(separator: "-").compactMap { Int($0) }
        guard (1...2).contains(bounds.count), bounds.count == text.split(separator: "-").count else { return nil }
        low = bounds[0]
        high = bounds.last!
    }

    func allows(_ count: Int) -> Bool { (low...high).contains(count) }
}

enum FindingsCorpus {
    static let path = Paths.repo.appendingPathComponent("Tests/Fixtures/findings-corpus.txt").path

    /// Parses the corpus file: `[name args] record-options` headers, then `RULE COUNT  # why` lines.
    static func load() throws -> [CorpusProgram] {
        var programs: [CorpusProgram] = []
        for (n, raw) in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("["), let close = line.firstIndex(of: "]") {
                let head = line[line.index(after: line.startIndex)..<close].split(separator: " ").map(String.init)
                let options = line[line.index(after: close)...].split(separator: " ").map(String.init)
                programs.append(CorpusProgram(name: head[0], recordArgs: options, programArgs: Array(head.dropFirst()), expected: [:]))
                continue
            }
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard words.count == 2, let expectation = CorpusExpectation(words[1]), !programs.isEmpty else {
                throw NSError(domain: "findings-corpus.txt:\(n + 1): cannot read '\(line)'", code: 1)
            }
            programs[programs.count - 1].expected[words[0]] = expectation
        }
        return programs
    }

    /// Finding groups per rule, as `qtrace stats` and the report list them.
    static func fired(_ result: AnalysisResult) -> [String: Int] {
        let groups = FindingGrouping.groups([(result.model.info.executable, result.model.info.pid, result.findings)])
        return groups.reduce(into: [:]) { $0[$1.id, default: 0] += 1 }
    }

    /// With QTRACE_BROWSER_FIXTURES set: what fired, for scripts/findings-precision.py.
    static func writeOutcome(_ program: CorpusProgram, _ fired: [String: Int]) throws {
        guard let dir = ProcessInfo.processInfo.environment["QTRACE_BROWSER_FIXTURES"] else { return }
        let folder = URL(fileURLWithPath: dir).appendingPathComponent("findings-corpus")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = try JSONSerialization.data(withJSONObject: ["program": program.name, "fired": fired], options: [.sortedKeys])
        try data.write(to: folder.appendingPathComponent(program.name.replacingOccurrences(of: "/", with: "_") + ".json"))
    }
}

/// Gallery recordings of this test run, by sample and options: GalleryTests and the corpus
/// share them (each sample runs traced once, and untraced once to compare its output).
final class SampleRecordings: @unchecked Sendable {
    static let shared = SampleRecordings()
    private let lock = NSLock()
    private var recordings: [String: (result: AnalysisResult, header: TraceHeader, plain: RunResult, traced: RunResult)] = [:]

    func recording(_ argv: [String], extraArgs: [String], name: String) throws
        -> (result: AnalysisResult, header: TraceHeader, plain: RunResult, traced: RunResult) {
        let key = (argv + ["|"] + extraArgs).joined(separator: " ")
        if let known = lock.withLock({ recordings[key] }) { return known }
        let dir = Paths.tempDir("recording-\(name)")
        let plain = runProgram(argv)
        let (traced, path) = record(argv, in: dir, extraArgs: extraArgs)
        let file = try TraceFile(path: path)
        let made = (Analysis.run(file: file), file.header, plain, traced)
        lock.withLock { recordings[key] = made }
        return made
    }
}
