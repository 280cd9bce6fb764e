// The viewer's files are ES modules bundled by qtrace-embed-viewer (the EmbedViewer plugin's
// program). These run it, as the plugin does, on a copy of viewer/ with one mistake each: the
// build must stop with one line naming the file and the mistake.
import Foundation
@testable import QTraceReport
import XCTest

final class ViewerModuleTests: XCTestCase {
    /// A mistake: in `file`, replace `from` with `to` (or append `to` when `from` is empty).
    struct Mistake {
        let file: String, from: String, to: String, message: String
    }

    static let mistakes = [
        // A name of another module used without importing it (fmtDuration is 10-util.js').
        Mistake(file: "50-details.js", from: " fmtDuration,", to: "",
                message: "uses fmtDuration, a top-level name of 10-util.js, without importing it"),
        Mistake(file: "85-search.js", from: "import { $, fmtCount }", to: "import { $, fmtCount, fmtTime }",
                message: "85-search.js:6: imports fmtTime but never uses it"),
        Mistake(file: "50-details.js", from: "import { watchViewState }", to: "import { watchViewState, nothing }",
                message: "imports nothing from ./36-state.js, which does not export it"),
        Mistake(file: "50-details.js", from: "\"./36-state.js\"", to: "\"./37-state.js\"",
                message: "imports from ./37-state.js, which is not in"),
        Mistake(file: "36-state.js", from: "export const viewState", to: "export let viewState",
                message: "unsupported module syntax: export let viewState = { (an exported let would need a live binding"),
        Mistake(file: "36-state.js", from: "export const viewState", to: "export default viewState",
                message: "unsupported module syntax: export default viewState"),
        Mistake(file: "10-util.js", from: "", to: "export const unused = 1;\n",
                message: "10-util.js: exports unused, which no module imports"),
        // 30-model.js imports 10-util.js: 10-util.js importing from 30-model.js closes a cycle.
        Mistake(file: "10-util.js", from: "", to: "import { queueLabel } from \"./30-model.js\";\nfunction label(m, q) { return queueLabel(m, q); }\n",
                message: "import cycle: 10-util.js → 30-model.js → 10-util.js"),
    ]

    func testTheBuildStopsOnAModuleMistake() throws {
        let viewer = packageRoot.appendingPathComponent("Sources/QTraceReport/viewer")
        for mistake in Self.mistakes {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let copy = directory.appendingPathComponent("viewer")
            try FileManager.default.copyItem(at: viewer, to: copy)
            let file = copy.appendingPathComponent(mistake.file)
            let text = try String(contentsOf: file, encoding: .utf8)
            XCTAssertTrue(mistake.from.isEmpty || text.contains(mistake.from), "\(mistake.file) no longer has \(mistake.from)")
            let changed = mistake.from.isEmpty ? text + mistake.to : text.replacingOccurrences(of: mistake.from, with: mistake.to)
            try changed.write(to: file, atomically: true, encoding: .utf8)
            let (status, output) = try runEmbedder(copy.path, output: directory.appendingPathComponent("out.swift").path)
            XCTAssertNotEqual(status, 0, "accepted: \(mistake.to)")
            XCTAssertTrue(output.contains(mistake.message), "for \(mistake.to): \(output)")
            XCTAssertEqual(output.split(separator: "\n").count, 1, "not one line: \(output)")
        }
    }

    func testTheViewerBundlesAsItIs() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let viewer = packageRoot.appendingPathComponent("Sources/QTraceReport/viewer").path
        let (status, output) = try runEmbedder(viewer, output: directory.appendingPathComponent("out.swift").path)
        XCTAssertEqual(status, 0, output)
    }

    /// The report's script holds every module once, each after the modules it imports, and no
    /// line that is only a comment but the modules' markers.
    func testTheScriptHasEveryModuleAfterItsImports() throws {
        let viewer = packageRoot.appendingPathComponent("Sources/QTraceReport/viewer")
        let lines = ViewerAssets.script.split(separator: "\n").map(String.init)
        let order = lines.filter { $0.hasPrefix("// ---- viewer/") }.map { String($0.dropFirst("// ---- viewer/".count)) }
        let modules = try FileManager.default.contentsOfDirectory(atPath: viewer.path).filter { $0.hasSuffix(".js") }
        XCTAssertEqual(order.sorted(), modules.sorted())
        for module in modules {
            let text = try String(contentsOf: viewer.appendingPathComponent(module), encoding: .utf8)
            for line in text.split(separator: "\n") where line.contains(" from \"./") {
                let imported = String(line.split(separator: "\"")[1].dropFirst(2))
                XCTAssertLessThan(order.firstIndex(of: imported) ?? .max, order.firstIndex(of: module)!, "\(module) imports \(imported)")
            }
        }
        let commentOnly = lines.filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") && !$0.hasPrefix("// ---- viewer/") }
        XCTAssertEqual(commentOnly, [])
    }

    /// The embedder as the plugin runs it (SwiftPM builds it beside the test bundle).
    private func runEmbedder(_ viewer: String, output: String) throws -> (status: Int32, output: String) {
        let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        guard let tool = ["qtrace-embed-viewer-tool", "qtrace-embed-viewer"].map({ products.appendingPathComponent($0) })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            XCTFail("qtrace-embed-viewer is not in \(products.path)")
            return (0, "")
        }
        let process = Process()
        process.executableURL = tool
        process.arguments = [viewer, output]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
