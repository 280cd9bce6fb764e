import XCTest
@testable import QTraceAnalysis
import QTraceAnalysisTestSupport

/// HDR percentiles keep 3 significant digits: equal within 0.1%.
func XCTAssertPercentile(_ actual: UInt64, _ expected: UInt64, file: StaticString = #filePath, line: UInt = #line) {
    let tolerance = expected / 1000 + 1
    XCTAssert(actual + tolerance >= expected && actual <= expected + tolerance,
              "\(actual) is not \(expected) within 0.1%", file: file, line: line)
}

extension TraceModel {
    func queue(labelled label: String) -> Int { queues.firstIndex { $0.label == label }! }
    func item(id: UInt64) -> Int { items.firstIndex { $0.id == id }! }
    func thread(tid: Int32) -> Int { threads.firstIndex { $0.tid == tid }! }
}

extension AnalysisResult {
    func findings(_ id: String) -> [Finding] { findings.filter { $0.id == id } }
    var findingIds: [String] { findings.map(\.id) }
}
