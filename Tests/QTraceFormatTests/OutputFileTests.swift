// OutputFile's rules (docs/outputs.md) without a traced program: a symlink at the destination
// is replaced, an unfinished file leaves nothing, a replaced file keeps its permissions, a
// device is written in place. The end-to-end cases (ENOSPC on a tmpfs, /dev/full, every
// command) are in QTraceRecordTests.OutputFaultTests.
import Foundation
import QTraceFormat
import XCTest

final class OutputFileTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-outputfile-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func entries() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted() }

    func testSymlinkAtTheDestinationIsReplacedAndItsTargetUntouched() throws {
        try "precious".write(toFile: path("victim"), atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: path("out"), withDestinationPath: path("victim"))
        let file = try OutputFile(path: path("out"))
        try file.write("new contents")
        try file.commit()
        XCTAssertEqual(try String(contentsOfFile: path("victim"), encoding: .utf8), "precious")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path("out"))[.type] as? FileAttributeType, .typeRegular)
        XCTAssertEqual(try String(contentsOfFile: path("out"), encoding: .utf8), "new contents")
        XCTAssertEqual(entries(), ["out", "victim"])
    }

    func testAnUnfinishedFileLeavesNothingAndKeepsTheOldOne() throws {
        try "old".write(toFile: path("out"), atomically: false, encoding: .utf8)
        var announced: String?
        do {
            let file = try OutputFile(path: path("out")) { announced = $0 }
            XCTAssertEqual(file.temporaryPath, announced, "the name is told before the file exists")
            XCTAssertTrue(FileManager.default.fileExists(atPath: announced ?? ""))
            try file.write("half")
            // Dropped without commit: a failed writer.
        }
        XCTAssertEqual(try String(contentsOfFile: path("out"), encoding: .utf8), "old")
        XCTAssertEqual(entries(), ["out"])
    }

    func testAReplacedFileKeepsItsPermissions() throws {
        try "old".write(toFile: path("out"), atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(path("out"), 0o600), 0)
        let file = try OutputFile(path: path("out"))
        try file.write(String(repeating: "x", count: 3 << 20))  // past the buffer: direct writes too
        try file.commit()
        let attributes = try FileManager.default.attributesOfItem(atPath: path("out"))
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, 3 << 20)
    }

    func testDevicesAreWrittenInPlaceAndErrorsAreReported() throws {
        let null = try OutputFile(path: "/dev/null")
        XCTAssertNil(null.temporaryPath)
        try null.write("gone")
        try null.commit()
        XCTAssertEqual(FileManager.default.fileExists(atPath: "/dev/null"), true)

        let full = try OutputFile(path: "/dev/full")
        try full.write("x")
        XCTAssertThrowsError(try full.commit()) { error in
            XCTAssertEqual((error as? OutputFileError)?.errno, ENOSPC)
            XCTAssertEqual(String(describing: error), "cannot write '/dev/full': No space left on device")
        }
        XCTAssertThrowsError(try OutputFile(path: dir.path)) { error in
            XCTAssertEqual((error as? OutputFileError)?.errno, EISDIR)
        }
        XCTAssertTrue(OutputFile.isStandardOutput("-"))
    }
}
