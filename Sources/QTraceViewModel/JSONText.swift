// A small JSON writer for the report. It escapes `<`, `>`, `&`, U+2028 and U+2029 as well as
// what JSON requires, so that the text can sit inside an HTML <script> element: a label like
// `</script><script>alert(1)</script>` stays one inert JSON string.

import QTraceFormat

package indirect enum JSONValue {
    case null
    case bool(Bool)
    case int(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    package static func int(_ value: Int) -> JSONValue { .int(Int64(value)) }
    package static func ints(_ values: [Int]) -> JSONValue { .array(values.map { .int(Int64($0)) }) }

    package func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    package func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .number(let d): out += JSONValue.format(d)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let values):
            out += "["
            for (i, v) in values.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, v)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(key, to: &out)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }

    /// Shortest text that reads back as the same Double (JSON has no NaN or infinity: null).
    package static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(), abs(d) < 9.0e15 { return String(Int64(d)) }
        return "\(d)"
    }

    package static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            if let escape = TraceText.backslashEscape(scalar) { out += escape; continue }
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    package static func quoted(_ s: String) -> String {
        var out = ""
        writeString(s, to: &out)
        return out
    }
}

/// Escapes text for HTML element content and attribute values.
package func htmlEscaped(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for c in s.unicodeScalars {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}
