// Dispatch I/O while the model is built: the channels (with the pseudo-channel of
// dispatch_read/dispatch_write) and the read and write operations, their handler runs and
// bytes. Which address names which channel is the ObjectDirectory's; the handler frames are
// the ThreadTable's; ModelBuilder+Objects.swift wires them.

struct IOTracker {
    /// The model's channels and operations (moved into it by `take`).
    private(set) var channels: [IOChannel] = []
    private(set) var operations: [IOOperation] = []
    /// Operations whose last handler run has not been seen, by id.
    private var operationById = IdMap<Int32>()
    /// The pseudo-channel of dispatch_read/dispatch_write (-1 until used).
    private var plainChannel: Int32 = -1

    mutating func addChannel(_ channel: IOChannel) -> Int32 {
        channels.append(channel)
        return Int32(channels.count - 1)
    }

    /// The pseudo-channel of dispatch_read/dispatch_write, made on first use.
    mutating func plainIOChannel() -> Int32 {
        if plainChannel < 0 { plainChannel = addChannel(IOChannel(address: 0, generation: 0)) }
        return plainChannel
    }

    mutating func submitted(_ operation: IOOperation) {
        let op = Int32(operations.count)
        operations.append(operation)
        channels[operation.channel].operations.append(Int(op))
        operationById[operation.id] = op
    }

    /// A handler run of operation `id` starts with `bytes` more; `flags` bit 0 says it is the
    /// last, with the error above bit 8. Nil for an unknown operation.
    mutating func handlerBegan(id: UInt64, bytes: UInt64, flags: UInt32, at now: UInt64) -> Int32? {
        guard let op = operationById[id] else { return nil }
        let o = Int(op)
        operations[o].handlerRuns += 1
        operations[o].bytes &+= bytes
        if flags & 1 != 0 {
            operations[o].doneAt = now
            operations[o].error = Int(flags >> 8)
        }
        return op
    }

    mutating func handlerEnded(_ op: Int32, id: UInt64, busy: UInt64) {
        let o = Int(op)
        operations[o].handlerBusyNs += busy
        if operations[o].doneAt != nil { operationById.remove(id) }
    }

    mutating func barrier(_ c: Int32) { channels[Int(c)].barriers += 1 }

    mutating func closed(_ c: Int32, at now: UInt64) { channels[Int(c)].closedAt = now }

    mutating func cleanup(_ c: Int32, error: Int, at now: UInt64) {
        channels[Int(c)].cleanupAt = now
        channels[Int(c)].cleanupError = error
    }

    /// The channels and operations for the model; the tracker is empty afterwards.
    mutating func take() -> (channels: [IOChannel], operations: [IOOperation]) {
        defer { self = IOTracker() }
        return (channels, operations)
    }
}
