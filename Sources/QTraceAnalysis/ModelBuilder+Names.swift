// Names a reader can tell apart, settled once the model is complete: worker threads by the
// root queue they were started for, and queues that share a label by QoS, kind or address.
import QTraceFormat

extension ModelBuilder {
    /// Linux keeps 15 bytes of a thread name: libdispatch names a worker after its root
    /// queue, so "oot.default-qos" is what is left of "com.apple.root.default-qos". The full
    /// label comes back from the root queues (those seen, and libdispatch's own list); when
    /// several end the same way ("-qos.overcommit"), from the root queue most of the thread's
    /// items ran under.
    static func expandWorkerNames(_ threads: inout [TraceThread], queues: [TraceQueue], items: [WorkItem]) {
        let roots = Set(queues.filter { $0.kind == .global }.map(\.label) + libdispatchRootLabels)
        var ambiguous: [Int: [String]] = [:]
        for t in threads.indices where threads[t].kind != .main && !threads[t].name.isEmpty {
            let name = threads[t].name
            guard name.utf8.count >= 15, !roots.contains(name) else { continue }
            let matches = roots.filter { $0.hasSuffix(name) }.sorted()
            if matches.count == 1 { threads[t].name = matches[0] } else if matches.count > 1 { ambiguous[t] = matches }
        }
        guard !ambiguous.isEmpty else { return }
        var votes: [Int: [String: Int]] = [:]
        for (t, root, count) in itemsByThreadAndRoot(items, of: ambiguous.keys.sorted(), queues: queues, threadCount: threads.count) {
            guard let matches = ambiguous[t] else { continue }
            // A serial queue drains on its QoS's overcommit root, though the trace shows the
            // plain root as its target.
            let served = matches.contains(root) ? root : root + ".overcommit"
            votes[t, default: [:]][served, default: 0] += count
        }
        for (t, matches) in ambiguous {
            let counted = (votes[t] ?? [:]).filter { matches.contains($0.key) }
            if let best = counted.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) {
                threads[t].name = best.key
            } else if threads[t].name == "-qos.overcommit" {
                // Nothing it ran tells which QoS: say what it is, not the kernel's cut.
                threads[t].name = "overcommit root queue"
            }
        }
    }

    /// How many items each of `threads` ran under each root queue: the item's queue's root;
    /// else (a queue whose target chain is not in the trace, or none) the root of the item's
    /// QoS. Counted by index in a table of threads × roots, the labels looked at once per
    /// root: a hash per item (of the labels, then of the index pairs) was 9%, then 1.5%, of
    /// `stats` on a million items over 400 queues.
    static func itemsByThreadAndRoot(_ items: [WorkItem], of threads: [Int], queues: [TraceQueue],
                                     threadCount: Int) -> [(thread: Int, root: String, count: Int)] {
        var rootNames: [String] = []
        var rootIndex: [String: Int32] = [:]
        func index(_ label: String?) -> Int32 {
            guard let label else { return -1 }
            if let known = rootIndex[label] { return known }
            rootNames.append(label)
            rootIndex[label] = Int32(rootNames.count - 1)
            return Int32(rootNames.count - 1)
        }
        let rootOfQueue = ColumnBuffer<Int32>(count: queues.count, repeating: -1)
        for (q, label) in rootLabels(queues).enumerated() { rootOfQueue[q] = index(label) }
        let rootOfQoS = ColumnBuffer<Int32>(count: 64, repeating: -1)
        for raw in 0..<64 {
            let qos = QoSClass(rawValue: UInt8(raw)) ?? .unspecified
            if qos != .unspecified { rootOfQoS[raw] = index("com.apple.root.\(qos.name)-qos") }
        }
        let slotOfThread = ColumnBuffer<Int32>(count: threadCount, repeating: -1)
        for (k, t) in threads.enumerated() where t < threadCount { slotOfThread[t] = Int32(k) }
        let roots = rootNames.count
        let counts = ColumnBuffer(count: threads.count * roots, repeating: 0)
        items.withUnsafeBufferPointer { items in
            for item in items where item.threadIndex >= 0 && Int(item.threadIndex) < threadCount {
                let slot = slotOfThread[Int(item.threadIndex)]
                guard slot >= 0 else { continue }
                var root = item.queueIndex >= 0 ? rootOfQueue[Int(item.queueIndex)] : -1
                if root < 0 { root = rootOfQoS[Int(item.qosRaw)] }
                if root >= 0 { counts[Int(slot) * roots + Int(root)] += 1 }
            }
        }
        var out: [(thread: Int, root: String, count: Int)] = []
        for (k, t) in threads.enumerated() {
            for r in 0..<roots where counts[k * roots + r] > 0 { out.append((t, rootNames[r], counts[k * roots + r])) }
        }
        return out
    }

    /// Each queue's root queue label, following targets (a loop or a missing target: none).
    static func rootLabels(_ queues: [TraceQueue]) -> [String?] {
        queues.indices.map { q in
            var cursor = q
            for _ in 0..<64 {
                if queues[cursor].kind == .global { return queues[cursor].label }
                guard let next = queues[cursor].target, queues.indices.contains(next) else { return nil }
                cursor = next
            }
            return nil
        }
    }

    static let libdispatchRootLabels: [String] = ["maintenance", "background", "utility", "default", "user-initiated",
                                                  "user-interactive"].flatMap {
        ["com.apple.root.\($0)-qos", "com.apple.root.\($0)-qos.overcommit"]
    }

    /// Queues whose label another queue also has get a suffix: their QoS when that differs,
    /// else their kind, else their address ("Swift global concurrent queue [utility]").
    static func distinguishSharedLabels(_ queues: inout [TraceQueue]) {
        for members in queuesSharingLabels(queues) {
            let qosDiffers = Set(members.map { queues[$0].qos.rawValue }).count == members.count
            let kindDiffers = Set(members.map { queues[$0].kind.rawValue }).count == members.count
            for q in members {
                let queue = queues[q]
                queues[q].nameSuffix = qosDiffers ? queue.qos.name
                    : kindDiffers ? queue.kind.rawValue
                    : "0x" + String(queue.address, radix: 16) + (queue.generation > 0 ? "#\(queue.generation)" : "")
            }
        }
    }

    /// The groups of two or more labelled queues with one label, each in index order. Found by
    /// sorting (hash, queue) pairs, 16 bytes a queue: a dictionary of labels to arrays held
    /// ~90 MB at 900k queues and made a String of every label. With a non-ASCII label (whose
    /// String equality is canonical equivalence, not bytes), by Strings as before.
    static func queuesSharingLabels(_ queues: [TraceQueue]) -> [[Int]] {
        guard queues.allSatisfy({ $0.compactLabel.isASCII }) else {
            var byLabel: [String: [Int]] = [:]
            for (q, queue) in queues.enumerated() where !queue.label.isEmpty { byLabel[queue.label, default: []].append(q) }
            return byLabel.values.filter { $0.count > 1 }
        }
        var hashed: [(hash: Int, queue: Int32)] = []
        hashed.reserveCapacity(queues.count)
        for (q, queue) in queues.enumerated() where !queue.compactLabel.isEmpty {
            hashed.append((queue.compactLabel.asciiHash, Int32(q)))
        }
        hashed.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.queue < $1.queue }
        var groups: [[Int]] = []
        var start = 0
        while start < hashed.count {
            var end = start + 1
            while end < hashed.count && hashed[end].hash == hashed[start].hash { end += 1 }
            if end - start > 1 {
                // Equal hashes, most likely one label: split by label (a run holds few queues).
                var run = hashed[start..<end].map { Int($0.queue) }
                while let first = run.first {
                    let label = queues[first].compactLabel
                    let members = run.filter { queues[$0].compactLabel == label }
                    if members.count > 1 { groups.append(members) }
                    run.removeAll { queues[$0].compactLabel == label }
                }
            }
            start = end
        }
        return groups
    }
}
