// Batch runs of llvm-symbolizer, swift-demangle and llvm-nm, and the parsing of their output.
import Foundation

/// One location as llvm-symbolizer reports it (the names are still linkage names).
struct RawFrame: Equatable {
    var linkageName: String?
    var file: String?
    var line: Int?
}

/// A tool run that did not produce usable output, with a reason fit for a problem line.
struct ToolFailure: Error {
    var reason: String
}

enum LLVMSymbolizer {
    /// Resolves all `offsets` of one object file in a single process. Keys are the offsets.
    /// Swift names stay mangled (llvm-symbolizer does not know Swift mangling); C++ names come back
    /// demangled by llvm-symbolizer's own `--demangle`.
    static func frames(tool: URL, object: String, offsets: [UInt64]) throws(ToolFailure) -> [UInt64: RawFrame] {
        let input = offsets.map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n"
        let arguments = ["--obj=\(object)", "--output-style=JSON", "--functions=linkage", "--demangle", "--inlines"]
        let output: ToolRunner.Output
        do {
            output = try ToolRunner.run(tool, arguments, input: Data(input.utf8))
        } catch {
            throw ToolFailure(reason: "llvm-symbolizer could not be run (\(error.localizedDescription))")
        }
        // An unreadable object is reported in the JSON (and, in some versions, by the exit status).
        let lines = try? decodeLines(output.stdout)
        if let message = lines?.lazy.compactMap({ $0.Error?.Message }).first {
            throw ToolFailure(reason: "llvm-symbolizer could not read it (\(message))")
        }
        guard output.exitStatus == 0, let lines else {
            throw ToolFailure(reason: "llvm-symbolizer failed (\(output.firstErrorLine))")
        }
        var frames: [UInt64: RawFrame] = [:]
        for line in lines {
            guard let offset = parseHex(line.Address) else { continue }
            frames[offset] = frame(from: line.Symbol ?? [])
        }
        return frames
    }

    private struct Line: Decodable {
        var Address: String
        var Symbol: [Frame]?
        var Error: ErrorMessage?
    }

    private struct ErrorMessage: Decodable {
        var Message: String
    }

    private struct Frame: Decodable {
        var FunctionName: String?
        var FileName: String?
        var Line: Int?
    }

    private static func decodeLines(_ stdout: Data) throws(ToolFailure) -> [Line] {
        // One JSON object per line: join them into one array to decode in one call.
        let text = String(decoding: stdout, as: UTF8.self)
        let objects = text.split(separator: "\n").filter { $0.first == "{" }
        do {
            return try JSONDecoder().decode([Line].self, from: Data(("[" + objects.joined(separator: ",") + "]").utf8))
        } catch {
            throw ToolFailure(reason: "llvm-symbolizer printed unreadable JSON")
        }
    }

    /// Frames come innermost (inlined) first. The outermost is the real function at this address;
    /// its line is where the inlined code was called. When it has no line (a compiler-generated
    /// thunk with an inlined body), the nearest inlined frame with a line supplies the location.
    private static func frame(from frames: [Frame]) -> RawFrame {
        guard let outermost = frames.last else { return RawFrame() }
        let located = frames.reversed().first { sourceFile($0.FileName) != nil && ($0.Line ?? 0) > 0 }
        let name = outermost.FunctionName.flatMap { $0.isEmpty || $0 == "??" ? nil : $0 }
        return RawFrame(linkageName: name, file: sourceFile(located?.FileName), line: located?.Line)
    }

    private static func sourceFile(_ name: String?) -> String? {
        guard let name, !name.isEmpty, name != "??", !name.hasSuffix("<compiler-generated>") else { return nil }
        return name
    }

    static func parseHex(_ text: String) -> UInt64? {
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
        return UInt64(digits, radix: 16)
    }
}

enum SwiftDemangler {
    /// Whether a linkage name is Swift-mangled (current, embedded, or Swift 4 mangling).
    static func isSwiftMangled(_ name: String) -> Bool {
        ["$s", "$S", "$e", "_$s", "_$S", "_$e", "_T0"].contains { name.hasPrefix($0) }
    }

    /// Demangles all names in one swift-demangle process (names on stdin, one per line, answers in
    /// the same order). Keys are the mangled names.
    static func demangle(tool: URL, _ names: [String]) throws(ToolFailure) -> [String: String] {
        guard !names.isEmpty else { return [:] }
        let output: ToolRunner.Output
        do {
            output = try ToolRunner.run(tool, [], input: Data((names.joined(separator: "\n") + "\n").utf8))
        } catch {
            throw ToolFailure(reason: "swift-demangle could not be run (\(error.localizedDescription))")
        }
        let lines = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard output.exitStatus == 0, lines.count >= names.count else {
            throw ToolFailure(reason: "swift-demangle failed (\(output.firstErrorLine))")
        }
        var demangled: [String: String] = [:]
        for (name, line) in zip(names, lines) { demangled[name] = String(line) }
        return demangled
    }
}

/// A module's defined symbols as llvm-nm prints them ("0000000000003090 t $s1t4loadyySiFyyYbcfU_"),
/// kept as bytes: a large binary has hundreds of thousands of symbols and only a few are looked up,
/// so a lookup scans the lines and makes a String only of names with a wanted length.
struct SymbolTable: Sendable {
    private let listing: [UInt8]

    static func read(tool: URL, object: String) throws(ToolFailure) -> SymbolTable {
        let output: ToolRunner.Output
        do {
            output = try ToolRunner.run(tool, ["--defined-only", "--no-demangle", object], input: Data())
        } catch {
            throw ToolFailure(reason: "llvm-nm could not be run (\(error.localizedDescription))")
        }
        guard output.exitStatus == 0 else { throw ToolFailure(reason: "llvm-nm failed (\(output.firstErrorLine))") }
        return SymbolTable(listing: [UInt8](output.stdout))
    }

    /// The file addresses of the symbols named in `names` (the first definition of each).
    func addresses(of names: Set<String>) -> [String: UInt64] {
        let lengths = Set(names.map(\.utf8.count))
        var found: [String: UInt64] = [:]
        listing.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var line = base
            let end = base + raw.count
            // memchr, not Collection methods: this loop runs over every line of a large binary's
            // table, and must stay fast in debug builds too.
            while line < end, found.count < names.count {
                let lineEnd = memchr(line, Int32(UInt8(ascii: "\n")), end - line).map { UnsafeRawPointer($0) } ?? end
                if let entry = Self.entry(from: line, to: lineEnd, lengths: lengths), names.contains(entry.name),
                   found[entry.name] == nil
                {
                    found[entry.name] = entry.address
                }
                line = lineEnd + 1
            }
        }
        return found
    }

    /// "address type name" with a name of one of `lengths`; nil for other lines.
    private static func entry(from start: UnsafeRawPointer, to end: UnsafeRawPointer, lengths: Set<Int>)
        -> (address: UInt64, name: String)?
    {
        guard let firstSpace = memchr(start, Int32(UInt8(ascii: " ")), end - start).map({ UnsafeRawPointer($0) }),
              let secondSpace = memchr(firstSpace + 1, Int32(UInt8(ascii: " ")), end - firstSpace - 1)
                  .map({ UnsafeRawPointer($0) }),
              lengths.contains(end - secondSpace - 1)
        else { return nil }
        func text(_ from: UnsafeRawPointer, _ to: UnsafeRawPointer) -> String {
            String(decoding: UnsafeRawBufferPointer(start: from, count: to - from), as: UTF8.self)
        }
        guard let address = UInt64(text(start, firstSpace), radix: 16) else { return nil }
        return (address, text(secondSpace + 1, end))
    }
}
