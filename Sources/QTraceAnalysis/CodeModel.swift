// Code identity in the model: the code sites, modules and Swift tasks a trace names
// (docs/trace-format.md, "Code identity"). Symbols come later, from QTraceSymbols through
// `TraceModel.applySymbols`: the model itself only holds addresses.
import QTraceFormat

/// Where an address is in the source, once symbolized.
public struct CodeLocation: Sendable, Codable, Equatable {
    /// Demangled full name.
    public var function: String?
    /// Readable short form ("closure #1 in Loader.loadAll()").
    public var shortName: String?
    public var file: String?
    public var line: Int?
    /// Module basename.
    public var module: String
    /// Address − the module's load base.
    public var offset: UInt64
    /// How far symbolization got: ok, noDebugInfo, stripped, missingFile, buildIDMismatch,
    /// unknownModule, notSymbolized.
    public var status: String
    /// The Swift module the mangled name places it in ("App", "NIOCore"), nil for C code.
    public var swiftModule: String?
    /// The code only forwards to other code (a reabstraction thunk, a partial-apply forwarder:
    /// QTraceSymbols' ShortName.isThunk): never a name.
    public var isThunk: Bool

    public init(function: String?, shortName: String?, file: String?, line: Int?, module: String, offset: UInt64,
                status: String, swiftModule: String? = nil, isThunk: Bool = false) {
        self.function = function; self.shortName = shortName; self.file = file; self.line = line
        self.module = module; self.offset = offset; self.status = status; self.swiftModule = swiftModule
        self.isThunk = isThunk
    }

    /// `App.swift:88` (basename), nil when the line is unknown.
    public var fileLine: String? {
        guard let file, let line, line > 0 else { return nil }
        let base = file.split(separator: "/").last.map(String.init) ?? file
        return "\(base):\(line)"
    }

    /// The name to show: the short symbol, else `module+0xoffset`.
    public var name: String { shortName ?? function ?? "\(module)+0x\(String(offset, radix: 16))" }
}

/// One distinct (code, call site) pair of a process: a SITE record.
public struct CodeSite: Sendable {
    /// The id the trace gives it (per process).
    public var traceID: UInt32
    public var codeKind: SiteCodeKind
    /// What runs: a block's invoke, a function, a job's resume function (0 for a wait).
    public var code: UInt64
    /// A Swift closure's function (its block's first capture), else 0.
    public var capture: UInt64
    /// The call site: first return address outside Dispatch and the Swift runtime (0 unknown).
    public var caller: UInt64
    /// Index into `TraceModel.codes`: sites that run the same code share it (nil for waits).
    public var codeIndex: Int?
    /// The call site, symbolized.
    public var from: CodeLocation?
    /// A Swift job's async stack, innermost first: the code it resumes, then each awaiting
    /// caller up to its task's entry point (empty for other sites and older traces).
    public var asyncStack: [UInt64] = []
    /// The async stack, symbolized (same order).
    public var asyncFrames: [CodeLocation] = []
    /// A wait's call stack: up to 8 return addresses from its caller up, innermost first (empty
    /// for other sites and older traces). `from` is its first frame of the program's own code.
    public var callStack: [UInt64] = []
    /// The call stack, symbolized (same order).
    public var callFrames: [CodeLocation] = []
}

/// One distinct piece of code that items ran, with the sites it was submitted from.
public struct TraceCode: Sendable {
    public var codeKind: SiteCodeKind
    /// The address that names it: the closure for a Swift closure, else `code`.
    public var address: UInt64
    public var sites: [Int] = []
    /// The code, symbolized.
    public var what: CodeLocation?
    /// A name given by the trace itself (a Foundation Operation's name or type): it wins.
    public var label: String?

    /// The name to show: the label, the symbol, else module+offset, else the raw address.
    public var name: String { label ?? what?.name ?? "0x" + String(address, radix: 16) }
}

/// A mapped ELF module (MODULE + BUILD_ID records).
public struct TraceModule: Sendable, Codable, Equatable {
    public var path: String
    public var base: UInt64
    public var start: UInt64
    public var end: UInt64
    public var buildID: String?
}

/// A Swift Concurrency task: the chain of jobs (items) the runtime enqueued for it.
public struct SwiftTask: Sendable {
    /// The runtime's task id (1, 2, 3 … in creation order).
    public var id: UInt32
    public var address: UInt64
    /// The parent task (child tasks of a TaskGroup or `async let`), when the runtime says.
    public var parent: Int?
    /// Its jobs, in order (indexes into `TraceModel.items`).
    public var jobs: [Int] = []
    /// Set when one of its jobs ran on the main queue (the main actor).
    public var onMainActor = false
    /// The code its first job resumed, as recorded (JOB `resume`).
    public var firstResume: UInt64 = 0
    /// A task of the Swift runtime's own (Task.sleep's timer): its code is the runtime's.
    public var isRuntime = false
}

extension TraceModel {
    /// The site of an item, a blocked interval or an apply, as a model index.
    public func site(ofItem i: Int) -> CodeSite? { items[i].site.map { sites[$0] } }

    /// The code an item ran, when known.
    public func code(ofItem i: Int) -> TraceCode? {
        guard let s = items[i].site, let c = sites[s].codeIndex else { return nil }
        return codes[c]
    }

    /// Every address a symbolizer should resolve: codes, closures and call sites.
    public var codeAddresses: [UInt64] {
        var seen = Set<UInt64>()
        for code in codes where code.address != 0 { seen.insert(code.address) }
        // A call site is a return address: the call instruction ends one byte before it (the
        // return address itself may already belong to the next line).
        for site in sites where site.caller != 0 { seen.insert(site.caller - 1) }
        for site in sites { seen.formUnion(site.asyncStack) }
        for site in sites { seen.formUnion(site.callStack.lazy.filter { $0 != 0 }.map { $0 - 1 }) }
        for hop in actorHops where hop.executor != 0 && hop.resume != 0 { seen.insert(hop.resume) }
        for stretch in longJobStretches().values { seen.insert(stretch.resume) }
        if let cpu { seen.formUnion(cpu.symbolAddresses) }
        return seen.sorted()
    }

    /// Fills in the codes' and sites' locations from a symbolizer's answers (absent
    /// addresses stay nil).
    public mutating func applySymbols(_ locations: [UInt64: CodeLocation], focus: CodeFocus = CodeFocus()) {
        for c in codes.indices { codes[c].what = locations[codes[c].address] }
        for s in sites.indices where sites[s].caller != 0 { sites[s].from = locations[sites[s].caller - 1] }
        if let addresses = cpu?.symbolAddresses { cpu?.locations = locations.filter { addresses.contains($0.key) } }
        splitOverlayCodes()
        focusAsyncStacks(locations, focus: focus)
        focusCallStacks(locations, focus: focus)
        for hop in actorHops where hop.executor != 0 { actorCode[hop.resume] = locations[hop.resume] }
        for stretch in longJobStretches().values { actorCode[stretch.resume] = locations[stretch.resume] }
    }

    /// Modules whose code is Dispatch's or Swift's own wrapping, never the user's closure.
    static let wrapperModules: Set<String> = ["libswiftDispatch.so", "libswiftCore.so", "libdispatch.so",
                                              "libBlocksRuntime.so"]

    /// `queue.sync { … }` reaches libdispatch as the overlay's own thunk, the same code for
    /// every sync of a program: such a code is split per call site and named after it
    /// ("closure in Loader.load()" at the caller's line), so that syncs stay apart.
    mutating func splitOverlayCodes() {
        for c in codes.indices {
            guard let what = codes[c].what, Self.wrapperModules.contains(what.module) else { continue }
            let siteList = codes[c].sites
            for (n, s) in siteList.enumerated() {
                guard let from = sites[s].from else { continue }
                let named = CodeLocation(function: "closure in " + (from.function ?? from.name), shortName: "closure in " + from.name,
                                         file: from.file, line: from.line, module: from.module, offset: from.offset,
                                         status: from.status)
                if n == 0 {
                    codes[c].what = named
                    codes[c].sites = [s]
                } else {
                    var split = TraceCode(codeKind: codes[c].codeKind, address: codes[c].address)
                    split.what = named
                    split.sites = [s]
                    sites[s].codeIndex = codes.count
                    codes.append(split)
                }
            }
        }
    }

    /// A one-line name of a site for messages: "closure #1 in load() (App.swift:12)" or, for a
    /// wait, its call site.
    public func siteDescription(_ s: Int) -> String {
        let site = sites[s]
        if let c = site.codeIndex {
            let code = codes[c]
            var text = code.name
            if let line = site.from?.fileLine ?? code.what?.fileLine { text += " at \(line)" }
            return text
        }
        if let from = site.from { return from.fileLine.map { "\(from.name) at \($0)" } ?? from.name }
        return "0x" + String(site.caller, radix: 16)
    }
}

/// A continuation made (withCheckedContinuation / withUnsafeContinuation) or awaited.
public struct ContinuationEvent: Sendable, Equatable {
    public var time: UInt64
    public var taskID: UInt32
    /// Its context's address: a made and an awaited event of one continuation share it.
    public var context: UInt64
    public var awaited: Bool
    /// Awaited while not resumed yet: the task suspends until someone resumes it.
    public var suspends: Bool
    /// Where it was made (model site index + 1; 0 unknown), on the made event.
    var siteRaw: UInt32
    public var site: Int? { siteRaw == 0 ? nil : Int(siteRaw) - 1 }

    public init(time: UInt64, taskID: UInt32, context: UInt64, awaited: Bool, suspends: Bool, siteRaw: UInt32 = 0) {
        self.time = time; self.taskID = taskID; self.context = context; self.awaited = awaited
        self.suspends = suspends; self.siteRaw = siteRaw
    }
}
