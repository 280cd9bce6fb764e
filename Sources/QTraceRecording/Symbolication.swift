// Symbols for the code sites of a model: QTraceSymbols (llvm-symbolizer, swift-demangle, a
// cache by build-id) turns the recorded addresses into names and file:line before the
// statistics and findings are computed, so that every output names the same code.
import QTraceAnalysis
import QTraceSymbols
#if canImport(Glibc)
import Glibc
#endif

/// Fills in the model's code locations. Problems (a tool missing, a binary rebuilt since
/// recording) are warnings: the output then shows module+offset for what is affected.
/// `QTRACE_SYMBOLIZE=0` skips symbolization (addresses and module+offset only).
public func symbolize(_ model: inout TraceModel, command: String) {
    guard !model.codes.isEmpty || !model.sites.isEmpty else { return }
    if let flag = getenv("QTRACE_SYMBOLIZE"), String(cString: flag) == "0" { return }
    let modules = model.modules.map {
        ModuleInfo(path: $0.path, base: $0.base, start: $0.start, end: $0.end, buildID: $0.buildID)
    }
    let symbolizer = Symbolizer()
    let answers: [UInt64: SymbolInfo]
    do {
        answers = try symbolizer.symbolize(model.codeAddresses, modules: modules)
    } catch {
        writeStderr("qtrace \(command): warning: symbols unavailable (\(terminalSafe(String(describing: error)))): code is shown as module+offset\n")
        return
    }
    // A library without line tables (the toolchain's own) still has its function names: only
    // what loses names is worth a warning.
    let problems = symbolizer.problems.filter { !$0.contains("no debug info") }
    for problem in problems.prefix(5) { writeStderr("qtrace \(command): warning: \(terminalSafe(problem))\n") }
    if problems.count > 5 { writeStderr("qtrace \(command): warning: \(problems.count - 5) more symbol problems\n") }
    let focus = getenv("QTRACE_FOCUS").map { CodeFocus(list: String(cString: $0)) } ?? CodeFocus()
    model.applySymbols(answers.mapValues(CodeLocation.init), focus: focus)
}

extension CodeLocation {
    public init(_ symbol: SymbolInfo) {
        self.init(function: symbol.function, shortName: symbol.shortName, file: symbol.file,
                  line: symbol.line.flatMap { $0 > 0 ? $0 : nil }, module: symbol.module, offset: symbol.offset,
                  status: symbol.status.rawValue, swiftModule: symbol.linkageName.flatMap(swiftModuleName),
                  isThunk: Symbolizer.isThunk(symbol))
    }
}

/// The module of a Swift mangled name: "$s6Server7CounterC..." → "Server" ("$ss..." is the
/// standard library, "$sScT..." a standard substitution: both Swift's).
public func swiftModuleName(_ linkageName: String) -> String? {
    var text = Substring(linkageName)
    guard let prefix = ["_$s", "$s", "$e", "_$e"].first(where: { text.hasPrefix($0) }) else { return nil }
    text = text.dropFirst(prefix.count)
    if text.first == "s" || text.first == "S" { return "Swift" }
    let digits = text.prefix { $0.isNumber }
    guard let length = Int(digits), length > 0 else { return nil }
    let name = text.dropFirst(digits.count).prefix(length)
    return name.count == length ? String(name) : nil
}

/// `--focus MODULES`: read by `symbolize` (through the environment, so that every analysis of
/// the command, including a report's several traces, names jobs the same way).
public func applyFocus(_ modules: String?) {
    guard let modules else { return }
    setenv("QTRACE_FOCUS", modules, 1)
}
