// Widths of the terminal the tables and `qtrace top` are printed for.
#if canImport(Glibc)
import Glibc
#endif

/// Terminal width for screens (`qtrace top`): $COLUMNS, the tty's width, or 100.
func terminalWidth() -> Int {
    columnsVariable() ?? standardOutputColumns() ?? 100
}

/// A width no table reaches: names are never shortened.
let unlimitedTableWidth = Int.max / 2

/// Width for `stats` and `diff` tables written to stdout (`toStandardOutput`) or to a file:
/// $COLUMNS when set, the terminal's width, else no limit. Into a file or a pipe names are
/// printed whole, as ps does: nothing there wraps a long line, and grep must find the name.
func tableWidth(toStandardOutput: Bool = true) -> Int {
    if let columns = columnsVariable() { return columns }
    guard toStandardOutput, isatty(STDOUT_FILENO) == 1 else { return unlimitedTableWidth }
    return standardOutputColumns() ?? 100
}

/// $COLUMNS, when set to a usable width.
private func columnsVariable() -> Int? {
    guard let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns >= 40 else { return nil }
    return columns
}

/// The width of the terminal on stdout, if stdout is one.
private func standardOutputColumns() -> Int? {
    var size = winsize()
    guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 40 else { return nil }
    return Int(size.ws_col)
}
