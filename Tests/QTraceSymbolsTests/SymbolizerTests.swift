// The symbolizer with the real tools on freshly compiled programs: names, files and exact lines,
// Swift closures behind partial apply forwarders, and every way a module can fail to symbolize.
import Foundation
import XCTest
@testable import QTraceSymbols

final class SymbolizerTests: XCTestCase {
    func symbolizer(_ fixture: Fixture, cache: URL? = nil) -> Symbolizer {
        Symbolizer(cacheDirectory: cache, tools: fixture.tools)
    }

    func line(_ marker: String) -> Int { Fixture.line(marker, in: Fixture.swiftSource) }

    func testSwiftFunctionsNamesAndLines() throws {
        let fixture = try Fixture.get()
        let names = ["$s1t4loadyySiF", "$s1t4loadyySiFyyYbcfU_", "$s1t6LoaderV7loadAllyyFZ",
                     "$s1t6LoaderV7loadAllyyFZyyXEfU_", "$s1t5outerSiyF5innerL_yS2iF", "$s1t7genericyxx_xtSLRzlF",
                     "$s1t5StoreC3addyySiYaF", "$s1t11fetchRecord2idS2i_tYaF"]
        let addresses = try names.map(fixture.swiftAddress)
        let module = Fixture.unloaded(fixture.swiftProgram, buildID: Fixture.swiftBuildID)
        let symbols = try symbolizer(fixture).symbolize(addresses, modules: [module])

        let expected: [(short: String, line: Int)] = [
            ("load(_:)", line("load")), ("closure #1 in load(_:)", line("load.closure")),
            ("Loader.loadAll()", line("loadAll")), ("closure #1 in Loader.loadAll()", line("loadAll.closure")),
            ("inner(_:) in outer()", line("inner")), ("generic(_:_:)", line("generic")),
            ("Store.add(_:)", line("add")), ("fetchRecord(id:)", line("fetchRecord")),
        ]
        for (address, expected) in zip(addresses, expected) {
            let info = try XCTUnwrap(symbols[address])
            XCTAssertEqual(info.status, .ok, expected.short)
            XCTAssertEqual(info.shortName, expected.short)
            XCTAssertEqual(info.line, expected.line, expected.short)
            XCTAssertEqual(info.file.map { ($0 as NSString).lastPathComponent }, "t.swift")
            XCTAssertEqual(info.module, "t")
            XCTAssertEqual(info.offset, address)
        }
        XCTAssertEqual(symbols[addresses[1]]?.function, "closure #1 @Sendable () -> () in t.load(Swift.Int) -> ()")
        XCTAssertEqual(symbols[addresses[2]]?.function, "static t.Loader.loadAll() -> ()")
        XCTAssertEqual(symbols[addresses[1]]?.linkageName, "$s1t4loadyySiFyyYbcfU_")
    }

    /// A return address is inside a function, past its entry.
    func testAddressInsideAFunction() throws {
        let fixture = try Fixture.get()
        let address = try fixture.swiftAddress("$s1t11fetchRecord2idS2i_tYaF") + 4
        let info = try XCTUnwrap(try symbolizer(fixture).symbolize(
            [address], modules: [Fixture.unloaded(fixture.swiftProgram, buildID: nil)])[address])
        XCTAssertEqual(info.shortName, "fetchRecord(id:)")
        XCTAssertTrue((line("fetchRecord")...line("fetchRecord.end")).contains(info.line ?? 0), "\(info)")
    }

    func testAsyncContinuation() throws {
        let fixture = try Fixture.get()
        let address = try fixture.swiftAddress("$s1t11fetchRecord2idS2i_tYaFTQ0_")
        let info = try XCTUnwrap(try symbolizer(fixture).symbolize(
            [address], modules: [Fixture.unloaded(fixture.swiftProgram, buildID: nil)])[address])
        XCTAssertEqual(info.function, "(1) await resume partial function for t.fetchRecord(id: Swift.Int) async -> Swift.Int")
        XCTAssertEqual(info.shortName, "fetchRecord(id:) (await #1)")
        XCTAssertTrue((line("fetchRecord")...line("fetchRecord.end")).contains(info.line ?? 0), "\(info)")
    }

    /// The captured word of a closure's block is its partial apply forwarder: compiler-generated,
    /// no line. The symbolizer reports the closure behind it.
    func testPartialApplyForwarderResolvesToTheClosure() throws {
        let fixture = try Fixture.get()
        let forwarder = try fixture.swiftAddress("$s1t4loadyySiFyyYbcfU_TA")
        let info = try XCTUnwrap(try symbolizer(fixture).symbolize(
            [forwarder], modules: [Fixture.unloaded(fixture.swiftProgram, buildID: nil)])[forwarder])
        XCTAssertEqual(info.status, .ok)
        XCTAssertEqual(info.function, "closure #1 @Sendable () -> () in t.load(Swift.Int) -> ()")
        XCTAssertEqual(info.shortName, "closure #1 in load(_:)")
        XCTAssertEqual(info.line, line("load.closure"))
        XCTAssertEqual(info.offset, forwarder, "the offset stays the recorded address's")
    }

    func testReabstractionThunkIsAThunk() throws {
        let fixture = try Fixture.get()
        let thunk = try fixture.swiftAddress("$sIegh_IeyBh_TR")
        let closure = try fixture.swiftAddress("$s1t4loadyySiFyyYbcfU_")
        let symbols = try symbolizer(fixture).symbolize(
            [thunk, closure], modules: [Fixture.unloaded(fixture.swiftProgram, buildID: nil)])
        XCTAssertTrue(Symbolizer.isThunk(try XCTUnwrap(symbols[thunk])))
        XCTAssertEqual(symbols[thunk]?.shortName, "reabstraction thunk")
        XCTAssertFalse(Symbolizer.isThunk(try XCTUnwrap(symbols[closure])))
    }

    func testCFunctions() throws {
        let fixture = try Fixture.get()
        let worker = try fixture.cAddress("worker_fn")
        let helper = try fixture.cAddress("helper")
        let symbols = try symbolizer(fixture).symbolize(
            [worker, helper, helper + 4], modules: [Fixture.unloaded(fixture.cProgram, buildID: Fixture.cBuildID)])
        XCTAssertEqual(symbols[worker]?.function, "worker_fn")
        XCTAssertEqual(symbols[worker]?.shortName, "worker_fn")
        XCTAssertEqual(symbols[worker]?.line, Fixture.line("worker_fn", in: Fixture.cSource))
        XCTAssertEqual(symbols[worker]?.file.map { ($0 as NSString).lastPathComponent }, "worker.c")
        XCTAssertEqual(symbols[worker]?.module, "worker")
        XCTAssertEqual(symbols[helper]?.line, Fixture.line("helper", in: Fixture.cSource))
        let inside = try XCTUnwrap(symbols[helper + 4])
        XCTAssertEqual(inside.function, "helper")
        XCTAssertTrue((Fixture.line("helper", in: Fixture.cSource)...Fixture.line("helper.end", in: Fixture.cSource))
            .contains(inside.line ?? 0))
    }

    /// A module loaded at a bias: the offset given to llvm-symbolizer is address - base.
    func testLoadBias() throws {
        let fixture = try Fixture.get()
        let base: UInt64 = 0x7f12_3450_0000
        let vaddr = try fixture.cAddress("worker_fn")
        let module = ModuleInfo(path: fixture.cProgram, base: base, start: base, end: base + 0x10_0000, buildID: Fixture.cBuildID)
        let info = try XCTUnwrap(try symbolizer(fixture).symbolize([base + vaddr], modules: [module])[base + vaddr])
        XCTAssertEqual(info.function, "worker_fn")
        XCTAssertEqual(info.offset, vaddr)
    }

    func testSeveralModulesAndUnknownAddresses() throws {
        let fixture = try Fixture.get()
        let cBase: UInt64 = 0x1000_0000
        let modules = [
            ModuleInfo(path: fixture.swiftProgram, base: 0, start: 0, end: 0x100_0000),
            ModuleInfo(path: fixture.cProgram, base: cBase, start: cBase, end: cBase + 0x10_0000),
        ]
        let closure = try fixture.swiftAddress("$s1t4loadyySiFyyYbcfU_")
        let worker = try cBase + fixture.cAddress("worker_fn")
        let stray: UInt64 = 0x9000_0000
        let symbolizer = symbolizer(fixture)
        let symbols = try symbolizer.symbolize([closure, worker, stray, closure], modules: modules)
        XCTAssertEqual(symbols.count, 3)
        XCTAssertEqual(symbols[closure]?.shortName, "closure #1 in load(_:)")
        XCTAssertEqual(symbols[worker]?.shortName, "worker_fn")
        XCTAssertEqual(symbols[stray]?.status, .unknownModule)
        XCTAssertEqual(symbols[stray]?.label, "?+0x90000000")
        XCTAssertEqual(symbolizer.problems, ["1 address(es) in no recorded module: shown as bare addresses"])
    }

    func testStrippedModule() throws {
        let fixture = try Fixture.get()
        let stripped = fixture.directory.appendingPathComponent("t-stripped").path
        try? FileManager.default.removeItem(atPath: stripped)
        let objcopy = fixture.tools.symbolizer!.deletingLastPathComponent().appendingPathComponent("llvm-objcopy")
        try Fixture.run(objcopy, ["--strip-all", fixture.swiftProgram, stripped])
        let address = try fixture.swiftAddress("$s1t4loadyySiF")
        let symbolizer = symbolizer(fixture)
        let info = try XCTUnwrap(try symbolizer.symbolize(
            [address], modules: [Fixture.unloaded(stripped, buildID: Fixture.swiftBuildID)])[address])
        XCTAssertEqual(info.status, .stripped)
        XCTAssertNil(info.function)
        XCTAssertEqual(info.label, "t-stripped+0x\(String(address, radix: 16))")
        XCTAssertEqual(symbolizer.problems, ["t-stripped: no symbols (stripped): shown as module+offset"])
    }

    func testRebuiltModuleIsNotSymbolized() throws {
        let fixture = try Fixture.get()
        let path = fixture.directory.appendingPathComponent("rebuilt").path
        let bin = fixture.tools.symbolizer!.deletingLastPathComponent()
        try Fixture.compileC(Fixture.cSource, to: path, buildID: "c0de0002", in: fixture.directory, bin: bin)
        let address = try fixture.cAddress("worker_fn")
        let symbolizer = symbolizer(fixture, cache: fixture.newCacheDirectory())
        let info = try XCTUnwrap(try symbolizer.symbolize(
            [address], modules: [Fixture.unloaded(path, buildID: Fixture.cBuildID)])[address])
        XCTAssertEqual(info.status, .buildIDMismatch)
        XCTAssertNil(info.function)
        XCTAssertEqual(symbolizer.problems,
                       ["rebuilt: rebuilt since recording (build-id c0de0001 recorded, c0de0002 on disk): shown as module+offset"])
    }

    func testMissingFile() throws {
        let fixture = try Fixture.get()
        let symbolizer = symbolizer(fixture)
        let path = fixture.directory.appendingPathComponent("gone.so").path
        let info = try XCTUnwrap(try symbolizer.symbolize([0x1234], modules: [Fixture.unloaded(path, buildID: "abcd")])[0x1234])
        XCTAssertEqual(info, SymbolInfo(module: "gone.so", offset: 0x1234, status: .missingFile))
        XCTAssertEqual(symbolizer.problems, ["gone.so: not on disk (\(path)): shown as module+offset"])
    }

    /// The second run finds everything in the cache: its tools are /bin/false and not needed.
    func testCacheHit() throws {
        let fixture = try Fixture.get()
        let cache = fixture.newCacheDirectory()
        let addresses = try ["$s1t4loadyySiFyyYbcfU_TA", "$s1t11fetchRecord2idS2i_tYaFTQ0_"].map(fixture.swiftAddress)
        let module = Fixture.unloaded(fixture.swiftProgram, buildID: Fixture.swiftBuildID)
        let cold = try symbolizer(fixture, cache: cache).symbolize(addresses, modules: [module])
        XCTAssertTrue(FileManager.default.fileExists(atPath: cache.appendingPathComponent("\(Fixture.swiftBuildID).json").path))

        let broken = URL(fileURLWithPath: "/bin/false")
        let warmSymbolizer = Symbolizer(cacheDirectory: cache, tools: SymbolTools(symbolizer: broken, demangler: broken, nm: broken))
        XCTAssertEqual(try warmSymbolizer.symbolize(addresses, modules: [module]), cold)
        XCTAssertEqual(warmSymbolizer.problems, [])

        // An offset not in the cache needs the (broken) tool.
        let uncached = try fixture.swiftAddress("$s1t4loadyySiF")
        let symbols = try warmSymbolizer.symbolize(addresses + [uncached], modules: [module])
        XCTAssertEqual(symbols[uncached]?.status, .toolFailed)
        XCTAssertEqual(symbols[addresses[0]], cold[addresses[0]])
        XCTAssertEqual(warmSymbolizer.problems.count, 1)
        XCTAssertTrue(warmSymbolizer.problems[0].hasPrefix("t: llvm-symbolizer failed"), warmSymbolizer.problems[0])
    }

    /// The cache is keyed by build-id: a module deleted since keeps its cached names.
    func testCacheServesADeletedModule() throws {
        let fixture = try Fixture.get()
        let cache = fixture.newCacheDirectory()
        let copy = fixture.directory.appendingPathComponent("worker-copy").path
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: fixture.cProgram, toPath: copy)
        let address = try fixture.cAddress("worker_fn")
        let module = Fixture.unloaded(copy, buildID: Fixture.cBuildID)
        _ = try symbolizer(fixture, cache: cache).symbolize([address], modules: [module])
        try FileManager.default.removeItem(atPath: copy)
        let info = try symbolizer(fixture, cache: cache).symbolize([address], modules: [module])[address]
        XCTAssertEqual(info?.function, "worker_fn")
        XCTAssertEqual(info?.module, "worker-copy")
    }

    /// A module without a build-id is cached under its identity on disk (path, inode, size,
    /// modification time): the second run needs no tool; once the file is touched, the cached
    /// names no longer apply and the tool runs again.
    func testModuleWithoutBuildIDIsCachedByItsIdentityOnDisk() throws {
        let fixture = try Fixture.get()
        let cache = fixture.newCacheDirectory()
        let program = fixture.directory.appendingPathComponent("worker-without-build-id").path
        let bin = try XCTUnwrap(fixture.tools.symbolizer).deletingLastPathComponent()
        try Fixture.compileC(Fixture.cSource, to: program, buildID: nil, in: fixture.directory, bin: bin)
        XCTAssertNil(ELFBuildID.read(path: program))
        let table = try SymbolTable.read(tool: try XCTUnwrap(fixture.tools.nm), object: program)
        let address = try XCTUnwrap(table.addresses(of: ["worker_fn"])["worker_fn"])
        let module = Fixture.unloaded(program, buildID: nil)
        let cold = try symbolizer(fixture, cache: cache).symbolize([address], modules: [module])
        XCTAssertEqual(cold[address]?.function, "worker_fn")
        let files = try FileManager.default.contentsOfDirectory(atPath: cache.path)
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(files.first?.count, 32 + ".json".count, "\(files)")

        let broken = URL(fileURLWithPath: "/bin/false")
        let warm = Symbolizer(cacheDirectory: cache, tools: SymbolTools(symbolizer: broken, demangler: broken, nm: broken))
        XCTAssertEqual(try warm.symbolize([address], modules: [module]), cold)
        XCTAssertEqual(warm.problems, [])

        // Rewritten (here only touched): another identity, so no cached names.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: program)
        let touched = Symbolizer(cacheDirectory: cache, tools: SymbolTools(symbolizer: broken, demangler: broken, nm: broken))
        XCTAssertEqual(try touched.symbolize([address], modules: [module])[address]?.status, .toolFailed)
    }

    func testCorruptCacheIsIgnoredAndRewritten() throws {
        let fixture = try Fixture.get()
        let cache = fixture.newCacheDirectory()
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let file = cache.appendingPathComponent("\(Fixture.cBuildID).json")
        try Data("{\"version\":1,\"symbols\":{\"6b0\":[garbage".utf8).write(to: file)
        let address = try fixture.cAddress("worker_fn")
        let module = Fixture.unloaded(fixture.cProgram, buildID: Fixture.cBuildID)
        let info = try symbolizer(fixture, cache: cache).symbolize([address], modules: [module])[address]
        XCTAssertEqual(info?.function, "worker_fn")
        XCTAssertEqual(SymbolCache(directory: cache).load(buildID: Fixture.cBuildID)[address]?.function, "worker_fn")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
    }

    func testMissingTools() throws {
        let fixture = try Fixture.get()
        let symbolizer = Symbolizer(cacheDirectory: nil, tools: SymbolTools(symbolizer: nil, demangler: nil, nm: nil))
        let address = try fixture.cAddress("worker_fn")
        let info = try symbolizer.symbolize([address], modules: [Fixture.unloaded(fixture.cProgram, buildID: nil)])[address]
        XCTAssertEqual(info, SymbolInfo(module: "worker", offset: address, status: .toolFailed))
        XCTAssertEqual(symbolizer.problems, ["worker: llvm-symbolizer not found: shown as module+offset"])
    }

    /// Without swift-demangle, Swift names stay mangled (and are not cached).
    func testMissingDemangler() throws {
        let fixture = try Fixture.get()
        var tools = fixture.tools
        tools.demangler = nil
        let cache = fixture.newCacheDirectory()
        let symbolizer = Symbolizer(cacheDirectory: cache, tools: tools)
        let address = try fixture.swiftAddress("$s1t4loadyySiF")
        let info = try symbolizer.symbolize([address], modules: [Fixture.unloaded(fixture.swiftProgram, buildID: nil)])[address]
        XCTAssertEqual(info?.function, "$s1t4loadyySiF")
        XCTAssertEqual(info?.line, line("load"))
        XCTAssertEqual(symbolizer.problems, ["swift-demangle not found: Swift names left mangled"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache.path))
    }

    /// Random bytes where a module should be: no build-id, llvm-symbolizer refuses it, no crash.
    func testCorruptModuleFile() throws {
        let fixture = try Fixture.get()
        let path = fixture.directory.appendingPathComponent("random.so").path
        var generator = SystemRandomNumberGenerator()
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: URL(fileURLWithPath: path))
        let symbolizer = symbolizer(fixture)
        let info = try symbolizer.symbolize([0x10], modules: [Fixture.unloaded(path, buildID: nil)])[0x10]
        XCTAssertEqual(info?.status, .toolFailed)
        XCTAssertEqual(symbolizer.problems.count, 1)
        XCTAssertTrue(symbolizer.problems[0].hasPrefix("random.so: llvm-symbolizer could not read it"), symbolizer.problems[0])

        let recorded = try symbolizer.symbolize([0x10], modules: [Fixture.unloaded(path, buildID: "abcd")])[0x10]
        XCTAssertEqual(recorded?.status, .buildIDMismatch)
    }
}
