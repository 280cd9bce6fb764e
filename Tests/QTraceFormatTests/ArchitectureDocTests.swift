// docs/architecture.md is where a newcomer learns which module does what: its module table
// must name every target of Package.swift, or it silently goes stale as targets are added
// (issue 27 found it missing QTraceText). The files are read from the repository. Also here:
// no test target links an executable target (issue 27: tests import libraries; the programs
// they record or run are processes).
import Foundation
import XCTest

final class ArchitectureDocTests: XCTestCase {
    /// The names of every target Package.swift declares (targets of any kind, plugins and
    /// system libraries included).
    static func packageTargets() throws -> [String] {
        let declaration = #/\.(?:target|executableTarget|testTarget|systemLibrary|plugin|binaryTarget|macro)\(\s*name:\s*"([^"]+)"/#
        return try Schema.text("Package.swift").matches(of: declaration).map { String($0.output.1) }
    }

    /// The names in backticks in the first column of the table under "## The modules".
    static func documentedModules() throws -> Set<String> {
        let doc = try Schema.text("docs/architecture.md")
        guard let section = doc.range(of: "## The modules") else { return [] }
        let rest = doc[section.upperBound...]
        let body = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var names = Set<String>()
        for line in body.split(separator: "\n") where line.hasPrefix("|") {
            let firstCell = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            for match in firstCell.matches(of: #/`([^`]+)`/#) { names.insert(String(match.output.1)) }
        }
        return names
    }

    func testPackageTargetsAreParsed() throws {
        // Guards the parse itself: a regex that matched nothing would pass the test below.
        let targets = try Self.packageTargets()
        XCTAssertTrue(targets.contains("QTraceFormat"))
        XCTAssertTrue(targets.contains("QTraceFormatTests"))
        XCTAssertTrue(targets.contains("EmbedViewer"))
        XCTAssertGreaterThan(targets.count, 20)
    }

    func testEveryTargetIsInTheModuleTable() throws {
        let documented = try Self.documentedModules()
        let missing = try Self.packageTargets().filter { !documented.contains($0) }
        XCTAssertEqual(missing, [], "targets of Package.swift missing from docs/architecture.md's module table")
    }

    // MARK: Tests link libraries, never executables

    /// Each `.testTarget(...)` of Package.swift: its name and the target names in its
    /// `dependencies` (quoted names and `.target(name:)`; products of other packages are left out).
    static func testTargetDependencies() throws -> [(name: String, dependencies: [String])] {
        let manifest = try Schema.text("Package.swift")
        var result: [(String, [String])] = []
        var rest = manifest[...]
        while let start = rest.range(of: ".testTarget(") {
            let call = balancedCall(rest[start.upperBound...])
            let name = call.firstMatch(of: #/name:\s*"([^"]+)"/#).map { String($0.output.1) } ?? ""
            var dependencies: [String] = []
            if let list = call.range(of: "dependencies:") {
                let array = call[list.upperBound...].prefix { $0 != "]" }
                let withoutProducts = array.replacing(#/\.product\([^)]*\)/#, with: "")
                dependencies = withoutProducts.matches(of: #/"([^"]+)"/#).map { String($0.output.1) }
            }
            result.append((name, dependencies))
            rest = rest[start.upperBound...]
        }
        return result
    }

    /// The text up to the parenthesis that closes the one just opened.
    private static func balancedCall(_ text: Substring) -> Substring {
        var depth = 1
        for index in text.indices {
            if text[index] == "(" { depth += 1 }
            if text[index] == ")" { depth -= 1; if depth == 0 { return text[..<index] } }
        }
        return text
    }

    static func executableTargets() throws -> Set<String> {
        let declaration = #/\.executableTarget\(\s*name:\s*"([^"]+)"/#
        return Set(try Schema.text("Package.swift").matches(of: declaration).map { String($0.output.1) })
    }

    func testTestTargetsAreParsed() throws {
        let tests = try Self.testTargetDependencies()
        XCTAssertTrue(tests.contains { $0.name == "QTraceFormatTests" && $0.dependencies.contains("QTraceFormat") })
        XCTAssertTrue(tests.contains { $0.name == "QTraceRecordingTests" && $0.dependencies.contains("QTraceRecording") })
        XCTAssertTrue(try Self.executableTargets().isSuperset(of: ["qtrace", "qtrace-fixtures", "qtrace-samples"]))
    }

    /// On Linux a test target that depends on an executable links the program's code into the
    /// test bundle (to `@testable import` it): what the tests need belongs in a library.
    func testNoTestTargetDependsOnAnExecutable() throws {
        let executables = try Self.executableTargets()
        for test in try Self.testTargetDependencies() {
            XCTAssertEqual(test.dependencies.filter(executables.contains), [], "\(test.name) depends on executable targets")
        }
    }

    /// The same rule for imports: no test file imports an executable's module (a name with
    /// "-" is imported with "_").
    func testNoTestImportsAnExecutable() throws {
        let modules = Set(try Self.executableTargets().map { $0.replacingOccurrences(of: "-", with: "_") })
        let tests = Schema.packageRoot.appendingPathComponent("Tests")
        let files = FileManager.default.enumerator(atPath: tests.path)?.compactMap { $0 as? String } ?? []
        let swiftFiles = files.filter { $0.hasSuffix(".swift") && !$0.hasPrefix("Fixtures/") }
        XCTAssertGreaterThan(swiftFiles.count, 50)
        for file in swiftFiles {
            let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: #/(?m)^\s*(?:@testable\s+)?import\s+(\w+)/#) where modules.contains(String(match.output.1)) {
                XCTFail("Tests/\(file) imports the executable \(match.output.1)")
            }
        }
    }
}
