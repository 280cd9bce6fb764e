// Readable short names from demangled Swift names: no module prefixes, no types, argument labels
// only, e.g. "closure #1 @Sendable () -> () in t.load(Swift.Int) -> ()" → "closure #1 in load(_:)".
import Foundation

public enum ShortName {
    /// The short form of a demangled name. Swift names are shortened; C and C++ names are kept.
    public static func make(demangled: String, linkageName: String?) -> String {
        guard let linkageName, SwiftDemangler.isSwiftMangled(linkageName), demangled != linkageName else {
            return demangled
        }
        let short = swift(demangled)
        return short.isEmpty ? demangled : short
    }

    /// A `private`/`fileprivate` declaration demangles as `(name in _0123ABCD…)`: the
    /// discriminator says nothing to a reader, the name does.
    static func privateNamesUnwrapped(_ demangled: String) -> String {
        guard demangled.contains(" in _") else { return demangled }
        var out = ""
        var rest = Substring(demangled)
        while let open = rest.range(of: "(") {
            out += rest[..<open.lowerBound]
            let after = rest[open.upperBound...]
            if let marker = after.range(of: " in _"), let close = after[marker.upperBound...].firstIndex(of: ")"),
               after[..<marker.lowerBound].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
               after[marker.upperBound..<close].allSatisfy({ $0.isHexDigit }) {
                out += after[..<marker.lowerBound]
                rest = after[after.index(after: close)...]
            } else {
                out += "("
                rest = after
            }
        }
        return out + rest
    }

    /// Whether a demangled name is a thunk (e.g. the invoke function of a block made from a
    /// Swift closure, or a task's entry point: "partial apply for specialized thunk for
    /// @escaping @isolated(any) … async () -> (@out A)"): the code it runs is elsewhere.
    public static func isThunk(_ demangled: String) -> Bool {
        var name = Substring(demangled)
        while let prefix = thunkWrappers.first(where: { name.hasPrefix($0) }) { name = name.dropFirst(prefix.count) }
        return name.hasPrefix("reabstraction thunk") || name.hasPrefix("thunk ")
            || name.hasPrefix("@objc thunk") || name.hasPrefix("dispatch thunk")
            || name.hasPrefix("generic specialization <") && name.contains(" thunk for ")
    }

    /// How a thunk's name can start before saying it is one.
    static let thunkWrappers = ["partial apply forwarder for ", "partial apply for ", "merged ", "specialized "]

    /// Shortens a demangled Swift name.
    static func swift(_ demangled: String) -> String {
        var name = Substring(privateNamesUnwrapped(demangled))
        var suffix = ""
        stripWrappers(&name, suffix: &suffix)
        if isThunk(String(name)) { return "reabstraction thunk" + suffix }
        name = cutAtTopLevel(name, before: " with unmangled suffix ")
        if name.removePrefix("protocol witness for ") {
            let parts = splitAtTopLevel(name, on: " in conformance ")
            let conformance = parts.count > 1 ? cutAtTopLevel(parts[1], before: " : ") : ""
            return entity(parts[0], isContext: true) + (conformance.isEmpty ? "" : " in " + entity(conformance, isContext: true)) + suffix
        }
        // "A in B in C": A and B are local (closures, nested functions); C is module-qualified.
        let segments = splitAtTopLevel(name, on: " in ")
        let short = segments.enumerated().map { index, segment in
            entity(segment, isContext: index == segments.count - 1)
        }
        return short.joined(separator: " in ") + suffix
    }

    /// Removes the prefixes that describe how a function is compiled rather than what it is, and
    /// turns async continuations into a suffix: "(2) await resume partial function for f()" → "f() (await #2)".
    private static func stripWrappers(_ name: inout Substring, suffix: inout String) {
        var changed = true
        while changed {
            changed = false
            for prefix in ["partial apply forwarder for ", "merged ", "specialized "] where name.removePrefix(prefix) {
                changed = true
            }
            for kind in ["await", "suspend"] {
                if let number = removeNumberedPrefix(&name, " \(kind) resume partial function for ") {
                    suffix = " (\(kind) #\(number))" + suffix
                    changed = true
                }
            }
            for prefix in ["generic specialization ", "function signature specialization "] where name.hasPrefix(prefix + "<") {
                let afterPrefix = name.dropFirst(prefix.count)
                if let end = matchingClose(afterPrefix), afterPrefix[end...].dropFirst().hasPrefix(" of ") {
                    name = afterPrefix[afterPrefix.index(after: end)...].dropFirst(4)
                    changed = true
                }
            }
        }
    }

    /// "(12)<text>rest" → rest, returning "12".
    private static func removeNumberedPrefix(_ name: inout Substring, _ text: String) -> String? {
        guard name.first == "(", let close = name.firstIndex(of: ")") else { return nil }
        let number = name[name.index(after: name.startIndex)..<close]
        let rest = name[name.index(after: close)...]
        guard !number.isEmpty, number.allSatisfy(\.isNumber), rest.hasPrefix(text) else { return nil }
        name = rest.dropFirst(text.count)
        return String(number)
    }

    /// One segment: "closure #1 @Sendable () -> ()" → "closure #1", "inner #1 (Swift.Int) -> Swift.Int" →
    /// "inner(_:)", "static t.Loader.loadAll() -> ()" → "Loader.loadAll()" (the module dropped when
    /// `isContext`, the outermost segment being the only module-qualified one).
    private static func entity(_ segment: Substring, isContext: Bool) -> String {
        var text = segment
        _ = text.removePrefix("static ")
        while text.hasPrefix("(extension in "), let close = matchingClose(text), text[close...].dropFirst().first == ":" {
            text = text[text.index(close, offsetBy: 2)...]  // "(extension in Swift):Swift.Task…" → "Swift.Task…"
        }
        if let local = localEntity(text) { return local }
        let (path, parameters) = splitPathAndParameters(text)
        var components = splitAtTopLevel(path, on: ".").map(withoutGenericArguments)
        if isContext && components.count > 1 { components.removeFirst() }
        return components.joined(separator: ".") + (parameters.map(labels) ?? "")
    }

    /// "closure #2 <type>", "implicit closure #1 <type>" or a local function "name #1 <type>".
    private static func localEntity(_ text: Substring) -> String? {
        guard let marker = text.range(of: " #") else { return nil }
        let name = text[..<marker.lowerBound]
        let afterMarker = text[marker.upperBound...]
        let number = afterMarker.prefix { $0.isNumber }
        guard !number.isEmpty, !name.contains(".") else { return nil }
        if name.hasSuffix("closure") { return "\(name) #\(number)" }
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        let type = afterMarker.dropFirst(number.count).drop { $0 == " " || $0 == "@" || $0.isLetter }
        return String(name) + (type.first == "(" ? splitPathAndParameters(type).parameters.map(labels) ?? "" : "")
    }

    /// "t.Store.add(Swift.Int) async -> ()" → ("t.Store.add", "Swift.Int"); a name without a
    /// parameter list ("t.Store.items.getter : [Swift.Int]") → (path, nil).
    private static func splitPathAndParameters(_ text: Substring) -> (path: Substring, parameters: Substring?) {
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "<" || character == "[" {
                guard let close = matchingClose(text[index...]) else { break }
                index = text.index(after: close)
                continue
            }
            if character == "(" {
                guard let close = matchingClose(text[index...]) else { break }
                return (text[..<index], text[text.index(after: index)..<close])
            }
            if character == " " { return (text[..<index], nil) }
            index = text.index(after: index)
        }
        return (text[..<index], nil)
    }

    /// "id: Swift.Int, _: Any..., Swift.String" → "(id:_:_:)".
    private static func labels(_ parameters: Substring) -> String {
        let list = parameters.isEmpty ? [] : splitAtTopLevel(parameters, on: ", ")
        let names = list.map { parameter -> String in
            let label = parameter.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            return !label.isEmpty && parameter.dropFirst(label.count).hasPrefix(": ") ? "\(label):" : "_:"
        }
        return "(" + names.joined() + ")"
    }

    private static func withoutGenericArguments(_ component: Substring) -> String {
        guard let open = component.firstIndex(of: "<"), open != component.startIndex else { return String(component) }
        return String(component[..<open])
    }

    /// Splits at occurrences of `separator` outside brackets.
    static func splitAtTopLevel(_ text: Substring, on separator: String) -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var index = text.startIndex
        var depth = 0
        while index < text.endIndex {
            if depth == 0, text[index...].hasPrefix(separator) {
                parts.append(text[start..<index])
                index = text.index(index, offsetBy: separator.count)
                start = index
                continue
            }
            depth += bracketDelta(text, index)
            index = text.index(after: index)
        }
        parts.append(text[start...])
        return parts
    }

    private static func cutAtTopLevel(_ text: Substring, before separator: String) -> Substring {
        splitAtTopLevel(text, on: separator)[0]
    }

    /// The index of the bracket closing the one `text` starts with.
    private static func matchingClose(_ text: Substring) -> String.Index? {
        var depth = 0
        var index = text.startIndex
        while index < text.endIndex {
            depth += bracketDelta(text, index)
            if depth == 0 { return index }
            index = text.index(after: index)
        }
        return nil
    }

    /// +1 for an opening bracket, -1 for a closing one; the ">" of "->" is an arrow, not a bracket.
    private static func bracketDelta(_ text: Substring, _ index: String.Index) -> Int {
        switch text[index] {
        case "(", "[", "<": return 1
        case ")", "]": return -1
        case ">": return index > text.startIndex && text[text.index(before: index)] == "-" ? 0 : -1
        default: return 0
        }
    }
}

extension Substring {
    /// Removes `prefix` if present; returns whether it did.
    mutating func removePrefix(_ prefix: String) -> Bool {
        guard hasPrefix(prefix) else { return false }
        self = dropFirst(prefix.count)
        return true
    }
}
