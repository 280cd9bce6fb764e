// Writes ViewerAssets.swift, the report viewer (Sources/QTraceReport/viewer/*.html, *.css, *.js)
// as Swift string literals, for the EmbedViewer build-tool plugin: viewer/ stays the only copy,
// the generated file lives in the build directory.
// Usage: qtrace-embed-viewer VIEWER_DIR OUTPUT.swift
import Foundation

/// Stops the build with a message that names the offending file.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("qtrace-embed-viewer: \(message)\n".utf8))
    exit(1)
}

/// The file's text, refused when the report could not embed it verbatim: a carriage return
/// (Swift normalizes line endings in multi-line literals), or a closing tag that would end the
/// inline script or style early.
func viewerText(_ path: String) -> String {
    guard let data = FileManager.default.contents(atPath: path),
          let text = String(data: data, encoding: .utf8) else { fail("\(path): not readable as UTF-8") }
    let lowered = text.lowercased()
    if text.unicodeScalars.contains("\r") { fail("\(path): carriage returns are not allowed") }
    if path.hasSuffix(".js") && lowered.contains("</script") {
        fail("\(path): must not contain '</script' (it would end the inline script)")
    }
    if path.hasSuffix(".css") && lowered.contains("</style") { fail("\(path): must not contain '</style'") }
    return text
}

/// A raw multi-line Swift string literal whose value is exactly `text`.
func swiftLiteral(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"\"\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
}

/// The embedded files: the viewer's HTML, CSS and JavaScript, by name.
func viewerFiles(in directory: String) -> [String] {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
        fail("\(directory): not a readable directory")
    }
    return names.filter { [".html", ".css", ".js"].contains(where: $0.hasSuffix) }.sorted()
        .map { directory + "/" + $0 }
}

func generate(files: [String]) -> String {
    var lines = [
        "// Generated at build time by qtrace-embed-viewer (the EmbedViewer plugin) from viewer/.",
        "",
        "enum ViewerAssets {",
        "    static let files: [(name: String, contents: String)] = [",
    ]
    for path in files {
        let name = (path as NSString).lastPathComponent
        lines.append("        (\"\(name)\", \(swiftLiteral(viewerText(path)))),")
    }
    lines += ["    ]", "}", ""]
    return lines.joined(separator: "\n")
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: qtrace-embed-viewer VIEWER_DIR OUTPUT.swift") }
let output = arguments[2]
let text = generate(files: viewerFiles(in: arguments[1]))
// Rewritten only when it changes, so an unchanged viewer does not recompile QTraceReport.
if FileManager.default.contents(atPath: output) != Data(text.utf8) {
    do { try text.write(toFile: output, atomically: true, encoding: .utf8) } catch { fail("\(output): \(error)") }
}
