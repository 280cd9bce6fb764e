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
    public static func write(_ input: ReportInput, to path: String) throws {
        let file = try OutputFile(path: path)
        try write(input, to: file)
        try file.commit()
    }

    /// Writes the HTML report into `file`; the caller commits it.
    public static func write(_ input: ReportInput, to file: OutputFile) throws {
        try writeHTML(input, to: file)
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

    private static func writeHTML(_ input: ReportInput, to out: some ByteSink) throws {
        try FigureCheck.check(input)
        let encoded = try ReportEncoder.encode(input)
        let (compressed, rawBytes) = (encoded.compressedPayload, encoded.rawBytes)
        let script = viewerScript
        let style = viewerStyle
        let headerJSON = JSONValue.object([
            ("header", encoded.header),
            ("payload", .object([("encoding", .string("base64+zlib")), ("compressedBytes", .int(compressed.count)),
                                 ("rawBytes", .int(rawBytes))])),
        ]).serialized()

        let template = viewerTemplate
        let (beforeHead, afterHead) = split(template, at: "<!--qtrace:head-->")
        let (beforeBody, afterBody) = split(afterHead, at: "<!--qtrace:body-->")
        try out.write(beforeHead)
        try out.write("""
            <meta http-equiv="Content-Security-Policy" content="\(htmlEscaped(contentSecurityPolicy))">
            <title>\(htmlEscaped("qtrace — " + input.meta.title))</title>
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
        try? write(bytes, to: sink)
        return sink.text
    }

    /// Streams the encoding in chunks, so a 50 MB payload never exists twice as a String.
    static func write(_ bytes: [UInt8], to out: some ByteSink) throws {
        var chunk = [UInt8]()
        chunk.reserveCapacity(1 << 16)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = UInt32(bytes[i])
            let b1 = n > 1 ? UInt32(bytes[i + 1]) : 0
            let b2 = n > 2 ? UInt32(bytes[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            chunk.append(alphabet[Int(v >> 18 & 63)])
            chunk.append(alphabet[Int(v >> 12 & 63)])
            chunk.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "="))
            chunk.append(n > 2 ? alphabet[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
            if chunk.count >= 1 << 16 - 4 {
                try out.write(chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        try out.write(chunk)
    }
}
