// Offline symbolization of a process's recorded code addresses, after the process exited:
// addresses are grouped by module, each module's file is checked against its recorded build-id,
// and llvm-symbolizer resolves all of a module's offsets in one run; Swift names are then
// demangled by swift-demangle in one run for all modules.
import Foundation

public final class Symbolizer {
    /// One line per module that could not be (fully) symbolized, and why. Reset by each `symbolize`.
    public private(set) var problems: [String] = []

    private let cache: SymbolCache?
    private let tools: SymbolTools
    private let resolver: ModuleResolver

    /// $XDG_CACHE_HOME/qtrace/symbols, else ~/.cache/qtrace/symbols.
    public static var defaultCacheDirectory: URL { SymbolCache.defaultDirectory() }

    /// `cacheDirectory` nil disables the cache; `tools` defaults to the toolchain's.
    public init(cacheDirectory: URL? = Symbolizer.defaultCacheDirectory, tools: SymbolTools = .locate()) {
        let cache = cacheDirectory.map(SymbolCache.init(directory:))
        self.cache = cache
        self.tools = tools
        self.resolver = ModuleResolver(cache: cache, tools: tools)
    }

    /// Whether a symbol is a reabstraction thunk (a Swift closure's block invoke function): the
    /// caller should prefer the symbol of the block's first captured word.
    public static func isThunk(_ info: SymbolInfo) -> Bool {
        info.function.map(ShortName.isThunk) ?? false
    }

    /// Symbolizes all addresses at once. Every address gets an entry; the ones that could not be
    /// resolved carry module+offset and a status saying why (see `problems`).
    public func symbolize(_ addresses: [UInt64], modules: [ModuleInfo]) throws -> [UInt64: SymbolInfo] {
        problems = []
        let (groups, unknown) = Self.group(Set(addresses), by: modules)
        var results: [UInt64: SymbolInfo] = [:]
        for address in unknown {
            results[address] = SymbolInfo(module: "?", offset: address, status: .unknownModule)
        }
        if !unknown.isEmpty { problems.append("\(unknown.count) address(es) in no recorded module: shown as bare addresses") }

        let work = resolver.resolveConcurrently(groups)
        let demangled = demangle(work.flatMap { $0.frames.values.compactMap(\.linkageName) })
        for var module in work {
            problems += module.problems
            module.finish(demangled: demangled.names)
            reportIncompleteSymbols(module)
            if demangled.complete { store(module) }
            for (offset, info) in module.symbols { results[offset &+ module.info.base] = info }
        }
        return results
    }

    // MARK: - Grouping

    /// Splits addresses by the module whose executable range holds them.
    static func group(_ addresses: Set<UInt64>, by modules: [ModuleInfo])
        -> (groups: [(module: ModuleInfo, addresses: [UInt64])], unknown: [UInt64])
    {
        let sorted = modules.filter { $0.start < $0.end }.sorted { $0.start < $1.start }
        var byModule: [Int: [UInt64]] = [:]
        var unknown: [UInt64] = []
        for address in addresses {
            // The last module starting at or below the address is the only candidate.
            var low = 0, high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle].start <= address { low = middle + 1 } else { high = middle }
            }
            if low > 0, sorted[low - 1].contains(address) {
                byModule[low - 1, default: []].append(address)
            } else {
                unknown.append(address)
            }
        }
        return (byModule.keys.sorted().map { (sorted[$0], byModule[$0]!) }, unknown)
    }

    // MARK: - One module

    // MARK: - Names

    private func demangle(_ linkageNames: [String]) -> (names: [String: String], complete: Bool) {
        let swiftNames = Array(Set(linkageNames.filter(SwiftDemangler.isSwiftMangled))).sorted()
        guard !swiftNames.isEmpty else { return ([:], true) }
        guard let demangler = tools.demangler else {
            problems.append("swift-demangle not found: Swift names left mangled")
            return ([:], false)
        }
        do throws(ToolFailure) {
            return (try SwiftDemangler.demangle(tool: demangler, swiftNames), true)
        } catch {
            problems.append("\(error.reason): Swift names left mangled")
            return ([:], false)
        }
    }

    static func symbol(_ frame: RawFrame, demangled: [String: String], module: String, offset: UInt64) -> SymbolInfo {
        guard let linkageName = frame.linkageName else { return SymbolInfo(module: module, offset: offset, status: .stripped) }
        let function = demangled[linkageName] ?? linkageName
        let hasLine = frame.file != nil && (frame.line ?? 0) > 0
        return SymbolInfo(
            function: function, shortName: ShortName.make(demangled: function, linkageName: linkageName),
            linkageName: linkageName, file: hasLine ? frame.file : nil, line: hasLine ? frame.line : nil,
            module: module, offset: offset, status: hasLine ? .ok : .noDebugInfo)
    }

    // MARK: - Reporting and caching

    /// One problem line for a module without symbols or without line tables.
    private func reportIncompleteSymbols(_ work: ModuleWork) {
        let statuses = Set(work.symbols.values.map(\.status))
        guard !statuses.isEmpty, !statuses.contains(.ok) else { return }
        if statuses == [.stripped] {
            problems.append("\(work.info.name): no symbols (stripped): shown as module+offset")
        } else if statuses.contains(.noDebugInfo), statuses.isSubset(of: [.noDebugInfo, .stripped]) {
            problems.append("\(work.info.name): no debug info: function names without file:line")
        }
    }

    private func store(_ work: ModuleWork) {
        guard let cache, let key = work.cacheKey, !work.fresh.isEmpty else { return }
        let fresh = work.symbols.filter { work.fresh.contains($0.key) }
        do {
            try cache.store(fresh, buildID: key)
        } catch {
            problems.append("\(work.info.name): symbol cache not written (\(error.localizedDescription))")
        }
    }

    static func abbreviated(_ buildID: String) -> String {
        buildID.count > 12 ? buildID.prefix(12) + "…" : buildID
    }
}
