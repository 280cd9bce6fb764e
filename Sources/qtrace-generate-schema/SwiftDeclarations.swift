// QTraceFormat's declarations from the lists: EventType and its spec names, the compact record
// types, each record's payload (RecordSchema.all) and the value sets as enums and option sets.
// Behaviour (decoding, descriptions) stays hand-written in QTraceFormat.

enum SwiftDeclarations {
    static func generate(_ list: RecordList, source: String) -> String {
        var lines = [
            "// Generated at build time by qtrace-generate-schema (Plugins/GenerateRecordSchema) from",
            "// \(source): edit the lists there, not this file.",
            "",
        ]
        lines += eventType(list)
        lines += compactTypes(list.compactRecords)
        lines += recordSchemas(list)
        for set in list.valueSets { lines += set.isOptionSet ? optionSet(set) : valueEnum(set) }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func eventType(_ list: RecordList) -> [String] {
        var lines = docLines(list.recordsDoc, indent: "")
        lines.append("public enum EventType: UInt8, Sendable, CaseIterable {")
        for record in list.records {
            lines += docLines(record.doc, indent: "    ")
            lines.append("    case \(record.swiftName) = \(record.number)")
        }
        lines += ["}", "", "extension EventType {", "    /// The spec's name in lower case, e.g. `queue_create`.",
                  "    public var name: String {", "        switch self {"]
        lines += list.records.map { "        case .\($0.swiftName): \"\($0.cName.lowercased())\"" }
        lines += ["        }", "    }"]
        lines += layoutAccessors(list.records)
        return lines + ["}", ""]
    }

    /// The layout as switches (tables once compiled), not lookups in `RecordSchema.all`: the
    /// writer and `siteID` ask per event.
    private static func layoutAccessors(_ records: [RecordEntry]) -> [String] {
        var lines = ["    /// Number of u64 payload words before the optional site word and the string.",
                     "    public var payloadWordCount: Int {", "        switch self {"]
        lines += records.map { "        case .\($0.swiftName): \($0.words)" }
        lines += ["        }", "    }"]
        for (name, doc, flag) in [
            ("hasOptionalSiteWord", "Whether format 1.4 appends an optional site word after the payload words.", \RecordEntry.hasOptionalSite),
            ("hasString", "Whether records of this type end with a string.", \RecordEntry.hasString),
        ] {
            let cases = records.filter { $0[keyPath: flag] }.map { "." + $0.swiftName }
            lines += ["    /// \(doc)", "    public var \(name): Bool {"]
            lines += cases.isEmpty ? ["        false"]
                : ["        switch self {", "        case \(cases.joined(separator: ", ")): true", "        default: false", "        }"]
            lines.append("    }")
        }
        return lines
    }

    private static func compactTypes(_ records: [RecordEntry]) -> [String] {
        var lines = ["extension TraceLayout {"]
        for record in records {
            lines += docLines(record.doc, indent: "    ")
            lines.append("    public static let \(record.swiftName): UInt8 = \(record.number)")
        }
        return lines + ["}", ""]
    }

    private static func recordSchemas(_ list: RecordList) -> [String] {
        var lines = ["extension RecordSchema {",
                     "    /// Every record type of the list, the compact forms last.",
                     "    static let all: [RecordSchema] = ["]
        for record in list.records + list.compactRecords {
            let words = record.wordNames.map { "\"\($0)\"" }.joined(separator: ", ")
            lines.append("        RecordSchema(number: \(record.number), name: \"\(record.cName)\", wordNames: [\(words)], "
                         + "hasOptionalSite: \(record.hasOptionalSite), hasString: \(record.hasString)),")
        }
        return lines + ["    ]", "}", ""]
    }

    private static func valueEnum(_ set: ValueSet) -> [String] {
        var lines = docLines(set.doc, indent: "")
        lines.append("public enum \(set.swiftType): \(set.rawType), Sendable, CaseIterable {")
        for value in set.values {
            lines += docLines(value.doc, indent: "    ")
            lines.append("    case \(escaped(value.swiftName)) = \(value.value)")
        }
        return lines + inlinableRawValue(set) + ["}", ""]
    }

    /// The raw-value conversions spelled out and inlinable: the synthesized ones are calls from
    /// another module, and the analysis converts an item's kind per event. Values that number
    /// the cases in order from `first` (all the lists' so far) convert by arithmetic: a case of
    /// an enum without payloads is stored as its index in declaration order, one byte for 2 to
    /// 256 cases. A switch, the fallback, was not inlined either.
    private static func inlinableRawValue(_ set: ValueSet) -> [String] {
        let raw = set.rawType, first = set.values.first?.value ?? 0
        let numbered = (2...256).contains(set.values.count)
            && set.values.enumerated().allSatisfy { $0.element.value == first + UInt64($0.offset) }
        guard numbered else { return switchedRawValue(set) }
        return ["    @inlinable public init?(rawValue: \(raw)) {",
                "        let index = rawValue &- \(first)",
                "        guard index < \(set.values.count) else { return nil }",
                "        self = unsafeBitCast(UInt8(truncatingIfNeeded: index), to: Self.self)",
                "    }",
                "    @inlinable public var rawValue: \(raw) { \(raw)(unsafeBitCast(self, to: UInt8.self)) &+ \(first) }"]
    }

    private static func switchedRawValue(_ set: ValueSet) -> [String] {
        var lines = ["    @inlinable public init?(rawValue: \(set.rawType)) {", "        switch rawValue {"]
        lines += set.values.map { "        case \($0.value): self = .\(escaped($0.swiftName))" }
        lines += ["        default: return nil", "        }", "    }",
                  "    @inlinable public var rawValue: \(set.rawType) {", "        switch self {"]
        lines += set.values.map { "        case .\(escaped($0.swiftName)): \($0.value)" }
        return lines + ["        }", "    }"]
    }

    /// Inlinable computed options (not stored statics, which cost an accessor call per use in
    /// another module): the analysis tests them per item.
    private static func optionSet(_ set: ValueSet) -> [String] {
        let type = set.swiftType
        var lines = docLines(set.doc, indent: "")
        lines += ["public struct \(type): OptionSet, Sendable, Hashable {",
                  "    public let rawValue: \(set.rawType)",
                  "    @inlinable public init(rawValue: \(set.rawType)) { self.rawValue = rawValue }"]
        for value in set.values {
            lines += docLines(value.doc, indent: "    ")
            lines.append("    @inlinable public static var \(escaped(value.swiftName)): \(type) { \(type)(rawValue: 1 << \(value.value.trailingZeroBitCount)) }")
        }
        let named = set.values.map { "(.\(escaped($0.swiftName)), \"\($0.swiftName)\")" }.joined(separator: ", ")
        lines += ["    /// Every option with its name, in list order.",
                  "    public static let named: [(option: \(type), name: String)] = [\(named)]", "}", ""]
        return lines
    }

    private static func docLines(_ doc: [String], indent: String) -> [String] {
        doc.map { "\(indent)/// \($0)" }
    }

    /// A Swift keyword as an identifier (`default`).
    private static func escaped(_ name: String) -> String {
        ["default", "in", "is", "as", "case", "class", "func", "init", "let", "var", "self", "Type", "where", "while", "for",
         "if", "else", "return", "switch", "break", "continue", "do", "repeat", "struct", "enum", "protocol", "extension",
         "import", "public", "private", "internal", "static", "true", "false", "nil", "throw", "throws", "try", "catch",
         "guard", "defer", "operator", "subscript", "typealias", "associatedtype", "inout", "super", "Any", "fallthrough"]
            .contains(name) ? "`\(name)`" : name
    }
}
