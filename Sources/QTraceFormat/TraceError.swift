// Why a trace could not be opened. Each description is one line meant for a terminal:
// what is wrong, with which file, and what to do where there is something to do.

public enum TraceError: Error, Sendable, Equatable, CustomStringConvertible {
    case fileNotFound(path: String)
    case cannotOpen(path: String, reason: String)
    case notARegularFile(path: String)
    case emptyFile(path: String)
    case badMagic(path: String)
    case truncatedHeader(path: String, bytes: Int)
    case unsupportedVersion(path: String, major: UInt16, minor: UInt16)
    case corruptHeader(path: String, reason: String)
    case noChunks(path: String)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            "trace file not found: \(path)"
        case .cannotOpen(let path, let reason):
            "cannot read trace \(path): \(reason)"
        case .notARegularFile(let path):
            "not a regular file (a trace is a file written by qtrace record): \(path)"
        case .emptyFile(let path):
            "empty file (0 bytes), not a qtrace trace: \(path)"
        case .badMagic(let path):
            "not a qtrace trace (bad magic): \(path)"
        case .truncatedHeader(let path, let bytes):
            "truncated qtrace trace (header is \(bytes) of \(TraceLayout.headerSize) bytes): \(path)"
        case .unsupportedVersion(_, let major, let minor) where major > TraceLayout.versionMajor:
            "trace version \(major).\(minor) is newer than this qtrace (reads \(TraceLayout.versionMajor).x): upgrade qtrace"
        case .unsupportedVersion(let path, let major, let minor):
            "trace version \(major).\(minor) is not supported (this qtrace reads \(TraceLayout.versionMajor).x): \(path)"
        case .corruptHeader(let path, let reason):
            "corrupt qtrace trace header (\(reason)): \(path)"
        case .noChunks(let path):
            "trace holds no events, only a header (the process may have died before recording anything): \(path)"
        }
    }
}

/// Damage found while reading a trace that could be stepped over (truncation, corrupt
/// records): the reader keeps everything before it and reports it here.
public struct TraceWarning: Sendable, Equatable, CustomStringConvertible {
    /// Index of the chunk in the file, nil for file-level problems.
    public let chunk: Int?
    public let message: String

    public init(chunk: Int?, message: String) {
        self.chunk = chunk
        self.message = message
    }

    public var description: String {
        if let chunk { return "chunk \(chunk): \(message)" }
        return message
    }
}
