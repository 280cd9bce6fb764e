// perf's cpu-clock samples of one traced process → its trace's samples stream (format 1.5:
// STACK_FRAME and CPU_SAMPLE records, docs/trace-format.md and docs/cpu.md).
import QTraceFormat

public enum SampleStreamConverter {
    /// The records for the process `pid`: its samples between `initMonoNs` and `endMonoNs`
    /// (times become ns since the trace start), each stack interned into call-tree nodes that
    /// are written before the first sample naming them. `hz` goes into each sample's arg.
    public static func events(from samples: [PerfSample], mappings: [PerfMapping], pid: Int32, hz: UInt32,
                              initMonoNs: UInt64, endMonoNs: UInt64) -> [Event] {
        let addresses = AddressMap(mappings, pid: pid)
        var tree = CallTree()
        var events: [Event] = []
        for sample in samples where sample.pid == pid && sample.timeNs >= initMonoNs && sample.timeNs <= endMonoNs {
            let time = sample.timeNs - initMonoNs
            let frames = stack(sample.frames, addresses: addresses)
            var leaf: UInt64 = 0
            for address in frames.reversed() {  // outermost first
                let (node, isNew) = tree.node(parent: leaf, address: address)
                if isNew { events.append(Event(type: .stackFrame, time: time, tid: TraceLayout.samplesStreamTid, arg: UInt32(node), a: leaf, b: address)) }
                leaf = node
            }
            events.append(Event(type: .cpuSample, time: time, tid: TraceLayout.samplesStreamTid, arg: hz,
                                a: UInt64(bitPattern: Int64(sample.tid)), b: leaf, c: UInt64(sample.cpu)))
        }
        return events
    }

    /// A sample's user frames as absolute addresses, leaf first: callers' return addresses − 1
    /// (inside the call instruction, so that the call's line is named), kernel frames folded
    /// into one address 0 on top, frames perf could not place ([unknown]: a broken chain) and the
    /// vDSO's dropped.
    static func stack(_ frames: [PerfFrame], addresses: AddressMap) -> [UInt64] {
        var result: [UInt64] = []
        var inKernel = false
        for (index, frame) in frames.enumerated() {
            if frame.isKernel { if index == 0 { inKernel = true }; continue }
            // [vdso] (clock_gettime's fast path) is in no module of the trace: its caller names it.
            guard !frame.isUnknown, frame.dso != "[vdso]", let absolute = addresses.absolute(frame) else { continue }
            let isLeaf = result.isEmpty && !inKernel && index == 0
            result.append(isLeaf || absolute == 0 ? absolute : absolute - 1)
        }
        return inKernel ? [0] + result : result
    }
}

/// Mapping-relative addresses → the process's absolute addresses. A forked child inherits its
/// parent's mappings without MMAP events of its own, so another process's mapping of the same
/// file is the fallback.
struct AddressMap {
    private var own: [String: [PerfMapping]] = [:]
    private var others: [String: [PerfMapping]] = [:]

    init(_ mappings: [PerfMapping], pid: Int32) {
        for m in mappings {
            if m.pid == pid { own[m.path, default: []].append(m) } else { others[m.path, default: []].append(m) }
        }
    }

    func absolute(_ frame: PerfFrame) -> UInt64? {
        for candidates in [own[frame.dso], others[frame.dso]] {
            // The latest mapping first: a library unloaded and loaded again maps elsewhere.
            if let m = candidates?.last(where: { frame.address >= $0.pageOffset && frame.address - $0.pageOffset < $0.length }) {
                return m.start + (frame.address - m.pageOffset)
            }
        }
        return nil
    }
}

/// Interned stacks: (parent node, address) → node id (1, 2, 3 ...; 0 is the root).
struct CallTree {
    private var nodes: [NodeKey: UInt64] = [:]

    private struct NodeKey: Hashable { let parent: UInt64; let address: UInt64 }

    mutating func node(parent: UInt64, address: UInt64) -> (id: UInt64, isNew: Bool) {
        let key = NodeKey(parent: parent, address: address)
        if let id = nodes[key] { return (id, false) }
        let id = UInt64(nodes.count + 1)
        nodes[key] = id
        return (id, true)
    }
}
