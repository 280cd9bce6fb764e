// `statistics.cpu` of the JSON summary (traces recorded with `--cpu`; docs/summary-schema.md):
// CPUProfile's totals and each group's top functions.

public struct CPUStatistics: Sendable, Codable, Equatable {
    /// Functions listed per group at most (most self samples first).
    public static let topFunctions = 10

    public var hz: UInt32
    public var samples: Int
    /// CPU time the samples stand for (samples / Hz).
    public var cpuNs: UInt64
    public var insideItems: Int
    public var outsideItems: Int
    /// The whole process's top functions.
    public var functions: [FunctionCost]
    /// Per queue, code and Swift task with samples, most samples first.
    public var queues: [CPUGroupStats]
    public var codes: [CPUGroupStats]
    public var tasks: [CPUGroupStats]

    /// nil for traces without samples.
    public init?(_ model: TraceModel) {
        guard let profile = CPUProfile.build(model) else { return nil }
        hz = profile.hz
        samples = profile.sampleCount
        cpuNs = profile.process.cpuNs
        insideItems = profile.insideItems
        outsideItems = profile.outsideItems.samples
        functions = Array(profile.process.functions.prefix(Self.topFunctions))
        queues = profile.queues.map(CPUGroupStats.init)
        codes = profile.codes.map(CPUGroupStats.init)
        tasks = profile.tasks.map(CPUGroupStats.init)
    }
}

public struct CPUGroupStats: Sendable, Codable, Equatable {
    /// The queue's label, the code's name, or "task N".
    public var name: String
    /// Index into the model's queues, codes (`statistics.sites` order is by run time: this is
    /// the code index) or tasks.
    public var index: Int
    public var samples: Int
    public var cpuNs: UInt64
    public var functions: [FunctionCost]

    init(_ group: CPUGroup) {
        name = group.name
        index = group.object ?? -1
        samples = group.samples
        cpuNs = group.cpuNs
        functions = Array(group.functions.prefix(CPUStatistics.topFunctions))
    }
}
