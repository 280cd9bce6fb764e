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
    /// Compresses `bytes` into one zlib stream (the bytes of zlib's `compress2` at `level`).
    package static func compress(_ bytes: [UInt8], level: Int32 = 6) throws -> [UInt8] {
        let deflater = try Deflater(level: level)
        try deflater.feed(bytes)
        return try deflater.finish()
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

/// One zlib stream compressed piece by piece, so that what it compresses (a report's payload:
/// hundreds of MB on big traces) never has to exist whole. Its bytes are those of `compress2`
/// at the same level however the input is split: deflate without flushes decides nothing
/// until it has enough input to look ahead, or the end (tested in CompressionTests). The
/// output is kept as the pieces deflate filled (1 MiB each), never copied into a growing
/// array: that array's doubling held the compressed payload up to twice and moved it each time.
package final class Deflater {
    /// How many bytes of output each piece holds.
    package static let outputPieceBytes = 1 << 20
    /// zlib keeps a pointer to its stream: the stream must not move, hence allocated here.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    /// The full pieces of output, then the one being filled (`filled` bytes of it).
    private var pieces: [[UInt8]] = []
    private var current: [UInt8]
    private var filled = 0
    /// Bytes fed so far.
    private(set) package var inputCount = 0
    /// Bytes of output so far (deflate keeps some of what it was fed until it ends a block).
    package var outputCount: Int { pieces.count * Deflater.outputPieceBytes + filled }
    private let level: Int32

    package init(level: Int32 = 6) throws {
        self.level = level
        stream.initialize(to: z_stream())
        let status = deflateInit_(stream, level, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            throw ReportCompressionError.zlib(status)
        }
        current = Deflater.newPiece()
    }

    /// A piece for deflate to fill (not zeroed: deflate writes before anything reads).
    private static func newPiece() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: outputPieceBytes) { _, count in count = outputPieceBytes }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    package func feed(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBufferPointer { try feed($0) }
    }

    package func feed(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        try run(bytes, flush: Z_NO_FLUSH)
        inputCount += bytes.count
    }

    /// What follows is compressed with Huffman coding alone (`Z_HUFFMAN_ONLY`: no search for
    /// repeated strings), or again at the level's usual strategy. zlib ends the block of what
    /// came before (`Z_BLOCK`), so the stream's bytes change where this is called, not what
    /// they inflate to.
    package func huffmanOnly(_ on: Bool) throws {
        try run(UnsafeBufferPointer(start: nil, count: 0), flush: Z_BLOCK)
        var status: Int32
        repeat {
            status = withRoomForOutput { deflateParams(stream, level, on ? Z_HUFFMAN_ONLY : Z_DEFAULT_STRATEGY) }
        } while status == Z_BUF_ERROR && stream.pointee.avail_out == 0
        guard status == Z_OK else { throw ReportCompressionError.zlib(status) }
    }

    /// Runs `call` (deflate, deflateParams) with the rest of the current piece (or a new one)
    /// as its output, and counts what it wrote.
    private func withRoomForOutput(_ call: () -> Int32) -> Int32 {
        if filled == current.count {
            pieces.append(current)
            (current, filled) = (Deflater.newPiece(), 0)
        }
        let status = current.withUnsafeMutableBufferPointer { out in
            stream.pointee.next_out = out.baseAddress! + filled
            stream.pointee.avail_out = uInt(out.count - filled)
            return call()
        }
        filled = current.count - Int(stream.pointee.avail_out)
        return status
    }

    /// Ends the stream and returns all of it.
    package func finish() throws -> [UInt8] {
        Array(try finishPieces().joined())
    }

    /// Ends the stream and returns it as the pieces it was made in (in order; concatenated
    /// they are the stream).
    package func finishPieces() throws -> [[UInt8]] {
        try run(UnsafeBufferPointer(start: nil, count: 0), flush: Z_FINISH)
        current.removeSubrange(filled...)
        if !current.isEmpty { pieces.append(current) }
        (current, filled) = ([], 0)
        defer { pieces = [] }
        return pieces
    }

    /// Deflates `input`, then flushes as `finalFlush` says (Z_NO_FLUSH, Z_BLOCK, Z_FINISH).
    private func run(_ input: UnsafeBufferPointer<UInt8>, flush finalFlush: Int32) throws {
        // zlib's next_in is not const; deflate only reads it.
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        var remaining = input.count
        repeat {
            // avail_in is 32 bits: at most 1 GiB at a time.
            let feed = min(remaining, 1 << 30)
            stream.pointee.avail_in = uInt(feed)
            remaining -= feed
            let flush = remaining == 0 ? finalFlush : Z_NO_FLUSH
            var status = Z_OK
            repeat {
                status = withRoomForOutput { deflate(stream, flush) }
                // Z_BUF_ERROR: no progress possible (nothing to do), not an error.
                if status == Z_BUF_ERROR { status = Z_OK }
            } while stream.pointee.avail_out == 0 && status == Z_OK
            guard status == (flush == Z_FINISH ? Z_STREAM_END : Z_OK) else { throw ReportCompressionError.zlib(status) }
        } while remaining > 0
    }
}
