// docs/architecture.md is where a newcomer learns which module does what: its module table
// must name every target of Package.swift, or it silently goes stale as targets are added
// (issue 27 found it missing QTraceText). The files are read from the repository.
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
}
