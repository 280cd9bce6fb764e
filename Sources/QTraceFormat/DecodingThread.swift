// The merge and decoding of a trace on a thread of their own, a step ahead of the caller's
// thread, which builds the model from the decoded events: two cores at work on one trace.
// The model is the bigger half (flow: the decoding alone ~30% of `stats`, flood ~15%), so
// the caller's thread rarely waits for the decoder. Handing the events across cores is not
// free (the decoding thread took 2-3x the CPU of decoding inline, the model ~10% more:
// docs/performance.md, run (37)), so a second thread is worth it only on an idle CPU.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CQTraceSys

/// Batches of decoded events in a ring, filled by one thread (the decoding thread) and
/// consumed in order by another (the caller's). A batch is handed over under a mutex: once
/// per `batchSize` events, so the lock costs well under a nanosecond per event, and a thread
/// that has to wait sleeps instead of spinning (the machine may have no idle core).
final class EventBatchRing: @unchecked Sendable {
    /// 1,024 events (72 KiB) a batch, 8 batches: the decoder may run up to 8k events ahead,
    /// and the ring (576 KiB) stays within a core's L2 cache.
    static let batchSize = 1024
    static let slotCount = 8

    private let events: UnsafeMutablePointer<Event>
    private let counts: UnsafeMutablePointer<Int>
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    // Under `mutex`:
    /// Batches handed over so far, and batches the consumer is done with.
    private var published = 0
    private var released = 0
    /// The decoder has handed over its last batch.
    private var finished = false
    /// The consumer stopped early (its closure threw): the decoder stops at its next batch.
    private var cancelled = false
    /// The decoder sleeps until the consumer has freed half the ring.
    private var decoderWaits = false
    /// The decoding thread's CPU time, set by `finish`.
    private(set) var decoderCPUSeconds = 0.0

    init() {
        let total = Self.batchSize * Self.slotCount
        events = .allocate(capacity: total)
        events.initialize(repeating: Event(type: .end, time: 0, tid: 0), count: total)
        counts = .allocate(capacity: Self.slotCount)
        counts.initialize(repeating: 0, count: Self.slotCount)
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        changed = .allocate(capacity: 1)
        pthread_cond_init(changed, nil)
    }

    deinit {
        events.deinitialize(count: Self.batchSize * Self.slotCount)
        events.deallocate()
        counts.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        pthread_cond_destroy(changed)
        changed.deallocate()
    }

    /// The buffer of batch number `index` (`batchSize` initialized events).
    func batch(_ index: Int) -> UnsafeMutablePointer<Event> {
        events + (index % Self.slotCount) * Self.batchSize
    }

    // MARK: The decoding thread

    /// Hands over batch number `published` (its first `count` events) and waits for a free
    /// slot for the next one. Returns false when the consumer has stopped.
    func publish(count: Int) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        counts[published % Self.slotCount] = count
        published += 1
        pthread_cond_signal(changed)
        if published - released == Self.slotCount && !cancelled {
            // Full: sleep until half the ring is free, not the next slot, so that the two
            // threads wake each other once per half ring rather than once per batch.
            decoderWaits = true
            while published - released > Self.slotCount / 2 && !cancelled { pthread_cond_wait(changed, mutex) }
            decoderWaits = false
        }
        return !cancelled
    }

    /// The last batch is handed over (or the decoder stopped).
    func finish(decoderCPUSeconds: Double) {
        pthread_mutex_lock(mutex)
        finished = true
        self.decoderCPUSeconds = decoderCPUSeconds
        pthread_cond_signal(changed)
        pthread_mutex_unlock(mutex)
    }

    // MARK: The consumer

    /// The next batch, waiting for the decoder if it has not handed it over yet; nil after
    /// the last one. The batch stays the consumer's until `release`.
    func take() -> UnsafeMutableBufferPointer<Event>? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while published == released && !finished { pthread_cond_wait(changed, mutex) }
        guard published > released else { return nil }
        return UnsafeMutableBufferPointer(start: batch(released), count: counts[released % Self.slotCount])
    }

    /// The consumer is done with the batch `take` gave it.
    func release() {
        pthread_mutex_lock(mutex)
        released += 1
        if decoderWaits && published - released <= Self.slotCount / 2 { pthread_cond_signal(changed) }
        pthread_mutex_unlock(mutex)
    }

    /// The consumer stops before the end: the decoder is let go.
    func cancel() {
        pthread_mutex_lock(mutex)
        cancelled = true
        pthread_cond_signal(changed)
        pthread_mutex_unlock(mutex)
    }
}

/// A thread running one closure, joined by `join` (which must be called).
package struct JoinableThread {
    private final class Body: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    private let thread: pthread_t

    /// nil when the system refuses a thread (the caller then does the work itself).
    package init?(_ body: @escaping () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return nil
        }
        self.thread = thread
    }

    package func join() { pthread_join(thread, nil) }
}

/// Two pieces of work at once, the first on a thread of its own (both done when it returns).
package enum SideBySide {
    /// Runs `first` on another thread while this one runs `second`; both in turn here when no
    /// thread can be started. They must not touch the same mutable state.
    package static func run(_ first: () -> Void, _ second: () -> Void) {
        withoutActuallyEscaping(first) { first in
            guard let thread = JoinableThread(first) else {
                first()
                second()
                return
            }
            second()
            thread.join()
        }
    }
}

/// Whether a trace's events are decoded on a thread of their own (`TraceFile.forEachBatchOfEvents`).
public enum DecodingThread: Sendable {
    /// When the trace is big enough, the process may use two CPUs and one of them is idle (the
    /// load average below the CPUs less one half: on a busy machine the second thread only
    /// adds CPU time); QTRACE_DECODE_THREAD=0 or 1 in the environment says never or always
    /// instead (to compare the two).
    case automatic
    case always
    case never

    /// Below this many events the second thread is not worth starting.
    static let minimumEvents = 1 << 16

    package func wanted(eventCount: Int) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .automatic:
            if let setting = getenv("QTRACE_DECODE_THREAD") {
                let value = String(cString: setting)
                if value == "0" || value == "1" { return value == "1" }
            }
            guard eventCount >= Self.minimumEvents else { return false }
            let cpus = qt_sys_usable_cpus()
            return cpus >= 2 && Self.loadAverage() < Double(cpus) - 0.5
        }
    }

    /// The last minute's load average (0 when unknown).
    private static func loadAverage() -> Double {
        var load = [0.0]
        return getloadavg(&load, 1) == 1 ? load[0] : 0
    }
}

/// CPU seconds of the two threads of one decoding (`TraceFile.lastDecodingThreads`).
public struct DecodingThreadTimes: Sendable {
    public var decoderCPUSeconds: Double
    public var consumerCPUSeconds: Double
}

/// The calling thread's CPU time so far, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
