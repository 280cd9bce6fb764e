// The items' order by start time, for the layout: a radix sort of (start, index) packed in one
// word, when they fit.

enum StartSort {
    /// Sorts `start` and returns the item indexes in that order (ties in index order), when an
    /// item's start less the earliest and its index fit in 64 bits together (a 20M-item trace
    /// of 5.8 s: 33 + 25 bits); nil, `start` untouched, when they do not. Each item is then one
    /// word, `(start - earliest) << indexBits | index`, whose order is the order wanted, sorted
    /// by their start bits alone: a comparison sort through the indexes read each start at
    /// random, a cache miss per comparison (1.1 s of sf10's report). The words replace `start`
    /// while they are sorted (8 bytes an item, as `start` itself), so the layout's peak is not
    /// raised beyond the sort's second buffer.
    static func packedSort(_ start: inout [Int64]) -> [Int32]? {
        let n = start.count
        guard n > 1, n <= Int(Int32.max), let earliest = start.min(), let latest = start.max() else { return nil }
        let (span, overflow) = latest.subtractingReportingOverflow(earliest)
        guard !overflow else { return nil }
        let indexBits = Int.bitWidth - (n - 1).leadingZeroBitCount
        let startBits = Int.bitWidth - span.leadingZeroBitCount
        guard indexBits + startBits <= 64 else { return nil }
        var words = start.withUnsafeBufferPointer { s in
            [UInt64](unsafeUninitializedCapacity: n) { words, count in
                for i in 0..<n { words[i] = UInt64(s[i] - earliest) << UInt64(indexBits) | UInt64(i) }
                count = n
            }
        }
        start = []
        radixSort(&words, bits: indexBits..<(indexBits + startBits))
        let indexMask = UInt64(1) << UInt64(indexBits) - 1
        let order = words.map { Int32(truncatingIfNeeded: $0 & indexMask) }
        start = words.map { Int64($0 >> UInt64(indexBits)) + earliest }
        return order
    }

    /// Sorts `words` by their bits `bits` (least significant digit first, stable, so that the
    /// bits below stay in order within equal digits), in passes of at most 11 bits; a pass
    /// whose digit is the same in every word is skipped.
    static func radixSort(_ words: inout [UInt64], bits: Range<Int>) {
        let n = words.count
        let passes = (bits.count + 10) / 11
        guard passes > 0, n > 1 else { return }
        let width = (bits.count + passes - 1) / passes
        var other = [UInt64](unsafeUninitializedCapacity: n) { _, count in count = n }
        var counts = [Int](repeating: 0, count: 1 << width)
        let digitMask = UInt64(1) << UInt64(width) - 1
        for pass in 0..<passes {
            let shift = UInt64(bits.lowerBound + pass * width)
            let moved = words.withUnsafeBufferPointer { from in
                other.withUnsafeMutableBufferPointer { to in
                    counts.withUnsafeMutableBufferPointer { counts in
                        scatter(from, into: to, counts: counts, shift: shift, mask: digitMask)
                    }
                }
            }
            if moved { swap(&words, &other) }
        }
    }

    /// One pass: `from`'s words into `to` by their digit at `shift`, stably. False (and `to`
    /// left as it was) when every word has the same digit.
    private static func scatter(_ from: UnsafeBufferPointer<UInt64>, into to: UnsafeMutableBufferPointer<UInt64>,
                                counts: UnsafeMutableBufferPointer<Int>, shift: UInt64, mask: UInt64) -> Bool {
        for d in counts.indices { counts[d] = 0 }
        for word in from { counts[Int(truncatingIfNeeded: word >> shift & mask)] &+= 1 }
        if counts.contains(from.count) { return false }
        var next = 0
        for d in counts.indices { (counts[d], next) = (next, next + counts[d]) }
        for word in from {
            let d = Int(truncatingIfNeeded: word >> shift & mask)
            to[counts[d]] = word
            counts[d] &+= 1
        }
        return true
    }
}
