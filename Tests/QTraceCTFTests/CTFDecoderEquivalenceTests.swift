// The purpose-built CTF decoder against libbabeltrace2 (the reference) on real LTTng traces:
// the same `Event`s (every field, same order) and the same process summaries.
import Foundation
import QTraceCTF
import QTraceFormat
import XCTest

final class CTFDecoderEquivalenceTests: XCTestCase {
    /// A trace named by $QTRACE_CTF_EQUIV_TRACE (a quick check of any trace by hand).
    func testGivenTrace() throws {
        guard let trace = ProcessInfo.processInfo.environment["QTRACE_CTF_EQUIV_TRACE"], !trace.isEmpty else {
            throw XCTSkip("QTRACE_CTF_EQUIV_TRACE is not set")
        }
        try assertDecodersAgree(trace)
    }
}

/// Reads `trace` with both decoders and checks that every process's events and summary are
/// identical.
func assertDecodersAgree(_ trace: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let reference = try CTFTraceReader(path: trace, decoder: .babeltrace).readAllProcesses()
    let fast = try CTFTraceReader(path: trace, decoder: .purposeBuilt).readAllProcesses()
    XCTAssertFalse(reference.isEmpty, "the trace has qtrace processes", file: file, line: line)
    XCTAssertGreaterThan(reference.map(\.events.count).reduce(0, +), 0, "the trace has qtrace events", file: file, line: line)
    XCTAssertEqual(fast.map(\.process.pid), reference.map(\.process.pid), "processes", file: file, line: line)
    for (f, r) in zip(fast, reference) {
        XCTAssertEqual(f.process, r.process, "summary of process \(r.process.pid)", file: file, line: line)
        XCTAssertEqual(f.events.count, r.events.count, "events of process \(r.process.pid)", file: file, line: line)
        if let index = (0..<min(f.events.count, r.events.count)).first(where: { f.events[$0] != r.events[$0] }) {
            XCTFail("process \(r.process.pid), event \(index): purpose-built \(f.events[index]) != libbabeltrace2 \(r.events[index])",
                    file: file, line: line)
        }
    }
}
