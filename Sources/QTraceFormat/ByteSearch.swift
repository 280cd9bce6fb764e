// Finding a byte string in text qtrace parses or writes (perf script lines, JSON): the
// collections are bytes, not Strings, for speed.

/// The first occurrence of `needle` in `text` at or after index `from`.
@inlinable
public func firstIndex(of needle: [UInt8], in text: ArraySlice<UInt8>, from: Int) -> Int? {
    guard !needle.isEmpty, text.endIndex - from >= needle.count else { return nil }
    var at = Swift.max(from, text.startIndex)
    while at + needle.count <= text.endIndex {
        if text[at] == needle[0], text[at..<(at + needle.count)].elementsEqual(needle) { return at }
        at += 1
    }
    return nil
}

/// The last occurrence of `needle` in `text` that ends at or before index `end`.
@inlinable
public func lastIndex(of needle: [UInt8], in text: ArraySlice<UInt8>, endingBy end: Int) -> Int? {
    guard !needle.isEmpty else { return nil }
    var at = Swift.min(end, text.endIndex) - needle.count
    while at >= text.startIndex {
        if text[at] == needle[0], text[at..<(at + needle.count)].elementsEqual(needle) { return at }
        at -= 1
    }
    return nil
}
