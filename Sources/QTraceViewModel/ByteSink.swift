// Where the report and the exports put their bytes: a file (QTraceFormat's OutputFile, a
// temporary renamed into place, or standard output for "-") or, for tests, a string.
import QTraceFormat

/// Where the writers put their bytes.
package protocol ByteSink: AnyObject {
    func write(bytes: UnsafeRawBufferPointer) throws
}

extension ByteSink {
    package func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(bytes: UnsafeRawBufferPointer($0)) }
    }

    package func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write(bytes: $0) }
    }
}

package final class StringSink: ByteSink {
    private var bytes: [UInt8] = []
    package init() {}
    package func write(bytes chunk: UnsafeRawBufferPointer) throws { bytes.append(contentsOf: chunk) }
    package var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// Reports and exports are written through QTraceFormat's OutputFile (a temporary renamed
/// into place, or standard output for "-").
extension OutputFile: ByteSink {
    package func write(bytes chunk: UnsafeRawBufferPointer) throws { try write(chunk) }
}
