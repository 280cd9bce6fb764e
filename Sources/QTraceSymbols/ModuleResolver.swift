// The symbolization of one module: cache, file and build-id checks, llvm-symbolizer, and Swift
// partial apply forwarders. Sendable, so that modules can be resolved side by side.
import Foundation

struct ModuleResolver: Sendable {
    let cache: SymbolCache?
    let tools: SymbolTools
    /// llvm-nm's output per object path: read once, when a partial apply forwarder needs it.
    let symbolTables = SymbolTableStore()

    /// Modules are independent (one llvm-symbolizer process each), so they run side by side: a
    /// trace's cold symbolization takes about as long as its largest module.
    func resolveConcurrently(_ groups: [(module: ModuleInfo, addresses: [UInt64])]) -> [ModuleWork] {
        let work = LockedSlots<ModuleWork>(count: groups.count)
        DispatchQueue.concurrentPerform(iterations: groups.count) { index in
            let module = groups[index].module
            work[index] = resolve(module, offsets: Set(groups[index].addresses.map { $0 &- module.base }))
        }
        return work.values
    }

    private func resolve(_ module: ModuleInfo, offsets: Set<UInt64>) -> ModuleWork {
        var work = ModuleWork(info: module, cacheKey: module.buildID?.lowercased())
        var remaining = offsets
        // Cached symbols are valid even if the file has changed since: they were made from the
        // file with this build-id.
        useCached(&work, &remaining)
        guard !remaining.isEmpty else { return work }
        guard FileManager.default.fileExists(atPath: module.path) else {
            work.problems.append("\(module.name): not on disk (\(module.path)): shown as module+offset")
            work.fail(remaining, .missingFile)
            return work
        }
        let fileBuildID = ELFBuildID.read(path: module.path)
        if let recorded = work.cacheKey, fileBuildID != recorded {
            work.problems.append("\(module.name): rebuilt since recording (build-id \(Symbolizer.abbreviated(recorded)) recorded, "
                + "\(fileBuildID.map(Symbolizer.abbreviated) ?? "none") on disk): shown as module+offset")
            work.fail(remaining, .buildIDMismatch)
            return work
        }
        work.cacheKey = work.cacheKey ?? fileBuildID
        if work.cacheKey == nil {
            // No build-id (clang's default, the Swift toolchain's among them): symbols of this
            // very file, known by its identity on disk, so that a second `stats` of a trace
            // does not run llvm-symbolizer again (40-50 ms for a small program).
            work.cacheKey = FileIdentity(path: module.path)?.cacheKey
            useCached(&work, &remaining)
            guard !remaining.isEmpty else { return work }
        }
        guard let symbolizer = tools.symbolizer else {
            work.problems.append("\(module.name): llvm-symbolizer not found: shown as module+offset")
            work.fail(remaining, .toolFailed)
            return work
        }
        do throws(ToolFailure) {
            let frames = try LLVMSymbolizer.frames(tool: symbolizer, object: module.path, offsets: remaining.sorted())
            work.frames = resolvePartialApplies(frames, object: module.path, symbolizer: symbolizer)
            work.fail(remaining.subtracting(work.frames.keys), .toolFailed)
        } catch {
            work.problems.append("\(module.name): \(error.reason): shown as module+offset")
            work.fail(remaining, .toolFailed)
        }
        return work
    }

    /// Takes the cached symbols of `work.cacheKey`'s module out of `remaining`.
    private func useCached(_ work: inout ModuleWork, _ remaining: inout Set<UInt64>) {
        guard let cache, let key = work.cacheKey else { return }
        let cached = cache.load(buildID: key)
        for offset in remaining {
            guard var info = cached[offset] else { continue }
            info.module = work.info.name
            work.symbols[offset] = info
            remaining.remove(offset)
        }
    }

    /// A block made from a Swift closure captures a "partial apply forwarder for closure #1 …"
    /// (linkage name `…TA`), compiler-generated, without a line. The closure itself is the same
    /// linkage name without `TA`: found in the symbol table, its frame gives the real file:line.
    private func resolvePartialApplies(_ frames: [UInt64: RawFrame], object: String, symbolizer: URL) -> [UInt64: RawFrame] {
        let forwarders = frames.compactMapValues { frame -> String? in
            guard let name = frame.linkageName, SwiftDemangler.isSwiftMangled(name), name.hasSuffix("TA") else { return nil }
            return String(name.dropLast(2))
        }
        guard !forwarders.isEmpty, let table = symbolTable(object) else { return frames }
        let addresses = table.addresses(of: Set(forwarders.values))
        let targets = forwarders.compactMapValues { addresses[$0] }
        let unknownTargets = Set(targets.values).subtracting(frames.keys)
        var all = frames
        if !unknownTargets.isEmpty,
           let extra = try? LLVMSymbolizer.frames(tool: symbolizer, object: object, offsets: unknownTargets.sorted())
        {
            all.merge(extra) { old, _ in old }
        }
        var resolved = frames
        for (offset, target) in targets {
            if let closure = all[target], closure.linkageName == forwarders[offset] { resolved[offset] = closure }
        }
        return resolved
    }

    private func symbolTable(_ object: String) -> SymbolTable? {
        symbolTables.table(object) { tools.nm.flatMap { try? SymbolTable.read(tool: $0, object: object) } }
    }
}

/// The state of one module's symbolization: symbols already final (cached, or failed with a
/// status), and raw frames from llvm-symbolizer waiting for demangling.
struct ModuleWork {
    var info: ModuleInfo
    /// The key under which results are cached: the recorded build-id, else the file's, else
    /// (none) the file's identity on disk (`FileIdentity`).
    var cacheKey: String?
    var symbols: [UInt64: SymbolInfo] = [:]
    var frames: [UInt64: RawFrame] = [:]
    var fresh: Set<UInt64> = []
    var problems: [String] = []

    mutating func fail(_ offsets: Set<UInt64>, _ status: SymbolStatus) {
        for offset in offsets { symbols[offset] = SymbolInfo(module: info.name, offset: offset, status: status) }
    }

    mutating func finish(demangled: [String: String]) {
        for (offset, frame) in frames {
            symbols[offset] = Symbolizer.symbol(frame, demangled: demangled, module: info.name, offset: offset)
            fresh.insert(offset)
        }
    }
}

/// Symbol tables by object path, shared by the threads resolving modules (nil: unreadable).
final class SymbolTableStore: @unchecked Sendable {
    private let lock = NSLock()
    private var tables: [String: SymbolTable?] = [:]

    func table(_ object: String, read: () -> SymbolTable?) -> SymbolTable? {
        lock.lock()
        defer { lock.unlock() }
        if let table = tables[object] { return table }
        let table = read()
        tables[object] = .some(table)
        return table
    }
}

/// One result slot per concurrent iteration.
final class LockedSlots<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Value?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    subscript(index: Int) -> Value? {
        get { lock.withLock { slots[index] } }
        set { lock.withLock { slots[index] = newValue } }
    }

    /// All slots, once every iteration has filled its own.
    var values: [Value] { lock.withLock { slots.map { $0! } } }
}

/// A file without a build-id, named by what changes when it is rebuilt or replaced: its path,
/// device, inode, size and modification time (to the nanosecond).
struct FileIdentity {
    let description: String

    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        description = "\(path)|\(status.st_dev)|\(status.st_ino)|\(status.st_size)|"
            + "\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
    }

    /// 32 hex digits (two 64-bit FNV-1a hashes of the description, the second salted): a cache
    /// file name, which build-ids (40 hex digits) never collide with.
    var cacheKey: String {
        func fnv(_ salt: UInt8) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in [salt] + Array(description.utf8) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
        return [fnv(1), fnv(2)].map { hex in
            let digits = String(hex, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }
}
