// Queue records: which address names which queue (the ObjectDirectory) and what the records
// say (creation, description, target, suspension), handed to the QueueRegistry.
import QTraceFormat

extension ModelBuilder {
    mutating func newQueue(address: UInt64, label: String, kind: QueueKind, origin: QueueOrigin,
                           qos: QoSClass, target: Int32, inactive: Bool = false, relativePriority: Int = 0) -> Int32 {
        let generation = origin == .defaultRoot ? 0 : objects.nextGeneration(address)
        let q = queues.add(address: address, generation: generation, label: label, kind: kind, origin: origin, qos: qos,
                           target: target, inactive: inactive, relativePriority: relativePriority, at: now)
        if origin != .defaultRoot { objects.store(.queue, q, at: address) }
        return q
    }

    /// The queue at `address` as referenced by another record; unknown addresses become an
    /// implicit queue of unknown kind.
    @inline(__always)
    mutating func queue(address: UInt64) -> Int32 {
        if let known = objects.indexInPlace(of: .queue, at: address) { return known }
        return newImplicitQueue(address: address)
    }

    mutating func newImplicitQueue(address: UInt64) -> Int32 {
        newQueue(address: address, label: "queue 0x" + String(address, radix: 16), kind: .unknown,
                 origin: .implicit, qos: .unspecified, target: -1)
    }

    /// Where private queues go by default: the default-QoS global queue (a placeholder until
    /// the trace names the real one).
    mutating func defaultRootQueue() -> Int32 {
        if queues.defaultRoot >= 0 { return queues.defaultRoot }
        if let q = queues.firstDefaultRoot() {
            queues.setDefaultRoot(q)
        } else {
            queues.setDefaultRoot(newQueue(address: 0, label: "com.apple.root.default-qos", kind: .global,
                                           origin: .defaultRoot, qos: .default, target: -1))
        }
        return queues.defaultRoot
    }

    mutating func queueCreated(_ e: Event) {
        let attrs = e.arg
        let target = e.b == 0 ? defaultRootQueue() : queue(address: e.b)
        let kind: QueueKind = attrs & 1 != 0 ? .concurrent : .serial
        let qos = QoSClass(rawValue: UInt8((attrs >> 8) & 0xFF)) ?? .unspecified
        let q = newQueue(address: e.a, label: e.string ?? "", kind: kind, origin: .created, qos: qos, target: target,
                         inactive: attrs & 2 != 0, relativePriority: Int((attrs >> 16) & 0xFF) - 128)
        queues.checkTargetLoop(q, at: now)
    }

    /// QUEUE_INFO describes a queue not created through the shim (main, global, other). It
    /// completes a placeholder for the same address, repeats of the same description are
    /// ignored, anything else is a new object at a reused address.
    mutating func queueInfo(_ e: Event) {
        let kind: QueueKind
        switch e.arg & 0xFF {
        case 1: kind = .main
        case 2: kind = .global
        case 4: kind = .runLoop
        default: kind = .unknown
        }
        var qos = QoSClass(rawValue: UInt8((e.arg >> 8) & 0xFF)) ?? .unspecified
        if kind == .main && qos == .unspecified { qos = .userInteractive }
        let label = e.string ?? ""
        if let known = objects.index(of: .queue, at: e.a) {
            let existing = queues[known]
            if existing.origin == .implicit || existing.origin == .header {
                queues.complete(known, label: label, kind: kind, qos: qos)
                if kind == .main { queues.setMainQueue(known) }
                return
            }
            if existing.label == label && existing.kind == kind { return }
        }
        let isDefaultRoot = QueueRegistry.isDefaultRoot(kind: kind, qos: qos, label: label)
        if isDefaultRoot, queues.defaultRoot >= 0, queues[queues.defaultRoot].origin == .defaultRoot {
            // The placeholder default root turns out to be this queue.
            queues.nameDefaultRoot(address: e.a, generation: objects.nextGeneration(e.a), label: label)
            objects.store(.queue, queues.defaultRoot, at: e.a)
            return
        }
        let q = newQueue(address: e.a, label: label, kind: kind, origin: .info, qos: qos, target: -1)
        if kind == .main { queues.setMainQueue(q) }
        if isDefaultRoot, queues.defaultRoot < 0 { queues.setDefaultRoot(q) }
    }

    mutating func setTarget(object: UInt64, target: UInt64) {
        guard let ref = objects[object] else { return }
        let newTarget = target == 0 ? defaultRootQueue() : queue(address: target)
        switch ref.kind {
        case .queue: queues.retarget(ref.index, to: newTarget, at: now)
        case .source: sources.setQueue(Int(ref.index), newTarget)
        default: break
        }
    }

    mutating func suspend(object: UInt64) {
        guard let ref = objects[object] else { return }
        switch ref.kind {
        case .queue: queues.suspend(ref.index, at: now)
        case .source: sources.suspended(Int(ref.index), at: now)
        default: break
        }
    }

    /// RESUME (or ACTIVATE when `activateOnly`): resuming an inactive object activates it.
    mutating func resume(object: UInt64, activateOnly: Bool) {
        guard let ref = objects[object] else { return }
        switch ref.kind {
        case .queue: queues.resume(ref.index, activateOnly: activateOnly, at: now)
        case .source: sources.resumed(Int(ref.index), activateOnly: activateOnly, at: now)
        default: break
        }
    }
}
