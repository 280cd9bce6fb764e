// The build-id reader on real binaries, and on files built to break it.
import Foundation
import XCTest
@testable import QTraceSymbols

final class ELFBuildIDTests: XCTestCase {
    func testBuildIDsChosenAtLinkTime() throws {
        let fixture = try Fixture.get()
        XCTAssertEqual(ELFBuildID.read(path: fixture.swiftProgram), Fixture.swiftBuildID)
        XCTAssertEqual(ELFBuildID.read(path: fixture.cProgram), Fixture.cBuildID)
    }

    func testToolchainLibraryHasADefaultBuildID() throws {
        let path = "/opt/swift/usr/lib/swift/linux/libFoundation.so"
        try XCTSkipUnless(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(ELFBuildID.read(path: path)?.count, 40, "a SHA-1 build-id")
    }

    func testFilesThatAreNotUsableELF() throws {
        let fixture = try Fixture.get()
        let real = try Data(contentsOf: URL(fileURLWithPath: fixture.cProgram))
        var generator = SystemRandomNumberGenerator()
        var cases: [String: Data] = [
            "empty": Data(),
            "random": Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }),
            "header only": real.prefix(64),
            "truncated tables": real.prefix(200),
            "text": Data("#!/bin/sh\necho hello\n".utf8),
        ]
        // Real headers with the program and section header tables pointing far away or huge.
        var farTables = real
        farTables.replaceSubrange(0x20..<0x30, with: [UInt8](repeating: 0xFF, count: 16))
        cases["far tables"] = farTables
        // Every note size set to 0xFFFFFFFF: the note walk must stop at the segment's end.
        var hugeNotes = real
        for offset in stride(from: 0, to: hugeNotes.count - 12, by: 4) where hugeNotes[offset..<offset + 4] == Data([4, 0, 0, 0])
            && hugeNotes[offset + 8..<offset + 12] == Data([3, 0, 0, 0]) {
            hugeNotes.replaceSubrange(offset + 4..<offset + 8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        }
        cases["huge notes"] = hugeNotes
        for (name, data) in cases {
            let path = fixture.directory.appendingPathComponent("broken-\(name)").path
            try data.write(to: URL(fileURLWithPath: path))
            XCTAssertNil(ELFBuildID.read(path: path), name)
        }
        XCTAssertNil(ELFBuildID.read(path: "/nonexistent/file"))
        XCTAssertNil(ELFBuildID.read(path: "/"))
    }
}
