// Which frame of a Swift job's async stack names it: the first (innermost) frame of the
// program's own code that is not a thunk. On a server, the innermost frame of a resumed job is
// usually a library's (NIO's async sequence, Hummingbird's router); the handler that awaited
// it is further up. SwiftPM links dependencies into the executable, so the ELF module cannot
// tell the program from its packages: the Swift module (from the mangled name) and the source
// path can.

/// What counts as "the program" when naming jobs (`--focus MODULE`).
public struct CodeFocus: Sendable, Equatable {
    /// Swift module names the user named; empty: the default rule (`isDefaultProgram`).
    public var modules: Set<String>

    public init(modules: Set<String> = []) { self.modules = modules }

    /// `--focus A,B` / QTRACE_FOCUS: comma-separated Swift module names.
    public init(list: String) {
        self.init(modules: Set(list.split(separator: ",").map { trimmedWhitespace(String($0)) }.filter { !$0.isEmpty }))
    }

    /// Modules of the toolchain: never the program, whatever their file paths say. The
    /// toolchain's tools link swift-tools-support-core (TSC*) statically from its own source
    /// tree: swift-driver's waits happen in TSCBasic's Process.waitUntilExit, and the line to
    /// name is the driver's that called it.
    static let toolchainModules: Set<String> = ["Swift", "_Concurrency", "Foundation", "FoundationEssentials",
                                                "FoundationInternationalization", "Dispatch", "_StringProcessing",
                                                "Synchronization", "Observation", "XCTest", "Testing",
                                                "TSCBasic", "TSCUtility", "TSCLibc"]

    /// Whether a frame is the program's own code.
    public func isProgram(_ frame: CodeLocation) -> Bool {
        if let module = frame.swiftModule, !modules.isEmpty { return modules.contains(module) }
        if !modules.isEmpty { return false }
        return Self.isDefaultProgram(frame)
    }

    /// The default: code outside the toolchain's libraries and modules, whose source file (when
    /// known) is not a package dependency's checkout.
    static func isDefaultProgram(_ frame: CodeLocation) -> Bool {
        if let module = frame.swiftModule, toolchainModules.contains(module) { return false }
        let library = frame.module
        if library.hasPrefix("libswift") || library.hasPrefix("libFoundation") || library.hasPrefix("libdispatch")
            || library.hasPrefix("lib_Foundation") || library.hasPrefix("libc.so") || library.hasPrefix("libstdc++") {
            return false
        }
        if let file = frame.file {
            for marker in ["/checkouts/", "/SourcePackages/", "/.build/repositories/"]
            where file.contains(marker) { return false }
        }
        return frame.status != "unknownModule"
    }

    /// The index of the frame that names a stack (innermost first): the first program frame
    /// that is not a thunk; else (all library code) the first that is not a thunk and has a
    /// source line (some resume points of a library's closures have none); else the first
    /// that is not a thunk; else the first.
    ///
    /// Without `--focus`, a frame with no source line (a resume point the compiler gave none)
    /// cannot show it lies in a package checkout: it names the stack only when no frame of the
    /// stack has a line at all (a binary without line tables).
    public func focusIndex(_ frames: [CodeLocation]) -> Int? {
        guard !frames.isEmpty else { return nil }
        let named = frames.indices.filter { !frames[$0].isThunk }
        let program = named.filter { isProgram(frames[$0]) }
        let hasLine = { (i: Int) in frames[i].fileLine != nil }
        let programFrame = modules.isEmpty
            ? program.first(where: hasLine) ?? (frames.indices.contains(where: hasLine) ? nil : program.first)
            : program.first
        return programFrame ?? named.first(where: hasLine) ?? named.first ?? 0
    }
}

extension CodeLocation {
    /// "Name at File.swift:12", or the name alone.
    public var described: String { fileLine.map { "\(name) at \($0)" } ?? name }
}

extension TraceModel {
    /// Names each Swift job by the focus frame of its async stack: its site moves to the code
    /// of that frame (created when no item ran it directly).
    mutating func focusAsyncStacks(_ locations: [UInt64: CodeLocation], focus: CodeFocus) {
        var codeByAddress: [UInt64: Int] = [:]
        for c in codes.indices where codes[c].codeKind == .job { codeByAddress[codes[c].address] = codeByAddress[codes[c].address] ?? c }
        for s in sites.indices where !sites[s].asyncStack.isEmpty {
            let frames = sites[s].asyncStack.map { locations[$0] ?? CodeLocation(unresolved: $0) }
            sites[s].asyncFrames = frames
            guard let f = focus.focusIndex(frames), let old = sites[s].codeIndex else { continue }
            let address = sites[s].asyncStack[f]
            guard codes[old].address != address else { continue }
            let c: Int
            if let known = codeByAddress[address] {
                c = known
            } else {
                c = codes.count
                var code = TraceCode(codeKind: .job, address: address)
                code.what = frames[f]
                codes.append(code)
                codeByAddress[address] = c
            }
            codes[old].sites.removeAll { $0 == s }
            codes[c].sites.append(s)
            sites[s].codeIndex = c
        }
    }

    /// The async stack of a site as text, innermost first ("name at File.swift:12").
    public func asyncStackDescription(_ s: Int) -> [String] {
        sites[s].asyncFrames.map(\.described)
    }

    /// Names each wait by the first frame of its call stack that is the program's own code: a
    /// wait inside Foundation (Process.waitUntilExit at Process.swift:869) is the line that
    /// called it. The same rule as jobs' (`CodeFocus`); call stacks hold return addresses, each
    /// symbolized at the call instruction (address − 1).
    mutating func focusCallStacks(_ locations: [UInt64: CodeLocation], focus: CodeFocus) {
        for s in sites.indices where !sites[s].callStack.isEmpty {
            let frames = sites[s].callStack.map { locations[$0 &- 1] ?? CodeLocation(unresolved: $0) }
            sites[s].callFrames = frames
            if let f = focus.focusIndex(frames), f > 0 { sites[s].from = frames[f] }
        }
    }

    /// A wait's call stack as text, innermost first, when it has more than its caller.
    public func callStackDescription(_ s: Int) -> [String]? {
        sites[s].callFrames.count > 1 ? sites[s].callFrames.map(\.described) : nil
    }
}

extension CodeLocation {
    init(unresolved address: UInt64) {
        self.init(function: nil, shortName: nil, file: nil, line: nil, module: "?", offset: address, status: "notSymbolized")
    }
}
