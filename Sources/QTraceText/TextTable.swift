// Fixed-width terminal tables for `qtrace stats`, `diff` and `check`: columns sized to the
// terminal, text from the trace made safe (terminalSafe) and shortened at its end or middle.
import QTraceAnalysis

/// Fixed-width text tables for the terminal. Left-aligned columns hold text (names) and
/// shrink, widest first, with "…" when the table is wider than `width`; the others hold
/// numbers and are right-aligned, one space apart.
public struct TextTable {
    /// `text` in `width` characters with an ellipsis at the end or in the middle.
    public static func shortened(_ text: String, to width: Int, inMiddle: Bool) -> String {
        guard text.count > width else { return text }
        let kept = Swift.max(width - 1, 0)
        guard inMiddle, kept >= 4 else { return String(text.prefix(kept)) + "…" }
        let head = (kept + 1) / 2
        return String(text.prefix(head)) + "…" + String(text.suffix(kept - head))
    }

    public var headers: [String]
    public var rows: [[String]] = []
    /// Text columns never shrink below this.
    public static let minTextWidth = 8

    public init(_ headers: [String]) { self.headers = headers }

    public mutating func add(_ row: [String]) { rows.append(row) }

    /// `middleCut`: columns shortened in the middle when they must shrink (queue labels:
    /// `org.swift.swiftpm…build-delegate` keeps both ends apart); others lose their end.
    public func render(width: Int = 100, leftAligned: Set<Int> = [0], middleCut: Set<Int> = []) -> String {
        let cells = ([headers] + rows).map { $0.map(terminalSafe) }
        let n = headers.count
        var widths = (0..<n).map { c in cells.map { c < $0.count ? $0[c].count : 0 }.max() ?? 0 }
        // Two spaces around text columns, one between numbers.
        let gaps = (0..<n).map { c in c == n - 1 ? 0 : (leftAligned.contains(c) || leftAligned.contains(c + 1) ? 2 : 1) }
        var total = widths.reduce(0, +) + gaps.reduce(0, +)
        while total > width {
            guard let widest = leftAligned.filter({ $0 < n && widths[$0] > Self.minTextWidth })
                .max(by: { widths[$0] != widths[$1] ? widths[$0] < widths[$1] : $0 > $1 }) else { break }
            widths[widest] -= 1
            total -= 1
        }
        var out = ""
        for (r, row) in cells.enumerated() {
            var line = ""
            for c in 0..<n {
                var cell = c < row.count ? row[c] : ""
                if cell.count > widths[c] { cell = Self.shortened(cell, to: widths[c], inMiddle: middleCut.contains(c)) }
                let pad = String(repeating: " ", count: widths[c] - cell.count)
                line += leftAligned.contains(c) ? cell + pad : pad + cell
                line += String(repeating: " ", count: gaps[c])
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
            if r == 0 { out += String(repeating: "-", count: Swift.min(total, width)) + "\n" }
        }
        return out
    }
}
