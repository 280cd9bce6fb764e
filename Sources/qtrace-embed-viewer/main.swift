// Writes ViewerAssets.swift, the report viewer (Sources/QTraceReport/viewer/*.html, *.css, *.js)
// as Swift string literals, its JavaScript modules bundled into one script (ViewerBundle.swift),
// for the EmbedViewer build-tool plugin: viewer/ stays the only copy, the generated file lives
// in the build directory.
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

/// The report's inline script: the viewer/*.js modules bundled (ViewerBundle.swift).
func inlineScript(_ files: [(name: String, text: String)], directory: String) -> String {
    let modules = files.filter { $0.name.hasSuffix(".js") }
        .map { parseModule(name: $0.name, text: $0.text, path: "\(directory)/\($0.name)") }
    return bundle(modules, directory: directory)
}

/// `sha256-BASE64` of `text` for the Content-Security-Policy, by coreutils' sha256sum: the hash
/// is computed here, at build time, so the product carries no SHA-256 of its own.
func cspHash(_ text: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sha256sum"]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    do { try process.run() } catch { fail("cannot run sha256sum: \(error)") }
    input.fileHandleForWriting.write(Data(text.utf8))
    try? input.fileHandleForWriting.close()
    let hex = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).prefix(64)
    process.waitUntilExit()
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex),
          let byte = UInt8(hex[index..<next], radix: 16) {
        bytes.append(byte)
        index = next
    }
    guard process.terminationStatus == 0, bytes.count == 32 else { fail("sha256sum gave no digest") }
    return "sha256-" + Data(bytes).base64EncodedString()
}

func generate(directory: String) -> String {
    let files = viewerFiles(in: directory).map { (name: ($0 as NSString).lastPathComponent, text: viewerText($0)) }
    let script = inlineScript(files, directory: directory)
    let style = files.filter { $0.name.hasSuffix(".css") }.map(\.text).joined(separator: "\n")
    let template = files.first { $0.name == "index.html" }?.text ?? "<!--qtrace:head--><!--qtrace:body-->"
    var lines = [
        "// Generated at build time by qtrace-embed-viewer (the EmbedViewer plugin) from viewer/.",
        "",
        "enum ViewerAssets {",
        "    /// The viewer's files as they are on disk (tests compare them).",
        "    static let files: [(name: String, contents: String)] = [",
    ]
    for file in files { lines.append("        (\"\(file.name)\", \(swiftLiteral(file.text))),") }
    lines += [
        "    ]",
        "    /// The report's inline script, style and page template, and their CSP hashes.",
        "    static let script = \(swiftLiteral(script))",
        "    static let style = \(swiftLiteral(style))",
        "    static let template = \(swiftLiteral(template))",
        "    static let scriptHash = \"\(cspHash(script))\"",
        "    static let styleHash = \"\(cspHash(style))\"",
        "}", "",
    ]
    return lines.joined(separator: "\n")
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: qtrace-embed-viewer VIEWER_DIR OUTPUT.swift") }
let output = arguments[2]
let text = generate(directory: arguments[1])
// Rewritten only when it changes, so an unchanged viewer does not recompile QTraceReport.
if FileManager.default.contents(atPath: output) != Data(text.utf8) {
    do { try text.write(toFile: output, atomically: true, encoding: .utf8) } catch { fail("\(output): \(error)") }
}
