// `qtrace record --cpu`: perf script's sample and mmap lines, and their conversion into a
// trace's samples stream (interned stacks, absolute addresses, kernel frames, time window).
import QTraceFormat
import XCTest
@testable import QTraceSched

final class PerfSampleTests: XCTestCase {
    /// What perf 6.1 prints with PerfSampleParser.arguments (addresses within each mapping's file).
    static let script = """
        50/50 [000]  10.000000100: PERF_RECORD_MMAP2 50/50: [0x555500000000(0x20000) @ 0 fe:00 17 0]: r-xp /opt/my app/app
        50/50 [000]  10.000000200: PERF_RECORD_MMAP2 50/50: [0x7f0000001000(0x26000) @ 0x1000 fe:00 18 0]: r-xp /lib/libc.so.6
        50/50 [000]  10.000000300: PERF_RECORD_MMAP2 50/50: [0x7f0000100000(0x1000) @ 0 fe:00 19 0]: r--p /lib/data
        50/51 [001]  10.000001000:
        \t            1234 (/opt/my app/app)
        \t            5678 (/opt/my app/app)
        \t            2000 (/lib/libc.so.6)

        50/51 [001]  10.000002000:
        \tffffffff8161cd25 ([kernel.kallsyms])
        \tffffffff81000c82 ([kernel.kallsyms])
        \t            5678 (/opt/my app/app)
        \t            2000 (/lib/libc.so.6)
        \t6c2f7273752f7466 ([unknown])

        77/77 [000]  10.000003000:
        \t            1234 (/opt/other)

        50/50 [000]  10.000004000:  1234 (/opt/my app/app)

        """

    private func parsed() -> PerfSampleParser {
        var parser = PerfSampleParser(keepPids: [50])
        for line in Self.script.split(separator: "\n", omittingEmptySubsequences: false) { parser.consume(line) }
        parser.finish()
        return parser
    }

    func testSamplesAndExecutableMappings() {
        let parser = parsed()
        XCTAssertEqual(parser.mappings.map(\.path), ["/opt/my app/app", "/lib/libc.so.6"], "read-only mappings are left out")
        XCTAssertEqual(parser.mappings[1], PerfMapping(pid: 50, start: 0x7f00_0000_1000, length: 0x26000, pageOffset: 0x1000, path: "/lib/libc.so.6"))
        XCTAssertEqual(parser.samples.count, 3, "pid 77 is not kept")
        XCTAssertEqual(parser.samples[0], PerfSample(timeNs: 10_000_001_000, cpu: 1, pid: 50, tid: 51, frames: [
            PerfFrame(address: 0x1234, dso: "/opt/my app/app"), PerfFrame(address: 0x5678, dso: "/opt/my app/app"),
            PerfFrame(address: 0x2000, dso: "/lib/libc.so.6")]))
        XCTAssertEqual(parser.samples[1].frames.count, 5)
        XCTAssertEqual(parser.samples[2].frames, [PerfFrame(address: 0x1234, dso: "/opt/my app/app")], "an ip on the header line")
    }

    func testConversionInternsStacksWithAbsoluteAddresses() {
        let parser = parsed()
        let events = SampleStreamConverter.events(from: parser.samples, mappings: parser.mappings, pid: 50, hz: 99,
                                                  initMonoNs: 10_000_000_000, endMonoNs: 10_000_003_000)
        let frames = events.filter { $0.type == .stackFrame }, samples = events.filter { $0.type == .cpuSample }
        XCTAssertEqual(samples.count, 2, "the third sample is after the trace's end")
        XCTAssertTrue(events.allSatisfy { $0.tid == TraceLayout.samplesStreamTid })
        // Sample 1, outermost first: libc 0x2000 (file offset 0x1000 in the mapping) − 1, app 0x5678 − 1, leaf 0x1234.
        XCTAssertEqual(frames.prefix(3).map(\.b), [0x7f00_0000_2000 - 1, 0x5555_0000_5678 - 1, 0x5555_0000_1234])
        XCTAssertEqual(frames.prefix(3).map(\.a), [0, 1, 2], "each node under the previous one")
        XCTAssertEqual(samples[0].b, 3)
        XCTAssertEqual([samples[0].a, samples[0].c, UInt64(samples[0].arg), samples[0].time], [51, 1, 99, 1000])
        // Sample 2 shares the two outer nodes; the kernel frames become one node 0; [unknown] is dropped.
        XCTAssertEqual(frames.count, 4)
        XCTAssertEqual(frames[3].a, 2)
        XCTAssertEqual(frames[3].b, 0)
        XCTAssertEqual(samples[1].b, 4)
        XCTAssertTrue(events.firstIndex(of: frames[3])! < events.firstIndex(of: samples[1])!, "a node precedes its first sample")
    }

    func testAForkedChildUsesItsParentsMappings() {
        let parent = PerfMapping(pid: 50, start: 0x1000, length: 0x1000, pageOffset: 0, path: "/app")
        let sample = PerfSample(timeNs: 5, cpu: 0, pid: 60, tid: 60, frames: [PerfFrame(address: 0x10, dso: "/app")])
        let events = SampleStreamConverter.events(from: [sample], mappings: [parent], pid: 60, hz: 999, initMonoNs: 0, endMonoNs: 10)
        XCTAssertEqual(events.first { $0.type == .stackFrame }?.b, 0x1010)
    }
}
