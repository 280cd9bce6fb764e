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
    /// Compresses `bytes` into one zlib stream: the bytes of `compress2` at `level`, written
    /// out in pieces, so that the output grows with what deflate produces instead of starting
    /// as a zero-filled buffer of the input's size (a report's payload is hundreds of MB).
    package static func compress(_ bytes: [UInt8], level: Int32 = 6) throws -> [UInt8] {
        var stream = z_stream()
        var status = deflateInit_(&stream, level, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw ReportCompressionError.zlib(status) }
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 1 << 16)
        bytes.withUnsafeBufferPointer { input in
            // zlib's next_in is not const; deflate only reads it.
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            var remaining = input.count
            var flush = Z_NO_FLUSH
            repeat {
                // avail_in is 32 bits: at most 1 GiB at a time.
                let feed = min(remaining, 1 << 30)
                stream.avail_in = uInt(feed)
                remaining -= feed
                flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH
                repeat {
                    status = piece.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        // Z_BUF_ERROR: no progress possible (output was exactly full), not fatal.
                        let status = deflate(&stream, flush)
                        return status == Z_BUF_ERROR ? Z_OK : status
                    }
                    output.append(contentsOf: piece[..<(piece.count - Int(stream.avail_out))])
                } while stream.avail_out == 0 && status == Z_OK
            } while flush != Z_FINISH && status == Z_OK
        }
        guard status == Z_STREAM_END else { throw ReportCompressionError.zlib(status) }
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
