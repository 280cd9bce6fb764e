// Every input the fuzzers were seeded with (Fuzz/corpus) and every crasher they found
// (Fuzz/regressions), replayed through the same targets: each must run to the end. A
// regression traps and takes this test process down, which fails the run.
import Foundation
import QTraceFormat
@testable import QTraceFuzzing
import XCTest

final class RegressionCorpusTests: XCTestCase {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz").path

    override class func tearDown() {
        FuzzTarget.removeScratch()
        super.tearDown()
    }

    private func inputs(_ kind: String, _ target: FuzzTarget) -> [String] {
        let directory = "\(Self.fuzzDirectory)/\(kind)/\(target.rawValue)"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory + "/" + $0 }
    }

    private func replay(_ kind: String, _ target: FuzzTarget) throws -> Int {
        let files = inputs(kind, target)
        for file in files { target.run(Array(try Data(contentsOf: URL(fileURLWithPath: file)))) }
        return files.count
    }

    func testSeedCorpusRuns() throws {
        for target in FuzzTarget.allCases {
            XCTAssertGreaterThan(try replay("corpus", target), 0, "seeds for \(target)")
        }
    }

    func testEveryCrasherFoundRunsToTheEnd() throws {
        var total = 0
        for target in FuzzTarget.allCases { total += try replay("regressions", target) }
        XCTAssertGreaterThan(total, 0)
    }

    /// The mutator keeps the embedded format's framing: most mutants still open.
    func testStructuredMutantsStayReadable() throws {
        guard let seed = inputs("corpus", .embedded).first else { return XCTFail("no embedded seed") }
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: seed)))
        var opened = 0
        for round in 0..<200 {
            var bytes = original
            XCTAssertTrue(StructuredMutator.mutate(.embedded, &bytes, maxSize: original.count, seed: UInt32(round)))
            XCTAssertEqual(bytes.count, original.count)
            if (try? TraceFile(contentsOf: bytes)) != nil { opened += 1 }
        }
        XCTAssertGreaterThan(opened, 150)
    }
}
