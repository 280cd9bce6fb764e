// The self-contained HTML report.
//
// The HTML file is the viewer (viewer/ in this target, embedded at build time as ViewerAssets by
// the EmbedViewer plugin) plus the data:
//   <script type="application/json" id="qtrace-header">  small objects, strings, table layout
//   <script type="application/octet-stream" id="qtrace-data">  base64 of the deflated columns
// Neither data block is executed. A Content-Security-Policy forbids every network request
// and every script or style but the two inline ones (by hash), so a hostile label that got
// through would still have nothing to run.
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceViewModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum ReportWriter {
    /// Writes the HTML report for `input` to `path` ("-": standard output; see OutputFile).
    /// The input is consumed: passed with `consume` (its only reference), the item columns
    /// are released as soon as they are written (see ReportEncoder), not at the end.
    public static func write(_ input: consuming ReportInput, to path: String) throws {
        let file = try OutputFile(path: path)
        try write(consume input, to: file)
        try file.commit()
    }

    /// Writes the HTML report into `file`; the caller commits it.
    public static func write(_ input: consuming ReportInput, to file: OutputFile) throws {
        try writeHTML(consume input, to: file)
    }

    /// The HTML report as a string (for tests and small inputs).
    public static func html(_ input: ReportInput) throws -> String {
        let sink = StringSink()
        try writeHTML(input, to: sink)
        return sink.text
    }

    /// The Content-Security-Policy of a report: only the viewer's inline script and style (by
    /// their hashes) may run or apply.
    static var contentSecurityPolicy: String {
        [
            "default-src 'none'",
            "script-src '\(ViewerAssets.scriptHash)'",
            "style-src '\(ViewerAssets.styleHash)'",
            "img-src data: blob:",
            "font-src 'none'",
            "connect-src 'none'",
            "media-src 'none'",
            "object-src 'none'",
            "frame-src 'none'",
            "child-src 'none'",
            "worker-src 'none'",
            "manifest-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
        ].joined(separator: "; ")
    }

    /// The viewer's inline script, style and page template, assembled (and hashed for the CSP)
    /// at build time by qtrace-embed-viewer.
    static var viewerScript: String { ViewerAssets.script }
    static var viewerStyle: String { ViewerAssets.style }
    static var viewerTemplate: String { ViewerAssets.template }

    private static func writeHTML(_ input: consuming ReportInput, to out: some ByteSink) throws {
        try FigureCheck.check(input)
        let title = input.meta.title
        let encoded = try ReportEncoder.encode(consume input)
        let (compressed, rawBytes) = (encoded.compressedPayload, encoded.rawBytes)
        let script = viewerScript
        let style = viewerStyle
        let headerJSON = JSONValue.object([
            ("header", encoded.header),
            ("payload", .object([("encoding", .string("base64+zlib")), ("compressedBytes", .int(compressed.reduce(0) { $0 + $1.count })),
                                 ("rawBytes", .int(rawBytes))])),
        ]).serialized()

        let template = viewerTemplate
        let (beforeHead, afterHead) = split(template, at: "<!--qtrace:head-->")
        let (beforeBody, afterBody) = split(afterHead, at: "<!--qtrace:body-->")
        try out.write(beforeHead)
        try out.write("""
            <meta http-equiv="Content-Security-Policy" content="\(htmlEscaped(contentSecurityPolicy))">
            <title>\(htmlEscaped("qtrace — " + title))</title>
            <link rel="icon" href="\(iconDataURL)">
            <style>\(style)</style>
            """)
        try out.write(beforeBody)
        try out.write("<script type=\"application/json\" id=\"qtrace-header\">")
        try out.write(headerJSON)
        try out.write("</script>\n<script type=\"application/octet-stream\" id=\"qtrace-data\">")
        try Base64.write(compressed, to: out)
        try out.write("</script>\n<script>")
        try out.write(script)
        try out.write("</script>")
        try out.write(afterBody)
    }

    private static func split(_ text: String, at marker: String) -> (String, String) {
        guard let range = text.range(of: marker) else { return (text, "") }
        return (String(text[..<range.lowerBound]), String(text[range.upperBound...]))
    }

    /// A small SVG icon: three queue bars.
    static let iconDataURL = "data:image/svg+xml,"
        + "%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E"
        + "%3Crect width='16' height='16' rx='3' fill='%23171b26'/%3E"
        + "%3Crect x='2' y='3' width='8' height='2.5' rx='1' fill='%2358a6ff'/%3E"
        + "%3Crect x='5' y='7' width='9' height='2.5' rx='1' fill='%23f2a65a'/%3E"
        + "%3Crect x='3' y='11' width='6' height='2.5' rx='1' fill='%2356d364'/%3E%3C/svg%3E"
}

enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        let sink = StringSink()
        try? write([bytes], to: sink)
        return sink.text
    }

    /// Streams the encoding of the pieces' bytes (as if concatenated) in chunks, so that a
    /// 200 MB payload never exists as one String or one array; each chunk is filled through a
    /// pointer, four characters per three bytes, without an array's checks per character.
    static func write(_ pieces: [[UInt8]], to out: some ByteSink) throws {
        let chunkBytes = 1 << 16
        var chunk = [UInt8](repeating: 0, count: chunkBytes)
        var used = 0
        // The last piece's bytes that did not make a group of three, completed by the next's.
        var carry: [UInt8] = []
        func group(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, count n: Int, into c: UnsafeMutablePointer<UInt8>) {
            let v = UInt32(b0) << 16 | UInt32(b1) << 8 | UInt32(b2)
            c[0] = alphabet[Int(v >> 18 & 63)]
            c[1] = alphabet[Int(v >> 12 & 63)]
            c[2] = n > 1 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "=")
            c[3] = n > 2 ? alphabet[Int(v & 63)] : UInt8(ascii: "=")
        }
        func flushIfFull() throws {
            guard used > chunkBytes - 4 else { return }
            try chunk.withUnsafeBytes { try out.write(bytes: UnsafeRawBufferPointer(rebasing: $0[..<used])) }
            used = 0
        }
        for bytes in pieces {
            var i = 0
            while !carry.isEmpty, carry.count < 3, i < bytes.count {
                carry.append(bytes[i])
                i += 1
            }
            if carry.count == 3 {
                chunk.withUnsafeMutableBufferPointer { group(carry[0], carry[1], carry[2], count: 3, into: $0.baseAddress! + used) }
                used += 4
                carry = []
                try flushIfFull()
            }
            try bytes.withUnsafeBufferPointer { b in
                while i + 3 <= b.count {
                    // As many groups as fit in the chunk, then the chunk is written.
                    let groups = min((b.count - i) / 3, (chunkBytes - used) / 4)
                    chunk.withUnsafeMutableBufferPointer { c in
                        for k in 0..<groups {
                            group(b[i + 3 * k], b[i + 3 * k + 1], b[i + 3 * k + 2], count: 3, into: c.baseAddress! + used + 4 * k)
                        }
                    }
                    i += 3 * groups
                    used += 4 * groups
                    try flushIfFull()
                }
            }
            carry.append(contentsOf: bytes[i...])
        }
        if !carry.isEmpty {
            chunk.withUnsafeMutableBufferPointer {
                group(carry[0], carry.count > 1 ? carry[1] : 0, carry.count > 2 ? carry[2] : 0, count: carry.count,
                      into: $0.baseAddress! + used)
            }
            used += 4
        }
        try chunk.withUnsafeBytes { try out.write(bytes: UnsafeRawBufferPointer(rebasing: $0[..<used])) }
    }
}
