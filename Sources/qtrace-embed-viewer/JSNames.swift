// The names a viewer module declares and the names it uses, from its tokens. Declarations are
// over-approximated (every binding anywhere in the module counts, whatever its scope), so the
// check built on them never fails a correct module; it catches a module that uses another
// module's top-level name without importing it.

struct JSNames {
    /// Names declared at the top level (functions, classes, constants), in order.
    private(set) var topLevel: [String] = []
    /// Every name bound anywhere: declarations, parameters, destructured bindings.
    private(set) var declared: Set<String> = []
    /// Identifiers that may be references to a binding: not a property (`.name`), not an
    /// object key (`{ name: …`) and not a method's name; with the line of their first use.
    private(set) var uses: [String: Int] = [:]

    private let tokens: [JSToken]
    /// For each `(`, `[` and `{`, the index of the token that closes it.
    private var closing: [Int: Int] = [:]

    init(_ tokens: [JSToken]) {
        self.tokens = tokens
        matchBrackets()
        for k in tokens.indices where tokens[k].kind == .identifier { classify(k) }
        for k in tokens.indices where text(k) == "(" {
            if let close = closing[k], isParameterList(openedAt: k, closedAt: close) { declareIdentifiers(k + 1, close) }
        }
        collectTopLevel()
    }

    private func text(_ k: Int) -> String { k >= 0 && k < tokens.count ? tokens[k].text : "" }

    private mutating func matchBrackets() {
        var open: [Int] = []
        for (k, token) in tokens.enumerated() where token.kind == .punctuation {
            if ["(", "[", "{"].contains(token.text) { open.append(k) }
            if [")", "]", "}"].contains(token.text), let start = open.popLast() { closing[start] = k }
        }
    }

    private mutating func classify(_ k: Int) {
        let name = tokens[k].text
        if ["const", "let", "var", "function", "class"].contains(name) { declareAfter(k) }
        if text(k + 1) == "=>" { declared.insert(name) }
        guard !javaScriptKeywords.contains(name), text(k - 1) != "." else { return }
        if text(k + 1) == ":" && ["{", ","].contains(text(k - 1)) { return }
        if isMethodName(k) { return }
        if uses[name] == nil { uses[name] = tokens[k].line }
    }

    /// `const x`, `function f`, `class C`, or a destructuring pattern `const { a, b }`.
    private mutating func declareAfter(_ k: Int) {
        let next = k + 1
        if next < tokens.count && tokens[next].kind == .identifier { declared.insert(tokens[next].text) }
        if ["{", "["].contains(text(next)), let close = closing[next] { declareIdentifiers(next + 1, close) }
    }

    private mutating func declareIdentifiers(_ from: Int, _ to: Int) {
        for j in from..<max(from, to) where tokens[j].kind == .identifier { declared.insert(tokens[j].text) }
    }

    /// `function f(…) {`, `method(…) {`, `catch (e) {` and `(…) =>`; not `if (…) {`.
    private func isParameterList(openedAt k: Int, closedAt close: Int) -> Bool {
        if text(close + 1) == "=>" { return true }
        return text(close + 1) == "{" && k > 0 && tokens[k - 1].kind == .identifier
            && !["if", "for", "while", "switch", "with"].contains(text(k - 1))
    }

    /// `name(…) {` where a class body or an object literal defines a method.
    private func isMethodName(_ k: Int) -> Bool {
        guard text(k + 1) == "(", let close = closing[k + 1], text(close + 1) == "{" else { return false }
        return k == 0 || ["{", "}", ";", ",", "static", "get", "set", "async"].contains(text(k - 1))
    }

    /// `function|class|const|let|var NAME` outside every bracket.
    private mutating func collectTopLevel() {
        var depth = 0
        for (k, token) in tokens.enumerated() {
            if token.kind == .punctuation {
                if ["(", "[", "{"].contains(token.text) { depth += 1 }
                if [")", "]", "}"].contains(token.text) { depth -= 1 }
            } else if depth == 0, token.kind == .identifier,
                      ["function", "class", "const", "let", "var"].contains(token.text),
                      k + 1 < tokens.count, tokens[k + 1].kind == .identifier {
                topLevel.append(tokens[k + 1].text)
            }
        }
    }
}
