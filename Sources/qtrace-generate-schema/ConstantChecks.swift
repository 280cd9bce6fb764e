// The test target's view of the lists: every C constant of qtrace_records.h as the C compiler
// evaluates it (through the CQTraceRecords module), beside the Swift value generated from the
// same line. A constant C does not define fails to compile; one whose values differ fails
// Tests/QTraceFormatTests/RecordListTests.swift.

enum ConstantChecks {
    static func generate(_ list: RecordList, source: String) -> String {
        var pairs: [(cName: String, swift: String)] = []
        pairs += list.records.map { ("QT_" + $0.cName, "EventType.\($0.swiftName).rawValue") }
        pairs += list.compactRecords.map { ("QT_" + $0.cName, "TraceLayout.\($0.swiftName)") }
        for set in list.valueSets {
            pairs += set.values.map { ($0.cName, "\(set.swiftType).`\($0.swiftName)`.rawValue") }
        }
        var lines = [
            "// Generated at build time by qtrace-generate-schema (Plugins/GenerateRecordSchema) from",
            "// \(source) for the tests.",
            "import CQTraceRecords",
            "import QTraceFormat",
            "",
            "/// Each constant: its C name, its value in C and in the generated Swift (as decimal text).",
            "let recordListConstants: [(name: String, c: String, swift: String)] = [",
        ]
        lines += pairs.map { "    (\"\($0.cName)\", \"\\(\($0.cName))\", \"\\(\($0.swift))\")," }
        return (lines + ["]", ""]).joined(separator: "\n")
    }
}
