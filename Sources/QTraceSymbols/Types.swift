// The values the symbolizer takes (a process's module map) and gives back (one symbol per address).
import Foundation

/// One mapped ELF module as the recorder saw it in the traced process.
public struct ModuleInfo: Sendable, Hashable {
    /// The path the module was loaded from.
    public var path: String
    /// The load bias (dl_iterate_phdr's dlpi_addr): runtime address = file vaddr + base.
    public var base: UInt64
    /// The runtime address range [start, end) of the module's executable segments.
    public var start: UInt64
    public var end: UInt64
    /// The GNU build-id (lowercase hex) of the loaded file, when it had one.
    public var buildID: String?

    public init(path: String, base: UInt64, start: UInt64, end: UInt64, buildID: String? = nil) {
        self.path = path
        self.base = base
        self.start = start
        self.end = end
        self.buildID = buildID
    }

    /// The file name shown for the module, e.g. "libFoundation.so".
    public var name: String { (path as NSString).lastPathComponent }

    func contains(_ address: UInt64) -> Bool { address >= start && address < end }
}

/// How far an address could be resolved.
public enum SymbolStatus: String, Sendable, Codable {
    /// Function name and source file:line.
    case ok
    /// A function name, but the module has no line table for it.
    case noDebugInfo
    /// No symbol covers the address (stripped module): module+offset only.
    case stripped
    /// The module's file is not on disk any more: module+offset only.
    case missingFile
    /// The file on disk is not the one that was loaded (another build-id): module+offset only,
    /// because symbolizing it would name the wrong functions.
    case buildIDMismatch
    /// The address lies in no recorded module.
    case unknownModule
    /// llvm-symbolizer is missing or failed on this module: module+offset only.
    case toolFailed
}

/// What one code address resolved to.
public struct SymbolInfo: Sendable, Hashable, Codable {
    /// The demangled full name, e.g. "closure #1 () -> () in App.Loader.loadAll() -> ()".
    public var function: String?
    /// A readable short form, e.g. "closure #1 in Loader.loadAll()" or "worker_fn".
    public var shortName: String?
    /// The linkage (mangled) name of the function, e.g. "$s3App6LoaderV7loadAllyyFZ".
    public var linkageName: String?
    /// The source file path; nil when unknown or compiler-generated.
    public var file: String?
    /// The source line; nil when unknown.
    public var line: Int?
    /// The module's file name, e.g. "swift-build" or "libFoundation.so".
    public var module: String
    /// address - base: the file address llvm-symbolizer resolves.
    public var offset: UInt64
    public var status: SymbolStatus

    public init(
        function: String? = nil, shortName: String? = nil, linkageName: String? = nil, file: String? = nil,
        line: Int? = nil, module: String, offset: UInt64, status: SymbolStatus
    ) {
        self.function = function
        self.shortName = shortName
        self.linkageName = linkageName
        self.file = file
        self.line = line
        self.module = module
        self.offset = offset
        self.status = status
    }

    /// The name to show: the short name, else "module+0xoffset".
    public var label: String { shortName ?? "\(module)+0x\(String(offset, radix: 16))" }
}
