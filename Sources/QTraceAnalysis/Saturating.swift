// The overflow policy (docs/trace-format.md, "Validation"): the reader keeps every time within
// 2^50 ns, but sums over many items, counters taken from payloads and values the user chose
// (a source's data) can still exceed 64 bits. Such arithmetic saturates: a total sticks at
// UInt64.max instead of trapping or wrapping to a small, plausible-looking number.

extension UInt64 {
    /// `self + other`, or `.max` when that does not fit.
    @inlinable @inline(__always)
    public func saturatingAdd(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// Adds `other` in place, saturating.
    @inlinable @inline(__always)
    public mutating func saturatingIncrement(by other: UInt64) {
        self = saturatingAdd(other)
    }
}
