// The lists of Sources/CQTraceShim/qtrace_records.h as data, read by a strict line parser:
// every line is a comment, a preprocessor line, an `enum { ... };` expansion or, inside a
// list, an entry in the one form the header's comment gives. Anything else stops the build
// with `path:line: error: ...`, so that a list the generator misreads cannot compile.

/// One QT_RECORD(...) entry.
struct RecordEntry {
    let line: Int
    let cName: String
    let swiftName: String
    let number: Int
    let words: Int
    let wordNames: [String]
    let hasOptionalSite: Bool
    let hasString: Bool
    let doc: [String]
}

/// One QT_VALUE(...) entry.
struct ValueEntry {
    let line: Int
    let cName: String
    let swiftName: String
    let value: UInt64
    let doc: [String]
}

/// One QT_VALUE_SET(...) entry with the values of its list.
struct ValueSet {
    let line: Int
    let listName: String
    let swiftType: String
    let rawType: String
    let isOptionSet: Bool
    var doc: [String] = []
    var values: [ValueEntry] = []
}

/// The header's lists, in header order.
struct RecordList {
    var records: [RecordEntry] = []
    var recordsDoc: [String] = []
    var compactRecords: [RecordEntry] = []
    var valueSets: [ValueSet] = []
}

/// A line the generator cannot take: where it is and why.
struct ListError: Error {
    let line: Int
    let message: String
}

/// The largest value of each raw type a value set may have.
let rawTypeMaximum: [String: UInt64] = ["UInt8": 0xFF, "UInt16": 0xFFFF, "UInt32": 0xFFFF_FFFF, "UInt64": .max]

/// The parser: one pass over the lines, then `RecordListValidation` over the result.
struct RecordListParser {
    /// The list being read: its name, its entry macro and the doc comment above it.
    private struct OpenList {
        let name: String
        let entryMacro: String
        let doc: [String]
    }

    private var list = RecordList()
    private var valueLists: [String: (line: Int, doc: [String], values: [ValueEntry])] = [:]
    private var setEntries: [ValueSet] = []
    private var seenLists: Set<String> = []
    private var open: OpenList?
    private var pendingDoc: [String] = []
    private var entryDoc: [String] = []

    static func parse(_ text: String) throws -> RecordList {
        var parser = RecordListParser()
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            try parser.take(String(line), number: index + 1)
        }
        return try parser.finish()
    }

    private mutating func take(_ line: String, number: Int) throws {
        let trimmed = line.trimmingSpaces()
        if let open {
            let continues = trimmed.hasSuffix("\\")
            let body = continues ? String(trimmed.dropLast()).trimmingSpaces() : trimmed
            try takeEntry(body, of: open, line: number)
            if !continues { try close(open, line: number) }
            return
        }
        if trimmed.hasPrefix("///") {
            pendingDoc.append(String(trimmed.dropFirst(3)).trimmingSpaces())
            return
        }
        defer { pendingDoc = [] }
        if trimmed.isEmpty || trimmed.hasPrefix("//") || trimmed.wholeMatch(of: #/enum \{ .* \};/#) != nil { return }
        if let match = trimmed.wholeMatch(of: #/#define (QT_[A-Z0-9_]+_LIST)\((QT_[A-Z_]+)\) \\/#) {
            try openList(String(match.1), entryMacro: String(match.2), line: number)
            return
        }
        if trimmed.hasSuffix("\\") { throw ListError(line: number, message: "a continued line that opens no QT_..._LIST(ENTRY) list") }
        if trimmed.wholeMatch(of: #/#(ifndef|ifdef|if|else|endif|define|undef|include)\b.*/#) != nil { return }
        throw ListError(line: number, message: "not a comment, a preprocessor line or an enum expansion: \(trimmed)")
    }

    private mutating func openList(_ name: String, entryMacro: String, line: Int) throws {
        guard seenLists.insert(name).inserted else { throw ListError(line: line, message: "\(name) is defined twice") }
        let expected = switch name {
        case "QT_RECORD_LIST", "QT_COMPACT_RECORD_LIST": "QT_RECORD"
        case "QT_VALUE_SET_LIST": "QT_VALUE_SET"
        default: "QT_VALUE"
        }
        guard entryMacro == expected else {
            throw ListError(line: line, message: "\(name) must take its entries as \(expected), not \(entryMacro)")
        }
        open = OpenList(name: name, entryMacro: entryMacro, doc: pendingDoc)
        if name == "QT_RECORD_LIST" { list.recordsDoc = pendingDoc }
        if entryMacro == "QT_VALUE" { valueLists[name] = (line, pendingDoc, []) }
        pendingDoc = []
        entryDoc = []
    }

    private mutating func close(_ open: OpenList, line: Int) throws {
        if !entryDoc.isEmpty { throw ListError(line: line, message: "\(open.name) ends with a comment that documents no entry") }
        self.open = nil
    }

    /// An entry, or a comment line that documents the next entry.
    private mutating func takeEntry(_ body: String, of open: OpenList, line: Int) throws {
        if body.isEmpty { throw ListError(line: line, message: "an empty line inside \(open.name) (a backslash too many above?)") }
        if let comment = body.wholeMatch(of: #/\/\*\s*(.*?)\s*\*\//#) {
            entryDoc.append(String(comment.1))
            return
        }
        var entry = body
        var doc = entryDoc
        if let trailing = body.wholeMatch(of: #/(QT_.*\))\s*\/\*\s*(.*?)\s*\*\//#) {
            entry = String(trailing.1)
            doc.append(String(trailing.2))
        }
        entryDoc = []
        switch open.entryMacro {
        case "QT_RECORD":
            let record = try Self.record(entry, doc: doc, line: line)
            if open.name == "QT_RECORD_LIST" { list.records.append(record) } else { list.compactRecords.append(record) }
        case "QT_VALUE": valueLists[open.name]?.values.append(try Self.value(entry, doc: doc, line: line))
        default: setEntries.append(try Self.valueSet(entry, line: line))
        }
    }

    private static func record(_ text: String, doc: [String], line: Int) throws -> RecordEntry {
        let form = #/QT_RECORD\(\s*([A-Z][A-Z0-9_]*)\s*,\s*([a-z][A-Za-z0-9]*)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*"([a-z0-9_,]*)"\s*,\s*(QT_OPT_SITE|QT_NO_SITE)\s*,\s*(QT_STRING|QT_NO_STRING)\s*\)/#
        guard let match = text.wholeMatch(of: form), let number = Int(match.3), let words = Int(match.4) else {
            throw ListError(line: line, message: "not a QT_RECORD(NAME, swiftName, number, words, \"word,...\", QT_OPT_SITE | QT_NO_SITE, QT_STRING | QT_NO_STRING) entry: \(text)")
        }
        let wordNames = match.5.isEmpty ? [] : match.5.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return RecordEntry(line: line, cName: String(match.1), swiftName: String(match.2), number: number, words: words,
                           wordNames: wordNames, hasOptionalSite: match.6 == "QT_OPT_SITE",
                           hasString: match.7 == "QT_STRING", doc: doc)
    }

    private static func value(_ text: String, doc: [String], line: Int) throws -> ValueEntry {
        let form = #/QT_VALUE\(\s*(QT_[A-Z0-9_]+)\s*,\s*([a-z][A-Za-z0-9]*)\s*,\s*([^,()]+?)\s*\)/#
        guard let match = text.wholeMatch(of: form) else {
            throw ListError(line: line, message: "not a QT_VALUE(QT_C_NAME, swiftName, value) entry: \(text)")
        }
        guard let value = integer(String(match.3)) else {
            throw ListError(line: line, message: "\(match.1): the value must be a decimal, 0x hex or 1 << N (N < 64), not \(match.3)")
        }
        return ValueEntry(line: line, cName: String(match.1), swiftName: String(match.2), value: value, doc: doc)
    }

    private static func valueSet(_ text: String, line: Int) throws -> ValueSet {
        let form = #/QT_VALUE_SET\(\s*(QT_[A-Z0-9_]+_LIST)\s*,\s*([A-Z][A-Za-z0-9]*)\s*,\s*(UInt8|UInt16|UInt32|UInt64)\s*,\s*(QT_ENUM|QT_OPTIONS)\s*\)/#
        guard let match = text.wholeMatch(of: form) else {
            throw ListError(line: line, message: "not a QT_VALUE_SET(QT_X_LIST, SwiftType, UInt8 | UInt16 | UInt32 | UInt64, QT_ENUM | QT_OPTIONS) entry: \(text)")
        }
        return ValueSet(line: line, listName: String(match.1), swiftType: String(match.2), rawType: String(match.3),
                        isOptionSet: match.4 == "QT_OPTIONS")
    }

    /// `12`, `0x1F` or `1 << 3`: the forms C and the generator read alike.
    static func integer(_ text: String) -> UInt64? {
        if let shift = text.wholeMatch(of: #/1\s*<<\s*(\d+)/#) {
            guard let bits = Int(shift.1), bits < 64 else { return nil }
            return 1 << UInt64(bits)
        }
        if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
        return text.allSatisfy(\.isASCII) ? UInt64(text) : nil
    }

    /// The lists joined: every value list belongs to one QT_VALUE_SET entry and back.
    private mutating func finish() throws -> RecordList {
        if let open { throw ListError(line: 0, message: "the file ends inside \(open.name)") }
        for required in ["QT_RECORD_LIST", "QT_COMPACT_RECORD_LIST", "QT_VALUE_SET_LIST"] where !seenLists.contains(required) {
            throw ListError(line: 0, message: "\(required) is missing")
        }
        for var set in setEntries {
            guard let values = valueLists.removeValue(forKey: set.listName) else {
                throw ListError(line: set.line, message: "\(set.listName) is not defined (or named by two QT_VALUE_SET entries)")
            }
            set.doc = values.doc
            set.values = values.values
            list.valueSets.append(set)
        }
        if let (name, stray) = valueLists.min(by: { $0.value.line < $1.value.line }) {
            throw ListError(line: stray.line, message: "\(name) is in no QT_VALUE_SET entry: Swift would not see it")
        }
        try RecordListValidation.check(list)
        return list
    }
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" || last == "\r" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
