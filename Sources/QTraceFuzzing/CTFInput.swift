// One fuzzer input for the CTF reader: a trace directory's files packed into one byte string,
// so that libFuzzer (which mutates one buffer) can rewrite each file on its own.
//   u32 count, then per file: u32 length, bytes. File 0 is `metadata`, the others streams.
import Foundation

public struct CTFInput: Equatable {
    public var metadata: [UInt8]
    public var streams: [[UInt8]]

    /// At most this many files, so that a mutated count cannot make the writer loop long.
    static let maxFiles = 8

    public init(metadata: [UInt8], streams: [[UInt8]]) {
        self.metadata = metadata
        self.streams = streams
    }

    /// Unpacks `data`; nil when it is not a packed trace (the fuzzer made garbage of the framing).
    public init?(_ data: [UInt8]) {
        var offset = 0
        func u32() -> Int? {
            guard offset + 4 <= data.count else { return nil }
            defer { offset += 4 }
            return data[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        guard let count = u32(), count >= 1, count <= Self.maxFiles else { return nil }
        var files: [[UInt8]] = []
        for _ in 0..<count {
            guard let length = u32(), length <= data.count - offset else { return nil }
            files.append(Array(data[offset..<offset + length]))
            offset += length
        }
        metadata = files[0]
        streams = Array(files.dropFirst())
    }

    /// Reads a trace directory (`metadata` and the stream files, in name order).
    public init(directory: String) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        metadata = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/metadata")))
        streams = try names.filter { $0 != "metadata" && !$0.hasPrefix(".") && $0 != "index" }.prefix(Self.maxFiles - 1)
            .map { Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0))) }
    }

    public var packed: [UInt8] {
        var out: [UInt8] = []
        func u32(_ value: Int) { out += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        u32(1 + streams.count)
        for file in [metadata] + streams { u32(file.count); out += file }
        return out
    }

    /// Writes the files into `directory` (emptied first).
    func write(to directory: String) throws {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(metadata).write(to: URL(fileURLWithPath: directory + "/metadata"))
        for (index, stream) in streams.enumerated() {
            try Data(stream).write(to: URL(fileURLWithPath: directory + "/stream_\(index)"))
        }
    }
}
