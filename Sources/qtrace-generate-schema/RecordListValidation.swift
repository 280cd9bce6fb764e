// What the lists must satisfy beyond their syntax: what C would accept but the format, the
// reader or Swift would not (a number used twice, a word count that disagrees with its names,
// a value its raw type cannot hold, an option that is not one bit).

enum RecordListValidation {
    /// `Event` has four payload words, a to d: a record's words and its site word share them.
    static let eventWords = 4

    static func check(_ list: RecordList) throws {
        try checkRecords(list.records + list.compactRecords)
        var cNames: Set<String> = Set((list.records + list.compactRecords).map { "QT_" + $0.cName })
        var swiftTypes: Set<String> = []
        for set in list.valueSets {
            guard swiftTypes.insert(set.swiftType).inserted else {
                throw ListError(line: set.line, message: "\(set.swiftType) is generated twice")
            }
            try checkValues(set, cNames: &cNames)
        }
    }

    private static func checkRecords(_ records: [RecordEntry]) throws {
        var numbers: Set<Int> = [], names: Set<String> = [], swiftNames: Set<String> = []
        for record in records {
            func fail(_ message: String) -> ListError { ListError(line: record.line, message: "\(record.cName): \(message)") }
            guard (1...255).contains(record.number) else { throw fail("the number must be 1...255 (the type byte)") }
            guard numbers.insert(record.number).inserted else { throw fail("number \(record.number) is used twice") }
            guard names.insert(record.cName).inserted else { throw fail("the name is used twice") }
            guard swiftNames.insert(record.swiftName).inserted else { throw fail("the Swift name \(record.swiftName) is used twice") }
            guard record.wordNames.count == record.words else {
                throw fail("\(record.words) payload words but \(record.wordNames.count) word names")
            }
            guard record.wordNames.allSatisfy({ $0.wholeMatch(of: #/[a-z][a-z0-9_]*/#) != nil }) else {
                throw fail("a word name is empty or not lower_snake_case")
            }
            guard record.words + (record.hasOptionalSite ? 1 : 0) <= eventWords else {
                throw fail("more payload words (the site word included) than an Event holds (\(eventWords))")
            }
            // The reader tells a record with the site word from one without by its length,
            // which a string makes variable.
            guard !(record.hasString && record.hasOptionalSite) else { throw fail("a record with a string has no site word") }
        }
    }

    private static func checkValues(_ set: ValueSet, cNames: inout Set<String>) throws {
        guard !set.values.isEmpty else { throw ListError(line: set.line, message: "\(set.listName) has no values") }
        let maximum = rawTypeMaximum[set.rawType] ?? 0
        var values: Set<UInt64> = [], swiftNames: Set<String> = []
        for value in set.values {
            func fail(_ message: String) -> ListError { ListError(line: value.line, message: "\(value.cName): \(message)") }
            guard cNames.insert(value.cName).inserted else { throw fail("the C name is used twice") }
            guard swiftNames.insert(value.swiftName).inserted else { throw fail("\(set.swiftType).\(value.swiftName) is used twice") }
            guard value.value <= maximum else { throw fail("\(value.value) does not fit \(set.swiftType)'s \(set.rawType)") }
            // C's enum constants are ints: a larger value would change type between compilers.
            guard value.value <= UInt64(Int32.max) else { throw fail("C enum constants stop at 2^31 - 1") }
            if set.isOptionSet {
                guard value.value != 0 && value.value & (value.value - 1) == 0 else { throw fail("an option must be one bit") }
            }
            guard values.insert(value.value).inserted else { throw fail("the value \(value.value) is used twice in \(set.swiftType)") }
        }
    }
}
