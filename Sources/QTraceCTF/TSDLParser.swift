// A parser for the TSDL text of CTF 1.8 metadata, as far as LTTng (UST and kernel) writes it:
// typealiases, named structs/enums/variants, trace/env/clock/stream/event blocks, integers,
// enums, floating point, strings, structs, variants, arrays and sequences. Anything else is a
// `CTFUnsupported` (the reader then uses libbabeltrace2); malformed text is a `CTFReadError`.

private struct TSDLToken: Equatable {
    enum Kind { case identifier, number, string, punctuation }
    var kind: Kind
    var text: String
}

struct TSDLParser {
    private var tokens: [TSDLToken]
    private var index = 0
    private var aliases: [String: CTFType] = [:]
    private var metadata = CTFMetadata()

    static func parse(_ text: String) throws -> CTFMetadata {
        var parser = try TSDLParser(tokens: tokenize(text))
        return try parser.parseTopLevel()
    }

    private init(tokens: [TSDLToken]) { self.tokens = tokens }

    // MARK: Tokens

    private static func tokenize(_ text: String) throws -> [TSDLToken] {
        let bytes = Array(text.utf8)
        var tokens: [TSDLToken] = []
        var i = 0
        func isIdentifier(_ b: UInt8, first: Bool) -> Bool {
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || b == 0x5F || (!first && b >= 0x30 && b <= 0x39)
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0 { i += 1; continue }
            if b == 0x2F, i + 1 < bytes.count, bytes[i + 1] == 0x2A {            // /* comment */
                i += 2
                while i + 1 < bytes.count, !(bytes[i] == 0x2A && bytes[i + 1] == 0x2F) { i += 1 }
                i += 2
                continue
            }
            if b == 0x2F, i + 1 < bytes.count, bytes[i + 1] == 0x2F {            // // comment
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
                continue
            }
            let start = i
            if isIdentifier(b, first: true) {
                while i < bytes.count, isIdentifier(bytes[i], first: false) { i += 1 }
                tokens.append(TSDLToken(kind: .identifier, text: String(decoding: bytes[start..<i], as: UTF8.self)))
            } else if b >= 0x30 && b <= 0x39 {
                while i < bytes.count, isIdentifier(bytes[i], first: false) { i += 1 }
                tokens.append(TSDLToken(kind: .number, text: String(decoding: bytes[start..<i], as: UTF8.self)))
            } else if b == 0x22 {                                                  // "string"
                i += 1
                var value: [UInt8] = []
                while i < bytes.count, bytes[i] != 0x22 {
                    if bytes[i] == 0x5C, i + 1 < bytes.count { i += 1 }
                    value.append(bytes[i])
                    i += 1
                }
                guard i < bytes.count else { throw CTFReadError.corrupt("metadata: unterminated string") }
                i += 1
                tokens.append(TSDLToken(kind: .string, text: String(decoding: value, as: UTF8.self)))
            } else if b == 0x3A, i + 1 < bytes.count, bytes[i + 1] == 0x3D {     // :=
                tokens.append(TSDLToken(kind: .punctuation, text: ":="))
                i += 2
            } else if b == 0x2E, i + 2 < bytes.count, bytes[i + 1] == 0x2E, bytes[i + 2] == 0x2E {
                tokens.append(TSDLToken(kind: .punctuation, text: "..."))
                i += 3
            } else {
                tokens.append(TSDLToken(kind: .punctuation, text: String(UnicodeScalar(b))))
                i += 1
            }
        }
        return tokens
    }

    private var atEnd: Bool { index >= tokens.count }
    private var peek: TSDLToken? { index < tokens.count ? tokens[index] : nil }

    private mutating func next() throws -> TSDLToken {
        guard index < tokens.count else { throw CTFReadError.corrupt("metadata: unexpected end of the TSDL text") }
        index += 1
        return tokens[index - 1]
    }

    private mutating func accept(_ punctuation: String) -> Bool {
        guard let token = peek, token.kind != .string, token.text == punctuation else { return false }
        index += 1
        return true
    }

    private mutating func expect(_ punctuation: String) throws {
        guard accept(punctuation) else {
            throw CTFReadError.corrupt("metadata: expected '\(punctuation)' but found '\(peek?.text ?? "end of text")'")
        }
    }

    private mutating func identifier() throws -> String {
        let token = try next()
        guard token.kind == .identifier else { throw CTFReadError.corrupt("metadata: expected a name, found '\(token.text)'") }
        return token.text
    }

    // MARK: Top level

    private mutating func parseTopLevel() throws -> CTFMetadata {
        while let token = peek {
            if accept(";") { continue }
            guard token.kind == .identifier else { throw CTFReadError.corrupt("metadata: unexpected '\(token.text)'") }
            switch token.text {
            case "typealias": index += 1; try parseTypealias()
            case "trace": index += 1; try parseTrace()
            case "env": index += 1; try parseEnvironment()
            case "clock": index += 1; try parseClock()
            case "stream": index += 1; try parseStream()
            case "event": index += 1; try parseEvent()
            case "callsite": index += 1; try skipBlock()
            case "struct", "enum", "variant", "integer", "floating_point", "string":
                _ = try parseTypeSpecifier()
                try expect(";")
            case "typedef": throw CTFUnsupported("metadata: typedef")
            default: throw CTFUnsupported("metadata: top-level '\(token.text)'")
            }
        }
        guard !metadata.streams.isEmpty || metadata.events.isEmpty else {
            throw CTFReadError.corrupt("metadata: events without a stream class")
        }
        return metadata
    }

    private mutating func skipBlock() throws {
        try expect("{")
        var depth = 1
        while depth > 0 {
            let token = try next()
            if token.kind == .punctuation && token.text == "{" { depth += 1 }
            if token.kind == .punctuation && token.text == "}" { depth -= 1 }
        }
        try expect(";")
    }

    /// `typealias TYPE := NAME WORDS;`
    private mutating func parseTypealias() throws {
        let type = try parseTypeSpecifier()
        try expect(":=")
        var words: [String] = []
        while let token = peek, token.kind == .identifier { words.append(token.text); index += 1 }
        guard !words.isEmpty else { throw CTFReadError.corrupt("metadata: typealias without a name") }
        aliases[words.joined(separator: " ")] = type
        try expect(";")
    }

    /// The entries of a `{ key = value; key := type; }` block.
    private enum Value {
        case number(Int64, unsigned: UInt64), text(String), path(String), type(CTFType)
    }

    private mutating func parseBlock() throws -> [(key: String, value: Value)] {
        try expect("{")
        var entries: [(key: String, value: Value)] = []
        while !accept("}") {
            if accept(";") { continue }
            if peek?.text == "typealias" && peek?.kind == .identifier { index += 1; try parseTypealias(); continue }
            var key = try identifier()
            while accept(".") { key += "." + (try identifier()) }
            if accept(":=") {
                entries.append((key, .type(try parseTypeSpecifier())))
            } else {
                try expect("=")
                entries.append((key, try parseValue()))
            }
            try expect(";")
        }
        try expect(";")
        return entries
    }

    private mutating func parseValue() throws -> Value {
        let negative = accept("-")
        let token = try next()
        switch token.kind {
        case .number:
            let unsigned = try Self.number(token.text)
            let signed = negative ? -Int64(truncatingIfNeeded: unsigned) : Int64(truncatingIfNeeded: unsigned)
            return .number(signed, unsigned: unsigned)
        case .string: return .text(token.text)
        case .identifier:
            var path = token.text
            while accept(".") { path += "." + (try identifier()) }
            return .path(path)
        case .punctuation: throw CTFReadError.corrupt("metadata: unexpected '\(token.text)' for a value")
        }
    }

    private static func number(_ text: String) throws -> UInt64 {
        var digits = Substring(text)
        while let last = digits.last, "uUlL".contains(last) { digits = digits.dropLast() }
        let value: UInt64?
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            value = UInt64(digits.dropFirst(2), radix: 16)
        } else if digits.count > 1 && digits.hasPrefix("0") {
            value = UInt64(digits.dropFirst(), radix: 8)
        } else {
            value = UInt64(digits)
        }
        guard let value else { throw CTFReadError.corrupt("metadata: bad number '\(text)'") }
        return value
    }

    // MARK: Blocks

    private mutating func parseTrace() throws {
        for (key, value) in try parseBlock() {
            switch (key, value) {
            case ("byte_order", .path(let order)):
                metadata.byteOrder = try Self.byteOrder(order) == .big ? .big : .little
            case ("uuid", .text(let text)): metadata.uuid = Self.uuidBytes(text)
            case ("packet.header", .type(let type)): metadata.packetHeader = type
            case ("major", .number(let major, _)) where major != 1: throw CTFUnsupported("metadata: CTF major version \(major)")
            default: break
            }
        }
    }

    private mutating func parseEnvironment() throws {
        for (key, value) in try parseBlock() {
            switch value {
            case .text(let text): metadata.environment[key] = text
            case .number(let number, _): metadata.integerEnvironment[key] = number
            default: break
            }
        }
    }

    private mutating func parseClock() throws {
        var clock = CTFClock(name: "")
        for (key, value) in try parseBlock() {
            switch (key, value) {
            case ("name", .path(let name)), ("name", .text(let name)): clock.name = name
            case ("freq", .number(_, let freq)): clock.frequency = freq
            case ("offset_s", .number(let seconds, _)): clock.offsetSeconds = seconds
            case ("offset", .number(_, let cycles)): clock.offsetCycles = cycles
            default: break
            }
        }
        guard clock.frequency > 0 else { throw CTFReadError.corrupt("metadata: clock \(clock.name) has frequency 0") }
        metadata.clocks[clock.name] = clock
    }

    private mutating func parseStream() throws {
        var stream = CTFStreamClass(id: 0)
        for (key, value) in try parseBlock() {
            switch (key, value) {
            case ("id", .number(_, let id)): stream.id = id
            case ("packet.context", .type(let type)): stream.packetContext = type
            case ("event.header", .type(let type)): stream.eventHeader = type
            case ("event.context", .type(let type)): stream.eventContext = type
            default: break
            }
        }
        metadata.streams[stream.id] = stream
    }

    private mutating func parseEvent() throws {
        var event = CTFEventClass(id: 0, streamID: 0, name: "")
        for (key, value) in try parseBlock() {
            switch (key, value) {
            case ("name", .text(let name)), ("name", .path(let name)): event.name = name
            case ("id", .number(_, let id)): event.id = id
            case ("stream_id", .number(_, let id)): event.streamID = id
            case ("context", .type(let type)): event.context = type
            case ("fields", .type(let type)): event.payload = type
            default: break
            }
        }
        metadata.events.append(event)
    }

    // MARK: Types

    private mutating func parseTypeSpecifier() throws -> CTFType {
        let keyword = try identifier()
        switch keyword {
        case "integer": return .integer(try parseInteger())
        case "floating_point":
            var size = 0, align = 8, order = CTFByteOrder.native
            for (key, value) in try parseAttributes() {
                switch (key, value) {
                // Bounded before adding: absurd digit counts are rejected below, not overflowed.
                case ("exp_dig", .number(let n, _)), ("mant_dig", .number(let n, _)): size += Int(min(max(n, 0), 1 << 16))
                case ("align", .number(let n, _)): align = try Self.alignment(n)
                case ("byte_order", .path(let o)): order = try Self.byteOrder(o)
                default: break
                }
            }
            guard size == 32 || size == 64 else { throw CTFUnsupported("metadata: a \(size)-bit floating point") }
            return .floatingPoint(size: size, align: align, byteOrder: order)
        case "string":
            if peek?.text == "{" { _ = try parseAttributes() }
            return .string
        case "struct": return try parseStruct()
        case "enum": return try parseEnum()
        case "variant": return try parseVariant()
        default:
            var words = [keyword]
            while let token = peek, token.kind == .identifier, aliases[(words + [token.text]).joined(separator: " ")] != nil
                    || aliases.keys.contains(where: { $0.hasPrefix((words + [token.text]).joined(separator: " ") + " ") }) {
                words.append(token.text)
                index += 1
            }
            guard let type = aliases[words.joined(separator: " ")] else {
                throw CTFReadError.corrupt("metadata: unknown type '\(words.joined(separator: " "))'")
            }
            return type
        }
    }

    /// `{ key = value; ... }` without the trailing `;` (type attributes).
    private mutating func parseAttributes() throws -> [(key: String, value: Value)] {
        try expect("{")
        var entries: [(key: String, value: Value)] = []
        while !accept("}") {
            if accept(";") { continue }
            let key = try identifier()
            try expect("=")
            entries.append((key, try parseValue()))
        }
        return entries
    }

    /// An alignment written in the metadata (bits): a power of two up to 2^20, so that the
    /// decoding plans hold it in 32 bits; anything else is a corrupt trace (the fuzzer's
    /// `align(2^40)` structure trapped in the plan compiler).
    static func alignment(_ n: Int64) throws -> Int {
        guard n > 0, n <= 1 << 20, n & (n - 1) == 0 else { throw CTFReadError.corrupt("metadata: alignment \(n)") }
        return Int(n)
    }

    private mutating func parseInteger() throws -> CTFIntegerType {
        var type = CTFIntegerType(size: 0, align: 0)
        var encoded = false
        for (key, value) in try parseAttributes() {
            switch (key, value) {
            case ("size", .number(let n, _)): type.size = Int(n)
            case ("align", .number(let n, _)): type.align = n == 0 ? 0 : try Self.alignment(n)  // 0: derived below
            case ("signed", .number(let n, _)): type.signed = n != 0
            case ("signed", .path(let p)): type.signed = p == "true" || p == "TRUE"
            case ("byte_order", .path(let o)): type.byteOrder = try Self.byteOrder(o)
            case ("encoding", .path(let e)): encoded = e == "UTF8" || e == "ASCII" || e == "utf8"
            case ("map", .path(let p)):
                let parts = p.split(separator: ".")
                if parts.count == 3, parts[0] == "clock", parts[2] == "value" { type.clock = String(parts[1]) }
            default: break
            }
        }
        guard type.size > 0 && type.size <= 64 else { throw CTFUnsupported("metadata: a \(type.size)-bit integer") }
        if type.align == 0 { type.align = type.size % 8 == 0 ? 8 : 1 }
        guard type.align > 0, type.align & (type.align - 1) == 0 else { throw CTFReadError.corrupt("metadata: alignment \(type.align)") }
        type.isText = encoded && type.size == 8
        return type
    }

    private mutating func parseStruct() throws -> CTFType {
        var name: String?
        if peek?.kind == .identifier { name = try identifier() }
        guard peek?.text == "{" else {
            guard let name, let type = aliases["struct " + name] else { throw CTFReadError.corrupt("metadata: unknown struct") }
            return type
        }
        let fields = try parseFields()
        var align = 1
        if peek?.text == "align", peek?.kind == .identifier {
            index += 1
            try expect("(")
            guard case .number(let n, _) = try parseValue() else { throw CTFReadError.corrupt("metadata: bad struct align") }
            try expect(")")
            align = try Self.alignment(n)
        }
        let type = CTFType.structure(fields, minAlign: align)
        if let name { aliases["struct " + name] = type }
        return type
    }

    private mutating func parseVariant() throws -> CTFType {
        var name: String?
        if peek?.kind == .identifier { name = try identifier() }
        var tag: String?
        if accept("<") {
            tag = try identifier()
            while accept(".") { tag! += "." + (try identifier()) }
            try expect(">")
        }
        guard peek?.text == "{" else {
            guard let name, case .variant(let declared, let fields)? = aliases["variant " + name] else {
                throw CTFReadError.corrupt("metadata: unknown variant")
            }
            return .variant(tag: tag ?? declared, fields)
        }
        let fields = try parseFields()
        let type = CTFType.variant(tag: tag ?? "", fields)
        if let name { aliases["variant " + name] = type }
        guard tag != nil || name != nil else { throw CTFUnsupported("metadata: an untagged anonymous variant") }
        return type
    }

    private mutating func parseEnum() throws -> CTFType {
        var name: String?
        if peek?.kind == .identifier { name = try identifier() }
        var container: CTFType?
        if accept(":") { container = try parseTypeSpecifier() }
        guard peek?.text == "{" else {
            guard let name, let type = aliases["enum " + name] else { throw CTFReadError.corrupt("metadata: unknown enum") }
            return type
        }
        guard case .integer(let integer)? = container ?? aliases["int"] else {
            throw CTFReadError.corrupt("metadata: an enum without an integer container type")
        }
        try expect("{")
        var mappings: [CTFEnumMapping] = []
        var nextValue: Int64 = 0
        while !accept("}") {
            if accept(",") { continue }
            let token = try next()
            guard token.kind == .identifier || token.kind == .string else {
                throw CTFReadError.corrupt("metadata: bad enum label '\(token.text)'")
            }
            var low = nextValue, high = nextValue
            if accept("=") {
                guard case .number(let l, _) = try parseValue() else { throw CTFReadError.corrupt("metadata: bad enum value") }
                low = l; high = l
                if accept("...") {
                    guard case .number(let h, _) = try parseValue() else { throw CTFReadError.corrupt("metadata: bad enum range") }
                    high = h
                }
            }
            mappings.append(CTFEnumMapping(label: token.text, low: low, high: high))
            nextValue = high &+ 1
        }
        let type = CTFType.enumeration(integer, mappings)
        if let name { aliases["enum " + name] = type }
        return type
    }

    /// `{ TYPE name; TYPE name[N]; TYPE name[length]; ... }` (struct and variant bodies).
    private mutating func parseFields() throws -> [CTFField] {
        try expect("{")
        var fields: [CTFField] = []
        while !accept("}") {
            if accept(";") { continue }
            if peek?.text == "typealias" && peek?.kind == .identifier { index += 1; try parseTypealias(); continue }
            let base = try parseFieldTypeSpecifier()
            repeat {
                let name = try identifier()
                var lengths: [Value] = []
                while accept("[") {
                    lengths.append(try parseValue())
                    try expect("]")
                }
                var type = base
                for length in lengths.reversed() {
                    switch length {
                    case .number(let n, _) where n >= 0: type = .array(type, length: Int(n))
                    case .path(let path): type = .sequence(type, length: path)
                    default: throw CTFReadError.corrupt("metadata: bad array length for \(name)")
                    }
                }
                fields.append(CTFField(rawName: name, type: type))
            } while accept(",")
            try expect(";")
        }
        return fields
    }

    /// A field's type: an alias name is all the identifiers before the field's own name.
    private mutating func parseFieldTypeSpecifier() throws -> CTFType {
        guard let token = peek, token.kind == .identifier else {
            throw CTFReadError.corrupt("metadata: expected a field type, found '\(peek?.text ?? "end of text")'")
        }
        switch token.text {
        case "integer", "floating_point", "string", "struct", "enum", "variant": return try parseTypeSpecifier()
        default:
            var words: [String] = []
            while index + 1 < tokens.count, tokens[index].kind == .identifier, tokens[index + 1].kind == .identifier {
                words.append(tokens[index].text)
                index += 1
            }
            guard let type = aliases[words.joined(separator: " ")] else {
                throw CTFReadError.corrupt("metadata: unknown type '\(words.joined(separator: " "))'")
            }
            return type
        }
    }

    // MARK: Values

    private static func byteOrder(_ name: String) throws -> CTFByteOrder {
        switch name {
        case "le", "little_endian": .little
        case "be", "big_endian", "network": .big
        case "native": .native
        default: throw CTFReadError.corrupt("metadata: byte order '\(name)'")
        }
    }

    private static func uuidBytes(_ text: String) -> [UInt8]? {
        let hex = Array(text.utf8.filter { $0 != 0x2D })
        guard hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: hex[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
