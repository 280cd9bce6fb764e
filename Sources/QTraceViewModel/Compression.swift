// zlib (RFC 1950) compression of the report payload: browsers inflate it with
// DecompressionStream("deflate"), which expects exactly this zlib framing.
import CZlib

package enum ReportCompressionError: Error, CustomStringConvertible {
    case zlib(Int32)

    package var description: String {
        switch self {
        case .zlib(let code): "zlib failed with code \(code)"
        }
    }
}

package enum Zlib {
    /// Compresses `bytes` into one zlib stream.
    package static func compress(_ bytes: [UInt8], level: Int32 = 6) throws -> [UInt8] {
        var bound = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(bound))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &bound, input.baseAddress, uLong(input.count), level)
            }
        }
        guard status == Z_OK else { throw ReportCompressionError.zlib(status) }
        output.removeSubrange(Int(bound)...)
        return output
    }

    /// Inflates one zlib stream whose inflated size is known (used by the tests).
    package static func decompress(_ bytes: [UInt8], expectedSize: Int) throws -> [UInt8] {
        var size = uLong(expectedSize)
        var output = [UInt8](repeating: 0, count: max(expectedSize, 1))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &size, input.baseAddress, uLong(input.count))
            }
        }
        guard status == Z_OK else { throw ReportCompressionError.zlib(status) }
        output.removeSubrange(Int(size)...)
        return output
    }
}
