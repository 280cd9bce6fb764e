// Addresses per second, cold (empty cache) and warm (all cached), on a large real binary.
// Skipped unless QTRACE_SYMBOLS_BENCH=1; prints numbers, asserts no timing.
//   QTRACE_SYMBOLS_BENCH=1 [QTRACE_SYMBOLS_BENCH_BINARY=/path] swift test --skip-build --filter SymbolizerBenchmark
import Foundation
import XCTest
@testable import QTraceSymbols

final class SymbolizerBenchmark: XCTestCase {
    let count = 2000

    func testAddressesPerSecond() throws {
        let environment = ProcessInfo.processInfo.environment
        try XCTSkipUnless(environment["QTRACE_SYMBOLS_BENCH"] == "1", "set QTRACE_SYMBOLS_BENCH=1 to run")
        let binary = URL(fileURLWithPath: environment["QTRACE_SYMBOLS_BENCH_BINARY"] ?? "/opt/swift/usr/bin/swift-build")
            .resolvingSymlinksInPath().path
        let tools = SymbolTools.locate()
        let nm = try XCTUnwrap(tools.nm)
        let addresses = try functionAddresses(binary, nm: nm)
        let module = ModuleInfo(path: binary, base: 0, start: 0, end: .max, buildID: ELFBuildID.read(path: binary))
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-symbols-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }

        let (cold, coldSeconds) = try timed { try Symbolizer(cacheDirectory: cache, tools: tools).symbolize(addresses, modules: [module]) }
        let (warm, warmSeconds) = try timed { try Symbolizer(cacheDirectory: cache, tools: tools).symbolize(addresses, modules: [module]) }
        XCTAssertEqual(cold, warm)
        let statuses = Dictionary(grouping: cold.values, by: \.status).mapValues(\.count)
        print("symbolize \(addresses.count) function addresses of \(binary):")
        print("  statuses: \(statuses.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", "))")
        print(String(format: "  cold: %.2f s, %.0f addresses/s", coldSeconds, Double(addresses.count) / coldSeconds))
        print(String(format: "  warm: %.3f s, %.0f addresses/s", warmSeconds, Double(addresses.count) / warmSeconds))
        try compareWithAddr2line(binary, addresses)
    }

    /// `count` function entries spread evenly over the binary's text symbols.
    func functionAddresses(_ binary: String, nm: URL) throws -> [UInt64] {
        let output = try ToolRunner.run(nm, ["--defined-only", "--no-demangle", binary], input: Data())
        let text = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").compactMap { line -> UInt64? in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[1] == "t" || fields[1] == "T" else { return nil }
            return UInt64(fields[0], radix: 16)
        }
        let unique = Array(Set(text)).sorted()
        let stride = max(1, unique.count / count)
        return Array(Swift.stride(from: 0, to: unique.count, by: stride).map { unique[$0] }.prefix(count))
    }

    /// elfutils' eu-addr2line on the same addresses, only if it is already installed.
    func compareWithAddr2line(_ binary: String, _ addresses: [UInt64]) throws {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map { "\($0)/eu-addr2line" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else { return print("  eu-addr2line: not installed, not compared") }
        let input = Data(addresses.map { "0x" + String($0, radix: 16) }.joined(separator: "\n").utf8)
        let (_, seconds) = try timed { try ToolRunner.run(URL(fileURLWithPath: path), ["-f", "-e", binary], input: input) }
        print(String(format: "  eu-addr2line -f: %.2f s, %.0f addresses/s", seconds, Double(addresses.count) / seconds))
    }

    func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
}
