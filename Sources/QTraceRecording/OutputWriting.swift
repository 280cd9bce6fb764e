// Where every command's output goes: files through QTraceFormat's OutputFile (a temporary
// beside the destination, renamed into place: never through a symlink, never half written),
// "-" for standard output, and write errors on either (ENOSPC, /dev/full, a closed pipe)
// reported as one line with a non-zero exit. The rules: docs/outputs.md.
import QTraceFormat
#if canImport(Glibc)
import Glibc
#endif

/// Writes `path` ("-": standard output) through `body`, the file appearing only once
/// complete. Ctrl-C meanwhile removes the temporary (`Interruption`). Errors are thrown as is.
public func writeFile(_ path: String, _ body: (OutputFile) throws -> Void) throws {
    defer { Interruption.writing(nil) }
    let file = try OutputFile(path: path) { Interruption.writing($0) }
    do {
        try body(file)
        try file.commit()
    } catch {
        file.discard()
        throw error
    }
}

/// `writeFile` for a command: a failure is `qtrace COMMAND: error: cannot write ...` and
/// exit status 2.
public func writeOutputFile(_ path: String, command: String, _ body: (OutputFile) throws -> Void) throws {
    do {
        try writeFile(path, body)
    } catch let error as OutputFileError {
        throw fail(command, error.description)
    } catch {
        let target = OutputFile.isStandardOutput(path) ? "standard output" : "'\(path)'"
        throw fail(command, "cannot write \(target): \(error)")
    }
}

/// Writes `text` to `path` (nil or "-": standard output).
public func writeOutput(_ text: String, to path: String?, command: String) throws {
    try writeOutputFile(path ?? "-", command: command) { try $0.write(text) }
}

/// The path a command announces on stderr after writing it, or nil for standard output
/// (which must carry nothing but the output itself).
public func announcedPath(_ path: String) -> String? {
    OutputFile.isStandardOutput(path) ? nil : path
}
