// Names a reader can tell apart, settled once the model is complete: worker threads by the
// root queue they were started for, and queues that share a label by QoS, kind or address.
extension ModelBuilder {
    /// Linux keeps 15 bytes of a thread name: libdispatch names a worker after its root
    /// queue, so "oot.default-qos" is what is left of "com.apple.root.default-qos". The full
    /// label comes back from the root queues (those seen, and libdispatch's own list).
    static func expandWorkerNames(_ threads: inout [TraceThread], queues: [TraceQueue]) {
        let roots = Set(queues.filter { $0.kind == .global }.map(\.label) + libdispatchRootLabels)
        for t in threads.indices where threads[t].kind == .worker && !threads[t].name.isEmpty {
            let name = threads[t].name
            guard name.utf8.count >= 15, !roots.contains(name) else { continue }
            let matches = roots.filter { $0.hasSuffix(name) }
            if matches.count == 1 { threads[t].name = matches.first! }
        }
    }

    static let libdispatchRootLabels: [String] = ["maintenance", "background", "utility", "default", "user-initiated",
                                                  "user-interactive"].flatMap {
        ["com.apple.root.\($0)-qos", "com.apple.root.\($0)-qos.overcommit"]
    }

    /// Queues whose label another queue also has get a suffix: their QoS when that differs,
    /// else their kind, else their address ("Swift global concurrent queue [utility]").
    static func distinguishSharedLabels(_ queues: inout [TraceQueue]) {
        var byLabel: [String: [Int]] = [:]
        for (q, queue) in queues.enumerated() where !queue.label.isEmpty { byLabel[queue.label, default: []].append(q) }
        for (_, members) in byLabel where members.count > 1 {
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
}
