// Attribution of CPU samples (docs/cpu.md): each sample belongs to the item its thread was
// running at that time (the innermost one: a sync run inline is inside its caller's item),
// or to no item ("outside items"). From that: samples per item, and self and total samples
// per function for each queue, each code (what items ran), each Swift task and the process.
// Pure and deterministic: same model, same profile.

/// Samples of one function within a group: `selfSamples` where it was the leaf, `totalSamples`
/// where it was anywhere on the stack (a recursive function counts once per sample).
public struct FunctionCost: Sendable, Equatable, Codable {
    public var function: String
    public var selfSamples: Int
    public var totalSamples: Int
    /// Shares of the group's samples (0...1).
    public var selfShare: Double
    public var totalShare: Double
}

/// The samples of a queue, a code, a task, the items or the process, with its functions
/// (most self samples first).
public struct CPUGroup: Sendable {
    public var name: String
    /// The queue, code or task (index into the model's queues, codes, tasks); nil for the
    /// process and outside items.
    public var object: Int? = nil
    public var samples: Int
    /// CPU time the samples stand for (samples / Hz).
    public var cpuNs: UInt64
    public var functions: [FunctionCost]
    /// The group's samples merged by function into one call tree (the flame graph's data).
    public var tree: FlameTree
}

/// A call tree merged by function name: node 0 is the root (all the group's samples); a
/// node's children are the functions called from it, in order of first appearance.
public struct FlameTree: Sendable, Equatable {
    /// Per node: its parent (-1 for the root), function name ("" for the root), samples with
    /// it on the stack below its parent's chain (total), samples where it was the leaf (self),
    /// and total as a share of the root's samples.
    public var parent: [Int] = [-1]
    public var name: [String] = [""]
    public var total: [Int] = [0]
    public var selfSamples: [Int] = [0]
    public var share: [Double] = [0]

    /// `chains`: per sample, its functions outermost first.
    init(_ chains: [[String]]) {
        var child: [Int: [String: Int]] = [:]
        for chain in chains {
            var node = 0
            total[0] += 1
            for function in chain {
                if let next = child[node]?[function] {
                    node = next
                } else {
                    parent.append(node); name.append(function); total.append(0); selfSamples.append(0)
                    child[node, default: [:]][function] = parent.count - 1
                    node = parent.count - 1
                }
                total[node] += 1
            }
            selfSamples[node] += 1
        }
        let all = Double(max(total[0], 1))
        share = total.map { Double($0) / all }
    }
}

public struct CPUProfile: Sendable {
    public var hz: UInt32
    public var sampleCount: Int
    /// Per sample (index-aligned with `CPUSamples.samples`): the item it belongs to, -1 outside items.
    public var itemOfSample: [Int32]
    /// Samples per item (index into `TraceModel.items`), only items with samples.
    public var samplesByItem: [Int: Int]
    public var process: CPUGroup
    public var insideItems: Int
    public var outsideItems: CPUGroup
    /// Groups with samples, most samples first (ties by name).
    public var queues: [CPUGroup]
    public var codes: [CPUGroup]
    public var tasks: [CPUGroup]
    /// Per item with samples (index into `TraceModel.items`, ascending): its samples' call tree.
    public var itemTrees: [(item: Int, tree: FlameTree)]

    /// nil when the model has no samples.
    public static func build(_ model: TraceModel) -> CPUProfile? {
        guard let cpu = model.cpu, !cpu.samples.isEmpty else { return nil }
        let owners = SampleAttribution.items(of: cpu.samples, in: model)
        var byItem: [Int: Int] = [:]
        for item in owners where item >= 0 { byItem[Int(item), default: 0] += 1 }
        let period = cpu.hz > 0 ? 1_000_000_000 / UInt64(cpu.hz) : 0
        let stacks = FunctionStacks(cpu)
        func group(_ name: String, _ members: [Int]) -> CPUGroup {
            stacks.group(name: name, samples: members, periodNs: period)
        }
        let all = Array(cpu.samples.indices)
        let outside = all.filter { owners[$0] < 0 }
        let names = GroupNames(model)
        return CPUProfile(
            hz: cpu.hz, sampleCount: all.count, itemOfSample: owners, samplesByItem: byItem,
            process: group("all samples", all), insideItems: all.count - outside.count,
            outsideItems: group("outside items", outside),
            queues: grouped(all, owners, key: { model.items[$0].queue }, name: names.queue, group),
            codes: grouped(all, owners, key: { model.items[$0].site.flatMap { model.sites[$0].codeIndex } }, name: names.code, group),
            tasks: grouped(all, owners, key: { names.taskOfItem[$0] }, name: names.task, group),
            itemTrees: stacks.itemTrees(owners))
    }

    /// Groups the samples inside items by `key` of their item (items without a key are left out).
    private static func grouped(_ samples: [Int], _ owners: [Int32], key: (Int) -> Int?, name: (Int) -> String,
                                _ group: (String, [Int]) -> CPUGroup) -> [CPUGroup] {
        var members: [Int: [Int]] = [:]
        for s in samples where owners[s] >= 0 {
            if let k = key(Int(owners[s])) { members[k, default: []].append(s) }
        }
        return members.map { key, samples in
            var made = group(name(key), samples)
            made.object = key
            return made
        }
            .sorted { ($0.samples, $1.name) > ($1.samples, $0.name) }
    }

    /// Folded stacks (flamegraph.pl, speedscope): `root;outer;...;leaf count` per distinct
    /// stack, the root being the sample's queue (or "outside items"), sorted by text.
    public func foldedStacks(_ model: TraceModel) -> [(stack: String, count: Int)] {
        guard let cpu = model.cpu else { return [] }
        let names = GroupNames(model)
        var counts: [String: Int] = [:]
        for (s, sample) in cpu.samples.enumerated() {
            let owner = itemOfSample[s]
            let root = owner < 0 ? "outside items" : model.items[Int(owner)].queue.map(names.queue) ?? "no queue"
            let frames = cpu.stack(leaf: sample.leaf).map { Self.foldedName(cpu.functionName(ofFrame: $0)) }
            counts[([Self.foldedName(root)] + frames).joined(separator: ";"), default: 0] += 1
        }
        return counts.sorted { $0.key < $1.key }.map { (stack: $0.key, count: $0.value) }
    }

    /// A frame name that cannot break the folded format: no ';' (the separator), no line breaks.
    public static func foldedName(_ name: String) -> String {
        String(name.map { $0 == ";" ? ":" : ($0.isNewline ? " " : $0) })
    }
}

/// The names groups are shown with, computed once per model.
private struct GroupNames {
    let model: TraceModel
    let taskOfItem: [Int: Int]

    init(_ model: TraceModel) {
        self.model = model
        var taskOfItem: [Int: Int] = [:]
        for (t, task) in model.tasks.enumerated() { for job in task.jobs { taskOfItem[job] = t } }
        self.taskOfItem = taskOfItem
    }
    func queue(_ q: Int) -> String { model.queues[q].label }
    func code(_ c: Int) -> String { model.codes[c].name }
    func task(_ t: Int) -> String { "task \(model.tasks[t].id)" }
}

/// Each sample's function chain, and per group the self and total counts.
private struct FunctionStacks {
    /// Per sample: function names outermost first (consecutive repeats kept; deduplicated per use).
    let functions: [[String]]

    init(_ cpu: CPUSamples) {
        var nameOfFrame: [Int32: String] = [:]
        functions = cpu.samples.map { sample in
            cpu.stack(leaf: sample.leaf).map { node in
                if let known = nameOfFrame[node] { return known }
                let name = cpu.functionName(ofFrame: node)
                nameOfFrame[node] = name
                return name
            }
        }
    }

    func itemTrees(_ owners: [Int32]) -> [(item: Int, tree: FlameTree)] {
        var chains: [Int: [[String]]] = [:]
        for (s, owner) in owners.enumerated() where owner >= 0 { chains[Int(owner), default: []].append(functions[s]) }
        return chains.keys.sorted().map { (item: $0, tree: FlameTree(chains[$0]!)) }
    }

    func group(name: String, samples: [Int], periodNs: UInt64) -> CPUGroup {
        var selfCounts: [String: Int] = [:], totalCounts: [String: Int] = [:]
        for s in samples {
            let chain = functions[s]
            guard let leaf = chain.last else { continue }
            selfCounts[leaf, default: 0] += 1
            for function in Set(chain) { totalCounts[function, default: 0] += 1 }
        }
        let count = Double(max(samples.count, 1))
        let costs = totalCounts.map { function, total in
            let own = selfCounts[function] ?? 0
            return FunctionCost(function: function, selfSamples: own, totalSamples: total,
                                selfShare: Double(own) / count, totalShare: Double(total) / count)
        }.sorted { ($0.selfSamples, $0.totalSamples, $1.function) > ($1.selfSamples, $1.totalSamples, $0.function) }
        return CPUGroup(name: name, samples: samples.count, cpuNs: UInt64(samples.count) * periodNs, functions: costs,
                        tree: FlameTree(samples.map { functions[$0] }))
    }
}

/// Which item each sample's thread was running.
enum SampleAttribution {
    static func items(of samples: [CPUSample], in model: TraceModel) -> [Int32] {
        var owners = [Int32](repeating: -1, count: samples.count)
        let threadsByTid = Dictionary(grouping: model.threads.indices, by: { model.threads[$0].tid })
        var samplesByThread: [Int: [Int]] = [:]
        for (s, sample) in samples.enumerated() {
            guard let t = thread(of: sample, candidates: threadsByTid[sample.tid] ?? [], model: model) else { continue }
            samplesByThread[t, default: []].append(s)
        }
        var itemsByThread: [Int: [Int]] = [:]
        for (i, item) in model.items.enumerated() where item.started != nil {
            if let t = item.thread { itemsByThread[t, default: []].append(i) }
        }
        for (t, members) in samplesByThread {
            sweep(samples: members, items: itemsByThread[t] ?? [], model: model, times: samples, into: &owners)
        }
        return owners
    }

    /// The thread of the sample's tid alive at its time (a tid reused after an exit is
    /// another thread): the latest one seen at or before the sample.
    private static func thread(of sample: CPUSample, candidates: [Int], model: TraceModel) -> Int? {
        candidates.last { model.threads[$0].firstSeen <= sample.time } ?? candidates.first
    }

    /// One thread: items nest (a stack), so a sweep in time order gives each sample the
    /// innermost item open at its time.
    private static func sweep(samples: [Int], items: [Int], model: TraceModel, times: [CPUSample], into owners: inout [Int32]) {
        func end(_ i: Int) -> UInt64 { model.items[i].ended ?? UInt64.max }
        let ordered = items.sorted { (model.items[$0].startTime, end($1), $0) < (model.items[$1].startTime, end($0), $1) }
        let sorted = samples.sorted { (times[$0].time, $0) < (times[$1].time, $1) }
        var open: [Int] = []
        var next = 0
        for s in sorted {
            let time = times[s].time
            while next < ordered.count, model.items[ordered[next]].startTime <= time {
                let item = ordered[next]
                while let top = open.last, end(top) <= model.items[item].startTime { open.removeLast() }
                open.append(item)
                next += 1
            }
            while let top = open.last, end(top) <= time { open.removeLast() }
            if let top = open.last { owners[s] = Int32(top) }
        }
    }
}
