// The viewer's JavaScript files are ES modules (`import { a, b } from "./10-util.js";`,
// `export function|class|const NAME`). A report is one offline file with one hashed inline
// script, so they are bundled here: each module in its own function scope, in dependency order,
// its imports bound from the exports of the modules before it. Only that restricted syntax is
// understood; anything else, an import the exporter lacks, a missing file, a cycle, or a use
// of another module's top-level name without importing it stops the build.
import Foundation

struct ViewerModule {
    struct Import {
        let from: String
        let names: [String]
        let line: Int
    }

    let name: String
    let text: String
    let imports: [Import]
    let exports: [String]
    /// The text with its import statements turned into bindings and `export ` removed; lines kept.
    let body: String
    let names: JSNames
}

/// The object the bundle keeps each module's exports in, by file name.
let moduleRegistry = "viewerModules"

private let importPattern = try! NSRegularExpression(
    pattern: #"^import[ \t]*\{([^}]*)\}[ \t]*from[ \t]*"\./([A-Za-z0-9._-]+\.js)";[ \t]*$"#, options: [.anchorsMatchLines])
private let exportPattern = try! NSRegularExpression(
    pattern: #"^export (?:async function|function|class|const) ([A-Za-z_$][A-Za-z0-9_$]*)"#, options: [.anchorsMatchLines])
private let moduleSyntaxLine = try! NSRegularExpression(pattern: #"^(import|export)\b.*$"#, options: [.anchorsMatchLines])

/// Line number (1-based) of a UTF-16 offset.
private func lineNumber(_ text: NSString, _ location: Int) -> Int {
    text.substring(to: location).reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
}

/// Parses one module's imports and exports; `fail`s on module syntax the bundler does not know.
func parseModule(name: String, text: String, path: String) -> ViewerModule {
    let ns = text as NSString
    let whole = NSRange(location: 0, length: ns.length)
    let importMatches = importPattern.matches(in: text, range: whole)
    let exportMatches = exportPattern.matches(in: text, range: whole)
    let understood = Set((importMatches + exportMatches).map(\.range.location))
    for match in moduleSyntaxLine.matches(in: text, range: whole) where !understood.contains(match.range.location) {
        let line = ns.substring(with: match.range)
        let hint = line.hasPrefix("export let") || line.hasPrefix("export var")
            ? "an exported let would need a live binding: export a const, an object or a function"
            : "the bundler understands `import { a, b } from \"./file.js\";` and `export function|class|const NAME`"
        fail("\(path):\(lineNumber(ns, match.range.location)): unsupported module syntax: \(line) (\(hint))")
    }
    let imports = importMatches.map { match in
        ViewerModule.Import(
            from: ns.substring(with: match.range(at: 2)),
            names: ns.substring(with: match.range(at: 1)).split(whereSeparator: { ", \n\t".contains($0) }).map(String.init),
            line: lineNumber(ns, match.range.location))
    }
    let body = NSMutableString(string: text)
    let analysed = NSMutableString(string: text)
    // From the end, so that earlier ranges stay valid.
    for match in (importMatches + exportMatches).sorted(by: { $0.range.location > $1.range.location }) {
        if match.numberOfRanges == 3 {
            let names = ns.substring(with: match.range(at: 1)), from = ns.substring(with: match.range(at: 2))
            body.replaceCharacters(in: match.range, with: "const {\(names)} = \(moduleRegistry)[\"\(from)\"];")
            let newlines = ns.substring(with: match.range).filter { $0 == "\n" }
            analysed.replaceCharacters(in: match.range, with: String(newlines))
        } else {
            body.replaceCharacters(in: NSRange(location: match.range.location, length: 7), with: "")
        }
    }
    return ViewerModule(
        name: name, text: text, imports: imports,
        exports: exportMatches.map { ns.substring(with: $0.range(at: 1)) },
        body: body as String, names: JSNames(JSTokenizer.tokenize(analysed as String)))
}
