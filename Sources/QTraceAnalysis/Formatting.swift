// Human-readable numbers, duration parsing and terminal-safe text, shared by the CLI and the
// messages of findings.

/// "0 ns", "850 ns", "12.3 µs", "4.56 ms", "1.23 s", "95.0 s": three significant digits.
public func formatDuration(_ ns: UInt64) -> String {
    if ns < 1_000 { return "\(ns) ns" }
    let units: [(Double, String)] = [(1e3, "µs"), (1e6, "ms"), (1e9, "s")]
    var chosen = units[0]
    for u in units where Double(ns) >= u.0 { chosen = u }
    return significant(Double(ns) / chosen.0) + " " + chosen.1
}

/// Signed variant (timer lateness can be negative: early).
public func formatSignedDuration(_ ns: Int64) -> String {
    ns < 0 ? "-" + formatDuration(ns.magnitude) : formatDuration(UInt64(ns))
}

/// Three significant digits without a trailing exponent: 1.23, 12.3, 123, 1234.
func significant(_ v: Double) -> String {
    if v >= 100 { return String(Int(v.rounded())) }
    let decimals = v >= 10 ? 1 : 2
    let scale = decimals == 1 ? 10.0 : 100.0
    let r = (v * scale).rounded() / scale
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let have = s.distance(from: dot, to: s.endIndex) - 1
        if have < decimals { s += String(repeating: "0", count: decimals - have) }
    } else {
        s += "." + String(repeating: "0", count: decimals)
    }
    return s
}

/// "850/s", "12.3k/s", "4.56M/s".
public func formatRate(_ perSecond: Double) -> String {
    guard perSecond.isFinite, perSecond > 0 else { return "0/s" }
    if perSecond >= 1e6 { return significant(perSecond / 1e6) + "M/s" }
    if perSecond >= 1e3 { return significant(perSecond / 1e3) + "k/s" }
    return significant(perSecond) + "/s"
}

/// "42%" style share with one decimal below 10%.
public func formatPercent(_ fraction: Double) -> String {
    guard fraction.isFinite else { return "-" }
    let p = fraction * 100
    if p > 0 && p < 10 { return String((p * 10).rounded() / 10) + "%" }
    return String(Int(p.rounded())) + "%"
}

/// Parses "10ms", "1.5s", "250us", "250µs", "100ns", "2m" into ns; nil when malformed.
public func parseDuration(_ text: String) -> UInt64? {
    let s = trimmedWhitespace(text)
    let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9)]
    for (suffix, factor) in units where s.hasSuffix(suffix) {
        let number = s.dropLast(suffix.count)
        // "ms" also ends in "s": make sure the rest is a number.
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }),
              number.filter({ $0 == "." }).count <= 1, let value = Double(number), value.isFinite else { continue }
        let ns = value * factor
        guard ns >= 0, ns < 1.8e19 else { return nil }
        return UInt64(ns.rounded())
    }
    return nil
}

/// Text from the trace made safe for a terminal: control characters (C0, DEL, C1), and
/// bidirectional overrides are shown as \u{..} escapes; backslashes are doubled only where
/// an escape could be confused.
public func terminalSafe(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        let v = scalar.value
        let isControl = v < 0x20 || v == 0x7F || (0x80...0x9F).contains(v)
        let isBidi = (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) || v == 0x200E || v == 0x200F
        if isControl || isBidi {
            switch v {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            default: out += "\\u{" + String(v, radix: 16) + "}"
            }
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// Without Foundation: drops leading and trailing spaces and tabs.
func trimmedWhitespace(_ text: String) -> String {
    var s = Substring(text)
    while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
    while let l = s.last, l == " " || l == "\t" { s.removeLast() }
    return String(s)
}

/// The one wording of a trace whose reader dropped invalid records (stats header, finding).
public func inconsistentTraceMessage(_ droppedRecords: Int) -> String {
    "inconsistent trace: \(droppedRecords) event\(droppedRecords == 1 ? "" : "s") dropped"
}
