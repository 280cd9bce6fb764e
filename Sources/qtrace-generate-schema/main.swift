// Generates Swift from the record list, Sources/CQTraceShim/qtrace_records.h, for the
// GenerateRecordSchema build-tool plugin: QTraceFormat's declarations (--declarations) or the
// tests' C-against-Swift constant table (--constants). Nothing generated is committed.
// Usage: qtrace-generate-schema --declarations | --constants LIST.h OUTPUT.swift
import Foundation

/// Stops the build; `path:line: error:` lets the build log point at the line.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 4, ["--declarations", "--constants"].contains(arguments[1]) else {
    fail("usage: qtrace-generate-schema --declarations | --constants LIST.h OUTPUT.swift")
}
let (mode, listPath, output) = (arguments[1], arguments[2], arguments[3])
guard let data = FileManager.default.contents(atPath: listPath), let text = String(data: data, encoding: .utf8) else {
    fail("\(listPath): error: not readable as UTF-8")
}
let list: RecordList
do {
    list = try RecordListParser.parse(text)
} catch let error as ListError {
    fail("\(listPath):\(error.line): error: \(error.message)")
} catch {
    fail("\(listPath): error: \(error)")
}
let source = "Sources/CQTraceShim/" + (listPath as NSString).lastPathComponent
let swift = mode == "--declarations" ? SwiftDeclarations.generate(list, source: source) : ConstantChecks.generate(list, source: source)
// Rewritten only when it changes, so an unchanged list recompiles nothing.
if FileManager.default.contents(atPath: output) != Data(swift.utf8) {
    do { try swift.write(toFile: output, atomically: true, encoding: .utf8) } catch { fail("\(output): error: \(error)") }
}
