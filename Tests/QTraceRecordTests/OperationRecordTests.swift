// Foundation's OperationQueue recorded end to end (issue 26 item 5): the fixture's "operations"
// scenario runs 20 named ImportOperations chained by dependencies and one unnamed step on
// `com.example.importer`, and a Thread that names itself with more than 15 bytes.
import Foundation
import QTraceAnalysis
import QTraceFormat
import XCTest

final class OperationRecordTests: XCTestCase {
    func testOperationsAreNamedWithTheirDependencies() throws {
        let dir = Paths.tempDir("operations")
        let plain = runProgram([Paths.fixtures, "operations"])
        let (traced, path) = record([Paths.fixtures, "operations"], in: dir)
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(traced.status, 0, traced.stderr)
        XCTAssertEqual(traced.stdout, plain.stdout, "tracing changed the program's output")

        let model = Analysis.run(file: try TraceFile(path: path)).model
        let labels = Set(model.operations.values.map(\.label))
        XCTAssertEqual(model.operations.count, 21, "every operation the queue ran is named")
        for n in 1...20 { XCTAssertTrue(labels.contains("import-\(n) (ImportOperation)"), "import-\(n): \(labels)") }
        XCTAssertTrue(labels.contains("UnnamedStep"), "an unnamed operation is shown by its type")
        // The chain: import-n depended on import-(n-1) only, the unnamed step on import-20.
        for operation in model.operations.values {
            let after = operation.dependencies.compactMap { model.operations[$0]?.name ?? model.operations[$0]?.shortType }
            switch operation.name {
            case "import-1": XCTAssertEqual(after, [])
            case let name?: XCTAssertEqual(after, ["import-\(Int(name.dropFirst(7))! - 1)"], name)
            case nil: XCTAssertEqual(after, ["import-20"])
            }
        }
        let thread = model.threads.first { $0.name == "com.example.thread-with-a-long-name" }
        XCTAssertNotNil(thread, "a Thread's name longer than the kernel's 15 bytes is kept")

        // The text and the JSON name operations and their queue.
        let text = runProgram([Paths.qtrace, "stats", "--by", "code", "--all", path], environment: ["XDG_CACHE_HOME": dir.path, "COLUMNS": "200"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("import-7 (ImportOperation)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("OPERATIONS"), text.stdout)
        XCTAssertFalse(text.stdout.contains("closure #2 in OperationQueue"), text.stdout)
        let json = runProgram([Paths.qtrace, "stats", "--json", path], environment: ["XDG_CACHE_HOME": dir.path])
        let summary = try AnalysisSummary.decode(Data(json.stdout.utf8))
        let importer = try XCTUnwrap(summary.statistics.queues.first { $0.label == "com.example.importer" })
        let seven = try XCTUnwrap(summary.statistics.sites.first { $0.name == "import-7 (ImportOperation)" })
        XCTAssertEqual(seven.dependencies, ["import-6 (ImportOperation)"])
        XCTAssertEqual(seven.queues.count, 1)
        XCTAssertEqual(importer.items, 21)
    }
}
