// A deterministic synthetic event stream shaped like a busy Dispatch program: worker threads
// draining serial and concurrent queues, syncs, semaphores and groups. For throughput tests.
import QTraceFormat
import QTraceAnalysis

public enum SyntheticWorkload {
    /// About `events` events in time order.
    public static func events(_ events: Int, workers: Int = 8, queues: Int = 16) -> (TraceInfo, [Event]) {
        let info = TraceInfo(pid: 1, ncpu: 4, mainTid: 1, mainQueue: 0x10, shimOverheadNs: 25)
        var out: [Event] = []
        out.reserveCapacity(events + 64)
        var t: UInt64 = 1_000
        func add(_ type: EventType, tid: Int32, arg: UInt32 = 0, a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0,
                 string: String? = nil) {
            out.append(Event(type: type, time: t, tid: tid, arg: arg, a: a, b: b, c: c, string: string))
            t += 7
        }
        add(.threadStart, tid: 1, arg: 0)
        add(.queueInfo, tid: 1, arg: 1, a: 0x10, string: "com.apple.main-thread")
        add(.queueInfo, tid: 1, arg: 2 | 0x15 << 8, a: 0x20, string: "com.apple.root.default-qos")
        for w in 0..<workers { add(.threadStart, tid: Int32(10 + w), arg: 1, a: 1) }
        for q in 0..<queues {
            add(.queueCreate, tid: 1, arg: UInt32(q % 4 == 0 ? 1 : 0) | 0x15 << 8 | 128 << 16,
                a: UInt64(0x1000 + q * 0x100), string: "com.example.queue\(q)")
        }
        add(.semCreate, tid: 1, a: 0x9000, b: 0)
        var id: UInt64 = 1
        var round = 0
        // Each round: every worker runs one item from "its" queue (3 events each), with an
        // occasional sync, semaphore wait or group member.
        while out.count < events {
            round += 1
            var started: [(UInt64, Int32)] = []
            for w in 0..<workers {
                let q = UInt64(0x1000 + ((w + round) % queues) * 0x100)
                let producer: Int32 = w % 2 == 0 ? 1 : Int32(10 + (w + 1) % workers)
                add(.enqueue, tid: producer, arg: 1, a: id, b: q)
                started.append((id, Int32(10 + w)))
                id += 1
            }
            for (item, tid) in started { add(.start, tid: tid, arg: 1, a: item) }
            if round % 16 == 0 {
                add(.semWaitBegin, tid: 11, a: 0x9000, b: ~0)
                add(.semSignal, tid: 12, arg: 1, a: 0x9000)
                add(.semWaitEnd, tid: 11, arg: 2, a: 0x9000)
            }
            for (item, tid) in started.reversed() { add(.end, tid: tid, a: item) }
            if round % 8 == 0 {
                let q = UInt64(0x1000 + (round % queues) * 0x100)
                add(.enqueue, tid: 1, arg: 2, a: id, b: q)
                add(.start, tid: 1, arg: 2, a: id)
                add(.end, tid: 1, a: id)
                id += 1
            }
        }
        return (info, out)
    }
}
