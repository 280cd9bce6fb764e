// Shared helpers: temporary files, deterministic randomness, sample events.
import XCTest
@testable import QTraceFormat

/// A fresh directory under /tmp, removed when the test case ends.
func temporaryDirectory(_ test: XCTestCase) throws -> String {
    var template = Array("/tmp/qtrace-format-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw XCTSkip("mkdtemp failed") }
    let path = String(cString: made)
    test.addTeardownBlock { _ = try? FileManager.default.removeItem(atPath: path) }
    return path
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Reproducible fuzzing without Foundation's random sources.
typealias SeededGenerator = SplitMix64

/// One event of `type` with every field the record stores set to a distinctive value and
/// every field it does not store left 0 (the reader returns 0 for those).
func sampleEvent(_ type: EventType, time: UInt64, tid: Int32, salt: UInt64 = 0) -> Event {
    let words = type.payloadWordCount
    let seed = UInt64(type.rawValue) << 40 | salt << 8
    var event = Event(type: type, time: time, tid: tid,
                      arg: 0x8000_0000 | UInt32(type.rawValue) << 8 | UInt32(truncatingIfNeeded: salt & 0xFF),
                      flags: type.hasString ? 0x55 : 0xA5)
    if words > 0 { event.a = 0xA000_0000_0000_0000 | seed | 1 }
    if words > 1 { event.b = 0xB000_0000_0000_0000 | seed | 2 }
    if words > 2 { event.c = 0xC000_0000_0000_0000 | seed | 3 }
    if words > 3 { event.d = .max - seed }
    if type.hasString { event.string = "label.\(type.name).\(salt)" }
    return event
}

/// Writes `events` with the given chunk size and returns the path.
@discardableResult
func writeTrace(_ events: [Event], in directory: String, name: String = "t.qtrace",
                chunkSize: Int = 4096, configure: (TraceWriter) throws -> Void = { _ in }) throws -> String {
    let path = directory + "/" + name
    let writer = try TraceWriter(path: path, pid: 4242, ncpu: 2, mainTid: 100, chunkSize: chunkSize)
    try configure(writer)
    try writer.append(contentsOf: events)
    try writer.finish()
    return path
}

/// `events` grouped per tid, keeping order.
func perThread(_ events: [Event]) -> [Int32: [Event]] {
    Dictionary(grouping: events, by: \.tid)
}
