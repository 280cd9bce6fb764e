// `qtrace check`: latency bounds per queue ("LABEL=10ms") and a findings gate.

public enum BoundMetric: String, Sendable, CaseIterable {
    case waitP50 = "wait p50", waitP90 = "wait p90", waitP99 = "wait p99", waitMax = "wait max"
    case runP50 = "run p50", runP90 = "run p90", runP99 = "run p99", runMax = "run max"

    func value(wait: DurationStats, run: DurationStats) -> UInt64 {
        switch self {
        case .waitP50: wait.p50Ns
        case .waitP90: wait.p90Ns
        case .waitP99: wait.p99Ns
        case .waitMax: wait.maxNs
        case .runP50: run.p50Ns
        case .runP90: run.p90Ns
        case .runP99: run.p99Ns
        case .runMax: run.maxNs
        }
    }

    func count(wait: DurationStats, run: DurationStats) -> Int { rawValue.hasPrefix("wait") ? wait.count : run.count }
}

public struct BoundError: Error, CustomStringConvertible, Equatable {
    public var description: String
}

/// An upper bound on one latency of the queues whose label matches `pattern` (`*` and `?`
/// wildcards; every matching queue must satisfy it), and of the code sites whose name
/// matches it (`Loader.load` matches `Loader.load()`, `Loader.load(id:)` and the closures in
/// them; see `BoundCheck.codeMatches`).
public struct QueueBound: Sendable, Equatable {
    public var metric: BoundMetric
    public var pattern: String
    public var limitNs: UInt64

    public init(metric: BoundMetric, pattern: String, limitNs: UInt64) {
        self.metric = metric; self.pattern = pattern; self.limitNs = limitNs
    }

    /// Parses "LABEL=DURATION" (split at the last "=": labels may contain one).
    public init(parsing text: String, metric: BoundMetric) throws {
        guard let eq = text.lastIndex(of: "=") else {
            throw BoundError(description: "bad bound '\(terminalSafe(text))': expected LABEL=DURATION, e.g. 'com.example.db=10ms'")
        }
        let label = String(text[..<eq]), value = String(text[text.index(after: eq)...])
        guard !label.isEmpty else {
            throw BoundError(description: "bad bound '\(terminalSafe(text))': empty queue label (use '*' for every queue)")
        }
        guard let ns = parseDuration(value) else {
            throw BoundError(description: "bad bound '\(terminalSafe(text))': '\(terminalSafe(value))' is not a duration like 500us, 10ms or 1.5s")
        }
        self.init(metric: metric, pattern: label, limitNs: ns)
    }
}

public enum BoundCheck {
    /// One line per broken bound or gating finding; empty when everything holds.
    public static func violations(summary: AnalysisSummary, bounds: [QueueBound], failOn severity: Severity?) -> [String] {
        var lines: [String] = []
        for bound in bounds {
            let matching = summary.statistics.queues.filter { globMatch(bound.pattern, $0.label) }
            let codes = summary.statistics.sites.filter { codeMatches(bound.pattern, $0) }
            if matching.isEmpty && codes.isEmpty {
                lines.append("\(bound.metric.rawValue) bound '\(bound.pattern)': no queue has this label and no code this name")
                continue
            }
            for q in matching where bound.metric.count(wait: q.wait, run: q.run) > 0 {
                let value = bound.metric.value(wait: q.wait, run: q.run)
                if value > bound.limitNs {
                    lines.append("queue '\(q.label)' (\(q.address)): \(bound.metric.rawValue) \(formatDuration(value)) > \(formatDuration(bound.limitNs))")
                }
            }
            for c in codes where bound.metric.count(wait: c.wait, run: c.run) > 0 {
                let value = bound.metric.value(wait: c.wait, run: c.run)
                if value > bound.limitNs {
                    let line = c.file.flatMap { file in c.line.map { " at \(file.split(separator: "/").last ?? ""):\($0)" } } ?? ""
                    lines.append("code '\(c.name)'\(line): \(bound.metric.rawValue) \(formatDuration(value)) > \(formatDuration(bound.limitNs))")
                }
            }
        }
        if let severity {
            for f in summary.findings where f.severity >= severity {
                lines.append("finding \(f.severity.rawValue) \(f.id): \(f.message)")
            }
        }
        return lines
    }

    /// A code matches a pattern by its short name, with or without the argument list, or as a
    /// closure in it: `Loader.load` matches `Loader.load()`, `Loader.load(id:)` and
    /// `closure #1 in Loader.load()`; wildcards work as for queues.
    public static func codeMatches(_ pattern: String, _ code: CodeStats) -> Bool {
        let name = code.name
        return globMatch(pattern, name) || globMatch(pattern + "(*", name) || globMatch("* in " + pattern + "(*", name)
            || globMatch("* in " + pattern, name)
    }

    /// Shell-style match with `*` (any run) and `?` (one character).
    public static func globMatch(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern), s = Array(text)
        var pi = 0, si = 0, star = -1, mark = 0
        while si < s.count {
            if pi < p.count && (p[pi] == "?" || p[pi] == s[si]) {
                pi += 1; si += 1
            } else if pi < p.count && p[pi] == "*" {
                star = pi; mark = si; pi += 1
            } else if star >= 0 {
                pi = star + 1; mark += 1; si = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
