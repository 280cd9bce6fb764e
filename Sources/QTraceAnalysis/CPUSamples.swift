// CPU samples in the model (format 1.5, `qtrace record --cpu`; docs/cpu.md): perf's
// cpu-clock samples of the traced process with their call stacks, interned as a call tree.
// `CPUProfile` attributes them to items, queues, code and tasks.
import QTraceFormat

/// One node of the call tree: a frame under its caller's node.
public struct StackFrame: Sendable, Equatable {
    /// Index of the caller's node in `CPUSamples.frames`, -1 for an outermost frame.
    public var parent: Int32
    /// The sampled instruction (a leaf), or a return address − 1 (inside the call), or 0
    /// for time in the kernel.
    public var address: UInt64

    public init(parent: Int32, address: UInt64) { self.parent = parent; self.address = address }
}

/// One sample: which thread was on a CPU, where, and in which code.
public struct CPUSample: Sendable, Equatable {
    public var time: UInt64
    public var tid: Int32
    /// Index of the leaf node in `CPUSamples.frames` (-1: no stack).
    public var leaf: Int32
    public var cpu: UInt32

    public init(time: UInt64, tid: Int32, leaf: Int32, cpu: UInt32) {
        self.time = time; self.tid = tid; self.leaf = leaf; self.cpu = cpu
    }
}

public struct CPUSamples: Sendable {
    public var frames: [StackFrame] = []
    /// In time order.
    public var samples: [CPUSample] = []
    /// perf's sampling frequency (the CPU_SAMPLE records' arg): a sample stands for 1/hz s of CPU.
    public var hz: UInt32 = 0
    /// The frame addresses, symbolized (filled in with the code sites' symbols).
    public var locations: [UInt64: CodeLocation] = [:]

    public init() {}

    /// The stack of a sample's leaf node, outermost frame first.
    public func stack(leaf: Int32) -> [Int32] {
        var chain: [Int32] = []
        var node = leaf
        while node >= 0, chain.count < frames.count {  // bounded: a cycle cannot come from the builder
            chain.append(node)
            node = frames[Int(node)].parent
        }
        return chain.reversed()
    }

    /// The function a frame is in: its symbol, else module+offset, else the raw address.
    public func functionName(ofFrame node: Int32) -> String {
        let address = frames[Int(node)].address
        if address == 0 { return "[kernel]" }
        guard let location = locations[address] else { return "0x" + String(address, radix: 16) }
        return location.shortName ?? location.function ?? location.name
    }

    /// Addresses to symbolize.
    var symbolAddresses: Set<UInt64> { Set(frames.lazy.map(\.address).filter { $0 != 0 }) }
}

/// While building: node ids of the trace → frame indexes.
struct SampleBuildState {
    var set = CPUSamples()
    var frameIndex: [UInt32: Int32] = [:]
}

extension ModelBuilder {
    /// A STACK_FRAME or CPU_SAMPLE of the samples stream. A sample or frame naming a node
    /// not seen yet (a damaged stream) gets no stack rather than a wrong one.
    mutating func sampleStreamEvent(_ e: Event) {
        if e.type == .stackFrame {
            let parent = e.a == 0 ? -1 : samples.frameIndex[UInt32(truncatingIfNeeded: e.a)] ?? -1
            samples.frameIndex[e.arg] = Int32(samples.set.frames.count)
            samples.set.frames.append(StackFrame(parent: parent, address: e.b))
        } else {
            let leaf = samples.frameIndex[UInt32(truncatingIfNeeded: e.b)] ?? -1
            if samples.set.hz == 0 { samples.set.hz = e.arg }
            samples.set.samples.append(CPUSample(time: e.time, tid: Int32(truncatingIfNeeded: e.a), leaf: leaf,
                                                 cpu: UInt32(truncatingIfNeeded: e.c)))
        }
    }

    mutating func attachSamples() {
        guard !samples.set.samples.isEmpty else { return }
        model.cpu = samples.set
    }
}
