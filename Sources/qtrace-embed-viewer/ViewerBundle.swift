// Checks the viewer's modules against each other and writes them as one script: a function per
// module, in a topological order of their imports (name order among the ready ones).

/// Every import names an exported name of an existing module, every export is imported, and
/// no module uses another's top-level name without importing it.
func checkModules(_ modules: [ViewerModule], directory: String) {
    let byName = Dictionary(uniqueKeysWithValues: modules.map { ($0.name, $0) })
    var owners: [String: String] = [:]
    for module in modules { for name in module.names.topLevel where owners[name] == nil { owners[name] = module.name } }
    var imported: Set<String> = []
    for module in modules {
        let path = "\(directory)/\(module.name)"
        var importedHere: Set<String> = []
        for entry in module.imports {
            guard let exporter = byName[entry.from] else {
                fail("\(path):\(entry.line): imports from ./\(entry.from), which is not in \(directory)")
            }
            for name in entry.names {
                if !exporter.exports.contains(name) {
                    fail("\(path):\(entry.line): imports \(name) from ./\(entry.from), which does not export it")
                }
                if module.names.uses[name] == nil { fail("\(path):\(entry.line): imports \(name) but never uses it") }
                if module.names.topLevel.contains(name) { fail("\(path):\(entry.line): imports \(name) and declares it too") }
                importedHere.insert(name)
                imported.insert("\(entry.from) \(name)")
            }
        }
        if module.names.declared.contains(moduleRegistry) { fail("\(path): must not declare \(moduleRegistry) (the bundle's)") }
        for (name, line) in module.names.uses.sorted(by: { $0.value < $1.value }) {
            guard let owner = owners[name], owner != module.name, !importedHere.contains(name),
                  !module.names.declared.contains(name) else { continue }
            fail("\(path):\(line): uses \(name), a top-level name of \(owner), without importing it")
        }
    }
    for module in modules {
        for name in module.exports where !imported.contains("\(module.name) \(name)") {
            fail("\(directory)/\(module.name): exports \(name), which no module imports")
        }
    }
}

/// The modules, each after those it imports; `fail`s on a cycle, naming it.
func dependencyOrder(_ modules: [ViewerModule], directory: String) -> [ViewerModule] {
    let byName = Dictionary(uniqueKeysWithValues: modules.map { ($0.name, $0) })
    var waitingFor = byName.mapValues { Set($0.imports.map(\.from)) }
    var order: [ViewerModule] = []
    while !waitingFor.isEmpty {
        guard let next = waitingFor.filter({ $0.value.isEmpty }).keys.min() else {
            fail("\(directory): import cycle: \(importCycle(in: waitingFor).joined(separator: " → "))")
        }
        order.append(byName[next]!)
        waitingFor[next] = nil
        for key in waitingFor.keys { waitingFor[key]!.remove(next) }
    }
    return order
}

/// A cycle among modules that all wait for another: follow the first unmet import until a
/// module repeats.
private func importCycle(in waitingFor: [String: Set<String>]) -> [String] {
    var path: [String] = [waitingFor.keys.min()!]
    while true {
        let next = waitingFor[path.last!]!.min()!
        if let start = path.firstIndex(of: next) { return Array(path[start...]) + [next] }
        path.append(next)
    }
}

/// The report's inline script: the modules in dependency order, each in its own scope.
func bundle(_ modules: [ViewerModule], directory: String) -> String {
    checkModules(modules, directory: directory)
    var parts = ["(function () {\n\"use strict\";\nconst \(moduleRegistry) = {};\n"]
    for module in dependencyOrder(modules, directory: directory) {
        let code = withoutCommentLines(module.body)
        let body = code.hasSuffix("\n") ? code : code + "\n"
        if module.exports.isEmpty {
            parts.append("// ---- viewer/\(module.name)\n(function () {\n\(body)})();\n")
        } else {
            parts.append("// ---- viewer/\(module.name)\n\(moduleRegistry)[\"\(module.name)\"] = (function () {\n\(body)"
                + "return { \(module.exports.joined(separator: ", ")) };\n})();\n")
        }
    }
    return parts.joined() + "})();\n"
}

/// `text` without its lines that hold only a comment: they are for the reader of viewer/, and
/// a report carries the script in every file (about a sixth of it).
func withoutCommentLines(_ text: String) -> String {
    let bytes = Array(text.utf8)
    var comments = JSTokenizer.commentRanges(text)[...]
    var kept: [UInt8] = []
    kept.reserveCapacity(bytes.count)
    var lineStart = 0
    while lineStart < bytes.count {
        let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        let code = bytes[lineStart..<lineEnd].indices.filter { bytes[$0] != UInt8(ascii: " ") && bytes[$0] != UInt8(ascii: "\t") }
        while let comment = comments.first, comment.upperBound <= lineStart { comments.removeFirst() }
        let onlyComment = code.first.map { first in
            comments.first.map { $0.contains(first) && $0.upperBound > code.last! } ?? false
        } ?? false
        if !onlyComment { kept += bytes[lineStart..<min(lineEnd + 1, bytes.count)] }
        lineStart = lineEnd + 1
    }
    return String(decoding: kept, as: UTF8.self)
}
