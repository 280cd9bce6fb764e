// `qtrace export --format tables` on a real recording of two processes, exported as two runs
// from two hosts, queried with DuckDB by the three queries of docs/fleet.md as written
// (scripts/fleet-queries.py): their rows must be the ones `qtrace stats --json` implies.
import Foundation
import QTraceAnalysis
import XCTest

final class FleetTablesTests: XCTestCase {
    override class func tearDown() { Paths.removeTempRoot() }

    func testDocumentedQueriesAnswerFromTheExportedTables() throws {
        guard runProgram(["/usr/bin/env", "python3", "-c", "import duckdb"]).status == 0 else {
            throw XCTSkip("DuckDB's Python package is missing: run scripts/install-deps.sh --test")
        }
        let dir = Paths.tempDir("fleet")
        // Two Dispatch processes under a shell that makes no Dispatch call itself.
        let script = "\(Paths.samples) thread-explosion & \(Paths.samples) clean; wait"
        let (run, trace) = record(["/bin/sh", "-c", script], in: dir, name: "fleet")
        XCTAssertEqual(run.status, 0, run.stderr)
        let recording = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".qtrace") }
        XCTAssertEqual(recording.count, 2, "one trace per Dispatch process: \(recording)")
        let tables = dir.appendingPathComponent("tables").path
        for (runName, host) in [("before", "alpha"), ("after", "beta")] {
            let export = runProgram([Paths.qtrace, "export", dir.path, "--format", "tables", "--run", runName, "--host", host,
                                     "-o", tables])
            XCTAssertEqual(export.status, 0, export.stderr)
        }
        let statsRun = runProgram([Paths.qtrace, "stats", "--json", trace])
        XCTAssertEqual(statsRun.status, 0, statsRun.stderr)
        let stats = try JSONDecoder().decode(RecordingSummary.self, from: Data(statsRun.stdout.utf8))
        XCTAssertEqual(stats.processes.count, 2)

        let queryRun = runProgram(["/usr/bin/env", "python3", Paths.repo.appendingPathComponent("scripts/fleet-queries.py").path,
                                   tables, Paths.repo.appendingPathComponent("docs/fleet.md").path])
        XCTAssertEqual(queryRun.status, 0, queryRun.stderr)
        let answers = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(queryRun.stdout.utf8)) as? [String: [[Any]]])
        XCTAssertEqual(Set(answers.keys), ["worst-queues", "code-before-after", "hosts-with-explosions"])

        XCTAssertEqual(rows(answers["worst-queues"]), expectedWorstQueues(stats))
        XCTAssertEqual(rows(answers["code-before-after"]), expectedCodeBeforeAfter(stats))
        XCTAssertFalse(expectedCodeBeforeAfter(stats).isEmpty, "the sample's runThreadExplosion() code is named")
        let explosions = stats.processes.flatMap(\.findings).filter { $0.id == "threads.explosion" }
        let hosts = rows(answers["hosts-with-explosions"])
        if explosions.isEmpty {
            XCTAssertEqual(hosts, [])
        } else {
            let longest = explosions.map { $0.end - $0.start }.max()!
            XCTAssertEqual(hosts, [["alpha", "\(explosions.count)", "\(longest)"], ["beta", "\(explosions.count)", "\(longest)"]])
        }
    }

    /// Rows as strings (DuckDB's integers arrive as JSON numbers).
    func rows(_ answer: [[Any]]?) -> [[String]] {
        (answer ?? []).map { $0.map { "\($0)" } }
    }

    /// Per host and queue name: the largest wait p99 (NULL when no item waited: last, as
    /// DuckDB orders NULLs), the items summed.
    func expectedWorstQueues(_ stats: RecordingSummary) -> [[String]] {
        var worst: [String: (wait: UInt64?, items: Int)] = [:]
        for p in stats.processes {
            for q in p.statistics.queues where q.items > 0 {
                let name = q.name ?? q.label
                let wait: UInt64? = q.wait.count > 0 ? q.wait.p99Ns : nil
                let seen = worst[name]
                let larger = [seen?.wait, wait].compactMap { $0 }.max()
                worst[name] = (larger, (seen?.items ?? 0) + q.items)
            }
        }
        let perHost = ["alpha", "beta"].flatMap { host in worst.map { (host: host, name: $0.key, wait: $0.value.wait, items: $0.value.items) } }
        let sorted = perHost.sorted { a, b in
            if a.wait != b.wait { return (a.wait ?? 0, a.wait == nil ? 0 : 1) > (b.wait ?? 0, b.wait == nil ? 0 : 1) }
            return (a.host, a.name) < (b.host, b.name)
        }
        return sorted.prefix(10).map { [$0.host, $0.name, $0.wait.map { "\($0)" } ?? "<null>", "\($0.items)"] }
    }

    func expectedCodeBeforeAfter(_ stats: RecordingSummary) -> [[String]] {
        var perCode: [String: (items: Int, total: UInt64, p99: UInt64)] = [:]
        for p in stats.processes {
            for c in p.statistics.sites where c.name.contains("runThreadExplosion") {
                let seen = perCode[c.name]
                perCode[c.name] = ((seen?.items ?? 0) + c.items, (seen?.total ?? 0) + c.run.totalNs, max(seen?.p99 ?? 0, c.run.p99Ns))
            }
        }
        return perCode.keys.sorted().flatMap { code -> [[String]] in
            let c = perCode[code]!
            return ["after", "before"].map { [$0, code, "\(c.items)", "\(c.total / UInt64(c.items))", "\(c.p99)"] }
        }
    }
}
