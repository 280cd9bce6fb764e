// Programs compiled once per test run with the toolchain (swiftc -g, clang -g) into a temporary
// directory, with build-ids the tests choose, and their symbol tables from llvm-nm.
import Foundation
import XCTest
@testable import QTraceSymbols

struct Fixture: Sendable {
    static let swiftSource = """
        import Dispatch

        struct Loader {
            static func loadAll() {  // L:loadAll
                let q = DispatchQueue(label: "x")
                q.sync { print("closure") }  // L:loadAll.closure
            }
        }

        func load(_ n: Int) {  // L:load
            DispatchQueue.global().async { @Sendable in print(n) }  // L:load.closure
        }

        actor Store {
            var items: [Int] = []
            func add(_ x: Int) async { items.append(x) }  // L:add
        }

        func fetchRecord(id: Int) async -> Int {  // L:fetchRecord
            try? await Task.sleep(nanoseconds: 1)
            let s = Store()
            await s.add(id)
            return id
        }  // L:fetchRecord.end

        func outer() -> Int {
            func inner(_ x: Int) -> Int { x * 2 }  // L:inner
            return inner(3)
        }

        func generic<T: Comparable>(_ a: T, _ b: T) -> T { max(a, b) }  // L:generic

        Loader.loadAll()
        load(1)
        print(outer(), generic(1, 2))
        let sem = DispatchSemaphore(value: 0)
        Task { print(await fetchRecord(id: 3)); sem.signal() }
        sem.wait()

        """

    static let cSource = """
        #include <stdio.h>
        static int helper(int x) {  // L:helper
            return x * 3;
        }  // L:helper.end
        void worker_fn(void *ctx) {  // L:worker_fn
            printf("%d\\n", helper((int)(long)ctx));
        }
        int main(void) {
            worker_fn((void *)2);
            return 0;
        }

        """

    static let swiftBuildID = "5a1f7e57"
    static let cBuildID = "c0de0001"

    let directory: URL
    let tools: SymbolTools
    let swiftProgram: String
    let cProgram: String
    let swiftSymbols: SymbolTable
    let cSymbols: SymbolTable

    static let shared = Result { try Fixture() }

    static func get() throws -> Fixture { try shared.get() }

    private init() throws {
        tools = SymbolTools.locate()
        guard let symbolizer = tools.symbolizer, let nm = tools.nm else { throw XCTSkip("toolchain's llvm tools not found") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("qtrace-symbols-fixture-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let bin = symbolizer.deletingLastPathComponent()
        swiftProgram = directory.appendingPathComponent("t").path
        cProgram = directory.appendingPathComponent("worker").path
        try Self.compileSwift(Self.swiftSource, to: swiftProgram, buildID: Self.swiftBuildID, in: directory, bin: bin)
        try Self.compileC(Self.cSource, to: cProgram, buildID: Self.cBuildID, in: directory, bin: bin)
        swiftSymbols = try SymbolTable.read(tool: nm, object: swiftProgram)
        cSymbols = try SymbolTable.read(tool: nm, object: cProgram)
    }

    static func compileSwift(_ source: String, to output: String, buildID: String, in directory: URL, bin: URL) throws {
        let file = directory.appendingPathComponent("t.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        try run(bin.appendingPathComponent("swiftc"), ["-g", "-module-name", "t", file.path, "-o", output,
                                                        "-Xlinker", "--build-id=0x\(buildID)"])
    }

    /// `buildID` nil: none at all (clang's default where the linker is not told otherwise).
    static func compileC(_ source: String, to output: String, buildID: String?, in directory: URL, bin: URL) throws {
        let file = directory.appendingPathComponent("worker.c")
        try source.write(to: file, atomically: true, encoding: .utf8)
        try run(bin.appendingPathComponent("clang"), ["-g", "-O0", file.path, "-o", output,
                                                      "-Wl,--build-id=" + (buildID.map { "0x\($0)" } ?? "none")])
    }

    static func run(_ tool: URL, _ arguments: [String]) throws {
        let output = try ToolRunner.run(tool, arguments, input: Data())
        guard output.exitStatus == 0 else {
            throw NSError(domain: "Fixture", code: Int(output.exitStatus),
                          userInfo: [NSLocalizedDescriptionKey: "\(tool.lastPathComponent) failed: \(output.stderr)"])
        }
    }

    /// The line holding `// L:<marker>` in a source.
    static func line(_ marker: String, in source: String) -> Int {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        return 1 + lines.firstIndex { $0.hasSuffix("// L:\(marker)") }!
    }

    /// The module map entry of a file that is not loaded: base 0, so address = file address.
    static func unloaded(_ path: String, buildID: String?) -> ModuleInfo {
        ModuleInfo(path: path, base: 0, start: 0, end: 1 << 40, buildID: buildID)
    }

    func swiftAddress(_ name: String) throws -> UInt64 {
        try XCTUnwrap(swiftSymbols.addresses(of: [name])[name], "no symbol \(name)")
    }

    func cAddress(_ name: String) throws -> UInt64 {
        try XCTUnwrap(cSymbols.addresses(of: [name])[name], "no symbol \(name)")
    }

    /// A fresh, empty cache directory for one test.
    func newCacheDirectory() -> URL {
        directory.appendingPathComponent("cache-\(UUID().uuidString)")
    }
}
