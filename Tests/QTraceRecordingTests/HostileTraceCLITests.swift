// Corrupted, truncated and lying traces fed to the qtrace binary as a user would (issue 18):
// every command ends with a status (0 with clean output and at most warnings, or an error
// status with one line on stderr), never a signal (a shell's 132 for a Swift trap's SIGILL,
// 134, 139; Process reports the signal's number, 4, 6 or 11, as the status).
import Foundation
import QTraceFormat
import QTraceFuzzing
import XCTest

extension CLITests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz").path

    /// The hostile inputs: structured mutants of a real recording's seed (lying fields inside
    /// valid framing), cuts of it, its header's calibration and counts set to edges, and the
    /// crashers the fuzzer found.
    func hostileTraces() throws -> [String] {
        let seedPath = Self.fuzzDirectory + "/corpus/embedded/all-apis.trace"
        let seed = Array(try Data(contentsOf: URL(fileURLWithPath: seedPath)))
        var inputs: [(String, [UInt8])] = []
        for round in 0..<8 {
            var bytes = seed
            for step in 0..<4 { _ = StructuredMutator.mutate(.embedded, &bytes, maxSize: bytes.count, seed: UInt32(round * 4 + step)) }
            inputs.append(("mutant\(round)", bytes))
        }
        for cut in [0, 7, 100, 4096 + 30, seed.count / 2] { inputs.append(("cut\(cut)", Array(seed.prefix(cut)))) }
        for value: UInt64 in [0, 1 << 63, .max] {
            var bytes = seed
            for field in [40, 48, 64, 72, 88, 136] {
                for k in 0..<8 { bytes[field + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
            }
            inputs.append(("header\(value)", bytes))
        }
        let regressions = Self.fuzzDirectory + "/regressions/embedded"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: regressions)) ?? [] {
            inputs.append((name, Array(try Data(contentsOf: URL(fileURLWithPath: regressions + "/" + name)))))
        }
        return try inputs.map { name, bytes in
            let path = dir.appendingPathComponent(name + ".qtrace").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    /// stats, stats --json, report, export, diff, dump and check on each hostile trace.
    func testEveryCommandEndsWithAStatusAndAtMostOneErrorLine() throws {
        let traces = try hostileTraces()
        var errors = 0, clean = 0
        for trace in traces {
            let commands = [["stats", trace], ["stats", "--json", trace], ["report", trace, "-o", dir.appendingPathComponent("r.html").path],
                            ["export", trace, "-o", dir.appendingPathComponent("e.json").path], ["diff", trace, traces[0]], ["dump", trace],
                            ["check", trace, "--max-wait-p99", "*=1ms"]]
            for args in commands {
                let result = try run(args)
                let what = "qtrace \(args.joined(separator: " "))"
                                XCTAssertTrue([0, 1, 2].contains(result.status), "\(what) exited \(result.status)")
                let lines = result.stderr.split(separator: "\n")
                if args[0] == "check" && result.status == 1 { continue }   // broken bounds, listed on stdout
                if result.status == 0 {
                    clean += 1
                    XCTAssertFalse(result.stdout.isEmpty && args[0] != "report" && args[0] != "export", "\(what): no output")
                    // Warnings, and the path report and export name when they are done.
                    let notes = lines.filter { !$0.contains("warning") && !$0.hasPrefix("qtrace: report: ") && !$0.hasPrefix("qtrace: exported: ") }
                    XCTAssertEqual(notes, [], "\(what)")
                } else {
                    errors += 1
                    XCTAssertEqual(lines.filter { $0.contains("error") }.count, 1, "\(what): \(result.stderr)")
                }
            }
        }
        XCTAssertGreaterThan(clean, 0)
        XCTAssertGreaterThan(errors, 0)
    }
}
