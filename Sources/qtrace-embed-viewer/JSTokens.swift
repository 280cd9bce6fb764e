// A JavaScript tokenizer just precise enough to tell the names a viewer module declares from
// the names it uses: comments, strings, template literals (with their `${…}` code), regular
// expressions and numbers are skipped; identifiers and punctuation are kept with their line.

struct JSToken: Equatable {
    enum Kind { case identifier, punctuation, literal }
    let kind: Kind
    let text: String
    let line: Int
}

/// Words that are never a reference to a binding.
let javaScriptKeywords: Set<String> = [
    "async", "await", "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
    "do", "else", "export", "extends", "false", "finally", "for", "function", "get", "if", "import", "in",
    "instanceof", "let", "new", "null", "of", "return", "set", "static", "super", "switch", "this", "throw",
    "true", "try", "typeof", "undefined", "var", "void", "while", "with", "yield",
]

/// After these words a `/` starts a regular expression, not a division.
private let wordsBeforeRegex: Set<String> = [
    "return", "typeof", "case", "of", "in", "instanceof", "new", "delete", "void", "throw", "else", "do",
]

struct JSTokenizer {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var tokens: [JSToken] = []
    /// Byte ranges of the comments.
    private var comments: [Range<Int>] = []
    /// Per open `${`, the braces opened inside it: its `}` resumes the template.
    private var templateBraces: [Int] = []

    static func tokenize(_ text: String) -> [JSToken] {
        var tokenizer = JSTokenizer(bytes: Array(text.utf8))
        tokenizer.run()
        return tokenizer.tokens
    }

    /// The UTF-8 byte ranges of `text`'s comments, in order.
    static func commentRanges(_ text: String) -> [Range<Int>] {
        var tokenizer = JSTokenizer(bytes: Array(text.utf8))
        tokenizer.run()
        return tokenizer.comments
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func byte(_ offset: Int = 0) -> UInt8 {
        index + offset < bytes.count ? bytes[index + offset] : 0
    }

    private mutating func advance(_ count: Int = 1) {
        for _ in 0..<count where index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") { line += 1 }
            index += 1
        }
    }

    private mutating func run() {
        while index < bytes.count {
            let c = byte()
            if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n") {
                advance()
            } else if c == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "/") {
                let start = index
                while index < bytes.count && byte() != UInt8(ascii: "\n") { advance() }
                comments.append(start..<index)
            } else if c == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "*") {
                let start = index
                advance(2)
                while index < bytes.count && !(byte() == UInt8(ascii: "*") && byte(1) == UInt8(ascii: "/")) { advance() }
                advance(2)
                comments.append(start..<index)
            } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                skipQuoted(c)
            } else if c == UInt8(ascii: "`") {
                advance()
                scanTemplate()
            } else if c == UInt8(ascii: "}") && templateBraces.last == 0 {
                templateBraces.removeLast()
                advance()
                scanTemplate()
            } else if c == UInt8(ascii: "/") && regexMayStartHere {
                scanRegex()
            } else if isIdentifierStart(c) {
                scanWord(.identifier)
            } else if isDigit(c) || (c == UInt8(ascii: ".") && isDigit(byte(1))) {
                scanWord(.literal)
            } else {
                scanPunctuation(c)
            }
        }
    }

    private func isIdentifierStart(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || c == UInt8(ascii: "_") || c == UInt8(ascii: "$")
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private mutating func emit(_ kind: JSToken.Kind, from start: Int, line startLine: Int) {
        tokens.append(JSToken(kind: kind, text: String(decoding: bytes[start..<index], as: UTF8.self), line: startLine))
    }

    private mutating func skipQuoted(_ quote: UInt8) {
        let start = index, startLine = line
        advance()
        while index < bytes.count && byte() != quote {
            advance(byte() == UInt8(ascii: "\\") ? 2 : 1)
        }
        advance()
        emit(.literal, from: start, line: startLine)
    }

    /// The text of a template literal up to its end or its next `${` (whose code is tokenized).
    private mutating func scanTemplate() {
        let startLine = line
        while index < bytes.count {
            if byte() == UInt8(ascii: "\\") {
                advance(2)
            } else if byte() == UInt8(ascii: "`") {
                advance()
                break
            } else if byte() == UInt8(ascii: "$") && byte(1) == UInt8(ascii: "{") {
                advance(2)
                templateBraces.append(0)
                break
            } else {
                advance()
            }
        }
        tokens.append(JSToken(kind: .literal, text: "`", line: startLine))
    }

    private var regexMayStartHere: Bool {
        guard let previous = tokens.last else { return true }
        switch previous.kind {
        case .literal: return false
        case .identifier: return wordsBeforeRegex.contains(previous.text)
        case .punctuation: return ![")", "]", "}"].contains(previous.text)
        }
    }

    private mutating func scanRegex() {
        let start = index, startLine = line
        advance()
        var inClass = false
        while index < bytes.count && byte() != UInt8(ascii: "\n") {
            let c = byte()
            if c == UInt8(ascii: "\\") {
                advance(2)
                continue
            }
            if c == UInt8(ascii: "[") { inClass = true }
            if c == UInt8(ascii: "]") { inClass = false }
            advance()
            if c == UInt8(ascii: "/") && !inClass { break }
        }
        while isIdentifierStart(byte()) { advance() }
        emit(.literal, from: start, line: startLine)
    }

    private mutating func scanWord(_ kind: JSToken.Kind) {
        let start = index, startLine = line
        while isIdentifierStart(byte()) || isDigit(byte()) || (kind == .literal && byte() == UInt8(ascii: ".")) {
            advance()
        }
        emit(kind, from: start, line: startLine)
    }

    /// One character, except `...` and `=>` (a spread is not a property access; `=>` marks
    /// parameters).
    private mutating func scanPunctuation(_ c: UInt8) {
        let start = index, startLine = line
        if c == UInt8(ascii: ".") && byte(1) == UInt8(ascii: ".") && byte(2) == UInt8(ascii: ".") {
            advance(3)
        } else if c == UInt8(ascii: "=") && byte(1) == UInt8(ascii: ">") {
            advance(2)
        } else {
            if c == UInt8(ascii: "{"), !templateBraces.isEmpty { templateBraces[templateBraces.count - 1] += 1 }
            if c == UInt8(ascii: "}"), !templateBraces.isEmpty { templateBraces[templateBraces.count - 1] -= 1 }
            advance()
        }
        emit(.punctuation, from: start, line: startLine)
    }
}
