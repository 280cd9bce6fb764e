// The findings precision corpus (docs/findings.md, "Precision"): every gallery sample and the
// corpus fixtures (Tests/Fixtures/c/corpus.c) recorded, their finding groups compared with
// Tests/Fixtures/findings-corpus.txt. A rule that adds noise (fires where the file says it
// must not, or more often) or loses a true finding fails here. The real programs of the
// corpus (a swift build, the Hummingbird server) are checked by the browser tests that
// record them (Tests/BrowserTests/findings_corpus.py).
import Foundation
import QTraceAnalysis
import XCTest

final class FindingsCorpusTests: XCTestCase {
    override class func tearDown() {
        Paths.removeTempRoot()
        super.tearDown()
    }

    func testGallerySamplesAndFixturesRaiseExactlyTheirExpectedFindings() throws {
        let programs = try FindingsCorpus.load().filter { $0.name.hasPrefix("gallery/") || $0.name.hasPrefix("corpus/") }
        XCTAssertGreaterThan(programs.count, 20, "the corpus file lists the gallery and the fixtures")
        let fixtures = Paths.tempDir("corpus-build")
        let corpus = buildCProgram("Tests/Fixtures/c/corpus.c", in: fixtures, extraFlags: ["-g", "-O1"])
        var mismatches: [String] = []
        for program in programs {
            let (kind, name) = (program.name.split(separator: "/")[0], String(program.name.split(separator: "/")[1]))
            let argv = kind == "gallery" ? [Paths.samples, name] : [corpus, name] + program.programArgs
            let made = try SampleRecordings.shared.recording(argv, extraArgs: program.recordArgs, name: program.name)
            XCTAssertEqual(made.traced.status, made.plain.status, "\(program.name): exit status")
            XCTAssertEqual(made.traced.stdout, made.plain.stdout, "\(program.name): output changed under tracing")
            // Every gallery trace also feeds the consistency test (CLI, JSON and report agree).
            if kind == "gallery" { try writeGalleryOutputs(name, made.result, made.header) }
            let fired = FindingsCorpus.fired(made.result)
            mismatches += program.mismatches(fired)
            try FindingsCorpus.writeOutcome(program, fired)
        }
        XCTAssertEqual(mismatches, [], "\n" + mismatches.joined(separator: "\n"))
    }

    func testCorpusFileReadsAsWritten() throws {
        let programs = try FindingsCorpus.load()
        XCTAssertEqual(Set(programs.map(\.name)).count, programs.count, "each program once")
        for program in programs {
            for rule in program.expected.keys {
                XCTAssertTrue(Self.knownRules.contains(rule), "\(program.name): unknown rule \(rule)")
            }
        }
        let samples = runProgram([Paths.samples, "--list"]).stdout.split(separator: "\n")
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        let listed = Set(programs.map(\.name))
        for sample in samples {
            XCTAssertTrue(listed.contains("gallery/\(sample)"), "gallery sample \(sample) is not in the corpus")
        }
    }

    /// Every rule docs/findings.md defines (its `### \`id\`` headings).
    static let knownRules: Set<String> = {
        let doc = (try? String(contentsOfFile: Paths.repo.appendingPathComponent("docs/findings.md").path, encoding: .utf8)) ?? ""
        return Set(doc.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("### `"), let end = line.dropFirst(5).firstIndex(of: "`") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 5)..<end])
        })
    }()
}
