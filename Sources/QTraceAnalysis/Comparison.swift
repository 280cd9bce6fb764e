// `qtrace diff`: two runs compared queue by queue. Queues are matched by label (the n-th
// queue with a label in one run with the n-th in the other), since addresses differ per run.

public struct MetricComparison: Sendable, Equatable {
    public var name: String
    public var base: UInt64?
    public var new: UInt64?
    /// (new - base) / base; nil when either side is missing or base is 0.
    public var relativeChange: Double? {
        guard let base, let new, base > 0 else { return nil }
        return (Double(new) - Double(base)) / Double(base)
    }
}

public struct QueueComparison: Sendable, Equatable {
    /// The label, with "#n" for the n-th queue of the same label (n > 1).
    public var key: String
    public var baseQueue: Int?
    public var newQueue: Int?
    public var baseItems: Int
    public var newItems: Int
    /// wait p50, wait p99, run p50, run p99.
    public var metrics: [MetricComparison]
}

public struct RunComparison: Sendable {
    public var baseDurationNs: UInt64
    public var newDurationNs: UInt64
    public var queues: [QueueComparison]
    /// Code sites matched by name (and file:line): `baseQueue`/`newQueue` hold code indexes.
    public var codes: [QueueComparison]
    /// Finding ids present in one run only.
    public var findingsOnlyInBase: [String]
    public var findingsOnlyInNew: [String]

    public init(base: AnalysisSummary, new: AnalysisSummary) {
        baseDurationNs = base.trace.durationNs
        newDurationNs = new.trace.durationNs
        let a = Self.keyed(base.statistics.queues), b = Self.keyed(new.statistics.queues)
        var keys = a.map(\.key)
        for (key, _) in b where !keys.contains(key) { keys.append(key) }
        let byKeyA = Dictionary(a, uniquingKeysWith: { x, _ in x })
        let byKeyB = Dictionary(b, uniquingKeysWith: { x, _ in x })
        queues = keys.compactMap { key in
            let qa = byKeyA[key], qb = byKeyB[key]
            guard (qa?.items ?? 0) > 0 || (qb?.items ?? 0) > 0 else { return nil }
            func metric(_ name: String, _ value: (QueueStats) -> (Int, UInt64)) -> MetricComparison {
                func side(_ q: QueueStats?) -> UInt64? { q.flatMap { value($0).0 > 0 ? value($0).1 : nil } }
                return MetricComparison(name: name, base: side(qa), new: side(qb))
            }
            return QueueComparison(key: key, baseQueue: qa?.queue, newQueue: qb?.queue,
                                   baseItems: qa?.items ?? 0, newItems: qb?.items ?? 0,
                                   metrics: [metric("wait p50") { ($0.wait.count, $0.wait.p50Ns) },
                                             metric("wait p99") { ($0.wait.count, $0.wait.p99Ns) },
                                             metric("run p50") { ($0.run.count, $0.run.p50Ns) },
                                             metric("run p99") { ($0.run.count, $0.run.p99Ns) }])
        }.sorted { $0.key < $1.key }
        codes = Self.compareCodes(base.statistics.sites, new.statistics.sites)
        let idsA = Set(base.findings.map(\.id)), idsB = Set(new.findings.map(\.id))
        findingsOnlyInBase = idsA.subtracting(idsB).sorted()
        findingsOnlyInNew = idsB.subtracting(idsA).sorted()
    }

    /// Codes keyed by name and line (addresses change from run to run, names do not).
    static func compareCodes(_ a: [CodeStats], _ b: [CodeStats]) -> [QueueComparison] {
        func key(_ c: CodeStats) -> String {
            c.name + (c.file.flatMap { f in c.line.map { " (\(f.split(separator: "/").last ?? ""):\($0))" } } ?? "")
        }
        let byKeyA = Dictionary(a.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        let byKeyB = Dictionary(b.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        return Set(byKeyA.keys).union(byKeyB.keys).sorted().map { k in
            let ca = byKeyA[k], cb = byKeyB[k]
            func metric(_ name: String, _ value: (CodeStats) -> (Int, UInt64)) -> MetricComparison {
                func side(_ c: CodeStats?) -> UInt64? { c.flatMap { value($0).0 > 0 ? value($0).1 : nil } }
                return MetricComparison(name: name, base: side(ca), new: side(cb))
            }
            return QueueComparison(key: k, baseQueue: ca?.code, newQueue: cb?.code, baseItems: ca?.items ?? 0,
                                   newItems: cb?.items ?? 0,
                                   metrics: [metric("wait p99") { ($0.wait.count, $0.wait.p99Ns) },
                                             metric("run p50") { ($0.run.count, $0.run.p50Ns) },
                                             metric("run p99") { ($0.run.count, $0.run.p99Ns) },
                                             metric("run total") { ($0.run.count, $0.run.totalNs) }])
        }
    }

    /// Queues keyed by label in index order, "#n" marking repeated labels.
    static func keyed(_ queues: QueueStatsTable) -> [(key: String, value: QueueStats)] {
        var seen: [String: Int] = [:]
        return queues.map { q in
            let n = (seen[q.label] ?? 0) + 1
            seen[q.label] = n
            let label = q.label.isEmpty ? "(unlabeled \(q.kind.rawValue))" : q.label
            return (n == 1 ? label : "\(label)#\(n)", q)
        }
    }
}
